"""Backends: the store a memory persists in, and what opening, migrating and vacuuming it take.

* SQLite (LangGraph's ``SqliteStore``, :func:`from_sqlite`): one file in WAL
  mode, cross-process user locks in ``<path>.locks``; deleted rows are
  overwritten (``secure_delete``) and the write-ahead log is emptied after a
  user's deletion (:func:`sqlite_purge`).
* PostgreSQL (LangGraph's ``PostgresStore``, :func:`from_postgres`, extra
  ``postgres``): shared by many processes, see
  :mod:`langchain_memoryos.store.postgres`.
* Any other ``BaseStore`` is used as given.

A store passed to ``MemoryOS(store)`` directly is recognised (:func:`coherence`):
an ``SqliteStore``, ``PostgresStore`` or ``AsyncPostgresStore`` gets what
``from_sqlite`` / ``from_postgres`` give (version checks with change tokens,
per-user locks between processes); the memories over one ``InMemoryStore``
object share one cache; any other store gets a version check per operation.
The table of what each guarantees is in docs/architecture.md.

``MemoryOS.from_sqlite`` / ``from_postgres`` / ``setup`` / ``vacuum`` delegate here.

Example:
    >>> import os, tempfile
    >>> from langchain_memoryos import MemoryOS
    >>> with from_sqlite(MemoryOS, os.path.join(tempfile.mkdtemp(), "m.db")) as memory:
    ...     vacuum(memory.store, None)
    'VACUUM'
"""

from __future__ import annotations

import logging
import sqlite3
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from langgraph.store.base import BaseStore

from langchain_memoryos.operations.validation import check_sqlite_path
from langchain_memoryos.store.locks import ProcessLocks

__all__ = ["Coherence", "Owner", "coherence", "from_postgres", "from_sqlite", "setup", "sqlite_purge", "vacuum"]

#: The logger these notes always used (they lived in ``langchain_memoryos.memory``).
logger = logging.getLogger("langchain_memoryos.memory")


class Owner(Protocol):
    """A memory that owns what a factory opened for it: its ``close()`` calls ``_closers``, last first.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> owner: Owner = MemoryOS()
        >>> owner._closers, owner._backend
        ([], None)
    """

    _closers: list[Callable[[], None]]
    _backend: Any


M = TypeVar("M", bound=Owner)


@dataclass
class Coherence:
    """How the memories over one store stay coherent (what :func:`coherence` found for it).

    Attributes:
        kind: ``"sqlite"``, ``"postgres"``, ``"memory"`` (an ``InMemoryStore``, or an
            ``SqliteStore`` over ``:memory:``: one object is the whole database), ``"other"``,
            or ``"given"`` (the caller gave the process locks: ``from_sqlite``, ``from_postgres``).
        shared: check a cached user's version against the store on every operation
            (with change tokens where the store gives them).
        locks: per-user locks between processes (``None``: none).
        closers: what the memory closes when it is closed (the lock file, the lock pool).

    Example:
        >>> Coherence("memory", shared=False).locks is None
        True
    """

    kind: str
    shared: bool
    locks: ProcessLocks | None = None
    closers: list[Callable[[], None]] = field(default_factory=list)


#: the store types already warned about (a warning once per type)
_WARNED: set[type] = set()
_WARN_LOCK = threading.Lock()


def _loaded(module: str, name: str) -> type | None:
    """A class of an optional package, only if that module is imported (a store of it exists only then)."""
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) else None


def coherence(store: BaseStore) -> Coherence:
    """What a store given to ``MemoryOS(store)`` directly gets, so that every memory over it sees one memory.

    * ``SqliteStore`` over a file: version checks with change tokens, and per-user
      locks between processes on ``<database file>.locks`` (the file found from the
      connection), as :func:`from_sqlite`; over ``:memory:``: as an ``InMemoryStore``.
    * ``PostgresStore`` / ``AsyncPostgresStore``: version checks, and per-user
      advisory locks on a pool of their own to the store's database (closed with the memory), as :func:`from_postgres`.
    * ``InMemoryStore``: nothing to check; the memories over one object share their cache.
    * any other store: a version check on every operation, without locks between
      processes (a warning, once per store type: one writer process per user is the caller's rule).

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> coherence(InMemoryStore()).kind
        'memory'
        >>> import sqlite3, tempfile, os
        >>> from langgraph.store.sqlite import SqliteStore
        >>> path = os.path.join(tempfile.mkdtemp(), "m.db")
        >>> found = coherence(SqliteStore(sqlite3.connect(path, check_same_thread=False)))
        >>> found.kind, found.shared, found.locks.path.name
        ('sqlite', True, 'm.db.locks')
        >>> for close in found.closers: close()
    """
    from langgraph.store.memory import InMemoryStore

    if isinstance(store, InMemoryStore):
        return Coherence("memory", shared=False)
    sqlite_store = _loaded("langgraph.store.sqlite.base", "SqliteStore")
    if sqlite_store is not None and isinstance(store, sqlite_store):
        return _sqlite_coherence(store)
    postgres = [_loaded("langgraph.store.postgres.base", "PostgresStore")]
    postgres.append(_loaded("langgraph.store.postgres.aio", "AsyncPostgresStore"))
    if any(kind is not None and isinstance(store, kind) for kind in postgres):
        from langchain_memoryos.store.postgres import store_locks

        try:
            locks, close = store_locks(store)
        except Exception as exc:  # noqa: BLE001 - logged: the memory still checks versions
            logger.warning(
                "memoryos: no locks between processes for this %s (%s): every operation checks the user's "
                "version, but writers of one user in different processes are not serialized; use "
                "MemoryOS.from_postgres(conn_string) to get them.",
                type(store).__name__,
                exc,
            )
            return Coherence("postgres", shared=True)
        return Coherence("postgres", shared=True, locks=locks, closers=[close])
    with _WARN_LOCK:
        first = type(store) not in _WARNED
        _WARNED.add(type(store))
    if first:
        logger.warning(
            "memoryos: %s is not a store whose writers MemoryOS can coordinate between processes: every operation "
            "checks the user's version in the store (no MemoryOS object uses a stale cache), but two processes "
            "writing one user at once are not serialized. Keep one writer process per user, or use "
            "MemoryOS.from_sqlite / MemoryOS.from_postgres (or pass an SqliteStore / PostgresStore).",
            type(store).__name__,
        )
    return Coherence("other", shared=True)


def _sqlite_coherence(store: Any) -> Coherence:
    from langchain_memoryos.store.filelocks import FileLocks

    with store.lock:
        rows = store.conn.execute("PRAGMA database_list").fetchall()
    path = next((str(row[2]) for row in rows if row[1] == "main" and row[2]), None)
    if path is None:  # ":memory:" (or a temporary database): this connection is the whole database
        return Coherence("memory", shared=False)
    locks = FileLocks(f"{path}.locks")
    try:
        release = locks.acquire("")  # opens the lock file now: an error is found here, not in a write
        release()
    except OSError as exc:
        locks.close()
        logger.warning(
            "memoryos: cannot open the lock file %s.locks (%s): every operation checks the user's version, but "
            "writers of one user in different processes are not serialized; make the database's directory writable.",
            path,
            exc,
        )
        return Coherence("sqlite", shared=True)
    return Coherence("sqlite", shared=True, locks=locks, closers=[locks.close])


def from_sqlite(make: Callable[..., M], path: str | Path, **kwargs: Any) -> M:
    """A memory persisted in an SQLite file: see ``MemoryOS.from_sqlite``.

    Args:
        make: builds the memory from a store (``MemoryOS``).
        path: the database file (``":memory:"`` for a throwaway database).
        **kwargs: passed to ``make``.

    Returns:
        The memory; it closes the connection and the lock file when closed.

    Raises:
        FileNotFoundError: the file's directory does not exist (see
            :func:`~langchain_memoryos.operations.validation.check_sqlite_path`).
        IsADirectoryError: ``path`` is a directory.
        sqlite3.DatabaseError: the file is not an SQLite database, or cannot be opened.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = from_sqlite(MemoryOS, ":memory:")
        >>> memory.add_turn("I live in Oslo.", "Nice.", user_id="u").added, memory.stats(user_id="u").stm_pages
        (True, 1)
        >>> len(memory._closers)  # the connection and the lock file, closed with the memory
        1
        >>> memory.close(); memory._closers
        []
    """
    from langgraph.store.sqlite import SqliteStore

    from langchain_memoryos.store.filelocks import FileLocks

    path = check_sqlite_path(path)
    try:
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    except sqlite3.OperationalError as exc:
        raise _open_error(path, exc) from exc
    locks = None if path == ":memory:" else FileLocks(f"{path}.locks")
    try:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
        except sqlite3.DatabaseError as exc:
            raise _open_error(path, exc) from exc
        store = SqliteStore(conn)
        store.setup()
        memory = make(store, process_locks=locks, **kwargs)
    except BaseException:
        conn.close()
        if locks is not None:
            locks.close()
        raise
    memory._closers.append(conn.close)
    if locks is not None:
        memory._closers.append(locks.close)
    return memory


def _open_error(path: str, exc: sqlite3.DatabaseError) -> sqlite3.DatabaseError:
    """SQLite's error on opening ``path``, in one line that names the file and the fix (same type)."""
    reason = " ".join(str(exc).split())
    if isinstance(exc, sqlite3.OperationalError):
        hint = "check that the file and its directory are readable and writable, or pass another path"
    elif "not a database" in reason:
        hint = "it is not an SQLite database; pass another path"
    else:
        hint = "pass another path"
    error = type(exc)(f"cannot open the SQLite database {path} ({reason}): {hint}.")
    if hasattr(exc, "sqlite_errorcode"):
        error.sqlite_errorcode, error.sqlite_errorname = exc.sqlite_errorcode, exc.sqlite_errorname
    return error


def from_postgres(
    make: Callable[..., M], conn_string: str, *, setup: bool = True, max_connections: int = 8, **kwargs: Any
) -> M:
    """A memory in PostgreSQL, shared by many processes: see ``MemoryOS.from_postgres``.

    Args:
        make: builds the memory from a store (``MemoryOS``).
        conn_string: e.g. ``"postgresql://user:pw@127.0.0.1:5432/db"``.
        setup: create or migrate the tables first.
        max_connections: connections of this process's pool.
        **kwargs: passed to ``make``.

    Returns:
        The memory; it closes the pools when closed.

    Raises:
        ImportError: without the ``postgres`` extra.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> from_postgres(MemoryOS, "")  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: from_postgres needs a connection string ...
    """
    from langchain_memoryos.store.postgres import open_postgres

    backend = open_postgres(conn_string, max_connections=max_connections, setup=setup)
    try:
        memory = make(backend.store, process_locks=backend.locks, **kwargs)
    except BaseException:
        backend.close()
        raise
    memory._backend = backend
    memory._closers.append(backend.close)
    return memory


def setup(store: BaseStore, backend: Any = None) -> None:
    """Create or migrate the store's tables (PostgreSQL and SQLite; a no-op for in-memory stores).

    Args:
        store: the memory's store.
        backend: the PostgreSQL backend of a memory from :func:`from_postgres` (else ``None``).

    Example:
        >>> import sqlite3
        >>> from langgraph.store.sqlite import SqliteStore
        >>> store = SqliteStore(sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None))
        >>> setup(store); store.put(("memoryos",), "k", {"v": 1}); store.get(("memoryos",), "k").value
        {'v': 1}
    """
    if backend is not None:
        backend.setup()
    elif hasattr(store, "setup"):
        store.setup()


def vacuum(store: BaseStore, backend: Any = None, *, full: bool = False) -> str | None:
    """Reclaim the space of deleted rows (see ``MemoryOS.vacuum``); the statement run, or ``None``.

    Args:
        store: the memory's store.
        backend: the PostgreSQL backend of a memory from :func:`from_postgres` (else ``None``).
        full: PostgreSQL: ``VACUUM (FULL)``.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> vacuum(InMemoryStore()) is None
        True
    """
    from langgraph.store.sqlite import SqliteStore

    if backend is not None:
        return str(backend.vacuum(full=full))
    if isinstance(store, SqliteStore):
        with store.lock:
            store.conn.execute("VACUUM")
            store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return "VACUUM"
    return None


def sqlite_purge(store: BaseStore) -> Callable[[], None] | None:
    """For an ``SqliteStore``: deleted rows are overwritten, and the purge after a user's deletion empties the WAL.

    The connection gets ``PRAGMA secure_delete=ON`` (SQLite overwrites deleted
    content, freed pages included, with zeros); the purge runs
    ``PRAGMA wal_checkpoint(TRUNCATE)``, so no copy of the deleted text stays in
    the ``-wal`` file. ``None`` for other stores.

    Example:
        >>> import sqlite3
        >>> from langgraph.store.sqlite import SqliteStore
        >>> store = SqliteStore(sqlite3.connect(":memory:", check_same_thread=False))
        >>> purge = sqlite_purge(store); purge()
        >>> store.conn.execute("PRAGMA secure_delete").fetchone()[0]
        1
    """
    from langgraph.store.sqlite import SqliteStore

    if not isinstance(store, SqliteStore):
        return None
    with store.lock:
        store.conn.execute("PRAGMA secure_delete=ON")

    def purge() -> None:
        with store.lock:
            busy, _, _ = store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            logger.warning(
                "SQLite: the write-ahead log could not be checkpointed after a deletion (another connection kept "
                "reading for busy_timeout); the deleted text stays in the -wal file until the next checkpoint: "
                "run MemoryOS.vacuum() when the other connections are idle."
            )

    return purge
