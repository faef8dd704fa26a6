"""Do LPM facts cost page evidence at a fixed word budget?  Flat hybrid pages + facts, same budget.

Pages are the plain-protocol pages (turns paired by position, names in the text, session date);
the page ranking is the package's flat hybrid (FlatPages: MiniLM cosine + BM25, RRF k=20). Facts are the
KB left by the proposed write path (sim.py) after the whole conversation. Context = the facts shown
("## User facts", "- [date] summary", as MemoryContext renders them) + the pages, words counted with
count_words over everything. Evidence recall counts PAGES only (a fact credits nothing), as the
benchmark does; "credited" recall also credits a shown fact with its source turn (optimistic).

Policies:
  P0 pages only (flat hybrid <= budget)                                   — the floor
  P1 today's rule: top-10 facts with cosine >= 0.35 first, pages fill the rest, then facts whose source
     page is shown are dropped and the freed words refilled with pages
  P2 joint: facts and pages in ONE ranking (RRF of dense and BM25 ranks over pages+facts), filled in rank
     order; a fact whose source turn is already in a chosen page is skipped, and dropped if such a page
     comes later (freed words refilled)                                    — no constant
  P3 pages first, then facts (cosine >= 0.35, best first) whose source is not shown, in the words left

    nice -n 10 /work/main/.venv/bin/python retrieval.py [variant]      # -> out/retrieval_<variant>.json
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
from common import CachedEmbeddings, blind, plain_pairs, samples

sys.path.insert(0, "/work/main")

from langchain_memoryos.controllers.rules import third_person  # noqa: E402
from langchain_memoryos.evaluation.baselines import FlatPages, _bm25s  # noqa: E402
from langchain_memoryos.evaluation.locomo import LocomoPage, load_questions  # noqa: E402
from langchain_memoryos.evaluation.metrics import CATEGORIES, QuestionOutcome, bootstrap_ci, count_words, summarize  # noqa: E402
from langchain_memoryos.retrieval.lexical import rrf, tokenize  # noqa: E402

from extract import split_speaker  # noqa: E402
from sim import OUT  # noqa: E402

TAU_R = 0.35  # the package's retrieval_similarity for MiniLM
TOP_FACTS = 10  # the package's top_facts


def plain_locomo_pages(sample) -> list[LocomoPage]:
    out = []
    for p in plain_pairs(sample):
        n1, t1 = split_speaker(p["user_input"])
        n2, t2 = split_speaker(p["agent_response"]) if p["agent_response"] else (None, "")
        out.append(LocomoPage(t1, t2, n1 or "", n2 or "", tuple(p["dia_ids"]), p["timestamp"], p["session"]))
    return out


def fact_line(f: dict) -> str:
    return f"- [{f['date']}] {f['summary']}"


def render(facts: list[dict], pages: list[LocomoPage]) -> str:
    parts = []
    if facts:
        parts.append("## User facts\n" + "\n".join(fact_line(f) for f in facts))
    if pages:
        parts.append("\n".join(p.text() for p in pages))
    return "\n\n".join(parts)


def fill(order: list[int], texts: list[str], budget: int, used: int = 0, chosen: list[int] | None = None) -> list[int]:
    chosen = list(chosen or [])
    for i in order:
        if i in chosen:
            continue
        cost = count_words(texts[i])
        if used + cost <= budget:
            chosen.append(i)
            used += cost
    return chosen


class Conv:
    blind_scores = False

    def __init__(self, sample, facts: list[dict], emb: CachedEmbeddings) -> None:
        self.names = [sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"]]
        self.pages = plain_locomo_pages(sample)
        self.flat = FlatPages(self.pages, embeddings=emb, rrf_k=20.0)
        self.ptexts = self.flat.texts
        self.facts = facts
        self.ftexts = [fact_line(f) for f in facts]
        self.emb = emb
        self.fvec = emb.encode([f["summary"] for f in facts]) if facts else np.zeros((0, 384), np.float32)
        self.bvec = emb.encode([blind(f["summary"], self.names) for f in facts]) if facts else self.fvec
        bm25s = _bm25s()
        self.joint_bm25 = bm25s.BM25()
        self.joint_bm25.index([tokenize(t) for t in self.ptexts + self.ftexts], show_progress=False)
        self.jvec = np.concatenate([self.flat._vectors, self.fvec]) if facts else self.flat._vectors

    def page_order(self, q: str) -> list[int]:
        return [int(i) for i in rrf([[str(i) for i in self.flat.dense_order(q)],
                                     [str(i) for i in self.flat.lexical_order(q)]], k=20.0)]

    def fact_scores(self, q: str) -> np.ndarray:
        if not self.facts:
            return np.zeros(0)
        qs = [q, third_person(q) or q]
        if self.blind_scores:
            # name-blind relevance: every fact names its speaker, so the name says nothing about which fact
            qv = self.emb.encode([blind(x, self.names) for x in qs])
            return (qv @ self.bvec.T).max(0)
        qv = self.emb.encode(qs)
        return (qv @ self.fvec.T).max(0)

    def covered(self, fi: int, chosen_pages: list[int]) -> bool:
        src = set(self.facts[fi]["dias"])
        shown = {d for i in chosen_pages for d in self.pages[i].dia_ids}
        return bool(src) and src <= shown

    def context(self, q: str, policy: str, budget: int) -> tuple[list[int], list[int]]:
        order = self.page_order(q)
        self.blind_scores = policy.endswith("n")
        policy = policy[:-1] if policy.endswith("n") else policy
        if policy == "P0" or not self.facts:
            return [], fill(order, self.ptexts, budget)
        fs = self.fact_scores(q)
        ranked_facts = [int(i) for i in np.argsort(-fs, kind="stable") if fs[i] >= TAU_R]
        if policy == "P1":
            chosen_f = []
            for i in ranked_facts[:TOP_FACTS]:
                if count_words(render([self.facts[j] for j in chosen_f + [i]], [])) <= budget:
                    chosen_f.append(i)
            used = count_words(render([self.facts[j] for j in chosen_f], [])) if chosen_f else 0
            pages = fill(order, self.ptexts, budget, used)
            kept = [i for i in chosen_f if not self.covered(i, pages)]
            if len(kept) < len(chosen_f):
                used = count_words(render([self.facts[j] for j in kept], [])) if kept else 0
                used += sum(count_words(self.ptexts[i]) for i in pages)
                pages = fill(order, self.ptexts, budget, used, pages)
            return kept, pages
        if policy == "P3":
            pages = fill(order, self.ptexts, budget)
            used = sum(count_words(self.ptexts[i]) for i in pages)
            chosen_f = []
            header = 3  # "## User facts" + the blank line costs 3 words once
            for i in ranked_facts:
                if self.covered(i, pages):
                    continue
                cost = count_words(self.ftexts[i]) + (0 if chosen_f else header)
                if used + cost <= budget:
                    chosen_f.append(i)
                    used += cost
            return chosen_f, pages
        if policy.startswith("P4"):
            # a fixed reserve for facts (share of the budget), strong matches only, not covered by the pages
            share, tau = {"P4a": (0.1, 0.5), "P4b": (0.1, 0.6), "P4c": (0.2, 0.5)}[policy]
            reserve = int(share * budget)
            chosen_f, used = [], 0
            for i in ranked_facts:
                if fs[i] < tau:
                    break
                cost = count_words(self.ftexts[i]) + (0 if chosen_f else 3)
                if used + cost <= reserve:
                    chosen_f.append(i)
                    used += cost
            pages = fill(order, self.ptexts, budget, used)
            kept = [i for i in chosen_f if not self.covered(i, pages)]
            if len(kept) < len(chosen_f):
                used = count_words(render([self.facts[j] for j in kept], [])) if kept else 0
                used += sum(count_words(self.ptexts[i]) for i in pages)
                pages = fill(order, self.ptexts, budget, used, pages)
            return kept, pages
        if policy == "P5":
            # swap: a fact (cosine >= tau_r, source not shown) enters only if it is more similar to the query
            # than every page it displaces (the lowest-ranked pages, removed until it fits)
            pages = fill(order, self.ptexts, budget)
            qv = self.emb.encode([q])[0]
            pcos = self.flat._vectors @ qv
            used = sum(count_words(self.ptexts[i]) for i in pages)
            chosen_f = []
            for i in ranked_facts:
                if self.covered(i, pages):
                    continue
                cost = count_words(self.ftexts[i]) + (0 if chosen_f else 3)
                removed = []
                trial = list(pages)
                free = budget - used
                while free < cost and trial:
                    j = trial.pop()  # the lowest-ranked page left
                    removed.append(j)
                    free += count_words(self.ptexts[j])
                if free < cost or (removed and fs[i] <= max(pcos[j] for j in removed)):
                    continue
                pages = trial
                used = budget - free + cost
                chosen_f.append(i)
            return chosen_f, pages
        if policy == "P2":
            n = len(self.pages)
            qv = self.emb.encode([q])[0]
            dense = np.argsort(-(self.jvec @ qv), kind="stable")
            lex = np.argsort(-np.asarray(self.joint_bm25.get_scores(list(dict.fromkeys(tokenize(q))))), kind="stable")
            joint = [int(i) for i in rrf([[str(i) for i in dense], [str(i) for i in lex]], k=20.0)]
            texts = self.ptexts + self.ftexts
            pages, facts, used = [], [], 0
            for i in joint:
                if i >= n and self.covered(i - n, pages):
                    continue
                cost = count_words(texts[i]) + (3 if i >= n and not facts else 0)
                if used + cost > budget:
                    continue
                if i < n:
                    pages.append(i)
                    used += cost
                    drop = [f for f in facts if self.covered(f, pages)]
                    for f in drop:
                        facts.remove(f)
                        used -= count_words(self.ftexts[f]) + (3 if not facts else 0)
                else:
                    facts.append(i - n)
                    used += cost
            return facts, pages
        raise ValueError(policy)


def run(variant: str, facts_by_conv: dict[str, list[dict]], budgets=(1000,),
        policies=("P0", "P1", "P2", "P3", "P4a", "P4b", "P4c", "P5"),
        emb: CachedEmbeddings | None = None) -> dict:
    emb = emb or CachedEmbeddings()
    outcomes: dict[tuple[str, int], list[QuestionOutcome]] = {}
    credited: dict[tuple[str, int], list[float]] = {}
    nfacts: dict[tuple[str, int], list[int]] = {}
    for s in samples():
        conv = Conv(s, facts_by_conv.get(s["sample_id"], []), emb)
        for q in load_questions(s):
            if q.category not in (1, 2, 3, 4) or not q.evidence:
                continue
            for budget in budgets:
                for pol in policies:
                    t0 = time.perf_counter()
                    fi, pi = conv.context(q.question, pol, budget)
                    lat = (time.perf_counter() - t0) * 1000
                    text = render([conv.facts[i] for i in fi], [conv.pages[i] for i in pi])
                    ids = frozenset(d for i in pi for d in conv.pages[i].dia_ids)
                    o = QuestionOutcome(pol, q.sample_id, q.question, q.category, q.evidence, ids, count_words(text),
                                        0, lat)
                    outcomes.setdefault((pol, budget), []).append(o)
                    cids = ids | {d for i in fi for d in conv.facts[i]["dias"]}
                    credited.setdefault((pol, budget), []).append(sum(e in cids for e in q.evidence) / len(q.evidence))
                    nfacts.setdefault((pol, budget), []).append(len(fi))
        emb.save()
        print(s["sample_id"], "done", flush=True)
    res = {}
    for (pol, budget), outs in outcomes.items():
        summ = summarize(f"{pol}@{budget}", outs)
        base = outcomes[("P0", budget)]
        diff = [a.recall - b.recall for a, b in zip(outs, base, strict=True)]
        res[f"{pol}@{budget}"] = {
            "recall": summ.recall, "ci": summ.recall_ci, "by_cat": summ.recall_by_category,
            "words": summ.words_mean, "words_p95": summ.words_p95,
            "diff_vs_P0": float(np.mean(diff)), "diff_ci": bootstrap_ci(diff),
            "credited": float(np.mean(credited[(pol, budget)])), "facts_shown": float(np.mean(nfacts[(pol, budget)])),
            "p50_ms": summ.latency_p50_ms,
        }
    return res


def print_table(variant: str, res: dict) -> None:
    print(f"\nfacts: {variant}")
    print(f"{'policy':10s} {'recall 1-4':>22s} {'Δ vs P0 [95% CI]':>24s} " + " ".join(
        f"{CATEGORIES[c][:9]:>9s}" for c in (1, 2, 3, 4)) + f" {'words':>6s} {'facts':>5s} {'credited':>8s}")
    for key, r in res.items():
        print(f"{key:10s} {100 * r['recall']:6.1f} [{100 * r['ci'][0]:.1f}, {100 * r['ci'][1]:.1f}]     "
              f"{100 * r['diff_vs_P0']:+5.1f} [{100 * r['diff_ci'][0]:+.1f}, {100 * r['diff_ci'][1]:+.1f}]   " +
              " ".join(f"{100 * r['by_cat'].get(c, float('nan')):9.1f}" for c in (1, 2, 3, 4)) +
              f" {r['words']:6.0f} {r['facts_shown']:5.1f} {100 * r['credited']:7.1f}")


if __name__ == "__main__":
    variants = sys.argv[1].split(",") if len(sys.argv) > 1 else ["rule_both"]
    pols = tuple(sys.argv[3].split(",")) if len(sys.argv) > 3 else ("P0", "P1", "P2", "P3", "P4a", "P4b", "P4c", "P5")
    budgets = tuple(int(b) for b in sys.argv[2].split(",")) if len(sys.argv) > 2 else (1000,)
    emb = CachedEmbeddings()
    for variant in variants:
        facts = json.loads((OUT / f"facts_{variant}.json").read_text())
        res = run(variant, facts, budgets=budgets, emb=emb, policies=pols)
        print_table(variant, res)
        tag = "" if budgets == (1000,) else "_" + "_".join(map(str, budgets))
        (OUT / f"retrieval_{variant}{tag}.json").write_text(json.dumps(res, indent=1))
