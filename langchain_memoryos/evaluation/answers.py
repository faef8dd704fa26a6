"""Answers in context: is the gold answer's every content token in the text the model gets?

Evidence recall reads page ids only, so it cannot credit a fact. *Answers in context* reads the
context text itself (``MemoryContext.to_prompt()``: every word the model gets):

* :func:`answer_tokens` — a text's content tokens: lower-cased, punctuation and stopwords dropped,
  a plural ``s`` (or ``es`` after s, ch, sh, x) folded, and every date in a common written form
  ("7 May 2023", "May 7, 2023", "2023-05-07", "7/5/2023" read day first, "May 2023", "2023",
  ISO date-times) normalised to the same tokens (``2023-05-07``, ``2023-05``, ``2023``), in
  answers and contexts alike — so a date's formatting alone scores nothing;
* :func:`answer_in_context` — the gold answer's tokens all in the context's (``None`` when the
  answer has no content token, e.g. category 5);
* :func:`chance_partners` — the question each is checked against by chance: the one half the
  conversation's question list away; a context stuffed with dates or names scores as high there;
* :func:`paired_difference` and :func:`chance_corrected_gain` — paired per-question differences
  with a percentile-bootstrap 95 % interval: the gain of facts is
  ``(with − its chance) − (without − its chance)``.

Example:
    >>> answer_in_context("7 May 2023", "[2023-05-07] Ana: I went to the support group.")
    True
    >>> answer_in_context("pottery classes", "Ana took a pottery class.")
    True
    >>> answer_in_context("7 May 2023", "[2023-05-08] Ana: I went there yesterday.")
    False
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.index.lexical import STOPWORDS

__all__ = [
    "PairedDifference",
    "answer_in_context",
    "answer_tokens",
    "chance_corrected_gain",
    "chance_partners",
    "date_tokens",
    "paired_difference",
]

_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:1[89]|20)\d{2})"
_TIME = r"(?:[t ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?"  # the text is lower-cased
#: Date forms, most precise first; each match is replaced by its tokens before words are read.
_DATE_FORMS: tuple[re.Pattern[str], ...] = (  # "24June, 2022" (no space) is read too
    re.compile(rf"\b{_YEAR}-(?P<mnum>\d{{1,2}})-(?P<day>\d{{1,2}}){_TIME}(?![\w-])"),  # 2023-05-07[T09:55]
    re.compile(rf"\b{_DAY}\s*(?:of\s+)?{_MONTH},?\s+{_YEAR}\b"),  # 7 May 2023, 7th of May, 2023
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b"),  # May 7, 2023
    re.compile(rf"\b(?P<day>\d{{1,2}})/(?P<mnum>\d{{1,2}})/{_YEAR}\b"),  # 7/5/2023, day first
    re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b"),  # May 2023
    re.compile(rf"\b{_YEAR}-(?P<mnum>\d{{2}})(?![\w-])"),  # 2023-05
)
_WORD = re.compile(r"[a-z0-9]+")


def _date_of(match: re.Match[str]) -> tuple[int, ...] | None:
    """``(year, month[, day])`` of a date match, or ``None`` for an impossible date."""
    parts = match.groupdict()
    year = int(parts["year"])
    month = int(parts["mnum"]) if parts.get("mnum") else _MONTHS[parts["month"].lower()]
    if not 1 <= month <= 12:
        return None
    if parts.get("day") is None:
        return (year, month)
    day = int(parts["day"])
    try:
        _dt.date(year, month, day)
    except ValueError:
        return None
    return (year, month, day)


def _tokens_of(date: tuple[int, ...]) -> list[str]:
    """A date's tokens, the coarser ones included: ``(2023, 5, 7)`` → ``2023``, ``2023-05``, ``2023-05-07``."""
    out = [f"{date[0]:04d}", f"{date[0]:04d}-{date[1]:02d}"]
    if len(date) == 3:
        out.append(f"{date[0]:04d}-{date[1]:02d}-{date[2]:02d}")
    return out


def date_tokens(text: str) -> tuple[list[str], str]:
    """The date tokens of ``text`` and the text with those dates taken out.

    Every written form of one date gives the same tokens; a date gives its month's and its year's
    tokens too (a context that says "7 May 2023" holds the answer "May 2023").

    Example:
        >>> date_tokens("on May 7, 2023 and in June 2024")[0]
        ['2023', '2023-05', '2023-05-07', '2024', '2024-06']
        >>> {tuple(sorted(date_tokens(t)[0])) for t in ("7 May 2023", "2023-05-07", "7/5/2023", "May 7th, 2023",
        ...                                             "2023-05-07T09:55:00+00:00", "7 May, 2023")}
        {('2023', '2023-05', '2023-05-07')}
    """
    found: list[str] = []
    lowered = text.lower()
    for form in _DATE_FORMS:

        def take(match: re.Match[str]) -> str:
            date = _date_of(match)
            if date is None:
                return match.group(0)
            found.extend(_tokens_of(date))
            return " "

        lowered = form.sub(take, lowered)
    return found, lowered


def _fold(word: str) -> str:
    """A plural folded: ``dogs`` → ``dog``, ``classes`` → ``class``, ``watches`` → ``watch``; ``bus`` kept."""
    if len(word) > 4 and word.endswith(("sses", "ches", "shes", "xes", "zzes")):
        return word[:-2]
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def answer_tokens(text: str) -> frozenset[str]:
    """The content tokens of an answer or a context: dates normalised, words lower-cased, stopwords dropped.

    Example:
        >>> sorted(answer_tokens("Caroline's pottery classes, on 7 May 2023!"))
        ['2023', '2023-05', '2023-05-07', 'caroline', 'class', 'pottery']
        >>> answer_tokens("May 7, 2023") == answer_tokens("2023-05-07")
        True
        >>> answer_tokens("No")
        frozenset()
    """
    dates, rest = date_tokens(text.replace("’", "'"))
    rest = re.sub(r"'s\b", " ", rest)
    words = (_fold(w) for w in _WORD.findall(rest) if w not in STOPWORDS)
    return frozenset([*dates, *(w for w in words if w not in STOPWORDS)])


def answer_in_context(answer: str, context: str | frozenset[str]) -> bool | None:
    """Whether every content token of ``answer`` is in ``context`` (text or :func:`answer_tokens`).

    Returns:
        ``None`` when the answer has no content token (nothing to find).

    Example:
        >>> answer_in_context("Sweden", "Ana moved from Sweden 4 years ago."), answer_in_context("", "x")
        (True, None)
        >>> answer_in_context("2022", "[2022-06-01] Ana: I painted a sunrise.")
        True
    """
    gold = answer_tokens(answer)
    if not gold:
        return None
    have = context if isinstance(context, frozenset) else answer_tokens(context)
    return gold <= have


def chance_partners(n: int) -> list[int]:
    """For each of ``n`` questions of a conversation, the one its answer is checked against by chance.

    The question half the list away (``(i + n // 2) % n``): in LoCoMo's order that is another part of
    the conversation, so a hit there is what the context scores without being about the question.

    Example:
        >>> chance_partners(5), chance_partners(1)
        ([2, 3, 4, 0, 1], [0])
    """
    if n < 0:
        raise InvalidInputError(f"n must be >= 0, got {n}")
    return [(i + n // 2) % n for i in range(n)]


@dataclass(frozen=True)
class PairedDifference:
    """A paired per-question difference: its mean and percentile-bootstrap interval.

    Attributes:
        mean: the mean difference (a share: 0.05 is 5 points).
        low: the interval's low end.
        high: the interval's high end.
        n: questions paired.
        better: questions where the first is higher.
        worse: questions where it is lower.

    Example:
        >>> PairedDifference(0.05, 0.01, 0.09, 100, 9, 4).points()
        '+5.0 (+1.0, +9.0)'
    """

    mean: float
    low: float
    high: float
    n: int
    better: int
    worse: int

    def points(self) -> str:
        """The difference in points with its interval, e.g. ``+5.0 (+1.0, +9.0)``."""
        if self.n == 0 or math.isnan(self.mean):
            return "–"
        return f"{100 * self.mean:+.1f} ({100 * self.low:+.1f}, {100 * self.high:+.1f})"


def paired_difference(
    values: Sequence[float], *, n_boot: int = 1000, seed: int = 0, alpha: float = 0.05
) -> PairedDifference:
    """The mean of per-question differences with a percentile-bootstrap interval (resampling questions).

    Args:
        values: one difference per question (e.g. ``hit_with − hit_without``).
        n_boot: bootstrap resamples.
        seed: the generator's seed (reproducible intervals).
        alpha: one minus the confidence level.

    Example:
        >>> d = paired_difference([1, 0, 0, 1, 0, 0, -1, 0], n_boot=200)
        >>> round(d.mean, 3), d.better, d.worse, d.low <= d.mean <= d.high
        (0.125, 2, 1, True)
        >>> paired_difference([]).n
        0
    """
    arr = np.asarray(list(values), dtype=np.float64)
    if arr.size == 0:
        return PairedDifference(math.nan, math.nan, math.nan, 0, 0, 0)
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, arr.size, size=(n_boot, arr.size))].mean(axis=1)
    low, high = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return PairedDifference(
        float(arr.mean()), float(low), float(high), int(arr.size), int((arr > 0).sum()), int((arr < 0).sum())
    )


def chance_corrected_gain(
    with_hits: Sequence[bool],
    with_chance: Sequence[bool],
    without_hits: Sequence[bool],
    without_chance: Sequence[bool],
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> PairedDifference:
    """The gain ``(with − its chance) − (without − its chance)``, paired per question, with its interval.

    A context that only grew longer, or was stuffed with dates and names, scores as much more on the
    chance pairing as on its own question: its gain is zero.

    Example:
        >>> chance_corrected_gain([1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]).mean  # stuffing
        0.0
        >>> chance_corrected_gain([1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]).mean
        0.5
    """
    lengths = {len(with_hits), len(with_chance), len(without_hits), len(without_chance)}
    if len(lengths) != 1:
        raise InvalidInputError(f"the four sequences must pair question by question, got lengths {sorted(lengths)}")
    diffs = [
        (float(w) - float(wc)) - (float(o) - float(oc))
        for w, wc, o, oc in zip(with_hits, with_chance, without_hits, without_chance, strict=True)
    ]
    return paired_difference(diffs, n_boot=n_boot, seed=seed)
