"""Requests about the memory and the statements a speaker asks to keep (:mod:`.facts`, step 3).

"Please remember that …", "Make sure you remember …", "Note to self: …" keep only the statement
(:func:`kept_statement`), said as the speaker's own when it is about a thing of theirs
(:func:`own_statement`); "Forget …" / "Don't store …" is a request, never a fact
(:func:`side_requests`); "Don't save this, but …" keeps nothing of what follows.

Example:
    >>> kept_statement("Note to self: the gate code is 4471."), own_statement("the gate code is 4471.")
    ('The gate code is 4471.', 'My gate code is 4471.')
    >>> side_requests("Please forget my old address. I live in Oslo now.")
    ['my old address.']
"""

from __future__ import annotations

import re

from langchain_memoryos.controllers.fact_cleaning import _PHOTO, _clean
from langchain_memoryos.controllers.fact_typing import _FIRST
from langchain_memoryos.controllers.lexicon import words
from langchain_memoryos.controllers.rewrite import informal_apostrophes, split_sentences
from langchain_memoryos.controllers.rules import GROUP_PERSON, memory_request
from langchain_memoryos.controllers.slots import CAR_MAKES

__all__ = ["kept_statement", "own_statement", "side_requests"]


#: A preamble that tells the listener something to keep ("Just a heads up, …", "I forgot to mention that …"):
#: the statement after it is a fact the speaker chose to share, as after "Remember that …".
_TOLD = re.compile(
    r"^(?:(?:oh|and|also|so|ok|okay|btw|by the way)[\s,]+)*(?:(?:just a |quick |a quick )?heads up|"
    r"I (?:almost|nearly) forgot|before I forget|I forgot to (?:mention|tell you)|"
    r"I (?:should|must|have to|need to|wanted to|want to|meant to) (?:mention|tell you|let you know)|"
    r"did I (?:ever )?(?:tell you|mention)|not sure if I (?:told you|mentioned)|"
    r"I don't know if I (?:told you|mentioned))\b",
    re.I,
)
#: The speaker asks that what they say is not kept ("Don't save this, but …", "Off the record, …"): no fact.
_PRIVATE = re.compile(
    r"^(?:(?:please|and|but|ok|okay|so|oh)[\s,]+)*(?:(?:please\s+)?(?:don't|do not|dont|no need to|never)\s+"
    r"(?:save|store|remember|record|note|write down|keep|log)\s+(?:this|that|it)\b|(?:this is\s+|strictly\s+|just\s+)?"
    r"off the record\b|(?:just\s+|this is\s+)?between (?:you and me|us)\b)",
    re.IGNORECASE,
)
#: Asking the assistant to keep a statement, beyond :func:`~.rules.memory_request`'s forms ("Make sure you
#: remember …", "Note to self: …", "From now on, remember …"): the statement is the fact.
_KEEP_THIS = re.compile(
    r"^(?:(?:please|pls|and|also|oh|ok|okay|so)[\s,]+)*(?:(?:from now on|going forward|in the future)[\s,]+)?"
    r"(?:make sure (?:you|to) (?:remember|know|note)|note to self|remember for (?:next time|later|the future)|"
    r"for next time|just remember|try to remember|remember|I need you to (?:remember|know)|you need to know|"
    r"you should remember|please keep this in mind|keep this in mind)(?:\s+that\b)?[\s,:;—-]*",
    re.IGNORECASE,
)


def kept_statement(sentence: str) -> str:
    """The statement a "keep this" request asks to keep ("Make sure you remember my wife's birthday is …").

    Example:
        >>> kept_statement("From now on, remember I'm vegetarian."), kept_statement("I'm vegetarian.")
        ("I'm vegetarian.", '')
    """
    text = " ".join(sentence.replace("’", "'").split())
    m = _KEEP_THIS.match(text)
    rest = text[m.end() :] if m else ""
    if not m or len(words(rest)) < 2 or rest.rstrip().endswith("?"):
        return ""
    return rest[0].upper() + rest[1:]


#: What a thing of the speaker's does at a time ("the book club meets at 7", "the bus leaves at 8").
_THING_VERBS = (
    r"starts|begins|ends|finishes|leaves|departs|arrives|opens|closes|expires|runs|meets|happens|takes place|lasts|"
    r"costs|is due"
)
#: "the <thing> is …" said to be kept or as a correction: the speaker's own thing ("the dentist appointment is …").
_THE_THING = re.compile(r"^[Tt]he\s+(?=(?:[\w-]+\s+){0,5}?(?:is|are|was|were|" + _THING_VERBS + r")\b)")
#: "piano is on Tuesdays" (a correction or a note with its "my" left out): a thing of the speaker's and its value.
_BARE_THING = re.compile(
    r"^(?!(?:it|this|that|there|here|what|which|who|he|she|they|everything|nothing|something|everyone|one|all|each|"
    r"today|tomorrow|tonight|mine|ours|the|an?|my|our|your|his|her|their)\b)[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,2}\s+"
    r"(?:is|are|" + _THING_VERBS + r")\s"
)
#: "it's a Honda Accord, not a Civic": a correction that names a car (the only "it" a page alone resolves).
_IT_IS_CAR = re.compile(
    rf"^(?:it's|it is|that's|that is|it was)\s+(?:actually\s+)?(?:an?\s+|the\s+)?(?=(?-i:{CAR_MAKES})\b)", re.I
)


#: A note without a verb ("gate code 4471", "locker: 212"): a thing and its value (a number or a name).
_NOTE = re.compile(r"^(?:the\s+|my\s+)?((?:[A-Za-z-]+\s+){0,3}[A-Za-z-]+)\s*[:=—–-]?\s+(\S*\d\S*|[A-Z][\w-]+)[.!]?$")


def own_statement(statement: str, asked: bool = False) -> str:
    """A statement the speaker asked to keep, or corrected, about a thing of theirs, said as theirs.

    A note asked to be kept may have no verb ("Remember: gate code 4471").

    Example:
        >>> own_statement("the dentist appointment is on the 21st."), own_statement("it's a Toyota Corolla.")
        ('My dentist appointment is on the 21st.', 'My car is a Toyota Corolla.')
        >>> own_statement("Gate code 4471.", asked=True)
        'My gate code is 4471.'
    """
    if set(words(statement)) & (_FIRST | GROUP_PERSON):
        return statement
    note = _NOTE.match(statement) if asked else None
    if note and not set(words(note.group(1))) & _VERB_WORDS:
        return f"My {note.group(1).lower()} is {note.group(2).rstrip('.!,')}."
    car = _IT_IS_CAR.match(statement)
    if car:
        article = re.match(r"(?i)^(?:it's|it is|that's|that is|it was)\s+(?:actually\s+)?(an?\s+)?", statement)
        return "My car is " + ((article.group(1) or "") if article else "") + statement[car.end() :]
    if _BARE_THING.match(statement):
        return "My " + statement  # "Actually, piano is on Tuesdays": the speaker's piano (lessons)
    return _THE_THING.sub("My ", statement, count=1)


def _request(raw: str, cleaned: str) -> tuple[str, str]:
    """:func:`~.rules.memory_request` of a sentence as said, else as cleaned ("Oh, and remember …")."""
    found = memory_request(" ".join(raw.split()))
    return found if found[0] else memory_request(cleaned)


def side_requests(text: str, other: str | None = None) -> list[str]:
    """What one side's sentences ask the memory to forget, each as said: the one reading of a forget request.

    The controller marks these requests (:func:`page_requests`) and never
    makes a fact of them; the write path carries them out
    (:func:`~langchain_memoryos.amu.forgetting.forget_request` reads a turn
    with this function). "Forget it" and "Don't forget to …" are no request.

    Args:
        text: one side of a page, without its ``"Name: "`` prefix.
        other: the other speaker's name (a vocative of it is not part of the request).

    Returns:
        The object of each forget request, in order ("that I'm in debt.").

    Example:
        >>> side_requests("Hi! Please don't store my address. Can you forget that I mentioned my salary?")
        ['my address.', 'that I mentioned my salary?']
        >>> side_requests("Forget it, never mind. Don't forget to call me.")
        []
    """
    out: list[str] = []
    for raw in split_sentences(" ".join(informal_apostrophes(_PHOTO.sub(" ", text or "")).split())):
        request, about = _request(raw, _clean(raw, other))
        if request == "forget":
            out.append(about)
    return out


#: Words that make an answer a clause rather than a noun phrase ("Yes, my brother and I went").
_VERB_WORDS = frozenset(
    "is are was were am be been has have had do does did went got made took go goes going can will would".split()
)
