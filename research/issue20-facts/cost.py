"""Ingest-time cost of the proposed page analysis (rules only) and of embedding one fact, per page."""
import time, sys
sys.path.insert(0, "/work/main")
from langchain_memoryos.controllers import HeuristicController
from langchain_memoryos.embeddings import resolve_embeddings, encode_texts
from langchain_memoryos.schema import DialoguePage
from common import plain_pairs, samples
from proto_engine import FactController, rule_score
pairs = plain_pairs(samples()[0])[:200]
pages = [DialoguePage(id=f"p{i}", user_input=p["user_input"], agent_response=p["agent_response"],
                      metadata={"source_id": p["dia_ids"]}) for i, p in enumerate(pairs)]
for name, c in (("HeuristicController.analyze_page (today)", HeuristicController()),
                ("FactController.analyze_page (proposed)", FactController(score=rule_score))):
    c.analyze_page(pages[0], None, None)
    t0 = time.perf_counter()
    n = sum(len(c.analyze_page(p, None, None).records) for p in pages)
    print(f"{name}: {1000 * (time.perf_counter() - t0) / len(pages):.1f} ms/page, {n / len(pages):.2f} records/page")
emb = resolve_embeddings(None)
facts = [r.summary for p in pages[:50] for r in FactController(score=rule_score).analyze_page(p, None, None).records]
encode_texts(emb, facts[:2])
t0 = time.perf_counter()
for f in facts:
    encode_texts(emb, [f])
print(f"MiniLM, one fact at a time: {1000 * (time.perf_counter() - t0) / len(facts):.1f} ms/fact (mean {sum(len(f.split()) for f in facts)/len(facts):.0f} words)")
