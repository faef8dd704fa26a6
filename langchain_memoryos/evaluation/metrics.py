"""LoCoMo metrics: evidence recall, context cost, answer scores, and per-system summaries.

Retrieval is scored by evidence recall: the share of a question's evidence turns
(``dia_id`` such as ``D1:3``) whose text reached the context. Answers, when the
benchmark ran with a model, are scored three ways:

* :func:`locomo_f1` — the official LoCoMo F1 (snap-research/locomo
  ``task_eval/evaluation.py``): normalised, Porter-stemmed token F1 with the
  per-category rules (comma-split partial credit for multi-hop, the first
  ``;`` alternative for open-domain, refusal phrases for adversarial);
* :func:`mem0_f1` — the token-set F1 used by the Mem0 paper's evaluation;
* :func:`bleu1` — BLEU-1 on the same simple tokens.

Stemming and BLEU need ``nltk``, an optional dependency (the ``bench`` extra),
imported only when those functions run.

Example:
    >>> outcome = QuestionOutcome(
    ...     system="bm25", sample_id="conv-26", question="Where?", category=4,
    ...     evidence=("D1:3",), retrieved=frozenset({"D1:3"}), words=40, tokens=55, latency_ms=1.5,
    ... )
    >>> summarize("bm25", [outcome]).recall
    1.0
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any

import numpy as np

from langchain_memoryos.errors import InvalidInputError

__all__ = [
    "CATEGORIES",
    "QuestionOutcome",
    "SystemSummary",
    "bleu1",
    "bootstrap_ci",
    "count_tokens",
    "count_words",
    "locomo_f1",
    "mem0_f1",
    "normalize_answer",
    "percentile",
    "summarize",
]

#: LoCoMo question categories, as numbered in ``locomo10.json``.
CATEGORIES: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
#: The categories of the headline numbers (adversarial questions have no answer in the conversation).
_ANSWERABLE = frozenset({1, 2, 3, 4})
_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_REFUSALS = ("no information available", "not mentioned")


def _bench_import_error(package: str) -> ImportError:
    """The error raised when an optional ``bench`` dependency is missing.

    Args:
        package: the missing distribution (``nltk``, ``matplotlib``).

    Returns:
        An ImportError naming the package and the extra that provides it.

    Example:
        >>> "bench" in str(_bench_import_error("nltk"))
        True
    """
    return ImportError(
        f"{package} is required for this function; install the 'bench' extra: pip install 'langchain-memoryos[bench]'"
    )


def _jsonable(value: Any) -> Any:
    """Floats with nan as None, tuples and lists as lists, dict keys as strings, recursively."""
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class QuestionOutcome:
    """One question answered by one system.

    Attributes:
        system: the system's name.
        sample_id: the conversation (``conv-26`` …).
        question: the question text.
        category: the LoCoMo category (see :data:`CATEGORIES`).
        evidence: normalised evidence ids (``("D1:3", "D2:5")``).
        retrieved: ids of every turn whose text was in the context.
        words: words of the context (:func:`count_words`).
        tokens: tokens of the context (:func:`count_tokens`).
        latency_ms: retrieval time in milliseconds.
        answer: the gold answer ("" for category 5, which has an adversarial answer instead).
        prediction: the model's answer, when the benchmark ran with a model.
        llm_calls: model calls spent to answer this question.
        llm_tokens: model tokens spent to answer this question.
        answer_hit: the gold answer's content tokens all in the context text
            (:func:`~langchain_memoryos.evaluation.answers.answer_in_context`); None when not scored.
        chance_hit: the same, against the context of the question half the
            conversation's question list away (the chance of ``answer_hit``).

    Example:
        >>> o = QuestionOutcome("bm25", "conv-1", "q", 1, ("D1:1", "D1:2"), frozenset({"D1:2"}), 10, 12, 0.5)
        >>> o.recall, o.all_hit, o.any_hit
        (0.5, False, True)
    """

    system: str
    sample_id: str
    question: str
    category: int
    evidence: tuple[str, ...]
    retrieved: frozenset[str]
    words: int
    tokens: int
    latency_ms: float
    answer: str = ""
    prediction: str | None = None
    llm_calls: int = 0
    llm_tokens: int = 0
    answer_hit: bool | None = None
    chance_hit: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        """The outcome as JSON-ready data: lists for the ids (retrieved sorted), None for nan.

        Example:
            >>> o = QuestionOutcome("bm25", "conv-1", "q", 4, ("D1:1",), frozenset({"D2:1", "D1:1"}), 10, 12, 0.5)
            >>> o.as_dict()["retrieved"]
            ['D1:1', 'D2:1']
        """
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["retrieved"] = sorted(self.retrieved)
        return {k: _jsonable(v) for k, v in data.items()}

    @property
    def recall(self) -> float | None:
        """Share of the evidence ids that were retrieved; None without evidence."""
        if not self.evidence:
            return None
        return sum(e in self.retrieved for e in self.evidence) / len(self.evidence)

    @property
    def all_hit(self) -> bool | None:
        """Whether every evidence id was retrieved; None without evidence."""
        return None if not self.evidence else all(e in self.retrieved for e in self.evidence)

    @property
    def any_hit(self) -> bool | None:
        """Whether at least one evidence id was retrieved; None without evidence."""
        return None if not self.evidence else any(e in self.retrieved for e in self.evidence)


# --------------------------------------------------------------------------- cost and statistics


def count_words(text: str) -> int:
    """Words of a text: ``len(text.split())``.

    Example:
        >>> count_words("Caroline went to  the LGBTQ support group.")
        7
    """
    return len(text.split())


def count_tokens(text: str) -> int:
    """Approximate tokens of a text: one per four characters, rounded up.

    This is the characters/4 estimate of LangChain's ``count_tokens_approximately``
    (without its per-message overhead), so it needs no tokenizer.

    Example:
        >>> count_tokens(""), count_tokens("abcd"), count_tokens("abcde")
        (0, 1, 2)
    """
    return math.ceil(len(text) / 4)


def _as_array(values: Iterable[float]) -> np.ndarray[Any, np.dtype[np.float64]]:
    return np.asarray(list(values), dtype=np.float64)


def _mean(values: Iterable[float]) -> float:
    arr = _as_array(values)
    return float(arr.mean()) if arr.size else math.nan


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile with linear interpolation (numpy's default); nan when empty.

    Args:
        values: the sample.
        q: the percentile, in [0, 100].

    Returns:
        The percentile as a float.

    Example:
        >>> percentile([10, 20, 30, 40], 95)
        38.5
        >>> percentile([], 50)
        nan
    """
    arr = _as_array(values)
    return float(np.percentile(arr, q)) if arr.size else math.nan


def bootstrap_ci(
    values: Sequence[float], *, n_boot: int = 1000, seed: int = 0, alpha: float = 0.05
) -> tuple[float, float]:
    """Percentile-bootstrap confidence interval of the mean.

    Resamples ``values`` with replacement ``n_boot`` times (``numpy.random.default_rng(seed)``)
    and takes the ``alpha/2`` and ``1 - alpha/2`` percentiles of the resampled means.

    Args:
        values: the per-item scores.
        n_boot: number of bootstrap resamples.
        seed: seed of the generator, so intervals are reproducible.
        alpha: one minus the confidence level.

    Returns:
        ``(low, high)``; ``(nan, nan)`` when empty, ``(v, v)`` for a single value.

    Raises:
        ValueError: when ``n_boot < 1`` or ``alpha`` is not in (0, 1).

    Example:
        >>> low, high = bootstrap_ci([0.0, 1.0, 1.0, 0.5], seed=1)
        >>> low <= 0.625 <= high
        True
        >>> bootstrap_ci([0.4])
        (0.4, 0.4)
    """
    if n_boot < 1 or not 0.0 < alpha < 1.0:
        raise InvalidInputError("n_boot must be >= 1 and alpha in (0, 1)")
    arr = _as_array(values)
    if arr.size == 0:
        return (math.nan, math.nan)
    if arr.size == 1:
        return (float(arr[0]), float(arr[0]))
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, arr.size, size=(n_boot, arr.size))].mean(axis=1)
    low, high = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return (float(low), float(high))


# --------------------------------------------------------------------------- answer scores


def normalize_answer(text: str) -> str:
    """The official LoCoMo answer normalisation.

    Drops commas, lower-cases, removes ASCII punctuation, replaces the words
    ``a``, ``an``, ``the`` and ``and`` by spaces, and collapses whitespace.

    Example:
        >>> normalize_answer("The cat, and a Dog!")
        'cat dog'
    """
    text = "".join(ch for ch in text.replace(",", "").lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


@lru_cache(maxsize=1)
def _porter_stem() -> Callable[[str], str]:
    try:
        from nltk.stem import PorterStemmer
    except ImportError as exc:
        raise _bench_import_error("nltk") from exc
    stem: Callable[[str], str] = PorterStemmer().stem
    return stem


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _porter_stem()(word)


def _stemmed_tokens(text: str) -> list[str]:
    return [_stem(word) for word in normalize_answer(text).split()]


def _token_f1(prediction: str, answer: str) -> float:
    """LoCoMo ``f1_score``: F1 of the stemmed, normalised token multisets."""
    predicted, gold = _stemmed_tokens(prediction), _stemmed_tokens(answer)
    same = sum((Counter(predicted) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def _multi_f1(prediction: str, answer: str) -> float:
    """LoCoMo multi-hop F1: each comma-separated gold part scored by its best predicted part."""
    parts = [p.strip() for p in prediction.split(",")]
    return _mean(max(_token_f1(p, g.strip()) for p in parts) for g in answer.split(","))


def locomo_f1(prediction: str, answer: str | int, category: int) -> float:
    """The official LoCoMo answer F1 with its per-category rules.

    * categories 2, 3 and 4: token F1 after :func:`normalize_answer` and Porter
      stemming; for category 3 only the part of the answer before the first ``;``;
    * category 1 (multi-hop): the answer and prediction are split on commas and
      each answer part gets its best F1 against a predicted part; the score is their mean;
    * category 5 (adversarial): 1.0 when the prediction says
      "no information available" or "not mentioned", else 0.0.

    Args:
        prediction: the model's answer.
        answer: the gold answer (LoCoMo has a few integer answers).
        category: the question's category, 1 to 5.

    Returns:
        The score in [0, 1].

    Raises:
        ValueError: for an unknown category.
        ImportError: when nltk (the ``bench`` extra) is missing.

    Example:
        >>> locomo_f1("running dogs", "The run dog", 4)
        1.0
        >>> round(locomo_f1("Paris, London", "Paris, Rome, London", 1), 4)
        0.6667
        >>> locomo_f1("That is not mentioned.", "", 5)
        1.0
    """
    if category == 5:
        return 1.0 if any(phrase in prediction.lower() for phrase in _REFUSALS) else 0.0
    gold = str(answer)
    if category == 1:
        return _multi_f1(prediction, gold)
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category in (2, 3, 4):
        return _token_f1(prediction, gold)
    raise InvalidInputError(f"unknown LoCoMo category {category!r}")


def _simple_tokens(text: str | int) -> list[str]:
    """Mem0's ``simple_tokenize``: lower-case, ``.,!?`` to spaces, split."""
    lowered = str(text).lower()
    for mark in ".,!?":
        lowered = lowered.replace(mark, " ")
    return lowered.split()


def mem0_f1(prediction: str, answer: str | int) -> float:
    """The token-set F1 of the Mem0 evaluation (``evaluation/metrics/utils.py``).

    Tokens come from a simple tokenizer (lower-case, ``. , ! ?`` become spaces);
    repeated tokens count once. 0.0 when either side has no tokens.

    Args:
        prediction: the model's answer.
        answer: the gold answer.

    Returns:
        The F1 in [0, 1].

    Example:
        >>> mem0_f1("Paris, Paris!", "paris france")
        0.6666666666666666
    """
    predicted, gold = set(_simple_tokens(prediction)), set(_simple_tokens(answer))
    if not predicted or not gold:
        return 0.0
    common = len(predicted & gold)
    precision, recall = common / len(predicted), common / len(gold)
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def bleu1(prediction: str, answer: str | int) -> float:
    """BLEU-1 as in the Mem0 evaluation, on the tokens of :func:`mem0_f1`.

    nltk's ``sentence_bleu`` with weights ``(1, 0, 0, 0)`` and smoothing
    ``method1``: clipped unigram precision times the brevity penalty
    ``exp(1 - r/c)`` when the prediction (``c`` tokens) is shorter than the answer (``r``).
    The tokenizer replaces ``nltk.word_tokenize``, which needs a data download.

    Args:
        prediction: the model's answer.
        answer: the gold answer.

    Returns:
        The score in [0, 1]; 0.0 when either side has no tokens.

    Raises:
        ImportError: when nltk (the ``bench`` extra) is missing.

    Example:
        >>> bleu1("paris", "paris")
        1.0
        >>> round(bleu1("in paris", "in paris france"), 4)  # exp(1 - 3/2)
        0.6065
    """
    try:
        from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    except ImportError as exc:
        raise _bench_import_error("nltk") from exc
    predicted, gold = _simple_tokens(prediction), _simple_tokens(answer)
    if not predicted or not gold:
        return 0.0
    score = sentence_bleu([gold], predicted, weights=(1, 0, 0, 0), smoothing_function=SmoothingFunction().method1)
    return float(score)


# --------------------------------------------------------------------------- summaries


@dataclass(frozen=True)
class SystemSummary:
    """The LoCoMo numbers of one system.

    ``questions``, ``recall_by_category``, ``count_by_category`` and
    ``f1_by_category`` cover every category; every other number covers the
    answerable categories 1–4 only. Recall numbers use the questions with
    evidence; cost numbers (words, tokens, latency) use all category 1–4
    questions; answer scores and LLM costs use the category 1–4 questions with
    a prediction and are None when there is none. Undefined means are nan.

    Attributes:
        system: the system's name.
        questions: all questions scored.
        recall_by_category: mean per-question recall per category (questions with evidence).
        count_by_category: the number of questions behind each ``recall_by_category`` value.
        recall: mean per-question recall over categories 1–4.
        recall_ci: 95 % percentile-bootstrap interval of ``recall``.
        all_hit: share of questions whose evidence was all retrieved.
        any_hit: share with at least one evidence turn retrieved.
        words_mean: mean context words.
        words_p95: 95th percentile of context words.
        tokens_mean: mean context tokens.
        tokens_p95: 95th percentile of context tokens.
        latency_p50_ms: median retrieval time.
        latency_p95_ms: 95th percentile of retrieval time.
        f1: mean official LoCoMo F1.
        f1_by_category: mean LoCoMo F1 per category with predictions (5 included).
        mem0_f1: mean Mem0-style F1.
        bleu1: mean BLEU-1.
        llm_calls_per_answer: mean model calls per answered question.
        llm_tokens_per_answer: mean model tokens per answered question.

    Example:
        >>> o = QuestionOutcome("bm25", "conv-1", "q", 2, ("D1:1",), frozenset(), 10, 12, 0.5)
        >>> s = summarize("bm25", [o])
        >>> s.recall, s.any_hit, s.f1
        (0.0, 0.0, None)
    """

    system: str
    questions: int
    recall_by_category: dict[int, float]
    count_by_category: dict[int, int]
    recall: float
    recall_ci: tuple[float, float]
    all_hit: float
    any_hit: float
    words_mean: float
    words_p95: float
    tokens_mean: float
    tokens_p95: float
    latency_p50_ms: float
    latency_p95_ms: float
    f1: float | None
    f1_by_category: dict[int, float]
    mem0_f1: float | None
    bleu1: float | None
    llm_calls_per_answer: float | None
    llm_tokens_per_answer: float | None

    def as_dict(self) -> dict[str, Any]:
        """The summary as JSON-ready data: string dict keys, lists for tuples, None for nan.

        Example:
            >>> o = QuestionOutcome("bm25", "conv-1", "q", 5, (), frozenset(), 10, 12, 0.5)
            >>> d = summarize("bm25", [o]).as_dict()
            >>> d["recall"], d["recall_ci"], d["questions"]
            (None, [None, None], 1)
        """
        return {f.name: _jsonable(getattr(self, f.name)) for f in fields(self)}


def _grouped_means(pairs: Iterable[tuple[int, float]]) -> dict[int, float]:
    by_category: dict[int, list[float]] = {}
    for category, value in pairs:
        by_category.setdefault(category, []).append(value)
    return {c: _mean(v) for c, v in sorted(by_category.items())}


def _mean_or_none(values: Sequence[float]) -> float | None:
    return _mean(values) if values else None


def summarize(system: str, outcomes: Sequence[QuestionOutcome], *, n_boot: int = 1000, seed: int = 0) -> SystemSummary:
    """Summarise one system's outcomes (see :class:`SystemSummary` for which questions count where).

    Args:
        system: the system's name.
        outcomes: its questions, every category.
        n_boot: bootstrap resamples of the recall interval.
        seed: the bootstrap seed.

    Returns:
        The summary.

    Example:
        >>> outcomes = [
        ...     QuestionOutcome("s", "c", "q1", 1, ("D1:1", "D1:2"), frozenset({"D1:1"}), 10, 3, 1.0),
        ...     QuestionOutcome("s", "c", "q2", 4, ("D2:1",), frozenset({"D2:1"}), 30, 8, 3.0),
        ... ]
        >>> s = summarize("s", outcomes)
        >>> s.recall, s.all_hit, s.words_mean, s.latency_p50_ms  # (0.5 + 1) / 2, 1 of 2, (10 + 30) / 2
        (0.75, 0.5, 20.0, 2.0)
    """
    answerable = [o for o in outcomes if o.category in _ANSWERABLE]
    with_evidence = [o for o in answerable if o.evidence]
    recalls = [o.recall for o in with_evidence if o.recall is not None]
    f1s = [(o, locomo_f1(o.prediction, o.answer, o.category)) for o in outcomes if o.prediction is not None]
    scored = [o for o, _ in f1s if o.category in _ANSWERABLE]
    words = [float(o.words) for o in answerable]
    tokens = [float(o.tokens) for o in answerable]
    latencies = [o.latency_ms for o in answerable]
    return SystemSummary(
        system=system,
        questions=len(outcomes),
        recall_by_category=_grouped_means((o.category, o.recall) for o in outcomes if o.recall is not None),
        count_by_category=dict(sorted(Counter(o.category for o in outcomes if o.evidence).items())),
        recall=_mean(recalls),
        recall_ci=bootstrap_ci(recalls, n_boot=n_boot, seed=seed),
        all_hit=_mean(float(bool(o.all_hit)) for o in with_evidence),
        any_hit=_mean(float(bool(o.any_hit)) for o in with_evidence),
        words_mean=_mean(words),
        words_p95=percentile(words, 95),
        tokens_mean=_mean(tokens),
        tokens_p95=percentile(tokens, 95),
        latency_p50_ms=percentile(latencies, 50),
        latency_p95_ms=percentile(latencies, 95),
        f1=_mean_or_none([f1 for o, f1 in f1s if o.category in _ANSWERABLE]),
        f1_by_category=_grouped_means((o.category, f1) for o, f1 in f1s),
        mem0_f1=_mean_or_none([mem0_f1(o.prediction or "", o.answer) for o in scored]),
        bleu1=_mean_or_none([bleu1(o.prediction or "", o.answer) for o in scored]),
        llm_calls_per_answer=_mean_or_none([float(o.llm_calls) for o in scored]),
        llm_tokens_per_answer=_mean_or_none([float(o.llm_tokens) for o in scored]),
    )
