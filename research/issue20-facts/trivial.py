"""How lenient is 'cosine >= 0.6'? Coverage of speaker_a observations by trivial facts."""
import numpy as np
from common import CachedEmbeddings, samples, user_observations
emb = CachedEmbeddings()
probes = ["{a}.", "{a} talked with {b}.", "{a} likes things.", "{a} went somewhere with family.",
          "{a} feels happy.", "The user is happy.", "{a} is passionate about helping people.", "{a} has a family."]
tot = np.zeros(len(probes)); nobs = 0; single = 0
for s in samples():
    a, b = s["conversation"]["speaker_a"], s["conversation"]["speaker_b"]
    obs = [f for f, _ in user_observations(s)]; nobs += len(obs)
    ov = emb.encode(obs)
    pv = emb.encode([p.format(a=a, b=b) for p in probes])
    sim = ov @ pv.T
    tot += (sim >= 0.6).sum(0)
    single += ((sim >= 0.6).any(1)).sum()
emb.save()
for p, c in zip(probes, tot): print(f"{100*c/nobs:5.1f}%  {p}")
print(f"all {len(probes)} probes together: {100*single/nobs:.1f}%")
