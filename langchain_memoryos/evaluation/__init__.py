"""Evaluation: the write-control suite and the LoCoMo admission check.

Example:
    >>> from langchain_memoryos.evaluation import load_write_control_suite
    >>> len(load_write_control_suite()) > 0
    True
"""

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
    "GOLD_ACTIONS",
    "SuiteWrite",
    "WriteControlResult",
    "load_write_control_suite",
    "predicted_action",
    "redundancy",
    "run_write_control",
]
