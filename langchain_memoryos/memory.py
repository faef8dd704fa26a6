"""``MemoryOS``: the facade over the engine, sync and async.

Every public operation is one engine step (a generator of effects) run by the
sync or the async driver under the user's write lock; the two variants share
their body.
"""

from __future__ import annotations

import asyncio
import copy
import datetime as _dt
import logging
import math
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore

from langchain_memoryos.amu import write_record
from langchain_memoryos.amu.corrections import edit_fact, forget_fact
from langchain_memoryos.background import BackgroundWriter
from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.controllers.base import MemoryController, ParsedRecords
from langchain_memoryos.controllers.heuristic import HeuristicController
from langchain_memoryos.embeddings import encode_texts, resolve_embeddings
from langchain_memoryos.pipeline.effects import Services, Step, StoreBatch, run_async, run_sync
from langchain_memoryos.pipeline.judgements import ParseRecords
from langchain_memoryos.pipeline.settings import EngineSettings
from langchain_memoryos.pipeline.turn import TurnWrite, embed_turn, turn_page
from langchain_memoryos.retrieval.recall import ReadRun
from langchain_memoryos.schema import (
    DialoguePage,
    MemoryContext,
    MemoryRecord,
    MemoryStats,
    Persona,
    Segment,
    WriteEvent,
    WriteReport,
    check_timestamp,
    ensure_utc,
)
from langchain_memoryos.scoring import segment_heat
from langchain_memoryos.store.repository import (
    ROOT,
    MemoryRepository,
    ProcessLocks,
    UserLease,
    UserState,
    decode_label,
    encode_label,
)
from langchain_memoryos.store.unit_of_work import write_user

__all__ = ["MemoryOS", "clean_metadata"]

T = TypeVar("T")
logger = logging.getLogger(__name__)
FactKindArg = Literal["user", "agent"]


#: How the memory's own graphs are run: many stages per turn are normal; never in a user's message stream;
#: one node at a time (their nodes run in sequence), which also spares LangGraph sizing a thread pool per run.
_GRAPH_CONFIG: dict[str, Any] = {"recursion_limit": 100_000, "tags": ["nostream", "memoryos"], "max_concurrency": 1}


@contextmanager
def _lease_of(payload: TurnWrite | ReadRun) -> Iterator[None]:
    """Around a graph run: whatever lease the run took is released (failed, when the run raised)."""
    try:
        yield
    except BaseException:
        if payload.lease is not None:
            payload.lease.fail()
        raise
    finally:
        if payload.lease is not None:
            payload.lease.release()


def _check_user(user_id: Any) -> str:
    if not isinstance(user_id, str) or not user_id.strip():
        raise ValueError(
            f"user_id must be a non-empty string, got {user_id!r}; every memory belongs to one user "
            "(pass user_id='...')."
        )
    return _storable_id("user_id", user_id)


def _check_thread(thread_id: Any) -> str:
    if not isinstance(thread_id, str) or not thread_id:
        raise ValueError(f"thread_id must be a non-empty string, got {thread_id!r}.")
    return _storable_id("thread_id", thread_id)


def _storable_id(name: str, value: str) -> str:
    """Ids are keys: they are never rewritten, so one that no backend can store is refused."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{name} {value!r} contains a lone surrogate; pass valid Unicode text.") from None
    return value


def _check_text(name: str, value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}.")
    return clean_text(value, name)


def clean_text(value: str, name: str = "text") -> str:
    r"""Text every backend can store and the encoder can read.

    Surrogate pairs written as two code points become the character they
    encode; a lone surrogate (from broken UTF-16 or JSON) and NUL (which
    PostgreSQL's JSON cannot hold) become U+FFFD, with a warning. Everything
    else, control characters and every script included, is kept as given.

    Example:
        >>> clean_text("tea " + chr(0xD83C) + chr(0xDF75)) == "tea \N{TEACUP WITHOUT HANDLE}"
        True
        >>> clean_text("a" + chr(0) + "b" + chr(0xD800)) == "a\ufffdb\ufffd"
        True
    """
    if "\x00" not in value:
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            pass
    cleaned = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace").replace("\x00", "\ufffd")
    logger.warning("%s: lone surrogates or NUL characters replaced by U+FFFD", name)
    return cleaned


def clean_metadata(metadata: Mapping[str, Any], name: str = "metadata") -> dict[str, Any]:
    """Metadata as JSON that every backend stores alike, checked before anything is written.

    Allowed: strings (cleaned as by :func:`clean_text`), 64-bit ``int``,
    finite ``float``, ``bool``, ``None``, lists (and tuples, stored as lists) and
    dicts with string keys, nested. One conversion: a ``datetime`` or
    ``date`` becomes its ISO-8601 string (``value.isoformat()``). Anything
    else (NaN or infinity, bytes, sets, other objects, non-string keys) is
    refused, naming where it sits: SQLite would store some of it silently
    changed and PostgreSQL would refuse it, so a memory could not move
    between them.

    Args:
        metadata: the mapping given to ``add_turn``.
        name: how errors name it.

    Returns:
        A new dict of JSON values.

    Raises:
        ValueError: for a value that is not JSON (the message names its key).

    Example:
        >>> import datetime as dt
        >>> clean_metadata({"at": dt.date(2024, 5, 1), "tags": ("a", "b")})
        {'at': '2024-05-01', 'tags': ['a', 'b']}
        >>> clean_metadata({"score": float("nan")})
        Traceback (most recent call last):
        ValueError: metadata['score'] is NaN, not a finite number; JSON numbers are finite (pass None or a string).
    """
    if not isinstance(metadata, Mapping):
        raise TypeError(f"{name} must be a mapping (e.g. {{'source_id': 'D1:3'}}).")
    return _json_value(metadata, name)  # type: ignore[no-any-return]


def _json_value(value: Any, where: str) -> Any:
    if isinstance(value, str):
        return clean_text(value, where)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise ValueError(f"{where} is {value}, beyond 64-bit integers (SQLite's JSON limit); pass it as a string.")
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            shown = "NaN" if math.isnan(value) else str(value)
            raise ValueError(
                f"{where} is {shown}, not a finite number; JSON numbers are finite (pass None or a string)."
            )
        return float(value)
    if isinstance(value, _dt.date):  # datetime too: the one conversion
        return value.isoformat()
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(
                    f"{where} has the key {key!r} ({type(key).__name__}); JSON object keys are strings "
                    f"(use {str(key)!r})."
                )
            out[clean_text(key, where)] = _json_value(item, f"{where}[{key!r}]")
        return out
    if isinstance(value, (list, tuple)):
        if value and all(type(x) is float for x in value) and all(map(math.isfinite, value)):
            return list(value)  # a vector: no per-number walk
        return [_json_value(item, f"{where}[{i}]") for i, item in enumerate(value)]
    raise ValueError(
        f"{where} is a {type(value).__name__}, not a JSON value; pass str, int, finite float, bool, None, "
        "a list or a dict with string keys (a datetime or date is stored as its ISO string)."
    )


#: The time fields of stored items (pages, segments, facts, write events, the user's clock).
_TIME_FIELDS = ("timestamp", "clock", "created_at", "updated_at", "last_access")


def _check_kind(kind: Any) -> FactKindArg:
    if kind not in ("user", "agent"):
        raise ValueError(f"kind must be 'user' or 'agent', got {kind!r}.")
    return kind  # type: ignore[no-any-return]


def _sqlite_purge(store: BaseStore) -> Callable[[], None] | None:
    """For an ``SqliteStore``: deleted rows are overwritten, and the purge after a user's deletion empties the WAL.

    The connection gets ``PRAGMA secure_delete=ON`` (SQLite overwrites deleted
    content, freed pages included, with zeros); the purge runs
    ``PRAGMA wal_checkpoint(TRUNCATE)``, so no copy of the deleted text stays in
    the ``-wal`` file. ``None`` for other stores.
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


def _dimension(embeddings: Embeddings) -> int:
    dim = getattr(embeddings, "dimension", None)
    if isinstance(dim, int) and dim > 0:
        return dim
    return int(encode_texts(embeddings, ["dimension probe"]).shape[1])


class MemoryOS:
    """Hierarchical memory (STM → MTM → LPM) with AMU-controlled long-term writes.

    Args:
        store: any LangGraph ``BaseStore`` (default: a new ``InMemoryStore``).
        embeddings: a LangChain ``Embeddings`` (default: the offline MiniLM).
        controller: the judgement maker (default: :class:`HeuristicController`,
            offline and deterministic).
        config: every knob, with the papers' defaults.
        model: a chat model (a ``BaseChatModel`` or an ``init_chat_model``
            name) for an :class:`~langchain_memoryos.controllers.llm.LLMController`;
            not together with ``controller``.
        write_mode: ``"sync"`` (default): ``add_turn`` returns when the turn is
            stored. ``"background"``: ``add_turn`` validates the turn, queues it
            and returns (``report.queued``); each user's turns are written in
            order on worker threads, users in parallel; any read or direct
            write of a user first waits for that user's queue; ``flush()``
            waits for all and reports failures; ``close()`` drains the queue.
        background_workers: users written in parallel in background mode.

    Example:
        >>> memory = MemoryOS()
        >>> report = memory.add_turn("I moved to Denver.", "Nice!", user_id="u1")
        >>> [p.user_input for p in memory.get_stm("u1")]
        ['I moved to Denver.']
        >>> "Denver" in memory.retrieve("Where do I live?", user_id="u1").to_prompt()
        True
    """

    def __init__(
        self,
        store: BaseStore | None = None,
        *,
        embeddings: Embeddings | None = None,
        controller: MemoryController | None = None,
        config: MemoryOSConfig | None = None,
        model: Any = None,
        write_mode: str = "sync",
        background_workers: int = 4,
        process_locks: ProcessLocks | None = None,
    ) -> None:
        if store is not None and not isinstance(store, BaseStore):
            raise TypeError(
                f"store must be a LangGraph BaseStore (InMemoryStore, SqliteStore, PostgresStore …), "
                f"got {type(store).__name__}."
            )
        if config is not None and not isinstance(config, MemoryOSConfig):
            raise TypeError("config must be a MemoryOSConfig.")
        self.config = config or MemoryOSConfig()
        self.store: BaseStore = store if store is not None else InMemoryStore()
        self.embeddings = resolve_embeddings(embeddings)
        model_name = getattr(self.embeddings, "model_name", None) or getattr(self.embeddings, "model", None)
        self.settings = EngineSettings.build(self.config, model_name if isinstance(model_name, str) else None)
        if model is not None and controller is not None:
            raise ValueError("pass either model= (an LLMController is built for it) or controller=, not both.")
        if model is not None:
            from langchain_memoryos.controllers.llm import LLMController

            controller = LLMController(model, judgement_timeout_seconds=self.config.judgement_timeout_seconds)
        if controller is None:
            controller = HeuristicController(self.settings.thresholds, page_keywords=self.config.page_keywords)
        elif hasattr(controller, "adopt_thresholds"):
            controller.adopt_thresholds(self.settings.thresholds)
        if not isinstance(controller, MemoryController):
            raise TypeError(
                "controller must implement the MemoryController protocol (see "
                "langchain_memoryos.controllers.base), e.g. HeuristicController()."
            )
        self.controller: MemoryController = controller
        self.repository = MemoryRepository(
            _dimension(self.embeddings), locks=process_locks, embed_chars=self.config.max_embedding_chars
        )
        #: judgements made under the user's lock are never model calls: the controller itself when it is local
        #: (the offline default), else its fallback
        self._local = bool(getattr(controller, "local", False))
        offline = controller if self._local else getattr(controller, "fallback", None)
        if offline is None:
            offline = HeuristicController(self.settings.thresholds, page_keywords=self.config.page_keywords)
        self._services = Services(
            self.store,
            self.embeddings,
            self.controller,
            offline=offline,
            lease=self.repository.lease,
            alease=self.repository.alease,
            purge=_sqlite_purge(self.store),
        )
        self._closers: list[Callable[[], None]] = []
        self._write_graph: Any = None
        if write_mode not in ("sync", "background"):
            raise ValueError(f"write_mode must be 'sync' or 'background', got {write_mode!r}.")
        self.write_mode = write_mode
        self._writer: BackgroundWriter | None = (
            BackgroundWriter(background_workers) if write_mode == "background" else None
        )
        self._read_graph: Any = None
        self._backend: Any = None

    # -- construction ----------------------------------------------------------
    @classmethod
    def from_sqlite(cls, path: str | Path, **kwargs: Any) -> MemoryOS:
        """A memory persisted in an SQLite file (LangGraph's ``SqliteStore``).

        The connection uses WAL mode; call :meth:`close` (or use ``with``) when done.

        Args:
            path: the database file (``":memory:"`` for a throwaway database).
            **kwargs: ``embeddings``, ``controller``, ``config`` as for ``MemoryOS``.

        Returns:
            The memory.

        Example:
            >>> import tempfile, os
            >>> path = os.path.join(tempfile.mkdtemp(), "memory.db")
            >>> with MemoryOS.from_sqlite(path) as memory:
            ...     _ = memory.add_turn("I love chess.", "Great!", user_id="u")
            >>> with MemoryOS.from_sqlite(path) as memory:
            ...     len(memory.get_stm("u"))
            1
        """
        from langgraph.store.sqlite import SqliteStore

        from langchain_memoryos.store.filelocks import FileLocks

        conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        locks = None if str(path) == ":memory:" else FileLocks(f"{path}.locks")
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            store = SqliteStore(conn)
            store.setup()
            memory = cls(store, process_locks=locks, **kwargs)
        except BaseException:
            conn.close()
            if locks is not None:
                locks.close()
            raise
        memory._closers.append(conn.close)
        if locks is not None:
            memory._closers.append(locks.close)
        return memory

    @classmethod
    def from_postgres(
        cls, conn_string: str, *, setup: bool = True, max_connections: int = 8, **kwargs: Any
    ) -> MemoryOS:
        """A memory in PostgreSQL, shared by many processes (LangGraph's ``PostgresStore``, extra ``postgres``).

        Every turn is written in one transaction; writes of one user are
        serialized across processes by an advisory lock, and each process's
        FAISS caches reload when another process has written the user (a
        version stamp in the store). No pgvector is needed: the store is used
        without a vector index. Use it as a context manager (``with`` or
        ``async with``) or call :meth:`close`.

        Args:
            conn_string: e.g. ``"postgresql://user:pw@127.0.0.1:5432/db"``.
            setup: create or migrate the tables first (idempotent); pass
                ``False`` and call :meth:`setup` yourself to run it once at deploy time.
            max_connections: connections of this process's pool.
            **kwargs: as for ``MemoryOS`` (``embeddings``, ``controller``, ``model``, ``config``, ``write_mode``).

        Returns:
            The memory.

        Raises:
            ImportError: without the ``postgres`` extra.

        Example:
            >>> MemoryOS.from_postgres("")  # doctest: +IGNORE_EXCEPTION_DETAIL
            Traceback (most recent call last):
            ValueError: from_postgres needs a connection string ...
        """
        from langchain_memoryos.store.postgres import open_postgres

        backend = open_postgres(conn_string, max_connections=max_connections, setup=setup)
        try:
            memory = cls(backend.store, process_locks=backend.locks, **kwargs)
        except BaseException:
            backend.close()
            raise
        memory._backend = backend
        memory._closers.append(backend.close)
        return memory

    @classmethod
    async def afrom_postgres(cls, conn_string: str, **kwargs: Any) -> MemoryOS:
        """Async twin of :meth:`from_postgres`: connects and migrates without blocking the event loop.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS.afrom_postgres(""))  # doctest: +IGNORE_EXCEPTION_DETAIL
            Traceback (most recent call last):
            ValueError: from_postgres needs a connection string ...
        """
        return await asyncio.to_thread(cls.from_postgres, conn_string, **kwargs)

    async def asetup(self) -> None:
        """Async twin of :meth:`setup`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().asetup())
        """
        await asyncio.to_thread(self.setup)

    def setup(self) -> None:
        """Create or migrate the store's tables (PostgreSQL and SQLite; a no-op for in-memory stores).

        Example:
            >>> MemoryOS().setup()
        """
        if self._backend is not None:
            self._backend.setup()
        elif hasattr(self.store, "setup"):
            self.store.setup()

    async def aclose(self) -> None:
        """Async twin of :meth:`close` (waits for queued background writes without blocking the loop).

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aclose())
        """
        await asyncio.to_thread(self.close)

    async def __aenter__(self) -> MemoryOS:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def close(self) -> None:
        """Close what :meth:`from_sqlite` opened (no-op otherwise).

        Example:
            >>> MemoryOS().close()
        """
        if self._writer is not None:
            self._writer.close()  # drains the queue first
        while self._closers:
            self._closers.pop()()

    def __enter__(self) -> MemoryOS:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- graphs ------------------------------------------------------------------
    @property
    def write_graph(self) -> Any:
        """The write path as a compiled LangGraph ``StateGraph`` (``add_turn`` runs it).

        Nodes: ``stm_append``, ``chain_link``, ``mtm_insert``, ``heat_evict``,
        ``persona_promote``, ``write_gate``, ``relation_judge``, ``fuse``,
        ``lpm_commit``; its state is ``{"turn": TurnWrite(...)}``. Use
        ``add_turn`` / ``aadd_turn`` to write (they hold the user's lock and
        validate the input); draw it with ``get_graph().draw_mermaid()``.

        Example:
            >>> "persona_promote" in MemoryOS().write_graph.get_graph().nodes
            True
        """
        if self._write_graph is None:
            from langchain_memoryos.graph.write import build_write_graph

            self._write_graph = build_write_graph(
                self.repository, self.settings, self._services, self._turn_from, self._settle_turn, self._asettle_turn
            )
        return self._write_graph

    @property
    def read_graph(self) -> Any:
        """The read path as a compiled LangGraph ``StateGraph`` (``retrieve`` runs it).

        Nodes: ``retrieve_stm``, ``retrieve_lpm``, ``retrieve_mtm``,
        ``assemble_context``; its state is ``{"read": ReadRun(...)}``.

        Example:
            >>> "assemble_context" in MemoryOS().read_graph.get_graph().nodes
            True
        """
        if self._read_graph is None:
            from langchain_memoryos.graph.read import build_read_graph

            self._read_graph = build_read_graph(
                self.repository, self.settings, self._services, self._read_from, self._lease, self._alease
            )
        return self._read_graph

    def _turn_from(self, state: Mapping[str, Any], config: Any) -> TurnWrite:
        """A turn from the write graph's plain input fields (validated; the user from the run if not given)."""
        from langchain_memoryos.graph.runtime import resolve_thread_id, resolve_user_id

        user = state.get("user_id") or resolve_user_id(config)
        thread = state.get("thread_id") or resolve_thread_id(config)
        _, turn = self._add_turn_step(
            state.get("user_input", ""),
            state.get("agent_response", ""),
            user,
            thread,
            state.get("timestamp"),
            state.get("metadata"),
            state.get("turn_id"),
        )
        return turn

    def _read_from(self, state: Mapping[str, Any], config: Any) -> ReadRun:
        """A retrieval from the read graph's ``query`` input (the user from the run if not given)."""
        from langchain_memoryos.graph.runtime import resolve_thread_id, resolve_user_id

        user = _check_user(state.get("user_id") or resolve_user_id(config))
        thread = _check_thread(state.get("thread_id") or resolve_thread_id(config))
        return ReadRun(user, thread, _check_text("query", state.get("query", "")))

    def _lease(self, user: str) -> UserLease:
        """The user's write lock for a graph run, after the user's queued background writes."""
        self._settle(user)
        return self.repository.lease(user)

    async def _alease(self, user: str) -> UserLease:
        await self._asettle(user)
        return await self.repository.alease(user)

    @staticmethod
    def _invoke(graph: Any, key: str, payload: TurnWrite | ReadRun) -> None:
        """Run one of the memory's graphs on a payload; the lease is released whatever happens."""
        with _lease_of(payload):
            graph.invoke({key: payload}, dict(_GRAPH_CONFIG), stream_mode="updates")

    @staticmethod
    async def _ainvoke(graph: Any, key: str, payload: TurnWrite | ReadRun) -> None:
        with _lease_of(payload):
            await graph.ainvoke({key: payload}, dict(_GRAPH_CONFIG), stream_mode="updates")

    # -- background writes -------------------------------------------------------
    def _write_turn(self, user: str, turn: TurnWrite) -> None:
        run_sync(embed_turn(self.settings, turn), self._services)  # the encoder never holds the user's lock
        self._invoke(self.write_graph, "turn", turn)  # stm_append takes the lock (never during a model call)

    def _queue(self, user: str, turn: TurnWrite) -> WriteReport:
        assert self._writer is not None
        turn.queued = True
        self._writer.submit(user, lambda: self._write_turn(user, turn))
        return WriteReport(page_id=turn_page(turn).id, queued=True)

    def _settle(self, user: str) -> None:
        """Wait for the user's queued turns (background mode), so reads see them; never from the writer itself."""
        if self._writer is not None and self._writer.pending(user):
            self._writer.wait(user)

    async def _asettle(self, user: str) -> None:
        if self._writer is not None and self._writer.pending(user):
            await asyncio.to_thread(self._writer.wait, user)

    def _settle_turn(self, turn: TurnWrite) -> None:
        """Before a turn through the write graph: wait for the user's queued turns, unless it is one of them."""
        if not turn.queued:
            self._settle(turn.user_id)

    async def _asettle_turn(self, turn: TurnWrite) -> None:
        if not turn.queued:
            await self._asettle(turn.user_id)

    def flush(self, user_id: str | None = None) -> None:
        """Wait until queued background writes are stored (all users, or one).

        Raises:
            BackgroundWriteError: a queued write failed (its turn is not stored).

        Example:
            >>> m = MemoryOS(write_mode="background")
            >>> m.add_turn("I moved to Oslo.", "Nice!", user_id="u").queued
            True
            >>> m.flush(); len(m.get_stm("u"))
            1
            >>> m.close()
        """
        if self._writer is not None:
            self._writer.flush(None if user_id is None else _check_user(user_id))

    async def aflush(self, user_id: str | None = None) -> None:
        """Async twin of :meth:`flush`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aflush())
        """
        if self._writer is not None:
            await asyncio.to_thread(self.flush, user_id)

    # -- drivers -----------------------------------------------------------------
    def _drive(self, user_id: str, step: Step[T]) -> T:
        """Run a step that takes the user's lock itself (``Lock`` effects), after the user's queued writes."""
        self._settle(user_id)
        return run_sync(step, self._services)

    async def _adrive(self, user_id: str, step: Step[T]) -> T:
        await self._asettle(user_id)
        return await run_async(step, self._services)

    def _run(self, user_id: str, step: Step[T]) -> T:
        self._settle(user_id)
        with self.repository.locked(user_id):  # drops the cached state on an error
            return run_sync(step, self._services)

    async def _arun(self, user_id: str, step: Step[T]) -> T:
        await self._asettle(user_id)
        async with self.repository.alocked(user_id):  # drops the cached state on an error
            return await run_async(step, self._services)

    # -- steps (shared by the sync and async methods) ------------------------
    def _timestamp(self, value: Any) -> _dt.datetime:
        """A caller's timestamp in UTC, refused beyond ``max_clock_skew_seconds`` ahead of the wall clock."""
        return check_timestamp(value, self.config.max_clock_skew_seconds)

    def _add_turn_step(
        self,
        user_input: Any,
        agent_response: Any,
        user_id: Any,
        thread_id: Any,
        timestamp: Any,
        metadata: Mapping[str, Any] | None,
        turn_id: str | None,
    ) -> tuple[str, TurnWrite]:
        user = _check_user(user_id)
        thread = _check_thread(thread_id)
        ui = _check_text("user_input", user_input)
        ar = _check_text("agent_response", agent_response)
        if not ui.strip() and not ar.strip():
            raise ValueError("an empty turn: user_input and agent_response are both empty.")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise TypeError("metadata must be a mapping (e.g. {'source_id': 'D1:3'}).")
        ts = self._timestamp(timestamp)
        meta = clean_metadata(metadata) if metadata is not None else None
        return user, TurnWrite(user, thread, ui, ar, ts, meta, turn_id, optimistic=not self._local)

    def _add_fact_step(
        self, text: Any, user_id: Any, kind: Any, timestamp: Any, source: str
    ) -> tuple[str, Step[list[WriteEvent]]]:
        user = _check_user(user_id)
        fact_kind = _check_kind(kind)
        body = _check_text("text", text)
        if not body.strip():
            raise ValueError("add_fact needs a non-empty fact text.")
        when = self._timestamp(timestamp) if timestamp is not None else None

        def work(state: UserState) -> Step[list[WriteEvent]]:
            parsed: ParsedRecords = yield ParseRecords(body, fact_kind)
            now = when or state.clock or ensure_utc(None)
            if when is not None:
                state.advance_clock(when)
            records = parsed.records or [MemoryRecord(kind=fact_kind, summary="", personal=False)]
            events: list[WriteEvent] = []
            for record in records:
                record.kind = fact_kind
                events += yield from write_record(
                    state, record, self.settings.amu, now=now, source=source, fallback=parsed.usage.fallback
                )
            return events

        return user, write_user(self.repository, user, work, optimistic=not self._local)

    def _correction_step(self, user_id: Any, fact_id: Any, summary: str | None) -> tuple[str, Step[WriteEvent]]:
        user = _check_user(user_id)
        if not isinstance(fact_id, str) or not fact_id:
            raise ValueError(f"fact_id must be a non-empty string (an id from list_facts), got {fact_id!r}.")
        text = None if summary is None else _check_text("summary", summary).strip()
        if text == "":
            raise ValueError("update_fact needs a non-empty summary; use delete_fact to forget a fact.")

        def work(state: UserState) -> Step[WriteEvent]:
            now = state.clock or ensure_utc(None)
            if text is None:
                return (yield from forget_fact(self.repository, state, fact_id, now=now))
            return (yield from edit_fact(state, fact_id, text, now=now))

        # an edit asks the controller (a model call with an LLM): never under the user's lock
        return user, write_user(self.repository, user, work, optimistic=not self._local)

    def _state_step(self, user_id: Any) -> tuple[str, Step[UserState]]:
        user = _check_user(user_id)
        return user, self.repository.load(user)

    def _log_step(self, user_id: Any, limit: int | None) -> tuple[str, Step[list[WriteEvent]]]:
        user = _check_user(user_id)

        def step() -> Step[list[WriteEvent]]:
            yield from self.repository.finish_deletion(user)
            items = yield from self.repository.search_all(self.repository.namespace(user, "log"))
            events = [WriteEvent.from_dict(it.value) for it in sorted(items, key=lambda it: it.key)]
            return events[-limit:] if limit else events

        return user, step()

    def _export_step(self, user_id: Any) -> tuple[str, Step[dict[str, Any]]]:
        user = _check_user(user_id)

        def step() -> Step[dict[str, Any]]:
            yield from self.repository.finish_deletion(user)
            items = yield from self.repository.all_items(user)
            rows = [
                {"namespace": [decode_label(x) for x in it.namespace[2:]], "key": it.key, "value": it.value}
                for it in sorted(items, key=lambda it: (it.namespace, it.key))
            ]
            return {"format": "langchain-memoryos/1", "user_id": user, "items": rows}

        return user, step()

    def _import_step(self, data: Mapping[str, Any], user_id: str | None) -> tuple[str, Step[int]]:
        if data.get("format") != "langchain-memoryos/1":
            raise ValueError("not a langchain-memoryos export (format 'langchain-memoryos/1' expected).")
        user = _check_user(user_id or data.get("user_id"))

        rows = [(row, self._import_value(i, row)) for i, row in enumerate(data.get("items", []))]

        def step() -> Step[int]:
            yield from self.repository.finish_deletion(user)  # never import next to a half-deleted user's rows
            ops = tuple(
                PutOp(
                    (ROOT, encode_label(user), *(encode_label(x) for x in row["namespace"])),
                    str(row["key"]),
                    value,
                    index=False,
                )
                for row, value in rows
                if list(row["namespace"]) != ["deleting"]  # never a tombstone (an export has none)
            )
            yield StoreBatch(ops)
            self.repository.invalidate(user)
            return len(ops)

        return user, step()

    def _import_value(self, index: int, row: Any) -> dict[str, Any]:
        """An exported item's value, checked as ``add_turn`` checks its input, before anything is written.

        Values must be JSON (finite numbers; a ``datetime`` becomes its ISO
        string) and its times (``timestamp``, ``clock``, ``created_at``,
        ``updated_at``, ``last_access``) within ``max_clock_skew_seconds`` of
        the wall clock, so an export moves between backends unchanged and
        cannot set the conversation clock to year 9999.
        """
        if not isinstance(row, Mapping) or not isinstance(row.get("value"), Mapping):
            raise ValueError(f"import_user: item {index} has no 'value' object (not a memoryos export item).")
        where = f"import_user: item {index} ({'/'.join(map(str, row.get('namespace', [])))}/{row.get('key')})"
        value = clean_metadata(row["value"], f"{where} value")
        for name in _TIME_FIELDS:
            if value.get(name) is not None:
                try:
                    self._timestamp(value[name])
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"{where} {name}: {exc}") from None
        return value

    def _set_profile_step(self, user_id: Any, profile: str) -> tuple[str, Step[None]]:
        user = _check_user(user_id)
        text = _check_text("agent_profile", profile)

        def step() -> Step[None]:
            state = yield from self.repository.load(user)
            state.persona.agent_profile = text
            state.save_persona()
            yield StoreBatch(state.take_ops())

        return user, step()

    # -- writes ------------------------------------------------------------------
    def add_turn(
        self,
        user_input: str,
        agent_response: str = "",
        *,
        user_id: str,
        thread_id: str = "default",
        timestamp: Any = None,
        metadata: Mapping[str, Any] | None = None,
        turn_id: str | None = None,
    ) -> WriteReport:
        """Store one exchange and run everything it triggers (STM→MTM, evict, promote).

        Args:
            user_input: what the user said.
            agent_response: what the agent answered ("" for an unpaired turn).
            user_id: whose memory.
            thread_id: the conversation thread (STM is per thread).
            timestamp: when it happened (``datetime``, ISO string or POSIX seconds;
                default now; naive means UTC). The conversation clock is the
                latest timestamp; a time more than
                ``MemoryOSConfig.max_clock_skew_seconds`` ahead of this
                machine's clock is refused.
            metadata: kept on the page, as JSON (see :func:`clean_metadata`:
                finite numbers, string keys; a ``datetime`` is stored as its
                ISO string), the same on every backend; ``source_id`` (a
                string or a list) is returned by
                ``MemoryContext.source_ids()``; ``user_name`` and
                ``agent_name`` name the speakers: the page is then embedded,
                indexed and shown as "Ana: …" instead of "User: …".
            turn_id: an id that makes the write idempotent (default: derived from
                thread, timestamp and text).

        Returns:
            What happened (page key, moves, segments, AMU events).

        Raises:
            ValueError: for a missing user id, an empty turn, a timestamp out of
                range or too far ahead, or metadata that is not JSON; nothing is
                written then.

        Example:
            >>> MemoryOS().add_turn("Hi", "Hello", user_id="u", turn_id="t1").added
            True
            >>> MemoryOS().add_turn("Hi", "Hello", user_id="u", timestamp="9999-12-31T23:59:59")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ValueError: timestamp 9999-12-31T23:59:59+00:00 lies ... max_clock_skew_seconds ...
        """
        user, turn = self._add_turn_step(user_input, agent_response, user_id, thread_id, timestamp, metadata, turn_id)
        if self._writer is not None:
            return self._queue(user, turn)
        self._write_turn(user, turn)
        return turn.report

    async def aadd_turn(
        self,
        user_input: str,
        agent_response: str = "",
        *,
        user_id: str,
        thread_id: str = "default",
        timestamp: Any = None,
        metadata: Mapping[str, Any] | None = None,
        turn_id: str | None = None,
    ) -> WriteReport:
        """Async twin of :meth:`add_turn`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aadd_turn("Hi", "Hello", user_id="u")).added
            True
        """
        user, turn = self._add_turn_step(user_input, agent_response, user_id, thread_id, timestamp, metadata, turn_id)
        if self._writer is not None:
            return self._queue(user, turn)
        await run_async(embed_turn(self.settings, turn), self._services)  # the encoder never holds the user's lock
        await self._ainvoke(self.write_graph, "turn", turn)  # the entry node takes the lease
        return turn.report

    def add_fact(
        self, text: str, *, user_id: str, kind: FactKindArg = "user", timestamp: Any = None, source: str = "add_fact"
    ) -> list[WriteEvent]:
        """Send facts straight into the AMU write path.

        The controller parses the text into typed records, one fact each ("My
        name is Ana and I live in Lisbon" is two); every record passes the
        write-gate, candidate filtering, the relation-judge and the action rule.

        Args:
            text: the fact ("I'm vegan", "The user lives in Oslo", or for
                ``kind="agent"`` a trait such as "Answer in bullet points").
            user_id: whose memory.
            kind: ``"user"`` (knowledge base) or ``"agent"`` (agent traits).
            timestamp: decision time (default: the user's conversation clock;
                refused beyond ``max_clock_skew_seconds`` ahead of the wall clock).
            source: recorded on the write events.

        Returns:
            One write event per record (stored, discarded, updated or filtered,
            with a reason), followed by any capacity ``evicted`` events. Text
            with no fact yields one ``filtered`` event.

        Raises:
            ValueError: on an empty text, a bad ``kind`` or a bad ``timestamp``.

        Example:
            >>> m = MemoryOS()
            >>> [e.action for e in m.add_fact("I live in Oslo.", user_id="u")]
            ['stored']
            >>> [e.action for e in m.add_fact("I live in Oslo.", user_id="u")]
            ['discarded']
            >>> [e.action for e in m.add_fact("I moved to Bergen.", user_id="u")]
            ['updated']
        """
        user, step = self._add_fact_step(text, user_id, kind, timestamp, source)
        return self._drive(user, step)

    async def aadd_fact(
        self, text: str, *, user_id: str, kind: FactKindArg = "user", timestamp: Any = None, source: str = "add_fact"
    ) -> list[WriteEvent]:
        """Async twin of :meth:`add_fact`.

        Example:
            >>> import asyncio
            >>> [e.action for e in asyncio.run(MemoryOS().aadd_fact("I'm vegan.", user_id="u"))]
            ['stored']
        """
        user, step = self._add_fact_step(text, user_id, kind, timestamp, source)
        return await self._adrive(user, step)

    def update_fact(self, user_id: str, fact_id: str, summary: str) -> WriteEvent:
        """Correct a user fact or agent trait: new summary, re-embedded.

        Args:
            user_id: whose memory.
            fact_id: the id from :meth:`list_facts`.
            summary: the corrected statement, kept word for word.

        Returns:
            The ``edited`` write event (its reason quotes the old text).

        Raises:
            FactNotFoundError: when the user has no such fact.
            ValueError: on an empty summary.

        Example:
            >>> m = MemoryOS(); fid = m.add_fact("I live in Oslo.", user_id="u")[0].record.id
            >>> m.update_fact("u", fid, "The user lives in Bergen.").action
            'edited'
            >>> [f.summary for f in m.list_facts("u")]
            ['The user lives in Bergen.']
        """
        user, step = self._correction_step(user_id, fact_id, summary)
        return self._drive(user, step)

    async def aupdate_fact(self, user_id: str, fact_id: str, summary: str) -> WriteEvent:
        """Async twin of :meth:`update_fact`.

        Example:
            >>> import asyncio
            >>> m = MemoryOS(); fid = m.add_fact("I'm vegan.", user_id="u")[0].record.id
            >>> asyncio.run(m.aupdate_fact("u", fid, "The user is vegetarian.")).record.summary
            'The user is vegetarian.'
        """
        user, step = self._correction_step(user_id, fact_id, summary)
        return await self._adrive(user, step)

    def delete_fact(self, user_id: str, fact_id: str) -> WriteEvent:
        """Forget a user fact or agent trait, and scrub its text from the write log.

        Args:
            user_id: whose memory.
            fact_id: the id from :meth:`list_facts`.

        Returns:
            The ``deleted`` write event.

        Raises:
            FactNotFoundError: when the user has no such fact.

        Example:
            >>> m = MemoryOS(); fid = m.add_fact("I'm vegan.", user_id="u")[0].record.id
            >>> m.delete_fact("u", fid).action, m.list_facts("u")
            ('deleted', [])
            >>> [e.record.summary for e in m.write_log("u")]
            ['[deleted]', '[deleted]']
        """
        user, step = self._correction_step(user_id, fact_id, None)
        return self._drive(user, step)

    async def adelete_fact(self, user_id: str, fact_id: str) -> WriteEvent:
        """Async twin of :meth:`delete_fact`.

        Example:
            >>> import asyncio
            >>> m = MemoryOS(); fid = m.add_fact("I'm vegan.", user_id="u")[0].record.id
            >>> asyncio.run(m.adelete_fact("u", fid)).action
            'deleted'
        """
        user, step = self._correction_step(user_id, fact_id, None)
        return await self._adrive(user, step)

    def set_agent_profile(self, user_id: str, profile: str) -> None:
        """Set the agent profile (the assistant's role and character) for one user.

        Example:
            >>> m = MemoryOS(); m.set_agent_profile("u", "A terse chess coach.")
            >>> m.get_persona("u").agent_profile
            'A terse chess coach.'
        """
        user, step = self._set_profile_step(user_id, profile)
        self._run(user, step)

    async def aset_agent_profile(self, user_id: str, profile: str) -> None:
        """Async twin of :meth:`set_agent_profile`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aset_agent_profile("u", "A coach."))
        """
        user, step = self._set_profile_step(user_id, profile)
        await self._arun(user, step)

    # -- reads -------------------------------------------------------------------
    def retrieve(self, query: str, *, user_id: str, thread_id: str = "default") -> MemoryContext:
        """Retrieve the memory context for a query (no model call).

        Args:
            query: the user's message or question.
            user_id: whose memory.
            thread_id: the thread whose STM is included.

        Returns:
            The context (``to_prompt()``, ``to_system_message()``, ``source_ids()``).

        Example:
            >>> ctx = MemoryOS().retrieve("anything?", user_id="new-user")
            >>> ctx.stm, ctx.pages, ctx.user_facts
            ([], [], [])
        """
        user = _check_user(user_id)
        run = ReadRun(user, _check_thread(thread_id), _check_text("query", query))
        self._invoke(self.read_graph, "read", run)  # the entry node takes the lease
        assert run.ctx is not None
        return run.ctx

    async def aretrieve(self, query: str, *, user_id: str, thread_id: str = "default") -> MemoryContext:
        """Async twin of :meth:`retrieve`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aretrieve("hi", user_id="u")).stm
            []
        """
        user = _check_user(user_id)
        run = ReadRun(user, _check_thread(thread_id), _check_text("query", query))
        await self._ainvoke(self.read_graph, "read", run)  # the entry node takes the lease
        assert run.ctx is not None
        return run.ctx

    def _state(self, user_id: Any) -> UserState:
        user, step = self._state_step(user_id)
        return self._run(user, step)

    async def _astate(self, user_id: Any) -> UserState:
        user, step = self._state_step(user_id)
        return await self._arun(user, step)

    def _stm_step(self, user_id: Any, thread_id: Any) -> tuple[str, Step[list[DialoguePage]]]:
        user = _check_user(user_id)
        thread = _check_thread(thread_id)

        def step() -> Step[list[DialoguePage]]:
            state = yield from self.repository.load(user)
            pages = yield from self.repository.load_thread(state, thread)
            return copy.deepcopy(pages)

        return user, step()

    def get_stm(self, user_id: str, thread_id: str = "default") -> list[DialoguePage]:
        """The thread's short-term pages, oldest first.

        Example:
            >>> MemoryOS().get_stm("u")
            []
        """
        return self._run(*self._stm_step(user_id, thread_id))

    async def aget_stm(self, user_id: str, thread_id: str = "default") -> list[DialoguePage]:
        """Async twin of :meth:`get_stm`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aget_stm("u"))
            []
        """
        return await self._arun(*self._stm_step(user_id, thread_id))

    def _threads_step(self, user_id: Any) -> tuple[str, Step[list[str]]]:
        user = _check_user(user_id)

        def step() -> Step[list[str]]:
            state = yield from self.repository.load(user)
            return sorted(thread for thread, pages in state.stm.items() if pages)

        return user, step()

    def list_threads(self, user_id: str) -> list[str]:
        """The user's threads that have short-term pages, sorted.

        Example:
            >>> m = MemoryOS(); _ = m.add_turn("hi", "hello", user_id="u", thread_id="b")
            >>> m.list_threads("u")
            ['b']
        """
        return self._run(*self._threads_step(user_id))

    async def alist_threads(self, user_id: str) -> list[str]:
        """Async twin of :meth:`list_threads`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().alist_threads("u"))
            []
        """
        return await self._arun(*self._threads_step(user_id))

    def _clear_stm_step(self, user_id: Any, thread_id: Any) -> tuple[str, Step[int]]:
        user = _check_user(user_id)
        thread = _check_thread(thread_id)

        def step() -> Step[int]:
            state = yield from self.repository.load(user)
            yield from self.repository.load_thread(state, thread)
            removed = state.stm_clear(thread)
            yield StoreBatch(state.take_ops())
            return len(removed)

        return user, step()

    def clear_stm(self, user_id: str, thread_id: str = "default") -> int:
        """Forget one thread's short-term pages; other threads, MTM and LPM are kept.

        What earlier turns of the thread already gave MTM and LPM stays there;
        the cleared pages are not moved to MTM.

        Returns:
            How many pages were removed.

        Example:
            >>> m = MemoryOS()
            >>> _ = m.add_turn("hi", "hello", user_id="u", thread_id="a")
            >>> m.clear_stm("u", "a"), m.get_stm("u", "a")
            (1, [])
        """
        return self._run(*self._clear_stm_step(user_id, thread_id))

    async def aclear_stm(self, user_id: str, thread_id: str = "default") -> int:
        """Async twin of :meth:`clear_stm`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aclear_stm("u"))
            0
        """
        return await self._arun(*self._clear_stm_step(user_id, thread_id))

    def list_segments(self, user_id: str) -> list[Segment]:
        """Mid-term segments with heat at the conversation clock, hottest first.

        Example:
            >>> MemoryOS().list_segments("u")
            []
        """
        return _segments_of(self._state(user_id), self.config)

    async def alist_segments(self, user_id: str) -> list[Segment]:
        """Async twin of :meth:`list_segments`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().alist_segments("u"))
            []
        """
        return _segments_of(await self._astate(user_id), self.config)

    def list_pages(self, user_id: str, segment_id: str | None = None) -> list[DialoguePage]:
        """Mid-term pages (of one segment, or all), oldest first.

        Example:
            >>> MemoryOS().list_pages("u")
            []
        """
        state = self._state(user_id)
        pages = [p for p in state.pages.values() if segment_id is None or p.segment_id == segment_id]
        return copy.deepcopy(sorted(pages, key=lambda p: (p.timestamp, p.id)))

    def list_facts(self, user_id: str, kind: FactKindArg = "user") -> list[MemoryRecord]:
        """User facts (``kind="user"``) or agent traits (``kind="agent"``), oldest first.

        Example:
            >>> m = MemoryOS(); _ = m.add_fact("I'm vegan.", user_id="u")
            >>> [f.summary for f in m.list_facts("u")]
            ['The user is vegan.']
        """
        facts = self._state(user_id).facts[_check_kind(kind)]
        return copy.deepcopy(sorted(facts.values(), key=lambda r: (r.created_at, r.id)))

    async def alist_facts(self, user_id: str, kind: FactKindArg = "user") -> list[MemoryRecord]:
        """Async twin of :meth:`list_facts`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().alist_facts("u"))
            []
        """
        facts = (await self._astate(user_id)).facts[_check_kind(kind)]
        return copy.deepcopy(sorted(facts.values(), key=lambda r: (r.created_at, r.id)))

    def get_persona(self, user_id: str) -> Persona:
        """The user's persona (profile, traits, agent profile).

        Example:
            >>> MemoryOS().get_persona("u").user_profile
            {}
        """
        return _persona_of(self._state(user_id), self.config)

    async def aget_persona(self, user_id: str) -> Persona:
        """Async twin of :meth:`get_persona`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aget_persona("u")).user_traits
            {}
        """
        return _persona_of(await self._astate(user_id), self.config)

    def write_log(self, user_id: str, limit: int | None = None) -> list[WriteEvent]:
        """The AMU write events of a user, oldest first (the last ``limit`` if given).

        Example:
            >>> m = MemoryOS(); _ = m.add_fact("Book a table.", user_id="u")
            >>> [e.action for e in m.write_log("u")]
            ['filtered']
        """
        user, step = self._log_step(user_id, limit)
        return self._run(user, step)

    async def awrite_log(self, user_id: str, limit: int | None = None) -> list[WriteEvent]:
        """Async twin of :meth:`write_log`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().awrite_log("u"))
            []
        """
        user, step = self._log_step(user_id, limit)
        return await self._arun(user, step)

    def _check_step(self, user_id: Any, *, repair: bool) -> tuple[str, Step[list[str]]]:
        from langchain_memoryos.pipeline.invariants import check_state, repair_state

        user = _check_user(user_id)

        def step() -> Step[list[str]]:
            self.repository.invalidate(user)  # judge what the store holds, not this process's cache
            state = yield from self.repository.load(user)
            if not repair:
                return check_state(state, self.config)
            fixes = repair_state(state, self.config)
            if state.completed_deletion:
                fixes.insert(0, f"user: finished an interrupted delete_user ({state.completed_deletion} rows deleted)")
            yield StoreBatch(state.take_ops())
            return fixes

        return user, step()

    def check(self, user_id: str) -> list[str]:
        """The problems in a user's stored memory (an empty list when every invariant holds).

        Checks that every MTM page belongs to exactly one segment, that segment
        page lists point at existing pages, STM within capacity, segments within
        the maximum, fact capacities, and that every page, segment and fact has
        its vector.

        Example:
            >>> MemoryOS().check("u")
            []
        """
        return self._run(*self._check_step(user_id, repair=False))

    async def acheck(self, user_id: str) -> list[str]:
        """Async twin of :meth:`check`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().acheck("u"))
            []
        """
        return await self._arun(*self._check_step(user_id, repair=False))

    def repair(self, user_id: str) -> list[str]:
        """Fix what :meth:`check` reports that can be fixed; returns what was done.

        Example:
            >>> MemoryOS().repair("u")
            []
        """
        return self._run(*self._check_step(user_id, repair=True))

    async def arepair(self, user_id: str) -> list[str]:
        """Async twin of :meth:`repair`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().arepair("u"))
            []
        """
        return await self._arun(*self._check_step(user_id, repair=True))

    def stats(self, user_id: str) -> MemoryStats:
        """Counts over all of the user's threads.

        Example:
            >>> MemoryOS().stats("u").stm_pages
            0
        """
        return self._state(user_id).stats()

    async def astats(self, user_id: str) -> MemoryStats:
        """Async twin of :meth:`stats`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().astats("u")).segments
            0
        """
        return (await self._astate(user_id)).stats()

    # -- privacy -----------------------------------------------------------------
    def export_user(self, user_id: str) -> dict[str, Any]:
        """Everything stored for a user, as JSON-compatible data.

        Example:
            >>> m = MemoryOS(); _ = m.add_turn("Hi", "Hello", user_id="u")
            >>> len(m.export_user("u")["items"]) > 0
            True
        """
        user, step = self._export_step(user_id)
        return self._run(user, step)

    async def aexport_user(self, user_id: str) -> dict[str, Any]:
        """Async twin of :meth:`export_user`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aexport_user("u"))["items"]
            []
        """
        user, step = self._export_step(user_id)
        return await self._arun(user, step)

    def import_user(self, data: Mapping[str, Any], *, user_id: str | None = None) -> int:
        """Write an :meth:`export_user` dump back (to the same or another user id).

        Every item is checked before anything is written: values must be JSON
        (finite numbers; a ``datetime`` becomes its ISO string) and times within
        ``MemoryOSConfig.max_clock_skew_seconds`` of the wall clock, so an
        export from one backend imports into any other.

        Returns:
            The number of items written.

        Raises:
            ValueError: not an export, or an item that fails the checks (named).

        Example:
            >>> a = MemoryOS(); _ = a.add_turn("Hi", "Hello", user_id="u")
            >>> b = MemoryOS(); b.import_user(a.export_user("u")) > 0
            True
        """
        user, step = self._import_step(data, user_id)
        return self._run(user, step)

    def delete_user(self, user_id: str) -> int:
        """Delete every item of a user in every namespace.

        A deletion that has started always finishes. Its first transaction
        marks the user with a tombstone (and a new version stamp, so every
        process drops its cached copy of the user); the rows then go in batches
        and the tombstone last. If the deletion is interrupted (a crash,
        ``kill -9``, a store error), the next access to the user, in any
        process, finishes it first: reads (``retrieve``, ``get_stm``,
        ``list_facts``, ``export_user``, ``stats``, ``check`` …) see an empty
        user, ``repair()`` and ``delete_user`` finish the deletion, and a write
        first finishes it and then starts the user afresh — nothing of the old
        user is ever rebuilt from what was left.

        On SQLite the deleted rows are overwritten with zeros
        (``secure_delete``) and the write-ahead log is checkpointed with
        ``TRUNCATE``, so the text leaves the files. PostgreSQL keeps it in dead
        rows and its WAL until ``VACUUM``: see :meth:`vacuum`.

        Returns:
            The number of items deleted.

        Example:
            >>> m = MemoryOS(); _ = m.add_turn("Hi", "Hello", user_id="u")
            >>> m.delete_user("u") > 0, m.stats("u").stm_pages, m.export_user("u")["items"]
            (True, 0, [])
        """
        user = _check_user(user_id)
        return self._run(user, self.repository.delete_all(user))

    async def adelete_user(self, user_id: str) -> int:
        """Async twin of :meth:`delete_user`.

        Example:
            >>> import asyncio
            >>> m = MemoryOS(); _ = m.add_turn("Hi", "Hello", user_id="u")
            >>> asyncio.run(m.adelete_user("u")) > 0, m.get_stm("u")
            (True, [])
        """
        user = _check_user(user_id)
        return await self._arun(user, self.repository.delete_all(user))

    def vacuum(self, *, full: bool = False) -> str | None:
        """Reclaim the space of deleted rows, so that deleted text leaves the database files.

        * PostgreSQL (:meth:`from_postgres`): ``VACUUM store``: the dead rows
          (a deleted user's, the old versions of rewritten ones) and their TOAST
          data become free space that later writes overwrite. ``full=True`` runs
          ``VACUUM (FULL) store``: the table and its TOAST table are rewritten
          into new files at once, but the table is locked exclusively while it
          runs (every memory process waits). The server's WAL, WAL archives,
          replicas and backups keep old text until they are recycled or expire.
        * SQLite: ``VACUUM`` (the file is rebuilt, and shrinks), then the WAL is
          checkpointed. ``delete_user`` already overwrote the deleted rows and
          emptied the WAL.
        * Other stores: nothing.

        Args:
            full: PostgreSQL: ``VACUUM (FULL)``.

        Returns:
            The statement that was run (``None`` when there is none).

        Example:
            >>> import os, tempfile
            >>> with MemoryOS.from_sqlite(os.path.join(tempfile.mkdtemp(), "m.db")) as memory:
            ...     memory.vacuum()
            'VACUUM'
            >>> MemoryOS().vacuum() is None
            True
        """
        from langgraph.store.sqlite import SqliteStore

        if self._backend is not None:
            return str(self._backend.vacuum(full=full))
        if isinstance(self.store, SqliteStore):
            with self.store.lock:
                self.store.conn.execute("VACUUM")
                self.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return "VACUUM"
        return None

    async def avacuum(self, *, full: bool = False) -> str | None:
        """Async twin of :meth:`vacuum`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().avacuum()) is None
            True
        """
        return await asyncio.to_thread(self.vacuum, full=full)


def _segments_of(state: UserState, config: MemoryOSConfig) -> list[Segment]:
    clock = state.clock
    out = copy.deepcopy(list(state.segments.values()))
    for seg in out:
        seg.heat = segment_heat(seg, clock, config)
    out.sort(key=lambda s: (-s.heat, s.created_at, s.id))
    return out


def _persona_of(state: UserState, config: MemoryOSConfig) -> Persona:
    persona = copy.deepcopy(state.persona)
    if not persona.agent_profile:
        persona.agent_profile = config.agent_profile
    return persona
