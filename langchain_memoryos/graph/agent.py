"""Drop-in LangGraph nodes (recall, remember) and a prebuilt agent built from them.

* :func:`create_recall_node` retrieves the memory for the last human message
  and writes the rendered context to ``state[output_key]``;
* :func:`create_remember_node` stores the turn: the last human message and the
  final AI message, with the tool calls and tool results of the turn in the
  page metadata. Its page key derives from the message ids, so replaying a
  checkpoint, resuming after an interrupt or retrying the node never adds a
  page twice;
* :func:`create_memoryos_agent` is recall → model/tools loop → remember.

The user comes from the run (see :func:`~langchain_memoryos.graph.runtime.resolve_user_id`),
the thread from ``config["configurable"]["thread_id"]``.

Example:
    >>> from langchain_core.language_models import GenericFakeChatModel
    >>> from langchain_core.messages import AIMessage
    >>> from langchain_memoryos import MemoryOS
    >>> memory = MemoryOS()
    >>> agent = create_memoryos_agent(GenericFakeChatModel(messages=iter([AIMessage("Nice!")])), memory=memory)
    >>> cfg = {"configurable": {"user_id": "ana", "thread_id": "t1"}}
    >>> agent.invoke({"messages": [("user", "I moved to Oslo.")]}, cfg)["messages"][-1].content
    'Nice!'
    >>> [(p.user_input, p.agent_response) for p in memory.get_stm(user_id="ana", thread_id="t1")]
    [('I moved to Oslo.', 'Nice!')]
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph import END, START, MessagesState, StateGraph

from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.graph.runtime import (
    MemoryFactory,
    memory_for_store,
    resolve_memory,
    resolve_thread_id,
    resolve_user_id,
    share_memory,
)
from langchain_memoryos.operations.validation import fit_message
from langchain_memoryos.schema import MemoryContext
from langchain_memoryos.schema.messages import (
    last_human_index,
    message_text,
    turn_from_messages,
    turn_keys,
)
from langchain_memoryos.schema.pages import page_in_turns

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.store.base import BaseStore

    from langchain_memoryos.memory import MemoryOS

__all__ = [
    "MemoryAgentState",
    "create_memoryos_agent",
    "create_recall_node",
    "create_remember_node",
    "fit_request",
    "recall_prompt",
    "recall_request",
    "remember_request",
    "turns_in_messages",
]

#: The prebuilt agent's system prompt when none is given.
logger = logging.getLogger(__name__)

DEFAULT_AGENT_SYSTEM_PROMPT = "You are a helpful assistant that remembers the user across conversations."


def _query(state: Mapping[str, Any], key: str) -> str:
    messages = list(state.get(key) or [])
    i = last_human_index(messages)
    return message_text(messages[i]).strip() if i is not None else ""


def turns_in_messages(messages: Sequence[BaseMessage]) -> frozenset[str]:
    """Keys of the complete turns in ``messages``: :func:`~langchain_memoryos.schema.messages.turn_keys`.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> sorted(turns_in_messages([HumanMessage("hi", id="h1"), AIMessage("hello", id="a1")]))[0]
        'lg:h1:a1'
    """
    return turn_keys(messages)


def recall_request(
    state: Mapping[str, Any], messages_key: str, config: RunnableConfig | None = None, context: Any = None
) -> dict[str, Any] | None:
    """``retrieve`` arguments for the last human message of the state, or ``None`` when there is none.

    Shared by the recall node and the middleware (sync and async). When the
    messages already hold earlier turns of the thread (a checkpointer keeps
    them), they are passed as ``messages``: every page of those turns is left
    out of the context, whichever tier it sits in (STM or MTM), and the STM is
    asked for apart (``stm_view="messages"``: it spends no word budget and none
    of its pages is ranked).

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> recall_request({"messages": []}, "messages") is None
        True
        >>> cfg = {"configurable": {"user_id": "ana", "thread_id": "t1"}}
        >>> recall_request({"messages": [HumanMessage("hi")]}, "messages", cfg)
        {'query': 'hi', 'user_id': 'ana', 'thread_id': 't1'}
        >>> history = [HumanMessage("hi"), AIMessage("hello"), HumanMessage("and now?")]
        >>> request = recall_request({"messages": history}, "messages", cfg)
        >>> request["stm_view"], len(request["messages"])
        ('messages', 3)
    """
    query = _query(state, messages_key)
    if not query:
        return None
    request: dict[str, Any] = {
        "query": query,
        "user_id": resolve_user_id(config, context=context),
        "thread_id": resolve_thread_id(config),
    }
    messages = list(state.get(messages_key) or [])
    if turn_keys(messages):
        request["stm_view"] = "messages"
        request["messages"] = messages
    return request


def recall_prompt(ctx: MemoryContext, state: Mapping[str, Any], messages_key: str) -> str:
    """The memory block for a model that also gets ``state[messages_key]``: no page shown twice.

    A context retrieved with ``messages`` (as :func:`recall_request` asks for
    it) already leaves out every page of those turns; one retrieved without
    them has the thread's STM pages whose turn is in the messages left out of
    its "Recent conversation" here.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> _ = memory.add_turn("I paint.", "Nice!", user_id="ana", thread_id="t1")
        >>> _ = memory.add_turn("I skate.", "Cool!", user_id="ana", thread_id="t1")
        >>> state = {"messages": [HumanMessage("I skate."), AIMessage("Cool!"), HumanMessage("Hobbies?")]}
        >>> ctx = memory.retrieve("Hobbies?", user_id="ana", thread_id="t1", stm_view="messages")
        >>> text = recall_prompt(ctx, state, "messages")
        >>> "User: I paint." in text, "I skate." in text
        (True, False)
    """
    keys = turn_keys(list(state.get(messages_key) or []))
    if keys and ctx.stm:
        ctx = replace(ctx, stm=[page for page in ctx.stm if not page_in_turns(page, keys)])
    return ctx.to_prompt()


def remember_request(
    state: Mapping[str, Any], messages_key: str, config: RunnableConfig | None = None, context: Any = None
) -> dict[str, Any] | None:
    """``add_turn`` arguments for the turn that just ended, or ``None`` while it has no final answer.

    Shared by the remember node and the middleware (sync and async).

    Example:
        >>> remember_request({"messages": []}, "messages") is None
        True
    """
    turn = turn_from_messages(list(state.get(messages_key) or []))
    if turn is None:
        return None
    return {
        "user_input": turn.user_input,
        "agent_response": turn.agent_response,
        "user_id": resolve_user_id(config, context=context),
        "thread_id": resolve_thread_id(config),
        "metadata": turn.metadata,
        "turn_id": turn.turn_id,
    }


def fit_request(memory: MemoryOS, request: dict[str, Any]) -> dict[str, Any]:
    """``add_turn`` arguments with each side cut to the memory's ``max_message_chars`` (a visible marker, logged).

    ``add_turn`` refuses a longer side; the remember node and the middleware
    store it cut instead, so an agent run never fails on a huge message.

    Example:
        >>> from langchain_memoryos import MemoryOS, MemoryOSConfig
        >>> memory = MemoryOS(config=MemoryOSConfig(max_message_chars=60))
        >>> fit_request(memory, {"user_input": "la " * 40, "agent_response": "ok"})["user_input"]
        'la la la la la  [… 105 characters cut: max_message_chars=60]'
    """
    limit = memory.config.max_message_chars
    out = dict(request)
    for side in ("user_input", "agent_response"):
        text = out.get(side)
        if isinstance(text, str) and len(text) > limit:
            out[side] = fit_message(text, limit)
            logger.warning(
                "memoryos: %s of %d characters stored cut to max_message_chars=%d (MemoryOSConfig)",
                side,
                len(text),
                limit,
            )
    return out


def create_recall_node(
    memory: MemoryOS | MemoryFactory | None = None,
    *,
    messages_key: str = "messages",
    output_key: str = "memory_context",
) -> RunnableLambda[Any, dict[str, Any]]:
    """A node that retrieves the memory for the last human message into ``state[output_key]``.

    Args:
        memory: the memory; ``None`` (or a factory): the memory over the store
            the graph runs with (see :func:`~langchain_memoryos.graph.runtime.resolve_memory`).
        messages_key: where the conversation's messages are in the state.
        output_key: where to write the rendered memory context (a string, "" when empty).

    Returns:
        A node for ``StateGraph.add_node`` (sync and async).

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> _ = memory.add_turn("I play the cello.", "Lovely.", user_id="ana", thread_id="t1")
        >>> node = create_recall_node(memory, output_key="memory")
        >>> cfg = {"configurable": {"user_id": "ana", "thread_id": "t2"}}
        >>> "User: I play the cello." in node.invoke({"messages": [HumanMessage("What do I play?")]}, cfg)["memory"]
        True
        >>> node.invoke({"messages": []}, cfg)  # no human message: nothing to recall
        {'memory': ''}
    """

    def recall(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        request = recall_request(state, messages_key, config)
        if request is None:
            return {output_key: ""}
        return {output_key: recall_prompt(resolve_memory(memory).retrieve(**request), state, messages_key)}

    async def arecall(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        request = recall_request(state, messages_key, config)
        if request is None:
            return {output_key: ""}
        return {output_key: recall_prompt(await resolve_memory(memory).aretrieve(**request), state, messages_key)}

    return RunnableLambda(recall, afunc=arecall, name="memoryos_recall")


def create_remember_node(
    memory: MemoryOS | MemoryFactory | None = None, *, messages_key: str = "messages"
) -> RunnableLambda[Any, dict[str, Any]]:
    """A node that stores the turn that just ended (idempotent under replay, resume and retry).

    The page is the last human message and the final AI message after it; the
    tool calls and tool results in between go to the page metadata. A turn
    still waiting for its final answer is not stored.

    Args:
        memory: the memory; ``None`` (or a factory): the memory over the store
            the graph runs with (see :func:`~langchain_memoryos.graph.runtime.resolve_memory`).
        messages_key: where the conversation's messages are in the state.

    Returns:
        A node for ``StateGraph.add_node`` (sync and async); it changes no state.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> node = create_remember_node(memory)
        >>> cfg = {"configurable": {"user_id": "ana", "thread_id": "t1"}}
        >>> turn = [HumanMessage("I play the cello.", id="h1"), AIMessage("Lovely.", id="a1")]
        >>> node.invoke({"messages": turn}, cfg), node.invoke({"messages": turn}, cfg)  # e.g. a replay
        ({}, {})
        >>> [p.user_input for p in memory.get_stm(user_id="ana", thread_id="t1")]  # stored once
        ['I play the cello.']
    """

    def remember(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        request = remember_request(state, messages_key, config)
        if request is not None:
            target = resolve_memory(memory)
            target.add_turn(**fit_request(target, request))
        return {}

    async def aremember(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        request = remember_request(state, messages_key, config)
        if request is not None:
            target = resolve_memory(memory)
            await target.aadd_turn(**fit_request(target, request))
        return {}

    return RunnableLambda(remember, afunc=aremember, name="memoryos_remember")


class MemoryAgentState(MessagesState):
    """The prebuilt agent's state: the messages and the recalled memory context."""

    memory_context: str


def create_memoryos_agent(
    model: BaseChatModel | str,
    tools: Sequence[BaseTool] = (),
    *,
    memory: MemoryOS | MemoryFactory | None = None,
    system_prompt: str | None = None,
    checkpointer: Any = None,
    store: BaseStore | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A compiled agent: recall → model (and tools, in a loop) → remember.

    The recalled memory is given to the model as a system message, after
    ``system_prompt``; the thread's turns already in the messages (with a
    checkpointer) are not repeated in it.

    One store: the graph and the memory share it. With ``memory``, the graph
    is compiled with ``memory.store``; with ``store``, the memory is
    ``MemoryOS(store)`` (or ``memory(store)`` for a factory), so
    ``MemoryOS(store)`` elsewhere reads what the agent wrote; with neither, the
    memory is built over the store the graph runs with (LangGraph Platform
    provides one). Memory tools made without a memory use the same one.

    Args:
        model: a chat model or an ``init_chat_model`` name.
        tools: tools the model may call.
        memory: the memory, a factory of it (``lambda store: MemoryOS(store, config=...)``) or ``None``.
        system_prompt: the agent's instructions (default :data:`DEFAULT_AGENT_SYSTEM_PROMPT`).
        checkpointer: a LangGraph checkpointer for the conversation state.
        store: the LangGraph store of the graph and the memory.

    Returns:
        The compiled graph (``invoke`` / ``ainvoke`` / ``stream`` / ``astream``).

    Raises:
        ValueError: ``memory`` is over another store than ``store``.

    Example:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> from langchain_memoryos import MemoryOS
        >>> agent = create_memoryos_agent(GenericFakeChatModel(messages=iter([])), memory=MemoryOS())
        >>> sorted(n for n in agent.get_graph().nodes if not n.startswith("__"))
        ['agent', 'recall', 'remember']
    """
    from langchain_memoryos.controllers.chat_models import resolve_chat_model

    memory, store = _one_store(memory, store)
    chat = resolve_chat_model(model)
    bound: Any = chat.bind_tools(list(tools)) if tools else chat

    def route(state: Mapping[str, Any]) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls and tools else "remember"

    graph = StateGraph(MemoryAgentState)
    graph.add_node("recall", create_recall_node(memory))
    graph.add_node("agent", _model_node(bound, system_prompt or DEFAULT_AGENT_SYSTEM_PROMPT))
    graph.add_node("remember", create_remember_node(memory))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "agent")
    if tools:
        from langgraph.prebuilt import ToolNode

        graph.add_node("tools", ToolNode(list(tools)))
        graph.add_conditional_edges("agent", route, ["tools", "remember"])
        graph.add_edge("tools", "agent")
    else:
        graph.add_edge("agent", "remember")
    graph.add_edge("remember", END)
    return graph.compile(checkpointer=checkpointer, store=store)


def _one_store(
    memory: MemoryOS | MemoryFactory | None, store: BaseStore | None
) -> tuple[MemoryOS | MemoryFactory | None, BaseStore | None]:
    """The agent's memory and store, one store for both (see :func:`create_memoryos_agent`)."""
    from langchain_memoryos.memory import MemoryOS

    if isinstance(memory, MemoryOS):
        if store is not None and store is not memory.store:
            raise InvalidInputError(
                "create_memoryos_agent: memory= uses another store than store=; pass memory=MemoryOS(store) "
                "or only one of them (the graph and the memory share one store)."
            )
        store = memory.store
        share_memory(memory)
    elif store is not None:
        memory = memory_for_store(store, memory)
    return memory, store


def _model_node(bound: Any, instructions: str) -> RunnableLambda[Any, dict[str, Any]]:
    """The agent's model node: the instructions and the recalled memory as one system message, then the messages."""

    def prompt(state: Mapping[str, Any]) -> list[BaseMessage]:
        memory_text = state.get("memory_context") or ""
        system = f"{instructions}\n\n{memory_text}" if memory_text else instructions
        return [SystemMessage(system), *state["messages"]]

    def call_model(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [bound.invoke(prompt(state), config)]}

    async def acall_model(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(prompt(state), config)]}

    return RunnableLambda(call_model, afunc=acall_model, name="agent")
