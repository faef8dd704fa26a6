"""The controller protocol and its answers, importable where they were first defined.

They live in :mod:`langchain_memoryos.kernel.controller`.

The protocol belongs to the effect kernel, the package's bottom layer, so that
the kernel names no controller implementation; this module keeps the names
importable from ``langchain_memoryos.controllers.base``.

Example:
    >>> from langchain_memoryos.controllers.base import MemoryController
    >>> from langchain_memoryos.controllers import HeuristicController
    >>> isinstance(HeuristicController(), MemoryController), MemoryController.__module__
    (True, 'langchain_memoryos.kernel.controller')
"""

from langchain_memoryos.kernel.controller import (
    BaseController,
    ControllerUsage,
    FuseResult,
    MemoryController,
    MemoryRequest,
    PageAnalysis,
    ParsedRecords,
    PromotionResult,
    QueryPlan,
    RelationJudgement,
)

__all__ = [
    "BaseController",
    "ControllerUsage",
    "FuseResult",
    "MemoryController",
    "MemoryRequest",
    "PageAnalysis",
    "ParsedRecords",
    "PromotionResult",
    "QueryPlan",
    "RelationJudgement",
]
