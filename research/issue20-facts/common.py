"""Shared helpers: cached MiniLM embeddings, the plain ingest protocol, the observation metrics.

Run every script with `nice -n 10 /work/main/.venv/bin/python <script>` from this folder.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

sys.path.insert(0, "/work/main")

from langchain_memoryos.embeddings import encode_texts, resolve_embeddings  # noqa: E402
from langchain_memoryos.evaluation.locomo import (  # noqa: E402
    _numbered_sessions,
    _turn_text,
    load_locomo,
    normalize_evidence,
)

HERE = Path(__file__).resolve().parent
DATA = Path("/work/shared/data/locomo_dev.json")
CACHE_VEC = HERE / "emb_cache.npy"
CACHE_TXT = HERE / "emb_cache.json"
OBS_THRESHOLD = 0.6  # issue 20 / DESIGN §6: an observation is matched by a fact at MiniLM cosine >= 0.6
DUP_THRESHOLD = 0.9  # near-duplicate pair: two stored facts at cosine >= 0.9


class CachedEmbeddings(Embeddings):
    """MiniLM with a text -> vector cache on disk (every text is embedded once, ever)."""

    model_name = "all-MiniLM-L6-v2"
    dimension = 384

    def __init__(self) -> None:
        self._base = resolve_embeddings(None)
        self._index: dict[str, int] = {}
        self._rows: list[np.ndarray] = []
        if CACHE_TXT.exists() and CACHE_VEC.exists():
            texts = json.loads(CACHE_TXT.read_text())
            vecs = np.load(CACHE_VEC)
            assert len(texts) == len(vecs)
            self._index = {t: i for i, t in enumerate(texts)}
            self._rows = list(vecs)
        self._saved = len(self._rows)
        self.misses = 0

    def encode(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._index))
        if missing:
            self.misses += len(missing)
            vecs = encode_texts(self._base, missing)
            for t, v in zip(missing, vecs, strict=True):
                self._index[t] = len(self._rows)
                self._rows.append(v.astype(np.float32))
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self._rows[self._index[t]] for t in texts])

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.encode(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.encode([text])[0].tolist()

    def save(self) -> None:
        if len(self._rows) == self._saved:
            return
        texts = [None] * len(self._rows)
        for t, i in self._index.items():
            texts[i] = t
        tmp_v, tmp_t = CACHE_VEC.with_suffix(".tmp.npy"), CACHE_TXT.with_suffix(".tmp.json")
        np.save(tmp_v, np.stack(self._rows).astype(np.float32))
        tmp_t.write_text(json.dumps(texts))
        os.replace(tmp_v, CACHE_VEC)
        os.replace(tmp_t, CACHE_TXT)
        self._saved = len(self._rows)


def samples() -> list[dict[str, Any]]:
    return load_locomo(DATA)


def plain_pairs(sample: dict[str, Any]) -> list[dict[str, Any]]:
    """The plain protocol of issue 20: each session's turns paired by position, 'Name: text', session date.

    Returns dicts with user_input, agent_response, timestamp, dia_ids, session, speakers.
    """
    out = []
    for number, (date, turns) in _numbered_sessions(sample):
        ts = date or dt.datetime(2023, 1, 1, tzinfo=dt.UTC)
        for i in range(0, len(turns), 2):
            group = turns[i : i + 2]
            texts = [f"{t.get('speaker', '')}: {_turn_text(t)}" for t in group]
            out.append(
                {
                    "user_input": texts[0],
                    "agent_response": texts[1] if len(texts) > 1 else "",
                    "timestamp": ts,
                    "dia_ids": [d for t in group for d in normalize_evidence(t.get("dia_id", ""))],
                    "session": number,
                    "speakers": [t.get("speaker", "") for t in group],
                }
            )
    return out


def ingest_plain(memory: Any, sample: dict[str, Any], *, on_pair=None) -> None:
    conv = str(sample["sample_id"])
    for p in plain_pairs(sample):
        memory.add_turn(
            p["user_input"],
            p["agent_response"],
            user_id=conv,
            thread_id=conv,
            timestamp=p["timestamp"],
            metadata={"source_id": p["dia_ids"]},
        )
        if on_pair is not None:
            on_pair(p)


def user_observations(sample: dict[str, Any]) -> list[tuple[str, str]]:
    """[(fact, dia_id)] about speaker_a, every session, in order."""
    a = sample["conversation"]["speaker_a"]
    out = []
    obs = sample["observation"]
    for key in sorted(obs, key=lambda k: int(k.split("_")[1])):
        for fact, dia in obs[key].get(a, []):
            out.append((fact, dia if isinstance(dia, str) else ";".join(map(str, dia))))
    return out


def fact_metrics(
    facts: list[str], observations: list[str], emb: CachedEmbeddings, *, threshold: float = OBS_THRESHOLD,
    dup: float = DUP_THRESHOLD,
) -> dict[str, Any]:
    """Observation coverage, fact precision, near-duplicate pairs.

    * coverage: share of observations with max cosine to any fact >= threshold;
    * precision: share of facts with max cosine to any observation >= threshold;
    * near-duplicate pairs: unordered fact pairs with cosine >= dup, over all pairs n(n-1)/2;
      also the share of facts that have a near-duplicate among the others.
    """
    n = len(facts)
    if not observations:
        return {}
    ov = emb.encode(observations)
    if n == 0:
        return {"facts": 0, "obs": len(observations), "covered": 0, "matched": 0, "dup_pairs": 0, "pairs": 0,
                "facts_with_dup": 0, "dup08_pairs": 0}
    fv = emb.encode(facts)
    sim = ov @ fv.T
    covered = int((sim.max(axis=1) >= threshold).sum())
    matched = int((sim.max(axis=0) >= threshold).sum())
    ff = fv @ fv.T
    iu = np.triu_indices(n, 1)
    dup_pairs = int((ff[iu] >= dup).sum())
    dup08 = int((ff[iu] >= 0.8).sum())
    np.fill_diagonal(ff, -1)
    with_dup = int((ff.max(axis=1) >= dup).sum()) if n > 1 else 0
    return {
        "facts": n,
        "obs": len(observations),
        "covered": covered,
        "matched": matched,
        "dup_pairs": dup_pairs,
        "pairs": n * (n - 1) // 2,
        "facts_with_dup": with_dup,
        "dup08_pairs": dup08,
    }


def pooled(rows: list[dict[str, Any]]) -> dict[str, Any]:
    tot = {k: sum(r.get(k, 0) for r in rows) for k in ("facts", "obs", "covered", "matched", "dup_pairs", "pairs",
                                                           "facts_with_dup", "dup08_pairs")}
    tot["dup08_rate"] = tot["dup08_pairs"] / tot["pairs"] if tot["pairs"] else 0.0
    tot["coverage"] = tot["covered"] / tot["obs"]
    tot["precision"] = tot["matched"] / tot["facts"] if tot["facts"] else float("nan")
    tot["dup_rate"] = tot["dup_pairs"] / tot["pairs"] if tot["pairs"] else 0.0
    tot["dup_fact_rate"] = tot["facts_with_dup"] / tot["facts"] if tot["facts"] else 0.0
    return tot


def fmt(tot: dict[str, Any]) -> str:
    return (
        f"coverage {100 * tot['coverage']:.1f}% of {tot['obs']} obs | precision {100 * tot['precision']:.1f}% of "
        f"{tot['facts']} facts | near-dup pairs {tot['dup_pairs']}/{tot['pairs']} = {100 * tot['dup_rate']:.2f}% "
        f"| facts with a near-dup {100 * tot['dup_fact_rate']:.1f}%"
    )


def max_matching(adj: np.ndarray) -> int:
    """Size of a maximum bipartite matching (rows x cols boolean adjacency), augmenting paths."""
    n_rows, n_cols = adj.shape
    match_col = [-1] * n_cols
    nbrs = [np.flatnonzero(adj[i]).tolist() for i in range(n_rows)]

    def augment(i: int, seen: set[int]) -> bool:
        for j in nbrs[i]:
            if j in seen:
                continue
            seen.add(j)
            if match_col[j] == -1 or augment(match_col[j], seen):
                match_col[j] = i
                return True
        return False

    sys.setrecursionlimit(10000)
    return sum(augment(i, set()) for i in range(n_rows))


def blind(text: str, names: list[str]) -> str:
    """Name-blind text: the speakers' names, 'the user' and 'the assistant' all become 'someone'."""
    for n in [*names, "the user", "The user", "the assistant", "The assistant"]:
        text = re.sub(rf"\b{re.escape(n)}'s\b", "someone's", text)
        text = re.sub(rf"\b{re.escape(n)}\b", "someone", text)
    return text


def all_observations(sample: dict[str, Any]) -> list[str]:
    return [f for v in sample["observation"].values() for items in v.values() for f, _ in items]


def full_metrics(sample: dict[str, Any], facts: list[str], fact_dias: list[set[str]] | None,
                 emb: CachedEmbeddings) -> dict[str, Any]:
    """Every figure for one conversation's stored user facts.

    Issue 20's figures: coverage (obs about speaker_a with a fact at cos >= 0.6), precision (facts with an
    observation of EITHER speaker at cos >= 0.6 – this reproduces the issue's 29.3 %), near-duplicate pairs
    (cos >= 0.9 over n(n-1)/2 pairs). Hardened: precision_a (observations of speaker_a only); one-to-one
    coverage (maximum matching, each fact covers at most one observation); grounded coverage (the matching
    fact came from the observation's own evidence turn).
    """
    obs = user_observations(sample)
    otexts = [f for f, _ in obs]
    m = fact_metrics(facts, otexts, emb)
    every = all_observations(sample)
    m["matched_any"] = 0
    m["one_to_one"] = 0
    m["grounded"] = 0
    for k in ("blind_covered", "blind_matched_any", "blind_matched_a", "blind_one_to_one"):
        m[k] = 0
    if facts:
        names = [sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"]]
        bf = emb.encode([blind(f, names) for f in facts])
        bo = emb.encode([blind(f, names) for f in otexts])
        be = emb.encode([blind(f, names) for f in every])
        badj = (bo @ bf.T) >= OBS_THRESHOLD
        m["blind_covered"] = int(badj.any(1).sum())
        m["blind_matched_a"] = int(badj.any(0).sum())
        m["blind_matched_any"] = int(((be @ bf.T) >= OBS_THRESHOLD).any(0).sum())
        m["blind_one_to_one"] = max_matching(badj)
        fv = emb.encode(facts)
        m["matched_any"] = int(((emb.encode(every) @ fv.T).max(0) >= OBS_THRESHOLD).sum())
        adj = (emb.encode(otexts) @ fv.T) >= OBS_THRESHOLD
        m["one_to_one"] = max_matching(adj)
        if fact_dias is not None:
            for k, (_, dia) in enumerate(obs):
                ids = {d.strip() for d in dia.replace(",", ";").split(";")}
                if any(adj[k, j] and (fact_dias[j] & ids) for j in range(len(facts))):
                    m["grounded"] += 1
    return m


def pooled_full(rows: list[dict[str, Any]]) -> dict[str, Any]:
    tot = pooled(rows)
    for k in ("matched_any", "one_to_one", "grounded", "blind_covered", "blind_matched_any", "blind_matched_a",
              "blind_one_to_one"):
        tot[k] = sum(r.get(k, 0) for r in rows)
    tot["blind_cov"] = tot["blind_covered"] / tot["obs"]
    tot["blind_prec_any"] = tot["blind_matched_any"] / tot["facts"] if tot["facts"] else float("nan")
    tot["blind_prec_a"] = tot["blind_matched_a"] / tot["facts"] if tot["facts"] else float("nan")
    tot["blind_1to1"] = tot["blind_one_to_one"] / tot["obs"]
    tot["precision_any"] = tot["matched_any"] / tot["facts"] if tot["facts"] else float("nan")
    tot["precision_a"] = tot["precision"]
    tot["one_to_one_cov"] = tot["one_to_one"] / tot["obs"]
    tot["grounded_cov"] = tot["grounded"] / tot["obs"]
    tot["capacity_reached"] = sum(bool(r.get("capacity_reached")) for r in rows)
    return tot


def fmt_full(t: dict[str, Any]) -> str:
    return (f"cov {100 * t['coverage']:5.1f} | prec(any) {100 * t['precision_any']:5.1f} | prec(a) "
            f"{100 * t['precision_a']:5.1f} | facts {t['facts']:4d} | dup pairs {100 * t['dup_rate']:.2f}% "
            f"({t['dup_pairs']}; @0.8 {100 * t['dup08_rate']:.2f}%) | 1:1 cov {100 * t['one_to_one_cov']:5.1f} | grounded cov "
            f"{100 * t['grounded_cov']:5.1f} | BLIND cov {100 * t['blind_cov']:5.1f} prec(any) "
            f"{100 * t['blind_prec_any']:5.1f} 1:1 {100 * t['blind_1to1']:5.1f} | cap {t['capacity_reached']}/5")


_Q_GENERIC = re.compile(r"\b(?:the user|the assistant)\b", re.I)
_Q_PREFIX = re.compile(r"^\s*[A-Z][\w'-]+:\s")
_Q_PERSON = re.compile(r"\b(?:I|I'm|I've|my|me|you|your|you're)\b")
_Q_DANGLING = re.compile(r"^(?:it|it's|this|that|that's|these|those|they|they're|them|he|she|his|her|there)\b", re.I)
_Q_PRON = re.compile(r"\b(?:it|this|that|these|those|they|them|their|he|she|him|her|his)\b", re.I)


def quality(facts: list[str], name: str) -> dict[str, float]:
    """Surface quality of stored facts (shares): generic subject, speaker prefix, 1st/2nd person left,
    a leading pronoun with no referent in the fact, the speaker's name present, mean words."""
    from facts import is_feeling  # noqa: PLC0415

    n = max(1, len(facts))
    return {
        "the_user": sum(bool(_Q_GENERIC.search(f)) for f in facts) / n,
        "prefix": sum(bool(_Q_PREFIX.match(f)) for f in facts) / n,
        "first_second": sum(bool(_Q_PERSON.search(f)) for f in facts) / n,
        "dangling": sum(bool(_Q_DANGLING.match(f)) for f in facts) / n,
        "named": sum(name in f for f in facts) / n,
        "feeling": sum(is_feeling(f) for f in facts) / n,
        "attributed": sum(f.startswith("According to ") for f in facts) / n,
        "words": sum(len(f.split()) for f in facts) / n,
    }
