"""Redraw the recall-vs-words plots from results/curve_*.json (one panel per protocol)."""
import json, glob
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

files = [f for f in ["results/curve_harness.json", "results/curve_fresh.json", "results/curve_plain_compact.json",
                     "results/curve_plain_none.json"] if glob.glob(f)]
fig, axes = plt.subplots(1, len(files), figsize=(4.2 * len(files), 3.8), sharey=True)
for ax, f in zip(axes if len(files) > 1 else [axes], files):
    curve = json.load(open(f))
    for label in ("structured", "flat hybrid", "bm25", "dense", "hybrid"):
        xs, ys = [], []
        for b in sorted(curve, key=int):
            for k, s in curve[b].items():
                pkg = "(package baseline)" in k
                if (label == "hybrid" and pkg and k.startswith("hybrid")) or (label != "hybrid" and not pkg and k.startswith(label + " ≤")):
                    xs.append(s["words_mean"]); ys.append(100 * s["recall"])
        if xs:
            ax.plot(xs, ys, marker="o", label=label if label != "hybrid" else "hybrid (package baseline rendering)",
                    linestyle="--" if label == "hybrid" else "-")
    ax.set_xscale("log"); ax.set_xlabel("mean context words"); ax.grid(alpha=.3)
    ax.set_title(f.split("curve_")[1][:-5].replace("_", " stm="))
axes[0].set_ylabel("evidence recall 1-4 (%)"); axes[0].legend(fontsize=8)
fig.tight_layout(); fig.savefig("results/curves.png", dpi=110)
