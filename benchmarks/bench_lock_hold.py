"""How long a write holds the user's lock, per turn: the offline default against a model that takes 2 s a call.

Both memories are SQLite files and receive the same turns. Every lease of the
user's lock is timed from acquisition to release; a turn's hold time is the sum
of its leases (an optimistic write takes the lock twice: to copy the user, and
to commit). With a model, a write judges on a private copy without the lock
(``langchain_memoryos.store.unit_of_work``), so its hold time must not contain the
model's latency.

Usage:
    .venv/bin/python benchmarks/bench_lock_hold.py [--turns 40] [--delay 2.0] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_engine import SEED, dialogue  # noqa: E402
from bench_llm_calls import CountingModel  # noqa: E402

from langchain_memoryos import MemoryOS, MemoryOSConfig  # noqa: E402
from langchain_memoryos.store.repository import UserLease  # noqa: E402


class SlowModel(CountingModel):
    """The counting scripted model, taking ``delay`` seconds per call."""

    delay: float = 2.0

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        time.sleep(self.delay)
        return super()._generate(*args, **kwargs)


def timed(memory: MemoryOS, holds: list[float]) -> None:
    """Time every lease of the memory's user locks (reads' and writes')."""
    take = memory.repository.lease

    def lease(user: str) -> UserLease:
        inner = take(user)
        start = time.perf_counter()

        def release() -> None:
            holds.append((time.perf_counter() - start) * 1000)
            inner.release()

        return UserLease(release, lambda: memory.repository.invalidate(user))

    memory.repository.lease = lease  # type: ignore[method-assign,assignment]
    memory._services.lease = lease


def run(memory: MemoryOS, turns: int) -> dict[str, Any]:
    holds: list[float] = []
    timed(memory, holds)
    per_turn: list[float] = []
    wall: list[float] = []
    stream = dialogue(SEED)
    for _ in range(turns):
        turn = next(stream)
        holds.clear()
        start = time.perf_counter()
        memory.add_turn(
            turn.user_input, turn.agent_response, user_id="u", thread_id=turn.thread_id, timestamp=turn.timestamp
        )
        wall.append((time.perf_counter() - start) * 1000)
        per_turn.append(sum(holds))
    q = statistics.quantiles(per_turn, n=20)
    return {
        "turns": turns,
        "hold_p50_ms": statistics.median(per_turn),
        "hold_p95_ms": q[18],
        "hold_max_ms": max(per_turn),
        "turn_p50_ms": statistics.median(wall),
        "turn_p95_ms": statistics.quantiles(wall, n=20)[18],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--delay", type=float, default=2.0, help="seconds per model call")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    config = MemoryOSConfig(stm_capacity=3)  # pages leave STM (a model call each) from the fourth turn on
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        offline = MemoryOS.from_sqlite(Path(tmp) / "offline.db", config=config)
        offline.embeddings.embed_query("warm up")
        results["offline"] = run(offline, args.turns)
        model = SlowModel(delay=args.delay)
        slow = MemoryOS.from_sqlite(Path(tmp) / "model.db", config=config, model=model)
        results["model"] = run(slow, args.turns)
        results["model"]["model_calls"] = sum(model.calls.values())
        results["model"]["delay_s"] = args.delay
        offline.close()
        slow.close()
    for name, r in results.items():
        print(
            f"{name:8s} lock held per turn p50 {r['hold_p50_ms']:.2f} ms, p95 {r['hold_p95_ms']:.2f} ms, "
            f"max {r['hold_max_ms']:.2f} ms; add_turn p50 {r['turn_p50_ms']:.0f} ms, p95 {r['turn_p95_ms']:.0f} ms"
        )
    print(f"model calls: {results['model']['model_calls']} at {args.delay} s each")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
