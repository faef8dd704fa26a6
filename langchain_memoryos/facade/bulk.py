"""Many turns in, the methods of ``MemoryOS``: add_turns and add_messages, written in batches.

Each sync/async pair runs one operation of :mod:`langchain_memoryos.operations.bulk`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.messages import BaseMessage

from langchain_memoryos.facade import Facade
from langchain_memoryos.operations import bulk as ops
from langchain_memoryos.schema import WriteReport

__all__ = ["BulkMethods"]


class BulkMethods(Facade):
    """Many turns in: a list of turns or of messages, the same result as ``add_turn`` on each, in batches.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> [r.added for r in memory.add_turns([("I'm a nurse.", "Cool."), ("I live in Oslo.", "Nice!")], user_id="u")]
        [True, True]
    """

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
            >>> from langchain_memoryos import MemoryOS
            >>> memory = MemoryOS()
            >>> reports = memory.add_turns(
            ...     [("I moved to Denver.", "Nice!"), {"user_input": "I'm a nurse.", "turn_id": "t2"}], user_id="u1"
            ... )
            >>> [r.added for r in reports], [p.user_input for p in memory.get_stm(user_id="u1")]
            ([True, True], ['I moved to Denver.', "I'm a nurse."])
        """
        return self._sync(ops.add_turns(self._runtime, turns, user_id, thread_id))

    async def aadd_turns(
        self,
        turns: Iterable[Any],
        *,
        user_id: str,
        thread_id: str = "default",
    ) -> list[WriteReport]:
        """Async twin of :meth:`add_turns`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> [r.added for r in asyncio.run(MemoryOS().aadd_turns([("Hi", "Hello")], user_id="u"))]
            [True]
        """
        return await self._async(ops.add_turns(self._runtime, turns, user_id, thread_id))

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
            >>> from langchain_memoryos import MemoryOS
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
            ops.add_messages(self._runtime, messages, user_id, thread_id, timestamp, metadata, store_unanswered)
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
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> from langchain_core.messages import AIMessage, HumanMessage
            >>> reports = asyncio.run(MemoryOS().aadd_messages([HumanMessage("hi"), AIMessage("hello")], user_id="u"))
            >>> [r.added for r in reports]
            [True]
        """
        return await self._async(
            ops.add_messages(self._runtime, messages, user_id, thread_id, timestamp, metadata, store_unanswered)
        )
