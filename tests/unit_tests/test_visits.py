"""A read's visit count never makes the read wait or fail (store/visits.py): it is written when it can be.

With nothing contending, each read's visits are stored by the read itself (what
another process sees right after it). When the write lock is held by another
SQLite connection, or the store refuses writes, the read answers as it would
have, and its visits are applied with the user's next write or counted read.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import logging
import sqlite3
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import Op, PutOp, Result
from langgraph.store.memory import InMemoryStore

from langchain_memoryos import MemoryContext, MemoryOS, MemoryOSConfig
from tests.conftest import at

USER = "ana"
CONFIG = MemoryOSConfig(stm_capacity=2)
QUERY = "Which instrument do I play, and where did I go hiking?"
TURNS = [
    ("I play the cello in a quartet.", "Lovely instrument."),
    ("We rehearse Haydn every Tuesday evening.", "A classic."),
    ("Last summer I went hiking in the Dolomites.", "Beautiful mountains."),
    ("The via ferrata near Cortina was the best part.", "Sounds thrilling."),
    ("I am baking sourdough this weekend.", "Enjoy the bread."),
    ("My starter is called Bubbles.", "Cute name."),
]
#: a hang guard, far above any honest answer and far below SQLite's 30 s busy_timeout (not a speed limit)
GUARD = 10.0
#: the logger the read's warning goes to
LOGGER = "langchain_memoryos.retrieval.recall"


def build(memory: MemoryOS) -> None:
    """Six turns on thread ``t``: four pages reach MTM (two segments at least)."""
    for i, (said, answer) in enumerate(TURNS):
        memory.add_turn(said, answer, user_id=USER, thread_id="t", timestamp=at(minutes=10 * i))


def segments(memory: MemoryOS) -> dict[str, dict[str, Any]]:
    """The user's segments as ``memory`` has them (n_visit, heat, recency: every field)."""
    return {s.id: s.to_dict() for s in memory.list_segments(user_id=USER)}


def stored_visits(open_memory: Callable[[], MemoryOS]) -> dict[str, int]:
    """What another process sees: each segment's visit count, read through a new memory over the store."""
    with open_memory() as other:
        return {s.id: s.n_visit for s in other.list_segments(user_id=USER)}


@contextmanager
def write_lock_held(path: str) -> Iterator[None]:
    """Another connection holds the SQLite database's write lock (``BEGIN IMMEDIATE``) meanwhile."""
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()


def read_beside_write_lock(path: str, read: Callable[[], MemoryContext]) -> MemoryContext:
    """``read()`` in a thread while another connection holds the write lock; fails (not hangs) past the guard.

    The lock is released and the thread joined before this returns or fails: the
    memory is never closed under a read still inside SQLite.
    """
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        with write_lock_held(path):
            future = pool.submit(read)
            try:
                return future.result(timeout=GUARD)
            except concurrent.futures.TimeoutError:
                pytest.fail(f"retrieve gave no answer within {GUARD} s while another connection held the write lock")
    finally:
        pool.shutdown(wait=True)


async def aread_beside_write_lock(path: str, read: Awaitable[MemoryContext]) -> MemoryContext:
    """:func:`read_beside_write_lock` for a coroutine (never cancelled under SQLite: awaited to its end)."""
    task = asyncio.ensure_future(read)
    with write_lock_held(path):
        done, _ = await asyncio.wait({task}, timeout=GUARD)
    if not done:
        with contextlib.suppress(Exception):
            await task
        pytest.fail(f"aretrieve gave no answer within {GUARD} s while another connection held the write lock")
    return task.result()


def warned(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == logging.WARNING]


# -- nothing contends: the read stores its visits itself -------------------------------------------------------


def test_with_nothing_contending_each_read_stores_its_visits_before_it_returns(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")

    def open_memory() -> MemoryOS:
        return MemoryOS.from_sqlite(path, config=CONFIG)

    reference = MemoryOS(config=CONFIG)  # the same calls over an InMemoryStore
    with open_memory() as memory:
        for m in (memory, reference):
            build(m)
        counts: dict[str, int] = {}
        for _ in range(3):
            for m in (memory, reference):
                ctx = m.retrieve(QUERY, user_id=USER, thread_id="q")
            for hit in ctx.segments:
                counts[hit.segment.id] = counts.get(hit.segment.id, 0) + 1
            seen = stored_visits(open_memory)
            assert {k: v for k, v in seen.items() if v} == counts  # another process sees every visit at once
            assert segments(memory) == segments(reference)
        memory.add_turn("I also sing in a choir.", "Wonderful.", user_id=USER, thread_id="t", timestamp=at(1))
        reference.add_turn("I also sing in a choir.", "Wonderful.", user_id=USER, thread_id="t", timestamp=at(1))
        assert segments(memory) == segments(reference)
    with open_memory() as fresh:
        assert segments(fresh) == segments(reference)


# -- another connection holds the SQLite write lock ------------------------------------------------------------


def test_a_read_answers_while_another_connection_holds_the_write_lock_and_counts_the_visit_later(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, control_path = str(tmp_path / "m.db"), str(tmp_path / "control.db")
    with (
        MemoryOS.from_sqlite(path, config=CONFIG) as memory,
        MemoryOS.from_sqlite(control_path, config=CONFIG) as control,
    ):
        build(memory)
        build(control)
        expected = memory.retrieve(QUERY, user_id=USER, thread_id="q", touch=False).to_prompt()
        before = stored_visits(lambda: MemoryOS.from_sqlite(path, config=CONFIG))
        ctx = read_beside_write_lock(path, lambda: memory.retrieve(QUERY, user_id=USER, thread_id="q"))
        assert ctx.to_prompt() == expected
        hit = [s.segment.id for s in ctx.segments]
        assert hit and all(s.segment.n_visit == before[s.segment.id] + 1 for s in ctx.segments)
        assert any("segment visits not written" in m for m in warned(caplog))
        # a second read while the lock is held again answers too (the first one's visits still wait)
        read_beside_write_lock(path, lambda: memory.retrieve(QUERY, user_id=USER, thread_id="q"))
        assert stored_visits(lambda: MemoryOS.from_sqlite(path, config=CONFIG)) == before  # not written yet
        control.retrieve(QUERY, user_id=USER, thread_id="q")
        control.retrieve(QUERY, user_id=USER, thread_id="q")
        # the lock is free: the next write carries both reads' visits in its batch
        for m in (memory, control):
            m.add_turn("A new thread starts here.", "Hello.", user_id=USER, thread_id="other", timestamp=at(1))
        after = stored_visits(lambda: MemoryOS.from_sqlite(path, config=CONFIG))
        assert all(after[s] == before[s] + 2 for s in hit)
        assert memory.repository.visits.count() == 0
        assert segments(memory) == segments(control)  # as if each read had written its visits itself
        assert memory.check(user_id=USER) == []


async def test_an_async_read_answers_while_the_write_lock_is_held_and_the_next_read_counts_the_visit(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = str(tmp_path / "m.db")
    with MemoryOS.from_sqlite(path, config=CONFIG) as memory:
        build(memory)
        expected = (await memory.aretrieve(QUERY, user_id=USER, thread_id="q", touch=False)).to_prompt()
        before = stored_visits(lambda: MemoryOS.from_sqlite(path, config=CONFIG))
        ctx = await aread_beside_write_lock(path, memory.aretrieve(QUERY, user_id=USER, thread_id="q"))
        assert ctx.to_prompt() == expected and warned(caplog)
        hit = [s.segment.id for s in ctx.segments]
        await memory.aretrieve(QUERY, user_id=USER, thread_id="q")  # the next counted read writes both
        after = stored_visits(lambda: MemoryOS.from_sqlite(path, config=CONFIG))
        assert hit and all(after[s] == before[s] + 2 for s in hit)
        assert memory.repository.visits.count() == 0


# -- a store that refuses writes (a full disk) -----------------------------------------------------------------


class RefusingStore(InMemoryStore):
    """An ``InMemoryStore`` whose writes fail while ``refuse`` is set, as on a full disk (fault injection)."""

    refuse = False

    def _check(self, ops: Iterable[Op]) -> list[Op]:
        ops = list(ops)
        if self.refuse and any(isinstance(op, PutOp) for op in ops):
            raise OSError(errno.ENOSPC, "No space left on device")
        return ops

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return super().batch(self._check(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await super().abatch(self._check(ops))


def test_a_read_answers_when_the_store_refuses_writes_and_its_visits_wait_for_the_next_write(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = RefusingStore()
    memory = MemoryOS(store, config=CONFIG)
    build(memory)
    expected = memory.retrieve(QUERY, user_id=USER, thread_id="q", touch=False).to_prompt()
    before = {s.id: s.n_visit for s in memory.list_segments(user_id=USER)}
    store.refuse = True
    ctx = memory.retrieve(QUERY, user_id=USER, thread_id="q")
    assert ctx.to_prompt() == expected
    assert any("No space left on device" in m for m in warned(caplog))
    hit = [s.segment.id for s in ctx.segments]
    with pytest.raises(OSError):  # a write still fails, as it must: it is not stored
        memory.add_turn("Nothing is stored now.", "Sorry.", user_id=USER, thread_id="t", timestamp=at(1))
    asyncio.run(memory.aretrieve(QUERY, user_id=USER, thread_id="q"))  # the async read answers too
    assert {s.id: s.n_visit for s in MemoryOS(store, config=CONFIG).list_segments(user_id=USER)} == before
    store.refuse = False
    memory.add_turn("The disk has room again.", "Good.", user_id=USER, thread_id="other", timestamp=at(1))
    stored = {s.id: s.n_visit for s in MemoryOS(store, config=CONFIG).list_segments(user_id=USER)}
    assert hit and all(stored[s] == before[s] + 2 for s in hit)  # both reads' visits, in that write's batch
    assert memory.repository.visits.count() == 0 and memory.check(user_id=USER) == []


def test_a_deleted_users_pending_visits_are_never_applied_to_a_new_user_of_that_id() -> None:
    store = RefusingStore()
    memory = MemoryOS(store, config=CONFIG)
    build(memory)
    store.refuse = True
    memory.retrieve(QUERY, user_id=USER, thread_id="q")
    assert memory.repository.visits.count(USER) > 0
    store.refuse = False
    memory.delete_user(user_id=USER)
    assert memory.repository.visits.count(USER) == 0
    build(memory)  # the same turns again: the same segment ids
    assert all(s.n_visit == 0 for s in MemoryOS(store, config=CONFIG).list_segments(user_id=USER))
