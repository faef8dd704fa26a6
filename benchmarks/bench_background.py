"""Reply-path latency of ``add_turn``: synchronous writes against ``write_mode="background"``.

An LLM-backed memory (``MemoryOS(model=...)``) with a scripted model that
answers every judgement after an artificial delay (default 100 ms, a fast
hosted model) ingests the same turns twice: once with synchronous writes and
once with background writes. The figure is the time ``add_turn`` takes on the
reply path (median and p90), and how long the final ``flush()`` waits.

Usage:
    .venv/bin/python benchmarks/bench_background.py [--turns 40] [--delay-ms 100]
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_llm_calls import CountingModel  # noqa: E402

from langchain_memoryos import MemoryOS  # noqa: E402


class DelayedModel(CountingModel):
    """The counting scripted model, slowed down like a real model."""

    delay: float = 0.1

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        time.sleep(self.delay)
        return super()._generate(messages, stop, run_manager, **kwargs)


def run(mode: str, turns: int, delay: float) -> dict[str, float]:
    memory = MemoryOS(model=DelayedModel(delay=delay), write_mode=mode)
    t0 = dt.datetime(2024, 1, 1, 9, tzinfo=dt.UTC)
    times: list[float] = []
    for i in range(turns):
        start = time.perf_counter()
        memory.add_turn(
            f"I tried climbing route number {i} today, it was hard.",
            "Well done!",
            user_id="u",
            timestamp=t0 + dt.timedelta(minutes=i),
        )
        times.append((time.perf_counter() - start) * 1000)
    start = time.perf_counter()
    memory.flush()
    flush_ms = (time.perf_counter() - start) * 1000
    stored = memory.stats(user_id="u").mtm_pages + memory.stats(user_id="u").stm_pages
    memory.close()
    return {
        "p50": statistics.median(times),
        "p90": sorted(times)[int(len(times) * 0.9)],
        "flush": flush_ms,
        "stored": stored,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--delay-ms", type=float, default=100.0)
    args = parser.parse_args()
    sync = run("sync", args.turns, args.delay_ms / 1000)
    background = run("background", args.turns, args.delay_ms / 1000)
    print(f"{args.turns} turns, model delay {args.delay_ms:.0f} ms per call")
    for name, r in (("sync", sync), ("background", background)):
        print(
            f"  {name:10s} add_turn p50 {r['p50']:8.2f} ms  p90 {r['p90']:8.2f} ms  final flush {r['flush']:8.1f} ms"
            f"  turns stored {r['stored']:.0f}"
        )
    print(f"  reply path saved: {sync['p50'] - background['p50']:.1f} ms per turn at the median")
    return 0


if __name__ == "__main__":
    sys.exit(main())
