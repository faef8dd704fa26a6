"""AMU write-control benchmark: action accuracy, admission on LoCoMo, redundancy of the kept facts.

Run from the repository root::

    .venv/bin/python benchmarks/bench_amu.py suite                   # the packaged suite
    .venv/bin/python benchmarks/bench_amu.py suite --suite benchmarks/data/write_control_heldout.json --errors
    .venv/bin/python benchmarks/bench_amu.py admission PATH/locomo.json
    .venv/bin/python benchmarks/bench_amu.py kb PATH/locomo.json      # ingest every conversation, check the KB
    .venv/bin/python benchmarks/bench_amu.py all PATH/locomo.json --json amu.json

* ``suite``: every labelled write goes through ``MemoryOS.add_fact`` (fresh
  user per sequence); reports action accuracy, the confusion matrix,
  accuracy per phenomenon and the redundancy of the resulting stores (share
  of same-user fact pairs with cosine >= 0.9).
* ``admission``: a LoCoMo turn is "worth remembering" when a question cites
  it; reports precision / recall / F1 of the turns the write-gate admits,
  beside two floors (admit all; admit turns of >= 25 words).
* ``kb``: ingests each conversation (speaker_a as user, speaker_b as agent,
  turns paired by session) and reports, per conversation, the facts kept,
  the AMU actions and the number of user-fact pairs with cosine >= 0.95.

Everything runs on the offline default (MiniLM + ``HeuristicController``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from langchain_memoryos import MemoryOS
from langchain_memoryos.controllers import HeuristicController
from langchain_memoryos.evaluation import load_write_control_suite, redundancy, run_write_control
from langchain_memoryos.evaluation.admission import admission_check
from langchain_memoryos.evaluation.locomo import ingest_conversation, load_locomo


def run_suite(path: str | None, errors: bool) -> dict[str, Any]:
    suite = load_write_control_suite(path)
    result = run_write_control(MemoryOS(), suite)
    print(f"== write-control suite: {path or 'packaged'} ({len(result.rows)} writes, {len(suite)} sequences)")
    print(f"action accuracy   {result.accuracy:.1%}")
    print(f"redundancy        {result.redundancy:.2%} ({result.redundant_pairs}/{result.total_pairs} pairs >= 0.9)")
    print(result.confusion_table())
    print("accuracy by phenomenon:")
    for key, (ok, n) in sorted(result.accuracy_by("phenomenon").items()):
        print(f"  {key:<22}{ok:>3}/{n:<3}")
    if errors:
        print("errors:")
        for row in result.rows:
            if row["gold"] != row["predicted"]:
                print(
                    f"  [{row['sequence']}:{row['index']}] gold={row['gold']} "
                    f"predicted={row['predicted']}: {row['text']}"
                )
                for action, summary, reason in row["events"]:
                    print(f"      {action}: {summary!r} ({reason})")
    return {
        "writes": len(result.rows),
        "accuracy": result.accuracy,
        "redundancy": result.redundancy,
        "confusion": {g: dict(c) for g, c in result.confusion.items()},
        "by_phenomenon": result.accuracy_by("phenomenon"),
    }


def run_admission(path: str) -> dict[str, Any]:
    scores = admission_check(path, HeuristicController())
    print(f"== LoCoMo admission check: {path}")
    print(f"{'':<14}{'precision':>10}{'recall':>8}{'F1':>7}{'admitted':>10}")
    for name, s in scores.items():
        print(f"{name:<14}{s.precision:>10.3f}{s.recall:>8.3f}{s.f1:>7.3f}{s.tp + s.fp:>10}")
    return {name: {"precision": s.precision, "recall": s.recall, "f1": s.f1} for name, s in scores.items()}


def run_kb(path: str) -> dict[str, Any]:
    print(f"== knowledge base after ingesting every conversation: {path}")
    out: dict[str, Any] = {}
    memory = MemoryOS()
    for sample in load_locomo(path):
        user = str(sample.get("sample_id"))
        start = time.perf_counter()
        pages = ingest_conversation(memory, sample, user_id=user)
        seconds = time.perf_counter() - start
        facts = memory.list_facts(user_id=user)
        actions = Counter(e.action for e in memory.write_log(user_id=user))
        close, pairs, worst = 0, 0, 0.0
        if len(facts) > 1:
            vectors = np.asarray(memory.embeddings.embed_documents([f.summary for f in facts]), dtype=np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12
            close, pairs = redundancy(vectors, 0.95)
            sims = vectors @ vectors.T
            np.fill_diagonal(sims, -1.0)
            worst = float(sims.max())
        print(
            f"{user:<8} pages {pages:>4} in {seconds:5.1f} s | facts {len(facts):>3} | pairs >= 0.95: {close}/{pairs} "
            f"(max cosine {worst:.3f}) | " + ", ".join(f"{a} {n}" for a, n in sorted(actions.items()))
        )
        out[user] = {
            "pages": pages,
            "facts": len(facts),
            "pairs_095": close,
            "pairs": pairs,
            "max_cosine": worst,
            "actions": dict(actions),
            "seconds": seconds,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["suite", "admission", "kb", "all"])
    parser.add_argument("locomo", nargs="?", help="a LoCoMo file (admission, kb, all)")
    parser.add_argument("--suite", help="a write-control suite file (default: the packaged one)")
    parser.add_argument("--errors", action="store_true", help="list the suite's wrong actions")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    if args.what in ("admission", "kb", "all") and not args.locomo:
        parser.error(f"'{args.what}' needs the path of a LoCoMo file")
    report: dict[str, Any] = {}
    if args.what in ("suite", "all"):
        report["suite"] = run_suite(args.suite, args.errors)
        if args.what == "all":
            heldout = Path(__file__).parent / "data" / "write_control_heldout.json"
            report["heldout"] = run_suite(str(heldout), False)
    if args.what in ("admission", "all"):
        report["admission"] = run_admission(args.locomo)
    if args.what in ("kb", "all"):
        report["kb"] = run_kb(args.locomo)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
