"""English vocabulary shared by the heuristic controller's rules: the tokenizer and the lists used in several modules.

Each list is written once here and read by :mod:`~langchain_memoryos.controllers.rules`,
:mod:`~langchain_memoryos.controllers.rewrite`, :mod:`~langchain_memoryos.controllers.slots`
and :mod:`~langchain_memoryos.controllers.heuristic`.
"""

from __future__ import annotations

import re

__all__ = ["CALLED_NAME", "NUMBER_WORDS", "PARTNERS", "PERIODS", "words"]

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+")

#: A romantic partner, as the user names them ("my girlfriend", "the user's wife").
PARTNERS: frozenset[str] = frozenset(
    {"wife", "husband", "partner", "boyfriend", "girlfriend", "fiance", "fiancé", "fiancee"}
)

#: A name someone goes by, with its title ("Sam", "Dr. Patel"): a regular expression with one group.
CALLED_NAME = r"((?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+)?[A-Z][\w'’-]+)"

#: The periods of "next week", "last summer" …: a regular-expression alternation.
PERIODS = r"week|month|year|summer|spring|fall|winter"
#: Counts written as words, one to twelve: a count of things ("two kids") and of time units ("two weeks ago").
NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}


def words(text: str) -> list[str]:
    """Lower-cased words of a text (apostrophes normalised).

    Example:
        >>> words("I’m Ana")
        ["i'm", 'ana']
    """
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]
