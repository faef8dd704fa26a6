"""Exploration (NOT cross-validated, all 5 dev conversations): one structure feature at a time on top of the flat
RRF, harness protocol, 1000 words, memory rendering. Used only to pick which features enter the CV grid."""
import sys, time, numpy as np
from common import *
from features import Features

protocol = sys.argv[1] if len(sys.argv) > 1 else "harness"
convs = load_all(protocol)
t = time.time()
F = {}
for cv in convs:
    fe = Features(cv)
    F[cv.conv] = [fe.compute(qi) for qi in range(len(cv.questions))]
    F[cv.conv + "t"] = [fe.compute(qi, wt=1.0) for qi in range(len(cv.questions))]
print("features", round(time.time() - t, 1), "s")


def run(weights, turn=False, budget=1000):
    outs = []
    for cv in convs:
        for qi, fe in enumerate(F[cv.conv + ("t" if turn else "")]):
            s = fe["f"].copy()
            for k, w in weights.items():
                s += w * fe[k]
            order = np.argsort(-s, kind="stable")
            chosen, used = pack(order, cv.words, cv.day_idx, budget)
            outs.append(outcome("x", cv, qi, {d for i in chosen for d in cv.dia[i]}, used))
    return outs


base = run({})
res = {"flat": base}
for name, w in [("nb_sum", .35), ("nb_max", .5), ("sess_max", .3), ("sess_top2", .3), ("knn_mean", .5), ("knn_mean", 1.0),
                ("memseg_max", .3), ("tile0.35_max", .3), ("tile0.45_max", .3), ("tile0.55_max", .3), ("seg_keys", .3),
                ("date", .02), ("date", .05)]:
    res[f"+{w} {name}"] = run({name: w})
res["turn-dense list (wt=1)"] = run({}, turn=True)
res["quick: .35 nb_sum + .3 sess_max"] = run({"nb_sum": .35, "sess_max": .3})
res["quick + turn"] = run({"nb_sum": .35, "sess_max": .3}, turn=True)
res["quick + .05 date"] = run({"nb_sum": .35, "sess_max": .3, "date": .05})
print(table(res))
for k, v in res.items():
    print(k, paired_diff(v, base))
