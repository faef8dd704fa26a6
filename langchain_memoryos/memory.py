"""``MemoryOS``: the facade over the engine, sync and async.

Every public method builds one operation from its arguments (checked then,
before anything is read or written) and runs it with blocking or async IO:
the sync and async twins are two one-liners over the same operation
(:mod:`langchain_memoryos.operations`), as LangGraph's ``BaseStore`` builds
its methods on ``batch`` and ``abatch``. The methods are grouped by concern
(:mod:`langchain_memoryos.facade`); the backends' factories live in
:mod:`langchain_memoryos.backends`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langchain_memoryos import backends
from langchain_memoryos.background import BackgroundWriter
from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.controllers.heuristic import HeuristicController
from langchain_memoryos.embeddings import encode_texts, resolve_embeddings
from langchain_memoryos.errors import InvalidInputError, InvalidTypeError
from langchain_memoryos.facade.facts import FactMethods
from langchain_memoryos.facade.inspection import InspectionMethods
from langchain_memoryos.facade.maintenance import MaintenanceMethods
from langchain_memoryos.kernel.controller import MemoryController
from langchain_memoryos.kernel.effects import Services
from langchain_memoryos.operations import bulk, reader, turns
from langchain_memoryos.operations.runtime import Runtime
from langchain_memoryos.operations.validation import clean_metadata, clean_text
from langchain_memoryos.schema import MemoryContext, WriteReport
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


class MemoryOS(FactMethods, InspectionMethods, MaintenanceMethods):
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
        if model is not None and controller is not None:
            raise InvalidInputError("pass either model= (an LLMController is built for it) or controller=, not both.")
        if model is not None:
            from langchain_memoryos.controllers.llm import LLMController

            controller = LLMController(model, judgement_timeout_seconds=self.config.judgement_timeout_seconds)
        if controller is None:
            controller = HeuristicController(self.settings.thresholds, page_keywords=self.config.page_keywords)
        elif hasattr(controller, "adopt_thresholds"):
            controller.adopt_thresholds(self.settings.thresholds)
        if not isinstance(controller, MemoryController):
            raise InvalidTypeError(
                "controller must implement the MemoryController protocol (see "
                "langchain_memoryos.controllers.base), e.g. HeuristicController()."
            )
        self.controller: MemoryController = controller
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

    # -- graphs ------------------------------------------------------------------
    @property
    def write_graph(self) -> Any:
        """The write path as a compiled LangGraph ``StateGraph``: the stages ``add_turn`` runs, as nodes.

        Nodes: ``stm_append``, ``chain_link``, ``mtm_insert``, ``heat_evict``,
        ``persona_promote``, ``write_gate``, ``relation_judge``, ``fuse``,
        ``lpm_commit``; its state is ``{"turn": TurnWrite(...)}``. ``add_turn`` /
        ``aadd_turn`` run the same stage functions directly, without the graph
        runtime (same stored result); use them to write from Python, and the
        graph to compose the memory into a LangGraph application. Draw it with
        ``get_graph().draw_mermaid()``.

        Example:
            >>> "persona_promote" in MemoryOS().write_graph.get_graph().nodes
            True
        """
        from langchain_memoryos.graph.write import memory_write_graph  # the graph runtime loaded on first use

        return memory_write_graph(self._runtime)

    @property
    def read_graph(self) -> Any:
        """The read path as a compiled LangGraph ``StateGraph``: the stages ``retrieve`` runs, as nodes.

        Nodes: ``retrieve_stm``, ``retrieve_lpm``, ``retrieve_mtm``,
        ``assemble_context``; its state is ``{"read": ReadRun(...)}``.
        ``retrieve`` / ``aretrieve`` run the same stage functions directly,
        without the graph runtime (same context).

        Example:
            >>> "assemble_context" in MemoryOS().read_graph.get_graph().nodes
            True
        """
        from langchain_memoryos.graph.read import memory_read_graph  # the graph runtime loaded on first use

        return memory_read_graph(self._runtime)

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

    # -- turns in, context out ---------------------------------------------------
    def add_turn(
        self,
        user_input: str | HumanMessage,
        agent_response: str | AIMessage = "",
        *,
        user_id: str,
        thread_id: str = "default",
        timestamp: Any = None,
        metadata: Mapping[str, Any] | None = None,
        turn_id: str | None = None,
    ) -> WriteReport:
        """Store one exchange and run everything it triggers (STM→MTM, evict, promote).

        Args:
            user_input: what the user said (a string or a ``HumanMessage``).
            agent_response: what the agent answered ("" for an unpaired turn;
                a string or an ``AIMessage`` without tool calls). When both are
                messages with ids and no ``turn_id`` is given, the turn id is
                ``"lg:<human id>:<ai id>"``: the same exchange is stored once.
                :meth:`add_messages` takes a whole list of messages.
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
            >>> from langchain_core.messages import AIMessage, HumanMessage
            >>> MemoryOS().add_turn(HumanMessage("Hi", id="h1"), AIMessage("Hello", id="a1"), user_id="u").page_id
            'p_...'
            >>> MemoryOS().add_turn("Hi", "Hello", user_id="u", timestamp="9999-12-31T23:59:59")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            langchain_memoryos.errors.InvalidInputError: timestamp 9999-12-31T23:59:59+00:00 lies ... \
max_clock_skew_seconds ...
        """
        return self._sync(
            turns.add_turn(self._runtime, user_input, agent_response, user_id, thread_id, timestamp, metadata, turn_id)
        )

    async def aadd_turn(
        self,
        user_input: str | HumanMessage,
        agent_response: str | AIMessage = "",
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
        return await self._async(
            turns.add_turn(self._runtime, user_input, agent_response, user_id, thread_id, timestamp, metadata, turn_id)
        )

    def add_turns(
        self,
        turns: Iterable[Any],
        *,
        user_id: str,
        thread_id: str = "default",
    ) -> list[WriteReport]:
        """Store many turns of one user: the same result as ``add_turn`` on each in order, in far less time.

        The pages are embedded in batches, the analyses of the pages that leave
        STM (keywords, facts) are computed ahead — on a second core where the
        platform can fork a worker process — and their facts embedded in
        batches; then every turn runs through the same write stages as
        ``add_turn``. Same pages, segments, facts and write events (vectors
        equal up to float rounding). Use it to import a conversation or a
        history; ``memoryos ingest`` and ``memoryos import`` do.

        Args:
            turns: in order, each a ``(user_input, agent_response)`` pair, a dict
                with the keys of ``add_turn`` (``user_input``, ``agent_response``,
                ``thread_id``, ``timestamp``, ``metadata``, ``turn_id``), or a
                lone user input.
            user_id: whose memory.
            thread_id: the thread of the turns that do not name one.

        Returns:
            One report per turn, in order (``queued`` in background mode).

        Raises:
            ValueError, TypeError: as ``add_turn``, for the first invalid turn (its
                index in the message); nothing is written then. A write that
                fails later (the store) stops at its turn: the turns before it
                are stored, as with ``add_turn`` one by one.

        Example:
            >>> memory = MemoryOS()
            >>> reports = memory.add_turns(
            ...     [("I moved to Denver.", "Nice!"), {"user_input": "I'm a nurse.", "turn_id": "t2"}], user_id="u1"
            ... )
            >>> [r.added for r in reports], [p.user_input for p in memory.get_stm(user_id="u1")]
            ([True, True], ['I moved to Denver.', "I'm a nurse."])
        """
        return self._sync(bulk.add_turns(self._runtime, turns, user_id, thread_id))

    async def aadd_turns(
        self,
        turns: Iterable[Any],
        *,
        user_id: str,
        thread_id: str = "default",
    ) -> list[WriteReport]:
        """Async twin of :meth:`add_turns`.

        Example:
            >>> import asyncio
            >>> [r.added for r in asyncio.run(MemoryOS().aadd_turns([("Hi", "Hello")], user_id="u"))]
            [True]
        """
        return await self._async(bulk.add_turns(self._runtime, turns, user_id, thread_id))

    def add_messages(
        self,
        messages: Iterable[BaseMessage | Mapping[str, Any]],
        *,
        user_id: str,
        thread_id: str = "default",
        timestamp: Any = None,
        metadata: Mapping[str, Any] | None = None,
        store_unanswered: bool = False,
    ) -> list[WriteReport]:
        """Store a list of messages as turns, as LangGraph's message state and mem0's ``add`` hold them.

        The messages are paired into turns
        (:func:`~langchain_memoryos.schema.messages.pair_messages`): the
        human message(s), then the final AI answer (an ``AIMessage`` without
        tool calls). Tool calls and tool results are kept out of the pages (the
        answer is what is stored); system messages are ignored; consecutive
        human messages form one turn's input; an AI answer with no human
        message before it is a turn of its own. The turns are written as by
        :meth:`add_turns` (every one checked before the first is written, the
        same result as :meth:`add_turn` one by one, in batches); with
        message ids (LangGraph's ``add_messages`` reducer gives every message
        one) a turn's id derives from them, so passing the whole conversation
        again stores only its new turns.

        The trailing human message(s) still waiting for an answer are not
        stored by default: pass them again with the answer (as a chat history
        keeps them pending). ``store_unanswered=True`` stores them now, as a
        turn without an answer (a later call with the answer then stores the
        answered turn as well).

        Args:
            messages: LangChain messages, or ``{"role": ..., "content": ...}``
                dicts (``user`` / ``assistant`` / ``system`` / ``tool``), oldest first.
            user_id: whose memory.
            thread_id: the conversation thread.
            timestamp: the time of every turn (default: now, per turn).
            metadata: kept on every page (see :meth:`add_turn`).
            store_unanswered: store the trailing unanswered human message(s) too.

        Returns:
            One report per stored turn, in order.

        Raises:
            TypeError: ``messages`` is not a list of messages or role dicts.
            ValueError: as :meth:`add_turn`; nothing is written then.

        Example:
            >>> from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
            >>> memory = MemoryOS()
            >>> messages = [
            ...     SystemMessage("You are helpful."),
            ...     HumanMessage("What's the weather in Oslo? I live there.", id="h1"),
            ...     AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Oslo"}, "id": "c1"}], id="a1"),
            ...     ToolMessage("-3C, snow", tool_call_id="c1"),
            ...     AIMessage("It's -3C and snowing in Oslo.", id="a2"),
            ...     HumanMessage("Thanks!", id="h2"),
            ... ]
            >>> [r.added for r in memory.add_messages(messages, user_id="ana")]
            [True]
            >>> [(p.user_input, p.agent_response) for p in memory.get_stm(user_id="ana")]
            [("What's the weather in Oslo? I live there.", "It's -3C and snowing in Oslo.")]
            >>> [r.added for r in memory.add_messages(messages, user_id="ana")]  # the same turn: stored once
            [False]
            >>> as_dicts = [{"role": "user", "content": "I'm vegan."}, {"role": "assistant", "content": "Noted."}]
            >>> memory.add_messages(as_dicts, user_id="bob")[0].added
            True
        """
        return self._sync(
            bulk.add_messages(self._runtime, messages, user_id, thread_id, timestamp, metadata, store_unanswered)
        )

    async def aadd_messages(
        self,
        messages: Iterable[BaseMessage | Mapping[str, Any]],
        *,
        user_id: str,
        thread_id: str = "default",
        timestamp: Any = None,
        metadata: Mapping[str, Any] | None = None,
        store_unanswered: bool = False,
    ) -> list[WriteReport]:
        """Async twin of :meth:`add_messages`.

        Example:
            >>> import asyncio
            >>> from langchain_core.messages import AIMessage, HumanMessage
            >>> reports = asyncio.run(MemoryOS().aadd_messages([HumanMessage("hi"), AIMessage("hello")], user_id="u"))
            >>> [r.added for r in reports]
            [True]
        """
        return await self._async(
            bulk.add_messages(self._runtime, messages, user_id, thread_id, timestamp, metadata, store_unanswered)
        )

    def retrieve(
        self,
        query: str,
        *,
        user_id: str,
        thread_id: str = "default",
        stm_view: str | None = None,
        touch: bool = True,
        messages: Iterable[BaseMessage | Mapping[str, Any]] | None = None,
    ) -> MemoryContext:
        """Retrieve the memory context for a query (no model call).

        Args:
            query: the user's message or question.
            user_id: whose memory.
            thread_id: the thread whose STM is included.
            stm_view: how the thread's STM is shown (``"compact"``, ``"full"``,
                ``"messages"``; see ``MemoryOSConfig.stm_view``); ``None``: the config's.
            touch: count the visit (segments hit get ``N_visit + 1`` and fresh
                recency, so heat follows use, as in the paper); ``False`` reads
                without writing anything (a preview, ``memoryos recall``). The
                visit never makes the read wait or fail: when the store cannot
                take it at once (another connection holds SQLite's write lock, a
                full disk) it is logged and applied with the user's next write
                (see :mod:`langchain_memoryos.store.visits`).
            messages: the messages the model gets beside this context (a
                LangGraph state's ``messages`` after any trimming; LangChain
                messages or role dicts): every page of a turn in them is left
                out of the context, whichever tier it sits in, so no turn the
                model already reads is pasted in again (a fact read off such a
                turn is still listed, by its id and date, for the memory tools).

        Returns:
            The context (``to_prompt()``, ``to_system_message()``, ``source_ids()``).

        Example:
            >>> ctx = MemoryOS().retrieve("anything?", user_id="new-user")
            >>> ctx.stm, ctx.pages, ctx.user_facts
            ([], [], [])
            >>> memory = MemoryOS()
            >>> _ = memory.add_turn("I have a parrot named Rio.", "Lovely!", user_id="u", thread_id="t")
            >>> seen = [{"role": "user", "content": "I have a parrot named Rio."},
            ...         {"role": "assistant", "content": "Lovely!"}]
            >>> ctx = memory.retrieve("my pet?", user_id="u", thread_id="t", messages=seen)
            >>> ctx.stm, [h.record.summary for h in ctx.user_facts]  # the turn is not repeated; its fact, by id
            ([], ['The user has a parrot named Rio.'])
        """
        return self._sync(turns.retrieve(self._runtime, query, user_id, thread_id, stm_view, touch, messages))

    async def aretrieve(
        self,
        query: str,
        *,
        user_id: str,
        thread_id: str = "default",
        stm_view: str | None = None,
        touch: bool = True,
        messages: Iterable[BaseMessage | Mapping[str, Any]] | None = None,
    ) -> MemoryContext:
        """Async twin of :meth:`retrieve`.

        Example:
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aretrieve("hi", user_id="u")).stm
            []
        """
        return await self._async(turns.retrieve(self._runtime, query, user_id, thread_id, stm_view, touch, messages))
