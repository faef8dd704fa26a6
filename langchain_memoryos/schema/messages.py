"""LangChain messages ↔ memory turns: the one place every adapter converts them.

* :func:`message_text` — a message's text (string or content blocks);
* :func:`turn_from_messages` — the turn that just ended: the last human
  message and the final AI answer after it, the tool calls and tool results in
  between kept as page metadata, and a turn id derived from the message ids
  (so a replayed turn is recognised);
* :func:`pair_messages` — a list of messages paired into turns (``MemoryOS.add_messages``
  and the chat message history use it);
* :func:`page_messages` — stored pages back as human / AI messages.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> turn = turn_from_messages([HumanMessage("I moved to Oslo.", id="h1"), AIMessage("Nice!", id="a1")])
    >>> turn.user_input, turn.agent_response, turn.turn_id
    ('I moved to Oslo.', 'Nice!', 'lg:h1:a1')
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage

from langchain_memoryos.errors import InvalidInputError, InvalidTypeError
from langchain_memoryos.schema import DialoguePage
from langchain_memoryos.schema.pages import turn_text_key

__all__ = [
    "MessageTurn",
    "last_human_index",
    "message_text",
    "page_messages",
    "pair_messages",
    "turn_from_messages",
    "turn_keys",
    "turn_side",
    "unanswered_turn",
]


def message_text(message: BaseMessage) -> str:
    """The text of a message (content blocks joined; non-text blocks left out).

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> message_text(HumanMessage([{"type": "text", "text": "hi "}, {"type": "text", "text": "there"}]))
        'hi there'
    """
    content = message.content
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") if isinstance(p, Mapping) else str(p) for p in content]
    return "".join(str(p) for p in parts)


def turn_side(name: str, value: Any) -> tuple[Any, str | None]:
    """One side of a turn given to ``add_turn``: a message becomes its text (and its id); anything else is kept.

    ``user_input`` takes a ``HumanMessage`` (or a ``ChatMessage`` with role
    ``user``), ``agent_response`` an ``AIMessage`` without tool calls (or role
    ``assistant``); strings and ``None`` pass through to the text checks.

    Args:
        name: ``"user_input"`` or ``"agent_response"``.
        value: what the caller passed.

    Returns:
        The text (or ``value`` itself when it is not a message) and the message's id.

    Raises:
        TypeError: a message of the other side's kind (a tool or system message anywhere).
        ValueError: an ``AIMessage`` that only calls tools (not an answer).

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> turn_side("user_input", HumanMessage("I moved to Oslo.", id="h1")), turn_side("user_input", "hi")
        (('I moved to Oslo.', 'h1'), ('hi', None))
        >>> turn_side("user_input", AIMessage("Nice!"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidTypeError: user_input must be a str or a HumanMessage, got an AIMessage; ...
    """
    if not isinstance(value, BaseMessage):
        return value, None
    message = _normalise(value)
    wanted = HumanMessage if name == "user_input" else AIMessage
    if not isinstance(message, wanted):
        raise InvalidTypeError(
            f"{name} must be a str or a{'' if wanted is HumanMessage else 'n'} {wanted.__name__}, got "
            f"a{'n' if type(value).__name__[0] in 'AEIOU' else ''} {type(value).__name__}; "
            "add_messages pairs a list of messages of every kind into turns."
        )
    if isinstance(message, AIMessage) and message.tool_calls:
        raise InvalidInputError(
            f"{name} is an AIMessage that calls tools, not an answer; pass the final AIMessage "
            "(add_messages keeps tool calls and results out of the pages)."
        )
    return message_text(message), message.id


def last_human_index(messages: Sequence[BaseMessage]) -> int | None:
    """The index of the last human message, or ``None``.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> last_human_index([HumanMessage("a"), AIMessage("b")])
        0
    """
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            return i
    return None


@dataclass
class MessageTurn:
    """A turn read from messages, ready for ``MemoryOS.add_turn``.

    Example:
        >>> MessageTurn("hi", "hello").metadata
        {}
    """

    user_input: str
    agent_response: str
    metadata: dict[str, Any] = field(default_factory=dict)
    turn_id: str | None = None


def turn_from_messages(messages: Sequence[BaseMessage], *, id_from_text: bool = True) -> MessageTurn | None:
    """The turn that ends the messages, or ``None`` while it has no final answer.

    The page is the last human message and the final AI message after it (one
    without tool calls); the tool calls and tool results in between go to the
    metadata (``tool_calls``, ``tool_results``). The turn id derives from the
    two message ids; when they have none, from their text (``id_from_text``,
    for graph replays: the same turn is recognised) or none at all (a chat
    history, where saying "thanks" twice is two turns).

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> turn_from_messages([HumanMessage("still waiting")]) is None
        True
    """
    h = last_human_index(messages)
    if h is None:
        return None
    human, after = messages[h], list(messages[h + 1 :])
    answers = [m for m in after if isinstance(m, AIMessage)]
    final = next((m for m in reversed(answers) if not m.tool_calls), None)
    if final is None:
        return None
    metadata: dict[str, Any] = {}
    calls = [dict(tc) for m in answers for tc in m.tool_calls]
    if calls:
        metadata["tool_calls"] = [{"name": c.get("name"), "args": c.get("args"), "id": c.get("id")} for c in calls]
    results = [m for m in after if isinstance(m, ToolMessage)]
    if results:
        metadata["tool_results"] = [
            {"tool_call_id": m.tool_call_id, "name": m.name, "content": message_text(m)} for m in results
        ]
    turn_id: str | None = None
    if human.id and final.id:
        turn_id = f"lg:{human.id}:{final.id}"
    elif id_from_text:  # messages without ids: the content identifies the turn
        key = f"{message_text(human)}\x1f{message_text(final)}"
        turn_id = f"lg:{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()[:24]}"
    return MessageTurn(message_text(human), message_text(final), metadata, turn_id)


def turn_keys(messages: Sequence[BaseMessage]) -> frozenset[str]:
    """Keys of the complete turns in ``messages`` (turn ids and texts): see ``schema.pages.page_in_turns``.

    A turn is a human message and the final AI answer after it (tool calls and
    results in between), as the remember node and the middleware store it; the
    pages they stored carry the same turn id in ``metadata["turn_id"]``; a page
    stored otherwise is known by its two texts.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> keys = turn_keys([HumanMessage("hi", id="h1"), AIMessage("hello", id="a1"), HumanMessage("and?")])
        >>> "lg:h1:a1" in keys, len(keys)  # the turn's id and its texts; "and?" has no answer yet
        (True, 2)
    """
    keys: set[str] = set()
    starts = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    for start, end in zip(starts, [*starts[1:], len(messages)], strict=True):
        turn = turn_from_messages(messages[start:end])
        if turn is not None:
            keys.add(turn_text_key(turn.user_input, turn.agent_response))
            if turn.turn_id:
                keys.add(turn.turn_id)
    return frozenset(keys)


def page_messages(pages: Iterable[DialoguePage]) -> list[BaseMessage]:
    """Stored pages as messages: the user's side as a human message, the answer as an AI message.

    A page without an answer gives only its human message.

    Example:
        >>> from langchain_memoryos.schema import DialoguePage
        >>> [m.type for m in page_messages([DialoguePage(id="p", user_input="hi", agent_response="hello")])]
        ['human', 'ai']
    """
    out: list[BaseMessage] = []
    for page in pages:
        if page.user_input:
            out.append(HumanMessage(page.user_input))
        if page.agent_response:
            out.append(AIMessage(page.agent_response))
    return out


def pair_messages(
    pending: Sequence[BaseMessage], messages: Sequence[BaseMessage]
) -> tuple[list[MessageTurn], list[BaseMessage]]:
    """Pair messages into turns: human message(s), then tool traffic, then the final AI answer.

    Consecutive human messages form one turn's input; AI tool calls and tool
    messages go to the turn's metadata; system messages are ignored; an AI
    answer without a human message before it is a turn of its own. What has
    no final answer yet is returned as the new pending messages.

    Args:
        pending: messages still waiting for their answer.
        messages: the new messages.

    Returns:
        The finished turns and the messages still pending.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> turns, pending = pair_messages([], [HumanMessage("hi"), AIMessage("hello"), HumanMessage("bye")])
        >>> [(t.user_input, t.agent_response) for t in turns], [m.content for m in pending]
        ([('hi', 'hello')], ['bye'])
    """
    turns: list[MessageTurn] = []
    buffer: list[BaseMessage] = list(pending)
    for raw in messages:
        message = _normalise(raw)
        if message is None or isinstance(message, SystemMessage):
            continue
        if isinstance(message, AIMessage) and not message.tool_calls:
            turns.append(_turn_of(buffer, message))
            buffer = []
            continue
        if isinstance(message, HumanMessage) and buffer and not isinstance(buffer[-1], HumanMessage):
            if any(isinstance(m, HumanMessage) for m in buffer):
                turns.append(_turn_of(buffer, AIMessage("")))  # its tools ran, no final answer came: keep it
                buffer = []
        buffer.append(message)  # a human message, an AI tool call, a tool result
    return turns, buffer


def _normalise(message: BaseMessage) -> BaseMessage | None:
    if isinstance(message, ChatMessage):
        role = message.role.lower()
        if role in ("user", "human"):
            return HumanMessage(message.content, id=message.id)
        if role in ("assistant", "ai"):
            return AIMessage(message.content, id=message.id)
        return None
    if isinstance(message, (HumanMessage, AIMessage, SystemMessage, ToolMessage)):
        return message
    return None


def _turn_of(buffer: Sequence[BaseMessage], answer: AIMessage) -> MessageTurn:
    """One turn: the buffer's human messages (joined) asked, its tool traffic happened, ``answer`` answered."""
    humans = [m for m in buffer if isinstance(m, HumanMessage)]
    human = HumanMessage("\n".join(message_text(m) for m in humans), id=humans[-1].id if humans else None)
    tools = [m for m in buffer if not isinstance(m, HumanMessage)]
    turn = turn_from_messages([human, *tools, answer], id_from_text=False)
    assert turn is not None  # a human message, then an answer without tool calls
    return turn


def unanswered_turn(pending: Sequence[BaseMessage]) -> MessageTurn | None:
    """The turn of human messages still waiting for an answer (``pair_messages``'s pending), or ``None``.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> turn = unanswered_turn([HumanMessage("Are you there?")])
        >>> turn.user_input, turn.agent_response
        ('Are you there?', '')
        >>> unanswered_turn([]) is None
        True
    """
    if not any(isinstance(m, HumanMessage) for m in pending):
        return None
    return _turn_of(pending, AIMessage(""))
