import pickle, re, collections, json
rows = pickle.load(open("/tmp/r21/dump_plain.pkl", "rb"))
data = json.load(open("/work/shared/data/locomo_dev.json"))
spk = {}
for s in data:
    c = s["conversation"]
    for k, v in c.items():
        if k.startswith("session_") and isinstance(v, list):
            for t in v: spk[(s["sample_id"], t["dia_id"])] = t["speaker"]
names = {s["sample_id"]: (s["conversation"]["speaker_a"], s["conversation"]["speaker_b"]) for s in data}
for cat in (1,2,3,4):
    tot = named = match = both = 0
    for o in rows:
        if o["cat"] != cat: continue
        ns = [n for n in names[o["sid"]] if re.search(rf"\b{n}\b", o["q"])]
        for e in o["ev"]:
            tot += 1
            if len(ns) == 1:
                named += 1; match += spk.get((o["sid"], e)) == ns[0]
            elif len(ns) == 2: both += 1
    print(cat, tot, "one name", named, "ev by named", match, "both named", both)
