"""One store, many memories and processes: stores built by the application, passed in directly.

Each test interleaves the turns of one user between memories that know nothing of each other (other
objects, other processes), then the user must be consistent (``check() == []``), hold every turn exactly
once, and its newest STM page must be the newest turn. Real SQLite files, the real PostgreSQL test server.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore

from langchain_memoryos import MemoryOS
from langchain_memoryos.store.postgres import AdvisoryLocks
from tests.conftest import at, postgres_url, wipe_postgres

WORKER = Path(__file__).with_name("coherence_worker.py")
ROOT = Path(__file__).resolve().parents[2]


def _turn_ids(memory: MemoryOS, user: str) -> list[str]:
    pages = memory.list_pages(user_id=user) + memory.get_stm(user_id=user, thread_id="t")
    return [str(p.metadata.get("turn_id")) for p in pages]


def assert_one_user(memory: MemoryOS, user: str, turns: list[int], newest: int) -> None:
    assert memory.check(user_id=user) == []
    assert sorted(_turn_ids(memory, user)) == sorted(f"{user}:{i}" for i in turns)  # every turn, once
    stm = memory.get_stm(user_id=user, thread_id="t")
    assert len(stm) == memory.config.stm_capacity
    assert stm[-1].user_input.startswith(f"Turn {newest}:")


class Worker:
    """A worker process (coherence_worker.py), killed if it does not answer within the timeout."""

    def __init__(self, backend: str, target: str, user: str, timeout: float = 600) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), backend, target, user],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self._guard = threading.Timer(timeout, self.proc.kill)  # a hung worker fails the test instead
        self._guard.start()

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def answer(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line:
            self.proc.wait(30)
            raise AssertionError(f"the worker ended: {self.proc.stderr.read()[-3000:] if self.proc.stderr else ''}")
        return line

    def close(self) -> None:
        if self.proc.poll() is None:
            self.send("quit")
            self.proc.wait(60)
        self._guard.cancel()
        assert self.proc.returncode == 0, self.proc.stderr.read()[-3000:] if self.proc.stderr else ""


@pytest.fixture
def pg() -> str:
    url = postgres_url()
    wipe_postgres(url)
    with PostgresStore.from_conn_string(url) as store:
        store.setup()
    return url


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    if request.param == "postgres":
        yield "postgres", request.getfixturevalue("pg")
        return
    path = str(tmp_path / "m.db")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")  # as an application may set it: readers never wait for the writer
    SqliteStore(conn).setup()
    conn.close()
    yield "sqlite", path


def _open(backend: str, target: str, stack: ExitStack) -> Any:
    if backend == "sqlite":
        conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
        stack.callback(conn.close)
        return SqliteStore(conn)
    return stack.enter_context(PostgresStore.from_conn_string(target))


def test_two_processes_over_stores_they_build_themselves_are_one_memory(target: tuple[str, str]) -> None:
    backend, where = target
    workers = [Worker(backend, where, "ana"), Worker(backend, where, "ana")]
    try:
        # both at once: the user's lock between processes makes them take turns
        workers[0].send("burst 0 12")
        workers[1].send("burst 100 12")
        assert [w.answer() for w in workers] == ["ok burst", "ok burst"]
        # one after the other: each must see what the other just wrote
        for i in range(200, 220):
            worker = workers[i % 2]
            worker.send(f"turn {i}")
            assert worker.answer() == f"ok {i}"
    finally:
        for w in workers:
            w.close()
    with ExitStack() as stack:
        memory = MemoryOS(_open(backend, where, stack))
        stack.callback(memory.close)
        assert_one_user(memory, "ana", [*range(12), *range(100, 112), *range(200, 220)], newest=219)


def alternate(memories: list[MemoryOS], turns: int, user: str = "ana") -> None:
    for i in range(turns):
        memories[i % len(memories)].add_turn(
            f"Turn {i}: I talk about topic number {i}.",
            f"Reply {i}.",
            user_id=user,
            thread_id="t",
            timestamp=at(0, i),
            turn_id=f"{user}:{i}",
        )


def test_two_memories_over_one_postgres_store_passed_directly(pg: str) -> None:
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    with ExitStack() as stack:
        store = stack.enter_context(PostgresStore.from_conn_string(pg))  # one connection
        pool = ConnectionPool(
            pg,
            min_size=1,
            max_size=4,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
            open=True,
        )
        stack.callback(pool.close)
        pooled = PostgresStore(pool)  # type: ignore[arg-type]  # another store object, over a pool
        memories = [MemoryOS(store), MemoryOS(store), MemoryOS(pooled)]
        for memory in memories:
            stack.callback(memory.close)
        alternate(memories, 21)
        for memory in memories:
            assert_one_user(memory, "ana", list(range(21)), newest=20)
            assert isinstance(memory.repository._process_locks, AdvisoryLocks)  # as from_postgres's
