"""Exploration 2 (NOT cross-validated): neighbours split prev/next, distance 2, overlapping windows, RRF weights."""
import sys, time, numpy as np
from common import *
from features import Features

protocol = sys.argv[1] if len(sys.argv) > 1 else "harness"
convs = load_all(protocol)
t = time.time()
FE = {cv.conv: Features(cv) for cv in convs}
print("init", round(time.time() - t, 1), "s", flush=True)


def run(weights, budget=1000, **kw):
    outs = []
    for cv in convs:
        fe = FE[cv.conv]
        for qi in range(len(cv.questions)):
            x = fe.compute(qi, **kw)
            s = x["f"] * weights.get("f", 1.0)
            for k, w in weights.items():
                if k != "f":
                    s = s + w * x[k]
            order = np.argsort(-s, kind="stable")
            chosen, used = pack(order, cv.words, cv.day_idx, budget)
            outs.append(outcome("x", cv, qi, {d for i in chosen for d in cv.dia[i]}, used))
    return outs


base = run({})
res = {"flat": base}
for name in [({"prev": .5}), ({"next": .5}), ({"prev": .5, "next": .5}), ({"nb_max": .5, "nb2_max": .2}),
                ({"f": 0, "win": 1}), ({"win": .5}), ({"win": 1}), ({"nb_max": .5, "win": .5}),
                ({"nb_max": .5, "sess_max": .2}), ({"nb_max": .5, "tile0.45_max": .2}),
                ({"nb_max": .5, "tile0.45_max": .2, "date": .05})]:
    res[str(name)] = run(name)
res["wl=1.5"] = run({}, wl=1.5)
res["k=10"] = run({}, k=10)
res["k=40"] = run({}, k=40)
res["nb_max .5, wl 1.5"] = run({"nb_max": .5}, wl=1.5)
print(table(res))
for k, v in res.items():
    print(k, paired_diff(v, base))
