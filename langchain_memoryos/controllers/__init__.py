"""Controllers: who makes the memory's judgements (see :mod:`.base`).

:class:`LLMController` is loaded on first access: the offline memory never
imports LangChain's chat-model classes.

Example:
    >>> from langchain_memoryos.controllers import HeuristicController
    >>> from langchain_memoryos.schema import DialoguePage
    >>> page = DialoguePage(id="p", user_input="I live in Oslo.", agent_response="Nice.")
    >>> [r.summary for r in HeuristicController().analyze_page(page, None, None).records]
    ['The user lives in Oslo.']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_memoryos.controllers.heuristic import HeuristicController
from langchain_memoryos.controllers.prompts import Prompts
from langchain_memoryos.kernel.controller import (
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

if TYPE_CHECKING:
    from langchain_memoryos.controllers.llm import LLMController


def __getattr__(name: str) -> Any:
    """Load :class:`LLMController` (and LangChain's chat models) on first access (PEP 562).

    Example:
        >>> import subprocess, sys
        >>> code = (  # a new process: chat models are imported when LLMController is first used, not before
        ...     "import sys, langchain_memoryos.controllers as c; before = 'langchain_memoryos.controllers.llm' in "
        ...     "sys.modules; c.LLMController; print(before, 'langchain_memoryos.controllers.llm' in sys.modules)"
        ... )
        >>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
        ['False', 'True']
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
