"""The PostgreSQL backend: LangGraph's ``PostgresStore`` shared by many processes.

* one turn is one transaction: the store's connections are not in
  autocommit, so each ``batch`` commits as a whole when its pooled connection
  is returned (a writer killed in the middle leaves the last turn out, never
  half of it);
* a write path of a user holds a session-level advisory lock
  (:class:`AdvisoryLocks`), so writers in different processes take turns per
  user while different users proceed in parallel; a crashed process's locks go
  with its connection;
* no store-side vector index (no pgvector): the memory's FAISS caches serve
  vector search, kept fresh across processes by the repository's version
  stamp.

Needs the ``postgres`` extra (``langgraph-checkpoint-postgres``, ``psycopg``,
``psycopg-pool``).

Example:
    >>> from langchain_memoryos.store.postgres import advisory_key
    >>> advisory_key("ana") == advisory_key("ana") != advisory_key("bob")
    True
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from typing import Any

from langchain_memoryos.errors import InvalidInputError

__all__ = ["AdvisoryLocks", "PostgresBackend", "advisory_key", "open_postgres", "store_locks"]

#: The advisory-lock namespace of this package (the first of the two int4 lock keys).
_LOCK_SPACE = 0x6D656D6F  # "memo"
_SETUP_KEY = 0


def _require() -> Any:
    try:
        import psycopg
        import psycopg_pool
        from langgraph.store.postgres import PostgresStore
    except ImportError as exc:
        raise ImportError(
            "MemoryOS.from_postgres needs the 'postgres' extra: pip install 'langchain-memoryos[postgres]' "
            f"({exc.name} is missing)."
        ) from exc
    return psycopg, psycopg_pool, PostgresStore


def _migrated(conn: Any, migrations: int) -> bool:
    """Whether the store's migrations are all applied (no lock needed to look)."""
    if conn.execute("SELECT to_regclass('store_migrations') AS t").fetchone()["t"] is None:
        return False
    row = conn.execute("SELECT max(v) AS v FROM store_migrations").fetchone()
    return row["v"] is not None and int(row["v"]) >= migrations - 1


def advisory_key(user_id: str) -> int:
    """The second advisory-lock key (a signed int4) of a user.

    Example:
        >>> -(2**31) <= advisory_key("ana") < 2**31
        True
    """
    raw = int.from_bytes(hashlib.sha256(user_id.encode("utf-8", "surrogatepass")).digest()[:4], "big")
    return raw - 2**32 if raw >= 2**31 else raw


class AdvisoryLocks:
    """Per-user session-level advisory locks, each held on its own pooled connection.

    ``acquire(user_id)`` blocks until this process holds the user's lock and
    returns the function that releases it. The lock lives as long as the
    connection's session, so a killed process never leaves a user locked.

    Example:
        >>> class Conn:  # stands in for a psycopg connection
        ...     def execute(self, sql, args):
        ...         print(sql, args[1] == advisory_key("ana"))
        >>> class Pool:
        ...     def getconn(self):
        ...         return Conn()
        ...     def putconn(self, conn):
        ...         print("connection returned")
        >>> release = AdvisoryLocks(Pool()).acquire("ana")
        SELECT pg_advisory_lock(%s, %s) True
        >>> release(); release()  # the second call does nothing
        SELECT pg_advisory_unlock(%s, %s) True
        connection returned
    """

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    def acquire(self, user_id: str) -> Callable[[], None]:
        """Take the user's lock (blocking); returns its release."""
        conn = self._pool.getconn()
        try:
            conn.execute("SELECT pg_advisory_lock(%s, %s)", (_LOCK_SPACE, advisory_key(user_id)))
        except BaseException:
            self._pool.putconn(conn)
            raise
        done = threading.Lock()

        def release() -> None:
            if not done.acquire(blocking=False):
                return
            try:
                conn.execute("SELECT pg_advisory_unlock(%s, %s)", (_LOCK_SPACE, advisory_key(user_id)))
            finally:
                self._pool.putconn(conn)

        return release


#: psycopg connection arguments that are not libpq connection parameters
_CONNECTION_ARGS = frozenset({"autocommit", "prepare_threshold", "row_factory", "cursor_factory", "context"})


def store_locks(store: Any) -> tuple[AdvisoryLocks, Callable[[], None]]:
    """Advisory locks for a ``PostgresStore`` / ``AsyncPostgresStore`` made by the caller, and what closes them.

    The locks are held on a pool of their own (autocommit connections to the
    database of the store's connection or pool, opened when first needed), as
    :func:`open_postgres` makes: a lock never takes a connection the store's
    batches wait for.

    Args:
        store: the store (its ``conn``: a psycopg connection or pool, sync or async).

    Returns:
        The locks and the function that closes their pool.

    Raises:
        ImportError: without the ``postgres`` extra.

    Example:
        >>> from types import SimpleNamespace
        >>> pool = SimpleNamespace(conninfo="host=127.0.0.1 dbname=nowhere", kwargs={"autocommit": False}, max_size=4)
        >>> locks, close = store_locks(SimpleNamespace(conn=pool))  # nothing is connected before a lock is taken
        >>> close()
    """
    _, psycopg_pool, _ = _require()
    from psycopg.conninfo import make_conninfo

    conn = store.conn
    conninfo = getattr(conn, "conninfo", None)
    if isinstance(conninfo, str):  # a pool (sync or async)
        extra = {k: v for k, v in (getattr(conn, "kwargs", None) or {}).items() if k not in _CONNECTION_ARGS}
        size = max(int(getattr(conn, "max_size", 8) or 8), 8)
    else:  # one connection: its parameters, and its password (which its dsn never shows)
        info = conn.info
        conninfo, extra, size = info.dsn, ({"password": info.password} if info.password else {}), 8
    pool = psycopg_pool.ConnectionPool(
        make_conninfo(conninfo, **extra), min_size=0, max_size=size, kwargs={"autocommit": True}, open=False
    )
    pool.open()
    return AdvisoryLocks(pool), pool.close


class PostgresBackend:
    """What ``MemoryOS.from_postgres`` opened: the store, its pools and the locks; ``close()`` closes them.

    Example:
        >>> class Pool:  # stands in for a psycopg_pool.ConnectionPool
        ...     def __init__(self, name):
        ...         self.name = name
        ...     def close(self):
        ...         print("closed", self.name)
        >>> backend = PostgresBackend(None, Pool("store pool"), Pool("lock pool"), "postgresql://localhost/memory")
        >>> backend.close()
        closed store pool
        closed lock pool
    """

    def __init__(self, store: Any, pool: Any, lock_pool: Any, conn_string: str) -> None:
        self.store = store
        self.pool = pool
        self.lock_pool = lock_pool
        self.locks = AdvisoryLocks(lock_pool)
        self.conn_string = conn_string

    def setup(self) -> None:
        """Create or migrate the store's tables (idempotent; safe from several processes at once).

        A database that is already migrated is left alone without taking any
        lock. Otherwise one process migrates while the others wait for it by
        polling ``pg_try_advisory_lock``: a migration runs ``CREATE INDEX
        CONCURRENTLY``, which waits for every open transaction, so a process
        blocked inside ``pg_advisory_lock`` would deadlock with it.
        """
        psycopg, _, PostgresStore = _require()
        from psycopg.rows import dict_row

        # migrations use CREATE INDEX CONCURRENTLY: they need autocommit
        with psycopg.connect(self.conn_string, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
            if _migrated(conn, len(PostgresStore.MIGRATIONS)):
                return
            while not conn.execute("SELECT pg_try_advisory_lock(%s, %s) AS ok", (_LOCK_SPACE, _SETUP_KEY)).fetchone()[
                "ok"
            ]:
                time.sleep(0.05)
            try:
                PostgresStore(conn).setup()
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s, %s)", (_LOCK_SPACE, _SETUP_KEY))

    def vacuum(self, *, full: bool = False) -> str:
        """Run ``VACUUM store`` (``full``: ``VACUUM (FULL) store``) on its own autocommit connection.

        Plain ``VACUUM`` frees the dead rows (deleted or rewritten, with their
        TOAST data) for reuse without blocking the memory; ``FULL`` rewrites the
        table into new files, removing the old bytes now, under an exclusive
        lock. Returns the statement.
        """
        psycopg, _, _ = _require()
        statement = "VACUUM (FULL) store" if full else "VACUUM store"
        with psycopg.connect(self.conn_string, autocommit=True) as conn:
            conn.execute(statement)
        return statement

    def close(self) -> None:
        """Close both pools (idempotent)."""
        self.pool.close()
        self.lock_pool.close()


def open_postgres(conn_string: str, *, max_connections: int = 8, setup: bool = True) -> PostgresBackend:
    """Open the store (a connection pool whose batches are transactions) and the lock pool.

    Args:
        conn_string: a libpq URL or DSN, e.g. ``postgresql://user:pw@127.0.0.1:5432/db``.
        max_connections: the store pool's size (the lock pool is as large: one
            connection per user whose write is in progress in this process).
        setup: run the store's migrations first.

    Returns:
        The opened backend.

    Raises:
        ImportError: without the ``postgres`` extra.
        ValueError: for an empty connection string.
        ConnectionError: when the server cannot be reached (the server's message).

    Example:
        >>> open_postgres("")  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: ...
    """
    if not isinstance(conn_string, str) or not conn_string.strip():
        raise InvalidInputError(
            "from_postgres needs a connection string, e.g. 'postgresql://user:pw@127.0.0.1:5432/db'."
        )
    psycopg, psycopg_pool, PostgresStore = _require()
    from psycopg.rows import dict_row

    if max_connections < 1:
        raise InvalidInputError(f"max_connections must be at least 1, got {max_connections}.")
    probe = {} if "connect_timeout" in conn_string else {"connect_timeout": 10}
    try:  # fail fast with the server's own words, not a pool timeout
        psycopg.connect(conn_string, autocommit=True, **probe).close()
    except psycopg.Error as exc:
        raise ConnectionError(f"from_postgres: cannot connect: {str(exc).splitlines()[0]}") from exc
    pool = psycopg_pool.ConnectionPool(
        conn_string,
        min_size=1,
        max_size=max_connections,
        kwargs={"autocommit": False, "prepare_threshold": 0, "row_factory": dict_row},
        open=False,
    )
    lock_pool = psycopg_pool.ConnectionPool(
        conn_string, min_size=0, max_size=max_connections, kwargs={"autocommit": True}, open=False
    )
    try:
        pool.open(wait=True, timeout=30)
        lock_pool.open()
        backend = PostgresBackend(PostgresStore(pool), pool, lock_pool, conn_string)
        if setup:
            backend.setup()
    except BaseException:
        pool.close()
        lock_pool.close()
        raise
    return backend
