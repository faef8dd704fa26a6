"""End to end: the proposed write path inside the real MemoryOS (proto_engine), plain protocol.

Checks that the prototype in the engine gives the simulation's figures, and keeps each conversation's
memory for the read-path measurement (e2e_read.py).

    nice -n 10 /work/main/.venv/bin/python e2e.py [rule|learned]      # -> out/e2e_<score>.json
"""
import json
import sys
import time
from collections import Counter

import learn
from common import CachedEmbeddings, fmt_full, full_metrics, ingest_plain, pooled_full, quality, samples
from gates import chatter
from proto_engine import make_memory, rule_score
from sim import OUT, load_table


def learned_score_for(held: str):
    table = load_table()
    model = learn.fit([r for r in table if r["conv"] != held])

    def score(row):
        return 0.0 if chatter(row) else float(learn.predict(model, [row])[0])

    return score


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "rule"
    protocol = sys.argv[2] if len(sys.argv) > 2 else "plain"
    taus = {}
    if which == "learned":
        gates = json.loads((OUT / "gates.json").read_text())
        taus = next(v["tau"] for k, v in gates.items() if "learned" in k and "both speakers" in k)
    emb = CachedEmbeddings()
    rows, dump = [], {}
    for s in samples():
        conv = s["sample_id"]
        t0 = time.perf_counter()
        if which == "learned":
            memory = make_memory(emb, score=learned_score_for(conv), gate_threshold=taus[conv])
        else:
            memory = make_memory(emb, score=rule_score)
        if protocol == "harness":
            from langchain_memoryos.evaluation.locomo import ingest_conversation

            ingest_conversation(memory, s, user_id=conv, thread_id=conv)  # user_name metadata: the name is known
        else:
            ingest_plain(memory, s)
        facts = memory.list_facts(conv, kind="user")
        page_dias = {p.id: set(p.metadata.get("source_id") or []) for p in memory.list_pages(conv)}
        dias = [set().union(*[page_dias.get(pid, set()) for pid in f.source_page_ids]) for f in facts]
        m = full_metrics(s, [f.summary for f in facts], dias, emb)
        log = memory.write_log(conv)
        m["conv"] = conv
        m["actions"] = dict(Counter(e.action for e in log))
        m["capacity_reached"] = len(facts) >= 100 or m["actions"].get("evicted", 0) > 0
        m["quality"] = quality([f.summary for f in facts], s["conversation"]["speaker_a"])
        rows.append(m)
        dump[conv] = [{"summary": f.summary, "dias": sorted(d), "date": f.updated_at.date().isoformat(),
                       "score": f.confidence} for f, d in zip(facts, dias)]
        print(conv, len(facts), m["actions"], f"{time.perf_counter() - t0:.0f}s", flush=True)
        memory.close()
        emb.save()
    tot = pooled_full(rows)
    tag = which if protocol == "plain" else f"{which}_{protocol}"
    print("E2E", tag, fmt_full(tot))
    (OUT / f"e2e_{tag}.json").write_text(json.dumps({"rows": rows, "pooled": tot}, indent=1, default=str))
    (OUT / f"facts_e2e_{tag}.json").write_text(json.dumps(dump, indent=1))


if __name__ == "__main__":
    main()
