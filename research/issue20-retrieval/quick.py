"""Sanity: flat hybrid (memory's RRF, memory's rendering) vs the issue's quick check, on available dumps."""
import sys, numpy as np
from common import *

convs = [Conv("harness", c) for c in sys.argv[1:]]
res = {"flat": [], "quick(.35 nb sum, .3 sess)": []}
for cv in convs:
    for qi, q in enumerate(cv.questions):
        f = cv.fused(qi)
        for name, s in (("flat", f),):
            pass
        nb = np.where(cv.prev >= 0, f[cv.prev], 0) + np.where(cv.next >= 0, f[cv.next], 0)
        sb = np.zeros(cv.n)
        for sess in np.unique(cv.session):
            m = cv.session == sess; sb[m] = f[m].max()
        for name, s in (("flat", f), ("quick(.35 nb sum, .3 sess)", f + .35 * nb + .3 * sb)):
            order = np.argsort(-s, kind="stable")
            chosen, used = pack(order, cv.words, cv.day_idx, 1000)
            text = render(cv, chosen)
            assert count_words(text) == used, (count_words(text), used)
            ids = {d for i in chosen for d in cv.dia[i]}
            res[name].append(outcome(name, cv, qi, ids, used))
print(table(res))
