"""Which user facts the read path shows: those that say what the shown pages do not, in a few words.

A fact read off a turn restates that turn, so while the turn's page is shown the fact
earns its words only when it says more than the page: a relative time resolved ("on
7 May 2023" beside a page that says "yesterday"), a person named, or — when its page did
not fit or is gone — everything it says. With a word budget (``context_words``):

* the facts ``tau_r`` admits (the best ``top_facts``) are the candidates, best first;
* while the pages are chosen, the first candidates that fit in ``facts_words`` (at most half
  the budget) hold their words (:func:`within_allowance`);
* once the pages are known, the facts shown are chosen again, in rank order, within those
  words: each one that names a date or a content word that the rest of the context (the
  shown pages and their day lines, the STM, the persona, the facts taken before it) does
  not (:func:`adding_facts`); the words left over go back to the pages.

``facts_words`` (default 50) was chosen by leave-one-conversation-out cross-validation of
*answers in context* over chance on the LoCoMo dev set (``memoryos bench locomo --cv``): as a
share of the budget the folds chose a tenth at 500 words and a twentieth at 1,000, the same
fifty words; more words for facts cost pages (evidence recall) and add no answers. Without a
budget (the paper preset) facts are shown as ranked, less those whose every source page
is shown.

Example:
    >>> Shown.of("[2023-05-08] Ana: I went to a support group yesterday.").new_in("Ana went on 7 May 2023.")
    (frozenset(), frozenset({'2023-05-07'}))
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_memoryos.index.lexical import tokenize
from langchain_memoryos.schema import ScoredRecord
from langchain_memoryos.schema.context import fact_line
from langchain_memoryos.store.settings import EngineSettings

__all__ = ["Shown", "adding_facts", "line_words", "within_allowance"]


def _words(hit: ScoredRecord) -> int:
    """The words the fact's line takes in the context (:func:`~langchain_memoryos.schema.context.fact_line`)."""
    return len(fact_line(hit.record).split())


def line_words(hits: Sequence[ScoredRecord]) -> int:
    """The words the facts' lines take in the context.

    Example:
        >>> from langchain_memoryos.schema import MemoryRecord
        >>> line_words([ScoredRecord(MemoryRecord(id="f_000000000003", summary="Ana is vegan."), 0.6)])
        6
    """
    return sum(map(_words, hits))


def within_allowance(hits: Sequence[ScoredRecord], settings: EngineSettings) -> list[ScoredRecord]:
    """The facts of ``hits`` (in rank order) that fit in ``facts_words``, at most half the budget (all without one).

    Example:
        >>> from langchain_memoryos import MemoryOS, MemoryOSConfig
        >>> from langchain_memoryos.schema import MemoryRecord
        >>> m = MemoryOS(config=MemoryOSConfig(context_words=500, facts_words=10))
        >>> hits = [ScoredRecord(MemoryRecord(summary=t), 0.6) for t in ("Ana is vegan.", "Ana met Bo in Oslo.")]
        >>> [h.record.summary for h in within_allowance(hits, m.settings)]  # 10 words: one line fits
        ['Ana is vegan.']
        >>> small = MemoryOS(config=MemoryOSConfig(context_words=10, facts_words=50))
        >>> [h.record.summary for h in within_allowance(hits, small.settings)]  # half of 10 words: none fits
        []
    """
    budget = settings.config.context_words
    if budget is None:
        return list(hits)
    share = min(settings.config.facts_words, budget // 2)
    used = 0
    shown: list[ScoredRecord] = []
    for hit in hits:
        cost = _words(hit)
        if used + cost <= share:
            shown.append(hit)
            used += cost
    return shown


_MONTH_NAMES = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH = "|".join(_MONTH_NAMES)
# the memory's own date forms (:func:`~langchain_memoryos.schema.context.said_on`, the day lines'
# ISO dates): a day, a month of a year, a year
_ISO_DAY = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")
_DAY = re.compile(rf"\b(\d{{1,2}}) ({_MONTH}) ((?:19|20)\d\d)\b", re.IGNORECASE)
_MONTH_YEAR = re.compile(rf"\b({_MONTH}) ((?:19|20)\d\d)\b", re.IGNORECASE)
_YEAR = re.compile(r"\b((?:19|20)\d\d)\b")


def _dates(text: str) -> tuple[set[str], str]:
    """The dates ``text`` names, as ``YYYY-MM-DD`` / ``YYYY-MM`` / ``YYYY`` keys, and the text without them.

    A day names its month and year too (a day line ``[2023-05-08]`` says "May 2023").
    """
    keys: set[str] = set()

    def day(year: str, month: int, dom: int) -> str:
        keys.update((f"{year}-{month:02d}-{dom:02d}", f"{year}-{month:02d}", year))
        return " "

    text = _ISO_DAY.sub(lambda m: day(m[1], int(m[2]), int(m[3])), text)
    text = _DAY.sub(lambda m: day(m[3], _MONTH_NAMES.index(m[2].lower()) + 1, int(m[1])), text)

    def month(m: re.Match[str]) -> str:
        keys.update((f"{m[2]}-{_MONTH_NAMES.index(m[1].lower()) + 1:02d}", m[2]))
        return " "

    text = _MONTH_YEAR.sub(month, text)

    def year(m: re.Match[str]) -> str:
        keys.add(m[1])
        return " "

    return keys, _YEAR.sub(year, text)


@dataclass(frozen=True)
class Shown:
    """What a context already says: its content words (stemmed) and the dates it names.

    Example:
        >>> shown = Shown.of("[2023-05-08] User: Ana: I went to a support group yesterday.")
        >>> sorted(shown.dates), "support" in shown.words
        (['2023', '2023-05', '2023-05-08'], True)
    """

    words: frozenset[str]
    dates: frozenset[str]

    @classmethod
    def of(cls, text: str) -> Shown:
        """What ``text`` says (see the class).

        Example:
            >>> sorted(Shown.of("Ana moved in June 2023.").dates)
            ['2023', '2023-06']
        """
        dates, rest = _dates(text)
        return cls(frozenset(tokenize(rest)), frozenset(dates))

    def new_in(self, text: str) -> tuple[frozenset[str], frozenset[str]]:
        """The content words and dates of ``text`` that this does not say ("someone" and "user" aside).

        Example:
            >>> shown = Shown.of("[2023-05-08] Ana: I went to a support group yesterday.")
            >>> shown.new_in("Ana went to a support group on 7 May 2023.")
            (frozenset(), frozenset({'2023-05-07'}))
        """
        said = Shown.of(text)
        return said.words - self.words - _generic_words(), said.dates - self.dates

    def with_text(self, text: str) -> Shown:
        """This and what ``text`` says.

        Example:
            >>> Shown.of("Ana paints.").with_text("Ana sings.").new_in("Ana sings and paints.")
            (frozenset(), frozenset())
        """
        said = Shown.of(text)
        return Shown(self.words | said.words, self.dates | said.dates)


@functools.cache
def _generic_words() -> frozenset[str]:
    """Words every fact may say without saying anything (the stemmer loads on the first read, not at import)."""
    return frozenset(tokenize("someone user assistant others"))


def adding_facts(hits: Sequence[ScoredRecord], shown: Shown, words: int) -> list[ScoredRecord]:
    """The facts of ``hits`` (in rank order) that say what ``shown`` does not, within ``words`` words.

    A fact is shown when it names a date or a content word that the shown pages, the
    persona and the facts taken before it do not: a resolved date ("on 7 May 2023" beside a
    page that says "yesterday"), a resolved name, or a fact whose page did not fit. A fact
    that restates a shown page only costs words.

    Example:
        >>> from langchain_memoryos.schema import MemoryRecord
        >>> hit = lambda text: ScoredRecord(MemoryRecord(summary=text), 0.6)
        >>> shown = Shown.of("[2023-05-08] Ana: I went to a support group yesterday. I paint.")
        >>> facts = [hit("Ana paints."), hit("Ana went to a support group on 7 May 2023.")]
        >>> [h.record.summary for h in adding_facts(facts, shown, 100)]
        ['Ana went to a support group on 7 May 2023.']
    """
    chosen: list[ScoredRecord] = []
    used = 0
    for hit in hits:
        cost = _words(hit)
        if used + cost > words:
            continue
        if not any(shown.new_in(hit.record.summary)):
            continue
        chosen.append(hit)
        used += cost
        shown = shown.with_text(hit.record.summary)
    return chosen
