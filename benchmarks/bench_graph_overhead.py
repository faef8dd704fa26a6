"""The cost of running the write path as a LangGraph graph, against calling the same stages directly.

Two memories with the same settings receive the same turns; for each turn,
one runs ``MemoryOS.add_turn`` (the compiled ``write_graph``) and the other
runs the same stages through ``pipeline.write.run_turn`` (a plain loop over
``run_write_stage``), which take the same lock. The per-turn difference is the graph's
overhead; its median is the figure (target: < 2 ms p50). The order of the two
calls alternates per turn, so drift on a noisy machine cancels.

Usage:
    .venv/bin/python benchmarks/bench_graph_overhead.py [--turns 400] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_engine import SEED, dialogue  # noqa: E402

from langchain_memoryos import MemoryOS, MemoryOSConfig  # noqa: E402
from langchain_memoryos.kernel.effects import Step  # noqa: E402
from langchain_memoryos.operations.runtime import Unlocked  # noqa: E402
from langchain_memoryos.pipeline.write import run_turn  # noqa: E402
from langchain_memoryos.schema import WriteReport, ensure_utc  # noqa: E402
from langchain_memoryos.tiers.turn import TurnWrite, embed_turn  # noqa: E402


def direct_turn(memory: MemoryOS, t: TurnWrite) -> Step[WriteReport]:
    """Step: the turn's page embedded, then the turn through the write stages (no graph)."""
    yield from embed_turn(memory.settings, t)
    return (yield from run_turn(memory.repository, memory.settings, t))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    config = MemoryOSConfig()
    via_graph, direct = MemoryOS(config=config), MemoryOS(config=config)
    via_graph.embeddings.embed_query("warm up")
    turns = dialogue(SEED, threads=2)
    graph_ms: list[float] = []
    direct_ms: list[float] = []
    stages: Counter[str] = Counter()
    for i in range(args.turns):
        turn = next(turns)
        kw = {"user_id": "u", "thread_id": turn.thread_id, "timestamp": turn.timestamp, "turn_id": turn.turn_id}

        def run_graph(turn: Any = turn, kw: dict[str, Any] = kw) -> float:
            start = time.perf_counter()
            report = via_graph.add_turn(turn.user_input, turn.agent_response, **kw)
            elapsed = (time.perf_counter() - start) * 1000
            stages["moved"] += len(report.moved_to_mtm)
            stages["promoted"] += len(report.segments_promoted)
            stages["records"] += len(report.events)
            return elapsed

        def run_direct(turn: Any = turn) -> float:
            t = TurnWrite(
                "u",
                turn.thread_id,
                turn.user_input,
                turn.agent_response,
                ensure_utc(turn.timestamp),
                None,
                turn.turn_id,
            )
            step = direct_turn(direct, t)
            start = time.perf_counter()
            direct._sync(Unlocked("u", step))  # the step takes the user's lock itself
            return (time.perf_counter() - start) * 1000

        if i % 2:
            graph_ms.append(run_graph())
            direct_ms.append(run_direct())
        else:
            direct_ms.append(run_direct())
            graph_ms.append(run_graph())
    same = [p.id for p in via_graph.list_pages(user_id="u")] == [p.id for p in direct.list_pages(user_id="u")]
    diffs = [g - d for g, d in zip(graph_ms, direct_ms, strict=True)]
    result = {
        "turns": args.turns,
        "graph_p50_ms": statistics.median(graph_ms),
        "direct_p50_ms": statistics.median(direct_ms),
        "overhead_p50_ms": statistics.median(diffs),
        "overhead_p90_ms": sorted(diffs)[int(len(diffs) * 0.9)],
        "same_memory": same,
        "work": dict(stages),
    }
    print(f"{args.turns} turns ({dict(stages)})")
    print(f"  add_turn via write_graph: p50 {result['graph_p50_ms']:.2f} ms")
    print(f"  same stages, direct loop: p50 {result['direct_p50_ms']:.2f} ms")
    ok = "OK" if result["overhead_p50_ms"] < 2 else "MISSED"
    print(
        f"  graph overhead per turn: p50 {result['overhead_p50_ms']:.3f} ms, p90 {result['overhead_p90_ms']:.3f} ms "
        f"(target p50 < 2 ms: {ok})"
    )
    print(f"  both memories identical: {same}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
