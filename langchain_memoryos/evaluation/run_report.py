"""What a LoCoMo run reports besides its rows: the run itself, the latency figures and the configurations.

Example:
    >>> _config_dict(MemoryOSConfig(top_facts=0))["top_facts"]
    0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.evaluation.metrics import QuestionOutcome, SystemSummary, percentile
from langchain_memoryos.evaluation.systems import _Row

__all__ = ["LocomoRun"]


@dataclass
class LocomoRun:
    """Everything one benchmark run measured.

    Attributes:
        summaries: one per system, memory systems first.
        outcomes: every question of every system.
        meta: the run's settings and timings (ingest turns/s per memory system,
            LLM calls and tokens per turn, file, conversations, date).

    Example:
        >>> LocomoRun([], [], {}).summary("x") is None
        True
    """

    summaries: list[SystemSummary]
    outcomes: list[QuestionOutcome]
    meta: dict[str, Any] = field(default_factory=dict)

    def summary(self, system: str) -> SystemSummary | None:
        """The summary of one system, or ``None``.

        Example:
            >>> LocomoRun([], [], {}).summary("memoryos") is None
            True
        """
        return next((s for s in self.summaries if s.system == system), None)


def _latency_meta(
    query_ms: Sequence[float], rows: Sequence[_Row], outcomes: Sequence[QuestionOutcome]
) -> dict[str, Any]:
    """The query embedding's p50/p95; per memory row with a budget, its p95 over the flat hybrid's at that budget."""
    answerable = {1, 2, 3, 4}
    p95: dict[str, float] = {}
    for name in {o.system for o in outcomes}:
        values = [o.latency_ms for o in outcomes if o.system == name and o.category in answerable]
        if values:
            p95[name] = percentile(values, 95)
    ratios: dict[str, float] = {}
    for row in rows:
        budget = row.config.context_words
        flat = f"hybrid ≤{budget} words"
        if budget is not None and row.name in p95 and p95.get(flat):
            ratios[f"{row.name} / {flat}"] = round(p95[row.name] / p95[flat], 2)
    return {
        "note": "end-to-end per question: the memory reads through uncached embeddings (its own query embeddings "
        "included); a dense or hybrid baseline is charged the question's embedding, measured once alone",
        "query_embedding_ms": {
            "p50": round(percentile(query_ms, 50), 2) if query_ms else None,
            "p95": round(percentile(query_ms, 95), 2) if query_ms else None,
        },
        "p95_ratio": ratios,
    }


def _config_dict(config: MemoryOSConfig) -> dict[str, Any]:
    return {
        key: getattr(config, key)
        for key in (
            "page_ranking",
            "top_segments",
            "top_pages",
            "top_facts",
            "context_words",
            "rrf_k",
            "lexical_weight",
            "dense_weight",
            "stm_capacity",
        )
    }
