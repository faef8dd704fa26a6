"""LangChain adapters: a ``RunnableWithMessageHistory`` replacement, a chat message history, a classic memory.

``MemoryOSMemory`` (a langchain-classic ``BaseMemory``) needs the ``classic``
extra and is imported on first use.

Example:
    >>> from langchain_core.messages import AIMessage
    >>> from langchain_core.runnables import RunnableLambda
    >>> from langchain_memoryos import MemoryOS
    >>> from langchain_memoryos.integrations import MemoryOSChatMessageHistory, RunnableWithMemoryOS
    >>> memory = MemoryOS()
    >>> chain = RunnableWithMemoryOS(RunnableLambda(lambda messages: AIMessage("Noted.")), memory)
    >>> _ = chain.invoke("I live in Oslo.", {"configurable": {"user_id": "ana", "session_id": "s1"}})
    >>> [(m.type, m.content) for m in MemoryOSChatMessageHistory(memory, user_id="ana", session_id="s1").messages]
    [('human', 'I live in Oslo.'), ('ai', 'Noted.')]
"""

from __future__ import annotations

from typing import Any

from langchain_memoryos.integrations.history import MemoryOSChatMessageHistory, RunnableWithMemoryOS
from langchain_memoryos.schema.messages import pair_messages

__all__ = ["MemoryOSChatMessageHistory", "MemoryOSMemory", "RunnableWithMemoryOS", "pair_messages"]


def __getattr__(name: str) -> Any:
    if name == "MemoryOSMemory":
        from langchain_memoryos.integrations.classic import MemoryOSMemory

        return MemoryOSMemory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
