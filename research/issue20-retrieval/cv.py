"""Leave-one-conversation-out cross-validation of the structured ranking, per protocol.

usage: python cv.py [harness|fresh|plain] [--budget 1000] [--mean-windows] [--stm full|none|compact]
                    [--params win,win3,date,sess_max,nb_max,tile0.45_max,k] [--tag NAME]

For each held-out conversation, the weights are chosen by coordinate ascent (2 passes over a fixed grid, start =
flat hybrid, ties keep the current value) maximising pooled recall 1-4 of the other four conversations at the
same word budget; the held-out conversation is then scored with them. Reported: the pooled held-out figure per
category with bootstrap CIs, next to the flat hybrid at the same budget in the same run (memory rendering, same
pages, same candidates), and the paired difference.

Protocols (pages from dumps/<protocol>_*.json written by ingest_dump.py):
  harness  harness pages; questions from a fresh thread: every page is a candidate.
  fresh    plain pages; questions from a new thread: every page is a candidate.
  plain    plain pages; questions on the conversation's thread: the thread's 7 STM pages are handled by --stm:
           full     shown first as the package does today (stm_line, newest first, cut to fit), not ranked;
           none     not shown (the agent has them as messages: MemoryContext.without_stm), not ranked, their
                    evidence NOT credited (conservative);
           compact  the last STM page shown compactly (each side cut to 30 words, no timestamp), the other six
                    compete in the ranking with the MTM pages.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from common import CONVS, PAST_OVERHEAD, STM_TITLE_WORDS, Conv, count_words, outcome, pack, paired_diff, table
from features import Features
from langchain_memoryos.schema import cut_page, stm_line

GRID = {
    "win": [0, 0.5, 1, 1.5, 2, 3],
    "win3": [0, 0.5, 1, 1.5, 2, 3],
    "date": [0, 0.02, 0.05, 0.1, 0.2, 0.5],
    "sess_max": [0, 0.1, 0.2, 0.3],
    "nb_max": [0, 0.2, 0.35, 0.5],
    "tile0.45_max": [0, 0.1, 0.2, 0.3],
    "k": [20, 10],
    # not in the default set; for ablations only
    "memseg_max": [0, 0.1, 0.2, 0.3],
    "seg_keys": [0, 0.1, 0.3, 0.5],
    "knn_mean": [0, 0.1, 0.2, 0.3],
    "nb_sum": [0, 0.2, 0.35, 0.5],
    "prev": [0, 0.2, 0.35, 0.5],
    "next": [0, 0.2, 0.35, 0.5],
}
COMPACT_SIDE_WORDS = 30


def compact_stm_line(page) -> str:
    """One compact line for the last STM page: no timestamp, no generic label, each side cut to 30 words."""
    sides = [t for t in (page.user_input, page.agent_response) if t]
    out = []
    for t in sides:
        w = t.split()
        out.append(" ".join(w[:COMPACT_SIDE_WORDS]) + (" …" if len(w) > COMPACT_SIDE_WORDS else ""))
    return " | ".join(out)


class Setup:
    """Per conversation: features for every question and the STM handling of the protocol."""

    def __init__(self, protocol: str, stm: str, mean_windows: bool, ks=(20, 10)):
        self.protocol, self.stm_mode = protocol, stm
        page_proto = "harness" if protocol == "harness" else "plain"
        self.convs = [Conv(page_proto, c) for c in CONVS]
        self.feats = {}
        self.stm_shown = {}
        self.stm_used = {}
        for cv in self.convs:
            cand = np.ones(cv.n, bool)
            if protocol == "plain":
                stm = cv.stm_idx
                if not stm:
                    raise SystemExit("no STM pages in dump")
                if self.stm_mode in ("full", "none"):
                    cand[stm] = False
                elif self.stm_mode == "compact":
                    cand[stm[-1]] = False
            fe = Features(cv, candidates=cand, mean_windows=mean_windows)
            self.feats[cv.conv] = {k: [fe.compute(qi, k=k) for qi in range(len(cv.questions))] for k in ks}

    def stm_cost(self, cv, budget):
        """Words used before any mid-term page (fence, titles, STM as shown) and the STM dia ids shown."""
        used = PAST_OVERHEAD
        if self.protocol != "plain" or self.stm_mode == "none":
            return used, set()
        used += STM_TITLE_WORDS
        if self.stm_mode == "compact":
            last = cv.pages[cv.stm_idx[-1]]
            return used + count_words(compact_stm_line(last)), set(last.source_ids())
        ids = set()
        for i in reversed(cv.stm_idx):  # recall._fit_stm: newest first, the first that does not fit is cut
            fitted = cut_page(cv.pages[i], budget - used)
            if fitted is None:
                break
            ids |= set(cv.pages[i].source_ids())
            used += count_words(stm_line(fitted))
            if fitted is not cv.pages[i]:
                break
        return used, ids

    def run(self, params: dict, convs, budget: int, name="x", timing=False):
        outs = []
        k = params.get("k", 20)
        for cv in convs:
            used0, stm_ids = self.stm_cost(cv, budget)
            for qi, x in enumerate(self.feats[cv.conv][k]):
                s = x["f"].copy()
                for key, w in params.items():
                    if key != "k" and w:
                        s += w * x[key]
                order = np.argsort(-s, kind="stable")
                if used0 > budget:  # STM alone over budget: nothing else (the package would cut STM)
                    chosen, used = [], used0
                else:
                    chosen, used = pack(order, cv.words, cv.day_idx, budget, used=used0)
                ids = {d for i in chosen for d in cv.dia[i]} | stm_ids
                outs.append(outcome(name, cv, qi, ids, used))
        return outs


def score(outs) -> float:
    r = [o.recall for o in outs if o.evidence]
    return float(np.mean(r))


def fit(setup: Setup, train, budget, names):
    params = {n: GRID[n][0] for n in names}
    best = score(setup.run(params, train, budget))
    for _ in range(2):
        for n in names:
            for v in GRID[n]:
                if v == params[n]:
                    continue
                trial = dict(params, **{n: v})
                s = score(setup.run(trial, train, budget))
                if s > best + 1e-9:
                    best, params = s, trial
    return params, best


def cross_validate(setup: Setup, budget: int, names, name="structured (LOCO-CV)"):
    held, chosen = [], {}
    for c in setup.convs:
        train = [x for x in setup.convs if x is not c]
        params, _ = fit(setup, train, budget, names)
        chosen[c.conv] = params
        held += setup.run(params, [c], budget, name=name)
    return held, chosen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("protocol", choices=["harness", "fresh", "plain"])
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--mean-windows", action="store_true")
    ap.add_argument("--stm", default="full", choices=["full", "none", "compact"])
    ap.add_argument("--params", default="win,win3,date,sess_max,nb_max,tile0.45_max,k")
    ap.add_argument("--tag", default="")
    a = ap.parse_args()
    t = time.time()
    setup = Setup(a.protocol, a.stm, a.mean_windows)
    names = [p for p in a.params.split(",") if p]
    flat = setup.run({}, setup.convs, a.budget, name=f"flat hybrid ≤{a.budget} (memory rendering)")
    held, chosen = cross_validate(setup, a.budget, names)
    label = f"{a.protocol}" + (f" stm={a.stm}" if a.protocol == "plain" else "") + \
        (" mean-windows" if a.mean_windows else "") + f" params={a.params} budget={a.budget}"
    print("##", label)
    print(table({f"flat hybrid ≤{a.budget}": flat, "structured (LOCO-CV held-out)": held}))
    print("paired difference structured - flat:", paired_diff(held, flat))
    for c, p in chosen.items():
        print(" ", c, {k: v for k, v in p.items() if v})
    print("seconds", round(time.time() - t))
    if a.tag:
        json.dump({"label": label, "chosen": chosen, "held": [o.as_dict() for o in held],
                   "flat": [o.as_dict() for o in flat]}, open(f"results/{a.tag}.json", "w"))


if __name__ == "__main__":
    main()
