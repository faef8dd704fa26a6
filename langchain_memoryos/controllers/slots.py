"""Property slots of third-person facts: whose property, which one, what value.

The AMU relation-judge asks whether a new record speaks about *the same
property* as an old one (update) or another one (separate). The offline
controller answers with slots: "The user lives in Denver" fills ``location``
with ``denver``; "The user's sister lives in Paris" fills ``sister.location``
— a different slot, so the two facts can coexist. Slot facts are also
rewritten to one canonical, self-contained statement of the current state
("I moved to Denver" → "The user lives in Denver."), keeping its time ("I moved to Denver
last month" → "The user lives in Denver, having moved there last month.", which the page's
date then resolves); a negated state ("is not working at Amazon anymore") or one with a time
or duration that is not a move ("married for 20 years") is kept as said.

The slot table is :mod:`.slot_table`, the readers (:func:`find_slot`, :func:`slot_of`,
:func:`agent_slot` …) :mod:`.slot_readers`; their public names are re-exported here.
"""

from __future__ import annotations

import re

from langchain_memoryos.controllers.dates import relative_time
from langchain_memoryos.controllers.slot_readers import SlotFact, agent_slot, as_the_user, find_slot, slot_of
from langchain_memoryos.controllers.slot_table import _PROPER
from langchain_memoryos.controllers.slot_table import CAR_MAKES as CAR_MAKES
from langchain_memoryos.controllers.slot_table import NOT_A_NAME_LEAD as NOT_A_NAME_LEAD

__all__ = ["SlotFact", "agent_slot", "as_the_user", "canonical_summary", "find_slot", "slot_of"]


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def canonical_summary(summary: str) -> str:
    """One self-contained statement of the current state of a profile slot.

    Events become states ("The user moved to Denver" → "The user lives in
    Denver."), so that an update replaces a statement of the same shape; a move's
    time is kept ("…, having moved there last month."). A negated state, a
    planned move, a time or duration on another slot, and statements without a
    profile slot come back unchanged.

    Args:
        summary: a third-person statement.

    Returns:
        The canonical statement, or ``summary`` itself.

    Example:
        >>> canonical_summary("The user used to live in Boston but now the user lives in Chicago.")
        'The user lives in Chicago.'
        >>> canonical_summary("The user quits the user's job at Deloitte.")
        'The user no longer works at Deloitte.'
        >>> canonical_summary("The user moved to Canada four years ago.")
        'The user lives in Canada, having moved there four years ago.'
        >>> canonical_summary("The user is not working at Amazon anymore.")
        'The user is not working at Amazon anymore.'
        >>> canonical_summary("The user loves hiking.")
        'The user loves hiking.'
        >>> canonical_summary("The user works as a nurse in Oslo.")
        'The user works as a nurse in Oslo.'
    """
    found = find_slot(summary)
    if found is None or found.value.startswith("not "):
        return summary  # a negated state ("is not a student anymore") is kept as said
    if _PLANNED.search(summary):
        return summary  # "is moving to Austin": not yet where the user lives
    if found.slot == "location" and re.search(r"(?i:\baddress\b|\blives at\b|\bmoved to \d)", summary):
        return summary  # "lives at 8 Harbour Road in Cork": the street address, kept as said
    when = relative_time(summary) or (_WRITTEN_TIME.search(summary) or [""])[0]
    moved = found.slot == "location" and _MOVED.search(summary) and when
    if not moved and (when or _TIMED.search(summary)):
        return summary  # "got divorced in 2021", "married for 20 years": the time kept as said
    if found.slot == "relationship_status" and re.search(r"(?i:\b(?:dating|seeing)\b)", summary):
        return summary  # "is dating someone from work": who and since when would be lost in "in a relationship"
    if found.slot == "occupation" and re.search(r"(?i:\bteach)", summary):
        return summary  # "teaches yoga on weekends": what and when would be lost in "works as a teacher"
    if found.slot == "employer" and re.search(r"(?i:\bis an? [\w -]+? at\b)", summary):
        return summary  # "is an engineer at Google": the role would be lost
    if found.slot in ("employer", "work_location") and re.search(r"(?i:\bas an? [a-z])", summary):
        return summary  # "works as a nurse in Oslo", "works at Google as an engineer": the occupation would be lost
    canonical = _canonical(found, summary)
    if moved:  # "moved to Canada four years ago": where the user lives, and since when
        canonical = f"{canonical.rstrip('.')}, having moved there {when}."
    current = re.split(r"(?i:\b(?:used to|previously|formerly|no longer)\b[^.]*?\bbut\b)", summary)[-1]
    kept = {m.group(0) for m in re.finditer(_PROPER, canonical)}
    dropped = [m.group(0) for m in re.finditer(_PROPER, current) if m.group(0) not in kept]  # "Jake and the user …"
    return summary if any(d not in _NOT_NAMES for d in dropped) else canonical


_NOT_NAMES = frozenset({"I", "The", "User"})
#: A time written out or a duration: a canonical statement would drop it.
_TIMED = re.compile(
    r"(?i:\b(?:for (?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|many|several|a few|"
    r"a couple of|over|almost|nearly|about) (?:\w+ )?(?:days?|weeks?|months?|years?|decades?)|(?:19|20)\d\d)\b)|"
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b"
)
#: A time written out after a preposition ("in 2018", "on 3 May", "back in March 2020").
_WRITTEN_TIME = re.compile(
    r"(?i:\b(?:back\s+)?(?:in|on|since|during)\s+(?:the\s+)?(?:(?:\d{1,2}(?:st|nd|rd|th)?\s+)?(?-i:January|February|"
    r"March|April|May|June|July|August|September|October|November|December)(?:\s+\d{4})?|(?:19|20)\d\d|"
    r"(?:spring|summer|fall|autumn|winter)(?:\s+(?:of\s+)?(?:19|20)\d\d)?)\b)"
)
#: A move ("moved to", "relocated to"): the location slot's event.
_MOVED = re.compile(r"(?i:\b(?:moved|relocated|moves|has moved|just moved|recently moved|settled)\b)")
#: A change still to come ("is moving to Austin"): not yet the current state.
_PLANNED = re.compile(
    r"(?i:\b(?:is|are) (?:moving|relocating|going to move|planning to move)|will (?:move|relocate)|plans? to move)\b"
)


def _canonical(found: SlotFact, summary: str) -> str:
    who = "The user" if found.subject == "user" else f"The user's {found.subject}"
    v = found.display
    templates = {
        "location": f"{who} lives in {v}.",
        "work_location": f"{who} works in {v}.",
        "hometown": f"{who} is from {v}.",
        "occupation": f"{who} works as {_article(v)} {found.value}.",
        "relationship_status": f"{who} is {found.value}.",
        "age": f"{who} is {found.value} years old.",
        "name": f"{who}'s name is {v}." if found.subject == "user" else f"{who} is named {v}.",
    }
    if found.slot == "employer":
        if found.value == "none":
            return f"{who} no longer works at {v}." if v != "none" else summary
        return f"{who} works at {v}."
    if found.slot == "diet":
        if found.value == "omnivore":
            return f"{who} eats meat."
        if found.value.startswith("no "):
            return f"{who} does not eat {found.value[3:]}."
        return f"{who} is {found.value}."
    if found.slot == "name" and found.subject == "user":
        return f"The user's name is {v}."
    return templates.get(found.slot, summary)
