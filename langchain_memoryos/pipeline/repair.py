"""``repair()``: bring a user's state back to the invariants of :mod:`~langchain_memoryos.pipeline.invariants`.

Every repair goes through the memory's own rules (the stages' functions:
``join_segment``, ``evict_coldest``, ``evict_over_capacity``), never a second copy of them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

import numpy as np

from langchain_memoryos.amu import evict_over_capacity
from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.index.vector_index import Vector
from langchain_memoryos.pipeline.invariants import (
    _EVICTED,
    _capacity,
    _indexed,
    _latest_timestamp,
    _membership,
    _stm_vector,
    _vector_problem,
    check_state,
)
from langchain_memoryos.retrieval.keywords import extract_keywords, merge_keywords
from langchain_memoryos.schema import DialoguePage, FactKind, Segment, WriteEvent, WriteReport, ensure_utc
from langchain_memoryos.scoring import segment_heat
from langchain_memoryos.store.repository import UserState
from langchain_memoryos.store.settings import EngineSettings
from langchain_memoryos.tiers.mtm import evict_coldest, join_segment

__all__ = ["repair_state"]

_KINDS: tuple[FactKind, FactKind] = ("user", "agent")


# -- repair --------------------------------------------------------------------
def repair_state(state: UserState, config: MemoryOSConfig) -> list[str]:
    """Fix what :func:`check_state` reports that can be fixed; returns what was done.

    Every change goes through :class:`UserState`'s mutation methods, so the
    caller persists it by flushing ``state.take_ops()``. In order:

    * a record stored under another id (or a fact under another kind) takes
      its key's id and kind; a fact id that is both a user fact and an agent
      trait keeps its most recently updated record;
    * a missing or lagging conversation clock moves to the newest page;
    * an STM page that is also an MTM page, or in STM twice, loses its
      (later) STM copy;
    * segment lists drop missing pages, repeats, and pending pages that are
      not their own; a page listed by several segments stays in the one its
      ``segment_id`` names, else the earliest created; a page no segment
      lists goes back to the segment it names if that exists; the pages
      naming a lost segment get it recreated (their centroid and merged
      keywords), a page naming none gets a new one-page segment — in both
      cases nothing is pending promotion (the pages may have been promoted
      already); a segment left empty is deleted; a segment whose pages
      changed gets their centroid as its vector;
    * a segment whose vector is missing or not finite gets its pages' centroid;
    * STM over ``stm_capacity``: the oldest pages move to MTM as the engine
      moves them (segment join or creation, then heat eviction), but without
      the controller: YAKE keywords, no chain link, no fact candidates;
    * over ``mtm_max_segments``: the coldest segments are evicted with their
      pages (the engine's heat eviction);
    * over a fact capacity: the least useful records are evicted (lowest
      confidence first, then the oldest, as ``lpm_commit`` evicts) and logged
      ``evicted``;
    * a vector held for no record is dropped from its index (a cache-only
      problem: the store has no such item);
    * a record stored without a usable vector was given a new one when the
      user was loaded (embedded again from its text; a segment gets its
      pages' centroid): the rewrite is already buffered and is stored now.

    Args:
        state: the user's state.
        config: the memory's config.

    Returns:
        One line per change (and per problem left unrepaired).

    Example:
        >>> import numpy as np
        >>> from langchain_memoryos.schema import DialoguePage
        >>> s = UserState(user_id="u", label="u", dimension=2); s.advance_clock("2024-01-01T00:00:00")
        >>> s.put_page(DialoguePage(id="p_1", user_input="hi", agent_response="", segment_id="s9"),
        ...            np.array([1.0, 0.0], dtype=np.float32))
        >>> repair_state(s, MemoryOSConfig())
        ['segment s9: recreated for its 1 orphan page(s) p_1']
        >>> check_state(s, MemoryOSConfig()), repair_state(s, MemoryOSConfig())
        ([], [])
    """
    done: list[str] = [
        p.replace("(re-embedded in memory; not yet stored)", "re-embedded and stored") for p in state.load_problems
    ]
    state.load_problems.clear()  # their rewrites are in the buffer the caller flushes
    settings = EngineSettings.build(config, None)
    done += _repair_ids(state)
    done += _repair_clock(state)
    done += _repair_stm_duplicates(state)
    done += _repair_membership(state, config)
    done += _repair_segment_vectors(state)
    done += _repair_stm_capacity(state, settings)
    done += _repair_segment_count(state, settings)
    done += _repair_fact_capacity(state, config)
    done += _repair_stale_vectors(state)
    done += [f"not repaired: {p}" for p in check_state(state, config)]
    return done


def _repair_ids(state: UserState) -> list[str]:
    done: list[str] = []
    for key, page in list(state.pages.items()):
        vector = _indexed(state.page_index, key)
        if page.id != key and vector is not None:
            done.append(f"page {key}: id {page.id!r} set to its key")
            page.id = key
            state.put_page(page, vector)
    for key, seg in list(state.segments.items()):
        if seg.id != key and key in state.segment_index:
            done.append(f"segment {key}: id {seg.id!r} set to its key")
            seg.id = key
            state.put_segment(seg)
    for kind in _KINDS:
        for key, record in list(state.facts[kind].items()):
            vector = _indexed(state.fact_index[kind], key)
            if (record.id != key or record.kind != kind) and vector is not None:
                done.append(f"fact {key}: id and kind set to its key and namespace ({kind})")
                record.id, record.kind = key, kind
                state.put_fact(record, vector)
    for key in sorted(set(state.facts["user"]) & set(state.facts["agent"])):
        user, agent = state.facts["user"][key], state.facts["agent"][key]
        older: FactKind = (
            "user" if (user.updated_at, user.created_at) < (agent.updated_at, agent.created_at) else "agent"
        )
        state.delete_fact(older, key)
        done.append(f"fact {key}: deleted its older {older} copy (it was both a user fact and an agent trait)")
    return done


def _repair_clock(state: UserState) -> list[str]:
    latest = _latest_timestamp(state)
    if latest is None:
        return []
    page_id, timestamp = latest
    clock = state.clock
    if clock is not None and clock >= timestamp:
        return []
    state.advance_clock(timestamp)
    return [f"clock: moved to {timestamp.isoformat()} (page {page_id})"]


def _repair_stm_duplicates(state: UserState) -> list[str]:
    """Drop STM copies of MTM pages and later STM copies of a page (threads rebuilt in order)."""
    seen: set[str] = set()
    drop: dict[str, list[int]] = {}
    holders: dict[str, set[str]] = {}
    for thread in sorted(state.stm):
        for i, page in enumerate(state.stm[thread]):
            holders.setdefault(page.id, set()).add(thread)
            if page.id in state.pages or page.id in seen:
                drop.setdefault(thread, []).append(i)
            seen.add(page.id)
    if not drop:
        return []
    # clearing a thread drops its pages' vectors, which a copy in another thread shares
    affected = {t for thread, idx in drop.items() for i in idx for t in holders[state.stm[thread][i].id]} | set(drop)
    found = {p.id: _stm_vector(state, p.id) for t in affected for p in state.stm[t]}
    vectors = {pid: v for pid, v in found.items() if v is not None}
    if len(vectors) < len(found):
        return []  # a page without a vector could not be put back: left as is, reported as not repaired
    done: list[str] = []
    kept: dict[str, list[DialoguePage]] = {}
    for thread in sorted(affected):
        dropped = set(drop.get(thread, []))
        kept[thread] = [p for i, p in enumerate(state.stm[thread]) if i not in dropped]
        for i in sorted(dropped):
            page = state.stm[thread][i]
            why = "it is also an MTM page" if page.id in state.pages else "it is already in STM"
            done.append(f"STM page {page.id} (thread {thread!r}): dropped this copy ({why})")
        state.stm_clear(thread)
    for thread in sorted(affected):
        for page in kept[thread]:
            page.metadata.pop("_seq", None)  # a new sequence number keeps the thread's order
            state.stm_append(page, vectors[page.id])
    for pid in vectors:
        mtm_vector = _indexed(state.page_index, pid)
        if pid in state.pages and mtm_vector is not None:
            state.put_page(state.pages[pid], mtm_vector)  # clearing STM also dropped its words from the lexicon
    return done


def _centroid(state: UserState, page_ids: Iterable[str]) -> Vector | None:
    vecs = [v for v in (_indexed(state.page_index, p) for p in page_ids) if v is not None and np.all(np.isfinite(v))]
    if not vecs:
        return None
    mean: Vector = np.mean(np.stack(vecs), axis=0).astype(np.float32)
    norm = float(np.linalg.norm(mean))
    return mean / np.float32(norm) if norm > 0 else mean


def _put_segment(state: UserState, seg: Segment, page_ids_changed: bool) -> None:
    """Rewrite a (cached, already changed) segment, with its pages' centroid when they changed."""
    vector = _centroid(state, seg.page_ids) if page_ids_changed else None
    if vector is None:
        vector = _indexed(state.segment_index, seg.id)
    if vector is not None:  # else it has no vector to write: reported as not repaired
        state.put_segment(seg, vector)


def _new_segment_id(page: DialoguePage, *, taken: Collection[str]) -> str:
    """The engine's id for a page's new segment (``p_x`` → ``s_x``), made unique."""
    base = "s_" + (page.id[2:] if page.id.startswith("p_") else page.id)
    sid, n = base, 1
    while sid in taken:
        n += 1
        sid = f"{base}~{n}"
    return sid


def _repair_membership(state: UserState, config: MemoryOSConfig) -> list[str]:
    done: list[str] = []
    order = sorted(state.segments.values(), key=lambda s: (s.created_at, s.id))
    owner = _owners(state, order, done)
    orphans = [p for pid, p in state.pages.items() if pid not in owner]
    joining: dict[str, list[str]] = {}
    for page in orphans:
        if page.segment_id is not None and page.segment_id in state.segments:
            owner[page.id] = page.segment_id
            joining.setdefault(page.segment_id, []).append(page.id)
            done.append(f"page {page.id}: added back to its segment {page.segment_id}")
    for seg in order:
        _mend_segment(state, seg, owner, joining.get(seg.id, []), done)
    # the rest: a segment per lost segment id (recreated with the pages naming it), else one per page
    homeless = [p for p in orphans if p.id not in owner and p.id in state.page_index]  # else: no vector to write
    _rehome(state, config, homeless, owner, done)
    for pid, sid in owner.items():
        page = state.pages[pid]
        vector = _indexed(state.page_index, pid)
        if page.segment_id != sid and vector is not None:
            done.append(f"page {pid}: segment_id {page.segment_id} set to {sid}")
            page.segment_id = sid
            state.put_page(page, vector)
    return done


def _owners(state: UserState, order: list[Segment], done: list[str]) -> dict[str, str]:
    """The one segment each listed page stays in: the one it names, else the oldest listing it."""
    listed = _membership(state)
    owner: dict[str, str] = {}
    for pid, sids in listed.items():
        page = state.pages.get(pid)
        if page is None:
            continue
        owner[pid] = str(page.segment_id) if page.segment_id in sids else next(s.id for s in order if s.id in sids)
        others = sorted(set(sids) - {owner[pid]})
        if others:
            done.append(f"page {pid}: kept in segment {owner[pid]} only (removed from {', '.join(others)})")
    return owner


def _mend_segment(state: UserState, seg: Segment, owner: dict[str, str], joining: list[str], done: list[str]) -> None:
    """The segment's page lists made its owned pages (and those ``joining`` it), once each; deleted when empty."""
    page_ids = [p for p in dict.fromkeys(seg.page_ids) if owner.get(p) == seg.id] + joining
    members = set(page_ids)
    pending = [p for p in dict.fromkeys(seg.pending_page_ids) if p in members]
    for pid in dict.fromkeys(seg.page_ids):
        if pid not in state.pages:
            done.append(f"segment {seg.id}: dropped missing page {pid}")
        elif seg.page_ids.count(pid) > 1 and owner.get(pid) == seg.id:
            done.append(f"segment {seg.id}: dropped the repeats of page {pid}")
    for pid in dict.fromkeys(seg.pending_page_ids):
        if pid not in members and owner.get(pid) is None or pid not in members and pid not in seg.page_ids:
            done.append(f"segment {seg.id}: dropped pending page {pid} (not one of its pages)")
        elif pid in members and seg.pending_page_ids.count(pid) > 1:
            done.append(f"segment {seg.id}: dropped the repeats of pending page {pid}")
    if page_ids and page_ids == seg.page_ids and pending == seg.pending_page_ids:
        return
    if not page_ids:
        seg.page_ids, seg.pending_page_ids = [], []  # delete_segment deletes the pages it lists
        state.delete_segment(seg.id)
        done.append(f"segment {seg.id}: deleted (no pages left)")
        return
    changed = page_ids != seg.page_ids
    seg.page_ids, seg.pending_page_ids = page_ids, pending
    _put_segment(state, seg, changed)


def _rehome(
    state: UserState, config: MemoryOSConfig, homeless: list[DialoguePage], owner: dict[str, str], done: list[str]
) -> None:
    """Pages no segment holds: a segment per lost segment id (recreated with the pages naming it), else one each."""
    groups: dict[str, list[DialoguePage]] = {}
    for page in homeless:
        if page.segment_id:
            groups.setdefault(page.segment_id, []).append(page)
    for page in homeless:
        if not page.segment_id:
            groups[_new_segment_id(page, taken=state.segments.keys() | groups.keys())] = [page]
    for sid, pages in groups.items():
        pages.sort(key=lambda p: (p.timestamp, p.id))
        recreated = pages[0].segment_id == sid
        ids = [p.id for p in pages]
        vector = _centroid(state, ids)
        if vector is None:
            continue  # no finite page vector: reported as not repaired
        keywords = merge_keywords([p.keywords for p in pages], config.segment_keywords)
        seg = Segment(
            id=sid,
            summary=", ".join(keywords[:4]),
            keywords=keywords,
            page_ids=ids,
            last_access=state.clock or pages[-1].timestamp,
            created_at=pages[0].timestamp,
        )
        seg.heat = segment_heat(seg, state.clock, config)
        state.put_segment(seg, vector)
        for page in pages:
            page.segment_id = owner[page.id] = sid
            state.put_page(page, state.page_index.get(page.id))
        if recreated:
            done.append(f"segment {sid}: recreated for its {len(ids)} orphan page(s) {', '.join(ids)}")
        else:
            done.append(f"page {ids[0]}: put into a new segment {sid}")


def _repair_segment_vectors(state: UserState) -> list[str]:
    done: list[str] = []
    for seg in list(state.segments.values()):
        if _vector_problem(_indexed(state.segment_index, seg.id), state.dimension) is None:
            continue
        vector = _centroid(state, seg.page_ids)
        if vector is not None:
            state.put_segment(seg, vector)
            done.append(f"segment {seg.id}: vector rebuilt from its pages")
    return done


def _repair_stm_capacity(state: UserState, settings: EngineSettings) -> list[str]:
    config = settings.config
    done: list[str] = []
    for thread in sorted(state.stm):
        while len(state.stm[thread]) > config.stm_capacity:
            oldest = state.stm[thread][0]
            if _stm_vector(state, oldest.id) is None:
                break  # reported as not repaired (no vector)
            page, vector = state.stm_pop_oldest(thread)
            page.segment_id = None
            if page.topic is None:  # not analysed when added (its facts were never written: none are invented here)
                keywords = extract_keywords(f"{page.user_input}\n{page.agent_response}", config.page_keywords)
                page.linked, page.keywords, page.candidates = False, keywords, []
                page.topic = ", ".join(keywords[:4])
            state.set_chain_tail(thread, page.id)
            report = WriteReport(page_id=page.id)
            created = join_segment(state, settings, page, vector, page.topic, report)
            where = f"new segment {created}" if created else f"segment {page.segment_id}"
            done.append(f"STM page {page.id} (thread {thread!r}): moved to MTM ({where}), STM over capacity")
            if created and len(state.segments) > config.mtm_max_segments:
                evict_coldest(state, settings, report, keep=created)
                for sid in report.segments_evicted:
                    done.append(_EVICTED.format(sid))
    return done


def _repair_segment_count(state: UserState, settings: EngineSettings) -> list[str]:
    report = WriteReport(page_id="")
    evict_coldest(state, settings, report, keep="")
    return [
        f"segment {sid}: evicted with its pages (coldest, over mtm_max_segments)" for sid in report.segments_evicted
    ]


def _repair_fact_capacity(state: UserState, config: MemoryOSConfig) -> list[str]:
    done: list[str] = []
    now = state.clock or ensure_utc(None)
    for kind in _KINDS:
        name, capacity = _capacity(config, kind)
        for old in evict_over_capacity(state, kind, capacity, keep=""):
            reason = f"{name} {capacity} exceeded: least useful (lowest confidence, then oldest) evicted by repair"
            state.log_event(WriteEvent("evicted", old, [], [old.id], reason, now, source="repair"))
            done.append(f"fact {old.id}: evicted ({reason})")
    return done


def _repair_stale_vectors(state: UserState) -> list[str]:
    """Drop index entries without a record (only a live cache can have them; the store cannot)."""
    done: list[str] = []
    stale_pages = sorted(set(state.page_index.keys()) - set(state.pages))
    if stale_pages:
        state.delete_pages(stale_pages)
    stale_segments = sorted(set(state.segment_index.keys()) - set(state.segments))
    state.segment_index.remove(stale_segments)
    stm_ids = {p.id for ps in state.stm.values() for p in ps}
    stale_stm = sorted((set(state.stm_index.keys()) | set(state.stm_vectors)) - stm_ids)
    state.stm_index.remove(stale_stm)
    for key in stale_stm:
        state.stm_vectors.pop(key, None)
    stale_facts: list[tuple[FactKind, str]] = []
    for kind in _KINDS:
        stale_facts += [(kind, k) for k in sorted(set(state.fact_index[kind].keys()) - set(state.facts[kind]))]
    for kind, key in stale_facts:
        state.delete_fact(kind, key)
    for what, keys in (("page", stale_pages), ("segment", stale_segments), ("STM", stale_stm)):
        done += [f"{what} index: dropped the vector of {key} (no such record)" for key in keys]
    done += [f"{kind} fact index: dropped the vector of {key} (no such record)" for kind, key in stale_facts]
    return done
