"""Ingest the dev conversations with the package and dump what retrieval can use.

usage: python ingest_dump.py harness|plain

harness: evaluation.locomo.ingest_conversation (names as metadata, one minute per page).
plain:   issue 20's plain protocol: each session's turns paired by position, add_turn("Name: text", "Name: text",
         thread_id=conv, timestamp=<session date>, metadata={"source_id": [dia ids]}).

For each conversation the dump (dumps/<protocol>_<conv>.json) holds every page (MTM and STM) with its text,
labels, timestamp, dia ids, segment id, keywords, chain meta/linked; the segments (summary, keywords, pages);
the user facts; the thread's STM page ids. It also asks every question (cat 1-4) with the memory's default
retrieve: on the conversation's own thread (plain protocol: 'onthread') and from a fresh thread ('fresh'),
recording source ids, words of to_prompt(), and latency -- the memory's default figure.
"""
import json, sys, time, datetime as dt
from pathlib import Path
from langchain_memoryos import MemoryOS
from langchain_memoryos.embeddings import resolve_embeddings
from langchain_memoryos.evaluation.locomo import (load_locomo, ingest_conversation, load_questions, _numbered_sessions,
                                                  normalize_evidence, _turn_text)
from langchain_memoryos.evaluation.metrics import count_words

DATA = "/work/shared/data/locomo_dev.json"


def ingest_plain(memory, sample, conv):
    n = 0
    clock = None
    for number, (date, turns) in _numbered_sessions(sample):
        start = date or (clock + dt.timedelta(days=1) if clock else dt.datetime(2023, 1, 1, tzinfo=dt.UTC))
        clock = start
        for i in range(0, len(turns), 2):
            group = turns[i:i + 2]
            a = f"{group[0].get('speaker')}: {_turn_text(group[0])}"
            b = f"{group[1].get('speaker')}: {_turn_text(group[1])}" if len(group) > 1 else ""
            ids = [d for t in group for d in normalize_evidence(t.get("dia_id", ""))]
            memory.add_turn(a, b, user_id=conv, thread_id=conv, timestamp=start, metadata={"source_id": ids})
            n += 1
    return n


def page_dict(p, where):
    return {"id": p.id, "user_input": p.user_input, "agent_response": p.agent_response,
            "user_name": p.metadata.get("user_name"), "agent_name": p.metadata.get("agent_name"),
            "timestamp": p.timestamp.isoformat(), "dia_ids": p.source_ids(), "segment_id": p.segment_id,
            "keywords": list(p.keywords), "meta": p.meta, "linked": p.linked, "where": where,
            "thread_id": p.thread_id}


def main(protocol):
    emb = resolve_embeddings(None)
    out = Path("dumps"); out.mkdir(exist_ok=True)
    for sample in load_locomo(DATA):
        conv = sample["sample_id"]
        memory = MemoryOS(embeddings=emb)
        t0 = time.time()
        thread = conv if protocol == "plain" else "locomo"
        if protocol == "plain":
            ingest_plain(memory, sample, conv)
        else:
            ingest_conversation(memory, sample, user_id=conv)
        t_ingest = time.time() - t0
        state = memory._state(conv)
        pages = [page_dict(p, "mtm") for p in state.pages.values()]
        stm = state.stm.get(thread, [])
        pages += [page_dict(p, "stm") for p in stm]
        segs = [{"id": s.id, "summary": s.summary, "keywords": list(s.keywords), "page_ids": list(s.page_ids)}
                for s in state.segments.values()]
        facts = [{"id": f.id if hasattr(f, "id") else k, "summary": f.summary,
                  "source_page_ids": list(getattr(f, "source_page_ids", []) or [])}
                 for k, f in state.facts["user"].items()]
        questions = [q for q in load_questions(sample) if q.category in (1, 2, 3, 4)]
        asked = {}
        for mode, tid in (("onthread", thread), ("fresh", "questions")):
            rows = []
            for q in questions:
                s = time.perf_counter()
                ctx = memory.retrieve(q.question, user_id=conv, thread_id=tid)
                lat = (time.perf_counter() - s) * 1000
                rows.append({"ids": sorted(ctx.source_ids()), "words": count_words(ctx.to_prompt()),
                             "stm_words": count_words(ctx.sections().get("Recent conversation", "")),
                             "n_pages": len(ctx.pages), "n_facts": len(ctx.user_facts), "ms": lat})
            asked[mode] = rows
        memory.close()
        dump = {"conv": conv, "protocol": protocol, "thread": thread, "pages": pages, "segments": segs,
                "facts": facts, "stm_ids": [p.id for p in stm], "asked": asked, "ingest_s": t_ingest}
        (out / f"{protocol}_{conv}.json").write_text(json.dumps(dump))
        print(conv, protocol, len(pages), "pages", len(segs), "segments", len(facts), "facts",
              f"ingest {t_ingest:.0f}s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
