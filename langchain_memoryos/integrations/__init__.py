"""LangChain adapters: a ``RunnableWithMessageHistory`` replacement, a chat message history, a classic memory.

``MemoryOSMemory`` (a langchain-classic ``BaseMemory``) needs the ``classic``
extra and is imported on first use.

Example:
    >>> from langchain_memoryos.integrations import RunnableWithMemoryOS
    >>> RunnableWithMemoryOS.__name__
    'RunnableWithMemoryOS'
"""

from __future__ import annotations

from typing import Any

from langchain_memoryos.integrations.history import MemoryOSChatMessageHistory, RunnableWithMemoryOS, pair_messages

__all__ = ["MemoryOSChatMessageHistory", "MemoryOSMemory", "RunnableWithMemoryOS", "pair_messages"]


def __getattr__(name: str) -> Any:
    if name == "MemoryOSMemory":
        from langchain_memoryos.integrations.classic import MemoryOSMemory

        return MemoryOSMemory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
