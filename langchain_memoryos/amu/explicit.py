"""An explicit ``add_fact`` is the caller's decision: no silent loss.

The controller parses the statement into typed records as for any fact; then, for a user
fact, :func:`explicit_records` makes sure what reaches the write path is what the caller said:

* **never "not personal"**: every record the caller gave is personal (a task request such as
  "Can you draft an email?" is still not a fact); a record the controller
  could not type (fallback aspect or intent) is typed as an ``activity`` / ``inform`` so that the
  write-gate does not refuse it for that, and its content words stand in for missing entities;
* **a named person is the subject**: "Joanna adopted a dog named Max in May 2022." is parsed as
  "The user adopted …" (:func:`as_user`), then stored with Joanna's name back and ``subject="Joanna"``;
  "My sister Ana lives in Rome." is stored about Ana (``subject="Ana"``);
* **every content word kept**: when the records' summaries together miss a content word of the
  statement (:func:`content_words`), the statement itself is stored instead (in the third person),
  with the first record's aspect, intent, slot and entities, so the judge and fuse still merge
  duplicates and updates.
* **relative time as dates**: "yesterday", "last month", "two years ago" in a user fact are
  resolved against the time the fact was stated (``add_fact``'s ``timestamp``, else the user's
  conversation clock, else now) before it is parsed (:func:`dated`), so the stored fact says "on 7
  May 2023" and still holds every content word of what was said.

A text in which the controller finds no fact and no named person ("haha thanks!") still yields no
fact (a ``filtered`` event), and the controller's confidence still gates a hedged statement ("maybe
I'll learn to dive someday").

Example:
    >>> from langchain_memoryos.schema import MemoryRecord
    >>> lossy = MemoryRecord(aspect="personal_profile", entities=["Oslo"], summary="The user works in Oslo.")
    >>> [r.summary for r in explicit_records("I work as a nurse in Oslo.", [lossy])]
    ['The user works as a nurse in Oslo.']
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from dataclasses import replace

from langchain_memoryos.controllers.dates import resolve_relative_time
from langchain_memoryos.controllers.facts import named_subject as relative_named
from langchain_memoryos.controllers.rewrite import FIRST_PERSON, informal_apostrophes, third_person
from langchain_memoryos.controllers.rules import memory_request
from langchain_memoryos.controllers.slots import as_the_user, slot_of
from langchain_memoryos.index.lexical import STOPWORDS
from langchain_memoryos.schema import MemoryRecord

__all__ = ["as_user", "content_words", "dated", "explicit_records", "lost_words", "named_subject"]

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
#: Words that name the user or the speaker: a rewrite to the third person may add or drop them.
_PERSON_WORDS = FIRST_PERSON | {"user", "user's", "users"}
#: Capitalised sentence openers that are not a person's name.
_NOT_NAMES = frozenset(
    """the a an i my our we you your he she they it this that these those there here today yesterday tomorrow
    last next please remember note when after before if in on at since during every each can could would will
    shall should may might must what who where why how which do does did is are was were let thanks thank hello
    hi hey yes no maybe big great good sorry well so also just still never always sometimes anyway""".split()
)
_LEAD_NAME = re.compile(r"^([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)(?='s\b|\s)")


def dated(statement: str, when: _dt.datetime) -> str:
    """The statement with its relative time as dates, against ``when`` (the time it was stated).

    Example:
        >>> import datetime as dt
        >>> dated("I ran my first marathon yesterday.", dt.datetime(2023, 5, 8, 10, tzinfo=dt.UTC))
        'I ran my first marathon on 7 May 2023.'
        >>> dated("Joanna adopted a dog two years ago.", dt.datetime(2023, 5, 8, tzinfo=dt.UTC))
        'Joanna adopted a dog in 2021.'
    """
    return resolve_relative_time(statement, when)


def _fold(word: str) -> str:
    """A plural (or third-person) ``s`` folded: ``dogs`` → ``dog``, ``works`` → ``work``; ``class`` kept."""
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(text: str) -> set[str]:
    """The content words of a statement: lower-cased, stopwords and the user's pronouns dropped, plural s folded.

    Example:
        >>> sorted(content_words("I work as a nurse in Oslo, with my two dogs."))
        ['dog', 'nurse', 'oslo', 'two', 'work']
        >>> content_words("The user works as a nurse.") == content_words("I work as a nurse.")
        True
    """
    words = (_fold(w) for w in _WORD.findall(text.lower().replace("’", "'")) if w not in STOPWORDS)
    return {w for w in words if w and w not in _PERSON_WORDS and w not in STOPWORDS}


def lost_words(statement: str, summaries: Sequence[str]) -> set[str]:
    """The content words of ``statement`` that none of ``summaries`` holds.

    Example:
        >>> lost_words("I work as a nurse in Oslo.", ["The user works in Oslo."])
        {'nurse'}
        >>> lost_words("I like hiking and I have two cats.", ["The user likes hiking.", "The user has two cats."])
        set()
    """
    kept: set[str] = set()
    for summary in summaries:
        kept |= content_words(summary)
    return content_words(statement) - kept


def named_subject(statement: str) -> str:
    """The person a statement is about when it opens with their name ("Joanna adopted …"); ``""`` otherwise.

    Example:
        >>> named_subject("Joanna adopted a dog named Max in May 2022."), named_subject("The user is vegan.")
        ('Joanna', '')
        >>> named_subject("Mary Ann's sister lives in Rome."), named_subject("Felix and I split up.")
        ('Mary Ann', '')
        >>> named_subject("Can Tom come?"), named_subject("What's a good brunch spot?")
        ('', '')
    """
    found = _LEAD_NAME.match(statement.strip())
    if found is None or "?" in statement:
        return ""
    if any(w in FIRST_PERSON for w in _WORD.findall(statement.lower().replace("’", "'"))):
        return ""  # "Felix and I …" is about the user
    name = found.group(1)
    return "" if name.split()[0].lower() in _NOT_NAMES | STOPWORDS else name


def as_user(statement: str, name: str) -> str:
    """The statement with ``name`` as "the user": the form in which the controller reads a fact about its subject.

    Example:
        >>> as_user("Joanna adopted Joanna's first dog.", "Joanna")
        "the user adopted the user's first dog."
    """
    return re.sub(rf"\b{re.escape(name)}\b", "the user", statement)


def _as_named(summary: str, name: str) -> str:
    """The controller's "the user" as ``name`` again."""
    return re.sub(r"\b[Tt]he user\b", name, summary)


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text[-1:] in ".!?" else f"{text}."


def _typed(record: MemoryRecord, statement: str) -> MemoryRecord:
    """The record as the caller's: personal, a usable aspect and intent, entities; a request stays a request."""
    if record.intent == "request" and not record.personal:
        return record  # "Can you find me a café?" asks for something: the gate refuses it as a task
    aspect = "activity" if record.aspect == "other" else record.aspect
    intent = "inform" if record.intent == "other" else record.intent
    entities = list(record.entities) or sorted(content_words(record.summary or statement))
    return replace(record, personal=True, aspect=aspect, intent=intent, entities=entities)


def explicit_records(
    statement: str, records: Sequence[MemoryRecord], *, named: Sequence[MemoryRecord] = (), subject: str = ""
) -> list[MemoryRecord]:
    """The records an explicit ``add_fact`` writes: personal, with the subject named and every content word kept.

    Args:
        statement: the caller's text.
        records: what the controller parsed of it.
        named: what the controller parsed of :func:`as_user` ``(statement, subject)`` when the
            statement is about a named person (used when ``records`` hold no summary).
        subject: that person's name (:func:`named_subject`), or ``""``.

    Returns:
        The records to write (``records`` themselves when they hold no fact and no person is named).

    Example:
        >>> from langchain_memoryos.schema import MemoryRecord
        >>> parsed_as_user = MemoryRecord(aspect="social_relationship", entities=["Max", "dog"],
        ...                               summary="The user adopted a dog named Max in May 2022.", slot="pet")
        >>> [(r.summary, r.subject, r.personal) for r in explicit_records(
        ...     "Joanna adopted a dog named Max in May 2022.", [MemoryRecord(personal=False)],
        ...     named=[parsed_as_user], subject="Joanna")]
        [('Joanna adopted a dog named Max in May 2022.', 'Joanna', True)]
    """
    statement = informal_apostrophes(statement)  # "i dont eat meat": the words as written
    request, kept = memory_request(" ".join(statement.split()))
    if request == "remember":
        statement = kept  # "Please remember that I'm vegan": the words to keep are the statement's
    given = [r for r in records if r.summary.strip()]
    if not given and subject:
        given = [replace(r, summary=_as_named(r.summary, subject), subject=subject) for r in named if r.summary.strip()]
        if not given and content_words(statement):
            given = [MemoryRecord(summary=_sentence(statement), subject=subject)]
    if not given:
        return list(records)  # no fact in the text ("haha thanks!"): the controller's records, gated as they are
    typed = [_typed(r, statement) for r in given]
    person = relative_named(" ".join(statement.split()))  # "My sister Ana lives in Rome": about Ana
    if person:
        typed = [_about(r, person) if not r.subject and person in r.summary else r for r in typed]
    said = _said(statement)
    if not lost_words(said, [r.summary for r in typed]):
        return typed
    whole = _sentence(said)
    first = typed[0]
    entities = list(dict.fromkeys(e for r in typed for e in r.entities))
    return [replace(first, summary=whole, entities=entities)]


def _about(record: MemoryRecord, person: str) -> MemoryRecord:
    """The record about ``person``, with that person's own slot ("Ana's location", not "the sister's")."""
    slot = slot_of(as_the_user(record.summary, person))
    return replace(record, subject=person, slot=slot[0] if slot else record.slot)


def _said(statement: str) -> str:
    """The statement in the third person, without interjections and fillers ("Big news: I moved" → "The user moved").

    What the caller said, as a fact reads: the words it must keep. A statement with no first-person
    word is taken as it is.
    """
    first_person = any(w in FIRST_PERSON for w in _WORD.findall(statement.lower().replace("’", "'")))
    return (third_person(statement) if first_person else "") or statement.strip()
