"""Packing policy experiment: session diversity (MMR-like) on top of the recommended page score.

usage: python diversity.py harness|fresh
Greedy packing: at each step the page maximising S - delta * (pages already chosen from its session) among
those that still fit. delta by LOCO-CV (grid 0, .005, .01, .02, .04); page weights per fold from results/rec_<p>.json.
"""
import json, sys
import numpy as np
from common import PAST_OVERHEAD, outcome, paired_diff, table
from cv import Setup

proto = sys.argv[1]
setup = Setup(proto, "none", False)
chosen = json.load(open(f"results/rec_{proto}.json"))["chosen"]
DELTAS = [0, 0.005, 0.01, 0.02, 0.04]
S = {}
for cv in setup.convs:
    p = chosen[cv.conv]
    S[cv.conv] = []
    for x in setup.feats[cv.conv][p.get("k", 20)]:
        s = x["f"].copy()
        for key, w in p.items():
            if key != "k" and w:
                s += w * x[key]
        S[cv.conv].append(s)


def pack_div(s, cv, budget, delta, used=PAST_OVERHEAD, max_pages=40):
    s = s.copy(); chosen = []; seen = set(); cnt = {}
    alive = np.ones(cv.n, bool)
    while len(chosen) < max_pages:
        cost = cv.words + np.array([0 if d in seen else 1 for d in cv.day_idx])
        ok = alive & (used + cost <= budget)
        if not ok.any():
            break
        pen = np.array([cnt.get(x, 0) for x in cv.session]) * delta
        i = int(np.argmax(np.where(ok, s - pen, -np.inf)))
        chosen.append(i); alive[i] = False; used += cost[i]; seen.add(cv.day_idx[i])
        cnt[cv.session[i]] = cnt.get(cv.session[i], 0) + 1
    return chosen, used


def run(convs, delta, name="x"):
    outs = []
    for cv in convs:
        for qi, s in enumerate(S[cv.conv]):
            ch, used = pack_div(s, cv, 1000, delta)
            outs.append(outcome(name, cv, qi, {d for i in ch for d in cv.dia[i]}, used))
    return outs


held, ds = [], {}
for c in setup.convs:
    train = [x for x in setup.convs if x is not c]
    best = max(DELTAS, key=lambda d: np.mean([o.recall for o in run(train, d) if o.evidence]))
    ds[c.conv] = best
    held += run([c], best, "diversity")
base = run(setup.convs, 0)
print(table({"recommended (delta=0)": base, "with session diversity (LOCO-CV delta)": held}))
print("deltas:", ds, " diff:", paired_diff(held, base))
