"""Print the stored facts of one conversation under the proposed path (learned gate LOCO, one fact per turn)."""
import sys
import learn
from common import CachedEmbeddings, samples
from sim import load_table, run_conv
conv = sys.argv[1] if len(sys.argv) > 1 else "conv-26"
emb = CachedEmbeddings(); table = load_table()
model = learn.fit([r for r in table if r["conv"] != conv])
rows = [r for r in table if r["conv"] == conv]
sc = {id(r): float(p) for r, p in zip(rows, learn.predict(model, rows))}
s = next(x for x in samples() if x["sample_id"] == conv)
res = run_conv(s, rows, lambda r: sc[id(r)], tau=0.1, evict="utility", group="turn", emb=emb)
for f in res["facts"]:
    print(f"{f.confidence:.2f} {f.source_page_ids[0]:7s} {f.summary}")
print(res["actions"])
