"""The MemoryOS read path: STM in full, MTM in two stages, LPM by relevance.

Retrieval makes no model call: query keywords come from YAKE and similarities
from the cached FAISS indices. Hit segments get ``N_visit + 1`` and fresh
recency (the user's conversation clock), which is the only write.
"""

from __future__ import annotations

import copy

from langchain_memoryos.controllers.rules import query_aspects
from langchain_memoryos.effects import Embed, Step, StoreBatch
from langchain_memoryos.engine import EngineSettings, embedding_text, segment_heat
from langchain_memoryos.keywords import extract_keywords
from langchain_memoryos.schema import MemoryContext, ScoredPage, ScoredRecord, ScoredSegment
from langchain_memoryos.scoring import f_score, top_k
from langchain_memoryos.storage import MemoryRepository, UserState
from langchain_memoryos.vector_index import Vector

__all__ = ["retrieve"]


def retrieve(
    repo: MemoryRepository,
    settings: EngineSettings,
    *,
    user_id: str,
    thread_id: str,
    query: str,
) -> Step[MemoryContext]:
    """Step: the memory context for ``query``.

    * STM: every page of the thread;
    * MTM: top ``top_segments`` segments by ``F_score = cos + Jaccard`` against
      the query, then the top ``top_pages`` pages inside them by cosine;
    * LPM: the persona in full, and the top ``top_facts`` user facts and agent
      traits whose cosine is at least ``retrieval_similarity`` (``tau_r``).

    Example:
        >>> retrieve  # doctest: +ELLIPSIS
        <function retrieve at ...>
    """
    config = settings.config
    state = yield from repo.load(user_id)
    stm = yield from repo.load_thread(state, thread_id)
    persona = copy.deepcopy(state.persona)
    if not persona.agent_profile:
        persona.agent_profile = config.agent_profile
    ctx = MemoryContext(query=query, user_id=user_id, thread_id=thread_id, stm=list(stm), persona=persona)
    other_threads = [p.id for t, pages in state.stm.items() if t != thread_id for p in pages]
    if not query.strip() or not (state.segments or other_threads or state.facts["user"] or state.facts["agent"]):
        return ctx
    qvec: Vector = (yield Embed((embedding_text(query, config.max_embedding_chars),)))[0]
    _recall_mtm(state, settings, ctx, qvec, extract_keywords(query, config.page_keywords))
    _recall_other_threads(state, settings, ctx, qvec, other_threads)
    aspects = query_aspects(query)
    for kind, target in (("user", ctx.user_facts), ("agent", ctx.agent_facts)):
        target.extend(_recall_facts(state, settings, kind, qvec, aspects))
    yield StoreBatch(state.take_ops())
    return ctx


def _recall_facts(
    state: UserState, settings: EngineSettings, kind: str, qvec: Vector, aspects: frozenset[str]
) -> list[ScoredRecord]:
    """LPM facts: aspect pre-filter, then vector search, then ``tau_r``.

    The facts of the aspects the query is about (:func:`query_aspects`) come
    first, best first; when they are fewer than ``top_facts`` (or none, or the
    query names no aspect) the best facts of the other aspects fill the rest,
    so a wrong guess of the aspect never hides a relevant fact. Only facts with
    cosine ``>= tau_r`` are returned.
    """
    top = settings.config.top_facts
    threshold = settings.thresholds.retrieval_similarity
    index = state.fact_index[kind]
    hits = [(state.facts[kind][key], score) for key, score in index.search(qvec, len(index)) if score >= threshold]
    preferred = [hit for hit in hits if hit[0].aspect in aspects]
    rest = [hit for hit in hits if hit[0].aspect not in aspects]
    return [ScoredRecord(copy.deepcopy(record), score) for record, score in (preferred + rest)[:top]]


def _recall_mtm(
    state: UserState, settings: EngineSettings, ctx: MemoryContext, qvec: Vector, query_keywords: list[str]
) -> None:
    config = settings.config
    if not state.segments:
        return
    cosines = state.segment_index.search(qvec, len(state.segment_index))
    segments = [state.segments[key] for key, _ in cosines]
    scores = [f_score(cos, state.segments[key].keywords, query_keywords) for key, cos in cosines]
    chosen = top_k(segments, scores, config.top_segments)
    within = [pid for seg, _ in chosen for pid in seg.page_ids]
    hits = state.page_index.search(qvec, config.top_pages, within=within)
    clock = state.clock
    for seg, score in chosen:
        seg.n_visit += 1
        if clock is not None:
            seg.last_access = clock
        seg.heat = segment_heat(seg, clock, config)
        state.put_segment(seg)
        ctx.segments.append(ScoredSegment(copy.deepcopy(seg), score))
    ctx.pages = [ScoredPage(copy.deepcopy(state.pages[pid]), score) for pid, score in hits]


def _recall_other_threads(
    state: UserState, settings: EngineSettings, ctx: MemoryContext, qvec: Vector, page_ids: list[str]
) -> None:
    """Pages still in the STM of the user's *other* threads compete with MTM pages.

    STM is per thread, so a page of an idle thread may never reach MTM; it is
    still the user's memory and must be reachable from a new thread.
    """
    if not page_ids:
        return
    top = settings.config.top_pages
    by_id = {p.id: p for t, pages in state.stm.items() if t != ctx.thread_id for p in pages}
    hits = state.stm_index.search(qvec, top, within=page_ids)
    merged = ctx.pages + [ScoredPage(copy.deepcopy(by_id[pid]), score) for pid, score in hits]
    merged.sort(key=lambda hit: hit.score, reverse=True)
    ctx.pages = merged[:top]
