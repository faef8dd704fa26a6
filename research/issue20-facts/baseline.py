"""Today's LPM facts under the plain protocol, measured against LoCoMo's observations about speaker_a.

    nice -n 10 /work/main/.venv/bin/python baseline.py [plain|harness]   # -> out/baseline[_harness].json
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from common import CachedEmbeddings, fmt_full, full_metrics, ingest_plain, pooled_full, samples

from langchain_memoryos import MemoryOS

OUT = Path(__file__).resolve().parent / "out"
OUT.mkdir(exist_ok=True)


def main() -> None:
    import sys

    protocol = sys.argv[1] if len(sys.argv) > 1 else "plain"
    emb = CachedEmbeddings()
    rows, dump = [], {}
    for sample in samples():
        conv = sample["sample_id"]
        t0 = time.perf_counter()
        memory = MemoryOS(embeddings=emb)
        if protocol == "harness":
            from langchain_memoryos.evaluation.locomo import ingest_conversation

            ingest_conversation(memory, sample, user_id=conv, thread_id=conv)
        else:
            ingest_plain(memory, sample)
        facts = memory.list_facts(conv, kind="user")
        log = memory.write_log(conv)
        page_dias = {p.id: set(p.metadata.get("source_id") or []) for p in memory.list_pages(conv)}
        fact_dias = [set().union(*[page_dias.get(pid, set()) for pid in f.source_page_ids]) for f in facts]
        m = full_metrics(sample, [f.summary for f in facts], fact_dias, emb)
        m["conv"] = conv
        m["evicted"] = sum(e.action == "evicted" for e in log)
        m["capacity_reached"] = len(facts) >= memory.config.user_kb_capacity or m["evicted"] > 0
        m["actions"] = {a: sum(e.action == a for e in log) for a in sorted({e.action for e in log})}
        rows.append(m)
        dump[conv] = [{"summary": f.summary, "aspect": f.aspect, "intent": f.intent, "sources": f.source_page_ids,
                       "dias": sorted(d), "date": f.updated_at.date().isoformat()} for f, d in zip(facts, fact_dias)]
        memory.close()
        emb.save()
        print(conv, {k: m[k] for k in ("facts", "covered", "matched_any", "evicted", "actions")},
              f"{time.perf_counter() - t0:.0f}s", flush=True)
    tot = pooled_full(rows)
    print("POOLED", fmt_full(tot))
    tag = "" if protocol == "plain" else f"_{protocol}"
    (OUT / f"baseline{tag}.json").write_text(json.dumps({"rows": rows, "pooled": tot, "facts": dump}, indent=1))
    (OUT / f"facts_today{tag}.json").write_text(json.dumps(dump, indent=1))


if __name__ == "__main__":
    main()
