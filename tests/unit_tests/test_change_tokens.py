"""Change tokens (store/changes.py): a cached user skips the read of its version stamp only when nothing was written.

Real SQLite files, two connections (as two processes would have) or one store object shared by two memories.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langchain_memoryos import MemoryOS
from langchain_memoryos.store.changes import change_token, count_write
from langchain_memoryos.store.filelocks import FileLocks


def _store(path: Path) -> SqliteStore:
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    store = SqliteStore(conn)
    store.setup()
    return store


@pytest.fixture
def two_connections(tmp_path: Path) -> Iterator[tuple[SqliteStore, SqliteStore]]:
    a, b = _store(tmp_path / "m.sqlite"), _store(tmp_path / "m.sqlite")
    yield a, b
    a.conn.close()
    b.conn.close()


def _stamp_reads(store: SqliteStore) -> list[str]:
    """The SQL statements that read a version stamp, as the connection runs them."""
    seen: list[str] = []
    store.conn.set_trace_callback(lambda sql: seen.append(sql) if "SELECT" in sql and ".version" in sql else None)
    return seen


def test_tokens_change_with_any_write_and_only_then(two_connections: tuple[SqliteStore, SqliteStore]) -> None:
    a, b = two_connections
    first = change_token(a)
    assert first is not None and change_token(a) == first
    b.put(("x",), "k", {"v": 1})  # another connection commits: SQLite's data_version moves
    second = change_token(a)
    assert second != first and change_token(a) == second
    count_write(a)  # a write through this store object is counted before it is made
    assert change_token(a) != second
    assert change_token(InMemoryStore()) is None


def test_a_busy_connection_gives_no_token_instead_of_blocking(two_connections: tuple[SqliteStore, SqliteStore]) -> None:
    a, _ = two_connections
    with a.lock:
        got: list[object] = []
        worker = threading.Thread(target=lambda: got.append(change_token(a, wait=False)))
        worker.start()
        worker.join(5)
    assert got == [None]


def test_one_memory_reads_its_stamp_once_then_sees_another_connections_write(
    tmp_path: Path, two_connections: tuple[SqliteStore, SqliteStore]
) -> None:
    a, b = two_connections
    locks_a, locks_b = FileLocks(f"{tmp_path}/m.sqlite.locks"), FileLocks(f"{tmp_path}/m.sqlite.locks")
    mine, theirs = MemoryOS(a, process_locks=locks_a), MemoryOS(b, process_locks=locks_b)
    try:
        reads = _stamp_reads(a)
        mine.add_turn("I live in Oslo.", "Nice!", user_id="u", thread_id="t")
        first = len(reads)
        for n in range(4):
            mine.add_turn(f"Turn {n}.", "Ok.", user_id="u", thread_id="t")
            mine.retrieve("Where do I live?", user_id="u", thread_id="t")
        assert len(reads) == first  # its own writes and reads: the cached user stayed known current
        theirs.add_turn("I moved to Bergen.", "Big change!", user_id="u", thread_id="t")
        stm = [p.user_input for p in mine.get_stm(user_id="u", thread_id="t")]
        assert "I moved to Bergen." in stm and len(reads) > first  # the other connection's write was seen
    finally:
        locks_a.close()
        locks_b.close()


def test_two_memories_on_one_store_object_see_each_others_writes(tmp_path: Path) -> None:
    store = _store(tmp_path / "m.sqlite")
    locks_a, locks_b = FileLocks(f"{tmp_path}/m.sqlite.locks"), FileLocks(f"{tmp_path}/m.sqlite.locks")
    one, two = MemoryOS(store, process_locks=locks_a), MemoryOS(store, process_locks=locks_b)
    try:
        one.add_turn("I play the cello.", "Lovely.", user_id="u", thread_id="t")
        assert [p.user_input for p in two.get_stm(user_id="u", thread_id="t")] == ["I play the cello."]
        two.add_turn("I also sing.", "Great.", user_id="u", thread_id="t")  # same connection: data_version stays
        assert [p.user_input for p in one.get_stm(user_id="u", thread_id="t")] == ["I play the cello.", "I also sing."]
    finally:
        locks_a.close()
        locks_b.close()
        store.conn.close()


def test_async_writes_keep_the_user_known_current_too(tmp_path: Path) -> None:
    import asyncio

    store = _store(tmp_path / "m.sqlite")
    locks = FileLocks(f"{tmp_path}/m.sqlite.locks")
    memory = MemoryOS(store, process_locks=locks)

    async def run() -> None:
        await memory.aadd_turn("I live in Oslo.", "Nice!", user_id="u", thread_id="t")
        reads = _stamp_reads(store)
        for n in range(3):
            await memory.aadd_turn(f"Turn {n}.", "Ok.", user_id="u", thread_id="t")
        assert reads == []
        other, other_locks = _store(tmp_path / "m.sqlite"), FileLocks(f"{tmp_path}/m.sqlite.locks")
        MemoryOS(other, process_locks=other_locks).add_turn(
            "I moved to Bergen.", "Big change!", user_id="u", thread_id="t"
        )
        other_locks.close()
        other.conn.close()
        assert "I moved to Bergen." in [p.user_input for p in await memory.aget_stm(user_id="u", thread_id="t")]

    try:
        asyncio.run(run())
    finally:
        locks.close()
        store.conn.close()
