"""Rules of the offline relation judge that read two facts' words: a correction, one property named twice.

:func:`replaces`: a fact that says what it replaces ("… instead of Chicago", "…, not Mondays") updates
the fact that holds that value on the same thing; :func:`same_slot_key`: two property slots that name one
property ("piano" and "piano lessons"); :func:`other_occurrence`: two facts about the first and the fourth of a
thing are two facts, however alike their words. The judge is
:meth:`~langchain_memoryos.controllers.heuristic.HeuristicController.judge_relations`.
"""

from __future__ import annotations

import re

from langchain_memoryos.controllers.lexicon import words
from langchain_memoryos.index.lexical import STOPWORDS
from langchain_memoryos.schema import MemoryRecord

__all__ = ["LIGHT_WORDS", "TIME_WORDS", "other_occurrence", "replaces", "same_slot_key"]

#: Words of a time, which no two facts share as what they are about.
TIME_WORDS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays
    saturdays sundays morning evening night week weekend month year day every daily weekly january february march
    april may june july august september october november december anymore longer""".split()
)
#: Words (plural "s" folded) that say nothing of what a fact is about.
LIGHT_WORDS = frozenset({"user", "user'", "go", "goe", "doe", "get", "make", "take", "doesn't", "don't", "not", "now"})

#: What a statement says it replaces ("… the Boston marathon instead of Chicago", "… on Tuesdays, not Mondays").
_REPLACES = re.compile(
    r"(?:,\s*(?:and\s+)?not|\binstead of|\brather than)\s+(?:the\s+|an?\s+|on\s+|in\s+|at\s+)?"
    r"([^,.;!?]{1,30}?)\s*[.!?]?$",
    re.I,
)


_NEGATED = re.compile(r"\b(?:not|never|no longer|won't|wouldn't)\b|n't\b", re.IGNORECASE)


def same_slot_key(a: str, b: str) -> bool:
    """Whether two slot keys name one property: equal, or attributes one of which names the other's thing.

    Example:
        >>> same_slot_key("attribute:piano", "attribute:piano lessons"), same_slot_key("location", "location")
        (True, True)
        >>> same_slot_key("attribute:gate code", "attribute:locker code"), same_slot_key("age", "sister.age")
        (False, False)
    """
    if a == b:
        return True
    if not (a.startswith("attribute:") and b.startswith("attribute:")):
        return False
    x, y = set(a.split(":", 1)[1].split()), set(b.split(":", 1)[1].split())
    return x <= y or y <= x


def _content(text: str) -> set[str]:
    tokens = {t for t in words(text) if t not in STOPWORDS and (len(t) > 2 or t.isdigit())}
    return {t[:-1] if t.endswith("s") and not t.endswith("ss") else t for t in tokens} - LIGHT_WORDS


def replaces(record: MemoryRecord, cand: MemoryRecord) -> bool:
    """Whether ``record`` says it replaces a value ``cand`` holds, on a thing both name.

    The subject's name is no shared thing (every fact about Noah names Noah), nor is a time word.

    Example:
        >>> new = MemoryRecord(summary="Noah is running the Boston marathon instead of Chicago.", subject="Noah")
        >>> replaces(new, MemoryRecord(summary="Noah is training for the Chicago marathon.", subject="Noah"))
        True
        >>> replaces(new, MemoryRecord(summary="Noah grew up in Chicago.", subject="Noah"))  # no marathon
        False
        >>> replaces(MemoryRecord(summary="Noah won't run Boston instead of Chicago.", subject="Noah"),
        ...          MemoryRecord(summary="Noah is training for the Chicago marathon.", subject="Noah"))
        False
        >>> replaces(MemoryRecord(summary="The user likes tea."), MemoryRecord(summary="The user likes coffee."))
        False
    """
    m = _REPLACES.search(record.summary)
    if m is None or _NEGATED.search(record.summary[: m.start()]):
        return False  # "Jon is not running Boston instead of Chicago" replaces nothing
    old, held = _content(m.group(1)), _content(cand.summary)
    about = _content(record.summary[: m.start()]) - old - TIME_WORDS - _content(record.subject)
    return bool(old) and old <= held and bool(about & held)


_ORDINAL = re.compile(
    r"\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th))\b", re.IGNORECASE
)


def other_occurrence(record: MemoryRecord, cand: MemoryRecord) -> bool:
    """Whether two facts count different occurrences of a thing ("first" / "fourth" tournament): not duplicates.

    Example:
        >>> a = MemoryRecord(summary="Nate won Nate's first video game tournament.")
        >>> other_occurrence(MemoryRecord(summary="Nate won Nate's fourth video game tournament."), a)
        True
        >>> other_occurrence(MemoryRecord(summary="Nate won a video game tournament."), a)
        False
    """
    new = {m.group(0).lower() for m in _ORDINAL.finditer(record.summary)}
    old = {m.group(0).lower() for m in _ORDINAL.finditer(cand.summary)}
    return bool(new) and bool(old) and new != old
