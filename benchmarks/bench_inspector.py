"""Inspector benchmark: how long the inspector's pages of a 20,000-page user take to render, warm.

Run from the repository root::

    .venv/bin/python benchmarks/bench_inspector.py                      # 20,000 pages (builds them: minutes)
    .venv/bin/python benchmarks/bench_inspector.py --dir /tmp/inspector --reuse --rounds 30
    .venv/bin/python benchmarks/bench_inspector.py --pages 2000          # a smaller user

It builds (or, with ``--reuse``, reuses) a user of ``--pages`` mid-term pages in an
SQLite file, as ``bench_scale.py`` builds them (the synthetic dialogue, embedded
with the offline encoder and written in bulk, one segment per topic), adds
``--facts`` facts through ``add_fact`` (so the facts table and the write log
have rows), then serves it as ``memoryos serve`` does (the file opened
read-only, ``create_inspector_app``) and times, through Starlette's test client
(in this process, no network), ``--rounds`` GETs of each page after one untimed
GET of each page. The user is loaded (cold) before, by a ``stats()`` call timed
apart. It prints the median and p95 of each page.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import USER, build  # noqa: E402

from langchain_memoryos import MemoryOS, create_inspector_app  # noqa: E402
from langchain_memoryos.inspector.opening import open_sqlite_read_only  # noqa: E402

FACTS = [
    "I live in {city}.",
    "I'm allergic to {food}.",
    "I work as a {job}.",
    "My sister is called {name}.",
    "I play the {instrument}.",
]
FILL = {
    "city": ["Oslo", "Lyon", "Porto", "Kyoto", "Quito", "Perth", "Cork", "Graz"],
    "food": ["peanuts", "shellfish", "gluten", "kiwi", "sesame", "soy", "eggs", "milk"],
    "job": ["nurse", "pilot", "baker", "teacher", "chemist", "welder", "judge", "farmer"],
    "name": ["Ana", "Lena", "Mira", "Ines", "Rosa", "Vera", "Nina", "Lucia"],
    "instrument": ["cello", "oboe", "harp", "viola", "flute", "tuba", "banjo", "organ"],
}


def add_facts(path: Path, count: int) -> None:
    with MemoryOS.from_sqlite(path) as memory:
        for i in range(count):
            template = FACTS[i % len(FACTS)]
            key = template[template.index("{") + 1 : template.index("}")]
            words = FILL[key]
            memory.add_fact(
                template.format(**{key: words[(i // len(FACTS)) % len(words)]}) + f" (note {i})", user_id=USER
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=20_000)
    parser.add_argument("--facts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/memoryos-bench-inspector"))
    parser.add_argument("--reuse", action="store_true", help="reuse the user built by an earlier run")
    args = parser.parse_args()

    from starlette.testclient import TestClient

    args.dir.mkdir(parents=True, exist_ok=True)
    path = args.dir / f"user-{args.pages}.sqlite"
    if not (args.reuse and path.exists()):
        for stale in args.dir.glob(f"user-{args.pages}.sqlite*"):
            stale.unlink()
        print(f"building {args.pages:,} pages ...", file=sys.stderr, flush=True)
        print(f"  built in {build(path, args.pages):.0f} s", file=sys.stderr, flush=True)
        add_facts(path, args.facts)
    with open_sqlite_read_only(path) as memory:
        start = time.perf_counter()
        stats = memory.stats(user_id=USER)  # loads the user (from its index snapshot): the cold part, timed apart
        loaded = time.perf_counter() - start
        segment = max(memory.list_segments(user_id=USER), key=lambda s: len(s.page_ids))  # the largest
        token = "bench"
        client = TestClient(create_inspector_app(memory, token=token, port=8765), base_url="http://127.0.0.1:8765")
        client.get(f"/?token={token}")
        urls = {
            "users": "/",
            "user": f"/user?u={USER}",
            "user, facts page 5": f"/user?u={USER}&fp=5",
            "segment pages": f"/user/segment?u={USER}&s={segment.id}",
            "write log": f"/user/log?u={USER}",
            "ask": f"/user/ask?u={USER}&q=What+did+I+cook+last+week%3F",
        }
        print(
            f"user: {stats.mtm_pages:,} MTM pages, {stats.segments} segments, {stats.user_facts} facts; "
            f"segment {segment.id}: {len(segment.page_ids):,} pages; loaded (cold) in {loaded:.2f} s; "
            f"{args.rounds} rounds",
            flush=True,
        )
        print("| page | first GET (s) | median warm (s) | p95 warm (s) |")
        print("|---|---|---|---|")
        for name, url in urls.items():
            start = time.perf_counter()
            first = client.get(url)
            cold = time.perf_counter() - start
            assert first.status_code == 200, (url, first.status_code)
            times = []
            for _ in range(args.rounds):
                start = time.perf_counter()
                res = client.get(url)
                times.append(time.perf_counter() - start)
                assert res.status_code == 200
            times.sort()
            p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
            print(f"| {name} | {cold:.3f} | {statistics.median(times):.3f} | {p95:.3f} |", flush=True)


if __name__ == "__main__":
    main()
