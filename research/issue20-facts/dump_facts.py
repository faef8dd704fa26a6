"""Write the KB each proposed variant leaves after the whole conversation: out/facts_<variant>.json.

    nice -n 10 /work/main/.venv/bin/python dump_facts.py
"""
import json
import learn
from common import CachedEmbeddings, samples
from gates import chatter, rule_utility
from sim import OUT, load_table, run_conv

emb = CachedEmbeddings()
table = load_table()
by_conv = {}
for r in table:
    by_conv.setdefault(r["conv"], []).append(r)
GATES = json.loads((OUT / "gates.json").read_text())
# tau chosen on the 4 other conversations, per held-out conversation (gates.py, A6both and A6k)
TAUS = {"A6both": next(v["tau"] for k, v in GATES.items() if "learned" in k and "both speakers" in k),
        "A6k": next(v["tau"] for k, v in GATES.items() if "learned" in k and "name known" in k and "no cap" not in k)}


def dump(name, score_for, **kw):
    out = {}
    for s in samples():
        conv = s["sample_id"]
        kw2 = dict(kw)
        if "taus" in kw2:
            kw2["tau"] = kw2.pop("taus")[conv]
        res = run_conv(s, by_conv[conv], score_for(conv), emb=emb, **kw2)
        out[conv] = [{"summary": f.summary, "dias": f.source_page_ids, "date": f.updated_at.date().isoformat(),
                      "score": f.confidence} for f in res["facts"]]
    (OUT / f"facts_{name}.json").write_text(json.dumps(out, indent=1))
    print(name, {c: len(v) for c, v in out.items()})


def learned_for(conv):
    model = learn.fit([r for r in table if r["conv"] != conv])
    rows = by_conv[conv]
    sc = {id(r): 0.0 if chatter(r) else float(p) for r, p in zip(rows, learn.predict(model, rows))}
    return lambda r: sc[id(r)]


dump("rule_both", lambda c: rule_utility, evict="utility", group="turn", sides="both")
dump("rule_known", lambda c: rule_utility, evict="utility", group="turn", sides="known")
dump("learned_both", learned_for, evict="utility", group="turn", sides="both", taus=TAUS["A6both"])
dump("learned_known", learned_for, evict="utility", group="turn", sides="known", taus=TAUS["A6k"])
emb.save()
