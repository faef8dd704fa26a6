"""Turns in, context out: ``add_turn`` and ``retrieve`` run the stages of the memory's two graphs.

A turn is validated into a :class:`~langchain_memoryos.tiers.turn.TurnWrite`,
embedded without the user's lock, then run through the write stages (the
write graph's nodes, run directly; they take the lock around store work
only); in background mode it is queued instead. A query is validated into a
:class:`~langchain_memoryos.retrieval.recall.ReadRun` and run through the read
stages under the user's lock. The graphs (what a LangGraph application
composes: :mod:`langchain_memoryos.graph.write`, :mod:`langchain_memoryos.graph.read`)
are built once per memory, on first use, from the inputs read here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages

from langchain_memoryos.amu.forgetting import forget_request, redact_request
from langchain_memoryos.config import STM_VIEWS
from langchain_memoryos.errors import InvalidInputError, InvalidTypeError
from langchain_memoryos.kernel.effects import run_async, run_sync
from langchain_memoryos.operations.run_config import resolve_thread_id, resolve_user_id
from langchain_memoryos.operations.runtime import Runtime
from langchain_memoryos.operations.validation import (
    check_message_size,
    check_query,
    check_text,
    check_thread,
    check_user,
    clean_metadata,
)
from langchain_memoryos.pipeline.read import read
from langchain_memoryos.pipeline.write import run_turn
from langchain_memoryos.retrieval.recall import ReadRun
from langchain_memoryos.schema import MemoryContext, WriteReport
from langchain_memoryos.schema.messages import pair_messages, turn_keys, turn_side, unanswered_turn
from langchain_memoryos.tiers.turn import TurnWrite, embed_turn, turn_page

__all__ = [
    "Retrieve",
    "WriteTurn",
    "message_turns",
    "add_turn",
    "graph_read",
    "graph_turn",
    "retrieve",
    "turn_input",
]


def turn_input(
    runtime: Runtime,
    user_input: Any,
    agent_response: Any,
    user_id: Any,
    thread_id: Any,
    timestamp: Any,
    metadata: Mapping[str, Any] | None,
    turn_id: str | None,
) -> TurnWrite:
    """A turn to write, from the caller's arguments, checked before anything is written.

    A user input that asks to forget ("Forget that I'm allergic to …",
    :func:`~langchain_memoryos.amu.forgetting.forget_request`) makes the turn
    forget it when written, and both sides are stored without those words.

    Either side may be a message (a ``HumanMessage`` asked, an ``AIMessage``
    answered: see :func:`~langchain_memoryos.schema.messages.turn_side`);
    when both carry ids and no ``turn_id`` is given, the turn id derives from
    them (``"lg:<human id>:<ai id>"``, as the middleware's), so the same
    exchange given twice is stored once.

    Raises:
        ValueError: a missing user id, an empty turn, a side longer than
            ``max_message_chars``, a timestamp out of range or too far ahead,
            metadata that is not JSON.
        TypeError: a text that is not a string, metadata that is not a mapping.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> runtime = MemoryOS()._runtime
        >>> turn_input(runtime, "Hi", None, "u", "t", 0, {"n": 1}, None).metadata
        {'n': 1}
        >>> turn_input(runtime, " ", "", "u", "t", None, None, None)
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: an empty turn: user_input and agent_response are both empty.
    """
    user = check_user(user_id)
    thread = check_thread(thread_id)
    user_input, human_id = turn_side("user_input", user_input)
    agent_response, ai_id = turn_side("agent_response", agent_response)
    if turn_id is None and human_id and ai_id:
        turn_id = f"lg:{human_id}:{ai_id}"
    check_message_size("user_input", user_input, runtime.config.max_message_chars)
    check_message_size("agent_response", agent_response, runtime.config.max_message_chars)
    ui = check_text("user_input", user_input)
    ar = check_text("agent_response", agent_response)
    if not ui.strip() and not ar.strip():
        raise InvalidInputError("an empty turn: user_input and agent_response are both empty.")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InvalidTypeError("metadata must be a mapping (e.g. {'source_id': 'D1:3'}).")
    ts = runtime.timestamp(timestamp)
    meta = clean_metadata(metadata) if metadata is not None else None
    forget = forget_request(ui) or ""
    if not forget:
        return TurnWrite(user, thread, ui, ar, ts, meta, turn_id, optimistic=runtime.optimistic)
    # a request to forget: carried out when the turn is written, stored without the words it names
    kept_ui, kept_ar = redact_request(ui, forget), redact_request(ar, forget)
    turn = TurnWrite(user, thread, kept_ui or "[forgotten]", kept_ar, ts, meta, turn_id, optimistic=runtime.optimistic)
    turn.forget, turn.said = forget, (ui, ar)
    return turn


# -- the graphs' inputs ---------------------------------------------------------
def graph_turn(runtime: Runtime, state: Mapping[str, Any], config: Any) -> TurnWrite:
    """A turn from the write graph's plain input fields (validated; the user from the run if not given).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> turn = graph_turn(MemoryOS()._runtime, {"user_input": "Hi", "agent_response": "Hello"},
        ...                   {"configurable": {"user_id": "ana", "thread_id": "t1"}})
        >>> turn.user_id, turn.thread_id, turn.next
        ('ana', 't1', 'stm_append')
    """
    return turn_input(
        runtime,
        state.get("user_input", ""),
        state.get("agent_response", ""),
        state.get("user_id") or resolve_user_id(config),
        state.get("thread_id") or resolve_thread_id(config),
        state.get("timestamp"),
        state.get("metadata"),
        state.get("turn_id"),
    )


def graph_read(state: Mapping[str, Any], config: Any) -> ReadRun:
    """A retrieval from the read graph's ``query`` input (the user from the run if not given).

    Example:
        >>> read = graph_read({"query": "Where do I live?"}, {"configurable": {"user_id": "ana"}})
        >>> read.user_id, read.thread_id, read.query
        ('ana', 'default', 'Where do I live?')
    """
    user = check_user(state.get("user_id") or resolve_user_id(config))
    thread = check_thread(state.get("thread_id") or resolve_thread_id(config))
    return ReadRun(user, thread, check_query(state.get("query", "")))


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


# -- the operations -----------------------------------------------------------
def _write(runtime: Runtime, turn: TurnWrite) -> None:
    runtime.settle_turn(turn)  # after the user's queued writes (unless this is one of them)
    run_sync(embed_turn(runtime.settings, turn), runtime.services)  # the encoder never holds the user's lock
    with _lease_of(turn):  # stm_append takes the lock (never during a model call)
        run_sync(run_turn(runtime.repository, runtime.settings, turn), runtime.services)


async def _awrite(runtime: Runtime, turn: TurnWrite) -> None:
    await runtime.asettle_turn(turn)
    await run_async(embed_turn(runtime.settings, turn), runtime.services)  # never under the user's lock
    with _lease_of(turn):
        await run_async(run_turn(runtime.repository, runtime.settings, turn), runtime.services)


@dataclass(frozen=True)
class WriteTurn:
    """Store one turn: embedded without the user's lock, then through the write stages (or queued, in background mode).

    The stages are the write graph's nodes (:func:`~langchain_memoryos.graph.write.memory_write_graph`), run here
    directly by the effect drivers (:func:`~langchain_memoryos.pipeline.write.run_turn`):
    the same functions in the same order, without the graph runtime's
    per-node bookkeeping.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> turn = turn_input(memory._runtime, "I moved to Oslo.", "Nice!", "u", "t", None, None, "t1")
        >>> WriteTurn(turn).run(memory._runtime).page_id == memory.get_stm(user_id="u", thread_id="t")[0].id
        True
    """

    turn: TurnWrite

    def run(self, runtime: Runtime) -> WriteReport:
        """Run with blocking IO."""
        if runtime.writer is not None:
            return self._queue(runtime)
        _write(runtime, self.turn)
        return self.turn.report

    async def arun(self, runtime: Runtime) -> WriteReport:
        """Run with async IO."""
        if runtime.writer is not None:
            return self._queue(runtime)
        await _awrite(runtime, self.turn)
        return self.turn.report

    def _queue(self, runtime: Runtime) -> WriteReport:
        assert runtime.writer is not None
        turn = self.turn
        turn.queued = True
        runtime.writer.submit(turn.user_id, lambda: _write(runtime, turn))
        return WriteReport(page_id=turn_page(turn).id, queued=True)


@dataclass(frozen=True)
class Retrieve:
    """Build a memory context: the read stages under the user's lease.

    The stages are the read graph's nodes (:func:`~langchain_memoryos.graph.read.memory_read_graph`), run here
    directly by the effect drivers: the same functions in the same order,
    without the graph runtime's per-node bookkeeping (about half of a
    retrieval's time outside the encoder on a 300-page user). The graph is
    what a LangGraph application composes (``MemoryOS.read_graph``).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_turn("I moved to Oslo.", "Nice!", user_id="u")
        >>> [p.user_input for p in Retrieve(ReadRun("u", "default", "Oslo")).run(memory._runtime).stm]
        ['I moved to Oslo.']
    """

    read: ReadRun

    def run(self, runtime: Runtime) -> MemoryContext:
        """Run with blocking IO."""
        r = self.read
        with _lease_of(r):
            r.lease = runtime.lease(r.user_id)
            return run_sync(read(runtime.repository, runtime.settings, r), runtime.services)

    async def arun(self, runtime: Runtime) -> MemoryContext:
        """Run with async IO."""
        r = self.read
        with _lease_of(r):
            r.lease = await runtime.alease(r.user_id)
            return await run_async(read(runtime.repository, runtime.settings, r), runtime.services)


def add_turn(
    runtime: Runtime,
    user_input: Any,
    agent_response: Any,
    user_id: Any,
    thread_id: Any,
    timestamp: Any,
    metadata: Mapping[str, Any] | None,
    turn_id: str | None,
) -> WriteTurn:
    """Operation: ``MemoryOS.add_turn`` (the turn checked now, written when run).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> memory._sync(add_turn(memory._runtime, "Hi", "Hello", "u", "default", None, None, "t1")).added
        True
    """
    return WriteTurn(turn_input(runtime, user_input, agent_response, user_id, thread_id, timestamp, metadata, turn_id))


def message_turns(
    runtime: Runtime,
    messages: Any,
    user_id: Any,
    thread_id: Any,
    timestamp: Any,
    metadata: Mapping[str, Any] | None,
    store_unanswered: Any,
) -> tuple[TurnWrite, ...]:
    """The turns of ``MemoryOS.add_messages``: the messages paired into turns, every turn checked now.

    ``add_messages`` writes them as ``add_turns`` does (:mod:`~langchain_memoryos.operations.bulk`).

    Raises:
        TypeError: ``messages`` is not a list of messages (or of ``{"role", "content"}`` dicts).

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
        >>> from langchain_memoryos import MemoryOS
        >>> messages = [HumanMessage("hi"), AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": "c"}]),
        ...             ToolMessage("x", tool_call_id="c"), AIMessage("hello"), HumanMessage("bye")]
        >>> [(t.user_input, t.agent_response) for t in message_turns(MemoryOS()._runtime, messages, "u", "t",
        ...                                                          None, None, False)]
        [('hi', 'hello')]
    """
    user = check_user(user_id)  # the user first: a missing user id is the first thing to fix
    converted = checked_messages(messages, "; add_turn takes one exchange")
    if not isinstance(store_unanswered, bool):
        raise InvalidTypeError(f"store_unanswered must be True or False, got {store_unanswered!r}.")
    turns, pending = pair_messages([], converted)
    last = unanswered_turn(pending) if store_unanswered else None
    if last is not None:
        turns.append(last)
    writes = tuple(
        turn_input(runtime, t.user_input, t.agent_response, user, thread_id, timestamp, metadata, t.turn_id)
        for t in turns
        if t.user_input.strip() or t.agent_response.strip()
    )
    if not writes:
        check_thread(thread_id)  # still refuse a bad thread id when there is nothing to write
    return writes


def retrieve(
    runtime: Runtime,
    query: Any,
    user_id: Any,
    thread_id: Any,
    stm_view: Any = None,
    touch: Any = True,
    messages: Any = None,
) -> Retrieve:
    """Operation: ``MemoryOS.retrieve`` (the query checked now).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> memory._sync(retrieve(memory._runtime, "anything?", "u", "default")).pages
        []
    """
    user = check_user(user_id)
    if stm_view is not None and stm_view not in STM_VIEWS:
        raise InvalidInputError(f"stm_view must be one of {STM_VIEWS} (or None for the config's), got {stm_view!r}.")
    if not isinstance(touch, bool):
        raise InvalidTypeError(f"touch must be True or False, got {touch!r}.")
    known = frozenset() if messages is None else turn_keys(checked_messages(messages))
    read = ReadRun(user, check_thread(thread_id), check_query(query), stm_view=stm_view or "", touch=touch, known=known)
    return Retrieve(read)


def checked_messages(messages: Any, hint: str = "") -> list[BaseMessage]:
    """The messages a caller passes (LangChain messages or role dicts) as messages; a clear error otherwise.

    Raises:
        TypeError: not a list of messages or role dicts (``hint`` ends the message).

    Example:
        >>> [m.type for m in checked_messages([{"role": "user", "content": "hi"}])]
        ['human']
        >>> checked_messages("hi")
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidTypeError: messages must be a list of messages (HumanMessage, AIMessage, \
ToolMessage, SystemMessage) or of \
{'role': ..., 'content': ...} dicts, got str.
    """
    if isinstance(messages, (str, BaseMessage, Mapping)) or not isinstance(messages, Iterable):
        raise InvalidTypeError(
            "messages must be a list of messages (HumanMessage, AIMessage, ToolMessage, SystemMessage) or of "
            f"{{'role': ..., 'content': ...}} dicts, got {type(messages).__name__}{hint}."
        )
    try:
        return convert_to_messages(list(messages))
    except (ValueError, TypeError, NotImplementedError) as exc:
        raise InvalidTypeError(
            f"messages: {exc} (pass LangChain messages or {{'role': ..., 'content': ...}} dicts)."
        ) from None
