"""Which reading of the issue's 29.3 % precision reproduces it: facts vs observations of speaker_a or of both."""
import json
import numpy as np
from common import CachedEmbeddings, samples, user_observations
emb = CachedEmbeddings()
d = json.load(open("out/baseline.json"))
tot = {"a": 0, "both": 0, "n": 0}
for s in samples():
    conv = s["sample_id"]
    facts = [f["summary"] for f in d["facts"][conv]]
    obs_all = [f for k, v in s["observation"].items() for spk, items in v.items() for f, _ in items]
    obs_a = [f for f, _ in user_observations(s)]
    fv = emb.encode(facts)
    for key, obs in (("a", obs_a), ("both", obs_all)):
        sim = emb.encode(obs) @ fv.T
        tot[key] += int((sim.max(0) >= 0.6).sum())
    tot["n"] += len(facts)
print({k: v / tot["n"] for k, v in tot.items() if k != "n"}, tot)
