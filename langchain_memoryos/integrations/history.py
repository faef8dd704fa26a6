"""Chains with memory: a ``RunnableWithMessageHistory`` replacement and a chat message history.

* :class:`RunnableWithMemoryOS` wraps a chain like ``RunnableWithMessageHistory``
  (same input and output conventions, same keys), reads ``user_id`` and
  ``session_id`` from ``configurable``, injects the session's STM as history
  messages and the retrieved :class:`~langchain_memoryos.schema.MemoryContext`
  under ``memory_key``, and stores the turn after the run;
* :class:`MemoryOSChatMessageHistory` is a ``BaseChatMessageHistory`` over one
  session's STM, for code that takes a history object (including the original
  ``RunnableWithMessageHistory``).

Example:
    >>> from langchain_core.language_models import GenericFakeChatModel
    >>> from langchain_core.messages import AIMessage
    >>> from langchain_memoryos import MemoryOS
    >>> memory = MemoryOS()
    >>> chain = RunnableWithMemoryOS(GenericFakeChatModel(messages=iter([AIMessage("Hi Ana!")])), memory)
    >>> chain.invoke("Hi, I'm Ana.", {"configurable": {"user_id": "ana", "session_id": "s1"}}).content
    'Hi Ana!'
    >>> [p.user_input for p in memory.get_stm(user_id="ana", thread_id="s1")]
    ["Hi, I'm Ana."]
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig, ensure_config
from langchain_core.runnables.utils import ConfigurableFieldSpec, get_unique_config_specs

from langchain_memoryos.errors import InvalidInputError, InvalidTypeError
from langchain_memoryos.schema import MemoryContext
from langchain_memoryos.schema.messages import (
    MessageTurn,
    message_text,
    page_messages,
    pair_messages,
    turn_from_messages,
)

if TYPE_CHECKING:
    from langchain_memoryos.memory import MemoryOS

__all__ = ["MemoryOSChatMessageHistory", "RunnableWithMemoryOS", "pair_messages"]  # pair_messages: re-exported

#: The default ``configurable`` fields: who the user is and which session (STM thread) the turn belongs to.
DEFAULT_HISTORY_FACTORY_CONFIG: tuple[ConfigurableFieldSpec, ...] = (
    ConfigurableFieldSpec(
        id="user_id",
        annotation=str,
        name="User ID",
        description="Whose memory: MTM and LPM are shared by all of the user's sessions.",
        default="",
        is_shared=True,
    ),
    ConfigurableFieldSpec(
        id="session_id",
        annotation=str,
        name="Session ID",
        description="The conversation: its short-term memory (STM) is the chat history.",
        default="",
        is_shared=True,
    ),
)


# -- messages in, messages out (the RunnableWithMessageHistory conventions) -----------
def _as_messages(value: Any) -> list[BaseMessage]:
    """A string, a message or a sequence of messages as a list of messages."""
    if isinstance(value, str):
        return [HumanMessage(value)]
    if isinstance(value, BaseMessage):
        return [value]
    if isinstance(value, (list, tuple)):
        if value and isinstance(value[0], list):  # a batch of one list, as chat models receive it
            if len(value) != 1:
                raise InvalidInputError(f"Expected a single list of messages, got {len(value)} lists.")
            value = value[0]
        if all(isinstance(m, BaseMessage) for m in value):
            return list(value)
    raise InvalidInputError(
        f"Expected a string, a message or a list of messages, got {type(value).__name__}: {value!r:.200}."
    )


def _output_messages(output: Any, key: str | None) -> list[BaseMessage]:
    if isinstance(output, Mapping):
        if key is None:
            key = next(iter(output)) if len(output) == 1 else "output"
        if key not in output:
            if "generations" in output:  # a chat model's raw result
                return [output["generations"][0][0]["message"]]
            raise InvalidInputError(
                f"The chain's output has no key {key!r} (keys: {sorted(output)}); "
                "pass output_messages_key= to name the key that holds the answer."
            )
        output = output[key]
    if isinstance(output, str):
        return [AIMessage(output)]
    if isinstance(output, BaseMessage):
        return [output]
    if isinstance(output, (list, tuple)) and all(isinstance(m, BaseMessage) for m in output):
        return list(output)
    raise InvalidInputError(
        f"Expected a string, a message or a list of messages as output, got {type(output).__name__}."
    )


def _merge_chunks(total: Any, chunk: Any) -> Any:
    """Streamed chunks merged into one output (message chunks and strings add up, dicts per key)."""
    if total is None:
        return chunk
    if isinstance(total, Mapping) and isinstance(chunk, Mapping):
        merged = dict(total)
        for key, value in chunk.items():
            merged[key] = _merge_chunks(merged.get(key), value)
        return merged
    try:
        return total + chunk
    except TypeError:
        return chunk


@dataclass(frozen=True)
class _Session:
    user_id: str
    session_id: str
    extra: dict[str, Any]


class RunnableWithMemoryOS(Runnable[Any, Any]):
    """Give a chain hierarchical memory: the drop-in replacement of ``RunnableWithMessageHistory``.

    Calling conventions are those of ``RunnableWithMessageHistory``: the input
    is a string, a message, a list of messages, or a dict whose
    ``input_messages_key`` holds them; the output is a message, a string, a
    list of messages, or a dict whose ``output_messages_key`` holds them. Per
    run, the session's STM goes to the chain as history messages — under
    ``history_messages_key`` when given, else before the input messages — and
    the retrieved :class:`~langchain_memoryos.schema.MemoryContext` (STM left
    out, it is already the history) goes under ``memory_key`` of a dict input
    (``{memory}`` in a prompt renders it) or, for a message input, as a
    leading system message. After the run the turn is stored: for ``invoke``,
    ``ainvoke``, ``batch``, ``abatch``, and for ``stream`` / ``astream`` once
    the stream is complete (chunks merged).

    Args:
        runnable: the chain or chat model to wrap.
        memory: the memory.
        input_messages_key: the input dict's key for the new message(s).
        output_messages_key: the output dict's key for the answer.
        history_messages_key: the input dict's key for the history messages.
        memory_key: the input dict's key for the memory context.
        history_factory_config: the ``configurable`` fields, as
            ``ConfigurableFieldSpec`` s: the field ``user_id`` (else the first)
            names the user, ``session_id`` (else the next) the session; any
            other field is recorded in the metadata of each stored page.
            Default: ``user_id`` and ``session_id``.

    Example:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> from langchain_core.messages import AIMessage
        >>> from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
        >>> from langchain_memoryos import MemoryOS
        >>> prompt = ChatPromptTemplate.from_messages(
        ...     [("system", "You help. {memory}"), MessagesPlaceholder("history"), ("human", "{question}")])
        >>> model = GenericFakeChatModel(messages=iter([AIMessage("Noted.")]))
        >>> chain = RunnableWithMemoryOS(prompt | model, MemoryOS(), input_messages_key="question",
        ...                              history_messages_key="history")
        >>> chain.invoke({"question": "I live in Oslo."},
        ...              {"configurable": {"user_id": "u", "session_id": "s"}}).content
        'Noted.'
    """

    def __init__(
        self,
        runnable: Runnable[Any, Any],
        memory: MemoryOS,
        *,
        input_messages_key: str | None = None,
        output_messages_key: str | None = None,
        history_messages_key: str | None = None,
        memory_key: str = "memory",
        history_factory_config: Sequence[ConfigurableFieldSpec] | None = None,
    ) -> None:
        if not isinstance(runnable, Runnable):
            raise InvalidTypeError(
                f"runnable must be a LangChain Runnable (a chain or a chat model), got {runnable!r:.100}."
            )
        specs = tuple(history_factory_config) if history_factory_config else DEFAULT_HISTORY_FACTORY_CONFIG
        ids = [s.id for s in specs]
        if len(set(ids)) != len(ids):
            raise InvalidInputError(f"history_factory_config has repeated field ids: {ids}.")
        self.runnable = runnable
        self.memory = memory
        self.input_messages_key = input_messages_key
        self.output_messages_key = output_messages_key
        self.history_messages_key = history_messages_key
        self.memory_key = memory_key
        self.history_factory_config = specs
        self._user_field = "user_id" if "user_id" in ids else ids[0]
        rest = [i for i in ids if i != self._user_field]
        self._session_field = "session_id" if "session_id" in ids else (rest[0] if rest else None)

    @property
    def config_specs(self) -> list[ConfigurableFieldSpec]:
        """The wrapped chain's fields and the memory's (``user_id``, ``session_id`` by default)."""
        return get_unique_config_specs([*self.runnable.config_specs, *self.history_factory_config])

    # -- the shared core (sync and async differ only in their IO) ------------
    def _session(self, config: RunnableConfig) -> _Session:
        configurable = config.get("configurable") or {}
        values = {s.id: configurable.get(s.id, s.default) for s in self.history_factory_config}
        missing = [
            f for f in (self._user_field, self._session_field) if f is not None and not isinstance(values[f], str)
        ]
        missing += [f for f in (self._user_field, self._session_field) if f is not None and values[f] == ""]
        if missing:
            example = {f: "..." for f in (self._user_field, self._session_field) if f is not None}
            raise InvalidInputError(
                f"RunnableWithMemoryOS needs {sorted(set(missing))} in config['configurable'] as non-empty strings; "
                f"e.g. chain.invoke(input, {{'configurable': {example}}})."
            )
        session = values[self._session_field] if self._session_field is not None else "default"
        extra = {k: v for k, v in values.items() if k not in (self._user_field, self._session_field)}
        return _Session(values[self._user_field], session, extra)

    def _input_messages(self, input: Any) -> list[BaseMessage]:
        if isinstance(input, Mapping):
            return _as_messages(input[self._input_key(input)])
        return _as_messages(input)

    def _input_key(self, input: Mapping[str, Any]) -> str:
        if self.input_messages_key is not None:
            key = self.input_messages_key
        else:
            key = next(iter(input)) if len(input) == 1 else "input"
        if key not in input:
            raise InvalidInputError(
                f"The input has no key {key!r} (keys: {sorted(input)}); pass input_messages_key= to name the key "
                "that holds the new message."
            )
        return key

    def _query(self, input: Any) -> str:
        humans = [message_text(m) for m in self._input_messages(input) if isinstance(m, HumanMessage)]
        return humans[-1].strip() if humans else ""

    def _prepare(self, input: Any, ctx: MemoryContext) -> Any:
        """The chain's input: history and memory added the way the keys say."""
        history = page_messages(ctx.stm)
        memory = ctx.without_stm()
        if isinstance(input, Mapping):
            prepared = dict(input)
            if self.history_messages_key is not None:
                prepared[self.history_messages_key] = history
            else:
                key = self._input_key(input)
                prepared[key] = history + _as_messages(input[key])
            prepared[self.memory_key] = memory
            return prepared
        messages = _as_messages(input)
        system = memory.to_prompt()
        if not system:
            return history + messages
        if messages and isinstance(messages[0], SystemMessage):  # one system message, theirs first
            head = SystemMessage(f"{message_text(messages[0])}\n\n{system}")
            return [head, *history, *messages[1:]]
        return [SystemMessage(system), *history, *messages]

    def _turn(self, input: Any, output: Any, session: _Session) -> dict[str, Any] | None:
        """``add_turn`` arguments for a finished run (``None`` when there is nothing to store)."""
        inputs = [m for m in self._input_messages(input) if not isinstance(m, SystemMessage)]
        outputs = _output_messages(output, self.output_messages_key)
        turn = turn_from_messages(inputs + outputs, id_from_text=False)
        if turn is None:  # e.g. the answer is a tool call: keep what was said
            turn = MessageTurn(
                "\n".join(message_text(m) for m in inputs if isinstance(m, HumanMessage)),
                "\n".join(message_text(m) for m in outputs if isinstance(m, AIMessage)),
            )
            calls = [dict(tc) for m in outputs if isinstance(m, AIMessage) for tc in m.tool_calls]
            if calls:
                turn.metadata["tool_calls"] = [{"name": c.get("name"), "args": c.get("args")} for c in calls]
        if not turn.user_input.strip() and not turn.agent_response.strip():
            return None
        metadata = {**session.extra, **turn.metadata}
        return {
            "user_input": turn.user_input,
            "agent_response": turn.agent_response,
            "user_id": session.user_id,
            "thread_id": session.session_id,
            "metadata": metadata or None,
            "turn_id": turn.turn_id,
        }

    def _enter(self, input: Any, config: RunnableConfig | None) -> tuple[RunnableConfig, _Session, dict[str, Any]]:
        config = ensure_config(config)
        session = self._session(config)
        self._input_messages(input)  # a bad input fails before any work
        request = {
            "query": self._query(input),
            "user_id": session.user_id,
            "thread_id": session.session_id,
            "stm_view": "messages",  # the STM goes to the model as history messages
        }
        return config, session, request

    # -- sync ------------------------------------------------------------------
    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the chain with memory, then store the turn.

        Example:
            >>> from langchain_core.messages import AIMessage
            >>> from langchain_core.runnables import RunnableLambda
            >>> from langchain_memoryos import MemoryOS, MemoryOSConfig
            >>> memory = MemoryOS(config=MemoryOSConfig(agent_profile="A travel agent."))
            >>> seen = RunnableLambda(lambda messages: AIMessage(" ".join(m.type for m in messages)))
            >>> chain = RunnableWithMemoryOS(seen, memory)  # answers with the types of the messages it gets
            >>> cfg = {"configurable": {"user_id": "ana", "session_id": "s1"}}
            >>> chain.invoke("I live in Oslo.", cfg).content  # the memory (agent profile), the question
            'system human'
            >>> chain.invoke("Where do I live?", cfg).content  # now also the first turn, as history
            'system human ai human'
            >>> [p.user_input for p in memory.get_stm(user_id="ana", thread_id="s1")]
            ['I live in Oslo.', 'Where do I live?']
        """
        config, session, request = self._enter(input, config)
        ctx = self.memory.retrieve(**request)
        output = self.runnable.invoke(self._prepare(input, ctx), config, **kwargs)
        self._store(input, output, session)
        return output

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]:
        """Stream the chain's output; the turn is stored when the stream is complete.

        Example:
            >>> from langchain_core.language_models import GenericFakeChatModel
            >>> from langchain_core.messages import AIMessage
            >>> from langchain_memoryos import MemoryOS
            >>> memory, model = MemoryOS(), GenericFakeChatModel(messages=iter([AIMessage("Hello there Ana")]))
            >>> chain = RunnableWithMemoryOS(model, memory)
            >>> cfg = {"configurable": {"user_id": "ana", "session_id": "s1"}}
            >>> [c.content for c in chain.stream("Hi, I'm Ana.", cfg)]
            ['Hello', ' ', 'there', ' ', 'Ana']
            >>> [(p.user_input, p.agent_response) for p in memory.get_stm(user_id="ana", thread_id="s1")]  # merged
            [("Hi, I'm Ana.", 'Hello there Ana')]
        """
        config, session, request = self._enter(input, config)
        ctx = self.memory.retrieve(**request)
        total = None
        for chunk in self.runnable.stream(self._prepare(input, ctx), config, **kwargs):
            total = _merge_chunks(total, chunk)
            yield chunk
        self._store(input, total, session)

    def _store(self, input: Any, output: Any, session: _Session) -> None:
        request = self._turn(input, output, session)
        if request is not None:
            self.memory.add_turn(**request)

    # -- async -----------------------------------------------------------------
    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Async twin of :meth:`invoke`.

        Example:
            >>> import asyncio
            >>> from langchain_core.messages import AIMessage
            >>> from langchain_core.runnables import RunnableLambda
            >>> from langchain_memoryos import MemoryOS
            >>> seen = RunnableLambda(lambda messages: AIMessage(" ".join(m.type for m in messages)))
            >>> chain = RunnableWithMemoryOS(seen, MemoryOS())
            >>> cfg = {"configurable": {"user_id": "ana", "session_id": "s1"}}
            >>> async def chat():
            ...     return [(await chain.ainvoke(q, cfg)).content for q in ("I live in Oslo.", "Where do I live?")]
            >>> asyncio.run(chat())  # the fact of the first turn is in memory at once: a system message
            ['human', 'system human ai human']
        """
        config, session, request = self._enter(input, config)
        ctx = await self.memory.aretrieve(**request)
        output = await self.runnable.ainvoke(self._prepare(input, ctx), config, **kwargs)
        await self._astore(input, output, session)
        return output

    async def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        """Async twin of :meth:`stream`.

        Example:
            >>> import asyncio
            >>> from langchain_core.language_models import GenericFakeChatModel
            >>> from langchain_core.messages import AIMessage
            >>> from langchain_memoryos import MemoryOS
            >>> memory, model = MemoryOS(), GenericFakeChatModel(messages=iter([AIMessage("Hello there Ana")]))
            >>> chain = RunnableWithMemoryOS(model, memory)
            >>> async def chat():
            ...     cfg = {"configurable": {"user_id": "ana", "session_id": "s1"}}
            ...     return [c.content async for c in chain.astream("Hi, I'm Ana.", cfg)]
            >>> asyncio.run(chat())
            ['Hello', ' ', 'there', ' ', 'Ana']
            >>> [(p.user_input, p.agent_response) for p in memory.get_stm(user_id="ana", thread_id="s1")]
            [("Hi, I'm Ana.", 'Hello there Ana')]
        """
        config, session, request = self._enter(input, config)
        ctx = await self.memory.aretrieve(**request)
        total = None
        async for chunk in self.runnable.astream(self._prepare(input, ctx), config, **kwargs):
            total = _merge_chunks(total, chunk)
            yield chunk
        await self._astore(input, total, session)

    async def _astore(self, input: Any, output: Any, session: _Session) -> None:
        request = self._turn(input, output, session)
        if request is not None:
            await self.memory.aadd_turn(**request)


# -- the chat message history ------------------------------------------------------------
#: Messages waiting for their answer, per memory and (user, session): shared by every history object of a session.
_PENDING: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], list[BaseMessage]]] = weakref.WeakKeyDictionary()
_PENDING_LOCK = threading.Lock()


class MemoryOSChatMessageHistory(BaseChatMessageHistory):
    """One session's short-term memory as a LangChain chat message history.

    ``messages`` are the session's STM pages as human / AI messages (the last
    ``stm_capacity`` exchanges; older ones live on in MTM and LPM and come
    back through retrieval), followed by any human message still waiting for
    its answer. ``add_messages`` pairs messages into turns (see
    :func:`pair_messages`): each finished turn goes through ``add_turn``,
    with the turn's tool calls and tool results in the page metadata; an
    unpaired human message waits — in this process, for every history object
    of the session — until its answer arrives. ``clear()`` forgets only this
    session's STM.

    Args:
        memory: the memory.
        user_id: whose memory.
        session_id: the session (the STM thread).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> history = MemoryOSChatMessageHistory(MemoryOS(), user_id="u", session_id="s")
        >>> history.add_user_message("I moved to Oslo.")
        >>> history.add_ai_message("Nice!")
        >>> [m.type for m in history.messages]
        ['human', 'ai']
    """

    def __init__(self, memory: MemoryOS, *, user_id: str, session_id: str) -> None:
        for name, value in (("user_id", user_id), ("session_id", session_id)):
            if not isinstance(value, str) or not value.strip():
                raise InvalidInputError(f"{name} must be a non-empty string, got {value!r}.")
        self.memory = memory
        self.user_id = user_id
        self.session_id = session_id

    def _pending(self) -> list[BaseMessage]:
        with _PENDING_LOCK:
            return _PENDING.setdefault(self.memory, {}).setdefault((self.user_id, self.session_id), [])

    def _pair(self, messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
        """Pair the new messages with the pending ones; returns ``add_turn`` arguments, keeps the rest pending."""
        with _PENDING_LOCK:
            pending = _PENDING.setdefault(self.memory, {}).setdefault((self.user_id, self.session_id), [])
            turns, rest = pair_messages(pending, messages)
            pending[:] = rest
        return [
            {
                "user_input": t.user_input,
                "agent_response": t.agent_response,
                "user_id": self.user_id,
                "thread_id": self.session_id,
                "metadata": t.metadata or None,
                "turn_id": t.turn_id,
            }
            for t in turns
            if t.user_input.strip() or t.agent_response.strip()
        ]

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The session's STM as messages, then the human message(s) still waiting for an answer."""
        pages = self.memory.get_stm(user_id=self.user_id, thread_id=self.session_id)
        return page_messages(pages) + [m for m in self._pending() if isinstance(m, HumanMessage)]

    async def aget_messages(self) -> list[BaseMessage]:
        """Async twin of :attr:`messages`."""
        pages = await self.memory.aget_stm(user_id=self.user_id, thread_id=self.session_id)
        return page_messages(pages) + [m for m in self._pending() if isinstance(m, HumanMessage)]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store the finished turns among the messages (the rest waits for its answer)."""
        for request in self._pair(messages):
            self.memory.add_turn(**request)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Async twin of :meth:`add_messages`."""
        for request in self._pair(messages):
            await self.memory.aadd_turn(**request)

    def clear(self) -> None:
        """Forget this session's STM and its pending messages (other sessions, MTM and LPM stay)."""
        self._pending().clear()
        self.memory.clear_stm(user_id=self.user_id, thread_id=self.session_id)

    async def aclear(self) -> None:
        """Async twin of :meth:`clear`."""
        self._pending().clear()
        await self.memory.aclear_stm(user_id=self.user_id, thread_id=self.session_id)
