"""langchain-memoryos: hierarchical memory (MemoryOS) with controlled writes (AMU).

For LangGraph and LangChain agents.

Example:
    >>> from langchain_memoryos import MemoryOS
    >>> memory = MemoryOS()
    >>> _ = memory.add_turn("I moved to Denver.", "Nice!", user_id="u1")
    >>> memory.stats("u1").stm_pages
    1
"""

from importlib.metadata import PackageNotFoundError, version

from langchain_memoryos.config import MemoryOSConfig, ModelThresholds
from langchain_memoryos.controllers import (
    BaseController,
    ControllerUsage,
    HeuristicController,
    LLMController,
    MemoryController,
    Prompts,
)
from langchain_memoryos.embeddings import EmbeddingsNotAvailableError, MiniLMEmbeddings, resolve_embeddings
from langchain_memoryos.integrations.history import MemoryOSChatMessageHistory, RunnableWithMemoryOS
from langchain_memoryos.memory import MemoryOS
from langchain_memoryos.schema import (
    DialoguePage,
    MemoryContext,
    MemoryRecord,
    MemoryStats,
    Persona,
    Relation,
    Segment,
    WriteEvent,
    WriteReport,
)
from langchain_memoryos.store.repository import MemoryRepository

try:
    __version__ = version("langchain-memoryos")
except PackageNotFoundError:  # pragma: no cover - source checkout without install
    __version__ = "0.0.0"

from langchain_memoryos.amu.corrections import FactNotFoundError

__all__ = [
    "BaseController",
    "ControllerUsage",
    "DialoguePage",
    "EmbeddingsNotAvailableError",
    "FactNotFoundError",
    "HeuristicController",
    "LLMController",
    "MemoryContext",
    "MemoryController",
    "MemoryOS",
    "MemoryOSChatMessageHistory",
    "MemoryOSConfig",
    "MemoryRecord",
    "MemoryRepository",
    "MemoryStats",
    "MiniLMEmbeddings",
    "ModelThresholds",
    "Persona",
    "Prompts",
    "Relation",
    "RunnableWithMemoryOS",
    "Segment",
    "WriteEvent",
    "WriteReport",
    "__version__",
    "resolve_embeddings",
]
