"""The MemoryOS write path.

STM append → STM→MTM (chain, keywords, segment) → heat-evict → persona-promote
(→ AMU write path).

Each function is a step (see :mod:`langchain_memoryos.effects`): it yields store
batches, embeddings and controller judgements, so sync and async share it.
"""

from __future__ import annotations

import copy
import datetime as _dt
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from langchain_memoryos.amu import AMUSettings, prejudge_relations, write_record
from langchain_memoryos.config import MemoryOSConfig, ModelThresholds
from langchain_memoryos.controllers.base import PageAnalysis, PromotionResult, count_usage
from langchain_memoryos.effects import Control, Embed, Step, StoreBatch
from langchain_memoryos.keywords import merge_keywords
from langchain_memoryos.schema import DialoguePage, MemoryRecord, Segment, WriteReport, ensure_utc
from langchain_memoryos.scoring import f_score, gate, heat, recency
from langchain_memoryos.storage import MemoryRepository, UserState, page_key
from langchain_memoryos.vector_index import Vector

__all__ = ["EngineSettings", "add_turn", "segment_heat"]

logger = logging.getLogger("langchain_memoryos")


@dataclass(frozen=True)
class EngineSettings:
    """Config plus the thresholds resolved for the embedding model in use.

    Example:
        >>> s = EngineSettings.build(MemoryOSConfig(), "all-MiniLM-L6-v2")
        >>> s.amu.write_similarity
        0.6
    """

    config: MemoryOSConfig
    thresholds: ModelThresholds
    amu: AMUSettings

    @classmethod
    def build(cls, config: MemoryOSConfig, model_name: str | None) -> EngineSettings:
        """Resolve thresholds for ``model_name`` and build the settings.

        Example:
            >>> EngineSettings.build(MemoryOSConfig(), None).thresholds.retrieval_similarity
            0.55
        """
        thresholds = config.thresholds(model_name)
        return cls(config, thresholds, AMUSettings.from_config(config, thresholds))


def segment_heat(segment: Segment, now: _dt.datetime | None, config: MemoryOSConfig) -> float:
    """Heat of a segment at conversation time ``now`` (paper Eq. 4).

    Args:
        segment: the segment.
        now: the user's conversation clock (``None``: the segment's last access).
        config: weights and time constant.

    Returns:
        ``alpha*N_visit + beta*L_interaction + gamma*exp(-dt/mu)``.

    Example:
        >>> from langchain_memoryos.schema import Segment
        >>> segment_heat(Segment(id="s", n_visit=1, l_interaction=2), None, MemoryOSConfig())
        4.0
    """
    delta = 0.0 if now is None else (now - segment.last_access).total_seconds()
    return heat(
        segment.n_visit,
        segment.l_interaction,
        recency(delta, config.recency_tau_seconds),
        alpha=config.heat_alpha,
        beta=config.heat_beta,
        gamma=config.heat_gamma,
    )


def embedding_text(text: str, limit: int) -> str:
    """The text to embed: whole, or truncated to ``limit`` characters with a warning.

    Example:
        >>> embedding_text("abcdef", 3)
        'abc'
    """
    if len(text) <= limit:
        return text
    logger.warning("text of %d characters truncated to %d for embedding (stored whole)", len(text), limit)
    return text[:limit]


def add_turn(
    repo: MemoryRepository,
    settings: EngineSettings,
    *,
    user_id: str,
    thread_id: str,
    user_input: str,
    agent_response: str,
    timestamp: Any,
    metadata: Mapping[str, Any] | None,
    turn_id: str | None,
) -> Step[WriteReport]:
    """Step: store one exchange and run everything it triggers.

    The page goes to the thread's STM; while STM is over capacity its oldest
    page moves to MTM (chain link, keywords, segment join or creation, heat
    eviction); the STM of the user's idle threads moves too
    (``stm_idle_seconds``); then every hot segment is promoted. All writes are flushed in
    one store batch. Re-adding the same turn (same ``turn_id``, or same thread,
    timestamp and text) changes nothing.

    Example:
        >>> add_turn  # doctest: +ELLIPSIS
        <function add_turn at ...>
    """
    config = settings.config
    ts = ensure_utc(timestamp)
    state = yield from repo.load(user_id)
    stm = yield from repo.load_thread(state, thread_id)
    pid = page_key(thread_id, turn_id, ts.isoformat(), user_input, agent_response)
    report = WriteReport(page_id=pid)
    if pid in state.pages or any(p.id == pid for p in stm):
        report.added = False
        return report
    page = DialoguePage(
        id=pid,
        user_input=user_input,
        agent_response=agent_response,
        timestamp=ts,
        thread_id=thread_id,
        metadata=dict(metadata or {}),
    )
    if turn_id is not None:
        page.metadata.setdefault("turn_id", turn_id)
    vector = (yield Embed((embedding_text(page.embedding_text, config.max_embedding_chars),)))[0]
    state.stm_append(page, vector)
    state.advance_clock(ts)
    while len(state.stm[thread_id]) > config.stm_capacity:
        old, old_vector = state.stm_pop_oldest(thread_id)
        yield from move_to_mtm(state, settings, old, old_vector, report)
    yield from flush_idle_threads(state, settings, report, current=thread_id)
    yield from promote_hot_segments(state, settings, report)
    yield StoreBatch(state.take_ops())
    return report


def flush_idle_threads(state: UserState, settings: EngineSettings, report: WriteReport, *, current: str) -> Step[None]:
    """Step: move the STM of the user's idle threads to MTM (oldest page first).

    A thread is idle when its newest page is older than ``stm_idle_seconds`` on
    the conversation clock. The current thread is never flushed.

    Example:
        >>> flush_idle_threads  # doctest: +ELLIPSIS
        <function flush_idle_threads at ...>
    """
    idle = settings.config.stm_idle_seconds
    clock = state.clock
    if idle is None or clock is None:
        return
    for thread, pages in list(state.stm.items()):
        if thread == current or not pages:
            continue
        newest = max(p.timestamp for p in pages)
        if (clock - newest).total_seconds() <= idle:
            continue
        while state.stm[thread]:
            page, vector = state.stm_pop_oldest(thread)
            yield from move_to_mtm(state, settings, page, vector, report)


def move_to_mtm(
    state: UserState,
    settings: EngineSettings,
    page: DialoguePage,
    vector: Vector,
    report: WriteReport,
) -> Step[None]:
    """Step: a page leaving STM joins the best segment or starts a new one.

    Example:
        >>> move_to_mtm  # doctest: +ELLIPSIS
        <function move_to_mtm at ...>
    """
    config = settings.config
    tails: dict[str, str] = state.meta.setdefault("chain_tails", {})
    previous = state.pages.get(tails.get(page.thread_id, ""))
    similarity = None
    if previous is not None and previous.id in state.page_index:
        similarity = float(np.dot(state.page_index.get(previous.id), vector))
    analysis: PageAnalysis = yield Control("analyze_page", (page, previous, similarity))
    count_usage(state, "analyze_page", analysis.usage)
    page.linked = analysis.linked
    page.meta = analysis.chain_meta
    page.keywords = list(analysis.keywords)
    page.candidates = []
    for record in analysis.records:
        rec = copy.deepcopy(record)
        rec.source_page_ids = [page.id]
        rec.created_at = page.timestamp
        page.candidates.append(rec)
    tails[page.thread_id] = page.id
    state.save_meta()
    report.moved_to_mtm.append(page.id)

    best: Segment | None = None
    best_score = -np.inf
    for seg_id, cos in state.segment_index.search(vector, len(state.segment_index)):
        seg = state.segments[seg_id]
        score = f_score(cos, seg.keywords, page.keywords)
        if score > best_score:
            best, best_score = seg, score
    clock = state.clock or page.timestamp
    if best is not None and best_score > config.segment_threshold:
        page.segment_id = best.id
        state.put_page(page, vector)
        best.page_ids.append(page.id)
        best.pending_page_ids.append(page.id)
        best.l_interaction += 1
        pages = [state.pages[p] for p in best.page_ids if p in state.pages]
        best.keywords = merge_keywords([p.keywords for p in pages], config.segment_keywords)
        best.heat = segment_heat(best, clock, config)
        state.put_segment(best, _centroid(state, best))
        if best.id not in report.segments_joined:
            report.segments_joined.append(best.id)
        return
    seg = Segment(
        id="s_" + page.id[2:],
        summary=analysis.topic_summary,
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
    evict_coldest(state, settings, report, keep=seg.id)


def _centroid(state: UserState, segment: Segment) -> Vector:
    vecs = [state.page_index.get(p) for p in segment.page_ids if p in state.page_index]
    mean: Vector = np.mean(np.stack(vecs), axis=0).astype(np.float32)
    norm = float(np.linalg.norm(mean))
    return mean / np.float32(norm) if norm > 0 else mean


def evict_coldest(state: UserState, settings: EngineSettings, report: WriteReport, *, keep: str) -> None:
    """Heat-evict: while over ``mtm_max_segments``, drop the coldest segment and its pages.

    The segment just created for the incoming page is never the one evicted.

    Example:
        >>> evict_coldest  # doctest: +ELLIPSIS
        <function evict_coldest at ...>
    """
    config = settings.config
    clock = state.clock
    while len(state.segments) > config.mtm_max_segments:
        candidates = [s for s in state.segments.values() if s.id != keep]
        if not candidates:
            return
        coldest = min(candidates, key=lambda s: (segment_heat(s, clock, config), s.created_at, s.id))
        state.delete_segment(coldest.id)
        report.segments_evicted.append(coldest.id)


def _embed_summaries(
    state: UserState, settings: EngineSettings, records: list[MemoryRecord]
) -> Step[dict[str, Vector]]:
    """Embed the admitted records' summaries in one batch.

    A summary that is word for word an existing fact's reuses that fact's
    vector (same text, same embedding): repeated facts cost no encoder pass.
    """
    wanted = list(dict.fromkeys(r.summary for r in records if gate(r, settings.amu.gate_threshold).admitted))
    vectors: dict[str, Vector] = {}
    needed = set(wanted)
    for kind, facts in state.facts.items():
        for fact in facts.values():
            if fact.summary in needed and fact.summary not in vectors:
                vectors[fact.summary] = state.fact_index[kind].get(fact.id)
    missing = tuple(s for s in wanted if s not in vectors)
    if missing:
        vectors.update(zip(missing, (yield Embed(missing)), strict=True))
    return vectors


def promote_hot_segments(state: UserState, settings: EngineSettings, report: WriteReport) -> Step[None]:
    """Persona-promote: every segment with heat ≥ ``promotion_heat`` and new pages.

    Its new pages update the persona (profile and traits) and feed their
    candidate records to the AMU write path; then ``L_interaction`` resets to 0.
    A segment hot only from visits, with no page since its last promotion, has
    nothing new to promote and is left alone.

    Example:
        >>> promote_hot_segments  # doctest: +ELLIPSIS
        <function promote_hot_segments at ...>
    """
    config = settings.config
    clock = state.clock
    hot = [
        s
        for s in state.segments.values()
        if s.pending_page_ids and segment_heat(s, clock, config) >= config.promotion_heat
    ]
    for seg in sorted(hot, key=lambda s: (s.created_at, s.id)):
        pages = [state.pages[p] for p in seg.pending_page_ids if p in state.pages]
        result: PromotionResult = yield Control("promote_segment", (seg, pages, state.persona))
        count_usage(state, "promote_segment", result.usage)
        now = clock or ensure_utc(None)
        state.persona.user_profile = dict(result.user_profile)
        state.persona.user_traits = {k: list(v) for k, v in result.user_traits.items()}
        state.persona.updated_at = now
        state.save_persona()
        if result.segment_summary:
            seg.summary = result.segment_summary
        if result.segment_keywords:
            seg.keywords = list(result.segment_keywords)[: config.segment_keywords]
        records = [copy.deepcopy(c) for p in pages for c in p.candidates] + [copy.deepcopy(r) for r in result.records]
        vectors = yield from _embed_summaries(state, settings, records)
        prejudged = yield from prejudge_relations(state, records, vectors, settings.amu)
        for i, record in enumerate(records):
            events = yield from write_record(
                state,
                record,
                settings.amu,
                now=now,
                source="promotion",
                vector=vectors.get(record.summary),
                prejudged=prejudged.get(i),
            )
            report.events.extend(events)
        seg.pending_page_ids = []
        seg.l_interaction = 0
        seg.promotions += 1
        seg.heat = segment_heat(seg, clock, config)
        state.put_segment(seg)
        report.segments_promoted.append(seg.id)
