"""MTM, the mid-term tier: pages, analysed when added (the dialogue chain), leave STM into topic segments.

Over ``mtm_max_segments`` the coldest segment is evicted (heat, paper Eq. 4).
"""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np

from langchain_memoryos.amu import RecordWrite, embed_summaries
from langchain_memoryos.index.vector_index import Vector
from langchain_memoryos.kernel.controller import PageAnalysis
from langchain_memoryos.kernel.effects import Step
from langchain_memoryos.kernel.judgements import AnalyzePage
from langchain_memoryos.retrieval.keywords import merge_keywords
from langchain_memoryos.schema import DialoguePage, MemoryRecord, Segment, WriteReport
from langchain_memoryos.scoring import best_segment, coldest_segment, segment_heat
from langchain_memoryos.store.repository import UserState
from langchain_memoryos.store.settings import EngineSettings, StageContext
from langchain_memoryos.tiers.turn import TurnWrite, after_mtm, turn_page

__all__ = ["join_segment", "centroid", "evict_coldest", "stage_chain_link", "stage_heat_evict", "stage_mtm_insert"]

logger = logging.getLogger("langchain_memoryos")


def _own(record: MemoryRecord) -> MemoryRecord:
    """A copy of a record sharing nothing mutable (its lists; the rest is immutable): a deep copy, made cheaply."""
    return replace(record, entities=list(record.entities), source_page_ids=list(record.source_page_ids))


def stage_chain_link(ctx: StageContext, t: TurnWrite) -> Step[None]:
    """``chain_link``: the controller's analysis of a page; its fact records go to AMU (``write_gate``) now.

    The page is the one just added, linked against the thread's previous page
    (``t.previous``, still in STM or the last that left it): its chain link
    and meta, keywords, topic and typed records, in the one judgement the page
    gets (with a model, its one call, made without the user's lock). Its
    records are dated by the turn (``valid_at``) and written with the turn,
    judged and fused by the offline controller: ``list_facts``, ``search`` and
    ``retrieve`` see them when ``add_turn`` returns. A page leaving STM that
    was stored before pages were analysed when added is analysed, and its
    facts written, here as it leaves (against the last page that left).
    """
    settings = ctx.settings
    state = t.user
    page = turn_page(t)
    if page.topic is None:  # the page just added
        vector, previous, reading = t.vector, t.previous, t.reading
    else:  # a page leaving STM, not analysed when it was added
        page, vector = t.moving[0]
        tail = state.pages.get(state.chain_tail(page.thread_id) or "")
        previous = (
            None if tail is None else (tail, state.page_index.get(tail.id) if tail.id in state.page_index else None)
        )
        reading = None
    assert vector is not None
    before, before_vector = previous if previous is not None else (None, None)
    similarity = float(np.dot(before_vector, vector)) if before_vector is not None else None
    analysis: PageAnalysis = yield AnalyzePage(page, before, similarity, reading=reading)
    page.linked = analysis.linked
    page.meta = analysis.chain_meta
    page.keywords = list(analysis.keywords)
    page.topic = analysis.topic_summary
    page.candidates = []
    for record in analysis.records:
        rec = _own(record)
        rec.source_page_ids = [page.id]
        rec.created_at = page.timestamp
        rec.valid_at = page.timestamp
        page.candidates.append(rec)
    if page.segment_id is None and page.id in state.stm_vectors:
        state.stm_update(page)  # the page in STM keeps its analysis (a page leaving is stored by mtm_insert)
    records = [_own(r) for r in page.candidates]  # the page keeps its candidates (what was read off it)
    now = state.clock or page.timestamp
    fallback = analysis.usage.fallback
    # one encoder batch for the page's records, unless it was embedded beside the page (the reading's rows)
    known = dict([reading.rows]) if reading is not None and reading.rows is not None else None
    vectors = yield from embed_summaries(state, settings.amu, records, known=known)
    t.records = [
        RecordWrite(r, now=now, source="page", offline=True, fallback=fallback, vector=vectors.get(r.summary))
        for r in records
    ] + t.records
    t.next = "write_gate" if t.records else after_mtm(t, settings)


def stage_mtm_insert(ctx: StageContext, t: TurnWrite) -> Step[None]:
    """``mtm_insert``: a page leaving STM joins the best segment (``F_score > theta``) or starts a new one.

    The page was analysed (and its facts written) when it was added; a new
    segment's first summary is its topic line. A promotion later updates the
    persona only.
    """
    settings = ctx.settings
    state = t.user
    page, vector = t.moving.pop(0)
    state.set_chain_tail(page.thread_id, page.id)
    t.report.moved_to_mtm.append(page.id)
    t.created = join_segment(state, settings, page, vector, page.topic or "", t.report)
    over = t.created and len(state.segments) > settings.config.mtm_max_segments
    t.next = "heat_evict" if over else after_mtm(t, settings)
    return
    yield  # pragma: no cover - a step like the others


def join_segment(
    state: UserState,
    settings: EngineSettings,
    page: DialoguePage,
    vector: Vector,
    topic_summary: str,
    report: WriteReport,
) -> str:
    """A page enters MTM: it joins the best segment (:func:`~langchain_memoryos.scoring.best_segment`) or starts one.

    Shared by the ``mtm_insert`` stage and ``repair()``.

    Returns:
        The id of the segment it created, or ``""`` when it joined one.

    Example:
        >>> from langchain_memoryos.config import MemoryOSConfig
        >>> from langchain_memoryos.store.repository import UserState
        >>> s = UserState(user_id="u", label="u", dimension=2)
        >>> settings = EngineSettings.build(MemoryOSConfig(), None)
        >>> page = DialoguePage(id="p_1", user_input="pottery", agent_response="", keywords=["pottery"])
        >>> join_segment(s, settings, page, np.array([1.0, 0.0], dtype=np.float32), "pottery", WriteReport(""))
        's_1'
    """
    config = settings.config
    scored = [(state.segments[i], cos) for i, cos in state.segment_index.search(vector, len(state.segment_index))]
    best = best_segment(scored, page.keywords, config.segment_threshold)
    clock = state.clock or page.timestamp
    if best is not None:
        page.segment_id = best.id
        state.put_page(page, vector)
        best.page_ids.append(page.id)
        best.pending_page_ids.append(page.id)
        best.l_interaction += 1
        pages = [state.pages[p] for p in best.page_ids if p in state.pages]
        best.keywords = merge_keywords([p.keywords for p in pages], config.segment_keywords)
        best.heat = segment_heat(best, clock, config)
        state.put_segment(best, centroid(state, best))
        if best.id not in report.segments_joined:
            report.segments_joined.append(best.id)
    else:
        seg = Segment(
            id="s_" + page.id[2:],
            summary=topic_summary,
            keywords=list(page.keywords)[: config.segment_keywords],
            page_ids=[page.id],
            n_visit=0,
            l_interaction=1,
            last_access=clock,
            created_at=page.timestamp,
            pending_page_ids=[page.id],
        )
        seg.heat = segment_heat(seg, clock, config)
        page.segment_id = seg.id
        state.put_page(page, vector)
        state.put_segment(seg, vector)
        report.segments_created.append(seg.id)
        return seg.id
    return ""


def stage_heat_evict(ctx: StageContext, t: TurnWrite) -> Step[None]:
    """``heat_evict``: over ``mtm_max_segments``, the coldest segment (never the new one) and its pages go."""
    evict_coldest(t.user, ctx.settings, t.report, keep=t.created)
    t.next = after_mtm(t, ctx.settings)
    return
    yield  # pragma: no cover - a step like the others


def evict_coldest(state: UserState, settings: EngineSettings, report: WriteReport, *, keep: str) -> None:
    """Heat-evict: while over ``mtm_max_segments``, drop the coldest segment and its pages.

    The segment just created for the incoming page is never the one evicted.

    Example:
        >>> from langchain_memoryos import MemoryOS, MemoryOSConfig
        >>> config = MemoryOSConfig(stm_capacity=1, mtm_max_segments=1, segment_threshold=2.0, promotion_heat=100.0)
        >>> m = MemoryOS(config=config)
        >>> reports = [m.add_turn(t, "ok", user_id="u") for t in ("Pottery class.", "Marathon training.", "Tax forms.")]
        >>> [len(r.segments_evicted) for r in reports], len(m.list_segments(user_id="u"))  # the third goes over
        ([0, 0, 1], 1)
    """
    config = settings.config
    clock = state.clock
    while len(state.segments) > config.mtm_max_segments:
        coldest = coldest_segment(state.segments.values(), clock, config, keep=keep)
        if coldest is None:
            return
        state.delete_segment(coldest.id)
        report.segments_evicted.append(coldest.id)


def centroid(state: UserState, segment: Segment) -> Vector:
    """The unit mean of a segment's page vectors (the segment's vector).

    Example:
        >>> from langchain_memoryos.store.repository import UserState
        >>> from langchain_memoryos.schema import DialoguePage
        >>> s = UserState(user_id="u", label="u", dimension=2)
        >>> for i, v in enumerate(([1.0, 0.0], [0.0, 1.0])):
        ...     s.put_page(DialoguePage(id=f"p{i}", user_input="x", agent_response=""), np.array(v, dtype=np.float32))
        >>> [round(x, 3) for x in centroid(s, Segment(id="s", page_ids=["p0", "p1"])).tolist()]
        [0.707, 0.707]
    """
    index = state.page_index
    vecs = index.get_many([p for p in segment.page_ids if p in index])  # one lookup, not one per page
    mean: Vector = np.mean(vecs, axis=0).astype(np.float32)
    norm = float(np.linalg.norm(mean))
    return mean / np.float32(norm) if norm > 0 else mean
