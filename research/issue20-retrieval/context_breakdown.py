"""Where the words of the memory's default context go (plain protocol, on-thread questions), one conversation."""
import sys, statistics
from langchain_memoryos import MemoryOS
from langchain_memoryos.embeddings import resolve_embeddings
from langchain_memoryos.evaluation.locomo import load_locomo, load_questions
from langchain_memoryos.evaluation.metrics import count_words
from ingest_dump import ingest_plain

conv = sys.argv[1] if len(sys.argv) > 1 else "conv-30"
sample = next(s for s in load_locomo("/work/shared/data/locomo_dev.json") if s["sample_id"] == conv)
m = MemoryOS(embeddings=resolve_embeddings(None))
ingest_plain(m, sample, conv)
qs = [q for q in load_questions(sample) if q.category in (1, 2, 3, 4)][:60]
by = {}
for q in qs:
    ctx = m.retrieve(q.question, user_id=conv, thread_id=conv)
    for title, text in ctx.sections().items():
        by.setdefault(title, []).append(count_words(text) + len(title.split()) + 1)
    by.setdefault("TOTAL", []).append(count_words(ctx.to_prompt()))
for k, v in by.items():
    print(f"{k}: mean {statistics.mean(v):.0f} words over {len(v)} of {len(qs)} questions")
print(ctx.to_prompt()[:1500])
