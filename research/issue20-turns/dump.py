"""Per question: ranked candidates (top 300) with page score, per-side words/ids/tokens/cosine; overhead words."""
import sys, pickle, os
import numpy as np
from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.evaluation.locomo import load_locomo, load_questions, ingest_conversation, ingest_plain
from langchain_memoryos.evaluation.embedding_cache import CachedEmbeddings
from langchain_memoryos.embeddings import resolve_embeddings
from langchain_memoryos.retrieval.recall import ReadRun, run_read_stage, context_words
from langchain_memoryos.retrieval.lexical import tokenize
from langchain_memoryos.pipeline.effects import run_sync
from langchain_memoryos.schema import MemoryContext, fence_memory
proto = sys.argv[1]
cfg = MemoryOSConfig(**eval(sys.argv[2])) if len(sys.argv) > 2 else MemoryOSConfig()
CP = "/tmp/r21/embcache.pkl"
emb = CachedEmbeddings(resolve_embeddings(None))
if os.path.exists(CP): emb._rows.update(pickle.load(open(CP, "rb")))
out = []
for s in load_locomo("/work/shared/data/locomo_dev.json"):
    sid = s["sample_id"]
    m = MemoryOS(config=cfg, embeddings=emb)
    if proto == "harness": ingest_conversation(m, s, user_id=sid, thread_id="locomo")
    else: ingest_plain(m, s, user_id=sid)
    thread = sid if proto == "plain" else "questions"
    state = m.repository.cached(sid)
    for q in load_questions(s):
        if q.category not in (1,2,3,4) or not q.evidence: continue
        r = ReadRun(sid, thread, q.question, touch=False)
        while r.next != "done":
            run_sync(run_read_stage(m.repository, m.settings, r), m._services)
        ctx = r.ctx
        rest = MemoryContext(query=ctx.query, user_id=ctx.user_id, thread_id=ctx.thread_id, stm=ctx.stm, persona=ctx.persona,
                             user_facts=ctx.user_facts, agent_facts=ctx.agent_facts)
        over = context_words(rest.to_prompt() if rest.sections() else fence_memory(" ")) + 4
        qv = np.asarray(r.vectors[0], dtype=np.float32)
        cands = []
        for h in r.ranked[:300]:
            p = h.page
            ids = list(p.source_ids())
            sides = []
            lines = p.lines()
            texts = [t for t in (p.user_input, p.agent_response)]
            present = [bool(t) for t in texts]
            if len(ids) == 2 and all(present): sid_of = ids
            elif len(ids) == 1: sid_of = [ids[0] if present[0] else None, ids[0] if present[1] else None]
            else: sid_of = [tuple(ids), tuple(ids)]
            for k, (lab, t) in enumerate(((p.user_label, p.user_input), (p.agent_label, p.agent_response))):
                if not t: continue
                v = emb.encode([t])[0]
                sides.append(dict(words=len(lab.split()) + len(t.split()), id=sid_of[k], toks=tokenize(t), cos=float(v @ qv), text=t, label=lab))
            cands.append(dict(pid=p.id, score=h.score, words=state.indices.page_words(p), day=p.timestamp.date(), ids=tuple(ids), sides=sides))
        out.append(dict(sid=sid, cat=q.category, q=q.question, qtoks=tokenize(q.question), ev=tuple(q.evidence), over=over,
                        stm_ids=tuple(i for p in ctx.stm for i in p.source_ids()), cands=cands,
                        recall=len(set(q.evidence) & set(ctx.source_ids()))/len(q.evidence), words=context_words(ctx.to_prompt())))
    m.close()
    print(sid, "done", flush=True)
pickle.dump(out, open(f"/tmp/r21/dump_{proto}.pkl", "wb"))
pickle.dump(emb._rows, open(CP, "wb"))
import statistics
for c in (1,2,3,4):
    print(c, round(100*statistics.mean(o["recall"] for o in out if o["cat"]==c),1))
print("all", round(100*statistics.mean(o["recall"] for o in out),1), "words", statistics.mean(o["words"] for o in out))
