"""Exploration 3 (NOT cross-validated): window sizes 2/3 and combinations."""
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


if __name__ == "__main__":
    base = run({})
    res = {"flat": base}
    for name in [{"win": 1}, {"win": 2}, {"win3": 1}, {"win3": 2}, {"win": 1, "win3": 1}, {"f": 0, "win3": 1},
                 {"win": 1, "nb_max": .3}, {"win": 1, "sess_max": .2}, {"win": 1, "date": .05},
                 {"win": 1, "win3": 1, "date": .05, "sess_max": .2}]:
        res[str(name)] = run(name)
    res["win 1, k=10"] = run({"win": 1}, k=10)
    print(table(res))
    for k, v in res.items():
        print(k, paired_diff(v, base))
