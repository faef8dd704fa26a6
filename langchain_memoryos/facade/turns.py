"""Turns in, context out, the methods of ``MemoryOS``: add_turn, retrieve, and the two graphs.

Each sync/async pair runs one operation of :mod:`langchain_memoryos.operations.turns`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langchain_memoryos.facade import Facade
from langchain_memoryos.operations import turns as ops
from langchain_memoryos.schema import MemoryContext, WriteReport

__all__ = ["TurnMethods"]


class TurnMethods(Facade):
    """Turns in, context out: one exchange stored, a query's context read, the write and read graphs.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_turn("I moved to Denver.", "Nice!", user_id="u")
        >>> "Denver" in memory.retrieve("Where do I live?", user_id="u").to_prompt()
        True
    """

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
            >>> from langchain_memoryos import MemoryOS
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
            ops.add_turn(self._runtime, user_input, agent_response, user_id, thread_id, timestamp, metadata, turn_id)
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
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aadd_turn("Hi", "Hello", user_id="u")).added
            True
        """
        return await self._async(
            ops.add_turn(self._runtime, user_input, agent_response, user_id, thread_id, timestamp, metadata, turn_id)
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
            >>> from langchain_memoryos import MemoryOS
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
        return self._sync(ops.retrieve(self._runtime, query, user_id, thread_id, stm_view, touch, messages))

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
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aretrieve("hi", user_id="u")).stm
            []
        """
        return await self._async(ops.retrieve(self._runtime, query, user_id, thread_id, stm_view, touch, messages))

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
            >>> from langchain_memoryos import MemoryOS
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
            >>> from langchain_memoryos import MemoryOS
            >>> "assemble_context" in MemoryOS().read_graph.get_graph().nodes
            True
        """
        from langchain_memoryos.graph.read import memory_read_graph  # the graph runtime loaded on first use

        return memory_read_graph(self._runtime)
