"""PostgreSQL at scale: turns/s with 1 and 4 writer processes, and retrieval latency under write load.

Each writer process has its own user (the usual deployment: many app
servers, many users) and adds ``--turns`` turns through ``MemoryOS.from_postgres``;
throughput is the total turns over the wall time of the slowest writer. A
second run puts 4 writers on the *same* user (they take turns on the user's
advisory lock, and each reloads the user's caches after another wrote). Then,
while 4 writers keep writing, a reader process times ``retrieve`` on a user
of its own (p50/p95), against the same reader on an idle server.

Usage:
    MEMORYOS_TEST_POSTGRES=$(scripts/test-postgres.sh) .venv/bin/python benchmarks/bench_postgres.py [--turns 100]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

T0 = dt.datetime(2024, 3, 1, 9, tzinfo=dt.UTC)
TOPICS = ["hiking in the Alps", "baking sourdough", "learning Norwegian", "fixing my bike", "jazz piano practice"]


def write(url: str, user: str, start: int, count: int) -> None:
    from langchain_memoryos import MemoryOS

    with MemoryOS.from_postgres(url, setup=False) as memory:
        memory.embeddings.embed_query("warm up")
        t = time.perf_counter()
        for i in range(start, start + count):
            memory.add_turn(
                f"Note {i}: today I spent time {TOPICS[i % len(TOPICS)]}.",
                f"Thanks for note {i}.",
                user_id=user,
                timestamp=T0 + dt.timedelta(minutes=i),
                turn_id=f"{user}:{i}",
            )
        print(json.dumps({"seconds": time.perf_counter() - t, "turns": count}), flush=True)


def read(url: str, user: str, seconds: float) -> None:
    from langchain_memoryos import MemoryOS

    with MemoryOS.from_postgres(url, setup=False) as memory:
        memory.retrieve("warm up", user_id=user)
        times: list[float] = []
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            t = time.perf_counter()
            memory.retrieve(f"What did I do about {TOPICS[i % len(TOPICS)]}?", user_id=user)
            times.append((time.perf_counter() - t) * 1000)
            i += 1
        print(json.dumps({"times": times}), flush=True)


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True)


def _writers(url: str, users: list[str], turns: int, offsets: list[int]) -> float:
    start = time.perf_counter()
    procs = [_spawn("write", url, u, str(o), str(turns)) for u, o in zip(users, offsets, strict=True)]
    for p in procs:
        p.communicate(timeout=3600)
        if p.returncode != 0:
            raise SystemExit(f"writer failed with {p.returncode}")
    return time.perf_counter() - start


def _wipe(url: str) -> None:
    import psycopg

    from langchain_memoryos import MemoryOS

    MemoryOS.from_postgres(url).close()  # setup
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("TRUNCATE store")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] in ("write", "read"):
        if sys.argv[1] == "write":
            write(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        else:
            read(sys.argv[2], sys.argv[3], float(sys.argv[4]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=100, help="turns per writer process")
    parser.add_argument("--read-seconds", type=float, default=20.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    url = os.environ.get("MEMORYOS_TEST_POSTGRES") or sys.exit("set MEMORYOS_TEST_POSTGRES (scripts/test-postgres.sh)")
    result: dict[str, float] = {}

    _wipe(url)
    one = _writers(url, ["w0"], args.turns, [0])
    result["turns_per_s_1_writer"] = args.turns / one
    _wipe(url)
    four = _writers(url, [f"w{i}" for i in range(4)], args.turns, [0] * 4)
    result["turns_per_s_4_writers_4_users"] = 4 * args.turns / four
    _wipe(url)
    same = _writers(url, ["ana"] * 4, args.turns, [i * args.turns for i in range(4)])
    result["turns_per_s_4_writers_1_user"] = 4 * args.turns / same

    # retrieval: a reader on its own user, idle server vs 4 writers busy
    _wipe(url)
    _writers(url, ["reader"], 200, [0])
    idle = _spawn("read", url, "reader", str(args.read_seconds / 2))
    idle_times = json.loads(idle.communicate()[0].splitlines()[-1])["times"]
    writers = [_spawn("write", url, f"load{i}", "0", str(10 * args.turns)) for i in range(4)]
    time.sleep(3)  # the writers have started
    busy = _spawn("read", url, "reader", str(args.read_seconds))
    busy_times = json.loads(busy.communicate()[0].splitlines()[-1])["times"]
    for p in writers:
        p.kill()
        p.wait()

    def pct(xs: list[float], q: float) -> float:
        return sorted(xs)[min(len(xs) - 1, int(q * len(xs)))]

    result.update(
        retrieve_idle_p50_ms=statistics.median(idle_times),
        retrieve_idle_p95_ms=pct(idle_times, 0.95),
        retrieve_load_p50_ms=statistics.median(busy_times),
        retrieve_load_p95_ms=pct(busy_times, 0.95),
        retrievals_under_load=len(busy_times),
    )
    print(f"writers on separate users: 1 process {result['turns_per_s_1_writer']:.1f} turns/s, ", end="")
    print(f"4 processes {result['turns_per_s_4_writers_4_users']:.1f} turns/s in total")
    same_user = result["turns_per_s_4_writers_1_user"]
    print(f"4 processes on one user (advisory lock, cache reloads): {same_user:.1f} turns/s")
    print(
        f"retrieve (200-turn user): idle p50 {result['retrieve_idle_p50_ms']:.1f} / p95 "
        f"{result['retrieve_idle_p95_ms']:.1f} ms; with 4 writers p50 {result['retrieve_load_p50_ms']:.1f} / p95 "
        f"{result['retrieve_load_p95_ms']:.1f} ms ({len(busy_times)} queries)"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
