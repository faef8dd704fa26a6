"""The slot readers of :mod:`.slots`: which slot a third-person statement fills, whose, and with what value.

:func:`find_slot` reads a :class:`SlotFact` off a statement with the slot table
(:mod:`.slot_table`), then a favourite, a count, a negated slot, a preference or an attribute;
:func:`slot_of` gives its key and value; :func:`as_the_user` reads a named person's fact as the
user's; :func:`agent_slot` reads the trait slot of an instruction to the assistant.

Example:
    >>> slot_of("The user's sister lives in Paris."), agent_slot("The assistant should use bullet points.")
    (('sister.location', 'paris'), ('agent.format', 'bullets'))
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from langchain_memoryos.controllers.lexicon import CALLED_NAME, NUMBER_WORDS, PERIODS, words
from langchain_memoryos.controllers.slot_table import _I, _PATTERNS, _SOCIAL

__all__ = ["SlotFact", "agent_slot", "as_the_user", "find_slot", "slot_of"]


@dataclass(frozen=True)
class SlotFact:
    """A slot read off a third-person statement.

    Attributes:
        subject: ``"user"`` or the person/pet it is about (``"sister"``).
        slot: the property (``location``, ``employer``, ``preference:coffee`` …).
        value: the normalised value (lower case; ``+``/``-`` for preferences).
        display: the value as written, for a canonical statement.

    Example:
        >>> find_slot("The user's sister lives in Paris.").key
        'sister.location'
    """

    subject: str
    slot: str
    value: str
    display: str

    @property
    def key(self) -> str:
        """The slot key: ``slot`` for the user, ``subject.slot`` for anyone else.

        Example:
            >>> SlotFact("user", "location", "oslo", "Oslo").key, SlotFact("Ana", "location", "rome", "Rome").key
            ('location', 'Ana.location')
        """
        return self.slot if self.subject == "user" else f"{self.subject}.{self.slot}"


_FAVORITE = re.compile(r"\bfavou?rite\s+([a-z]+(?:\s+[a-z]+)?)\s+(?:is|are|was)\s+([^,.;!?]+)", _I)
_PREFERENCE = re.compile(
    r"\b(does not like|doesn't like|no longer likes|no longer enjoys|doesn't enjoy|does not enjoy|hates|"
    r"doesn't drink|does not drink|no longer drinks|stopped drinking|quit drinking|gave up|"
    r"dislikes|can't stand|is not a fan of|isn't a fan of|likes|loves|enjoys|prefers|adores|is into|"
    r"is a (?:big |huge )?fan of|is obsessed with|has switched to|switched to|is switching to|now drinks|"
    r"now eats|drinks|eats)\s+([^,.;!?]+)",
    _I,
)
#: "The user has switched from coffee to tea": the old habit ends (a place is a move: see the location slot).
_SWITCHED = re.compile(r"\b(?:switched|changed|swapped|gone over) from ([a-z][\w' -]*?) to [a-z]", _I)
_NOT_MY_THING = re.compile(r"^([\w' -]+?)(?:'s| is| are)\s+(?:not|never)\s+the user's (?:thing|cup of tea|jam)", _I)
_NEGATIVE_PREF = (
    "does not",
    "doesn't",
    "no longer",
    "hates",
    "dislikes",
    "can't stand",
    "is not",
    "isn't",
    "stopped",
    "quit",
    "gave up",
)
_SUBJECT = re.compile(r"^(?:the user's|their|the user and others')\s+((?:[a-z-]+\s+){0,2}?)([a-z]+)\b", _I)
_STOP_HEAD = frozenset({"the", "a", "an", "to", "my", "his", "her", "their", "some", "of", "and", "with", "in"})
_HEAD_END = frozenset(
    """with at in on for when because but and now so the user's every more than over instead anymore these
    there here lately recently too very a lot days most all any again sometimes often daily weekly""".split()
)
_OTHERS_VERB = re.compile(
    r"(?i:\buser's\s+(?:[a-z-]+\s+){0,2}?(?:" + "|".join(sorted(_SOCIAL, key=len, reverse=True)) + r")\b)"
)


def _head(obj: str) -> str:
    toks = words(obj)
    while toks and toks[0] in _STOP_HEAD:
        toks = toks[1:]
    head: list[str] = []
    for t in toks:
        if t in _HEAD_END or t in _STOP_HEAD:
            break
        head.append(t)
        if len(head) == 2:
            break
    return " ".join(head)


def _pref_key(obj: str) -> str:
    """The object of a preference by its first word, singular ("horror movies" → "horror")."""
    first = obj.split()[0] if obj.split() else obj
    return first[:-1] if len(first) > 3 and first.endswith("s") and not first.endswith("ss") else first


def _norm(value: str) -> str:
    v = value.strip().lower()
    v = re.sub(rf"\b(?:now|last (?:{PERIODS})|recently|this year|anymore|any more|after all|either)\b", "", v)
    v = re.sub(r"^(?:the|a|an)\s+", "", v.strip())
    return " ".join(v.split())


def _subject(summary: str) -> tuple[str, str]:
    """``(subject, rest)``: who the statement is about and the text after the subject."""
    m = _SUBJECT.match(summary)
    if m and (m.group(2).lower() in _SOCIAL or _PERSON_VERB.match(summary[m.end() :])):
        # "The user's mum lives in Cork": the mum's home, not the user's (a thing does not live or work)
        return m.group(2).lower(), summary[m.end() :]
    return "user", summary


#: What only a person (or a pet) does: the one it is said of is the slot's subject.
_PERSON_VERB = re.compile(
    r"(?i:\s*,?\s*(?:[A-Z][a-z]+,?\s+)?(?:lives|lived|works|worked|is from|comes from|moved|grew up|was born|studies|"
    r"is studying|is married|got married|is engaged|got engaged|is divorced|got divorced|turned|is retired)\b)"
)


def find_slot(summary: str) -> SlotFact | None:
    """The slot a third-person statement fills, with whose property it is.

    Slots: name, age, location, hometown, employer (``none`` after quitting),
    occupation, diet, relationship_status, pet, ``favorite_<thing>`` and
    ``preference:<object>`` (value ``+`` or ``-``). A statement about someone
    in the user's life ("The user's brother works at Siemens") fills that
    person's slot (``brother.employer``).

    Args:
        summary: a third-person statement.

    Returns:
        The slot, or ``None`` when no rule reads one.

    Example:
        >>> find_slot("The user moved to Denver last month for a new job.").value
        'denver'
        >>> find_slot("The user's girlfriend and the user broke up.").key
        'relationship_status'
    """
    return _found_slot(summary)  # a statement's slot is read several times per page: once is enough


@lru_cache(maxsize=4096)
def _found_slot(summary: str) -> SlotFact | None:
    """:func:`find_slot`, remembered by statement (a pure function of it; a :class:`SlotFact` is immutable)."""
    text = " ".join(summary.replace("’", "'").split())
    named = _NAMED_THING.match(text)
    if named:  # "The user's landlord is called Victor": the landlord's name, not the user's
        return SlotFact(named.group(1).lower(), "name", named.group(2).lower(), named.group(2))
    subject, rest = _subject(text)
    joint = subject != "user" and bool(re.match(r"(?i:\s*and the user\b)", rest))
    if joint:  # "The user's girlfriend and the user broke up": about the user
        subject, rest = "user", text
    fav = _FAVORITE.search(rest)
    if fav:
        return SlotFact(subject, f"favorite_{fav.group(1).lower().strip()}", _norm(fav.group(2)), fav.group(2).strip())
    count = _COUNTED.search(rest)
    if count and not _negated(rest[: count.start()]):  # "The user has two kids": a count that a later one updates
        noun = _singular(count.group(2).lower())
        return SlotFact(subject, f"count:{noun}", str(_number(count.group(1))), count.group(1))
    found = _pattern_slot(subject, rest, text, joint)
    if found is None:
        # "The user is not a student anymore", "… doesn't live in Paris": the slot, negated
        positive = _affirmed(rest)
        if positive != rest:
            plain = _pattern_slot(subject, positive, positive, joint)
            if plain is not None and not plain.value.startswith(("not ", "no ")) and plain.value != "none":
                found = SlotFact(plain.subject, plain.slot, f"not {plain.value}", plain.display)
    if found is not None:
        return found
    nope = _NOT_MY_THING.search(rest)
    if nope and _head(nope.group(1)):
        return SlotFact(subject, f"preference:{_pref_key(_head(nope.group(1)))}", "-", _head(nope.group(1)))
    switched = _SWITCHED.search(rest)
    if switched and _head(switched.group(1)):  # "switched from coffee to tea": coffee no longer
        return SlotFact(subject, f"preference:{_pref_key(_head(switched.group(1)))}", "-", _head(switched.group(1)))
    pref = _PREFERENCE.search(rest)
    if pref:
        verb = pref.group(1).lower()
        obj = _head(pref.group(2))
        if obj:
            key = _pref_key(obj)
            return SlotFact(subject, f"preference:{key}", "-" if verb.startswith(_NEGATIVE_PREF) else "+", obj)
    attribute = _ATTRIBUTE.match(text) or _ATTRIBUTE_OF.match(text)
    if attribute and _specific(attribute.group(2)):
        # "new", "current" name no other attribute ("the user's new phone number" updates "the user's phone number")
        noun = " ".join(w for w in words(attribute.group(1)) if w not in _NOT_ATTRIBUTE_WORDS) or "thing"
        if noun.split()[-1] not in _SOCIAL and noun.split()[-1] not in _NOT_ATTRIBUTES:
            # "The user's flight is on Monday": the flight's day, which a correction updates
            return SlotFact("user", f"attribute:{noun}", _norm(attribute.group(2)), attribute.group(2).strip())
    return None


def _pattern_slot(subject: str, rest: str, text: str, joint: bool) -> SlotFact | None:
    """The first :data:`_PATTERNS` slot of ``rest``; a value negated in its own clause reads ``not …``."""
    for slot, pattern, constant in _PATTERNS:
        m = pattern.search(rest)
        if not m:
            continue
        if subject == "user" and not joint and _OTHERS_VERB.search(rest[: m.start()]):
            continue  # the verb belongs to someone else ("… the user's sister who lives in Paris")
        if (
            slot == "name"
            and subject == "user"
            and "called" in pattern.pattern
            and not text.lower().startswith("the user")
        ):
            continue  # "Their dog is called Rocky" names someone else
        captured = m.group(1) if m.groups() and m.group(1) else ""
        negated = _negated(rest[: m.start()])  # "The user no longer works at Deloitte"
        if constant is None:
            value = _norm(captured)
            return SlotFact(subject, slot, f"not {value}" if negated else value, captured.strip())
        if negated:
            continue  # "The user didn't quit the job": no state read
        value = constant.format(captured.lower()) if "{0}" in constant else constant
        return SlotFact(subject, slot, value, captured.strip() or value)
    return None


#: A negation in the clause that holds a slot's verb ("is not", "no longer", "doesn't", "never").
_NEGATION = re.compile(r"(?i:\b(?:not|no longer|never)\b|n't\b)")
#: Where a clause starts: a negation before it belongs to another clause.
_CLAUSE_START = re.compile(r"(?i:[,;]|\b(?:but|and|so|because|although|though|while|now)\b)")


def _negated(prefix: str) -> bool:
    """Whether the last clause of ``prefix`` (the text before a slot's verb) is negated."""
    parts = _CLAUSE_START.split(prefix)
    return bool(_NEGATION.search(parts[-1] if parts else prefix))


_NEGATED_VERB = re.compile(
    r"(?i:\b(?:(is|are|was|were)(?:n't|\s+not|\s+no longer)|(?:doesn't|does not|no longer|never)\s+([a-z]+))\b)"
)


def _affirmed(rest: str) -> str:
    """``rest`` with its first negated verb affirmed ("is not a student" → "is a student")."""

    def affirm(m: re.Match[str]) -> str:
        if m.group(1):
            return m.group(1)
        verb = m.group(2)
        return verb if verb.endswith("s") and not verb.endswith("ss") else _third_person(verb)

    return _NEGATED_VERB.sub(affirm, rest, count=1)


def _third_person(verb: str) -> str:
    if verb in ("have", "do", "go"):
        return {"have": "has", "do": "does", "go": "goes"}[verb]
    if verb.endswith(("sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(verb) > 2 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


#: "The user has two kids", "… owns 3 bikes": how many of a thing (a later count updates it).
_COUNTED = re.compile(
    r"(?i:\b(?:has|have|owns|has got)\s+(?:now\s+)?)(\d{1,3}|"
    + "|".join(NUMBER_WORDS)
    + r")(?i:\s+(?:[a-z-]+\s+)?)([a-z]+)\b(?!\s+(?:ago|old|of)\b)"
)


def _number(text: str) -> int:
    return int(text) if text.isdigit() else NUMBER_WORDS[text.lower()]


def _singular(noun: str) -> str:
    if noun.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y"
    if noun.endswith(("ches", "shes", "sses", "xes")):
        return noun[:-2]
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun


#: "The user's landlord is called Victor", "The user's dog's name is Pepper": that one's name.
_NAMED_THING = re.compile(
    r"^(?i:the user's|their)\s+(?:[a-z-]+\s+){0,2}?([a-z-]+)(?:'s name is|\s+is (?:called|named))\s+"
    r"([A-Z][\w'-]+)"
)
#: "The user's flight is on Monday", "The user's locker code is 4471": an attribute with a value.
_ATTRIBUTE = re.compile(r"^(?i:the user's)\s+((?:[a-z-]+\s+){0,2}?[a-z-]+)\s+(?:is|are)\s+(?!not\b|no\b)(.+?)\.?$")
#: "The gate code for the user's building is 4471", "The name of the user's boat is Seabird": the same, said with "of".
_ATTRIBUTE_OF = re.compile(
    r"^(?i:the\s+((?:[a-z-]+\s+){0,2}?[a-z-]+\s+(?:for|of|to|at|on)\s+the user's\s+(?:[a-z-]+\s+)?[a-z-]+)\s+"
    r"(?:is|are)\s+(?!not\b|no\b)(.+?)\.?$)"
)
_NOT_ATTRIBUTE_WORDS = frozenset({"new", "current", "latest", "updated", "old", "present"})
_NOT_ATTRIBUTES = frozenset(
    {"name", "favorite", "favourite", "job", "age", "birthday", "life", "thing", "plan", "goal"}
)


def _specific(value: str) -> bool:
    """Whether an attribute's value is one that can be replaced: a number, a date or a name, not a description."""
    return bool(re.search(r"\d|\b[A-Z][a-z]+|\w@\w", value.strip())) or bool(
        re.match(r"(?i:on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b)", value.strip())
    )


def as_the_user(summary: str, subject: str) -> str:
    """A fact about a named ``subject`` as the slot rules read it: the subject as "the user".

    Example:
        >>> as_the_user("The user's sister Ana lives in Rome.", "Ana")
        'The user lives in Rome.'
        >>> slot_of(as_the_user("Ana moved to Paris in April 2023.", "Ana"))
        ('location', 'paris')
    """
    if not subject:
        return summary
    name = re.escape(subject)
    # "The user's sister Ana lives in Rome" is about Ana: "Ana lives in Rome"
    text = re.sub(rf"(?i:\bthe user's|\b[A-Z][\w-]*'s)\s+(?:[a-z-]+,?\s+){{0,2}}?(?-i:{name})\b,?", subject, summary)
    text = re.sub(rf"^{name},\s+(?:the user's|[A-Z][\w-]*'s)\s+(?:[a-z-]+\s+){{0,2}}?[a-z-]+,\s+", subject + " ", text)
    text = re.sub(rf"\b{name}\b", "the user", text)
    return text[:1].upper() + text[1:]


def slot_of(summary: str) -> tuple[str, str] | None:
    """``(slot key, value)`` of a third-person statement, or ``None``.

    Example:
        >>> slot_of("The user lives in Denver.")
        ('location', 'denver')
        >>> slot_of("The user no longer likes coffee.")
        ('preference:coffee', '-')
        >>> slot_of("The user's brother works at Siemens.")
        ('brother.employer', 'siemens')
    """
    found = find_slot(summary)
    return None if found is None else (found.key, found.value)


_AGENT_SLOTS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "length",
        re.compile(r"\b(?:short|shorter|brief|briefer|concise|succinct|terse|to the point|one-liners?)\b", _I),
        "short",
    ),
    (
        "length",
        re.compile(r"\b(?:detailed|long|longer|in-depth|in depth|thorough|more detail|elaborate|lengthy)\b", _I),
        "detailed",
    ),
    ("format", re.compile(r"\b(?:bullet points?|bullets|bulleted|lists?)\b", _I), "bullets"),
    ("format", re.compile(r"\b(?:paragraphs?|prose|full sentences)\b", _I), "prose"),
    ("format", re.compile(r"\btables?\b", _I), "tables"),
    ("tone", re.compile(r"\b(?:formal|professional|polite)\b", _I), "formal"),
    ("tone", re.compile(r"\b(?:casual|informal|friendly|relaxed|chill)\b", _I), "casual"),
    ("emoji", re.compile(r"\b(?:no|not use|never use|without|stop using|don't use)\b[^.]*\bemojis?\b", _I), "no"),
    ("emoji", re.compile(r"\bemojis?\b", _I), "yes"),
    ("units", re.compile(r"\b(?:metric|celsius|kilometers|kilometres|kg)\b", _I), "metric"),
    ("units", re.compile(r"\b(?:imperial|fahrenheit|miles|pounds)\b", _I), "imperial"),
)
_LANGUAGE = re.compile(
    r"\b(?:in|speak|use|to|into)\s+(English|Spanish|French|German|Italian|Portuguese|Dutch|Chinese|Japanese|Korean|"
    r"Arabic|Russian|Hindi|Polish|Swedish|Norwegian|Danish|Finnish|Greek|Turkish)\b",
    _I,
)
_ADDRESS = re.compile(r"\bcall (?:the user|me)\s+" + CALLED_NAME)


def agent_slot(summary: str) -> tuple[str, str] | None:
    """The trait slot an instruction to the assistant fills (``agent.length`` …).

    Slots: ``agent.length`` (short / detailed), ``agent.format`` (bullets,
    prose, tables), ``agent.tone``, ``agent.emoji``, ``agent.units``,
    ``agent.language`` and ``agent.address`` (how to call the user).

    Args:
        summary: the trait ("The assistant should keep answers short.").

    Returns:
        ``(slot key, value)`` or ``None``.

    Example:
        >>> agent_slot("The assistant should keep its answers brief.")
        ('agent.length', 'short')
        >>> agent_slot("The assistant should call the user Sam.")
        ('agent.address', 'sam')
        >>> agent_slot("The assistant should not call the user Sam.")  # a refused name
        ('agent.address', 'not sam')
    """
    m = _ADDRESS.search(summary)
    if m:  # "should not call the user Rob": a refused name, which a later "call me Rob" updates
        refused = _NEGATION.search(summary[max(0, m.start() - 8) : m.start() + 1])
        return "agent.address", ("not " if refused else "") + m.group(1).lower()
    m = _LANGUAGE.search(summary)
    if m:
        return "agent.language", m.group(1).lower()
    for slot, pattern, value in _AGENT_SLOTS:
        if pattern.search(summary):
            return f"agent.{slot}", value
    return None
