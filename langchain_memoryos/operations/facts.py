"""Facts and corrections: ``add_fact``, ``update_fact``, ``delete_fact``, ``set_agent_profile``.

``add_fact`` sends parsed records through the AMU write path (gate, judge,
fuse), judging without the user's lock when the controller may call a model
(the unit of work commits the result). A correction is the user's word: it
skips the gate and the judge and runs under the user's lock.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from langchain_memoryos.amu.corrections import edit_fact
from langchain_memoryos.amu.explicit import as_user, dated, explicit_records, named_subject
from langchain_memoryos.errors import InvalidInputError, InvalidTypeError
from langchain_memoryos.kernel.controller import ParsedRecords
from langchain_memoryos.kernel.effects import Step
from langchain_memoryos.kernel.judgements import ParseRecords
from langchain_memoryos.operations.runtime import Locked, Runtime, Unlocked
from langchain_memoryos.operations.validation import (
    check_fact_id,
    check_kind,
    check_text,
    check_user,
    clean_metadata,
)
from langchain_memoryos.pipeline.write import write_record
from langchain_memoryos.schema import MemoryRecord, WriteEvent, ensure_utc
from langchain_memoryos.store.repository import UserState, flush
from langchain_memoryos.store.unit_of_work import write_user

__all__ = ["add_fact", "correct_fact", "set_agent_profile"]


def add_fact(
    runtime: Runtime, text: Any, user_id: Any, kind: Any, timestamp: Any, source: str, metadata: Any = None
) -> Unlocked[list[WriteEvent]]:
    """Operation: ``MemoryOS.add_fact`` (the arguments checked now).

    Raises:
        InvalidInputError: on an empty text, a bad ``kind``, a bad ``timestamp`` or metadata that is not JSON.
        InvalidTypeError: metadata that is not a mapping.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> [e.action for e in memory._sync(add_fact(memory._runtime, "I live in Oslo.", "u", "user", None, "test"))]
        ['stored']
        >>> add_fact(memory._runtime, " ", "u", "user", None, "test")
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: add_fact needs a non-empty fact text.
        >>> add_fact(memory._runtime, "I'm vegan.", "u", "user", None, "test", metadata="crm")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidTypeError: add_fact's metadata must be a mapping of JSON values ..., got str.
    """
    user = check_user(user_id)
    fact_kind = check_kind(kind)
    body = check_text("text", text)
    if not body.strip():
        raise InvalidInputError("add_fact needs a non-empty fact text.")
    when = runtime.timestamp(timestamp) if timestamp is not None else None
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InvalidTypeError(
            "add_fact's metadata must be a mapping of JSON values (e.g. {'source': 'crm'}), "
            f"got {type(metadata).__name__}."
        )
    meta = clean_metadata(metadata) if metadata else {}

    def work(state: UserState) -> Step[list[WriteEvent]]:
        # a user fact's relative time as dates, against the time it was stated ("yesterday" → "on 7 May 2023")
        text = dated(body, when or state.clock or ensure_utc(None)) if fact_kind == "user" else body
        parsed: ParsedRecords = yield ParseRecords(text, fact_kind)
        now = when or state.clock or ensure_utc(None)
        if when is not None:
            state.advance_clock(when)
        records = parsed.records
        if fact_kind == "user":  # the caller's decision: personal, the subject named, every content word kept
            subject = named_subject(text)
            named: list[MemoryRecord] = []
            if subject and not any(r.summary.strip() for r in records):
                named = (yield ParseRecords(as_user(text, subject), fact_kind)).records
            records = explicit_records(text, records, named=named, subject=subject)
        records = records or [MemoryRecord(kind=fact_kind, summary="", personal=False)]
        events: list[WriteEvent] = []
        for record in records:
            record.kind = fact_kind
            record.metadata = copy.deepcopy(meta)
            events += yield from write_record(
                runtime.repository,
                runtime.settings,
                state,
                record,
                now=now,
                source=source,
                fallback=parsed.usage.fallback,
            )
        return events

    return Unlocked(user, write_user(runtime.repository, user, work, optimistic=runtime.optimistic))


def correct_fact(runtime: Runtime, user_id: Any, fact_id: Any, summary: str) -> Unlocked[WriteEvent]:
    """Operation: ``MemoryOS.update_fact`` (a new ``summary``; ``delete_fact`` is ``forget``).

    Raises:
        langchain_memoryos.errors.InvalidInputError: a bad fact id or an empty summary (checked now).
        FactNotFoundError: when the user has no such fact (when run).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); fid = memory.add_fact("I'm vegan.", user_id="u")[0].record.id
        >>> memory._sync(correct_fact(memory._runtime, "u", fid, "The user is vegetarian.")).action
        'edited'
        >>> correct_fact(memory._runtime, "u", fid, "")
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: update_fact needs a non-empty summary; use delete_fact (or \
forget(fact_id=...)) to forget a fact.
    """
    user = check_user(user_id)
    fact_id = check_fact_id(fact_id)
    text = check_text("summary", summary).strip()
    if text == "":
        raise InvalidInputError(
            "update_fact needs a non-empty summary; use delete_fact (or forget(fact_id=...)) to forget a fact."
        )
    repository = runtime.repository

    def work(state: UserState) -> Step[WriteEvent]:
        return (yield from edit_fact(state, fact_id, text, now=state.clock or ensure_utc(None)))

    # an edit asks the controller (a model call with an LLM): never under the user's lock
    return Unlocked(user, write_user(repository, user, work, optimistic=runtime.optimistic))


def set_agent_profile(runtime: Runtime, user_id: Any, profile: Any) -> Locked[None]:
    """Operation: ``MemoryOS.set_agent_profile``.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); memory._sync(set_agent_profile(memory._runtime, "u", "A chess coach."))
        >>> memory.get_persona(user_id="u").agent_profile
        'A chess coach.'
    """
    user = check_user(user_id)
    text = check_text("agent_profile", profile)
    repository = runtime.repository

    def step() -> Step[None]:
        state = yield from repository.load(user)
        state.persona.agent_profile = text
        state.save_persona()
        yield from flush(state)

    return Locked(user, step())
