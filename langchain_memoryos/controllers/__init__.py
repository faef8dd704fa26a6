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
from langchain_memoryos.controllers.llm import LLMController
from langchain_memoryos.controllers.prompts import Prompts

__all__ = [
    "BaseController",
    "ControllerUsage",
    "FuseResult",
    "HeuristicController",
    "LLMController",
    "MemoryController",
    "PageAnalysis",
    "ParsedRecords",
    "PromotionResult",
    "Prompts",
    "RelationJudgement",
]
