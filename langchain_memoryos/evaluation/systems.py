"""What a LoCoMo run measures: the memory systems, their rows per word budget, and the baselines per budget.

Example:
    >>> [r.name for r in _memory_rows([MemorySystem("m", MemoryOSConfig(context_words=100))], [50, 100])]
    ['m ≤50 words', 'm']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.evaluation.baselines import Baseline

__all__ = ["DEFAULT_MEMORY_SYSTEMS", "MemorySystem", "budget_baselines"]


@dataclass(frozen=True)
class MemorySystem:
    """A memory configuration under test.

    Attributes:
        name: the system name in reports.
        config: its configuration.

    Example:
        >>> from langchain_memoryos.evaluation.benchmark import run_locomo
        >>> twice = [MemorySystem("memoryos", MemoryOSConfig()), MemorySystem("memoryos", MemoryOSConfig.paper())]
        >>> run_locomo("locomo.json", systems=twice, baselines=[])  # names label the report rows: unique
        Traceback (most recent call last):
        ...
        langchain_memoryos.errors.InvalidInputError: system names must be unique, got ['memoryos', 'memoryos']
    """

    name: str
    config: MemoryOSConfig


#: The memory under its default (measured) settings and under the paper's.
DEFAULT_MEMORY_SYSTEMS: tuple[MemorySystem, ...] = (
    MemorySystem("memoryos", MemoryOSConfig()),
    MemorySystem("memoryos (paper)", MemoryOSConfig.paper()),
)


@dataclass(frozen=True)
class _Row:
    """One memory row of the report: a system read at one word budget."""

    name: str
    system: MemorySystem
    config: MemoryOSConfig


def _memory_rows(systems: Sequence[MemorySystem], budgets: Sequence[int] | None) -> list[_Row]:
    """A row per system and budget; the config's own budget keeps the system's name, others get `` ≤N words``."""
    rows: list[_Row] = []
    for system in systems:
        own = system.config.context_words
        if not budgets or own is None:
            rows.append(_Row(system.name, system, system.config))
            continue
        for budget in budgets:
            name = system.name if budget == own else f"{system.name} ≤{budget} words"
            rows.append(_Row(name, system, replace(system.config, context_words=budget)))
    return rows


def budget_baselines(baselines: Sequence[Baseline], budgets: Sequence[int] | None) -> list[Baseline]:
    """``baselines`` plus every word-budget baseline (``≤N words``) at each of ``budgets``.

    Example:
        >>> [b.name for b in budget_baselines([Baseline("last", 5), Baseline("bm25", words=1000)], [250, 1000])]
        ['last-5', 'bm25 ≤1000 words', 'bm25 ≤250 words']
    """
    out = list(baselines)
    kinds = list(dict.fromkeys(b.kind for b in baselines if b.words is not None))
    for budget in budgets or ():
        for kind in kinds:
            extra = Baseline(kind, words=budget)
            if extra not in out:
                out.append(extra)
    return out


def _check_budgets(budgets: Sequence[int] | None) -> None:
    if budgets is None:
        return
    bad = [b for b in budgets if isinstance(b, bool) or not isinstance(b, int) or b < 1]
    if not budgets or bad:
        raise InvalidInputError(f"budgets must be word counts >= 1, got {list(budgets)}")
    if len(set(budgets)) != len(budgets):
        raise InvalidInputError(f"budgets must be distinct, got {list(budgets)}")
