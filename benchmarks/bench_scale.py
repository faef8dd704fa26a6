"""Scale benchmark: how write and read costs grow with one user's size (1,000 to 20,000 pages), on SQLite.

Run from the repository root::

    .venv/bin/python benchmarks/bench_scale.py                       # 1k, 5k, 20k pages (about 15 min)
    .venv/bin/python benchmarks/bench_scale.py --sizes 1000,5000 --dir DIR --reuse
    .venv/bin/python benchmarks/bench_scale.py --build-turns 5000   # add_turn median, mean, p95 of a build
    .venv/bin/python benchmarks/bench_scale.py --postgres postgresql://... --cold-from DIR/user-5000.sqlite

For each size it

1. **builds** a user of that many mid-term pages in an SQLite file (kept in
   ``--dir`` and reused with ``--reuse``). The pages are the synthetic dialogue
   of ``bench_engine.py``, embedded with the offline MiniLM encoder in batches
   and **written in bulk through the repository** (``UserState.put_page`` /
   ``put_segment``, one segment per topic), not turn by turn through
   ``add_turn``: a 20,000-turn ``add_turn`` build would take hours. So the
   pages have no per-page facts (the AMU does not run at build time);
2. measures, each in a **new process** (three times, the median kept), the
   first ``retrieve`` of the user: loaded from its index snapshot (the
   default), and rebuilt from its records (``repository.snapshots = False``,
   what every process paid before the snapshots). The encoder is loaded before
   the clock starts. ``RSS`` is the process's resident memory added by that
   first read: the user's state held in memory;
3. in this process: ``retrieve`` p50 over ``--queries`` queries once the user is
   loaded (warm), then ``--turns`` ``add_turn`` calls on top of the user
   (median and mean, next to the median time to embed the same pages alone).

With ``--postgres URL --cold-from FILE`` it instead copies the user of an SQLite
file (every row: records, snapshot, journal) into that PostgreSQL database and
measures the first ``retrieve`` there in new processes, from the snapshot and
rebuilt (the same numbers as step 2, on PostgreSQL).

It prints one table (and writes it as JSON with ``--json``). Numbers are wall
times on whatever machine runs it: read them as ratios within one run (see
``benchmarks/README.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import SEED, TOPICS, dialogue, queries  # noqa: E402

from langchain_memoryos import MemoryOS  # noqa: E402
from langchain_memoryos.kernel.effects import run_sync  # noqa: E402
from langchain_memoryos.schema import DialoguePage, Segment  # noqa: E402

USER = "u"
THREAD = "chat-0"
BATCH = 256


def rss_mb() -> float:
    """This process's resident memory (MB)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def build(path: Path, pages: int) -> float:
    """Write a user of ``pages`` MTM pages into ``path`` in bulk; the seconds it took."""
    start = time.perf_counter()
    memory = MemoryOS.from_sqlite(path)
    repo = memory.repository
    turns = dialogue(SEED, threads=1, prefix="b")
    with memory, repo.locked(USER):
        state = run_sync(repo.load(USER), memory._services)
        state.snapshot_every = 0  # no journal while building: the first read writes the snapshot
        segments: dict[int, Segment] = {}
        vectors: dict[int, list[np.ndarray]] = {}
        done = 0
        while done < pages:
            batch = [next(turns) for _ in range(min(BATCH, pages - done))]
            embedded = memory.embeddings.embed_documents([f"{t.user_input}\n{t.agent_response}" for t in batch])
            for n, (turn, vec) in enumerate(zip(batch, embedded, strict=True)):
                vector = np.asarray(vec, dtype=np.float32)
                seg = segments.setdefault(
                    turn.topic,
                    Segment(
                        id=f"s_{turn.topic:04d}",
                        summary=TOPICS[turn.topic][0],
                        keywords=list(TOPICS[turn.topic][1][:5]),
                        created_at=turn.timestamp,
                    ),
                )
                page = DialoguePage(
                    id=f"p_{done + n:08d}",
                    user_input=turn.user_input,
                    agent_response=turn.agent_response,
                    timestamp=turn.timestamp,
                    thread_id=THREAD,
                    segment_id=seg.id,
                    keywords=list(TOPICS[turn.topic][1][:3]),
                    metadata={"_seq": done + n + 1, "turn_id": turn.turn_id},
                )
                seg.page_ids.append(page.id)
                seg.last_access = turn.timestamp
                vectors.setdefault(turn.topic, []).append(vector)
                state.put_page(page, vector)
                state.advance_clock(turn.timestamp)
            done += len(batch)
            state.meta["seq"] = done
            state.save_meta()
            run_sync(_flush(state), memory._services)
        for topic, seg in segments.items():
            mean = np.mean(np.stack(vectors[topic]), axis=0)
            state.put_segment(seg, (mean / np.linalg.norm(mean)).astype(np.float32))
        run_sync(_flush(state), memory._services)
    return time.perf_counter() - start


def _flush(state: Any) -> Any:
    from langchain_memoryos.kernel.effects import StoreBatch

    yield StoreBatch(state.take_ops())


def _open(where: str) -> MemoryOS:
    """The memory in an SQLite file, or in PostgreSQL for a ``postgresql://`` URL."""
    return MemoryOS.from_postgres(where) if where.startswith("postgresql://") else MemoryOS.from_sqlite(where)


def copy_user(source: Path, url: str) -> int:
    """Copy every row of the user from an SQLite file into PostgreSQL (replacing the user there); rows copied."""
    from langgraph.store.base import PutOp

    with MemoryOS.from_sqlite(source) as src, _open(url) as dst:
        src_store, dst_store = src.store, dst.store
        dst.delete_user(user_id=USER)
        rows, offset = 0, 0
        while True:
            items = src_store.search(("memoryos", USER), limit=500, offset=offset)
            if not items:
                return rows
            dst_store.batch([PutOp(it.namespace, it.key, it.value, index=False) for it in items])
            rows += len(items)
            offset += len(items)


def cold_child(path: str, snapshots: bool, query: str) -> None:
    """In a new process: the first retrieve of the user (seconds) and the RSS it added (MB), as JSON."""
    memory = _open(path)
    memory.repository.snapshots = snapshots
    memory.embeddings.embed_query("load the encoder before the clock starts")
    before = rss_mb()
    start = time.perf_counter()
    ctx = memory.retrieve(query, user_id=USER, thread_id=THREAD, touch=False)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "rss_mb": rss_mb() - before, "pages": len(ctx.pages)}))
    memory.close()


def cold(path: Path | str, snapshots: bool, query: str, runs: int) -> dict[str, float]:
    """Median over ``runs`` new processes of :func:`cold_child`."""
    out = []
    for _ in range(runs):
        res = subprocess.run(
            [sys.executable, __file__, "--cold-child", str(path), "1" if snapshots else "0", query],
            capture_output=True,
            text=True,
            check=True,
        )
        out.append(json.loads(res.stdout.strip().splitlines()[-1]))
    return {
        "seconds": statistics.median(r["seconds"] for r in out),
        "rss_mb": statistics.median(r["rss_mb"] for r in out),
    }


def measure(path: Path, pages: int, turns: int, n_queries: int, runs: int) -> dict[str, Any]:
    """Every number of one row of the table."""
    qs = queries(SEED + pages, n_queries + 5, list(range(len(TOPICS))))
    row: dict[str, Any] = {"pages": pages}
    # the first read after the build rebuilds the user and writes its snapshot (a touching read flushes)
    with MemoryOS.from_sqlite(path) as memory:
        memory.retrieve(qs[0], user_id=USER, thread_id=THREAD)
    snap = _snapshot_bytes(path)
    row["snapshot_mb"] = snap / 1e6
    row["cold_snapshot"] = cold(path, True, qs[1], runs)
    row["cold_rebuild"] = cold(path, False, qs[1], runs)
    with MemoryOS.from_sqlite(path) as memory:
        for q in qs[:5]:
            memory.retrieve(q, user_id=USER, thread_id=THREAD)
        lat = []
        for q in qs[5:]:
            t = time.perf_counter()
            memory.retrieve(q, user_id=USER, thread_id=THREAD)
            lat.append(time.perf_counter() - t)
        row["retrieve_p50_ms"] = 1e3 * float(np.percentile(lat, 50))
        new = dialogue(SEED + 1, threads=1, prefix="n")
        batch = [next(new) for _ in range(turns)]
        add, embed = [], []
        for turn in batch:
            t = time.perf_counter()
            memory.add_turn(
                turn.user_input,
                turn.agent_response,
                user_id=USER,
                thread_id=THREAD,
                timestamp=turn.timestamp,
                turn_id=turn.turn_id,
            )
            add.append(time.perf_counter() - t)
        for turn in batch:
            t = time.perf_counter()
            memory.embeddings.embed_query(f"{turn.user_input}\n{turn.agent_response}")
            embed.append(time.perf_counter() - t)
        row["add_turn_median_ms"] = 1e3 * statistics.median(add)
        row["add_turn_mean_ms"] = 1e3 * statistics.fmean(add)
        row["embed_median_ms"] = 1e3 * statistics.median(embed)
    return row


def _snapshot_bytes(path: Path) -> int:
    import sqlite3

    with sqlite3.connect(path) as conn:
        found = conn.execute(
            "SELECT length(value) FROM store WHERE prefix = ? AND key = 'state'", (f"memoryos.{USER}.snapshot",)
        ).fetchone()
    return int(found[0]) if found else 0


def build_turns(path: Path, turns: int) -> dict[str, Any]:
    """A user built turn by turn through ``add_turn`` (the heavy tail of slow turns at that size)."""
    times: list[float] = []
    kinds: dict[str, list[float]] = {}
    with MemoryOS.from_sqlite(path) as memory:
        stream = dialogue(SEED, threads=1, prefix="t")
        for _ in range(turns):
            turn = next(stream)
            t = time.perf_counter()
            report = memory.add_turn(
                turn.user_input,
                turn.agent_response,
                user_id=USER,
                thread_id=THREAD,
                timestamp=turn.timestamp,
                turn_id=turn.turn_id,
            )
            times.append(time.perf_counter() - t)
            kind = "+".join(
                k
                for k, hit in (
                    ("segment", report.segments_created),
                    ("evict", report.segments_evicted),
                    ("promote", report.segments_promoted),
                    ("facts", report.events),
                )
                if hit
            )
            kinds.setdefault(kind or "plain", []).append(times[-1])
    ms = 1e3 * np.asarray(times)
    return {
        "turns": turns,
        "median_ms": float(np.median(ms)),
        "mean_ms": float(ms.mean()),
        "p95_ms": float(np.percentile(ms, 95)),
        "mean_over_median": float(ms.mean() / np.median(ms)),
        "by_kind": {
            k: {"turns": len(v), "median_ms": 1e3 * statistics.median(v), "mean_ms": 1e3 * statistics.fmean(v)}
            for k, v in sorted(kinds.items())
        },
    }


def print_table(rows: Sequence[dict[str, Any]]) -> None:
    head = (
        "| pages | cold retrieve, snapshot | cold retrieve, rebuilt | RSS of the user, snapshot / rebuilt "
        "| snapshot row | retrieve p50 warm | add_turn median / mean | embed alone (median) |"
    )
    print(head)
    print("|---:" * 8 + "|")
    for r in rows:
        print(
            f"| {r['pages']:,} | {r['cold_snapshot']['seconds'] * 1e3:.0f} ms "
            f"| {r['cold_rebuild']['seconds'] * 1e3:.0f} ms "
            f"| {r['cold_snapshot']['rss_mb']:.0f} / {r['cold_rebuild']['rss_mb']:.0f} MB | {r['snapshot_mb']:.1f} MB "
            f"| {r['retrieve_p50_ms']:.1f} ms | {r['add_turn_median_ms']:.1f} / {r['add_turn_mean_ms']:.1f} ms "
            f"| {r['embed_median_ms']:.1f} ms |"
        )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,5000,20000", help="pages per user, comma-separated")
    ap.add_argument(
        "--dir",
        default=str(Path(tempfile.gettempdir()) / "memoryos-scale"),
        help="where the users' SQLite files are kept (default: memoryos-scale in the temporary directory)",
    )
    ap.add_argument("--reuse", action="store_true", help="reuse the files of an earlier run (built otherwise)")
    ap.add_argument("--turns", type=int, default=200, help="timed add_turn calls per size")
    ap.add_argument("--queries", type=int, default=50, help="timed warm retrievals per size")
    ap.add_argument("--runs", type=int, default=3, help="new processes per cold measurement")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument(
        "--build-turns",
        type=int,
        help="instead: build a user of this many turns with add_turn and "
        "print the per-turn median, mean and p95 (and by kind of turn)",
    )
    ap.add_argument("--postgres", help="instead: a PostgreSQL URL to measure the cold start of --cold-from there")
    ap.add_argument("--cold-from", help="the SQLite file whose user --postgres copies (e.g. <dir>/user-5000.sqlite)")
    ap.add_argument("--cold-child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.postgres:
        if not args.cold_from:
            ap.error("--postgres needs --cold-from FILE (the user to copy there)")
        copied = copy_user(Path(args.cold_from), args.postgres)
        q = "What trail did I hike last week?"
        with _open(args.postgres) as memory:  # a touching read makes the snapshot current, as in the SQLite runs
            memory.retrieve(q, user_id=USER, thread_id=THREAD)
        result = {
            "rows": copied,
            "cold_snapshot": cold(args.postgres, True, q, args.runs),
            "cold_rebuild": cold(args.postgres, False, q, args.runs),
        }
        print(json.dumps(result, indent=2))
        return 0
    if args.build_turns:
        os.makedirs(args.dir, exist_ok=True)
        path = Path(args.dir) / f"turns-{args.build_turns}.sqlite"
        for suffix in ("", "-wal", "-shm", ".locks"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        print(json.dumps(build_turns(path, args.build_turns), indent=2))
        return 0
    if args.cold_child:
        path, snapshots, query = args.cold_child
        cold_child(path, snapshots == "1", query)
        return 0
    os.makedirs(args.dir, exist_ok=True)
    rows = []
    for pages in (int(x) for x in args.sizes.split(",")):
        built = Path(args.dir) / f"user-{pages}.sqlite"
        path = Path(args.dir) / f"run-{pages}.sqlite"
        if not (args.reuse and built.exists()):
            for p in (built, path):
                for suffix in ("", "-wal", "-shm", ".locks"):
                    Path(f"{p}{suffix}").unlink(missing_ok=True)
            print(f"building {pages:,} pages in bulk ...", file=sys.stderr, flush=True)
            print(f"  built in {build(built, pages):.0f} s", file=sys.stderr, flush=True)
        # every run measures a copy of the built user (the timed turns and reads change it)
        import sqlite3

        for suffix in ("", "-wal", "-shm", ".locks"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        with sqlite3.connect(built) as src, sqlite3.connect(path) as dst:
            src.backup(dst)
        print(f"measuring {pages:,} pages ...", file=sys.stderr, flush=True)
        rows.append(measure(path, pages, args.turns, args.queries, args.runs))
        print_table(rows[-1:])
    print()
    print_table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
