"""Packing policies on dumped rankings. LOCO-CV over a parameter grid."""
import sys, pickle, statistics, math, collections, random
from collections import Counter
proto = sys.argv[1]
rows = pickle.load(open(f"/tmp/r21/dump_{proto}.pkl", "rb"))
BUDGET = int(sys.argv[2]) if len(sys.argv) > 2 else 1000

def credit(o, got):
    ev = set(o["ev"]); g = set()
    for x in got:
        if isinstance(x, tuple): g.update(x)
        elif x: g.add(x)
    return len(ev & g) / len(ev)

def pack_pages(o, budget=BUDGET):
    used = o["over"]; days = set(); got = set(o["stm_ids"]); n = 0
    top = max(40, budget // 25)
    for c in o["cands"][:5*top]:
        if n >= top or budget - used < 3: break
        cost = c["words"] + (0 if c["day"] in days else 1)
        if used + cost <= budget:
            used += cost; days.add(c["day"]); got.update(c["ids"]); n += 1
    return credit(o, got), used

def bm25_side(o, cands):
    # BM25 of each side over the sides of the candidate set (df from these sides)
    N = sum(len(c["sides"]) for c in cands) or 1
    df = Counter()
    for c in cands:
        for s in c["sides"]: df.update(set(s["toks"]))
    avg = statistics.mean(len(s["toks"]) or 1 for c in cands for s in c["sides"]) if N else 1
    q = set(o["qtoks"])
    res = {}
    for i, c in enumerate(cands):
        for j, s in enumerate(c["sides"]):
            tf = Counter(s["toks"]); L = len(s["toks"]) or 1; sc = 0.0
            for t in q:
                if tf[t]:
                    idf = math.log(1 + (N - df[t] + .5) / (df[t] + .5))
                    sc += idf * tf[t] * 2.2 / (tf[t] + 1.2 * (.25 + .75 * L / avg))
            res[(i, j)] = sc
    return res

def side_rrf(o, cands, use_cos=True, use_bm=True, k=10):
    keys = [(i, j) for i, c in enumerate(cands) for j in range(len(c["sides"]))]
    sc = Counter()
    if use_cos:
        for r, key in enumerate(sorted(keys, key=lambda kk: -cands[kk[0]]["sides"][kk[1]]["cos"])):
            sc[key] += 1 / (k + r + 1)
    if use_bm:
        bm = bm25_side(o, cands)
        for r, key in enumerate(sorted([kk for kk in keys if bm[kk] > 0], key=lambda kk: -bm[kk])):
            sc[key] += 1 / (k + r + 1)
    return sc

def pack_sides(o, lam, budget=BUDGET, use_cos=True, use_bm=True, depth=120):
    cands = o["cands"][:depth]
    sr = side_rrf(o, cands, use_cos, use_bm)
    units = []
    for i, c in enumerate(cands):
        for j, s in enumerate(c["sides"]):
            units.append((c["score"] + lam * sr[(i, j)], i, j))
    units.sort(key=lambda u: -u[0])
    used = o["over"]; days = set(); got = set(o["stm_ids"]); chosen = set()
    for _, i, j in units:
        if budget - used < 3: break
        c = cands[i]; s = c["sides"][j]
        cost = s["words"] + (0 if c["day"] in days else 1)
        if used + cost <= budget:
            used += cost; days.add(c["day"]); chosen.add((i, j)); got.add(s["id"])
    return credit(o, got), used

def run(rs, f):
    res = [f(o) for o in rs]
    return statistics.mean(r for r, _ in res), res

def cats(rs, res):
    return {c: round(100*statistics.mean(x[0] for o, x in zip(rs, res) if o["cat"] == c), 1) for c in (1,2,3,4)}

r0, res0 = run(rows, pack_pages)
if "cv2" in sys.argv: variants = {}
print("pages", round(100*r0,1), cats(rows, res0), "words", round(statistics.mean(w for _, w in res0)))
print("dumped ctx recall", round(100*statistics.mean(o["recall"] for o in rows),1))
variants = {"cos+bm": (True, True), "bm": (False, True), "cos": (True, False)}
for name, (uc, ub) in (variants.items() if "spk" not in sys.argv else []):
    for lam in (0, 1, 2, 3, 5, 8):
        r, res = run(rows, lambda o: pack_sides(o, lam, use_cos=uc, use_bm=ub))
        print(name, lam, round(100*r,1), cats(rows, res))

import re
def speaker(s):
    m = re.match(r"^([A-Z][\w'-]*):", s["text"])
    return m.group(1) if m else s.get("label", "")

def named(o):
    spk = {speaker(s) for c in o["cands"][:50] for s in c["sides"]}
    return {n for n in spk if n and re.search(rf"\b{re.escape(n)}\b", o["q"])}

_SR = {}
def pack_sides2(o, lam, mu, budget=BUDGET, depth=120, use_cos=True, use_bm=True):
    cands = o["cands"][:depth]
    key = (id(o), use_cos, use_bm, depth)
    if key not in _SR: _SR[key] = (side_rrf(o, cands, use_cos, use_bm), named(o))
    sr, ns = _SR[key]
    units = []
    for i, c in enumerate(cands):
        for j, s in enumerate(c["sides"]):
            bonus = mu if (len(ns) == 1 and speaker(s) in ns) else 0.0
            units.append((c["score"] + lam * sr[(i, j)] + bonus, i, j))
    units.sort(key=lambda u: -u[0])
    used = o["over"]; days = set(); got = set(o["stm_ids"])
    for _, i, j in units:
        if budget - used < 3: break
        c = cands[i]; s = c["sides"][j]
        cost = s["words"] + (0 if c["day"] in days else 1)
        if used + cost <= budget:
            used += cost; days.add(c["day"]); got.add(s["id"])
    return credit(o, got), used

if "spk" in sys.argv:
    for lam in (0, 1, 2, 3):
        for mu in (0, 0.02, 0.05, 0.1, 0.2, 1.0):
            r, res = run(rows, lambda o: pack_sides2(o, lam, mu))
            print("spk", lam, mu, round(100*r,1), cats(rows, res))

def loco(rows, grid, fn, label):
    sids = sorted({o["sid"] for o in rows})
    held = []; chosen = []
    for sid in sids:
        train = [o for o in rows if o["sid"] != sid]; test = [o for o in rows if o["sid"] == sid]
        best = max(grid, key=lambda g: (run(train, lambda o: fn(o, *g))[0], -sum(g)))
        chosen.append(best)
        held += list(zip(test, [fn(o, *best) for o in test]))
    rec = statistics.mean(x[0] for _, x in held)
    print(label, "LOCO", round(100*rec,1), {c: round(100*statistics.mean(x[0] for o, x in held if o["cat"]==c),1) for c in (1,2,3,4)}, "words", round(statistics.mean(x[1] for _, x in held)), chosen)
    return held

if "cv" in sys.argv:
    grid = [(l, m) for l in (0, 1, 2, 3) for m in (0, 0.05, 0.1, 0.2, 0.3, 0.5)]
    loco(rows, grid, lambda o, l, m: pack_sides2(o, l, m), "cos+bm")
    loco(rows, grid, lambda o, l, m: pack_sides2(o, l, m, use_cos=False), "bm")
if "cv2" in sys.argv:
    g0 = [(0, m) for m in (0, 0.05, 0.1, 0.2, 0.3, 0.5)]
    loco(rows, g0, lambda o, l, m: pack_sides2(o, l, m, use_cos=False), "spk-only")
    grid = [(l, m) for l in (0, 1, 2, 3) for m in (0, 0.05, 0.1, 0.2, 0.3, 0.5)]
    loco(rows, grid, lambda o, l, m: pack_sides2(o, l, m, use_cos=False), "bm")
    loco(rows, grid, lambda o, l, m: pack_sides2(o, l, m), "cos+bm")
