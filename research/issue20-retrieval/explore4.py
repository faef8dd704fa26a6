"""Exploration 4 (NOT cross-validated): windows embedded as text vs. the normalised mean of page vectors."""
import numpy as np
from common import *
from features import Features
import explore3

convs = explore3.convs
res = {"flat": explore3.run({})}
for mean in (False, True):
    explore3.FE = {cv.conv: Features(cv, mean_windows=mean) for cv in convs}
    for name in [{"win": 1}, {"win": 1, "win3": 1}, {"win": 1, "win3": 1, "date": .05}]:
        res[f"{'mean-vector' if mean else 'encoded'} windows {name}"] = explore3.run(name)
print(table(res))
for k, v in res.items():
    print(k, paired_diff(v, res["flat"]))
