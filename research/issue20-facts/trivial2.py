"""Name-blind matching: speaker names and 'the user' replaced by 'someone' on both sides. Trivial probes again."""
import re, numpy as np
from common import CachedEmbeddings, samples, user_observations
emb = CachedEmbeddings()
def blind(t, names):
    for n in names + ["the user", "The user"]:
        t = re.sub(rf"\b{re.escape(n)}'s\b", "someone's", t); t = re.sub(rf"\b{re.escape(n)}\b", "someone", t)
    return t
probes = ["{a}.", "{a} talked with {b}.", "{a} likes things.", "{a} went somewhere with family.",
          "{a} feels happy.", "The user is happy.", "{a} is passionate about helping people.", "{a} has a family."]
tot = np.zeros(len(probes)); nobs = 0; single = 0
for s in samples():
    a, b = s["conversation"]["speaker_a"], s["conversation"]["speaker_b"]
    obs = [blind(f, [a, b]) for f, _ in user_observations(s)]; nobs += len(obs)
    sim = emb.encode(obs) @ emb.encode([blind(p.format(a=a, b=b), [a, b]) for p in probes]).T
    tot += (sim >= 0.6).sum(0); single += ((sim >= 0.6).any(1)).sum()
emb.save()
for p, c in zip(probes, tot): print(f"{100*c/nobs:5.1f}%  {p}")
print(f"all together: {100*single/nobs:.1f}%")
