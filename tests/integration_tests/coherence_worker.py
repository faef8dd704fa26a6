"""A process over a store it builds itself, for test_coherence: ``python coherence_worker.py BACKEND TARGET USER``.

BACKEND is ``sqlite`` (TARGET a file, opened with a hand-built ``SqliteStore``, not ``MemoryOS.from_sqlite``)
or ``postgres`` (TARGET a URL, a hand-built ``PostgresStore``). It reads commands from stdin, one per line:

* ``turn I``: ``add_turn`` the user's turn I (dated I minutes after T0), then print ``ok I``;
* ``burst START COUNT``: turns START … START+COUNT-1 as fast as it can, then print ``ok burst``;
* ``quit`` (or the end of stdin): exit.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import sys
from contextlib import ExitStack
from typing import Any

from langchain_memoryos import MemoryOS

T0 = dt.datetime(2024, 3, 1, 9, tzinfo=dt.UTC)


def turn(memory: MemoryOS, user: str, i: int) -> None:
    memory.add_turn(
        f"Turn {i}: I talk about topic number {i}.",
        f"Reply {i}.",
        user_id=user,
        thread_id="t",
        timestamp=T0 + dt.timedelta(minutes=i),
        turn_id=f"{user}:{i}",
    )


def open_store(backend: str, target: str, stack: ExitStack) -> Any:
    if backend == "sqlite":
        from langgraph.store.sqlite import SqliteStore

        conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None, timeout=60)
        stack.callback(conn.close)
        return SqliteStore(conn)
    from langgraph.store.postgres import PostgresStore

    return stack.enter_context(PostgresStore.from_conn_string(target))


def main(backend: str, target: str, user: str) -> int:
    with ExitStack() as stack:
        memory = MemoryOS(open_store(backend, target, stack))
        stack.callback(memory.close)
        for line in sys.stdin:
            words = line.split()
            if not words or words[0] == "quit":
                break
            if words[0] == "turn":
                turn(memory, user, int(words[1]))
                print(f"ok {words[1]}", flush=True)
            elif words[0] == "burst":
                start, count = int(words[1]), int(words[2])
                for i in range(start, start + count):
                    turn(memory, user, i)
                print("ok burst", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
