"""What each part of the default read path brings on one LoCoMo protocol (in-sample, 1,000 words).

Usage: ``python benchmarks/ablation.py [harness|plain|fresh] [LOCOMO_FILE]``. One ``run_locomo`` with
the configurations below as systems and the flat hybrid at the same words as the baseline; prints a
Markdown table (recall 1–4 with its 95 % CI, per category, mean words).
"""

from __future__ import annotations

import sys
import time

from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.evaluation.baselines import Baseline
from langchain_memoryos.evaluation.benchmark import MemorySystem, run_locomo

SYSTEMS = [
    MemorySystem("pages (whole pages, no turn packing)", MemoryOSConfig(page_units="pages")),
    MemorySystem("+ turn packing", MemoryOSConfig(speaker_weight=0.0)),
    MemorySystem("+ named speaker first (default)", MemoryOSConfig()),
    MemorySystem("flat ranking, turns + speaker", MemoryOSConfig(chain_weights=(0.0, 0.0), date_weight=0.0)),
    MemorySystem("default, no facts shown", MemoryOSConfig(top_facts=0)),
]


def main() -> None:
    """Run the ablation and print its table."""
    protocol = sys.argv[1] if len(sys.argv) > 1 else "plain"
    path = sys.argv[2] if len(sys.argv) > 2 else "../shared/data/locomo_dev.json"
    started = time.time()
    run = run_locomo(
        path,
        systems=SYSTEMS,
        baselines=[Baseline("hybrid", words=1000)],
        categories=(1, 2, 3, 4),
        progress=False,
        n_boot=1000,
        protocol=protocol,
    )
    head = "recall 1–4 (95 % CI) | multi-hop | temporal | open-domain | single-hop | words"
    print(f"| configuration (`{protocol}`) | {head} |")
    print("|---|---|---|---|---|---|---|")
    for s in run.summaries:
        cats = " | ".join(f"{100 * s.recall_by_category.get(c, float('nan')):.1f} %" for c in (1, 2, 3, 4))
        ci = f"{100 * s.recall_ci[0]:.1f}–{100 * s.recall_ci[1]:.1f}"
        print(f"| {s.system} | {100 * s.recall:.1f} % ({ci}) | {cats} | {s.words_mean:.0f} |")
    print(f"({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
