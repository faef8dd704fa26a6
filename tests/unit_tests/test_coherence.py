"""One store, many memories: every MemoryOS over one store sees one memory, whatever store it is given.

Two memories over one store alternate the turns of one user (what two nodes, a tool and the middleware, or
two requests of a LangGraph server do), then the user must be consistent (``check() == []``) and its newest
STM page the newest turn. Real stores: InMemoryStore, SqliteStore files passed in directly, and a store of
the caller's own (a BaseStore that LangGraph does not ship).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from langgraph.store.base import BaseStore, Op, Result
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langchain_memoryos import MemoryOS, MemoryOSConfig
from tests.conftest import at

TURNS = 20


def _sqlite(path: Path) -> SqliteStore:
    """An SqliteStore built by hand, as an application does (no MemoryOS.from_sqlite)."""
    store = SqliteStore(sqlite3.connect(path, check_same_thread=False, isolation_level=None))
    store.setup()
    return store


def alternate(memories: list[MemoryOS], turns: int = TURNS, *, user: str = "u") -> None:
    """Turn i of one user written by memory i mod n."""
    for i in range(turns):
        memories[i % len(memories)].add_turn(
            f"Turn {i}: I talk about topic number {i}.", f"Reply {i}.", user_id=user, thread_id="t", timestamp=at(0, i)
        )


def assert_one_memory(memories: list[MemoryOS], turns: int = TURNS, *, user: str = "u") -> None:
    """Every memory sees the same consistent user, whose newest STM page is the newest turn."""
    for memory in memories:
        assert memory.check(user_id=user) == []
        stm = memory.get_stm(user_id=user, thread_id="t")
        assert stm[-1].user_input.startswith(f"Turn {turns - 1}:")
        assert len(stm) == memory.config.stm_capacity
        assert len(stm) + len(memory.list_pages(user_id=user)) == turns


def test_two_memories_over_one_in_memory_store_behave_as_one() -> None:
    store = InMemoryStore()
    memories = [MemoryOS(store), MemoryOS(store)]
    alternate(memories)
    assert_one_memory(memories)


def test_two_memories_over_one_in_memory_store_take_turns_between_threads() -> None:
    store = InMemoryStore()
    memories = [MemoryOS(store), MemoryOS(store)]
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(10):
                memories[n].add_turn(f"Writer {n} says {i}.", "Ok.", user_id="u", thread_id="t", timestamp=at(0, i))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=write, args=(n,)) for n in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(300)
    assert not errors and not any(w.is_alive() for w in workers)
    for memory in memories:
        assert memory.check(user_id="u") == []
        pages = memory.get_stm(user_id="u", thread_id="t") + memory.list_pages(user_id="u")
        written = sorted(f"Writer {n} says {i}." for n in range(2) for i in range(10))
        assert sorted(p.user_input for p in pages) == written


def test_scopes_over_one_in_memory_store_stay_apart() -> None:
    store = InMemoryStore()
    plain, again = MemoryOS(store), MemoryOS(store)
    coach, app = MemoryOS(store, agent_id="coach"), MemoryOS(store, namespace_prefix=("app",))
    plain.add_turn("I play chess.", "Nice!", user_id="u", thread_id="t")
    coach.add_turn("I run marathons.", "Great!", user_id="u", thread_id="t")
    app.add_turn("I keep bees.", "Lovely.", user_id="u", thread_id="t")
    assert [p.user_input for p in again.get_stm(user_id="u", thread_id="t")] == ["I play chess."]
    assert [p.user_input for p in again.for_agent("coach").get_stm(user_id="u", thread_id="t")] == ["I run marathons."]
    assert [p.user_input for p in MemoryOS(store, namespace_prefix=("app",)).get_stm(user_id="u", thread_id="t")] == [
        "I keep bees."
    ]


def test_two_memories_over_one_sqlite_store_passed_directly(tmp_path: Path) -> None:
    store = _sqlite(tmp_path / "m.db")
    memories = [MemoryOS(store), MemoryOS(store)]
    try:
        alternate(memories)
        assert_one_memory(memories)
        assert (tmp_path / "m.db.locks").exists()  # the locks between processes, as from_sqlite's
    finally:
        for memory in memories:
            memory.close()
        store.conn.close()


def test_two_sqlite_stores_over_one_file_are_one_memory(tmp_path: Path) -> None:
    """Two store objects (two connections) over one file, as two processes have: the other's writes are seen."""
    stores = [_sqlite(tmp_path / "m.db"), _sqlite(tmp_path / "m.db")]
    memories = [MemoryOS(stores[0]), MemoryOS(stores[1]), MemoryOS.from_sqlite(tmp_path / "m.db")]
    try:
        alternate(memories, 21)
        assert_one_memory(memories, 21)
    finally:
        for memory in memories:
            memory.close()
        for store in stores:
            store.conn.close()


def test_threads_writing_one_user_through_two_sqlite_stores_take_turns(tmp_path: Path) -> None:
    """One process, two connections to one file: the per-user file lock serializes the threads too."""
    stores = [_sqlite(tmp_path / "m.db"), _sqlite(tmp_path / "m.db")]
    for store in stores:
        store.conn.execute("PRAGMA busy_timeout=30000")
    memories = [MemoryOS(store, config=MemoryOSConfig(stm_capacity=3)) for store in stores]
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(8):
                memories[n].add_turn(f"Writer {n} says {i}.", "Ok.", user_id="u", thread_id="t", timestamp=at(0, i))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=write, args=(n,)) for n in range(2)]
    try:
        for w in workers:
            w.start()
        for w in workers:
            w.join(300)
        assert not errors and not any(w.is_alive() for w in workers)
        assert memories[0].check(user_id="u") == []
        pages = memories[1].get_stm(user_id="u", thread_id="t") + memories[1].list_pages(user_id="u")
        written = sorted(f"Writer {n} says {i}." for n in range(2) for i in range(8))
        assert sorted(p.user_input for p in pages) == written
    finally:
        for memory in memories:
            memory.close()
        for store in stores:
            store.conn.close()


class OwnStore(BaseStore):
    """A store of the caller's own (it keeps its items in an InMemoryStore, but MemoryOS cannot know that)."""

    def __init__(self) -> None:
        self.inner = InMemoryStore()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return self.inner.batch(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await self.inner.abatch(ops)


@pytest.fixture
def memoryos_warnings(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.WARNING, logger="langchain_memoryos.memory")
    yield caplog


def test_any_other_store_checks_versions_and_warns_once(
    memoryos_warnings: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_memoryos import backends

    monkeypatch.setattr(backends, "_WARNED", set())  # as in a new process
    store = OwnStore()
    memories = [MemoryOS(store), MemoryOS(store), MemoryOS(OwnStore())]
    alternate(memories[:2])
    assert_one_memory(memories[:2])
    warned = [r.getMessage() for r in memoryos_warnings.records if "OwnStore" in r.getMessage()]
    assert len(warned) == 1  # once per process and store type
    assert "one writer process per user" in warned[0]


def test_the_coherence_of_each_store_kind_is_the_documented_one(tmp_path: Path) -> None:
    from langchain_memoryos.backends import coherence

    file_store, memory_store = _sqlite(tmp_path / "m.db"), _sqlite(Path(":memory:"))
    try:
        found = {
            "in-memory": coherence(InMemoryStore()),
            "sqlite file": coherence(file_store),
            "sqlite :memory:": coherence(memory_store),
            "own": coherence(OwnStore()),
        }
        kinds = {name: (c.kind, c.shared, c.locks is not None) for name, c in found.items()}
        assert kinds == {
            "in-memory": ("memory", False, False),
            "sqlite file": ("sqlite", True, True),
            "sqlite :memory:": ("memory", False, False),
            "own": ("other", True, False),
        }
        for c in found.values():
            for close in c.closers:
                close()
    finally:
        file_store.conn.close()
        memory_store.conn.close()
