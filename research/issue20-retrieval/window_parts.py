"""Ablation (in-sample, shared constants win=1, win3=1.5, date=0.2, k=10): which half of the window score matters
-- window cosine only, window BM25 only, both. harness and fresh."""
import numpy as np
from common import load_all, outcome, pack, paired_diff, table
from features import Features

W = {"win": 1, "win3": 1.5, "date": 0.2}
for proto in ("harness", "plain"):
    convs = load_all(proto)
    FE = {cv.conv: Features(cv) for cv in convs}
    res = {}
    for name, kw in (("flat", None), ("windows: cosine + BM25", dict(win_wd=1, win_wl=1)),
                     ("windows: cosine only", dict(win_wd=1, win_wl=0)), ("windows: BM25 only", dict(win_wd=0, win_wl=1))):
        outs = []
        for cv in convs:
            for qi in range(len(cv.questions)):
                x = FE[cv.conv].compute(qi, k=10, **(kw or {}))
                s = x["f"] if kw is None else x["f"] + sum(w * x[k] for k, w in W.items())
                if kw is None:
                    x = FE[cv.conv].compute(qi); s = x["f"]
                ch, used = pack(np.argsort(-s, kind="stable"), cv.words, cv.day_idx, 1000)
                outs.append(outcome(name, cv, qi, {d for i in ch for d in cv.dia[i]}, used))
        res[name] = outs
    print("##", "harness" if proto == "harness" else "fresh (plain pages)")
    print(table(res))
    for k, v in res.items():
        print(k, paired_diff(v, res["flat"]))
