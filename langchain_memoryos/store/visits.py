"""Segment visits: counted by every read, written without making the read wait for the store.

A retrieval's only write is its *visit*: the segments it hit get
``N_visit + 1``, fresh recency and new heat (the paper's segment heat). The
read writes it at its end, in one store batch that does not wait (:func:`batch_without_waiting`:
on SQLite it fails at once when another connection holds the database's write
lock, instead of waiting ``busy_timeout``). When nothing contends, that batch
is written there and then, so heat, promotions, snapshots and the stored rows
are what they always were, and reproducible.

When it cannot be written (the write lock is held elsewhere, a full disk, a
store that refuses writes) the read still returns its context: the failure is
logged at warning, the user's cached state is dropped (it is reloaded from the
store), and the visits wait in the memory's :class:`PendingVisits`, in order.
They are applied — each ``N_visit + 1`` on the segment as it then is, recency
never moved back, heat at the read's clock — with the next flush of that user
in this memory: the next write (in that write's own batch, after its changes)
or the next counted read. A segment that has gone meanwhile is skipped.

What other readers see: pending visits live in this process only. Until they
are applied, another process (or another ``MemoryOS`` object with its own
repository) sees the segments without them, and so does this memory's own
``list_segments()`` / ``stats()``; visits still pending when the process ends
are lost (each failure to write them was logged). A deleted user's pending
visits are dropped. Under contention the order of events changes (a write's
decisions — the coldest segment, the hot ones — are made before the pending
visits are applied), so heat and promotions are reproducible only for runs in
which every visit was written by its read, which is every run where nothing
else holds the store's write lock.

Example:
    >>> from langchain_memoryos import MemoryOSConfig
    >>> pending, config = PendingVisits(), MemoryOSConfig()
    >>> pending.add("ana", [Visit("s_1", None, config)]); pending.add("ana", [Visit("s_2", None, config)])
    >>> pending.count("ana"), [v.segment_id for v in pending.take("ana")], pending.count("ana")
    (2, ['s_1', 's_2'], 0)
"""

from __future__ import annotations

import datetime as _dt
import logging
import sqlite3
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from langgraph.store.base import BaseStore, Op, Result

from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.schema import Segment
from langchain_memoryos.scoring import segment_heat

__all__ = ["PendingVisits", "Visit", "VisitedState", "apply_visits", "batch_without_waiting", "sqlite_twin"]

logger = logging.getLogger(__name__)

#: How long a write that must not wait waits for *this process's* other use of an SQLite connection (seconds).
#: Those batches are short; one that itself waits for another connection's lock is not waited for past this.
CONNECTION_WAIT = 1.0


@dataclass(frozen=True)
class Visit:
    """One read's hit on one segment.

    Attributes:
        segment_id: the segment hit.
        at: the user's conversation clock at the read (``None``: no clock yet).
        config: the heat weights and time constant (the memory's config).

    Example:
        >>> Visit("s_1", None, MemoryOSConfig()).segment_id
        's_1'
    """

    segment_id: str
    at: _dt.datetime | None
    config: MemoryOSConfig = field(repr=False)


class PendingVisits:
    """The visits that could not be written yet, per user, oldest first (one per memory's repository).

    Shared by every state of the repository's users (a writer's private copy
    included: copying it returns the same object).

    Example:
        >>> import copy
        >>> config = MemoryOSConfig()
        >>> pending = PendingVisits(); pending.add("u", [Visit("s_2", None, config)])
        >>> pending.put_back("u", [Visit("s_1", None, config)])  # visits taken and not written go first again
        >>> copy.deepcopy(pending) is pending, [v.segment_id for v in pending.take("u")]
        (True, ['s_1', 's_2'])
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queued: dict[str, list[Visit]] = {}

    def add(self, user_id: str, visits: Iterable[Visit]) -> None:
        """Queue visits after the user's others.

        Example:
            >>> pending = PendingVisits(); pending.add("u", []); pending.count()
            0
        """
        visits = list(visits)
        if visits:
            with self._lock:
                self._queued.setdefault(user_id, []).extend(visits)

    def put_back(self, user_id: str, visits: Sequence[Visit]) -> None:
        """Queue visits (taken, then not written) before the user's others.

        Example:
            >>> pending = PendingVisits(); pending.put_back("u", [Visit("s", None, MemoryOSConfig())])
            >>> pending.count("u")
            1
        """
        if visits:
            with self._lock:
                self._queued[user_id] = [*visits, *self._queued.get(user_id, [])]

    def take(self, user_id: str) -> list[Visit]:
        """Take (remove and return) the user's pending visits, oldest first.

        Example:
            >>> PendingVisits().take("u")
            []
        """
        with self._lock:
            return self._queued.pop(user_id, [])

    def drop(self, user_id: str) -> int:
        """Forget the user's pending visits (the user was deleted); how many there were.

        Example:
            >>> pending = PendingVisits(); pending.add("u", [Visit("s", None, MemoryOSConfig())])
            >>> pending.drop("u"), pending.count()
            (1, 0)
        """
        return len(self.take(user_id))

    def count(self, user_id: str | None = None) -> int:
        """How many visits are pending (for one user, or for all).

        Example:
            >>> visit = Visit("s", None, MemoryOSConfig())
            >>> pending = PendingVisits(); pending.add("a", [visit, visit]); pending.add("b", [visit])
            >>> pending.count("a"), pending.count()
            (2, 3)
        """
        with self._lock:
            if user_id is not None:
                return len(self._queued.get(user_id, []))
            return sum(map(len, self._queued.values()))

    def __deepcopy__(self, memo: dict[int, Any]) -> PendingVisits:
        return self


class VisitedState(Protocol):
    """What visits are counted on: a user's :class:`~langchain_memoryos.store.state.UserState`.

    Example:
        >>> from langchain_memoryos.store.state import UserState
        >>> state: VisitedState = UserState(user_id="u", label="u", dimension=2)
        >>> state.segments
        {}
    """

    user_id: str
    segments: dict[str, Segment]

    def put_segment(self, segment: Segment) -> None:
        """Store the segment (its rewrite buffered)."""
        ...


def apply_visits(state: VisitedState, visits: Iterable[Visit]) -> None:
    """Count visits on the state's segments (``N_visit + 1``, recency, heat) and buffer their rewrites.

    Recency is never moved back (a late visit keeps a newer ``last_access``);
    heat is computed at the visit's clock, as the read computed it (at that
    newer access, for a late visit). A visit to a segment that is no longer
    there is skipped.

    Example:
        >>> import datetime as dt, numpy as np
        >>> from langchain_memoryos.schema import Segment
        >>> from langchain_memoryos.store.state import UserState
        >>> s = UserState(user_id="u", label="u", dimension=2)
        >>> s.put_segment(Segment(id="s_1"), np.ones(2, dtype=np.float32)); _ = s.take_ops()
        >>> at = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
        >>> config = MemoryOSConfig()
        >>> apply_visits(s, [Visit("s_1", at, config), Visit("s_1", at, config), Visit("gone", at, config)])
        >>> s.segments["s_1"].n_visit, s.segments["s_1"].last_access == at, s.segments["s_1"].heat, len(s.pending)
        (2, True, 3.0, 2)
    """
    for visit in visits:
        seg = state.segments.get(visit.segment_id)
        if seg is None:
            logger.debug("user %r: visit to segment %s skipped (it is gone)", state.user_id, visit.segment_id)
            continue
        seg.n_visit += 1
        if visit.at is not None and visit.at > seg.last_access:
            seg.last_access = visit.at
        # at the visit's clock (as the read computed it), or at a newer access a late visit found
        seg.heat = segment_heat(seg, None if visit.at is None else seg.last_access, visit.config)
        state.put_segment(seg)


# -- a batch that does not wait for another connection's write lock ------------------------------------------------

_TWINS: weakref.WeakKeyDictionary[Any, BaseStore] = weakref.WeakKeyDictionary()
_TWINS_LOCK = threading.Lock()


def _twin_class() -> type[Any]:
    """``SqliteStore`` whose transactions start with ``BEGIN IMMEDIATE`` and are rolled back whole on any error."""
    from langgraph.store.sqlite import SqliteStore

    class NoWaitSqliteStore(SqliteStore):
        @contextmanager
        def _cursor(self, *, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
            with self.lock:
                if transaction:
                    self.conn.execute("BEGIN IMMEDIATE")  # the write lock, or (busy_timeout 0) an error at once
                cur = self.conn.cursor()
                try:
                    yield cur
                except BaseException:
                    if transaction:
                        self.conn.execute("ROLLBACK")  # nothing of a batch that failed half way is kept
                    raise
                else:
                    if transaction:
                        self.conn.execute("COMMIT")
                finally:
                    cur.close()

    return NoWaitSqliteStore


def sqlite_twin(store: Any) -> BaseStore | None:
    """A second ``SqliteStore`` over ``store``'s own connection (its own Python lock), or ``None`` if not SQLite.

    ``SqliteStore.batch`` takes the store's lock, so the batch that must not
    wait runs through this twin while :func:`batch_without_waiting` holds that
    lock. The twin's transactions take the write lock first (``BEGIN
    IMMEDIATE``) and are rolled back whole when any statement fails.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langgraph.store.sqlite import SqliteStore
        >>> with SqliteStore.from_conn_string(":memory:") as store:
        ...     store.setup()
        ...     twin = sqlite_twin(store)
        ...     twin.conn is store.conn, twin.lock is store.lock, sqlite_twin(store) is twin
        (True, False, True)
        >>> sqlite_twin(InMemoryStore()) is None
        True
    """
    try:
        from langgraph.store.sqlite import SqliteStore
    except ImportError:  # pragma: no cover - a dependency of the package
        return None
    if type(store) is not SqliteStore or not store.is_setup or not isinstance(store.conn, sqlite3.Connection):
        return None
    with _TWINS_LOCK:
        twin = _TWINS.get(store)
        if twin is None:
            made = _twin_class()(store.conn, ttl=store.ttl_config)
            made.is_setup = True
            twin = _TWINS[store] = made
    return twin


def batch_without_waiting(store: BaseStore, ops: Sequence[Op]) -> list[Result]:
    """Run ``ops`` in one batch that fails at once rather than wait for a write lock held by another connection.

    On LangGraph's ``SqliteStore`` the batch runs with ``busy_timeout`` 0 on
    the store's connection (restored after), in a transaction that starts by
    taking the write lock: when another connection (another process, a tool,
    an open ``BEGIN IMMEDIATE``) holds it, it raises ``sqlite3.OperationalError``
    ("database is locked") at once, and a batch that fails on any statement is
    rolled back whole. It waits for this process's own use of the connection
    only up to :data:`CONNECTION_WAIT` seconds (else ``TimeoutError``). Any
    other store runs the batch as usual (on PostgreSQL a read holds the user's
    advisory lock, so no memory process holds the rows a visit rewrites).

    Example:
        >>> from langgraph.store.base import PutOp
        >>> from langgraph.store.sqlite import SqliteStore
        >>> with SqliteStore.from_conn_string(":memory:") as store:
        ...     store.setup()
        ...     batch_without_waiting(store, [PutOp(("notes",), "n", {"v": 1})])
        ...     store.get(("notes",), "n").value
        [None]
        {'v': 1}
    """
    twin = sqlite_twin(store)
    if twin is None:
        return store.batch(ops)
    conn: sqlite3.Connection = store.conn  # type: ignore[attr-defined]
    lock: threading.Lock = store.lock  # type: ignore[attr-defined]
    if not lock.acquire(timeout=CONNECTION_WAIT):
        raise TimeoutError(f"the SQLite connection was busy in this process for over {CONNECTION_WAIT} s")
    try:
        (timeout,) = conn.execute("PRAGMA busy_timeout").fetchone()
        conn.execute("PRAGMA busy_timeout=0")
        try:
            return twin.batch(ops)
        finally:
            if conn.in_transaction:  # a COMMIT that failed leaves the transaction open
                conn.execute("ROLLBACK")
            conn.execute(f"PRAGMA busy_timeout={int(timeout)}")
    finally:
        lock.release()
