"""Recall vs words at 250, 500, 1000, 2000 words: structured (LOCO-CV at each budget) vs flat hybrid / BM25 / dense.

usage: python curve.py [harness|fresh|plain] [--stm full|none|compact] [--mean-windows]

All systems rank the same pages and are rendered/counted the memory's way (fence, one date line per day,
"Name: text" lines; count_words of everything injected). For reference, the package's own baselines
(evaluation.baselines.Baseline(kind, words=N) on FlatPages, their "[date] A: .. B: .." rendering) are run on the
harness pages too. Writes results/curve_<protocol>.json and results/curve_<protocol>.png.
"""
from __future__ import annotations

import argparse
import json

import numpy as np
from langchain_core.embeddings import Embeddings

from common import CONVS, outcome, paired_diff, samples, table
from cv import Setup, cross_validate
from embcache import embed
from langchain_memoryos.evaluation.baselines import Baseline, FlatPages, render_pages
from langchain_memoryos.evaluation.locomo import conversation_pages
from langchain_memoryos.evaluation.metrics import count_words, summarize

BUDGETS = (250, 500, 1000, 2000)
NAMES = "win,win3,date,k".split(",")  # the recommended set (see REPORT.md)


class Cached(Embeddings):
    def embed_documents(self, texts):
        return embed(list(texts)).tolist()

    def embed_query(self, text):
        return embed([text])[0].tolist()


def package_baselines(setup, budget):
    out = {}
    for kind in ("hybrid", "bm25"):
        b = Baseline(kind, words=budget)
        rows = []
        for cv in setup.convs:
            flat = FlatPages(conversation_pages(samples()[cv.conv]), embeddings=Cached())
            for qi, q in enumerate(cv.questions):
                chosen = b.select(flat, q.question)
                rows.append(outcome(b.name + " (package baseline)", cv, qi, {d for p in chosen for d in p.dia_ids},
                                    count_words(render_pages(chosen))))
        out[b.name + " (package baseline)"] = rows
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("protocol", choices=["harness", "fresh", "plain"])
    ap.add_argument("--stm", default="full")
    ap.add_argument("--mean-windows", action="store_true")
    a = ap.parse_args()
    setup = Setup(a.protocol, a.stm, a.mean_windows)
    curve = {}
    for budget in BUDGETS:
        res = {
            f"dense ≤{budget}": setup.run({}, setup.convs, budget, name="dense", ) if False else None,
        }
        res = {}
        # flat rankings: fused features with one list switched off are not precomputed, so rank directly
        for name, (wd, wl) in {"dense": (1, 0), "bm25": (0, 1)}.items():
            rows = []
            for cv in setup.convs:
                from common import rrf_scores, pack
                for qi in range(len(cv.questions)):
                    cand = np.ones(cv.n, bool)
                    if a.protocol == "plain" and a.stm in ("full", "none"):
                        cand[cv.stm_idx] = False
                    elif a.protocol == "plain":
                        cand[cv.stm_idx[-1]] = False
                    s = rrf_scores(cv.cos(qi), cv.bm25(qi), cand, wd, wl)
                    used0, stm_ids = setup.stm_cost(cv, budget)
                    ch, used = pack(np.argsort(-s, kind="stable"), cv.words, cv.day_idx, budget, used=used0)
                    rows.append(outcome(name, cv, qi, {d for i in ch for d in cv.dia[i]} | stm_ids, used))
            res[f"{name} ≤{budget}"] = rows
        res[f"flat hybrid ≤{budget}"] = setup.run({}, setup.convs, budget)
        held, chosen = cross_validate(setup, budget, NAMES)
        res[f"structured ≤{budget} (LOCO-CV)"] = held
        if a.protocol == "harness":
            res.update(package_baselines(setup, budget))
        print(f"## {a.protocol} budget {budget}")
        print(table(res))
        print("structured - flat hybrid:", paired_diff(held, res[f"flat hybrid ≤{budget}"]))
        print("chosen:", {c: {k: v for k, v in p.items() if v} for c, p in chosen.items()}, flush=True)
        curve[budget] = {k: summarize(k, v).as_dict() for k, v in res.items()}
    tag = a.protocol + (f"_{a.stm}" if a.protocol == "plain" else "")
    json.dump(curve, open(f"results/curve_{tag}.json", "w"))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for label in ("structured", "flat hybrid", "bm25", "dense"):
        xs, ys = [], []
        for b in BUDGETS:
            for k, s in curve[b].items():
                if k.startswith(label + " ≤"):
                    xs.append(s["words_mean"]); ys.append(100 * s["recall"])
        ax.plot(xs, ys, marker="o", label=label)
    ax.set_xscale("log"); ax.set_xlabel("mean context words"); ax.set_ylabel("evidence recall 1-4 (%)")
    ax.set_title(f"LoCoMo dev, {a.protocol}" + (f" stm={a.stm}" if a.protocol == "plain" else "")); ax.legend(); ax.grid(alpha=.3)
    fig.tight_layout(); fig.savefig(f"results/curve_{tag}.png", dpi=120)


if __name__ == "__main__":
    main()
