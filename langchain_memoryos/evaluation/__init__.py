"""Evaluation: the write-control suite, the LoCoMo admission check and the LoCoMo benchmark.

Example:
    >>> from langchain_memoryos.evaluation import load_write_control_suite
    >>> len(load_write_control_suite()) > 0
    True
"""

from langchain_memoryos.evaluation.baselines import DEFAULT_BASELINES, Baseline, FlatPages
from langchain_memoryos.evaluation.benchmark import (
    DEFAULT_ANSWER_PROMPT,
    DEFAULT_MEMORY_SYSTEMS,
    PROTOCOLS,
    LocomoRun,
    MemorySystem,
    Protocol,
    budget_baselines,
    run_locomo,
)
from langchain_memoryos.evaluation.cv import DEFAULT_CV_GRID, CrossValidation, coordinate_ascent, loco_cv
from langchain_memoryos.evaluation.embedding_cache import CachedEmbeddings
from langchain_memoryos.evaluation.locomo import (
    LocomoPage,
    LocomoQuestion,
    conversation_pages,
    ingest_conversation,
    ingest_plain,
    load_locomo,
    load_questions,
    normalize_evidence,
    plain_pages,
)
from langchain_memoryos.evaluation.metrics import QuestionOutcome, SystemSummary, summarize
from langchain_memoryos.evaluation.report import markdown_table, plot_recall_vs_words, write_report
from langchain_memoryos.evaluation.write_control import (
    GOLD_ACTIONS,
    SuiteWrite,
    WriteControlResult,
    load_write_control_suite,
    predicted_action,
    redundancy,
    run_write_control,
)

__all__ = [
    "DEFAULT_ANSWER_PROMPT",
    "DEFAULT_BASELINES",
    "DEFAULT_CV_GRID",
    "DEFAULT_MEMORY_SYSTEMS",
    "GOLD_ACTIONS",
    "PROTOCOLS",
    "Baseline",
    "CachedEmbeddings",
    "CrossValidation",
    "FlatPages",
    "LocomoPage",
    "LocomoQuestion",
    "LocomoRun",
    "MemorySystem",
    "Protocol",
    "QuestionOutcome",
    "SuiteWrite",
    "SystemSummary",
    "WriteControlResult",
    "budget_baselines",
    "conversation_pages",
    "coordinate_ascent",
    "ingest_conversation",
    "ingest_plain",
    "load_locomo",
    "loco_cv",
    "load_questions",
    "load_write_control_suite",
    "markdown_table",
    "normalize_evidence",
    "plain_pages",
    "plot_recall_vs_words",
    "predicted_action",
    "redundancy",
    "run_locomo",
    "run_write_control",
    "summarize",
    "write_report",
]
