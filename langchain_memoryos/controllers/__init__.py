"""Controllers: who makes the memory's judgements (see :mod:`.base`).

:class:`LLMController` is loaded on first access: the offline memory never
imports LangChain's chat-model classes.

Example:
    >>> from langchain_memoryos.controllers import HeuristicController, LLMController
    >>> LLMController.__name__
    'LLMController'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_memoryos.controllers.base import (
    BaseController,
    ControllerUsage,
    FuseResult,
    MemoryController,
    MemoryRequest,
    PageAnalysis,
    ParsedRecords,
    PromotionResult,
    RelationJudgement,
)
from langchain_memoryos.controllers.heuristic import HeuristicController
from langchain_memoryos.controllers.prompts import Prompts

if TYPE_CHECKING:
    from langchain_memoryos.controllers.llm import LLMController


def __getattr__(name: str) -> Any:
    """Load :class:`LLMController` (and LangChain's chat models) on first access (PEP 562).

    Example:
        >>> import langchain_memoryos.controllers as controllers
        >>> controllers.LLMController.__name__
        'LLMController'
    """
    if name == "LLMController":
        from langchain_memoryos.controllers.llm import LLMController

        globals()[name] = LLMController
        return LLMController
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BaseController",
    "ControllerUsage",
    "FuseResult",
    "HeuristicController",
    "LLMController",
    "MemoryController",
    "MemoryRequest",
    "PageAnalysis",
    "ParsedRecords",
    "PromotionResult",
    "Prompts",
    "RelationJudgement",
]
