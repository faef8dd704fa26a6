"""Opening a memory for the inspector: an SQLite file read-only, or PostgreSQL without migrations.

Example:
    >>> import os, tempfile
    >>> from langchain_memoryos import MemoryOS
    >>> path = os.path.join(tempfile.mkdtemp(), "m.db")
    >>> with MemoryOS.from_sqlite(path) as memory:
    ...     _ = memory.add_turn("I live in Oslo.", "Nice!", user_id="ana")
    >>> with open_sqlite_read_only(path) as memory:
    ...     memory.list_users(), memory.repository.read_only
    (['ana'], True)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

from langchain_memoryos.memory import MemoryOS

__all__ = ["open_postgres_read_only", "open_sqlite_read_only"]


def open_sqlite_read_only(path: str | Path, **kwargs: Any) -> MemoryOS:
    """A memory over an SQLite file opened read-only (``mode=ro``): the database file is never written.

    No migration runs (a file LangGraph's store has not set up is refused), the
    connection cannot write, and the memory's loads write nothing
    (:attr:`~langchain_memoryos.store.repository.MemoryRepository.read_only`).
    Reads take the per-user locks of ``<path>.locks`` when that file exists, so
    they wait for a writer process's turn; none is created. SQLite may create
    its empty ``-wal`` / ``-shm`` side files to read a WAL-mode database.

    Args:
        path: the database file.
        **kwargs: ``embeddings``, ``config`` … as for ``MemoryOS``.

    Returns:
        The memory; close it when done.

    Raises:
        FileNotFoundError: no such file.
        sqlite3.DatabaseError: not an SQLite database of LangGraph's store (the message says what to do).

    Example:
        >>> open_sqlite_read_only("no/such.db")
        Traceback (most recent call last):
        FileNotFoundError: no/such.db: no such database (pass the --db file an agent or 'memoryos ingest' wrote)
    """
    from langgraph.store.sqlite import SqliteStore

    from langchain_memoryos.store.filelocks import FileLocks

    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"{path}: no such database (pass the --db file an agent or 'memoryos ingest' wrote)")
    uri = f"file:{quote(str(file.resolve()))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
    locks = None
    try:
        conn.execute("PRAGMA busy_timeout=30000")
        try:
            (latest,) = conn.execute("SELECT MAX(v) FROM store_migrations").fetchone()
        except sqlite3.OperationalError as exc:
            raise sqlite3.DatabaseError(
                f"{path}: not a memoryos database ({exc}); pass the SQLite file a memory was stored in."
            ) from None
        store = SqliteStore(conn)
        if latest is None or latest < len(store.MIGRATIONS) - 1:
            raise sqlite3.DatabaseError(
                f"{path}: the store's tables are of an older LangGraph version; open it once with writes "
                "(memoryos serve --allow-edit, or any memoryos command that writes) to migrate it."
            )
        store.is_setup = True  # read-only: never migrate
        lock_file = Path(f"{file}.locks")
        locks = FileLocks(lock_file) if lock_file.is_file() else None
        memory = MemoryOS(store, process_locks=locks, **kwargs) if locks is not None else _unlocked(store, **kwargs)
    except BaseException:
        conn.close()
        if locks is not None:
            locks.close()
        raise
    memory.repository.read_only = True
    memory._closers.append(conn.close)
    if locks is not None:
        memory._closers.append(locks.close)
    return memory


def _unlocked(store: Any, **kwargs: Any) -> MemoryOS:
    """A memory over an SQLite store with version checks but no lock file (none is created for a read)."""
    from langchain_memoryos.store.locks import ProcessLocks

    class _NoLocks(ProcessLocks):
        def acquire(self, user_id: str) -> Any:
            return lambda: None

    return MemoryOS(store, process_locks=_NoLocks(), **kwargs)


def open_postgres_read_only(url: str, **kwargs: Any) -> MemoryOS:
    """A memory in PostgreSQL for reading: no migration runs, and its loads write nothing.

    (The sessions are not made ``default_transaction_read_only``: LangGraph's
    ``PostgresStore`` reads with statements PostgreSQL refuses in a read-only
    transaction.)

    Args:
        url: the connection string.
        **kwargs: as for ``MemoryOS``.

    Returns:
        The memory (read-only repository); close it when done.

    Example:
        >>> open_postgres_read_only("")  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: from_postgres needs a connection string ...
    """
    memory = MemoryOS.from_postgres(url, setup=False, **kwargs)
    memory.repository.read_only = True
    return memory
