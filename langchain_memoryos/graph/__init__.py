"""LangGraph integration: drop-in recall / remember nodes, a prebuilt agent and memory tools.

Example:
    >>> from langchain_memoryos.graph import create_recall_node
    >>> callable(create_recall_node)
    True
"""

from langchain_memoryos.graph.agent import create_memoryos_agent, create_recall_node, create_remember_node
from langchain_memoryos.graph.runtime import MissingUserIdError, resolve_thread_id, resolve_user_id
from langchain_memoryos.graph.tools import create_manage_memory_tool, create_search_memory_tool

__all__ = [
    "MissingUserIdError",
    "create_manage_memory_tool",
    "create_memoryos_agent",
    "create_recall_node",
    "create_remember_node",
    "create_search_memory_tool",
    "resolve_thread_id",
    "resolve_user_id",
]
