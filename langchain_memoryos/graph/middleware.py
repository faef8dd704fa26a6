"""``MemoryOSMiddleware``: hierarchical memory for ``langchain.agents.create_agent`` in one line.

* before the agent runs: recall once, for the last human message;
* every model call: the recalled memory is added to the system message
  (``wrap_model_call``), so tool loops see it too;
* after the run: the turn (last human message, final answer, tool calls and
  results in the page metadata) is stored, idempotently by message ids; a side
  longer than ``MemoryOSConfig.max_message_chars`` is stored cut, with a
  visible marker (``add_turn`` would refuse it), so the run never fails on it.

The recalled text lives in a private state attribute (never in the agent's
input or output schema). The user comes from the run's context
(``context_schema`` with ``user_id``) or config, as everywhere in
:mod:`langchain_memoryos.graph`. Needs the ``agents`` extra (``langchain``).

Example:
    >>> from langchain.agents import create_agent
    >>> from langchain_core.language_models import GenericFakeChatModel
    >>> from langchain_core.messages import AIMessage
    >>> from langchain_memoryos import MemoryOS
    >>> memory = MemoryOS()
    >>> model = GenericFakeChatModel(messages=iter([AIMessage("Nice!")]))
    >>> agent = create_agent(model, middleware=[MemoryOSMiddleware(memory)])
    >>> out = agent.invoke({"messages": [("user", "I moved to Oslo.")]}, {"configurable": {"thread_id": "t1"}},
    ...                    context={"user_id": "ana"})
    >>> sorted(out), [(p.user_input, p.agent_response) for p in memory.get_stm(user_id="ana", thread_id="t1")]
    (['messages'], [('I moved to Oslo.', 'Nice!')])
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, NotRequired

from langchain_core.messages import SystemMessage

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
    from langchain.agents.middleware.types import PrivateStateAttr
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(
        "MemoryOSMiddleware needs langchain's create_agent; install the 'agents' extra: "
        "pip install 'langchain-memoryos[agents]'"
    ) from exc

from langchain_memoryos.graph.agent import fit_request, recall_prompt, recall_request, remember_request
from langchain_memoryos.graph.runtime import MemoryFactory, resolve_memory, share_memory
from langchain_memoryos.schema.messages import turn_keys

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from langchain_memoryos.memory import MemoryOS

__all__ = ["MemoryOSMiddleware", "MemoryOSState"]


class MemoryOSState(AgentState[Any]):
    """The agent state with the recalled memory as a private attribute."""

    memoryos_context: NotRequired[Annotated[str, PrivateStateAttr]]


def _with_memory(system: SystemMessage | None, memory_text: str) -> SystemMessage:
    if system is None:
        return SystemMessage(memory_text)
    content = system.content if isinstance(system.content, str) else str(system.text)
    return SystemMessage(f"{content}\n\n{memory_text}")


class MemoryOSMiddleware(AgentMiddleware[MemoryOSState, Any]):
    """Recall before the run, inject into every model call, remember after the run.

    Args:
        memory: the memory; ``None`` (or a factory): the memory over the store
            the agent runs with (``create_agent(..., store=...)``, or LangGraph
            Platform's), see :func:`~langchain_memoryos.graph.runtime.resolve_memory`.

    Example:
        >>> from types import SimpleNamespace
        >>> from langchain_core.messages import HumanMessage
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> _ = memory.add_turn("I moved to Oslo.", "Nice!", user_id="ana", thread_id="t1")
        >>> runtime = SimpleNamespace(context={"user_id": "ana"}, store=None)
        >>> update = MemoryOSMiddleware(memory).before_agent({"messages": [HumanMessage("Where do I live?")]}, runtime)
        >>> "User: I moved to Oslo." in update["memoryos_context"]
        True
    """

    state_schema = MemoryOSState

    def __init__(self, memory: MemoryOS | MemoryFactory | None = None) -> None:
        super().__init__()
        self.memory = memory
        if memory is not None and not callable(memory):
            share_memory(memory)

    def before_agent(self, state: MemoryOSState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Recall once per run for the last human message."""
        request = recall_request(state, "messages", context=runtime.context)
        if request is None:
            return {"memoryos_context": ""}
        memory = resolve_memory(self.memory, runtime.store, context=runtime.context)
        return {"memoryos_context": recall_prompt(memory.retrieve(**request), state, "messages")}

    async def abefore_agent(self, state: MemoryOSState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async twin of :meth:`before_agent`."""
        request = recall_request(state, "messages", context=runtime.context)
        if request is None:
            return {"memoryos_context": ""}
        memory = resolve_memory(self.memory, runtime.store, context=runtime.context)
        return {"memoryos_context": recall_prompt(await memory.aretrieve(**request), state, "messages")}

    @staticmethod
    def _trimmed(request: ModelRequest[Any]) -> dict[str, Any] | None:
        """The recall for the request's own messages when a middleware before this one trimmed the state's."""
        state = request.state or {}
        if turn_keys(list(request.messages)) == turn_keys(list(state.get("messages") or [])):
            return None  # the model gets the turns the run's recall left out: its block stands
        return recall_request({"messages": list(request.messages)}, "messages", context=request.runtime.context)

    def _request(self, request: ModelRequest[Any], memory_text: str) -> ModelRequest[Any]:
        if not memory_text:
            return request
        return request.override(system_message=_with_memory(request.system_message, memory_text))

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        """Add the recalled memory to the system message of every model call.

        When a middleware listed before this one trimmed the messages, the
        memory is recalled again for what the model gets, so the turns trimmed
        away may come back from memory and those kept are not repeated.
        """
        text = str((request.state or {}).get("memoryos_context") or "")
        again = self._trimmed(request)
        if again is not None:
            memory = resolve_memory(self.memory, request.runtime.store, context=request.runtime.context)
            text = recall_prompt(memory.retrieve(**again), {"messages": list(request.messages)}, "messages")
        return handler(self._request(request, text))

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> Any:
        """Async twin of :meth:`wrap_model_call`."""
        text = str((request.state or {}).get("memoryos_context") or "")
        again = self._trimmed(request)
        if again is not None:
            memory = resolve_memory(self.memory, request.runtime.store, context=request.runtime.context)
            text = recall_prompt(await memory.aretrieve(**again), {"messages": list(request.messages)}, "messages")
        return await handler(self._request(request, text))

    def after_agent(self, state: MemoryOSState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Store the turn that just ended (idempotent under replay and retry)."""
        request = remember_request(state, "messages", context=runtime.context)
        if request is not None:
            memory = resolve_memory(self.memory, runtime.store, context=runtime.context)
            memory.add_turn(**fit_request(memory, request))  # a huge message is stored cut, never refused
        return None

    async def aafter_agent(self, state: MemoryOSState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async twin of :meth:`after_agent`."""
        request = remember_request(state, "messages", context=runtime.context)
        if request is not None:
            memory = resolve_memory(self.memory, runtime.store, context=runtime.context)
            await memory.aadd_turn(**fit_request(memory, request))
        return None
