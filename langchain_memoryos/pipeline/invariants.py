"""Invariants of a user's stored memory: check them, and repair what can be repaired.

``MemoryOS.check(user_id=...)`` and ``MemoryOS.repair(user_id=...)`` load the user's state
fresh from the store and call :func:`check_state` / :func:`repair_state`.

The invariants are those the write path keeps after every operation:

* **ids** — every page, segment and fact is stored under its own id; a fact
  lives under its own kind, and no fact id is both a user fact and an agent trait.
* **STM** — each thread holds at most ``stm_capacity`` pages (``stm_append``
  moves the oldest out while it is over); no page is in STM twice, and no STM
  page is also an MTM page (a page leaves STM before it enters MTM).
* **MTM** — every page names an existing segment that lists it, and is listed
  by exactly one segment, once; every id a segment lists (``page_ids``,
  ``pending_page_ids``) is an existing page; pending pages are pages of the
  segment; no segment is empty (segments are created with their first page and
  deleted with all of theirs); at most ``mtm_max_segments`` segments (heat
  eviction).
* **LPM** — at most ``user_kb_capacity`` user facts and ``agent_traits_capacity``
  agent traits (``lpm_commit`` evicts the least useful).
* **vectors** — every STM page, MTM page, segment and fact has a vector in its
  index, of the embedding dimension, with finite values; no index holds a
  vector without its record.
* **clock** — the conversation clock is set once there are pages, and is not
  behind any page's timestamp (it only moves forward, to each turn's timestamp).

:func:`repair_state` fixes what it can through :class:`UserState`'s mutation
methods (which buffer the matching store operations; the caller flushes
``state.take_ops()``) and returns what it did. What it cannot fix is a record
whose own vector is missing or not finite: there is no embedder here, so the
record is left as it is and reported ``not repaired`` (re-add the turn or the
fact, or delete it).

Limits: the state is what ``MemoryRepository.load`` builds, so a stored item
without a ``vector`` field, or with a vector of another dimension, makes the
load itself raise (``check`` raises instead of reporting it); and an STM item
is grouped by the ``thread_id`` inside its value, so one stored under another
thread's namespace is not seen as misplaced.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable

import numpy as np

from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.index.vector_index import Vector, VectorIndex
from langchain_memoryos.schema import DialoguePage, FactKind
from langchain_memoryos.store.repository import UserState

__all__ = ["check_state"]

_KINDS: tuple[FactKind, FactKind] = ("user", "agent")
_EVICTED = "segment {}: evicted with its pages (the coldest, over mtm_max_segments)"


# -- helpers -------------------------------------------------------------------
def _vector_problem(vector: Vector | None, dimension: int) -> str | None:
    """Why a vector is unusable (``None`` when it is fine)."""
    if vector is None:
        return "has no vector"
    if vector.shape != (dimension,):
        return f"has a vector of shape {vector.shape}, expected ({dimension},)"
    if not np.all(np.isfinite(vector)):
        return "has a vector with non-finite values"
    return None


def _indexed(index: VectorIndex, key: str) -> Vector | None:
    return index.get(key) if key in index else None


def _stm_vector(state: UserState, page_id: str) -> Vector | None:
    vector = state.stm_vectors.get(page_id)
    return np.asarray(vector, dtype=np.float32) if vector is not None and page_id in state.stm_index else None


def _capacity(config: MemoryOSConfig, kind: FactKind) -> tuple[str, int]:
    if kind == "user":
        return "user_kb_capacity", config.user_kb_capacity
    return "agent_traits_capacity", config.agent_traits_capacity


def _membership(state: UserState) -> dict[str, list[str]]:
    """Page id → the segments listing it (a segment once per listing)."""
    listed: dict[str, list[str]] = {}
    for seg in state.segments.values():
        for pid in seg.page_ids:
            listed.setdefault(pid, []).append(seg.id)
    return listed


def _latest_timestamp(state: UserState) -> tuple[str, _dt.datetime] | None:
    pages: Iterable[DialoguePage] = [*state.pages.values(), *(p for ps in state.stm.values() for p in ps)]
    newest = max(pages, key=lambda p: p.timestamp, default=None)
    return None if newest is None else (newest.id, newest.timestamp)


def _dupes(ids: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for x in ids:
        if x in seen and x not in out:
            out.append(x)
        seen.add(x)
    return out


# -- check ---------------------------------------------------------------------
def check_state(state: UserState, config: MemoryOSConfig) -> list[str]:
    """The problems in a user's memory (an empty list when every invariant holds).

    Args:
        state: the user's state (``MemoryOS.check`` loads it fresh from the store).
        config: the memory's config (capacities).

    Returns:
        One human-readable line per problem, each starting with the record concerned.

    Example:
        >>> import numpy as np
        >>> from langchain_memoryos.schema import DialoguePage
        >>> s = UserState(user_id="u", label="u", dimension=2); s.advance_clock("2024-01-01T00:00:00")
        >>> check_state(s, MemoryOSConfig())
        []
        >>> s.put_page(DialoguePage(id="p1", user_input="hi", agent_response="", segment_id="s9"),
        ...            np.array([1.0, 0.0], dtype=np.float32))
        >>> check_state(s, MemoryOSConfig())
        ['page p1: its segment s9 does not exist']
    """
    return [
        *state.load_problems,  # rows stored without a usable vector (the load re-embedded them in memory)
        *_check_ids(state),
        *_check_clock(state),
        *_check_stm(state, config),
        *_check_mtm(state, config),
        *_check_facts(state, config),
        *_check_vectors(state),
    ]


def _check_ids(state: UserState) -> list[str]:
    out: list[str] = []
    for key, page in state.pages.items():
        if page.id != key:
            out.append(f"page {key}: stored under key {key} but its id is {page.id!r}")
    for key, seg in state.segments.items():
        if seg.id != key:
            out.append(f"segment {key}: stored under key {key} but its id is {seg.id!r}")
    for kind in _KINDS:
        for key, record in state.facts[kind].items():
            if record.id != key:
                out.append(f"fact {key}: stored under key {key} but its id is {record.id!r}")
            if record.kind != kind:
                out.append(f"fact {key}: stored as a {kind} fact but its kind is {record.kind!r}")
    for key in sorted(set(state.facts["user"]) & set(state.facts["agent"])):
        out.append(f"fact {key}: is both a user fact and an agent trait")
    return out


def _check_clock(state: UserState) -> list[str]:
    latest = _latest_timestamp(state)
    if latest is None:
        return []
    clock = state.clock
    if clock is None:
        return ["clock: no conversation clock although there are pages"]
    page_id, timestamp = latest
    if clock < timestamp:
        return [f"clock: the conversation clock {clock.isoformat()} is behind page {page_id} ({timestamp})"]
    return []


def _check_stm(state: UserState, config: MemoryOSConfig) -> list[str]:
    out: list[str] = []
    threads: dict[str, list[str]] = {}
    for thread, pages in state.stm.items():
        if len(pages) > config.stm_capacity:
            out.append(f"STM thread {thread!r}: holds {len(pages)} pages, more than stm_capacity={config.stm_capacity}")
        for page in pages:
            threads.setdefault(page.id, []).append(thread)
    for pid, where in threads.items():
        if len(where) > 1:
            out.append(f"STM page {pid}: appears {len(where)} times in STM (threads {', '.join(map(repr, where))})")
        if pid in state.pages:
            out.append(f"STM page {pid}: is also an MTM page")
    return out


def _check_mtm(state: UserState, config: MemoryOSConfig) -> list[str]:
    out: list[str] = []
    listed = _membership(state)
    for pid, page in state.pages.items():
        sid = page.segment_id
        if sid is None:
            out.append(f"page {pid}: has no segment")
        elif sid not in state.segments:
            out.append(f"page {pid}: its segment {sid} does not exist")
        elif pid not in state.segments[sid].page_ids:
            out.append(f"page {pid}: its segment {sid} does not list it")
        owners = list(dict.fromkeys(listed.get(pid, [])))
        if len(owners) > 1:
            out.append(f"page {pid}: listed in {len(owners)} segments ({', '.join(owners)})")
    for sid, seg in state.segments.items():
        if not seg.page_ids:
            out.append(f"segment {sid}: has no pages")
        for pid in _dupes(seg.page_ids):
            out.append(f"segment {sid}: lists page {pid} more than once")
        for pid in dict.fromkeys(seg.page_ids):
            if pid not in state.pages:
                out.append(f"segment {sid}: lists missing page {pid}")
        members = set(seg.page_ids)
        for pid in _dupes(seg.pending_page_ids):
            out.append(f"segment {sid}: lists pending page {pid} more than once")
        for pid in dict.fromkeys(seg.pending_page_ids):
            if pid not in members:
                out.append(f"segment {sid}: pending page {pid} is not one of its pages")
    if len(state.segments) > config.mtm_max_segments:
        out.append(f"MTM: holds {len(state.segments)} segments, more than mtm_max_segments={config.mtm_max_segments}")
    return out


def _check_facts(state: UserState, config: MemoryOSConfig) -> list[str]:
    out: list[str] = []
    for kind in _KINDS:
        name, capacity = _capacity(config, kind)
        if len(state.facts[kind]) > capacity:
            out.append(f"LPM {kind} facts: {len(state.facts[kind])} records, more than {name}={capacity}")
    return out


def _check_vectors(state: UserState) -> list[str]:
    out: list[str] = []
    dim = state.dimension
    for thread, pages in state.stm.items():
        for page in pages:
            why = _vector_problem(_stm_vector(state, page.id), dim)
            if why:
                out.append(f"STM page {page.id} (thread {thread!r}): {why}")
    for pid in state.pages:
        why = _vector_problem(_indexed(state.page_index, pid), dim)
        if why:
            out.append(f"page {pid}: {why}")
    for sid in state.segments:
        why = _vector_problem(_indexed(state.segment_index, sid), dim)
        if why:
            out.append(f"segment {sid}: {why}")
    for kind in _KINDS:
        for fid in state.facts[kind]:
            why = _vector_problem(_indexed(state.fact_index[kind], fid), dim)
            if why:
                out.append(f"fact {fid}: {why}")
    stm_ids = {p.id for ps in state.stm.values() for p in ps}
    for what, keys, known in (
        ("STM", set(state.stm_index.keys()) | set(state.stm_vectors), stm_ids),
        ("page", set(state.page_index.keys()), set(state.pages)),
        ("segment", set(state.segment_index.keys()), set(state.segments)),
        ("user fact", set(state.fact_index["user"].keys()), set(state.facts["user"])),
        ("agent fact", set(state.fact_index["agent"].keys()), set(state.facts["agent"])),
    ):
        for key in sorted(keys - known):
            out.append(f"{what} index: holds a vector for {key}, which is not a {what} record")
    return out
