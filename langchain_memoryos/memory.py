"""``MemoryOS``: the facade over the engine, sync and async.

Every public method builds one operation from its arguments (checked then,
before anything is read or written) and runs it with blocking or async IO:
the sync and async twins are two one-liners over the same operation
(:mod:`langchain_memoryos.operations`), as LangGraph's ``BaseStore`` builds
its methods on ``batch`` and ``abatch``. The methods are grouped by concern
(:mod:`langchain_memoryos.facade`, one module per module of operations); this
module holds the constructor, the views per agent, closing and flushing; the
backends' factories live in :mod:`langchain_memoryos.backends`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langchain_memoryos import backends
from langchain_memoryos.background import BackgroundWriter
from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.controllers.heuristic import HeuristicController
from langchain_memoryos.embeddings import encode_texts, resolve_embeddings
from langchain_memoryos.errors import InvalidInputError, InvalidTypeError
from langchain_memoryos.facade.bulk import BulkMethods
from langchain_memoryos.facade.facts import FactMethods
from langchain_memoryos.facade.forget import ForgetMethods
from langchain_memoryos.facade.inspection import InspectionMethods
from langchain_memoryos.facade.maintenance import MaintenanceMethods
from langchain_memoryos.facade.search import SearchMethods
from langchain_memoryos.facade.turns import TurnMethods
from langchain_memoryos.kernel.controller import MemoryController
from langchain_memoryos.kernel.effects import Services
from langchain_memoryos.operations import reader
from langchain_memoryos.operations.runtime import Runtime
from langchain_memoryos.operations.validation import clean_metadata, clean_text
from langchain_memoryos.schema.layout import scope_root
from langchain_memoryos.store.cache import shared_cache
from langchain_memoryos.store.changes import STORE_CHANGES
from langchain_memoryos.store.repository import MemoryRepository, ProcessLocks
from langchain_memoryos.store.settings import EngineSettings

__all__ = ["MemoryOS", "clean_metadata", "clean_text"]


def _dimension(embeddings: Embeddings) -> int:
    dim = getattr(embeddings, "dimension", None)
    if isinstance(dim, int) and dim > 0:
        return dim
    return int(encode_texts(embeddings, ["dimension probe"]).shape[1])


def _controller(controller: Any, model: Any, config: MemoryOSConfig, settings: EngineSettings) -> MemoryController:
    """The memory's controller: the one given, an ``LLMController`` of ``model``, or the offline default."""
    if model is not None and controller is not None:
        raise InvalidInputError("pass either model= (an LLMController is built for it) or controller=, not both.")
    if model is not None:
        from langchain_memoryos.controllers.llm import LLMController

        controller = LLMController(model, judgement_timeout_seconds=config.judgement_timeout_seconds)
    if controller is None:
        controller = HeuristicController(settings.thresholds, page_keywords=config.page_keywords)
    elif hasattr(controller, "adopt_thresholds"):
        controller.adopt_thresholds(settings.thresholds)
    if not isinstance(controller, MemoryController):
        raise InvalidTypeError(
            "controller must implement the MemoryController protocol (see "
            "langchain_memoryos.controllers.base), e.g. HeuristicController()."
        )
    return controller


class MemoryOS(
    TurnMethods, BulkMethods, FactMethods, ForgetMethods, SearchMethods, InspectionMethods, MaintenanceMethods
):
    """Hierarchical memory (STM → MTM → LPM) with AMU-controlled long-term writes.

    Args:
        store: any LangGraph ``BaseStore`` (default: a new ``InMemoryStore``).
        embeddings: a LangChain ``Embeddings`` object, or the name of the
            offline model (``"all-MiniLM-L6-v2"``, the default when ``None``).
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
        namespace_prefix: the labels every namespace of this memory starts with
            in the store (default ``("memoryos",)``), e.g. ``("myapp", "memory")``
            to keep it beside an application's own items. Memories sharing one
            store must not use prefixes of which one starts the other.
        agent_id: keep each user's memory apart per agent, as mem0 and langmem
            allow: what is written under one ``agent_id`` is invisible under
            another and without one (``None``, the default: one memory per user).
            :meth:`for_agent` gives the memory of another agent on the same store.
        process_locks: per-user locks between processes (set by
            :meth:`from_sqlite` and :meth:`from_postgres`; found for an
            ``SqliteStore``, ``PostgresStore`` or ``AsyncPostgresStore`` given
            directly: see :func:`~langchain_memoryos.backends.coherence`).

    Every ``MemoryOS`` over one store sees one memory: what each backend
    guarantees across objects, threads and processes is the table in
    docs/architecture.md ("One store, many memories").

    Example:
        >>> memory = MemoryOS()
        >>> report = memory.add_turn("I moved to Denver.", "Nice!", user_id="u1")
        >>> [p.user_input for p in memory.get_stm(user_id="u1")]
        ['I moved to Denver.']
        >>> "Denver" in memory.retrieve("Where do I live?", user_id="u1").to_prompt()
        True
    """

    def __init__(
        self,
        store: BaseStore | None = None,
        *,
        embeddings: Embeddings | str | None = None,
        controller: MemoryController | None = None,
        config: MemoryOSConfig | None = None,
        model: Any = None,
        write_mode: str = "sync",
        background_workers: int = 4,
        process_locks: ProcessLocks | None = None,
        namespace_prefix: tuple[str, ...] | None = None,
        agent_id: str | None = None,
    ) -> None:
        root = scope_root(namespace_prefix, agent_id)  # checked first: nothing is built for a bad scope
        if write_mode not in ("sync", "background"):
            raise InvalidInputError(f"write_mode must be 'sync' or 'background', got {write_mode!r}.")
        if store is not None and not isinstance(store, BaseStore):
            raise InvalidTypeError(
                f"store must be a LangGraph BaseStore (InMemoryStore, SqliteStore, PostgresStore …), "
                f"got {type(store).__name__}."
            )
        if config is not None and not isinstance(config, MemoryOSConfig):
            raise InvalidTypeError("config must be a MemoryOSConfig.")
        self.config = config or MemoryOSConfig()
        self.store: BaseStore = store if store is not None else InMemoryStore()
        self.embeddings = resolve_embeddings(embeddings)
        model_name = getattr(self.embeddings, "model_name", None) or getattr(self.embeddings, "model", None)
        self.settings = EngineSettings.build(self.config, model_name if isinstance(model_name, str) else None)
        self.controller: MemoryController = _controller(controller, model, self.config, self.settings)
        #: the scope: every namespace of this memory starts with ``scope_root(namespace_prefix, agent_id)``
        self.namespace_prefix: tuple[str, ...] = root[: len(root) - 2] if agent_id is not None else root
        self.agent_id = agent_id
        self._write_mode_args = (write_mode, background_workers)
        self._agents: dict[str, MemoryOS] = {}
        # how the memories over this store stay coherent (docs/architecture.md, "One store, many memories")
        found = (
            backends.coherence(self.store)
            if process_locks is None
            else backends.Coherence("given", shared=True, locks=process_locks)
        )
        dimension = _dimension(self.embeddings)
        self.repository = MemoryRepository(
            dimension,
            locks=found.locks,
            shared=found.shared,
            embed_chars=self.config.max_embedding_chars,
            root=root,
            chain_gap_seconds=self.config.chain_gap_seconds,
            cache=shared_cache(
                self.store, (root, dimension), self.config.max_cache_bytes, share_states=found.kind == "memory"
            ),
        )
        #: judgements made under the user's lock are never model calls: the controller itself when it is local
        #: (the offline default), else its fallback
        self._local = bool(getattr(self.controller, "local", False))
        offline = self.controller if self._local else getattr(self.controller, "fallback", None)
        if offline is None:
            offline = _controller(None, None, self.config, self.settings)
        self._services = Services(
            self.store,
            self.embeddings,
            self.controller,
            offline=offline,
            lease=self.repository.lease,
            alease=self.repository.alease,
            purge=backends.sqlite_purge(self.store),
            read_ahead=reader.page_reader,
            changes=STORE_CHANGES,
        )
        self._closers: list[Callable[[], None]] = list(found.closers)
        self.write_mode = write_mode
        writer = BackgroundWriter(background_workers) if write_mode == "background" else None
        self._runtime = Runtime(self.config, self.settings, self.repository, self._services, writer, local=self._local)
        self._backend: Any = None

    # -- construction ----------------------------------------------------------
    def for_agent(self, agent_id: str) -> MemoryOS:
        """The memory of one agent on the same store: each user's memory kept apart per agent.

        The view shares this memory's store, embeddings, controller, config and
        namespace prefix; what it stores is invisible to this memory and to
        every other agent's view (``MemoryOS(..., agent_id=...)`` builds the
        same scope). The same view is returned for the same id, and
        :meth:`close` closes the views.

        Args:
            agent_id: the agent (a non-empty string).

        Returns:
            The agent's memory.

        Example:
            >>> memory = MemoryOS()
            >>> coach = memory.for_agent("coach")
            >>> _ = coach.add_turn("I play chess.", "Nice!", user_id="ana")
            >>> len(coach.get_stm(user_id="ana")), len(memory.get_stm(user_id="ana"))
            (1, 0)
            >>> coach is memory.for_agent("coach"), coach.agent_id
            (True, 'coach')
        """
        scope_root(self.namespace_prefix, agent_id)  # the id checked before anything is built
        view = self._agents.get(agent_id)
        if view is None:
            write_mode, workers = self._write_mode_args
            view = type(self)(
                self.store,
                embeddings=self.embeddings,
                controller=self.controller,
                config=self.config,
                write_mode=write_mode,
                background_workers=workers,
                process_locks=self.repository._process_locks,
                namespace_prefix=self.namespace_prefix,
                agent_id=agent_id,
            )
            view._backend = self._backend
            self._agents[agent_id] = view
        return view

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
            ...     len(memory.get_stm(user_id="u"))
            1
        """
        return backends.from_sqlite(cls, path, **kwargs)

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
            langchain_memoryos.errors.InvalidInputError: from_postgres needs a connection string ...
        """
        return backends.from_postgres(cls, conn_string, setup=setup, max_connections=max_connections, **kwargs)

    @classmethod
    async def afrom_postgres(cls, conn_string: str, **kwargs: Any) -> MemoryOS:
        """Async twin of :meth:`from_postgres`: connects and migrates without blocking the event loop.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS.afrom_postgres(""))  # doctest: +IGNORE_EXCEPTION_DETAIL
            Traceback (most recent call last):
            langchain_memoryos.errors.InvalidInputError: from_postgres needs a connection string ...
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
        backends.setup(self.store, self._backend)

    async def aclose(self) -> None:
        """Async twin of :meth:`close` (waits for queued background writes without blocking the loop).

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aclose())
        """
        await asyncio.to_thread(self.close)

    @asynccontextmanager
    async def lifespan(self, app: Any = None) -> AsyncIterator[MemoryOS]:
        """A server's lifespan: the memory for the server's life, its queued writes stored at shutdown.

        Starlette and FastAPI call ``lifespan(app)`` and hold the context for
        the server's life: ``FastAPI(lifespan=memory.lifespan)``. On leaving,
        the memory waits for its queued background writes (without blocking
        the event loop) and closes its store (:meth:`aclose`). Servers such as
        uvicorn turn ``SIGTERM`` into a shutdown that leaves the lifespan, so
        a server stopped that way stores every queued turn.

        Args:
            app: the application (unused: the memory is the same for any).

        Yields:
            This memory.

        Example:
            >>> import asyncio
            >>> memory = MemoryOS(write_mode="background")
            >>> async def serve():  # as Starlette runs an application's lifespan
            ...     async with memory.lifespan(app=None) as m:
            ...         m.add_turn("I play the cello.", "Lovely.", user_id="u")  # queued
            >>> asyncio.run(serve()); len(memory.get_stm(user_id="u"))  # stored at shutdown
            1
        """
        try:
            yield self
        finally:
            await self.aclose()

    async def __aenter__(self) -> MemoryOS:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def close(self) -> None:
        """Store the queued background writes, then close what :meth:`from_sqlite` / :meth:`from_postgres` opened.

        Idempotent. ``with MemoryOS(...) as memory:`` calls it on leaving the
        block, ``async with`` calls :meth:`aclose`, and :meth:`lifespan` does
        for a server. In background mode, queued turns are also stored at
        interpreter exit without it (see :mod:`langchain_memoryos.background`
        for what a killed process loses); a write that failed is reported by
        :meth:`flush`, not by ``close``, which logs it.

        Example:
            >>> memory = MemoryOS(write_mode="background")
            >>> _ = memory.add_turn("I moved to Oslo.", "Nice!", user_id="u")
            >>> memory.close(); len(memory.get_stm(user_id="u"))  # the queue was drained first
            1
        """
        while self._agents:
            self._agents.popitem()[1].close()  # the agents' views (they own no connection)
        if self._runtime.writer is not None:
            self._runtime.writer.close()  # drains the queue first
        while self._closers:
            self._closers.pop()()

    def __enter__(self) -> MemoryOS:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- background writes -------------------------------------------------------
    def flush(self, *, user_id: str | None = None) -> None:
        """Wait until queued background writes are stored (all users, or one).

        Raises:
            BackgroundWriteError: a queued write failed (its turn is not stored).

        Example:
            >>> m = MemoryOS(write_mode="background")
            >>> m.add_turn("I moved to Oslo.", "Nice!", user_id="u").queued
            True
            >>> m.flush(); len(m.get_stm(user_id="u"))
            1
            >>> m.close()
        """
        self._runtime.flush(user_id)

    async def aflush(self, *, user_id: str | None = None) -> None:
        """Async twin of :meth:`flush`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aflush())
        """
        await self._runtime.aflush(user_id)
