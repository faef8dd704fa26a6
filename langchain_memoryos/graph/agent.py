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

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph import END, START, MessagesState, StateGraph

from langchain_memoryos.graph.runtime import resolve_thread_id, resolve_user_id
from langchain_memoryos.integrations.messages import last_human_index, message_text, turn_from_messages

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool
    from langgraph.graph.state import CompiledStateGraph

    from langchain_memoryos.memory import MemoryOS

__all__ = [
    "MemoryAgentState",
    "create_memoryos_agent",
    "create_recall_node",
    "create_remember_node",
    "recall_request",
    "remember_request",
]

#: The prebuilt agent's system prompt when none is given.
DEFAULT_AGENT_SYSTEM_PROMPT = "You are a helpful assistant that remembers the user across conversations."


def _query(state: Mapping[str, Any], key: str) -> str:
    messages = list(state.get(key) or [])
    i = last_human_index(messages)
    return message_text(messages[i]).strip() if i is not None else ""


def recall_request(
    state: Mapping[str, Any], messages_key: str, config: RunnableConfig | None = None, context: Any = None
) -> dict[str, Any] | None:
    """``retrieve`` arguments for the last human message of the state, or ``None`` when there is none.

    Shared by the recall node and the middleware (sync and async).

    Example:
        >>> recall_request({"messages": []}, "messages") is None
        True
    """
    query = _query(state, messages_key)
    if not query:
        return None
    return {"query": query, "user_id": resolve_user_id(config, context=context), "thread_id": resolve_thread_id(config)}


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


def create_recall_node(
    memory: MemoryOS, *, messages_key: str = "messages", output_key: str = "memory_context"
) -> RunnableLambda[Any, dict[str, Any]]:
    """A node that retrieves the memory for the last human message into ``state[output_key]``.

    Args:
        memory: the memory.
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
        return {output_key: memory.retrieve(**request).to_prompt() if request else ""}

    async def arecall(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        request = recall_request(state, messages_key, config)
        return {output_key: (await memory.aretrieve(**request)).to_prompt() if request else ""}

    return RunnableLambda(recall, afunc=arecall, name="memoryos_recall")


def create_remember_node(memory: MemoryOS, *, messages_key: str = "messages") -> RunnableLambda[Any, dict[str, Any]]:
    """A node that stores the turn that just ended (idempotent under replay, resume and retry).

    The page is the last human message and the final AI message after it; the
    tool calls and tool results in between go to the page metadata. A turn
    still waiting for its final answer is not stored.

    Args:
        memory: the memory.
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
            memory.add_turn(**request)
        return {}

    async def aremember(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        request = remember_request(state, messages_key, config)
        if request is not None:
            await memory.aadd_turn(**request)
        return {}

    return RunnableLambda(remember, afunc=aremember, name="memoryos_remember")


class MemoryAgentState(MessagesState):
    """The prebuilt agent's state: the messages and the recalled memory context."""

    memory_context: str


def create_memoryos_agent(
    model: BaseChatModel | str,
    tools: Sequence[BaseTool] = (),
    *,
    memory: MemoryOS,
    system_prompt: str | None = None,
    checkpointer: Any = None,
    store: Any = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A compiled agent: recall → model (and tools, in a loop) → remember.

    The recalled memory is given to the model as a system message, after
    ``system_prompt``.

    Args:
        model: a chat model or an ``init_chat_model`` name.
        tools: tools the model may call.
        memory: the memory.
        system_prompt: the agent's instructions (default :data:`DEFAULT_AGENT_SYSTEM_PROMPT`).
        checkpointer: a LangGraph checkpointer for the conversation state.
        store: a LangGraph store for the graph (the memory has its own).

    Returns:
        The compiled graph (``invoke`` / ``ainvoke`` / ``stream`` / ``astream``).

    Example:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> from langchain_memoryos import MemoryOS
        >>> agent = create_memoryos_agent(GenericFakeChatModel(messages=iter([])), memory=MemoryOS())
        >>> sorted(n for n in agent.get_graph().nodes if not n.startswith("__"))
        ['agent', 'recall', 'remember']
    """
    from langchain_memoryos.controllers.chat_models import resolve_chat_model

    chat = resolve_chat_model(model)
    bound: Any = chat.bind_tools(list(tools)) if tools else chat
    instructions = system_prompt or DEFAULT_AGENT_SYSTEM_PROMPT

    def prompt(state: Mapping[str, Any]) -> list[BaseMessage]:
        memory_text = state.get("memory_context") or ""
        system = f"{instructions}\n\n{memory_text}" if memory_text else instructions
        return [SystemMessage(system), *state["messages"]]

    def call_model(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [bound.invoke(prompt(state), config)]}

    async def acall_model(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(prompt(state), config)]}

    def route(state: Mapping[str, Any]) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls and tools else "remember"

    graph = StateGraph(MemoryAgentState)
    graph.add_node("recall", create_recall_node(memory))
    graph.add_node("agent", RunnableLambda(call_model, afunc=acall_model, name="agent"))
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
