"""langchain-memoryos: hierarchical memory (MemoryOS) with controlled writes (AMU).

For LangGraph and LangChain agents.

Importing the package is cheap: every public name is loaded on first access
(PEP 562), so ``import langchain_memoryos`` and the ``memoryos`` command do not
load the encoder, FAISS or LangChain's model classes until they are used.

Example:
    >>> from langchain_memoryos import MemoryOS
    >>> memory = MemoryOS()
    >>> _ = memory.add_turn("I moved to Denver.", "Nice!", user_id="u1")
    >>> memory.stats(user_id="u1").stm_pages
    1
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_memoryos.config import MemoryOSConfig, ModelThresholds
    from langchain_memoryos.controllers.heuristic import HeuristicController
    from langchain_memoryos.controllers.llm import LLMController
    from langchain_memoryos.controllers.prompts import Prompts
    from langchain_memoryos.embeddings.encode import resolve_embeddings
    from langchain_memoryos.embeddings.minilm import MiniLMEmbeddings
    from langchain_memoryos.errors import (
        BackgroundWriteError,
        ConfigError,
        ConfigTypeError,
        EmbeddingsNotAvailableError,
        FactNotFoundError,
        InvalidInputError,
        InvalidTypeError,
        MemoryOSError,
        MissingStoreError,
        MissingUserIdError,
        PageNotFoundError,
    )
    from langchain_memoryos.inspector import create_inspector_app
    from langchain_memoryos.integrations.history import MemoryOSChatMessageHistory, RunnableWithMemoryOS
    from langchain_memoryos.kernel.controller import BaseController, ControllerUsage, MemoryController
    from langchain_memoryos.memory import MemoryOS
    from langchain_memoryos.schema import (
        DialoguePage,
        FactHistory,
        ForgetReport,
        MemoryContext,
        MemoryRecord,
        MemoryStats,
        Persona,
        Relation,
        SearchHit,
        Segment,
        WriteEvent,
        WriteReport,
    )
    from langchain_memoryos.schema.messages import pair_messages
    from langchain_memoryos.store.repository import MemoryRepository

    __version__: str

#: Where each public name is defined: ``from langchain_memoryos import X`` imports that module on first use.
_EXPORTS: dict[str, str] = {
    "BackgroundWriteError": "langchain_memoryos.errors",
    "BaseController": "langchain_memoryos.kernel.controller",
    "ConfigError": "langchain_memoryos.errors",
    "ConfigTypeError": "langchain_memoryos.errors",
    "ControllerUsage": "langchain_memoryos.kernel.controller",
    "DialoguePage": "langchain_memoryos.schema",
    "EmbeddingsNotAvailableError": "langchain_memoryos.errors",
    "FactHistory": "langchain_memoryos.schema",
    "FactNotFoundError": "langchain_memoryos.errors",
    "ForgetReport": "langchain_memoryos.schema",
    "HeuristicController": "langchain_memoryos.controllers.heuristic",
    "InvalidInputError": "langchain_memoryos.errors",
    "InvalidTypeError": "langchain_memoryos.errors",
    "LLMController": "langchain_memoryos.controllers.llm",
    "MemoryContext": "langchain_memoryos.schema",
    "MemoryController": "langchain_memoryos.kernel.controller",
    "MemoryOS": "langchain_memoryos.memory",
    "MemoryOSChatMessageHistory": "langchain_memoryos.integrations.history",
    "MemoryOSConfig": "langchain_memoryos.config",
    "MemoryOSError": "langchain_memoryos.errors",
    "MemoryRecord": "langchain_memoryos.schema",
    "MemoryRepository": "langchain_memoryos.store.repository",
    "MemoryStats": "langchain_memoryos.schema",
    "MiniLMEmbeddings": "langchain_memoryos.embeddings.minilm",
    "MissingStoreError": "langchain_memoryos.errors",
    "MissingUserIdError": "langchain_memoryos.errors",
    "ModelThresholds": "langchain_memoryos.config",
    "PageNotFoundError": "langchain_memoryos.errors",
    "Persona": "langchain_memoryos.schema",
    "Prompts": "langchain_memoryos.controllers.prompts",
    "Relation": "langchain_memoryos.schema",
    "RunnableWithMemoryOS": "langchain_memoryos.integrations.history",
    "SearchHit": "langchain_memoryos.schema",
    "Segment": "langchain_memoryos.schema",
    "WriteEvent": "langchain_memoryos.schema",
    "WriteReport": "langchain_memoryos.schema",
    "create_inspector_app": "langchain_memoryos.inspector",
    "pair_messages": "langchain_memoryos.schema.messages",
    "resolve_embeddings": "langchain_memoryos.embeddings.encode",
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("langchain-memoryos")
    except PackageNotFoundError:  # pragma: no cover - source checkout without install
        return "0.0.0"


def __getattr__(name: str) -> Any:
    """Load a public name on first access (PEP 562) and keep it in the module.

    Args:
        name: the attribute asked for.

    Returns:
        The object ``name`` is bound to in its defining module (``__version__``: the installed version;
        a submodule's name: the submodule).

    Raises:
        AttributeError: if ``name`` is not a public name of the package.

    Example:
        >>> import langchain_memoryos
        >>> langchain_memoryos.MemoryOSConfig().stm_capacity  # loaded on first access, used as if imported
        7
        >>> langchain_memoryos.config.MemoryOSConfig is langchain_memoryos.MemoryOSConfig
        True
        >>> langchain_memoryos.no_such_name
        Traceback (most recent call last):
        ...
        AttributeError: module 'langchain_memoryos' has no attribute 'no_such_name'
    """
    if name == "__version__":
        value: Any = _version()
    elif name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    elif name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    else:  # a subpackage, as when the package imported everything eagerly (langchain_memoryos.memory ...)
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's attributes with every public name, loaded or not.

    Example:
        >>> "MemoryOS" in dir(__import__("langchain_memoryos"))
        True
    """
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "BackgroundWriteError",
    "BaseController",
    "ConfigError",
    "ConfigTypeError",
    "ControllerUsage",
    "DialoguePage",
    "EmbeddingsNotAvailableError",
    "FactHistory",
    "FactNotFoundError",
    "ForgetReport",
    "HeuristicController",
    "InvalidInputError",
    "InvalidTypeError",
    "LLMController",
    "MemoryContext",
    "MemoryController",
    "MemoryOS",
    "MemoryOSChatMessageHistory",
    "MemoryOSConfig",
    "MemoryOSError",
    "MemoryRecord",
    "MemoryRepository",
    "MemoryStats",
    "MiniLMEmbeddings",
    "MissingStoreError",
    "MissingUserIdError",
    "ModelThresholds",
    "PageNotFoundError",
    "Persona",
    "Prompts",
    "Relation",
    "RunnableWithMemoryOS",
    "SearchHit",
    "Segment",
    "WriteEvent",
    "WriteReport",
    "__version__",
    "create_inspector_app",
    "pair_messages",
    "resolve_embeddings",
]
