"""Oracle bounds under name-blind matching: candidates = every speaker_a sentence (table.py), greedy max coverage @k.

    nice -n 10 /work/main/.venv/bin/python bounds_blind.py
"""
import numpy as np
from common import CachedEmbeddings, OBS_THRESHOLD, blind, samples, user_observations, max_matching
from bounds import greedy_cover
from sim import load_table
emb = CachedEmbeddings()
table = load_table()
res = {k: [0, 0] for k in (50, 100, 150, 200, 10**6)}
nobs = 0
for s in samples():
    names = [s["conversation"]["speaker_a"], s["conversation"]["speaker_b"]]
    obs = [blind(f, names) for f, _ in user_observations(s)]; nobs += len(obs)
    facts = [blind(r["fact"], names) for r in table if r["conv"] == s["sample_id"] and r["is_a"]]
    adj = (emb.encode(obs) @ emb.encode(facts).T) >= OBS_THRESHOLD
    for k in res:
        res[k][0] += greedy_cover(adj, k)
emb.save()
for k, (c, _) in res.items():
    print(f"oracle greedy @{k if k < 10**6 else 'all'}: blind coverage {100 * c / nobs:.1f}%")
