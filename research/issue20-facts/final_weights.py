"""The learned gate's weights fitted on all 5 dev conversations (to ship; its figures are the LOCO ones)."""
import json, pickle
import numpy as np
import learn
from sim import OUT
table = pickle.load(open(OUT / "table.pkl", "rb"))
w, mu, sd = learn.fit(table)
# fold standardisation into raw-feature weights: z = (x - mu)/sd  ->  w.z = sum(w/sd * x) - sum(w*mu/sd)
raw = w / sd
bias = float(w[learn.FEATURES.index("bias")] - np.sum(np.delete(w * mu / sd, learn.FEATURES.index("bias"))))
out = {k: round(float(v), 3) for k, v in zip(learn.FEATURES, raw) if k != "bias"}
out["bias"] = round(bias, 3)
print(json.dumps(dict(sorted(out.items(), key=lambda kv: -abs(kv[1]))), indent=0))
(OUT / "gate_weights.json").write_text(json.dumps(out, indent=1))
# agreement of the folded form with the model
x = learn.matrix(table[:200]); p1 = learn.predict((w, mu, sd), table[:200])
z = x @ np.array([out[k] if k != "bias" else 0 for k in learn.FEATURES]) + bias
print("max |p - p_folded| =", float(np.abs(p1 - 1 / (1 + np.exp(-z))).max()))
