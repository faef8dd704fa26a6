"""The rows a LoCoMo run reads again over the stores it filled: answers-in-context variants, raw turns, LOCO-CV.

Every row here is read with ``touch=False`` through another ``MemoryOS`` over a store already filled
(nothing is ingested again and no stored state changes), or ranks the raw turns flat.

Example:
    >>> from langchain_memoryos.evaluation.systems import MemorySystem
    >>> _cv_targets([MemorySystem("m", MemoryOSConfig())], None, ["m"], 1)
    Traceback (most recent call last):
    ...
    langchain_memoryos.errors.InvalidInputError: cv_systems needs a cv_grid
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings

from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.evaluation.answer_rows import (
    CV_FACTS,
    NO_FACTS,
    ORACLE_FACTS,
    RAW_TURNS,
    raw_turn_pages,
    variant_name,
    with_answers,
)
from langchain_memoryos.evaluation.baselines import Baseline, FlatPages, render_pages
from langchain_memoryos.evaluation.cv import Grid, check_grid, config_value, loco_cv, recall_1_4, with_values
from langchain_memoryos.evaluation.locomo import LocomoPage, LocomoQuestion
from langchain_memoryos.evaluation.metrics import QuestionOutcome
from langchain_memoryos.evaluation.protocols import Protocol
from langchain_memoryos.evaluation.reading import _ask_memory, _outcome, _reader, _Silent
from langchain_memoryos.evaluation.systems import MemorySystem, _Row

__all__: list[str] = []


def _answer_table_rows(
    answer_rows: Sequence[_Row], cv_targets: Sequence[MemorySystem], names: Sequence[str]
) -> dict[int, dict[str, str]]:
    """Per budget of the measured memory, the rows of the answers-in-context table."""
    table: dict[int, dict[str, str]] = {}
    for row in answer_rows:
        budget = row.config.context_words
        if budget is None:
            continue
        system = row.system.name
        entry = {
            "with facts": row.name,
            "without facts": variant_name(row.name, system, NO_FACTS),
            "oracle facts": variant_name(row.name, system, ORACLE_FACTS),
            "hybrid": f"hybrid ≤{budget} words",
            "raw turns": f"{RAW_TURNS} ≤{budget} words",
        }
        for target in cv_targets:
            if target is row.system and target.config.context_words == budget:
                entry["with facts (LOCO-CV)"] = f"{system} (LOCO-CV)"
        entry["with facts (LOCO-CV words)"] = variant_name(row.name, system, CV_FACTS)
        table[budget] = {label: name for label, name in entry.items() if name in names or label != "hybrid"}
    return table


def _read_only_row(
    memory: Any,
    config: MemoryOSConfig,
    embeddings: Embeddings,
    user_id: str,
    proto: Protocol,
    questions: Sequence[LocomoQuestion],
    name: str,
) -> list[QuestionOutcome]:
    """A row read through another ``MemoryOS`` over ``memory``'s store with ``touch=False`` (state unchanged).

    Its latency means nothing (cached embeddings); it is scored for answers in context.
    """
    thread = proto.question_thread(user_id)
    reader = _reader(memory, config, embeddings, user_id, thread)
    try:
        asked = list(_ask_memory(reader, user_id, thread, questions, lambda n, d: _Silent(), name, touch=False))
    finally:
        reader.close()
    scored = [_outcome(name, q, context, ids, math.nan, None, ("", ""), "", {}) for q, context, ids, _ in asked]
    return with_answers(scored, [context for _, context, _, _ in asked])


def _raw_turn_rows(
    pages: Sequence[LocomoPage], embeddings: Embeddings, questions: Sequence[LocomoQuestion], budgets: Sequence[int]
) -> list[QuestionOutcome]:
    """The trivial store: the conversation's raw turns most similar to each question (flat hybrid), per budget."""
    turns = raw_turn_pages(pages)
    flat = FlatPages(
        turns,
        embeddings=embeddings,
        rrf_k=MemoryOSConfig().rrf_k,
        embed_texts=[f"{t.user_speaker}: {t.user_input}" for t in turns],
    )
    out: list[QuestionOutcome] = []
    for budget in budgets:
        baseline, name = Baseline("hybrid", words=budget), f"{RAW_TURNS} ≤{budget} words"
        scored, contexts = [], []
        for q in questions:
            chosen = baseline.select(flat, q.question)
            contexts.append(render_pages(chosen))
            ids = frozenset(d for page in chosen for d in page.dia_ids)
            scored.append(_outcome(name, q, contexts[-1], ids, math.nan, None, ("", ""), "", {}))
        out += with_answers(scored, contexts)
    return out


def _cv_targets(
    systems: Sequence[MemorySystem], grid: Grid | None, names: Sequence[str] | None, passes: int
) -> list[MemorySystem]:
    if grid is None:
        if names:
            raise InvalidInputError("cv_systems needs a cv_grid")
        return []
    if passes < 1:
        raise InvalidInputError(f"cv_passes must be >= 1, got {passes}")
    if not systems:
        raise InvalidInputError("cross-validation needs a memory system")
    wanted = list(names) if names else [systems[0].name]
    by_name = {s.name: s for s in systems}
    unknown = [n for n in wanted if n not in by_name]
    if unknown:
        raise InvalidInputError(f"cv_systems: unknown systems {unknown}; the systems are {list(by_name)}")
    for name in wanted:
        check_grid(grid, by_name[name].config)
    return [by_name[n] for n in wanted]


def _cross_validate(
    config: MemoryOSConfig,
    name: str,
    memories: Mapping[str, tuple[Any, Sequence[LocomoQuestion]]],
    proto: Protocol,
    grid: Grid,
    embeddings: Embeddings,
    bar: Callable[[int, str], Any],
    *,
    passes: int,
    score: Callable[[Sequence[QuestionOutcome]], float] = recall_1_4,
    objective: str = "evidence recall, categories 1-4",
) -> tuple[list[QuestionOutcome], dict[str, Any]]:
    """LOCO-CV of ``grid`` over the stores already filled; each grid point is read, never re-ingested.

    Each conversation is read as row ``name`` with the constants that maximise ``score`` over the other
    conversations (:func:`~langchain_memoryos.evaluation.cv.loco_cv`): the ranking constants on evidence
    recall, the facts' words on answers in context over chance
    (:func:`~langchain_memoryos.evaluation.cv.answers_over_chance`).
    """
    counter = bar(0, f"LOCO-CV [{name}] grid points")

    def evaluate(conv: str, params: Mapping[str, Any]) -> list[QuestionOutcome]:
        memory, questions = memories[conv]
        try:  # read through the cached embeddings: a grid point's latency means nothing
            return _read_only_row(memory, with_values(config, params), embeddings, conv, proto, questions, name)
        finally:
            counter.update(1)

    started = time.perf_counter()
    start = {key: config_value(config, key) for key in grid}
    try:
        cv = loco_cv(list(memories), evaluate, start, grid, passes=passes, score=score)
    finally:
        counter.close()
    info = {
        "grid": {key: list(values) for key, values in grid.items()},
        "objective": objective,
        "start": start,
        "chosen": cv.chosen,
        "train_recall" if score is recall_1_4 else "train_score": {
            conv: round(value, 4) for conv, value in cv.train_recall.items()
        },
        "evaluations": cv.evaluations,
        "seconds": round(time.perf_counter() - started, 1),
    }
    return cv.held_out, info
