"""``MemoryOSMiddleware``: hierarchical memory for ``langchain.agents.create_agent`` in one line.

* before the agent runs: recall once, for the last human message;
* every model call: the recalled memory is added to the system message
  (``wrap_model_call``), so tool loops see it too;
* after the run: the turn (last human message, final answer, tool calls and
  results in the page metadata) is stored, idempotently by message ids.

The recalled text lives in a private state attribute (never in the agent's
input or output schema). The user comes from the run's context
(``context_schema`` with ``user_id``) or config, as everywhere in
:mod:`langchain_memoryos.graph`. Needs the ``agents`` extra (``langchain``).

Example:
    >>> from langchain_memoryos import MemoryOS
    >>> MemoryOSMiddleware(MemoryOS()).name
    'MemoryOSMiddleware'
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

from langchain_memoryos.graph.agent import _query, _turn
from langchain_memoryos.graph.runtime import resolve_thread_id, resolve_user_id

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
        memory: the memory.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> MemoryOSMiddleware(MemoryOS()).state_schema.__name__
        'MemoryOSState'
    """

    state_schema = MemoryOSState

    def __init__(self, memory: MemoryOS) -> None:
        super().__init__()
        self.memory = memory

    def before_agent(self, state: MemoryOSState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Recall once per run for the last human message."""
        query = _query(state, "messages")
        if not query:
            return {"memoryos_context": ""}
        user = resolve_user_id(context=runtime.context)
        ctx = self.memory.retrieve(query, user_id=user, thread_id=resolve_thread_id())
        return {"memoryos_context": ctx.to_prompt()}

    async def abefore_agent(self, state: MemoryOSState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async twin of :meth:`before_agent`."""
        query = _query(state, "messages")
        if not query:
            return {"memoryos_context": ""}
        user = resolve_user_id(context=runtime.context)
        ctx = await self.memory.aretrieve(query, user_id=user, thread_id=resolve_thread_id())
        return {"memoryos_context": ctx.to_prompt()}

    def _request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        memory_text = str((request.state or {}).get("memoryos_context") or "")
        if not memory_text:
            return request
        return request.override(system_message=_with_memory(request.system_message, memory_text))

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        """Add the recalled memory to the system message of every model call."""
        return handler(self._request(request))

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> Any:
        """Async twin of :meth:`wrap_model_call`."""
        return await handler(self._request(request))

    def after_agent(self, state: MemoryOSState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Store the turn that just ended (idempotent under replay and retry)."""
        turn = _turn(list(state.get("messages") or []))
        if turn is not None:
            user_input, answer, metadata, turn_id = turn
            user = resolve_user_id(context=runtime.context)
            self.memory.add_turn(
                user_input, answer, user_id=user, thread_id=resolve_thread_id(), metadata=metadata, turn_id=turn_id
            )
        return None

    async def aafter_agent(self, state: MemoryOSState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async twin of :meth:`after_agent`."""
        turn = _turn(list(state.get("messages") or []))
        if turn is not None:
            user_input, answer, metadata, turn_id = turn
            user = resolve_user_id(context=runtime.context)
            await self.memory.aadd_turn(
                user_input, answer, user_id=user, thread_id=resolve_thread_id(), metadata=metadata, turn_id=turn_id
            )
        return None
