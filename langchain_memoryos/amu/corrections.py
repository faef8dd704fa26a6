"""Inspect, correct, forget: the user's own edits to long-term memory.

The AMU paper's ethics note asks that people can see, edit and delete what an
agent keeps about them. An edit or a deletion is the user's word, so it skips
the write-gate and the relation-judge; it is logged as a write event like any
other decision (``edited``). Forgetting is :mod:`~langchain_memoryos.amu.forgetting`.
"""

from __future__ import annotations

import datetime as _dt

from langchain_memoryos.errors import FactNotFoundError
from langchain_memoryos.kernel.controller import ParsedRecords
from langchain_memoryos.kernel.effects import Embed, Step
from langchain_memoryos.kernel.judgements import ParseRecords
from langchain_memoryos.schema import FactKind, MemoryRecord, WriteEvent
from langchain_memoryos.store.repository import UserState

__all__ = ["FactNotFoundError", "edit_fact", "find_fact"]


def find_fact(state: UserState, fact_id: str) -> tuple[FactKind, MemoryRecord]:
    """The kind and record of ``fact_id`` (user facts first, then agent traits).

    Raises:
        FactNotFoundError: when neither holds it.

    Example:
        >>> find_fact(UserState(user_id="u", label="u", dimension=2), "f_1")
        Traceback (most recent call last):
        ...
        langchain_memoryos.errors.FactNotFoundError: no fact 'f_1' for user 'u'; ...
    """
    kinds: tuple[FactKind, ...] = ("user", "agent")
    for kind in kinds:
        if fact_id in state.facts[kind]:
            return kind, state.facts[kind][fact_id]
    raise FactNotFoundError(fact_id, state.user_id)


def edit_fact(state: UserState, fact_id: str, summary: str, *, now: _dt.datetime) -> Step[WriteEvent]:
    """Step: replace a fact's summary, re-embed it and refresh its entities.

    The summary is kept word for word (the user's correction wins); the
    controller only re-reads its entities so that later relation judgements
    see the corrected values. Provenance and creation time are kept.

    Args:
        state: the user's state.
        fact_id: the fact or trait to edit.
        summary: its new text.
        now: the edit time.

    Returns:
        The ``edited`` event (its reason quotes the old summary).

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> from langchain_memoryos.embeddings import resolve_embeddings
        >>> from langchain_memoryos.kernel.effects import Services, run_sync
        >>> emb = resolve_embeddings()
        >>> s = UserState(user_id="u", label="u", dimension=emb.dimension)
        >>> old = MemoryRecord(id="f1", summary="The user lives in Oslo.", entities=["Oslo"])
        >>> s.put_fact(old, emb.encode([old.summary])[0])
        >>> now = _dt.datetime(2024, 5, 1, tzinfo=_dt.UTC)
        >>> services = Services(None, emb, HeuristicController())  # type: ignore[arg-type]
        >>> event = run_sync(edit_fact(s, "f1", "The user lives in Bergen.", now=now), services)
        >>> event.action, event.reason
        ('edited', 'edited by the user; was: The user lives in Oslo.')
        >>> fact = s.facts["user"]["f1"]
        >>> fact.summary, fact.entities, fact.updated_at == now
        ('The user lives in Bergen.', ['Bergen'], True)
    """
    kind, old = find_fact(state, fact_id)
    parsed: ParsedRecords = yield ParseRecords(summary, kind)
    record = MemoryRecord.from_dict(old.to_dict())
    record.summary = summary
    entities = [e for r in parsed.records for e in r.entities]
    if entities:
        record.entities = list(dict.fromkeys(entities))
    record.updated_at = now
    vector = (yield Embed((summary,)))[0]
    state.put_fact(record, vector)
    event = WriteEvent(
        "edited",
        record,
        replaced_ids=[],
        reason=f"edited by the user; was: {old.summary}",
        timestamp=now,
        source="update_fact",
        gate_score=1.0,
    )
    state.log_event(event)
    return event
