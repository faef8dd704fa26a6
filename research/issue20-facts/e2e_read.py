"""Facts in the package's own read path: does showing them cost page evidence recall at 1,000 words?

For each conversation: the memory (today's, or the prototype write path) ingests the plain protocol; then
every category 1-4 question is asked through ``langchain_memoryos.recall.retrieve`` with three read rules
on the same memory state:
  none   top_facts = 0
  today  top_facts = 10, cosine >= tau_r (0.35), facts first, facts whose source page is shown dropped
  strict cosine >= 0.5, facts at most 10 % of the budget, facts whose source page is shown dropped
from a fresh thread ("fresh" protocol) and from the conversation's own thread ("plain").
Recall = evidence ids of the PAGES in the context (ctx.source_ids()); words = count_words(ctx.to_prompt()).

    nice -n 10 /work/main/.venv/bin/python e2e_read.py [proto|today]     # -> out/e2e_read_<memory>.json
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace

import numpy as np
from common import CachedEmbeddings, ingest_plain, samples

sys.path.insert(0, "/work/main")

import langchain_memoryos.retrieval.recall as R  # noqa: E402
from langchain_memoryos import MemoryOS, MemoryOSConfig  # noqa: E402
from langchain_memoryos.pipeline.effects import run_sync  # noqa: E402
from langchain_memoryos.pipeline.settings import EngineSettings  # noqa: E402
from langchain_memoryos.evaluation.locomo import load_questions  # noqa: E402
from langchain_memoryos.evaluation.metrics import QuestionOutcome, bootstrap_ci, count_words, summarize  # noqa: E402

from proto_engine import make_memory, rule_score, unpatch  # noqa: E402
from sim import OUT  # noqa: E402

_ORIG_FIT = R._fit_facts
STRICT = {"share": 0.10, "tau": 0.5}


def _fit_facts_strict(ctx, budget):
    """Facts in rank order while the facts section stays within STRICT['share'] of the budget."""
    _ORIG_FIT(ctx, budget)
    if budget is None:
        return
    limit = int(STRICT["share"] * budget)
    kept = []
    for hit in ctx.user_facts:
        trial = kept + [hit]
        words = sum(count_words(f"- [{h.record.updated_at.date().isoformat()}] {h.record.summary}") for h in trial) + 3
        if words <= limit:
            kept.append(hit)
    ctx.user_facts = kept


_ORIG_LPM = R.stage_retrieve_lpm
BLIND = {"names": [], "emb": None}


def _stage_lpm_blind(settings, r):
    """User facts by NAME-BLIND cosine (speaker names -> 'someone' in query and fact), >= tau_r, top_facts."""
    import copy

    from langchain_memoryos.schema import ScoredRecord

    from common import blind

    state, ctx, emb, names = r.state, r.ctx, BLIND["emb"], BLIND["names"]
    facts = list(state.facts["user"].values())
    if facts:
        qs = [blind(x, names) for x in (r.query, r.plan.fact_query)]
        sc = (emb.encode(qs) @ emb.encode([blind(f.summary, names) for f in facts]).T).max(0)
        order = np.argsort(-sc, kind="stable")
        top = [(facts[i], float(sc[i])) for i in order if sc[i] >= settings.thresholds.retrieval_similarity]
        ctx.user_facts.extend(ScoredRecord(copy.deepcopy(f), s) for f, s in top[: settings.config.top_facts])
    R._fit_facts(ctx, settings.config.context_words)
    R._fit_stm(ctx, settings.config.context_words)
    r.next = "retrieve_mtm"


def read(memory, settings, conv, thread, q, strict=False, blind_rel=False):
    R._fit_facts = _fit_facts_strict if strict else _ORIG_FIT
    R.stage_retrieve_lpm = _stage_lpm_blind if blind_rel else _ORIG_LPM
    try:
        t0 = time.perf_counter()
        ctx = run_sync(R.retrieve(memory.repository, settings, user_id=conv, thread_id=thread, query=q),
                       memory._services)
        return ctx, (time.perf_counter() - t0) * 1000
    finally:
        R._fit_facts = _ORIG_FIT
        R.stage_retrieve_lpm = _ORIG_LPM


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else "proto"
    emb = CachedEmbeddings()
    base_cfg = MemoryOSConfig()
    rules = {
        "none": (base_cfg.replace(top_facts=0), False),
        "today": (base_cfg, False),
        "strict": (base_cfg.replace(retrieval_similarity=STRICT["tau"]), True),
        "strict-blind": (base_cfg.replace(retrieval_similarity=STRICT["tau"]), True),
    }
    BLIND["emb"] = emb
    outcomes: dict[str, list[QuestionOutcome]] = {}
    shown: dict[str, list[int]] = {}
    for s in samples():
        conv = s["sample_id"]
        t0 = time.perf_counter()
        if which == "proto":
            memory = make_memory(emb, score=rule_score)
        else:
            unpatch()
            memory = MemoryOS(embeddings=emb)
        ingest_plain(memory, s)
        BLIND["names"] = [s["conversation"]["speaker_a"], s["conversation"]["speaker_b"]]
        settings = {k: EngineSettings.build(cfg, "all-MiniLM-L6-v2") for k, (cfg, _) in rules.items()}
        for q in load_questions(s):
            if q.category not in (1, 2, 3, 4) or not q.evidence:
                continue
            for thread_name, thread in (("fresh", "questions"), ("plain", conv)):
                for rule, (_, strict) in rules.items():
                    ctx, lat = read(memory, settings[rule], conv, thread, q.question, strict, rule == "strict-blind")
                    key = f"{rule}/{thread_name}"
                    text = ctx.to_prompt()
                    outcomes.setdefault(key, []).append(QuestionOutcome(
                        key, conv, q.question, q.category, q.evidence, frozenset(ctx.source_ids()),
                        count_words(text), 0, lat))
                    shown.setdefault(key, []).append(len(ctx.user_facts))
        memory.close()
        emb.save()
        print(conv, f"{time.perf_counter() - t0:.0f}s", flush=True)
    res = {}
    print(f"\nmemory: {which}")
    print(f"{'rule/thread':19s} {'recall 1-4 [95% CI]':>22s} {'Δ vs none [95% CI]':>22s}  multi  temp  open  single  words facts")
    for key, outs in outcomes.items():
        summ = summarize(key, outs)
        base = outcomes[f"none/{key.split('/')[1]}"]
        diff = [a.recall - b.recall for a, b in zip(outs, base, strict=True)]
        lo, hi = bootstrap_ci(diff)
        res[key] = {"recall": summ.recall, "ci": summ.recall_ci, "by_cat": summ.recall_by_category,
                    "words": summ.words_mean, "diff": float(np.mean(diff)), "diff_ci": (lo, hi),
                    "facts": float(np.mean(shown[key])), "p50_ms": summ.latency_p50_ms}
        c = summ.recall_by_category
        print(f"{key:19s} {100 * summ.recall:5.1f} [{100 * summ.recall_ci[0]:.1f}, {100 * summ.recall_ci[1]:.1f}]   "
              f"{100 * np.mean(diff):+5.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]   "
              f"{100 * c[1]:5.1f} {100 * c[2]:5.1f} {100 * c[3]:5.1f} {100 * c[4]:6.1f}  {summ.words_mean:5.0f} "
              f"{np.mean(shown[key]):4.1f}")
    (OUT / f"e2e_read_{which}.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
