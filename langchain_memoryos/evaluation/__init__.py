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
    LocomoRun,
    MemorySystem,
    run_locomo,
)
from langchain_memoryos.evaluation.locomo import (
    LocomoPage,
    LocomoQuestion,
    conversation_pages,
    ingest_conversation,
    load_locomo,
    load_questions,
    normalize_evidence,
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
    "DEFAULT_MEMORY_SYSTEMS",
    "GOLD_ACTIONS",
    "Baseline",
    "FlatPages",
    "LocomoPage",
    "LocomoQuestion",
    "LocomoRun",
    "MemorySystem",
    "QuestionOutcome",
    "SuiteWrite",
    "SystemSummary",
    "WriteControlResult",
    "conversation_pages",
    "ingest_conversation",
    "load_locomo",
    "load_questions",
    "load_write_control_suite",
    "markdown_table",
    "normalize_evidence",
    "plot_recall_vs_words",
    "predicted_action",
    "redundancy",
    "run_locomo",
    "run_write_control",
    "summarize",
    "write_report",
]
