import pickle, numpy as np
from collections import defaultdict
rows = [r for r in pickle.load(open("out/table.pkl", "rb")) if r["is_a"]]
def rate(key):
    g = defaultdict(list)
    for r in rows: g[key(r)].append((r["best_same"] >= 0.6, r["best_any"] >= 0.6))
    for k, v in sorted(g.items(), key=lambda kv: -len(kv[1])):
        v = np.array(v); print(f"   {str(k)[:40]:40s} n={len(v):5d} grounded={v[:,0].mean():.2f} any={v[:,1].mean():.2f}")
for name, key in [("intent", lambda r: r["intent"]), ("aspect", lambda r: r["aspect"]), ("question", lambda r: r["feats"]["question"]),
                  ("first", lambda r: (r["feats"]["first"], r["feats"]["group"])), ("second_only", lambda r: r["feats"]["second_only"]),
                  ("few_content", lambda r: r["feats"]["few_content"]), ("chat_reply", lambda r: r["feats"]["chat_reply"]),
                  ("dangling", lambda r: r["feats"]["dangling"]), ("joined", lambda r: r["feats"]["joined"]),
                  ("personal", lambda r: r["personal"]), ("conf", lambda r: r["confidence"]), ("has_obs_turn", lambda r: r["has_obs_turn"]),
                  ("first_sentence", lambda r: r["feats"]["first_sentence"])]:
    print(name); rate(key)
