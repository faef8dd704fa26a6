"""Paired difference of evidence recall 1–4 between two systems of one LoCoMo report.

Usage::

    python benchmarks/paired_difference.py locomo-report/plain/report.json "memoryos (LOCO-CV)" "hybrid ≤1000 words"

Prints the mean per-question difference (first system minus second) with its 95 % percentile
bootstrap interval (``evaluation.metrics.bootstrap_ci`` over the per-question differences: the same
questions in both, so the interval is paired) and how many questions each system wins.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from langchain_memoryos.evaluation.metrics import bootstrap_ci


def _recalls(questions: list[dict[str, Any]], system: str) -> dict[tuple[str, str, tuple[str, ...]], float]:
    out: dict[tuple[str, str, tuple[str, ...]], float] = {}
    for q in questions:
        if q["system"] == system and q["category"] in (1, 2, 3, 4) and q["evidence"]:
            evidence = set(q["evidence"])
            out[(q["sample_id"], q["question"], tuple(q["evidence"]))] = len(evidence & set(q["retrieved"])) / len(
                evidence
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("system")
    parser.add_argument("baseline")
    args = parser.parse_args()
    questions = json.loads(args.report.read_text())["questions"]
    first, second = _recalls(questions, args.system), _recalls(questions, args.baseline)
    keys = sorted(set(first) & set(second))
    if not keys:
        raise SystemExit(f"no question answered by both {args.system!r} and {args.baseline!r}")
    diffs = [first[k] - second[k] for k in keys]
    low, high = bootstrap_ci(diffs)
    mean = sum(diffs) / len(diffs)
    wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    print(
        f"{args.system} − {args.baseline}: {100 * mean:+.1f} points (95 % CI {100 * low:+.1f} to {100 * high:+.1f}) "
        f"over {len(keys)} questions; better on {wins}, worse on {losses}"
    )


if __name__ == "__main__":
    main()
