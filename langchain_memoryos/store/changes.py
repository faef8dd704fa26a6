"""Change tokens: has anything been written to a store since a given moment (so a cached user need not check)?

In a store shared by processes, a cached user is used only while its version
stamp is unchanged, which costs one read of the stamp per operation (~0.2 ms
on SQLite: a transaction of its own). :func:`change_token` answers the same
question without reading the store when it can: two equal tokens mean nothing
was written to the store in between, by this process or by any other.

* SQLite (LangGraph's ``SqliteStore``): ``PRAGMA data_version`` changes when
  *another connection* commits (another process, or another store object on the
  same file); the writes made through this store object are counted here,
  each *before* it is made (:func:`count_write`, called by the effect drivers).
* Any other store: ``None`` (cannot tell; the stamp is read, as before).

Example:
    >>> from langgraph.store.sqlite import SqliteStore
    >>> with SqliteStore.from_conn_string(":memory:") as store:
    ...     store.setup()
    ...     before = change_token(store)
    ...     same = change_token(store) == before
    ...     count_write(store); store.put(("a",), "k", {"v": 1})
    ...     same, change_token(store) == before
    (True, False)
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from langgraph.store.base import BaseStore, Op, Result

from langchain_memoryos.store.visits import batch_without_waiting, sqlite_twin

__all__ = ["STORE_CHANGES", "StoreKinds", "change_token", "count_write", "unchanged_after"]

Token = tuple[int, int]

_WRITES: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _sqlite(store: Any) -> tuple[sqlite3.Connection, Any] | None:
    conn, lock = getattr(store, "conn", None), getattr(store, "lock", None)
    if isinstance(conn, sqlite3.Connection) and lock is not None:
        return conn, lock
    return None


def count_write(store: Any) -> None:
    """Count a write about to be made through ``store`` (call it before the write, never after).

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> count_write(InMemoryStore())  # counted only for stores that give tokens
    """
    if _sqlite(store) is None:
        return
    with _LOCK:
        _WRITES[store] = _WRITES.get(store, 0) + 1


def change_token(store: Any, *, wait: bool = True) -> Token | None:
    """A token equal to an earlier one only if nothing was written to ``store`` in between (``None``: can't tell).

    Args:
        store: the LangGraph store.
        wait: wait for the store's connection when another thread uses it
            (``False``, from an event loop: ``None`` instead of blocking).

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> change_token(InMemoryStore()) is None
        True
    """
    found = _sqlite(store)
    if found is None:
        return None
    conn, lock = found
    if not lock.acquire(blocking=wait):
        return None
    try:
        with _LOCK:
            writes = _WRITES.get(store, 0)
        (version,) = conn.execute("PRAGMA data_version").fetchone()
    finally:
        lock.release()
    return int(version), writes


def unchanged_after(before: Token | None, after: Token | None) -> bool:
    """Whether ``after`` was taken when one write of ours, and nothing else, followed ``before``.

    Example:
        >>> unchanged_after((3, 7), (3, 8)), unchanged_after((3, 7), (3, 9)), unchanged_after((3, 7), (4, 8))
        (True, False, False)
    """
    return before is not None and after is not None and after == (before[0], before[1] + 1)


class StoreKinds:
    """The effect drivers' :class:`~langchain_memoryos.kernel.effects.StoreChanges`, by the store's kind.

    Change tokens and write counts (:func:`change_token`, :func:`count_write`)
    and, on SQLite, the batch that fails at once rather than wait
    (:func:`~langchain_memoryos.store.visits.batch_without_waiting`); use the
    one instance, :data:`STORE_CHANGES`.

    Example:
        >>> from langgraph.store.sqlite import SqliteStore
        >>> with SqliteStore.from_conn_string(":memory:") as store:
        ...     store.setup()
        ...     before = STORE_CHANGES.token(store, wait=True)
        ...     STORE_CHANGES.written(store)
        ...     before == STORE_CHANGES.token(store, wait=True), STORE_CHANGES.at_once(store) is not None
        (False, True)
    """

    def token(self, store: BaseStore, *, wait: bool) -> Token | None:
        """See :func:`change_token`."""
        return change_token(store, wait=wait)

    def written(self, store: BaseStore) -> None:
        """See :func:`count_write`."""
        count_write(store)

    def at_once(self, store: BaseStore) -> Callable[[Sequence[Op]], list[Result]] | None:
        """The store's batch that does not wait for another connection's write lock (``None``: not SQLite)."""
        return partial(batch_without_waiting, store) if sqlite_twin(store) is not None else None


#: The memory's store changes (``Services(changes=STORE_CHANGES)``).
STORE_CHANGES = StoreKinds()
