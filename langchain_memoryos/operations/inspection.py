"""Inspection: what a user's memory holds (STM, threads, segments, pages, facts, persona, log, stats).

Each reads the user's state under the user's lock and returns copies, so a
caller never holds the memory's own objects.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, SearchOp

from langchain_memoryos.amu.corrections import FactNotFoundError
from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.kernel.effects import Step, StoreBatch, run_async, run_sync
from langchain_memoryos.operations.runtime import Locked, Runtime
from langchain_memoryos.operations.validation import FactKindArg, check_fact_id, check_kind, check_thread, check_user
from langchain_memoryos.schema import (
    DialoguePage,
    FactHistory,
    MemoryRecord,
    MemoryStats,
    Persona,
    Segment,
    WriteEvent,
)
from langchain_memoryos.schema.layout import AGENT_LABEL, is_hash_label
from langchain_memoryos.scoring import segment_heat
from langchain_memoryos.store.repository import MemoryRepository, UserState, decode_label

__all__ = [
    "ListUsers",
    "get_fact",
    "get_persona",
    "get_stm",
    "list_facts",
    "list_pages",
    "list_segments",
    "list_threads",
    "list_users",
    "stats",
    "write_log",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")


def _inspect(runtime: Runtime, user: str, view: Callable[[UserState], T]) -> Locked[T]:
    """Operation: ``view(state)`` of the (checked) user's state, under the user's lock."""
    repository = runtime.repository

    def step() -> Step[T]:
        state = yield from repository.load(user)
        return view(state)

    return Locked(user, step())


def get_stm(runtime: Runtime, user_id: Any, thread_id: Any) -> Locked[list[DialoguePage]]:
    """Operation: ``MemoryOS.get_stm`` (the thread's short-term pages, oldest first).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_turn("hi", "hello", user_id="u", thread_id="a")
        >>> [p.user_input for p in memory._sync(get_stm(memory._runtime, "u", "a"))]
        ['hi']
    """
    user = check_user(user_id)
    thread = check_thread(thread_id)
    repository = runtime.repository

    def step() -> Step[list[DialoguePage]]:
        state = yield from repository.load(user)
        pages = yield from repository.load_thread(state, thread)
        return copy.deepcopy(pages)

    return Locked(user, step())


def list_threads(runtime: Runtime, user_id: Any) -> Locked[list[str]]:
    """Operation: ``MemoryOS.list_threads`` (threads with short-term pages, sorted).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_turn("hi", "hello", user_id="u", thread_id="b")
        >>> memory._sync(list_threads(memory._runtime, "u"))
        ['b']
    """
    return _inspect(runtime, check_user(user_id), _threads_of)


def list_segments(runtime: Runtime, user_id: Any) -> Locked[list[Segment]]:
    """Operation: ``MemoryOS.list_segments`` (heat at the conversation clock, hottest first).

    Example:
        >>> from langchain_memoryos import MemoryOS, MemoryOSConfig
        >>> memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1))
        >>> for text in ("I play chess.", "I play chess on Sundays."):
        ...     _ = memory.add_turn(text, "Nice!", user_id="u")
        >>> [len(s.page_ids) for s in memory._sync(list_segments(memory._runtime, "u"))]
        [1]
    """
    config = runtime.config
    return _inspect(runtime, check_user(user_id), lambda state: _segments_of(state, config))


def list_pages(runtime: Runtime, user_id: Any, segment_id: str | None) -> Locked[list[DialoguePage]]:
    """Operation: ``MemoryOS.list_pages`` (mid-term pages of one segment, or all, oldest first).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> memory._sync(list_pages(memory._runtime, "u", None))
        []
    """

    def pages(state: UserState) -> list[DialoguePage]:
        kept = [p for p in state.pages.values() if segment_id is None or p.segment_id == segment_id]
        return copy.deepcopy(sorted(kept, key=lambda p: (p.timestamp, p.id)))

    return _inspect(runtime, check_user(user_id), pages)


def list_facts(
    runtime: Runtime, user_id: Any, kind: Any, limit: Any = None, offset: Any = 0
) -> Locked[list[MemoryRecord]]:
    """Operation: ``MemoryOS.list_facts`` (user facts or agent traits, oldest first).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_fact("Answer briefly.", user_id="u", kind="agent")
        >>> [f.kind for f in memory._sync(list_facts(memory._runtime, "u", "agent"))]
        ['agent']
        >>> _ = memory.add_fact("Use metric units.", user_id="u", kind="agent")
        >>> [f.summary for f in memory._sync(list_facts(memory._runtime, "u", "agent", 1, 1))]
        ['The assistant should use metric units.']
        >>> list_facts(memory._runtime, "u", "users")
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: kind must be 'user' or 'agent', got 'users'.
    """
    user = check_user(user_id)  # the user first, then the kind
    fact_kind = check_kind(kind)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidInputError(f"limit must be a positive int (or None for every fact), got {limit!r}.")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidInputError(f"offset must be an int >= 0, got {offset!r}.")
    end = None if limit is None else offset + limit
    return _inspect(runtime, user, lambda state: _facts_of(state, fact_kind)[offset:end])


def get_persona(runtime: Runtime, user_id: Any) -> Locked[Persona]:
    """Operation: ``MemoryOS.get_persona`` (the configured agent profile when the user has none).

    Example:
        >>> from langchain_memoryos import MemoryOS, MemoryOSConfig
        >>> memory = MemoryOS(config=MemoryOSConfig(agent_profile="A helpful coach."))
        >>> memory._sync(get_persona(memory._runtime, "u")).agent_profile
        'A helpful coach.'
    """
    config = runtime.config
    return _inspect(runtime, check_user(user_id), lambda state: _persona_of(state, config))


def stats(runtime: Runtime, user_id: Any) -> Locked[MemoryStats]:
    """Operation: ``MemoryOS.stats`` (counts over all of the user's threads).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_turn("hi", "hello", user_id="u")
        >>> memory._sync(stats(memory._runtime, "u")).stm_pages
        1
    """
    return _inspect(runtime, check_user(user_id), lambda state: state.stats())


def write_log(runtime: Runtime, user_id: Any, limit: int | None) -> Locked[list[WriteEvent]]:
    """Operation: ``MemoryOS.write_log`` (the AMU write events, oldest first; the last ``limit`` if given).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> for text in ("I'm vegan.", "I live in Oslo."):
        ...     _ = memory.add_fact(text, user_id="u")
        >>> [e.record.summary for e in memory._sync(write_log(memory._runtime, "u", 1))]
        ['The user lives in Oslo.']
    """
    user = check_user(user_id)
    repository = runtime.repository

    def step() -> Step[list[WriteEvent]]:
        yield from repository.finish_deletion(user)
        events = yield from _log(repository, user)
        return events[-limit:] if limit else events

    return Locked(user, step())


def get_fact(runtime: Runtime, fact_id: Any, user_id: Any) -> Locked[FactHistory]:
    """Operation: ``MemoryOS.get_fact`` (the fact and the write events of its lineage, oldest first).

    Raises:
        ValueError: a bad fact id (checked now).
        FactNotFoundError: the user has no such fact (when run).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); fid = memory.add_fact("I live in Oslo.", user_id="u")[0].record.id
        >>> found = memory._sync(get_fact(memory._runtime, fid, "u"))
        >>> found.fact.summary, [e.action for e in found.history]
        ('The user lives in Oslo.', ['stored'])
    """
    user = check_user(user_id)
    fact_id = check_fact_id(fact_id)
    repository = runtime.repository

    def step() -> Step[FactHistory]:
        state = yield from repository.load(user)
        record = state.facts["user"].get(fact_id) or state.facts["agent"].get(fact_id)
        if record is None:
            raise FactNotFoundError(fact_id, user)
        events = yield from _log(repository, user)
        return FactHistory(copy.deepcopy(record), _lineage(events, fact_id))

    return Locked(user, step())


def _log(repository: MemoryRepository, user: str) -> Step[list[WriteEvent]]:
    """Step: the user's write events, oldest first."""
    items = yield from repository.search_all(repository.namespace(user, "log"))
    return [WriteEvent.from_dict(it.value) for it in sorted(items, key=lambda it: it.key)]


def _lineage(events: list[WriteEvent], fact_id: str) -> list[WriteEvent]:
    """The events of a fact and of the facts it replaced (fused or edited into it), oldest first."""
    ids, kept = {fact_id}, []
    for event in reversed(events):
        if event.record.id in ids and event.action != "discarded":
            kept.append(event)
            ids.update(event.replaced_ids)
    return kept[::-1]


@dataclass(frozen=True)
class ListUsers:
    """Operation: ``MemoryOS.list_users`` (the users with stored memory in the memory's scope, sorted).

    Waits for every queued background write first, so a user just written is listed.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_turn("hi", "hello", user_id="b.c")
        >>> memory._sync(ListUsers())
        ['b.c']
    """

    def run(self, runtime: Runtime) -> list[str]:
        """Run with blocking IO."""
        if runtime.writer is not None:
            runtime.writer.wait(None)
        return run_sync(_users(runtime.repository), runtime.services)

    async def arun(self, runtime: Runtime) -> list[str]:
        """Run with async IO."""
        if runtime.writer is not None:
            await asyncio.to_thread(runtime.writer.wait, None)
        return await run_async(_users(runtime.repository), runtime.services)


def list_users(runtime: Runtime) -> ListUsers:
    """Operation: ``MemoryOS.list_users``.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> memory._sync(list_users(memory._runtime))
        []
    """
    return ListUsers()


def _users(repository: MemoryRepository) -> Step[list[str]]:
    """Step: the decoded user labels one level below the scope's root (never an agent scope's marker)."""
    root = repository.root
    limit = 10_000
    while True:  # one listing, its limit doubled when full (never paged by offset)
        op = ListNamespacesOp(match_conditions=(MatchCondition("prefix", root),), max_depth=len(root) + 1, limit=limit)
        res = yield StoreBatch((op,))
        namespaces: list[tuple[str, ...]] = list(res[0])
        if len(namespaces) < limit:
            break
        limit *= 2
    labels = sorted({ns[len(root)] for ns in namespaces if len(ns) > len(root) and ns[len(root)] != AGENT_LABEL})
    # a store may keep a namespace whose rows are all deleted (InMemoryStore does): a user is listed with a row
    if not labels:
        return []
    found = yield StoreBatch(tuple(SearchOp((*root, label), limit=1) for label in labels))
    users = [label for label, rows in zip(labels, found, strict=True) if rows]
    hashed = [label for label in users if is_hash_label(label)]  # a long id: its "id" row holds it
    ids = (yield StoreBatch(tuple(GetOp((*root, label, "id"), "id") for label in hashed))) if hashed else []
    named = {label: it.value.get("id") if it is not None else None for label, it in zip(hashed, ids, strict=True)}
    for label, value in named.items():
        if not isinstance(value, str):
            logger.warning("list_users: the user under the hash label %s has no readable 'id' row: not listed", label)
    return sorted(
        decode_label(label) if label not in named else decode_label(str(named[label]))
        for label in users
        if label not in named or isinstance(named[label], str)
    )


def _threads_of(state: UserState) -> list[str]:
    return sorted(thread for thread, pages in state.stm.items() if pages)


def _facts_of(state: UserState, kind: FactKindArg) -> list[MemoryRecord]:
    return copy.deepcopy(sorted(state.facts[kind].values(), key=lambda r: (r.created_at, r.id)))


def _segments_of(state: UserState, config: MemoryOSConfig) -> list[Segment]:
    clock = state.clock
    out = copy.deepcopy(list(state.segments.values()))
    for seg in out:
        seg.heat = segment_heat(seg, clock, config)
    out.sort(key=lambda s: (-s.heat, s.created_at, s.id))
    return out


def _persona_of(state: UserState, config: MemoryOSConfig) -> Persona:
    persona = copy.deepcopy(state.persona)
    if not persona.agent_profile:
        persona.agent_profile = config.agent_profile
    return persona
