"""The MemoryOS read path: STM (within the word budget), MTM pages by rank, LPM by relevance.

Retrieval makes no model call. Mid-term pages are ranked one of two ways
(``MemoryOSConfig.page_ranking``):

* ``"hybrid"`` (default): every mid-term page (and the STM pages of the user's
  other threads, and — with ``stm_view="compact"`` — the thread's own STM but
  its newest page) by a score that starts from the flat hybrid ranking and
  adds what the hierarchy knows::

      S(p) = RRF(p) + w2 · best RRF of a 2-page chain window holding p
                    + w3 · best RRF of a 3-page chain window holding p
                    + wd · [p is dated on a day or month the query names]

  where ``RRF`` is reciprocal-rank fusion of the cosine to the query (FAISS)
  and the BM25 score (:mod:`langchain_memoryos.index.lexical`), the
  windows are runs of consecutive pages of one session
  (:mod:`langchain_memoryos.index.chain`), and the dates are those of
  :mod:`langchain_memoryos.retrieval.dates`. With ``chain_weights=(0, 0)`` and
  ``date_weight=0`` this *is* the flat hybrid ranking, which the defaults beat
  by about 5 points of evidence recall at 1,000 words on LoCoMo (weights
  cross-validated). Pages fill the context word budget in ``S`` order;
* ``"segments"`` (the paper): the top segments by ``F_score = cos + Jaccard``,
  then the top pages inside them by cosine.

The segments that hold the returned pages get ``N_visit + 1`` and fresh
recency (the user's conversation clock), which is the only write; it never
makes the read wait for the store's write lock or fail
(:mod:`~langchain_memoryos.store.visits`).
"""

from __future__ import annotations

import copy
import functools
import logging
import operator
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.index.lexical import rrf_scores, tokenize
from langchain_memoryos.index.vector_index import Vector
from langchain_memoryos.kernel.controller import QueryPlan
from langchain_memoryos.kernel.effects import Embed, Step
from langchain_memoryos.kernel.judgements import PlanQuery
from langchain_memoryos.retrieval.copies import copied
from langchain_memoryos.retrieval.dates import named_dates, on_named_date
from langchain_memoryos.retrieval.facts import Shown, adding_facts, line_words, within_allowance
from langchain_memoryos.retrieval.keywords import extract_keywords
from langchain_memoryos.retrieval.turns import Side, pack_turns, side_words
from langchain_memoryos.schema import (
    PAST_CONVERSATION_TITLE,
    RECENT_CONVERSATION_TITLE,
    DialoguePage,
    MemoryContext,
    MemoryRecord,
    Persona,
    ScoredPage,
    ScoredRecord,
    ScoredSegment,
    Segment,
    cut_page,
    fence_memory,
    page_words,
    stm_line,
)
from langchain_memoryos.schema.pages import page_in_turns
from langchain_memoryos.scoring import f_score, top_k
from langchain_memoryos.store.repository import UserLease, UserState, flush
from langchain_memoryos.store.settings import EngineSettings, StageContext, embedding_text
from langchain_memoryos.store.visits import Visit, apply_visits
from langchain_memoryos.threads import beside, single_math_thread

__all__ = [
    "ReadRun",
    "context_words",
    "copy_page",
    "stage_assemble_context",
    "stage_retrieve_lpm",
    "stage_retrieve_mtm",
    "stage_retrieve_stm",
]

logger = logging.getLogger(__name__)

#: How deep each ranking of the fusion looks (at least this many pages).
_FUSION_DEPTH = 100

#: With a word budget, at least this many words per page may be shown (``top_pages`` grows with the budget).
_WORDS_PER_PAGE = 25

#: From this many mid-term pages, the chain windows are ranked on the other core while the pages are (the
#: flat searches of the pages and of both window sizes cost about 2 ms each at 20,000 pages; below a few
#: thousand a thread's hand-off costs more than it saves).
PARALLEL_RANKING_PAGES = 4096

#: How many ranked pages per page shown the budget filling looks at (past them, pages rarely fit or matter).
_SCAN_PER_PAGE = 5

#: The fewest words a page costs ("Ana: hi" and a date line).
_MIN_PAGE_WORDS = 3

#: The most words the thread's newest page takes in the compact STM view (about 30 per side).
COMPACT_STM_WORDS = 70


def context_words(text: str) -> int:
    r"""Words of a context text, as the budget counts them (whitespace-separated).

    Example:
        >>> context_words("## Recent conversation\nUser: hi")
        5
    """
    return len(text.split())


@dataclass
class ReadRun:
    """One retrieval on its way through the read stages (the read graph's nodes share it).

    Attributes:
        user_id, thread_id, query: the request.
        ctx: the context being built (returned by ``retrieve``).
        state: the user's state.
        lease: the user's lock while the context is read (taken by the graph's entry node).
        vectors: the query's embeddings (as asked, and in the third person for facts).
        other: STM pages of the user's other threads, by id.
        ranked: MTM pages in rank order, before the budget.
        plan: how facts are matched (the query in the third person, its aspects), from the controller.
        fact_hits: the user facts that may be shown, best first (``assemble_context`` keeps those that
            say what the shown pages do not: :func:`~langchain_memoryos.retrieval.facts.adding_facts`).
        matched: the facts and agent traits the read matched (within the budget), before those whose
            page is shown are dropped (``assemble_context``): what ``MemoryOS.search`` lists.
        stm_view: how the thread's STM is shown (``MemoryOSConfig.stm_view``; ``""``: the config's).
        touch: count the visit (the segments hit get ``N_visit + 1`` and fresh recency, the
            paper's rule); ``False`` reads without writing anything (previews, ``memoryos recall``).
        known: keys of the turns the model already gets as messages
            (:func:`~langchain_memoryos.schema.messages.turn_keys`): their pages are
            left out of the context, whichever tier they sit in.
        depth: rank at least this many pages (``MemoryOS.search`` asks for more than a context needs).
        next: the next stage (a node name, or ``"done"``).

    Example:
        >>> ReadRun("u", "t", "hi").next
        'retrieve_stm'
    """

    user_id: str
    thread_id: str
    query: str
    ctx: MemoryContext | None = None
    state: UserState | None = None
    lease: UserLease | None = None
    vectors: list[Vector] = field(default_factory=list)
    other: dict[str, DialoguePage] = field(default_factory=dict)
    ranked: list[ScoredPage] = field(default_factory=list)
    plan: QueryPlan | None = None
    matched: list[ScoredRecord] = field(default_factory=list)
    fact_hits: list[ScoredRecord] = field(default_factory=list)
    stm_view: str = ""
    touch: bool = True
    known: frozenset[str] = frozenset()
    depth: int = 0
    next: str = "retrieve_stm"


def stage_retrieve_stm(ctx: StageContext, r: ReadRun) -> Step[None]:
    """``retrieve_stm``: the thread's STM and the persona; the query embedded (nothing else when memory is empty)."""
    repo, config = ctx.repo, ctx.settings.config
    state = yield from repo.load(r.user_id)
    r.state = state
    stm = yield from repo.load_thread(state, r.thread_id)
    persona = _copy_persona(state.persona)
    if not persona.agent_profile:
        persona.agent_profile = config.agent_profile
    shown = [p for p in stm if not page_in_turns(p, r.known)]
    r.stm_view = r.stm_view or config.stm_view
    r.other = {
        p.id: p for t, pages in state.stm.items() if t != r.thread_id for p in pages if not page_in_turns(p, r.known)
    }
    if r.stm_view == "compact" and shown:
        # the newest page is shown (compactly); the older ones compete with the mid-term pages
        r.other.update((p.id, p) for p in shown[:-1])
        shown = shown[-1:]
    r.ctx = MemoryContext(query=r.query, user_id=r.user_id, thread_id=r.thread_id, stm=shown, persona=persona)
    if not r.query.strip() or not (state.segments or r.other or state.facts["user"] or state.facts["agent"]):
        _fit_stm(r.ctx, config.context_words, r.stm_view)
        r.next = "done"
        return
    r.plan = yield PlanQuery(r.query)
    fact_query = r.plan.fact_query
    texts = (r.query,) if fact_query == r.query else (r.query, fact_query)
    r.vectors = list((yield Embed(tuple(embedding_text(t, config.max_embedding_chars) for t in texts))))
    r.next = "retrieve_lpm"


def stage_retrieve_lpm(ctx: StageContext, r: ReadRun) -> Step[None]:
    """``retrieve_lpm``: user facts (see :mod:`~langchain_memoryos.retrieval.facts`) and agent traits above tau_r."""
    settings = ctx.settings
    assert r.state is not None and r.ctx is not None
    assert r.plan is not None
    aspects = r.plan.aspects
    with single_math_thread():  # one limit for the stage's searches (see threads)
        hits = _recall_facts(r.state, settings, "user", r.vectors, aspects)
        agent = _recall_facts(r.state, settings, "agent", r.vectors, aspects)
    r.fact_hits = hits
    r.ctx.user_facts.extend(within_allowance(hits, settings))
    r.ctx.agent_facts.extend(agent)
    _fit_facts(r.ctx, settings.config.context_words)
    r.matched = [*r.ctx.user_facts, *r.ctx.agent_facts]
    _fit_stm(r.ctx, settings.config.context_words, r.stm_view)
    r.next = "retrieve_mtm"
    return
    yield  # pragma: no cover - a step like the others


def stage_retrieve_mtm(ctx: StageContext, r: ReadRun) -> Step[None]:
    """``retrieve_mtm``: MTM pages ranked (hybrid or the paper's segments), filling the word budget."""
    settings = ctx.settings
    assert r.state is not None and r.ctx is not None
    config = settings.config
    qvec = r.vectors[0]
    with single_math_thread():  # one limit for the stage's searches (see threads)
        if config.page_ranking == "segments":
            keywords = extract_keywords(r.query, config.page_keywords)
            r.ranked = _rank_by_segments(r.state, settings, r.ctx, qvec, keywords, r.other)
        else:
            r.ranked = _rank_hybrid(r.state, settings, qvec, r.query, r.other, r.depth)
    if r.known:  # the model has these turns as messages: none of their pages is shown again
        r.ranked = [hit for hit in r.ranked if not page_in_turns(hit.page, r.known)]
    r.ctx.pages = _fill(
        r.ctx,
        r.ranked,
        _top_pages(config),
        config.context_words,
        count_stm=r.stm_view != "messages",
        words_of=r.state.indices.page_words,
        side_words_of=r.state.indices.side_words,
        config=config,
    )
    r.next = "assemble_context"
    return
    yield  # pragma: no cover - a step like the others


def stage_assemble_context(ctx: StageContext, r: ReadRun) -> Step[None]:
    """``assemble_context``: no fact that repeats a shown page, freed words refilled; segment visits saved.

    The visits are written without waiting for the store's write lock; when
    they cannot be, they are applied later (:mod:`~langchain_memoryos.store.visits`).
    """
    assert r.state is not None and r.ctx is not None
    repo, settings = ctx.repo, ctx.settings
    config = settings.config
    context = r.ctx
    if config.page_ranking == "hybrid" and _drop_facts_shown(context, r.fact_hits, config.context_words):
        context.pages = _fill(
            context,
            r.ranked,
            _top_pages(config),
            config.context_words,
            keep=context.pages,
            count_stm=r.stm_view != "messages",
            words_of=r.state.indices.page_words,
            side_words_of=r.state.indices.side_words,
            config=config,
        )
    context.pages = [ScoredPage(copy_page(hit.page), hit.score, hit.side) for hit in context.pages]
    if not r.touch:
        _list_segments(r.state, settings, context)
    elif not (yield from _visit_segments(r.state, settings, context)):
        repo.evict(r.user_id)  # the visits are counted in it but not stored: it is reloaded from the store
    r.next = "done"


def _recall_facts(
    state: UserState, settings: EngineSettings, kind: str, qvecs: list[Vector], aspects: frozenset[str]
) -> list[ScoredRecord]:
    """LPM facts: aspect pre-filter, then vector search, then ``tau_r``.

    Each fact's score is its best cosine against the query vectors (the
    query as asked and in the third person). The facts of the aspects the
    query is about (the controller's ``plan_query``) come first, best first; when they
    are fewer than ``top_facts`` (or none, or the query names no aspect) the
    best facts of the other aspects fill the rest, so a wrong guess of the
    aspect never hides a relevant fact. Only facts with cosine ``>= tau_r``
    are returned.
    """
    top = settings.config.top_facts
    threshold = settings.thresholds.retrieval_similarity
    index = state.fact_index[kind]
    best: dict[str, float] = {}
    for found in index.search_many(qvecs, len(index)):  # one pass over the facts for both vectors
        for key, score in found:
            best[key] = max(score, best.get(key, -1.0))
    ranked = sorted(best.items(), key=lambda item: item[1], reverse=True)
    hits = [(state.facts[kind][key], score) for key, score in ranked if score >= threshold]
    preferred = [hit for hit in hits if hit[0].aspect in aspects]
    rest = [hit for hit in hits if hit[0].aspect not in aspects]
    return [ScoredRecord(_copy_record(record), score) for record, score in (preferred + rest)[:top]]


def _copy_record(record: MemoryRecord) -> MemoryRecord:
    """A copy of a stored fact for the caller: its lists copied (every other field is immutable)."""
    return copied(
        record,
        entities=list(record.entities),
        source_page_ids=list(record.source_page_ids),
        metadata=_copy_json(record.metadata),
    )


def _dense(
    state: UserState, qvec: Vector, other: dict[str, DialoguePage], depth: int
) -> list[tuple[DialoguePage, float]]:
    """Mid-term pages and other threads' STM pages by cosine, best first."""
    hits = [(state.pages[key], score) for key, score in state.page_index.search(qvec, depth)]
    if other:
        hits += [(other[key], score) for key, score in state.stm_index.search(qvec, depth, within=list(other))]
    hits.sort(key=lambda hit: hit[1], reverse=True)
    return hits[:depth]


def _rank_hybrid(
    state: UserState,
    settings: EngineSettings,
    qvec: Vector,
    query: str,
    other: dict[str, DialoguePage],
    at_least: int = 0,
) -> list[ScoredPage]:
    """Pages by ``S(p)``: the fusion of the dense and BM25 rankings, plus chain windows and named dates.

    Each page's :attr:`ScoredPage.score` is its ``S(p)``, so the pages come best first.
    """
    config = settings.config
    query_tokens = tokenize(query)
    depth = max(_FUSION_DEPTH, 4 * _top_pages(config), min(at_least, len(state.pages) + len(other)))
    weights = (config.dense_weight, config.lexical_weight)
    pending: Future[dict[int, dict[str, float]]] | None = None
    by_size: dict[int, dict[str, float]] = {}
    if any(config.chain_weights):
        chain = state.chain(config.chain_gap_seconds)
        rank = functools.partial(chain.scores, qvec, query_tokens, depth=_FUSION_DEPTH, k=config.rrf_k, weights=weights)
        if len(state.pages) >= PARALLEL_RANKING_PAGES:  # the same searches, on the other core (FAISS frees the GIL)
            pending = beside(rank)
        else:
            by_size = rank()
    dense = _dense(state, qvec, other, depth) if config.dense_weight > 0 else []
    lexical: list[str] = []
    if config.lexical_weight > 0 and query_tokens:
        lexical = [key for key, _ in state.lexicon.search(query_tokens, depth) if key in state.pages or key in other]
    score = rrf_scores([[page.id for page, _ in dense], lexical], k=config.rrf_k, weights=weights)
    pages = state.pages
    if pending is not None:
        by_size = pending.result()
    if by_size:
        for size, weight in zip(sorted(by_size), config.chain_weights, strict=True):
            if weight:
                for key, best in by_size[size].items():
                    if key in pages or key in other:
                        score[key] = score.get(key, 0.0) + weight * best
    dates = named_dates(query) if config.date_weight else []
    if dates:
        for page in [*state.pages.values(), *other.values()]:
            if on_named_date(page.timestamp, dates):
                score[page.id] = score.get(page.id, 0.0) + config.date_weight
    # not copied yet: only the pages that fit are (see retrieve); a stable sort: a tie keeps the fusion's order
    ranked = sorted(score.items(), key=operator.itemgetter(1), reverse=True)
    return [ScoredPage(pages.get(key) or other[key], value) for key, value in ranked]


def _rank_by_segments(
    state: UserState,
    settings: EngineSettings,
    ctx: MemoryContext,
    qvec: Vector,
    query_keywords: list[str],
    other: dict[str, DialoguePage],
) -> list[ScoredPage]:
    """The paper: top segments by F_score, then pages inside them (and other threads' STM) by cosine."""
    config = settings.config
    hits: list[tuple[DialoguePage, float]] = []
    if state.segments:
        cosines = state.segment_index.search(qvec, len(state.segment_index))
        segments = [state.segments[key] for key, _ in cosines]
        scores = [f_score(cos, state.segments[key].keywords, query_keywords) for key, cos in cosines]
        chosen = top_k(segments, scores, config.top_segments)
        ctx.segments = [ScoredSegment(_copy_segment(seg), score) for seg, score in chosen]
        within = [pid for seg, _ in chosen for pid in seg.page_ids]
        hits = [(state.pages[key], s) for key, s in state.page_index.search(qvec, config.top_pages, within=within)]
    if other:
        hits += [(other[k], s) for k, s in state.stm_index.search(qvec, config.top_pages, within=list(other))]
    hits.sort(key=lambda hit: hit[1], reverse=True)
    return [ScoredPage(page, score) for page, score in hits]


def copy_page(page: DialoguePage) -> DialoguePage:
    """A copy of a stored page for the caller (who may change it): its containers copied, not shared.

    Example:
        >>> page = DialoguePage(id="p", user_input="hi", agent_response="yo", metadata={"source_id": ["D1:1"]})
        >>> copied = copy_page(page); copied.metadata["source_id"].append("x")
        >>> copied == page, page.metadata["source_id"]
        (False, ['D1:1'])
    """
    return copied(
        page,
        keywords=list(page.keywords),
        metadata=_copy_json(page.metadata),
        candidates=[
            copied(c, entities=list(c.entities), source_page_ids=list(c.source_page_ids)) for c in page.candidates
        ],
    )


def _copy_json(value: Any) -> Any:
    """A copy of JSON-like data (dicts, lists, scalars): several times faster than ``copy.deepcopy``."""
    if isinstance(value, dict):  # a plain scalar is kept as it is without a call (the usual item)
        return {key: item if type(item) in _SCALARS else _copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [item if type(item) in _SCALARS else _copy_json(item) for item in value]
    if isinstance(value, _SCALARS):
        return value
    return copy.deepcopy(value)


_SCALARS = (str, int, float, bool, type(None))


def _top_pages(config: MemoryOSConfig) -> int:
    """The most pages a retrieval returns: ``top_pages``, or more when the word budget has room for them."""
    if config.context_words is None:
        return config.top_pages
    return max(config.top_pages, config.context_words // _WORDS_PER_PAGE)


def _fill(
    ctx: MemoryContext,
    ranked: list[ScoredPage],
    top: int,
    budget: int | None,
    *,
    keep: Sequence[ScoredPage] = (),
    count_stm: bool = True,
    words_of: Callable[[DialoguePage], int] = page_words,
    side_words_of: Callable[[DialoguePage, Side], int] = side_words,
    config: MemoryOSConfig | None = None,
) -> list[ScoredPage]:
    """The ranked pages that fit: at most ``top``, and within the word budget.

    The budget counts the whole rendered context: what is in ``ctx`` besides
    its pages (STM, persona, facts, agent traits) first, then the
    past-conversation section as it would be rendered with each further page.
    A page that does not fit is skipped and shorter pages further down may
    still fit. Pages in ``keep`` are taken first (a refill after facts were
    dropped never loses a page). The result is in rank order. ``count_stm=False``:
    the STM goes to the model as messages and takes none of the budget.
    """
    if budget is None:
        return ranked[:top]
    without_pages = MemoryContext(
        query=ctx.query,
        user_id=ctx.user_id,
        thread_id=ctx.thread_id,
        stm=ctx.stm if count_stm else [],
        persona=ctx.persona,
        user_facts=ctx.user_facts,
        agent_facts=ctx.agent_facts,
    )
    # the rest of the context; or, when it is empty, just the fence and its preamble (a blank body)
    used = context_words(without_pages.to_prompt() if without_pages.sections() else fence_memory(" "))
    used += context_words(f"## {PAST_CONVERSATION_TITLE}")
    # a page further down than this, or once no page could fit, is not looked at
    scan = len(keep) + _SCAN_PER_PAGE * top
    if config is not None and config.page_units == "turns":
        return pack_turns(
            ranked[:scan],
            query=ctx.query,
            room=budget - used,
            max_units=2 * top,
            speaker_weight=config.speaker_weight,
            keep=keep,
            words_of=side_words_of,
        )
    days: set[object] = set()
    chosen: dict[str, ScoredPage] = {}
    for hit in [*keep, *ranked][:scan]:
        if len(chosen) >= top or budget - used < _MIN_PAGE_WORDS:
            break
        if hit.page.id in chosen:
            continue
        day = hit.page.timestamp.date()
        cost = words_of(hit.page) + (0 if day in days else 1)
        if used + cost <= budget:
            chosen[hit.page.id] = hit
            days.add(day)
            used += cost
    order = {hit.page.id: i for i, hit in enumerate(ranked)}
    return sorted(chosen.values(), key=lambda hit: order.get(hit.page.id, -1))


def _fit_facts(ctx: MemoryContext, budget: int | None) -> None:
    """Facts and agent traits within the word budget with the persona (in rank order; one that does not fit is skipped).

    Facts are short, so this only bites on a pathological one (a huge
    ``add_fact`` text) or a tiny budget; the persona is always shown.
    """
    if budget is None or context_words(copied(ctx, stm=[], pages=[]).to_prompt()) <= budget:
        return
    trial = copied(ctx, stm=[], pages=[], user_facts=[], agent_facts=[])
    for kind in ("user_facts", "agent_facts"):
        for hit in getattr(ctx, kind):
            getattr(trial, kind).append(hit)
            if context_words(trial.to_prompt()) > budget:
                getattr(trial, kind).pop()
    ctx.user_facts, ctx.agent_facts = trial.user_facts, trial.agent_facts


def _fit_stm(ctx: MemoryContext, budget: int | None, view: str) -> None:
    """The thread's STM as shown within the word budget left by the persona and facts.

    Newest first: pages are taken while they fit; the first that does not
    is shown cut (:func:`cut_page`, with a visible marker) and older pages
    give way. The stored pages are never changed (``ctx.stm`` holds copies
    of the cut ones). ``view="compact"``: the one page shown takes at most
    :data:`COMPACT_STM_WORDS` words (each side cut to about 30) and a tenth of the budget;
    ``"messages"``: every page, whole (they go to the model as messages).
    """
    if not ctx.stm or view == "messages":
        return
    if view == "compact":
        # at most a tenth of the budget (as the facts): a small budget goes to the ranked pages
        limit = COMPACT_STM_WORDS if budget is None else min(COMPACT_STM_WORDS, budget // 10)
        fitted = cut_page(ctx.stm[-1], limit)
        ctx.stm = [] if fitted is None else [fitted]
    if budget is None:
        return
    rest = copied(ctx, stm=[], pages=[])
    used = context_words(rest.to_prompt() if rest.sections() else fence_memory(" "))
    used += context_words(f"## {RECENT_CONVERSATION_TITLE}")
    shown: list[DialoguePage] = []
    for page in reversed(ctx.stm):
        fitted = cut_page(page, budget - used)
        if fitted is None:
            break
        shown.append(fitted)
        used += context_words(stm_line(fitted))
        if fitted is not page:
            break
    ctx.stm = shown[::-1]


def _drop_facts_shown(ctx: MemoryContext, candidates: Sequence[ScoredRecord], budget: int | None) -> bool:
    """Keep the facts that add to the shown context; return whether the facts shown changed.

    With a word budget, the user facts are chosen again from ``candidates``, now that the pages
    are known: those that say what the shown pages and the persona do not
    (:func:`~langchain_memoryos.retrieval.facts.adding_facts`), within the words the facts
    were given, so the pages still fit. The thread's own STM does not count as shown: a fact
    read off the conversation the agent is in (written when its turn was added) shows what the
    agent can correct, by its id, and when it was said. Agent traits (and, without a budget, the user facts)
    go when every page they were read from is shown (:func:`_drop_covered_facts`).
    """
    if budget is None:
        return _drop_covered_facts(ctx, ("user_facts", "agent_facts"))
    before = [h.record.id for h in ctx.user_facts]
    shown = Shown.of(copied(ctx, user_facts=[], stm=[]).to_prompt())
    ctx.user_facts = adding_facts(candidates, shown, line_words(ctx.user_facts))
    dropped = _drop_covered_facts(ctx, ("agent_facts",))
    return dropped or [h.record.id for h in ctx.user_facts] != before


def _drop_covered_facts(ctx: MemoryContext, kinds: Sequence[str]) -> bool:
    """Drop facts whose every source page is already in the context; return whether any was dropped.

    A fact distilled from a page says nothing the page itself does not, so
    when that page is shown the fact only costs words. Facts without
    provenance (``add_fact``, fused from several pages not all shown) stay, as do
    facts of a page shown by one turn only, and facts of the thread's own STM
    pages: that is the conversation the agent is in, and a fact read off it
    (written when its turn was added) shows what the agent can correct, by its
    id, and when it was said.
    """
    shown = {hit.page.id for hit in ctx.pages if hit.side is None}
    dropped = False
    for facts in (getattr(ctx, kind) for kind in kinds):
        kept = [h for h in facts if not (h.record.source_page_ids and set(h.record.source_page_ids) <= shown)]
        dropped |= len(kept) < len(facts)
        facts[:] = kept
    return dropped


def _hit_segments(state: UserState, settings: EngineSettings, ctx: MemoryContext) -> list[tuple[str, float]]:
    """The segments a read hit, with their scores.

    With the paper's ranking these are the selected segments; with hybrid
    ranking, the segments of the best-ranked pages, at most ``top_segments``
    of them (as many as the paper visits), so heat grows at the paper's rate.
    """
    config = settings.config
    scores = {hit.segment.id: hit.score for hit in ctx.segments}
    if config.page_ranking == "segments":
        hit_ids = list(scores)
    else:
        ranked = dict.fromkeys(h.page.segment_id for h in ctx.pages if h.page.segment_id in state.segments)
        hit_ids = [seg_id for seg_id in ranked if seg_id is not None][: config.top_segments]
    best: dict[str | None, float] = {}  # each segment's best page score (the first of equal ones)
    for hit in ctx.pages:
        if hit.page.segment_id not in best or hit.score > best[hit.page.segment_id]:
            best[hit.page.segment_id] = hit.score
    return [(seg_id, scores.get(seg_id, best.get(seg_id, 0.0))) for seg_id in hit_ids]


def _list_segments(state: UserState, settings: EngineSettings, ctx: MemoryContext) -> None:
    """``touch=False``: the segments hit, listed in the context (copies), unchanged."""
    hits = _hit_segments(state, settings, ctx)
    ctx.segments = [ScoredSegment(_copy_segment(state.segments[seg_id]), score) for seg_id, score in hits]


def _visit_segments(state: UserState, settings: EngineSettings, ctx: MemoryContext) -> Step[bool]:
    """Step: segments hit get ``N_visit + 1``, fresh recency, new heat, written without waiting; listed in ``ctx``.

    The user's visits that earlier reads could not write are counted first
    (in order). Returns ``False`` when the store did not take the batch (its
    write lock held by another connection, a full disk, …): logged, the visits
    stay pending (:mod:`~langchain_memoryos.store.visits`), and the caller drops
    the cached state they were counted in.
    """
    hits = _hit_segments(state, settings, ctx)
    pending = state.pending_visits
    visits = pending.take(state.user_id) if pending is not None else []
    visits += [Visit(seg_id, state.clock, settings.config) for seg_id, _ in hits]
    apply_visits(state, visits)
    ctx.segments = [ScoredSegment(_copy_segment(state.segments[seg_id]), score) for seg_id, score in hits]
    try:
        yield from flush(state, wait=False)
    except Exception as exc:  # noqa: BLE001 - whatever the store raised, the read answers (the visits wait)
        if pending is not None:
            pending.put_back(state.user_id, visits)
        logger.warning(
            "user %r: %d segment visits not written (%s: %s); the context is returned, and the visits are applied "
            "with this user's next write or counted read in this process",
            state.user_id,
            len(visits),
            type(exc).__name__,
            exc,
        )
        return False
    return True


def _copy_persona(persona: Persona) -> Persona:
    """A copy of the stored persona for the caller: its dicts and lists copied (the rest is immutable)."""
    traits = {dim: list(values) for dim, values in persona.user_traits.items()}
    return copied(persona, user_profile=dict(persona.user_profile), user_traits=traits)


def _copy_segment(seg: Segment) -> Segment:
    """A copy of a stored segment for the caller: its lists copied (every other field is immutable)."""
    return copied(
        seg, keywords=list(seg.keywords), page_ids=list(seg.page_ids), pending_page_ids=list(seg.pending_page_ids)
    )
