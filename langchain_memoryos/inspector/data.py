"""What the inspector's pages show, read from a memory in one pass per page (no starlette here; Ask: ``ask.py``).

Each function reads what one page needs under the user's lock, as the
memory's own inspection methods do, but copies only the rows of the page
shown (a 20,000-page user is never copied whole). Nothing here writes:
retrieval runs with ``touch=False`` and, in a read-only memory
(:func:`read_only_twin`), loading a user writes nothing either.
"""

from __future__ import annotations

import copy
import datetime as _dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, get_args

from langgraph.store.base import BaseStore

from langchain_memoryos.kernel.effects import Step
from langchain_memoryos.memory import MemoryOS
from langchain_memoryos.operations.inspection import _lineage, _log, _persona_of
from langchain_memoryos.operations.runtime import Locked
from langchain_memoryos.operations.validation import check_user
from langchain_memoryos.schema import DialoguePage, MemoryRecord, Persona, Segment, WriteEvent
from langchain_memoryos.schema.context import fact_ref
from langchain_memoryos.schema.records import WriteAction
from langchain_memoryos.scoring import recency, segment_heat
from langchain_memoryos.store.state import UserState

__all__ = [
    "FactView",
    "Paged",
    "SegmentView",
    "UserCounts",
    "UserView",
    "fact_view",
    "log_view",
    "read_only_twin",
    "segment_pages",
    "thread_pages",
    "user_counts",
    "user_view",
]

T = TypeVar("T")

#: The write actions the log can be filtered by (those of :class:`~langchain_memoryos.schema.WriteEvent`).
ACTIONS: tuple[str, ...] = get_args(WriteAction)


@dataclass
class Paged(Generic[T]):
    """One page of a longer list.

    Attributes:
        items: the rows of this page.
        number: the page's number (1-based).
        size: rows per page.
        total: rows in the whole list.

    Example:
        >>> page = Paged.of(list(range(45)), 3, 20)
        >>> page.items, page.pages, page.has_next, page.has_prev
        ([40, 41, 42, 43, 44], 3, False, True)
    """

    items: list[T]
    number: int
    size: int
    total: int

    @classmethod
    def of(cls, rows: Sequence[T], number: int, size: int) -> Paged[T]:
        """Page ``number`` of ``rows`` (a number past the end gives the last page).

        Example:
            >>> Paged.of("abcde", 9, 2).items
            ['e']
        """
        pages = max(1, math.ceil(len(rows) / size))
        number = min(max(1, number), pages)
        start = (number - 1) * size
        return cls(list(rows[start : start + size]), number, size, len(rows))

    @property
    def pages(self) -> int:
        """How many pages the list has (at least one)."""
        return max(1, math.ceil(self.total / self.size))

    @property
    def has_prev(self) -> bool:
        """There is a page before this one."""
        return self.number > 1

    @property
    def has_next(self) -> bool:
        """There is a page after this one."""
        return self.number < self.pages


def read_only_twin(memory: MemoryOS) -> MemoryOS:
    """A memory over the same store and scope whose reads write nothing (its repository is read-only).

    Its loads leave an interrupted deletion as it is and buffer no healing
    rewrite (:attr:`~langchain_memoryos.store.repository.MemoryRepository.read_only`);
    the inspector only reads through it and retrieves with ``touch=False``.

    Example:
        >>> memory = MemoryOS(); _ = memory.add_turn("I live in Oslo.", "Nice.", user_id="u")
        >>> twin = read_only_twin(memory)
        >>> twin.repository.read_only, memory.repository.read_only, len(twin.get_stm(user_id="u"))
        (True, False, 1)
    """
    twin = MemoryOS(
        memory.store,
        embeddings=memory.embeddings,
        controller=memory.controller,
        config=memory.config,
        process_locks=memory.repository._process_locks,
        namespace_prefix=memory.namespace_prefix,
        agent_id=memory.agent_id,
    )
    twin.repository.read_only = True
    return twin


def scoped(memory: MemoryOS, agent_id: str | None) -> MemoryOS:
    """The memory of ``agent_id`` on the same store (``None`` or ``""``: ``memory`` itself), as read-only as it.

    Example:
        >>> memory = MemoryOS(); memory.repository.read_only = True
        >>> coach = scoped(memory, "coach")
        >>> coach.agent_id, coach.repository.read_only, scoped(memory, "") is memory
        ('coach', True, True)
    """
    if not agent_id or agent_id == memory.agent_id:
        return memory
    view = memory.for_agent(agent_id)
    view.repository.read_only = memory.repository.read_only
    return view


def _read(memory: MemoryOS, user: str, step: Step[T]) -> T:
    return memory._sync(Locked(check_user(user), step))


# -- the users ------------------------------------------------------------------------------------


@dataclass
class UserCounts:
    """A user's row in the users table: what is stored, counted in the store (the user is not loaded).

    Example:
        >>> UserCounts("ana", stm=2, pages=10, segments=3, facts=4).total
        19
    """

    user_id: str
    stm: int = 0
    pages: int = 0
    segments: int = 0
    facts: int = 0
    last_write: _dt.datetime | None = None

    @property
    def total(self) -> int:
        """Every counted row."""
        return self.stm + self.pages + self.segments + self.facts


def _sql_counts(
    store: BaseStore, prefixes: dict[str, tuple[str, ...]], stamp: tuple[str, ...]
) -> dict[str, Any] | None:
    """``{part: rows}`` for namespace prefixes, and ``"last"``: the newest write, by SQL (else ``None``).

    The counts read the prefix index only; the newest write is the ``updated_at``
    of the version stamp row ``stamp`` (rewritten by every flush of a shared
    store), or the newest row of the user (``prefixes["all"]``) without one.
    """
    kind = type(store).__name__
    if kind not in ("SqliteStore", "PostgresStore"):
        return None
    # the namespace and those below it: on SQLite a range of the primary key's prefix column (byte order, "." < "/");
    # PostgreSQL compares text by its collation, so there the prefix is compared as a string
    if kind == "SqliteStore":
        where = "prefix = ? OR (prefix > ? AND prefix < ?)"
    else:
        where = "prefix = %s OR left(prefix, %s) = %s"

    def below(ns: tuple[str, ...]) -> tuple[Any, ...]:
        text = ".".join(ns)
        return (text, text + ".", text + "/") if kind == "SqliteStore" else (text, len(text) + 1, text + ".")

    mark = "?" if kind == "SqliteStore" else "%s"
    queries = [(part, f"SELECT COUNT(*) FROM store WHERE {where}", below(ns)) for part, ns in prefixes.items()]
    queries.append(("stamp", f"SELECT updated_at FROM store WHERE prefix = {mark} AND key = 'v'", (".".join(stamp),)))
    queries.append(("newest", f"SELECT MAX(updated_at) FROM store WHERE {where}", below(prefixes["all"])))
    out: dict[str, Any] = {}

    def first(row: Any) -> Any:
        if row is None:
            return None
        return next(iter(row.values())) if isinstance(row, dict) else row[0]

    if kind == "SqliteStore":
        with store.lock:  # type: ignore[attr-defined]
            for part, sql, params in queries:
                if part == "newest" and out.get("stamp") is not None:
                    break
                out[part] = first(store.conn.execute(sql, params).fetchone())  # type: ignore[attr-defined]
    else:
        with store._cursor() as cur:  # type: ignore[attr-defined]
            for part, sql, params in queries:
                if part == "newest" and out.get("stamp") is not None:
                    break
                cur.execute(sql, params)
                out[part] = first(cur.fetchone())
    out["last"] = out.get("stamp") if out.get("stamp") is not None else out.get("newest")
    return out


def _as_time(value: Any) -> _dt.datetime | None:
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=_dt.UTC)
    try:
        parsed = _dt.datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=_dt.UTC)


def user_counts(memory: MemoryOS, user_id: str) -> UserCounts:
    """What one user has stored, counted in the store without loading the user.

    On SQLite and PostgreSQL one ``COUNT(*)`` per tier; on other stores a search
    of each namespace.

    Example:
        >>> memory = MemoryOS(); _ = memory.add_turn("I live in Oslo.", "Nice.", user_id="u")
        >>> counts = user_counts(memory, "u")
        >>> counts.stm, counts.pages, counts.facts, counts.last_write is not None
        (1, 0, 1, True)
    """
    repo = memory.repository
    parts = {"stm": ("stm",), "pages": ("pages",), "segments": ("segments",), "facts": ("facts",), "all": ()}
    prefixes = {part: repo.namespace(user_id, *tail) for part, tail in parts.items()}
    found = _sql_counts(memory.store, prefixes, repo.namespace(user_id, "version"))
    if found is None:
        found = {}
        newest = None
        for part, ns in prefixes.items():
            items = memory.store.search(ns, limit=10_000_000)
            found[part] = len(items)
            if part == "all":
                newest = max((it.updated_at for it in items), default=None)
        found["last"] = newest
    return UserCounts(
        user_id,
        stm=int(found["stm"]),
        pages=int(found["pages"]),
        segments=int(found["segments"]),
        facts=int(found["facts"]),
        last_write=_as_time(found["last"]),
    )


# -- a user ----------------------------------------------------------------------------------------


@dataclass
class SegmentView:
    """A segment as the user page shows it: its heat and the parts of the heat, against ``tau``.

    Example:
        >>> view = SegmentView(Segment(id="s"), heat=2.5, tau=5.0, visits_part=1.0, interaction_part=0.5,
        ...                    recency_part=1.0)
        >>> view.bar_percent, view.promoted
        (50.0, False)
    """

    segment: Segment
    heat: float
    tau: float
    visits_part: float
    interaction_part: float
    recency_part: float

    @property
    def bar_percent(self) -> float:
        """The heat as a share of ``tau`` (the bar's length), in percent, at most 100."""
        return 100.0 if self.tau <= 0 else round(min(1.0, self.heat / self.tau) * 100, 1)

    @property
    def promoted(self) -> bool:
        """The heat reaches ``tau`` (the segment is promoted to the persona at its next page)."""
        return self.heat >= self.tau


@dataclass
class FactView:
    """A fact with its time, the turns it came from and its history (the write events of its lineage).

    Example:
        >>> view = FactView(MemoryRecord(id="f_000000000003", summary="Ana lives in Oslo."), [], [])
        >>> view.ref
        'f:3'
    """

    fact: MemoryRecord
    sources: list[DialoguePage]
    history: list[WriteEvent]
    missing_sources: list[str] = field(default_factory=list)

    @property
    def ref(self) -> str:
        """The id as prompts and tools show it (``f:3``)."""
        return fact_ref(self.fact.id)


@dataclass
class UserView:
    """Everything the user page shows, one page of each list.

    Attributes:
        threads: one page of ``(thread id, its newest STM pages first, its page count)``.
        segments: one page of the segments, hottest first.
        facts: one page of the user facts (oldest first) and agent traits after them.
        log: the newest write events (the log page has them all, filterable).
    """

    user_id: str
    counts: dict[str, int]
    persona: Persona
    threads: Paged[tuple[str, list[DialoguePage], int]]
    segments: Paged[SegmentView]
    facts: Paged[FactView]
    log: list[WriteEvent]
    log_total: int
    tau: float
    clock: _dt.datetime | None
    deletion_interrupted: bool = False
    agent_id: str | None = None


def _segment_view(state: UserState, segment: Segment, memory: MemoryOS) -> SegmentView:
    config = memory.config
    clock = state.clock
    delta = 0.0 if clock is None else (clock - segment.last_access).total_seconds()
    seg = copy.deepcopy(segment)
    seg.heat = segment_heat(seg, clock, config)
    return SegmentView(
        seg,
        heat=seg.heat,
        tau=config.promotion_heat,
        visits_part=config.heat_alpha * seg.n_visit,
        interaction_part=config.heat_beta * seg.l_interaction,
        recency_part=config.heat_gamma * recency(delta, config.recency_tau_seconds),
    )


def _find_page(state: UserState, page_id: str) -> DialoguePage | None:
    page = state.pages.get(page_id)
    if page is not None:
        return page
    for pages in state.stm.values():
        for p in pages:
            if p.id == page_id:
                return p
    return None


def _fact_views(state: UserState, records: Sequence[MemoryRecord], events: list[WriteEvent]) -> list[FactView]:
    views = []
    for record in records:
        sources = [p for p in (_find_page(state, pid) for pid in record.source_page_ids) if p is not None]
        missing = [pid for pid in record.source_page_ids if _find_page(state, pid) is None]
        views.append(FactView(copy.deepcopy(record), copy.deepcopy(sources), _lineage(events, record.id), missing))
    return views


def _all_facts(state: UserState) -> list[MemoryRecord]:
    return [
        r for kind in ("user", "agent") for r in sorted(state.facts[kind].values(), key=lambda r: (r.created_at, r.id))
    ]


def user_view(
    memory: MemoryOS,
    user_id: str,
    *,
    thread_page: int = 1,
    segment_page: int = 1,
    fact_page: int = 1,
    size: int = 20,
    stm_shown: int = 10,
    log_shown: int = 10,
) -> UserView:
    """What the user page shows: STM per thread (newest first), segments with heat, the LPM, the newest log.

    Args:
        memory: the memory (read-only for the inspector).
        user_id: whose memory.
        thread_page: which page of the threads.
        segment_page: which page of the segments.
        fact_page: which page of the facts.
        size: rows per page.
        stm_shown: the newest STM pages shown per thread (its own page has them all).
        log_shown: the newest write events shown.

    Example:
        >>> memory = MemoryOS(); _ = memory.add_turn("I live in Oslo.", "Nice.", user_id="u", thread_id="t")
        >>> view = user_view(memory, "u")
        >>> [(t, [p.user_input for p in pages]) for t, pages, _ in view.threads.items]
        [('t', ['I live in Oslo.'])]
        >>> [f.fact.summary for f in view.facts.items], [e.action for f in view.facts.items for e in f.history]
        (['The user lives in Oslo.'], ['stored'])
    """
    repository = memory.repository

    def step() -> Step[UserView]:
        state = yield from repository.load(user_id)
        events = yield from _log(repository, user_id) if not state.deletion_interrupted else _nothing()
        threads = sorted(((t, pages) for t, pages in state.stm.items() if pages), key=lambda tp: tp[0])
        thread_rows = Paged.of(threads, thread_page, size)
        shown = [(t, copy.deepcopy(pages[::-1][:stm_shown]), len(pages)) for t, pages in thread_rows.items]
        segs = [_segment_view(state, s, memory) for s in state.segments.values()]
        segs.sort(key=lambda v: (-v.heat, v.segment.created_at, v.segment.id))
        facts = Paged.of(_all_facts(state), fact_page, size)
        stats = state.stats()
        return UserView(
            user_id=user_id,
            counts={
                "stm": stats.stm_pages,
                "segments": stats.segments,
                "pages": stats.mtm_pages,
                "facts": stats.user_facts,
                "agent": stats.agent_facts,
            },
            persona=_persona_of(state, memory.config),
            threads=Paged(shown, thread_rows.number, size, thread_rows.total),
            segments=Paged.of(segs, segment_page, size),
            facts=Paged(_fact_views(state, facts.items, events), facts.number, size, facts.total),
            log=copy.deepcopy(events[::-1][:log_shown]),
            log_total=len(events),
            tau=memory.config.promotion_heat,
            clock=state.clock,
            deletion_interrupted=state.deletion_interrupted,
            agent_id=memory.agent_id,
        )

    return _read(memory, user_id, step())


def _nothing() -> Step[list[WriteEvent]]:
    return []
    yield  # pragma: no cover - a step


def thread_pages(
    memory: MemoryOS, user_id: str, thread_id: str, *, page: int = 1, size: int = 50
) -> Paged[DialoguePage]:
    """One page of a thread's STM pages, newest first.

    Example:
        >>> memory = MemoryOS()
        >>> for text in ("one", "two"):
        ...     _ = memory.add_turn(text, "ok", user_id="u", thread_id="t")
        >>> [p.user_input for p in thread_pages(memory, "u", "t").items]
        ['two', 'one']
    """
    repository = memory.repository

    def step() -> Step[Paged[DialoguePage]]:
        state = yield from repository.load(user_id)
        rows = Paged.of(state.stm.get(thread_id, [])[::-1], page, size)
        rows.items = copy.deepcopy(rows.items)
        return rows

    return _read(memory, user_id, step())


def segment_pages(
    memory: MemoryOS, user_id: str, segment_id: str, *, page: int = 1, size: int = 50
) -> tuple[SegmentView, Paged[DialoguePage]] | None:
    """A segment (with its heat) and one page of its mid-term pages, oldest first; ``None``: no such segment.

    Example:
        >>> from langchain_memoryos import MemoryOSConfig
        >>> memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1))
        >>> for text in ("I play chess.", "I play chess on Sundays."):
        ...     _ = memory.add_turn(text, "Nice!", user_id="u")
        >>> seg_id = memory.list_segments(user_id="u")[0].id
        >>> view, pages = segment_pages(memory, "u", seg_id)
        >>> [p.user_input for p in pages.items], segment_pages(memory, "u", "nope")
        (['I play chess.'], None)
    """
    repository = memory.repository

    def step() -> Step[tuple[SegmentView, Paged[DialoguePage]] | None]:
        state = yield from repository.load(user_id)
        segment = state.segments.get(segment_id)
        if segment is None:
            return None
        members = [state.pages[p] for p in segment.page_ids if p in state.pages]
        members.sort(key=lambda p: (p.timestamp, p.id))
        rows = Paged.of(members, page, size)
        rows.items = copy.deepcopy(rows.items)
        return _segment_view(state, segment, memory), rows

    return _read(memory, user_id, step())


def fact_view(memory: MemoryOS, user_id: str, fact_id: str) -> FactView | None:
    """A fact (user fact or agent trait) with its sources and history; ``None``: no such fact.

    Example:
        >>> memory = MemoryOS(); fid = memory.add_fact("I live in Oslo.", user_id="u")[0].record.id
        >>> _ = memory.update_fact(fid, "The user lives in Bergen.", user_id="u")
        >>> [e.action for e in fact_view(memory, "u", fid).history], fact_view(memory, "u", "f_9")
        (['stored', 'edited'], None)
    """
    repository = memory.repository

    def step() -> Step[FactView | None]:
        state = yield from repository.load(user_id)
        record = state.facts["user"].get(fact_id) or state.facts["agent"].get(fact_id)
        if record is None:
            return None
        events = yield from _log(repository, user_id)
        return _fact_views(state, [record], events)[0]

    return _read(memory, user_id, step())


def log_view(memory: MemoryOS, user_id: str, *, action: str = "", page: int = 1, size: int = 50) -> Paged[WriteEvent]:
    """One page of the user's write log, newest first, of one action (``""``: every action).

    Example:
        >>> memory = MemoryOS()
        >>> for text in ("I'm vegan.", "I'm vegan."):
        ...     _ = memory.add_fact(text, user_id="u")
        >>> [e.action for e in log_view(memory, "u").items], log_view(memory, "u", action="stored").total
        (['discarded', 'stored'], 1)
    """
    repository = memory.repository

    def step() -> Step[Paged[WriteEvent]]:
        state = yield from repository.load(user_id)
        if state.deletion_interrupted:
            return Paged([], 1, size, 0)
        events = yield from _log(repository, user_id)
        kept = [e for e in events[::-1] if not action or e.action == action]
        return Paged.of(kept, page, size)

    return _read(memory, user_id, step())
