"""Leave-one-conversation-out cross-validation of fitted constants: no figure scored on the data that chose it.

Every constant chosen on data is chosen without the conversation it is scored
on: for each conversation, the constants are fitted by coordinate ascent on the
pooled evidence recall (categories 1–4) of the *other* conversations, then the
held-out conversation is scored with them; the held-out results of all folds
are pooled into one figure.

The grid is generic: a field name of :class:`~langchain_memoryos.config.MemoryOSConfig`
(``"rrf_k"``) or one component of a tuple field (``"chain_weights[0]"``) →
its candidate values. The scoring is a callback, so the same code fits any
retrieval-only setting.

Example:
    x = 0 finds the evidence of conversations a and b, x = 1 that of c. Fitted
    on all three, x = 0 scores 2/3; but no conversation is scored with
    constants that saw it: without a, x = 0 and x = 1 tie on b and c (the start,
    1, is kept) and a misses; likewise b; without c, x = 0 wins and c misses.

    >>> table = {"a": {0: 1.0, 1: 0.0}, "b": {0: 1.0, 1: 0.0}, "c": {0: 0.0, 1: 1.0}}
    >>> def evaluate(conv, params):  # one question per conversation, recall from the table
    ...     hit = table[conv][params["x"]] == 1.0
    ...     return [QuestionOutcome("m", conv, "q", 4, ("D1:1",), frozenset({"D1:1"} if hit else ()), 1, 1, 1.0)]
    >>> cv = loco_cv(["a", "b", "c"], evaluate, {"x": 1}, {"x": (0, 1)})
    >>> cv.chosen, recall_1_4(cv.held_out)
    ({'a': {'x': 1}, 'b': {'x': 1}, 'c': {'x': 0}}, 0.0)
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.evaluation.metrics import QuestionOutcome

__all__ = [
    "ANSWERS_CV_GRID",
    "DEFAULT_CV_GRID",
    "CrossValidation",
    "Grid",
    "check_grid",
    "config_value",
    "coordinate_ascent",
    "loco_cv",
    "answers_over_chance",
    "recall_1_4",
    "with_values",
]

#: Field name (or ``field[i]`` for one component of a tuple field) → candidate values.
Grid = Mapping[str, Sequence[Any]]

#: The retrieval's fitted ranking constants and their grid: the dialogue-chain window weights (2- and
#: 3-page windows), the date bonus, the fusion's rank offset and the named speaker's bonus (turn packing).
DEFAULT_CV_GRID: dict[str, tuple[float, ...]] = {
    "chain_weights[0]": (0.0, 0.5, 1.0, 1.5, 2.0, 3.0),
    "chain_weights[1]": (0.0, 0.5, 1.0, 1.5, 2.0, 3.0),
    "date_weight": (0.0, 0.1, 0.2, 0.5),
    "rrf_k": (10.0, 20.0),
    "speaker_weight": (0.0, 0.1, 0.2, 0.3),
}

#: The read side's words for user facts under a budget, fitted on *answers in context* over chance
#: (:func:`answers_over_chance`), not on evidence recall: a fact adds no page.
ANSWERS_CV_GRID: dict[str, tuple[float, ...]] = {"facts_words": (0, 25, 50, 75, 100, 150)}

_KEY = re.compile(r"([A-Za-z_]\w*)(?:\[(\d+)\])?")
_FIELDS = {f.name for f in dataclasses.fields(MemoryOSConfig)}


def _parse_key(key: str) -> tuple[str, int | None]:
    match = _KEY.fullmatch(key.strip())
    if match is None or match.group(1) not in _FIELDS:
        raise InvalidInputError(f"unknown MemoryOSConfig field {key!r} in the CV grid (use a field name or field[i])")
    return match.group(1), None if match.group(2) is None else int(match.group(2))


def config_value(config: MemoryOSConfig, key: str) -> Any:
    """The value a grid key names in ``config``.

    Example:
        >>> config = MemoryOSConfig(chain_weights=(1.0, 2.0))
        >>> config_value(config, "rrf_k"), config_value(config, "chain_weights[1]")
        (10.0, 2.0)
    """
    name, index = _parse_key(key)
    value = getattr(config, name)
    if index is None:
        return value
    if not isinstance(value, tuple) or index >= len(value):
        raise InvalidInputError(f"CV grid key {key!r}: MemoryOSConfig.{name} has no component {index}")
    return value[index]


def with_values(config: MemoryOSConfig, params: Mapping[str, Any]) -> MemoryOSConfig:
    """``config`` with the grid keys of ``params`` set (validated by ``MemoryOSConfig``).

    Example:
        >>> c = with_values(MemoryOSConfig(), {"chain_weights[0]": 3.0, "date_weight": 0.0})
        >>> c.chain_weights, c.date_weight
        ((3.0, 1.5), 0.0)
    """
    changes: dict[str, Any] = {}
    for key, value in params.items():
        name, index = _parse_key(key)
        if index is None:
            changes[name] = value
            continue
        current = list(changes.get(name, getattr(config, name)))
        if index >= len(current):
            raise InvalidInputError(f"CV grid key {key!r}: MemoryOSConfig.{name} has no component {index}")
        current[index] = value
        changes[name] = tuple(current)
    return dataclasses.replace(config, **changes)


def check_grid(grid: Grid, config: MemoryOSConfig) -> None:
    """Raise ``ValueError`` unless every key names a field of ``config`` and every candidate is valid.

    Example:
        >>> check_grid({"rrf_k": (10, 20)}, MemoryOSConfig())
        >>> check_grid({"rrf_k": ()}, MemoryOSConfig())
        Traceback (most recent call last):
        ...
        langchain_memoryos.errors.InvalidInputError: CV grid key 'rrf_k' has no candidate values
        >>> check_grid({"speed": (1,)}, MemoryOSConfig())
        Traceback (most recent call last):
        ...
        langchain_memoryos.errors.InvalidInputError: unknown MemoryOSConfig field 'speed' in the CV grid (use a field \
name or field[i])
    """
    if not grid:
        raise InvalidInputError("the CV grid is empty")
    for key, candidates in grid.items():
        config_value(config, key)
        if not candidates:
            raise InvalidInputError(f"CV grid key {key!r} has no candidate values")
        for value in candidates:
            with_values(config, {key: value})


def recall_1_4(outcomes: Sequence[QuestionOutcome]) -> float:
    """Mean evidence recall of the category 1–4 questions with evidence (NaN when there are none).

    Example:
        >>> o = QuestionOutcome("m", "c", "q", 4, ("D1:1", "D1:2"), frozenset({"D1:1"}), 1, 1, 1.0)
        >>> recall_1_4([o])
        0.5
    """
    values = [r for o in outcomes if o.category in (1, 2, 3, 4) and (r := o.recall) is not None]
    return sum(values) / len(values) if values else math.nan


def answers_over_chance(outcomes: Sequence[QuestionOutcome]) -> float:
    """Mean ``answer_hit − chance_hit`` of the category 1, 2 and 4 questions scored (NaN when there are none).

    Over one set of questions the no-facts row is fixed, so the constants that maximise this maximise the
    chance-corrected gain of facts.

    Example:
        >>> o = QuestionOutcome("m", "c", "q", 2, (), frozenset(), 1, 1, 1.0, answer="x", answer_hit=True,
        ...                     chance_hit=False)
        >>> answers_over_chance([o, dataclasses.replace(o, chance_hit=True)])
        0.5
    """
    values = [
        float(o.answer_hit) - float(bool(o.chance_hit))
        for o in outcomes
        if o.category in (1, 2, 4) and o.answer_hit is not None
    ]
    return sum(values) / len(values) if values else math.nan


def coordinate_ascent(
    score: Callable[[Mapping[str, Any]], float],
    start: Mapping[str, Any],
    grid: Grid,
    *,
    passes: int = 2,
) -> tuple[dict[str, Any], float]:
    """Maximise ``score`` one grid key at a time, from ``start``.

    Each pass tries every candidate of every key in turn and moves only on a
    strict improvement (ties keep the current value); it stops after
    ``passes`` passes or a pass without a move.

    Returns:
        The best parameters and their score.

    Example:
        >>> coordinate_ascent(lambda p: -(p["x"] - 2) ** 2 - (p["y"] - 1) ** 2, {"x": 0, "y": 0},
        ...                   {"x": (0, 1, 2, 3), "y": (0, 1)})
        ({'x': 2, 'y': 1}, 0)
    """
    params = dict(start)
    best = score(params)
    for _ in range(passes):
        moved = False
        for key, candidates in grid.items():
            for value in candidates:
                if value == params.get(key):
                    continue
                trial = {**params, key: value}
                value_score = score(trial)
                if value_score > best + 1e-12:
                    best, params, moved = value_score, trial, True
        if not moved:
            break
    return params, best


@dataclass
class CrossValidation:
    """The result of :func:`loco_cv`.

    Attributes:
        held_out: every conversation's outcomes under the constants fitted without it, pooled.
        chosen: the constants fitted for each held-out conversation.
        train_recall: the training recall (1–4) of each fold's constants.
        evaluations: distinct (conversation, constants) pairs scored.

    Example:
        >>> CrossValidation([], {}, {}, 0).chosen
        {}
    """

    held_out: list[QuestionOutcome]
    chosen: dict[str, dict[str, Any]]
    train_recall: dict[str, float]
    evaluations: int = 0
    meta: dict[str, Any] = field(default_factory=dict)


def loco_cv(
    conversations: Sequence[str],
    evaluate: Callable[[str, Mapping[str, Any]], Sequence[QuestionOutcome]],
    start: Mapping[str, Any],
    grid: Grid,
    *,
    passes: int = 2,
    score: Callable[[Sequence[QuestionOutcome]], float] = recall_1_4,
) -> CrossValidation:
    """Leave-one-conversation-out cross-validation by coordinate ascent.

    For each conversation, :func:`coordinate_ascent` (from ``start``) picks the
    constants that maximise ``score`` (the pooled recall 1–4) of the *other*
    conversations; the held-out conversation is scored with them. Each
    ``(conversation, constants)`` pair is evaluated once (folds share their
    grid points), so ``evaluate`` should be retrieval-only and deterministic.

    Args:
        conversations: the conversation ids (at least two).
        evaluate: the outcomes of one conversation under some constants.
        start: the starting constants (e.g. the config's values).
        grid: candidate values per key.
        passes: coordinate-ascent passes.
        score: what is maximised over the training conversations' pooled outcomes
            (:func:`recall_1_4`; :func:`answers_over_chance` for the facts' share).

    Returns:
        The pooled held-out outcomes and the constants chosen per fold.

    Raises:
        ValueError: fewer than two conversations.

    Example:
        >>> def evaluate(conv, params):
        ...     hit = params["k"] == 2
        ...     return [QuestionOutcome("m", conv, "q", 1, ("D1:1",), frozenset({"D1:1"} if hit else ()), 1, 1, 1.0)]
        >>> cv = loco_cv(["a", "b"], evaluate, {"k": 1}, {"k": (1, 2)})
        >>> cv.chosen["a"], recall_1_4(cv.held_out), cv.evaluations
        ({'k': 2}, 1.0, 4)
    """
    if len(conversations) < 2:
        raise InvalidInputError(f"leave-one-conversation-out needs at least 2 conversations, got {len(conversations)}")
    memo: dict[tuple[str, tuple[tuple[str, Any], ...]], list[QuestionOutcome]] = {}

    def outcomes(conv: str, params: Mapping[str, Any]) -> list[QuestionOutcome]:
        key = (conv, tuple(sorted(params.items())))
        if key not in memo:
            memo[key] = list(evaluate(conv, params))
        return memo[key]

    held_out: list[QuestionOutcome] = []
    chosen: dict[str, dict[str, Any]] = {}
    train_recall: dict[str, float] = {}

    def train_score(train: Sequence[str]) -> Callable[[Mapping[str, Any]], float]:
        return lambda params: score([o for c in train for o in outcomes(c, params)])

    for held in conversations:
        params, best = coordinate_ascent(
            train_score([c for c in conversations if c != held]), start, grid, passes=passes
        )
        chosen[held] = params
        train_recall[held] = best
        held_out += outcomes(held, params)
    return CrossValidation(held_out, chosen, train_recall, evaluations=len(memo))
