"""English vocabulary shared by the heuristic controller's rules: the tokenizer and the lists used in several modules.

Each list is written once here and read by :mod:`~langchain_memoryos.controllers.rules`,
:mod:`~langchain_memoryos.controllers.rewrite`, :mod:`~langchain_memoryos.controllers.slots`
and :mod:`~langchain_memoryos.controllers.heuristic`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CALLED_NAME", "NUMBER_WORDS", "PARTNERS", "PERIODS", "AskedName", "asked_name", "words"]

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+")

#: A romantic partner, as the user names them ("my girlfriend", "the user's wife").
PARTNERS: frozenset[str] = frozenset(
    {"wife", "husband", "partner", "boyfriend", "girlfriend", "fiance", "fiancé", "fiancee"}
)

#: A name someone goes by, with its title ("Sam", "Dr. Patel"): a regular expression with one group.
CALLED_NAME = r"((?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+)?[A-Z][\w'’-]+)"

#: "call me X" / "calls me X" (the name is group 1); "calling me X" and a term of address ("ma'am", "buddy") count
#: only refused ("stop calling me Katie", "you don't have to call me ma'am").
_CALL = re.compile(
    r"(?i:\bcall(?:s|ing)? me)\s+(?:" + CALLED_NAME + r"|(?P<term>(?i:ma'am|sir|madam|miss|buddy|sweetie|honey|"
    r"dear|darling|mate|bro|dude|kiddo|champ|babe|pal|hun|sweetheart)\b))"
)
#: A negation just before "call me" ("don't", "never", "no need to", "I'd rather you didn't"): the name is refused.
_NOT_BEFORE = re.compile(
    r"(?i:\b(?:don't|dont|do not|never|not|didn't|did not|no need to|no one|nobody|stop|quit|needn't)\s+"
    r"(?:(?:ever|really|even|to|please|have to|need to|want you to|want anyone to|like you to|like it if you)\s+)*$)"
)
#: After a refused name, the one asked for instead ("…, Sam is fine", "…, I go by Robert", "…, just Bob").
_INSTEAD = re.compile(
    r"(?:(?i:\b(?:I\s+)?(?:go by|prefer|'d prefer|would prefer)\s+|\bit(?:'s| is)\s+(?:just\s+)?)" + CALLED_NAME + r"|"
    r"(?:^|[,;:.!—-]\s*|(?i:\b(?:but|just|instead)\s+))(?i:(?:just|simply|plain)\s+)?"
    + CALLED_NAME.replace("((", "(?P<fine>(", 1)
    + r"(?i:\s+(?:is fine|is good|is great|works|will do|is perfect|is okay|is ok|is better|instead)\b))"
)
#: Others call the speaker a name ("My friends call me Red"): the name they go by, unless they ask for another.
_BY_OTHERS = re.compile(
    r"(?i:\b(?:everyone|everybody|people|folks|friends|family|they|he|she|(?:my|our) \w+(?: \w+)?)\s+"
    r"(?:usually\s+|always\s+|just\s+|all\s+|still\s+|often\s+)?$)"
)
#: What opens a refusal before its negation ("Please don't …", "I'd rather you didn't …"): part of the request.
_LEAD_NEGATION = re.compile(
    r"(?i:(?:\b(?:please|pls|just)\s+)?(?:\b(?:I'd|I would) (?:rather|prefer)(?: it)?(?: if)? you\s+|\byou\s+)?$)"
)


@dataclass(frozen=True)
class AskedName:
    """What a "call me …" sentence asks: the name to be called (or ""), a name refused (or ""), where it starts.

    Attributes:
        name: the name asked for ("Bob" of "Don't call me Robert, call me Bob").
        refused: a name the speaker asks not to be called ("Robert").
        start: where the request starts in the sentence, its negation included (what is said before it is a
            statement of its own: "My name is Daniel, but …").
    """

    name: str
    refused: str
    start: int


def asked_name(text: str) -> AskedName | None:
    """The name a sentence asks to be called by, and one it refuses ("don't call me X"), or ``None``.

    A negated "call me X" never names the speaker: its name is refused, and the name asked for is the
    next "call me Y" or what follows ("…, Sam is fine", "…, I go by Robert").

    Example:
        >>> asked_name("Please don't call me Robert, call me Bob.")
        AskedName(name='Bob', refused='Robert', start=0)
        >>> asked_name("No need to call me Dr. Patel, Sam is fine.").name, asked_name("Never call me Liz.").name
        ('Sam', '')
        >>> asked_name("My friends call me Red, but please call me Sarah.").name
        'Sarah'
        >>> asked_name("Everyone calls me Bo.").name
        'Bo'
        >>> asked_name("Call me Jo, not Joanna."), asked_name("I called my mom.")
        (AskedName(name='Jo', refused='', start=0), None)
    """
    refused, start, theirs = "", -1, ""
    for m in _CALL.finditer(text):
        negation = _NOT_BEFORE.search(text[: m.start()])
        if start < 0:
            begin = negation.start() if negation else m.start()
            start = _LEAD_NEGATION.search(text[:begin]).start()  # type: ignore[union-attr]
        if negation is None and (m.group("term") or m.group(0).lower().startswith("calling")):
            continue  # "they keep calling me Bobby", "call me sir": no name asked for
        if negation is None and _BY_OTHERS.search(text[: m.start()]):
            theirs = theirs or m.group(1)  # "My friends call me Red, but please call me Sarah": Sarah
            continue
        if negation is None:
            return AskedName(m.group(1), refused, start)
        refused = refused or m.group(1) or m.group("term")
        instead = _INSTEAD.search(text, m.end())
        if instead:
            return AskedName(instead.group(1) or instead.group("fine"), refused, start)
    return AskedName(theirs, refused, start) if refused or theirs else None


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
