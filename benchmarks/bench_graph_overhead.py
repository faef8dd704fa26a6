"""The cost of running the write path as a LangGraph graph, against the facade running the same stages directly.

Two memories with the same settings receive the same turns; for each turn,
one runs ``MemoryOS.add_turn`` (the facade: the stages of the table run by
one loop, :func:`~langchain_memoryos.pipeline.write.run_turn`) and the other
invokes the compiled ``MemoryOS.write_graph`` (one node per stage of the same
table), both under the same lock. The per-turn difference is the graph's
overhead; its median is the figure (target: < 2 ms p50). The order of the two
calls alternates per turn, so drift on a noisy machine cancels. At the end the
two memories' exports are compared: the graph stores what the facade stores.

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    config = MemoryOSConfig()
    via_graph, direct = MemoryOS(config=config), MemoryOS(config=config)
    via_graph.embeddings.embed_query("warm up")
    graph = via_graph.write_graph
    turns = dialogue(SEED, threads=2)
    graph_ms: list[float] = []
    direct_ms: list[float] = []
    stages: Counter[str] = Counter()
    for i in range(args.turns):
        turn = next(turns)
        fields: dict[str, Any] = {"user_input": turn.user_input, "agent_response": turn.agent_response}
        fields |= {"timestamp": turn.timestamp, "turn_id": turn.turn_id}
        run = {"configurable": {"user_id": "u", "thread_id": turn.thread_id}}

        def run_graph(fields: dict[str, Any] = fields, run: dict[str, Any] = run) -> float:
            start = time.perf_counter()
            report = graph.invoke(fields, run)["report"]
            elapsed = (time.perf_counter() - start) * 1000
            stages["moved"] += len(report.moved_to_mtm)
            stages["promoted"] += len(report.segments_promoted)
            stages["records"] += len(report.events)
            return elapsed

        def run_direct(fields: dict[str, Any] = fields, thread: str = turn.thread_id) -> float:
            start = time.perf_counter()
            direct.add_turn(**fields, user_id="u", thread_id=thread)
            return (time.perf_counter() - start) * 1000

        if i % 2:
            graph_ms.append(run_graph())
            direct_ms.append(run_direct())
        else:
            direct_ms.append(run_direct())
            graph_ms.append(run_graph())
    same = via_graph.export_user(user_id="u") == direct.export_user(user_id="u")
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
    print(f"  write_graph.invoke: p50 {result['graph_p50_ms']:.2f} ms")
    print(f"  add_turn (the same stages, one loop): p50 {result['direct_p50_ms']:.2f} ms")
    ok = "OK" if result["overhead_p50_ms"] < 2 else "MISSED"
    print(
        f"  graph overhead per turn: p50 {result['overhead_p50_ms']:.3f} ms, p90 {result['overhead_p90_ms']:.3f} ms "
        f"(target p50 < 2 ms: {ok})"
    )
    print(f"  both memories' exports identical: {same}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
