"""The MemoryOS write path.

STM append → STM→MTM (chain, keywords, segment) → heat-evict → persona-promote
(→ AMU write path).

Each function is a step (see :mod:`langchain_memoryos.pipeline.effects`): it yields store
batches, embeddings and controller judgements, so sync and async share it.
"""

from __future__ import annotations

import copy
import datetime as _dt
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from langchain_memoryos.amu import (
    AMUSettings,
    RecordWrite,
    fuse,
    lpm_commit,
    next_stage,
    prejudge_relations,
    relation_judge,
    write_gate,
)
from langchain_memoryos.config import MemoryOSConfig, ModelThresholds
from langchain_memoryos.controllers.base import ControllerUsage, PageAnalysis, PromotionResult, count_usage
from langchain_memoryos.pipeline.effects import Embed, Judgements, Lock, Step, StoreBatch, judged
from langchain_memoryos.pipeline.judgements import AnalyzePage, PromoteSegment
from langchain_memoryos.retrieval.keywords import merge_keywords
from langchain_memoryos.schema import DialoguePage, MemoryRecord, Segment, WriteReport, ensure_utc
from langchain_memoryos.scoring import f_score, gate, heat, recency
from langchain_memoryos.store.repository import MemoryRepository, UserLease, UserState, page_key
from langchain_memoryos.store.unit_of_work import MAX_ATTEMPTS, commit_fork, fork_user
from langchain_memoryos.store.vector_index import Vector

__all__ = ["WRITE_STAGES", "EngineSettings", "TurnWrite", "add_turn", "idle_horizon", "run_stage", "segment_heat"]

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


#: Where a write goes next (the write graph's node names; ``"done"`` ends the turn).
WRITE_STAGES = (
    "stm_append",
    "chain_link",
    "mtm_insert",
    "heat_evict",
    "persona_promote",
    "write_gate",
    "relation_judge",
    "fuse",
    "lpm_commit",
)


@dataclass
class TurnWrite:
    """One ``add_turn`` on its way through the write stages (the write graph's nodes share it).

    Attributes:
        user_id, thread_id, user_input, agent_response, timestamp, metadata, turn_id: the request.
        report: what happened (returned by ``add_turn``).
        page: the page the turn adds (built once, by :func:`turn_page`).
        vector: the page's embedding, when :func:`embed_turn` computed it before
            the user's lock was taken (else ``stm_append`` computes it).
        lease: the user's write lock while the turn is written (taken by the
            graph's entry node unless the caller holds it).
        state: the user's state (loaded by ``stm_append``).
        moving: pages leaving STM (overflow, then idle threads), oldest first.
        current: the page being moved (after ``chain_link``).
        created: the segment ``mtm_insert`` just created ("" when it joined one).
        records: the promoted segment's records still to write.
        write: the record going through the AMU stages.
        next: the next stage (a node name, or ``"done"``).
        optimistic: judge without the user's lock (the controller may call a
            model): the stages run on a private copy of the user's state,
            which is committed only if the user did not move meanwhile;
            otherwise the turn runs again on the new state, reusing the
            answers to the same requests (``judgements``). After
            :data:`MAX_ATTEMPTS` such runs it runs under the lock, and a
            request still unanswered is decided offline. ``False``: the whole
            turn runs under the lock (a local controller, as the offline
            default, makes no model call).
        judgements: the controller's answers so far, by request.
        base: the revision of the user's state the private copy was taken from
            (``None``: the turn works on the cached state, under its lease).
        attempts: how many times the turn found the user moved at commit.
        queued: a background write (its worker must not wait for its own queue).

    Example:
        >>> TurnWrite("u", "t", "hi", "hello", None, None, None).next
        'stm_append'
    """

    user_id: str
    thread_id: str
    user_input: str
    agent_response: str
    timestamp: Any
    metadata: Mapping[str, Any] | None
    turn_id: str | None
    report: WriteReport = field(default_factory=lambda: WriteReport(page_id=""))
    page: DialoguePage | None = None
    vector: Vector | None = None
    lease: UserLease | None = None
    state: UserState | None = None
    moving: list[tuple[DialoguePage, Vector]] = field(default_factory=list)
    current: tuple[DialoguePage, Vector, PageAnalysis] | None = None
    created: str = ""
    records: list[RecordWrite] = field(default_factory=list)
    write: RecordWrite | None = None
    next: str = "stm_append"
    optimistic: bool = False
    judgements: Judgements = field(default_factory=Judgements)
    base: int | None = None
    attempts: int = 0
    queued: bool = False

    def __post_init__(self) -> None:
        self.judgements.count = self._count

    def _count(self, judgement: str, usage: ControllerUsage) -> None:
        """Count a judgement's model usage on the state the turn works on (committed with it)."""
        count_usage(self.user, judgement, usage)

    @property
    def user(self) -> UserState:
        """The loaded user state (after ``stm_append``)."""
        assert self.state is not None, "stm_append loads the user state first"
        return self.state

    def restart(self) -> None:
        """Start the turn again from ``stm_append`` (the user moved): keep the request, vector and judgements."""
        self.attempts += 1
        self.judgements.calls = self.attempts < MAX_ATTEMPTS
        self.report = WriteReport(page_id="")
        self.page = None
        self.state, self.base = None, None
        self.moving, self.current, self.created, self.records, self.write = [], None, "", [], None
        self.next = "stm_append"


def open_turn(repo: MemoryRepository, t: TurnWrite) -> Step[UserState]:
    """Step: the state a turn works on: a private copy of the user (optimistic), else the user under its lease.

    The lock is held only to load (and copy) the user: never while a model
    is asked (see :mod:`langchain_memoryos.store.unit_of_work`).

    Example:
        >>> from langchain_memoryos.pipeline.effects import Services, run_sync
        >>> from langgraph.store.memory import InMemoryStore
        >>> repo = MemoryRepository(2)
        >>> t = TurnWrite("u", "t", "hi", "", None, None, None, optimistic=True)
        >>> services = Services(InMemoryStore(), None, None, lease=repo.lease)  # type: ignore[arg-type]
        >>> state = run_sync(open_turn(repo, t), services)
        >>> state is repo.cached("u"), t.base == repo.cached("u").revision, t.lease is None
        (False, True, True)
    """
    if t.optimistic and t.judgements.calls:
        t.state, t.base = yield from fork_user(repo, t.user_id)
    else:
        if t.lease is None:
            t.lease = yield Lock(t.user_id)
        t.state = yield from repo.load(t.user_id)
    return t.state


def commit_turn(repo: MemoryRepository, t: TurnWrite) -> Step[None]:
    """Step: store the turn's writes in one batch, or restart the turn when the user moved meanwhile.

    A turn that worked under its lease flushes its writes and releases the
    lease. A turn that worked on a private copy commits it only if the user's
    revision is the one it copied (:func:`~langchain_memoryos.store.unit_of_work.commit_fork`);
    else it starts again from ``stm_append`` (:meth:`TurnWrite.restart`).
    """
    if t.base is None:
        yield StoreBatch(t.user.take_ops())
        if t.lease is not None:
            t.lease.release()
    elif not (yield from commit_fork(repo, t.user, t.base)):
        t.restart()


def _after_mtm(t: TurnWrite, settings: EngineSettings) -> str:
    """After a page reached MTM: the next page to move, else a hot segment to promote, else done."""
    if t.moving:
        return "chain_link"
    return "persona_promote" if _hot_segments(t.user, settings) else "done"


def _after_record(t: TurnWrite, settings: EngineSettings) -> str:
    """After a record's AMU path: the next record, else the next hot segment, else done."""
    return "write_gate" if t.records else ("persona_promote" if _hot_segments(t.user, settings) else "done")


def _hot_segments(state: UserState, settings: EngineSettings) -> list[Segment]:
    config = settings.config
    clock = state.clock
    hot = [
        s
        for s in state.segments.values()
        if s.pending_page_ids and segment_heat(s, clock, config) >= config.promotion_heat
    ]
    return sorted(hot, key=lambda s: (s.created_at, s.id))


def stage_stm_append(repo: MemoryRepository, settings: EngineSettings, t: TurnWrite) -> Step[None]:
    """``stm_append``: the page joins its thread's STM; overflow and idle threads' pages queue for MTM.

    Re-adding the same turn (same ``turn_id``, or same thread, timestamp and
    text) changes nothing (``report.added`` is ``False``).
    """
    config = settings.config
    page = turn_page(t)
    state = t.state if t.state is not None else (yield from open_turn(repo, t))
    stm = yield from repo.load_thread(state, t.thread_id)
    t.report.page_id = page.id
    if page.id in state.pages or any(p.id == page.id for p in stm):
        t.report.added = False
        t.next = "done"
        return
    if t.vector is None:
        yield from embed_turn(settings, t)
    vector = t.vector
    assert vector is not None
    state.stm_append(page, vector)
    state.advance_clock(page.timestamp)
    while len(state.stm[t.thread_id]) > config.stm_capacity:
        t.moving.append(state.stm_pop_oldest(t.thread_id))
    t.moving.extend(_idle_thread_pages(state, settings, current=t.thread_id))
    t.next = "chain_link" if t.moving else "done"


def turn_page(t: TurnWrite) -> DialoguePage:
    """The page a turn adds to STM (its key derives from the turn, so a replay finds it); built once per turn.

    Example:
        >>> turn_page(TurnWrite("u", "t", "hi", "hello", 0, None, "t1")).metadata
        {'turn_id': 't1'}
    """
    if t.page is not None:
        return t.page
    ts = ensure_utc(t.timestamp)
    page = DialoguePage(
        id=page_key(t.thread_id, t.turn_id, ts.isoformat(), t.user_input, t.agent_response),
        user_input=t.user_input,
        agent_response=t.agent_response,
        timestamp=ts,
        thread_id=t.thread_id,
        metadata=dict(t.metadata or {}),
    )
    if t.turn_id is not None:
        page.metadata.setdefault("turn_id", t.turn_id)
    t.page = page
    return page


def embed_turn(settings: EngineSettings, t: TurnWrite) -> Step[None]:
    """Step: embed the turn's page into ``t.vector``.

    It needs no user state, so ``MemoryOS`` runs it before taking the user's
    lock: the slowest part of a write (the encoder) never holds the lock, and
    ``stm_append`` then only stores. ``stm_append`` runs it itself when the
    vector is missing (the write graph used as a subgraph).

    Example:
        >>> embed_turn  # doctest: +ELLIPSIS
        <function embed_turn at ...>
    """
    text = turn_page(t).embedding_text
    t.vector = (yield Embed((embedding_text(text, settings.config.max_embedding_chars),)))[0]


def _idle_thread_pages(
    state: UserState, settings: EngineSettings, *, current: str, now: _dt.datetime | None = None
) -> list[tuple[DialoguePage, Vector]]:
    """The STM pages of the user's idle threads, popped oldest first (``stm_idle_seconds``).

    A thread is idle when its newest page is older than ``stm_idle_seconds``
    at :func:`idle_horizon`. The current thread is never flushed.
    """
    idle = settings.config.stm_idle_seconds
    horizon = idle_horizon(state.clock, settings.config, now)
    out: list[tuple[DialoguePage, Vector]] = []
    if idle is None or horizon is None:
        return out
    for thread, pages in list(state.stm.items()):
        if thread == current or not pages:
            continue
        newest = max(p.timestamp for p in pages)
        if (horizon - newest).total_seconds() <= idle:
            continue
        while state.stm[thread]:
            out.append(state.stm_pop_oldest(thread))
    return out


def idle_horizon(
    clock: _dt.datetime | None, config: MemoryOSConfig, now: _dt.datetime | None = None
) -> _dt.datetime | None:
    """The time at which threads' idleness is judged: the conversation clock, capped at the wall clock.

    The conversation clock is the user's latest timestamp, so a turn dated
    ahead of the wall clock (allowed up to ``max_clock_skew_seconds``: a fast
    client clock, a local time passed as UTC) would otherwise make another
    thread look idle and flush its STM. Capped at the wall clock, only a
    real gap does: replayed or imported conversations dated in the past are
    judged on their own clock as before. With ``max_clock_skew_seconds=None``
    (no wall-clock check) the conversation clock alone decides.

    Args:
        clock: the user's conversation clock (``None``: no turn yet).
        config: ``max_clock_skew_seconds`` decides whether the cap applies.
        now: the wall clock (default: this machine's).

    Returns:
        The horizon, or ``None`` without a clock.

    Example:
        >>> import datetime as dt
        >>> now = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
        >>> idle_horizon(now + dt.timedelta(hours=20), MemoryOSConfig(), now) == now
        True
        >>> idle_horizon(now + dt.timedelta(hours=20), MemoryOSConfig(max_clock_skew_seconds=None), now).hour
        20
    """
    if clock is None or config.max_clock_skew_seconds is None:
        return clock
    wall = now if now is not None else _dt.datetime.now(_dt.UTC)
    return min(clock, wall)


def stage_chain_link(settings: EngineSettings, t: TurnWrite) -> Step[None]:
    """``chain_link``: the controller's page analysis (chain link and meta, keywords, topic, records)."""
    state = t.user
    page, vector = t.moving.pop(0)
    tails: dict[str, str] = state.meta.setdefault("chain_tails", {})
    previous = state.pages.get(tails.get(page.thread_id, ""))
    similarity = None
    if previous is not None and previous.id in state.page_index:
        similarity = float(np.dot(state.page_index.get(previous.id), vector))
    analysis: PageAnalysis = yield AnalyzePage(page, previous, similarity)
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
    t.report.moved_to_mtm.append(page.id)
    t.current = (page, vector, analysis)
    t.next = "mtm_insert"


def stage_mtm_insert(settings: EngineSettings, t: TurnWrite) -> None:
    """``mtm_insert``: the page joins the best segment (``F_score > theta``) or starts a new one."""
    config = settings.config
    state = t.user
    assert t.current is not None
    page, vector, analysis = t.current
    t.current, t.created = None, ""
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
        if best.id not in t.report.segments_joined:
            t.report.segments_joined.append(best.id)
    else:
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
        t.report.segments_created.append(seg.id)
        t.created = seg.id
    over = t.created and len(state.segments) > config.mtm_max_segments
    t.next = "heat_evict" if over else _after_mtm(t, settings)


def stage_heat_evict(settings: EngineSettings, t: TurnWrite) -> None:
    """``heat_evict``: over ``mtm_max_segments``, the coldest segment (never the new one) and its pages go."""
    evict_coldest(t.user, settings, t.report, keep=t.created)
    t.next = _after_mtm(t, settings)


def stage_persona_promote(settings: EngineSettings, t: TurnWrite) -> Step[None]:
    """``persona_promote``: the first hot segment updates the persona and queues its records for AMU.

    Its new pages' candidate records and the controller's further records are
    embedded in one batch and their independent relation judgements made ahead
    (concurrently in the async path); then ``L_interaction`` resets to 0.
    """
    config = settings.config
    state = t.user
    seg = _hot_segments(state, settings)[0]
    clock = state.clock
    pages = [state.pages[p] for p in seg.pending_page_ids if p in state.pages]
    result: PromotionResult = yield PromoteSegment(seg, pages, state.persona)
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
    t.records = [
        RecordWrite(r, now=now, source="promotion", vector=vectors.get(r.summary), prejudged=prejudged.get(i))
        for i, r in enumerate(records)
    ]
    seg.pending_page_ids = []
    seg.l_interaction = 0
    seg.promotions += 1
    seg.heat = segment_heat(seg, clock, config)
    state.put_segment(seg)
    t.report.segments_promoted.append(seg.id)
    t.next = _after_record(t, settings)


def _record_done(t: TurnWrite, settings: EngineSettings) -> None:
    assert t.write is not None
    stage = next_stage(t.write)
    if stage == "done":
        t.report.events.extend(t.write.events)
        t.write = None
        t.next = _after_record(t, settings)
    else:
        t.next = stage


def stage_write_gate(settings: EngineSettings, t: TurnWrite) -> Step[None]:
    """``write_gate``: the next record's gate score and candidates (AMU)."""
    t.write = t.records.pop(0)
    yield from write_gate(t.user, t.write, settings.amu)
    _record_done(t, settings)


def stage_relation_judge(settings: EngineSettings, t: TurnWrite) -> Step[None]:
    """``relation_judge``: duplicate / update / separate for all candidates, then the action rule (AMU)."""
    assert t.write is not None
    yield from relation_judge(t.user, t.write)
    _record_done(t, settings)


def stage_fuse(settings: EngineSettings, t: TurnWrite) -> Step[None]:
    """``fuse``: one current record from the new record and those it updates (AMU)."""
    assert t.write is not None
    yield from fuse(t.user, t.write)
    _record_done(t, settings)


def stage_lpm_commit(settings: EngineSettings, t: TurnWrite) -> Step[None]:
    """``lpm_commit``: store the record, log it, FIFO capacity (AMU)."""
    assert t.write is not None
    lpm_commit(t.user, t.write, settings.amu)
    _record_done(t, settings)
    return
    yield  # pragma: no cover - a step like the others


def run_stage(repo: MemoryRepository, settings: EngineSettings, t: TurnWrite) -> Step[None]:
    """Step: run the stage ``t.next`` names; the turn's writes are flushed when the turn is done.

    Example:
        >>> run_stage  # doctest: +ELLIPSIS
        <function run_stage at ...>
    """
    yield from judged(_stage(repo, settings, t), t.judgements)
    if t.next == "done" and t.state is not None:
        yield from commit_turn(repo, t)


def _stage(repo: MemoryRepository, settings: EngineSettings, t: TurnWrite) -> Step[None]:
    stage = t.next
    if stage == "stm_append":
        yield from stage_stm_append(repo, settings, t)
    elif stage == "chain_link":
        yield from stage_chain_link(settings, t)
    elif stage == "mtm_insert":
        stage_mtm_insert(settings, t)
    elif stage == "heat_evict":
        stage_heat_evict(settings, t)
    elif stage == "persona_promote":
        yield from stage_persona_promote(settings, t)
    elif stage == "write_gate":
        yield from stage_write_gate(settings, t)
    elif stage == "relation_judge":
        yield from stage_relation_judge(settings, t)
    elif stage == "fuse":
        yield from stage_fuse(settings, t)
    elif stage == "lpm_commit":
        yield from stage_lpm_commit(settings, t)
    else:
        raise ValueError(f"unknown write stage {stage!r}")


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
    optimistic: bool = False,
) -> Step[WriteReport]:
    """Step: store one exchange and run everything it triggers, stage by stage.

    The page goes to the thread's STM; while STM is over capacity its oldest
    page moves to MTM (chain link, keywords, segment join or creation, heat
    eviction); the STM of the user's idle threads moves too
    (``stm_idle_seconds``); then every hot segment is promoted and its records
    go through the AMU stages. The stages are those of the write graph
    (:data:`WRITE_STAGES`), run here directly; all writes are flushed in one
    store batch. Re-adding the same turn changes nothing.

    Example:
        >>> add_turn  # doctest: +ELLIPSIS
        <function add_turn at ...>
    """
    t = TurnWrite(user_id, thread_id, user_input, agent_response, timestamp, metadata, turn_id, optimistic=optimistic)
    yield from embed_turn(settings, t)
    try:
        while t.next != "done":
            yield from run_stage(repo, settings, t)
    except BaseException:
        if t.lease is not None:
            t.lease.fail()
        raise
    return t.report


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
