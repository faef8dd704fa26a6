"""Build the candidate table: every sentence of every named side of every plain-protocol page, rewritten.

Each row: conv, page index, side, speaker, dia_id, fact text, features, and labels against LoCoMo's
observations OF THAT SPEAKER: ``grounded`` (cosine >= 0.6 to an observation whose evidence is the same
turn), ``any`` (cosine >= 0.6 to any observation of the speaker), and the best cosines.

    nice -n 10 /work/main/.venv/bin/python table.py     # -> out/table.pkl
"""

from __future__ import annotations

import pickle
import time
from pathlib import Path

import numpy as np
from common import CachedEmbeddings, blind, plain_pairs, samples

from facts import page_candidates

OUT = Path(__file__).resolve().parent / "out"


def speaker_obs(sample, speaker):
    out = []
    for key in sorted(sample["observation"], key=lambda k: int(k.split("_")[1])):
        for fact, dia in sample["observation"][key].get(speaker, []):
            ids = [d.strip() for d in str(dia).replace(",", ";").split(";") if d.strip()]
            out.append((fact, ids))
    return out


def build(join_dangling: bool = True):
    emb = CachedEmbeddings()
    rows = []
    for s in samples():
        conv = s["sample_id"]
        a, b = s["conversation"]["speaker_a"], s["conversation"]["speaker_b"]
        obs = {spk: speaker_obs(s, spk) for spk in (a, b)}
        ovec = {spk: emb.encode([f for f, _ in obs[spk]]) for spk in (a, b)}
        bvec = {spk: emb.encode([blind(f, [a, b]) for f, _ in obs[spk]]) for spk in (a, b)}
        pairs = plain_pairs(s)
        cands = []
        for i, p in enumerate(pairs):
            for c in page_candidates(p["user_input"], p["agent_response"], p["dia_ids"], None, sides="both",
                                     join_dangling=join_dangling):
                cands.append((i, c))
        fv = emb.encode([c.fact for _, c in cands])
        bv = emb.encode([blind(c.fact, [a, b]) for _, c in cands])
        users = {}
        for i, p in enumerate(pairs):
            for c in page_candidates(p["user_input"], p["agent_response"], p["dia_ids"], None, sides="both",
                                     join_dangling=join_dangling, phrasing="user"):
                users.setdefault((i, c.side, c.index), c.fact)
        for (i, c), v, vb in zip(cands, fv, bv, strict=True):
            spk = c.speaker if c.speaker in obs else None
            if spk is None:
                continue
            sims = ovec[spk] @ v
            bsims = bvec[spk] @ vb
            same = [k for k, (_, ids) in enumerate(obs[spk]) if c.dia_id in ids]
            rows.append({
                "conv": conv, "page": i, "n_pages": len(pairs), "speaker": spk, "is_a": spk == a,
                "dia_id": c.dia_id, "fact": c.fact, "sentence": c.sentence, "side": c.side,
                "feats": c.feats, "intent": c.rec.intent, "aspect": c.rec.aspect, "personal": c.rec.personal,
                "confidence": c.rec.confidence, "entities": list(c.rec.entities),
                "best_any": float(sims.max()) if len(sims) else 0.0,
                "best_same": float(sims[same].max()) if same else 0.0,
                "blind_any": float(bsims.max()) if len(bsims) else 0.0,
                "blind_same": float(bsims[same].max()) if same else 0.0,
                "fact_user": users.get((i, c.side, c.index), ""), "index": c.index,
                "has_obs_turn": bool(same),
            })
        emb.save()
        print(conv, len(cands), flush=True)
    return rows


if __name__ == "__main__":
    t0 = time.perf_counter()
    rows = build()
    OUT.mkdir(exist_ok=True)
    with open(OUT / "table.pkl", "wb") as fh:
        pickle.dump(rows, fh)
    a_rows = [r for r in rows if r["is_a"]]
    print(len(rows), "rows;", len(a_rows), "speaker_a;",
          f"grounded {np.mean([r['best_same'] >= 0.6 for r in a_rows]):.3f}",
          f"any {np.mean([r['best_any'] >= 0.6 for r in a_rows]):.3f}", f"{time.perf_counter() - t0:.0f}s")
