"""LangChain messages ↔ memory turns: the one place every adapter converts them.

* :func:`message_text` — a message's text (string or content blocks);
* :func:`turn_from_messages` — the turn that just ended: the last human
  message and the final AI answer after it, the tool calls and tool results in
  between kept as page metadata, and a turn id derived from the message ids
  (so a replayed turn is recognised);
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

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langchain_memoryos.schema import DialoguePage

__all__ = ["MessageTurn", "last_human_index", "message_text", "page_messages", "turn_from_messages"]


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
