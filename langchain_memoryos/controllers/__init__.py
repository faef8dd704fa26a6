"""Controllers: who makes the memory's judgements (see :mod:`.base`)."""

from langchain_memoryos.controllers.base import (
    BaseController,
    ControllerUsage,
    FuseResult,
    MemoryController,
    PageAnalysis,
    ParsedRecords,
    PromotionResult,
    RelationJudgement,
)
from langchain_memoryos.controllers.heuristic import HeuristicController

__all__ = [
    "BaseController",
    "ControllerUsage",
    "FuseResult",
    "HeuristicController",
    "MemoryController",
    "PageAnalysis",
    "ParsedRecords",
    "PromotionResult",
    "RelationJudgement",
]
