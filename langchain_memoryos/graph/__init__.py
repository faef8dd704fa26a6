"""LangGraph integration: drop-in recall / remember nodes, a prebuilt agent, memory tools, middleware.

``MemoryOSMiddleware`` (for ``langchain.agents.create_agent``) is imported on
first use, as it needs the ``agents`` extra.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> from langchain_memoryos import MemoryOS
    >>> from langchain_memoryos.graph import create_recall_node, create_remember_node
    >>> memory = MemoryOS()
    >>> cfg = {"configurable": {"user_id": "ana", "thread_id": "t1"}}
    >>> turn = [HumanMessage("I play the cello.", id="h1"), AIMessage("Lovely.", id="a1")]
    >>> create_remember_node(memory).invoke({"messages": turn}, cfg)
    {}
    >>> recalled = create_recall_node(memory).invoke({"messages": [HumanMessage("What do I play?")]}, cfg)
    >>> "I play the cello." in recalled["memory_context"]
    True
"""

from typing import TYPE_CHECKING

from langchain_memoryos.graph.agent import create_memoryos_agent, create_recall_node, create_remember_node
from langchain_memoryos.graph.runtime import (
    MissingStoreError,
    MissingUserIdError,
    memory_for_store,
    resolve_agent_id,
    resolve_memory,
    resolve_thread_id,
    resolve_user_id,
)
from langchain_memoryos.graph.tools import create_manage_memory_tool, create_search_memory_tool

if TYPE_CHECKING:  # imported on first use (the agents extra); typed for callers all the same
    from langchain_memoryos.graph.middleware import MemoryOSMiddleware

__all__ = [
    "MemoryOSMiddleware",
    "MissingStoreError",
    "MissingUserIdError",
    "create_manage_memory_tool",
    "create_memoryos_agent",
    "create_recall_node",
    "create_remember_node",
    "create_search_memory_tool",
    "memory_for_store",
    "resolve_agent_id",
    "resolve_memory",
    "resolve_thread_id",
    "resolve_user_id",
]


def __getattr__(name: str) -> object:
    if name == "MemoryOSMiddleware":
        from langchain_memoryos.graph.middleware import MemoryOSMiddleware

        return MemoryOSMiddleware
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
