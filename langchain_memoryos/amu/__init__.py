"""The AMU write path for long-term memory: gate → candidates → judge → action → fuse.

Every record that would enter the user knowledge base or the agent traits
passes here, whether it comes from a page, a promoted segment, ``add_fact`` or a tool:
through the AMU stages of the write table (:data:`~langchain_memoryos.pipeline.stages.WRITE_STAGES`:
``write_gate → relation_judge → fuse → lpm_commit``), the functions below.
The decisions themselves are the pure functions of :mod:`langchain_memoryos.scoring`.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_memoryos.embeddings import encode_texts
from langchain_memoryos.index.vector_index import Vector
from langchain_memoryos.kernel.controller import FuseResult, RelationJudgement
from langchain_memoryos.kernel.effects import Embed, Parallel, Step
from langchain_memoryos.kernel.judgements import FuseRecords, JudgeRelations
from langchain_memoryos.schema import FactKind, MemoryRecord, Relation, WriteAction, WriteEvent
from langchain_memoryos.scoring import decide_action, gate, select_candidates
from langchain_memoryos.store.repository import UserState
from langchain_memoryos.store.settings import AMUSettings, EngineSettings, StageContext

__all__ = [
    "LEAST_USEFUL",
    "AMURun",
    "AMUSettings",
    "Prejudged",
    "RecordRun",
    "RecordWrite",
    "admitted_summaries",
    "embed_summaries",
    "summary_rows",
    "evict_over_capacity",
    "prejudge_relations",
    "stage_fuse",
    "stage_lpm_commit",
    "stage_relation_judge",
    "stage_write_gate",
]


#: Which fact goes first when a knowledge base is over its capacity (:func:`evict_over_capacity`, the one
#: place that orders them, and the reason of every ``evicted`` event): the lowest confidence (the write-gate's
#: score), then the oldest (last written or updated), then the earliest created, then the lowest id.
LEAST_USEFUL = "least useful: lowest confidence, then oldest"


def _usefulness(record: MemoryRecord) -> tuple[float, _dt.datetime, _dt.datetime, str]:
    """The eviction order key of :data:`LEAST_USEFUL` (the smallest goes first)."""
    return (record.confidence, record.updated_at, record.created_at, record.id)


@dataclass
class RecordWrite:
    """One record on its way through the AMU write path (the stages share it).

    Attributes:
        record: the record (replaced by the fused record after ``fuse``).
        now: the decision time (conversation clock).
        source: where the record came from (``page``, ``promotion``, ``add_fact``, ``tool``).
        vector: the summary's embedding (given, or computed by :func:`write_gate`).
        offline: judge and fuse with the memory's offline controller (no model call): a page's
            records, which the controller's one call per page already wrote as facts.
        prejudged: a relation judgement made ahead (see :func:`prejudge_relations`).
        gate_score: the write-gate's score.
        candidates: duplicate/update candidates with their cosine.
        relations: the judge's labels, for known candidates only.
        action: ``store``, ``discard`` or ``fuse`` (``None`` before judging; ``"filtered"`` when gated out).
        fallback: a fallback controller made a judgement.
        replaced: ids deleted by a fuse.
        events: the events logged so far.

    Example:
        >>> RecordWrite(MemoryRecord(summary="x"), now=_dt.datetime(2024, 1, 1), source="doc").action is None
        True
    """

    record: MemoryRecord
    now: _dt.datetime
    source: str
    vector: Vector | None = None
    offline: bool = False
    prejudged: Prejudged | None = None
    gate_score: float = 0.0
    candidates: list[tuple[MemoryRecord, float]] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    action: str | None = None
    fallback: bool = False
    replaced: list[str] = field(default_factory=list)
    events: list[WriteEvent] = field(default_factory=list)

    def log(self, state: UserState, action: WriteAction, record: MemoryRecord, reason: str, **kw: object) -> None:
        """Log one write event (and keep it in :attr:`events`)."""
        event = WriteEvent(
            action,
            record,
            list(kw.get("relations", []) or []),  # type: ignore[call-overload]
            list(kw.get("replaced", []) or []),  # type: ignore[call-overload]
            reason,
            self.now,
            source=self.source,
            gate_score=self.gate_score,
            fallback=bool(kw.get("fallback", False)),
        )
        state.log_event(event)
        self.events.append(event)


class AMURun(Protocol):
    """A run whose records go through the AMU stages one after another: a turn, or ``add_fact``'s :class:`RecordRun`.

    ``write_gate`` takes the next record of ``records`` into ``write``; the
    stage that finishes a record calls :meth:`record_done`, which says where
    the run goes next (the next record, or what the run does after its records).
    """

    records: list[RecordWrite]
    write: RecordWrite | None
    next: str

    @property
    def user(self) -> UserState:
        """The user's state the records are written to."""
        ...

    def record_done(self, settings: EngineSettings) -> None:
        """The record in ``write`` went through AMU: keep its events, set ``next``."""
        ...


@dataclass
class RecordRun:
    """Records (``add_fact``'s) on their way through the AMU stages, one after another; ``done`` after the last.

    Example:
        >>> from langchain_memoryos.config import MemoryOSConfig
        >>> state = UserState(user_id="u", label="u", dimension=2)
        >>> run = RecordRun(state, [RecordWrite(MemoryRecord(summary="x"), now=_dt.datetime(2024, 1, 1), source="doc")])
        >>> run.write = run.records.pop(0); run.record_done(EngineSettings.build(MemoryOSConfig(), None))
        >>> run.next, run.write
        ('done', None)
    """

    state: UserState
    records: list[RecordWrite]
    write: RecordWrite | None = None
    events: list[WriteEvent] = field(default_factory=list)
    next: str = "write_gate"

    @property
    def user(self) -> UserState:
        """The user's state the records are written to."""
        return self.state

    def record_done(self, settings: EngineSettings) -> None:
        """The record in ``write`` went through AMU: its events kept; the next record's ``write_gate``, else done."""
        assert self.write is not None
        self.events.extend(self.write.events)
        self.write = None
        self.next = "write_gate" if self.records else "done"


def stage_write_gate(ctx: StageContext, run: AMURun) -> Step[None]:
    """``write_gate``: the run's next record through the gate, then the candidates of an admitted record.

    A gated-out record is logged ``filtered`` (``w.action = "filtered"``) and is done; an admitted one
    goes to ``relation_judge`` when it has candidates, else (``w.action = "store"``) to ``lpm_commit``.
    """
    w = run.write = run.records.pop(0)
    state, settings = run.user, ctx.settings.amu
    record = w.record
    record.created_at = record.created_at if record.created_at.year > 1970 else w.now
    record.updated_at = w.now
    verdict = gate(record, settings.gate_threshold)
    w.gate_score = verdict.score
    if not verdict.admitted:
        w.action = "filtered"
        w.log(state, "filtered", record, f"write-gate: {verdict.reason}", fallback=w.fallback)
        run.record_done(ctx.settings)
        return
    if w.vector is None:
        w.vector = (yield Embed((record.summary,)))[0]
    w.candidates = _candidates(state, record, w.vector, settings)
    if not w.candidates:
        w.action = "store"
    run.next = "relation_judge" if w.candidates else "lpm_commit"


def stage_relation_judge(ctx: StageContext, run: AMURun) -> Step[None]:
    """``relation_judge``: duplicate / update / separate for all candidates, then the action rule.

    A record whose action is ``discard`` is logged here and is done; ``fuse`` goes to ``fuse``,
    ``store`` to ``lpm_commit``.
    """
    w, state = run.write, run.user
    assert w is not None
    ids = [cand.id for cand, _ in w.candidates]
    if w.prejudged is not None and w.prejudged[0] == ids:
        judgement: RelationJudgement = w.prejudged[1]  # counted when it was made
    else:
        judgement = yield JudgeRelations(w.record, w.candidates, offline=w.offline)
    w.fallback = w.fallback or judgement.usage.fallback
    known = set(ids)
    w.relations = [r for r in judgement.relations if r.candidate_id in known]
    w.action = decide_action(w.relations)
    if w.action == "discard":
        dups = [r.candidate_id for r in w.relations if r.label == "duplicate"]
        reason = f"duplicate of {', '.join(dups)}"
        w.log(state, "discarded", w.record, reason, relations=w.relations, fallback=w.fallback)
        run.record_done(ctx.settings)
    else:
        run.next = "fuse" if w.action == "fuse" else "lpm_commit"


def stage_fuse(ctx: StageContext, run: AMURun) -> Step[None]:
    """``fuse``: one current record from the new one and those it updates; they are deleted; on to ``lpm_commit``."""
    w, state = run.write, run.user
    assert w is not None
    kind = w.record.kind
    olds = [state.facts[kind][r.candidate_id] for r in w.relations if r.label == "update"]
    fused: FuseResult = yield FuseRecords(w.record, olds, offline=w.offline)
    w.fallback = w.fallback or fused.usage.fallback
    new = fused.record
    new.kind = kind
    new.updated_at = w.now
    new.metadata = {key: value for r in [*olds, w.record] for key, value in r.metadata.items()}  # the newest wins
    if new.summary != w.record.summary:
        w.vector = (yield Embed((new.summary,)))[0]
    # the update candidates are fused; duplicates of the new record go too
    w.replaced = [r.candidate_id for r in w.relations if r.label in ("update", "duplicate")]
    for old_id in w.replaced:
        state.delete_fact(kind, old_id)
    w.record = new
    run.next = "lpm_commit"


def stage_lpm_commit(ctx: StageContext, run: AMURun) -> Step[None]:
    """``lpm_commit``: store the record, log ``stored`` / ``updated``; over capacity the least useful goes; done."""
    w, state, settings = run.write, run.user, ctx.settings.amu
    assert w is not None
    record, kind = w.record, w.record.kind
    record.id = record.id or f"f_{state.next_seq():012d}"
    assert w.vector is not None  # set by write_gate (or fuse)
    state.put_fact(record, w.vector)
    if w.action == "fuse":
        olds_text = ", ".join(r.candidate_id for r in w.relations if r.label == "update")
        dups_text = ", ".join(r.candidate_id for r in w.relations if r.label == "duplicate")
        reason = f"updates {olds_text}: fused into one current record"
        if dups_text:
            reason += f"; duplicates {dups_text} removed"
        w.log(state, "updated", record, reason, relations=w.relations, replaced=w.replaced, fallback=w.fallback)
    else:
        reason = "new fact" if not w.relations else "separate from every candidate"
        w.log(state, "stored", record, reason, relations=w.relations, fallback=w.fallback)
    capacity = settings.user_capacity if kind == "user" else settings.agent_capacity
    for old in evict_over_capacity(state, kind, capacity, keep=record.id):
        why = f"capacity {capacity} reached: {LEAST_USEFUL} evicted for {record.id}"
        w.log(state, "evicted", old, why, replaced=[old.id])
    run.record_done(ctx.settings)
    return
    yield  # pragma: no cover - a step like the others


#: A relation judgement made ahead: the candidate ids it judged, and the judgement.
Prejudged = tuple[list[str], RelationJudgement]


def _candidates(
    state: UserState, record: MemoryRecord, vector: Vector, settings: AMUSettings
) -> list[tuple[MemoryRecord, float]]:
    index = state.fact_index[record.kind]
    existing = [(state.facts[record.kind][key], score) for key, score in index.search(vector, len(index))]
    return select_candidates(record, existing, settings.write_similarity)


def prejudge_relations(
    state: UserState,
    records: list[MemoryRecord],
    vectors: dict[str, Vector],
    settings: AMUSettings,
) -> Step[dict[int, Prejudged]]:
    """Step: judge the *independent* records of a batch at once (concurrently in the async path).

    A record is independent when no earlier admitted record of the batch
    would be its candidate and it shares no candidate with an earlier judged
    record: writing the batch in order cannot change what it is judged
    against. Those with candidates are judged in one :class:`Parallel`
    effect; the others are judged in ``relation_judge``, which also re-judges
    any record whose candidates did change after all (e.g. through FIFO
    eviction). With fewer than two such records nothing is judged ahead.

    Returns:
        ``{index in records: (candidate ids, judgement)}``.

    Example:
        >>> from langchain_memoryos.config import MemoryOSConfig
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> from langchain_memoryos.kernel.effects import Services, run_sync
        >>> settings = AMUSettings.from_config(MemoryOSConfig(), MemoryOSConfig().thresholds(None))
        >>> s = UserState(user_id="u", label="u", dimension=2)
        >>> x, y = np.array([1.0, 0.0], dtype=np.float32), np.array([0.0, 1.0], dtype=np.float32)
        >>> def fact(id, summary, slot):
        ...     return MemoryRecord(id=id, aspect="personal_profile", entities=[slot], summary=summary, slot=slot)
        >>> s.put_fact(fact("f1", "The user lives in Oslo.", "location"), x)
        >>> s.put_fact(fact("f2", "The user works at Bosch.", "employer"), y)
        >>> new = [fact("", "The user lives in Bergen.", "location"),
        ...        fact("", "The user works at Siemens.", "employer")]
        >>> vectors = {new[0].summary: x, new[1].summary: y}
        >>> services = Services(None, None, HeuristicController())  # type: ignore[arg-type]
        >>> ahead = run_sync(prejudge_relations(s, new, vectors, settings), services)
        >>> {i: (ids, [r.label for r in j.relations]) for i, (ids, j) in ahead.items()}
        {0: (['f1'], ['update']), 1: (['f2'], ['update'])}
        >>> run_sync(prejudge_relations(s, new[:1], vectors, settings), services)  # one record: judged in order
        {}
    """
    plans: list[tuple[int, MemoryRecord, list[tuple[MemoryRecord, float]]]] = []
    earlier: list[tuple[MemoryRecord, Vector]] = []
    claimed: set[str] = set()
    for i, record in enumerate(records):
        vector = vectors.get(record.summary)
        if vector is None or not gate(record, settings.gate_threshold).admitted:
            continue
        batch = [(r, float(np.dot(v, vector))) for r, v in earlier if r.kind == record.kind]
        earlier.append((record, vector))
        if select_candidates(record, batch, settings.write_similarity):
            continue  # an earlier record of this batch may be its candidate: judge it in order
        candidates = _candidates(state, record, vector, settings)
        ids = {cand.id for cand, _ in candidates}
        if not candidates or ids & claimed:
            continue
        claimed |= ids
        plans.append((i, record, candidates))
    if len(plans) < 2:
        return {}
    results = yield Parallel(tuple(JudgeRelations(rec, cands) for _, rec, cands in plans))
    out: dict[int, Prejudged] = {}
    for (i, _, cands), judgement in zip(plans, results, strict=True):
        out[i] = ([cand.id for cand, _ in cands], judgement)
    return out


def evict_over_capacity(state: UserState, kind: FactKind, capacity: int, *, keep: str) -> list[MemoryRecord]:
    """Capacity: remove the least useful records (:data:`LEAST_USEFUL`): lowest confidence first, then the oldest.

    A record's confidence is its write-gate score, so over capacity the fact the gate rated lowest
    goes; among equals (e.g. facts given with ``add_fact``, all 1.0) the one that entered (or was
    last updated) earliest goes, as in FIFO.

    Args:
        state: the user's state.
        kind: ``"user"`` (knowledge base) or ``"agent"`` (traits).
        capacity: the most records to keep.
        keep: the id of the record just written (never evicted).

    Returns:
        The evicted records, least useful first.

    Example:
        >>> s = UserState(user_id="u", label="u", dimension=2)
        >>> for day, conf in ((1, 0.9), (2, 0.6), (3, 0.9)):
        ...     r = MemoryRecord(id=f"f{day}", summary=f"fact {day}", confidence=conf,
        ...                      updated_at=_dt.datetime(2024, 1, day))
        ...     s.put_fact(r, np.ones(2, dtype=np.float32))
        >>> [r.id for r in evict_over_capacity(s, "user", 2, keep="f3")], sorted(s.facts["user"])
        (['f2'], ['f1', 'f3'])
    """
    facts = state.facts[kind]
    if len(facts) <= capacity:
        return []
    ordered = sorted((r for r in facts.values() if r.id != keep), key=_usefulness)
    evicted = ordered[: len(facts) - capacity]
    for old in evicted:
        state.delete_fact(kind, old.id)
    return evicted


def admitted_summaries(records: Sequence[MemoryRecord], gate_threshold: float) -> tuple[str, ...]:
    """The summaries of the records the write gate admits, each once, in order: what AMU embeds of them.

    Example:
        >>> r = MemoryRecord(aspect="health", intent="inform", entities=["vegan"],
        ...                  summary="The user is vegan.", confidence=0.75)
        >>> admitted_summaries([r, r], 0.5), admitted_summaries([r], 0.8)
        (('The user is vegan.',), ())
    """
    return tuple(dict.fromkeys(r.summary for r in records if gate(r, gate_threshold).admitted))


def summary_rows(
    records: Sequence[MemoryRecord], gate_threshold: float, embeddings: Embeddings
) -> tuple[tuple[str, ...], Vector | None]:
    """The summaries AMU will embed of a page's records and their rows, embedded now as its one batch.

    What a page read ahead carries (see
    :class:`~langchain_memoryos.kernel.effects.EmbedAndRead`), for
    :func:`embed_summaries` to use when that batch is the one it needs.

    Example:
        >>> from langchain_memoryos.embeddings import resolve_embeddings
        >>> r = MemoryRecord(aspect="health", intent="inform", entities=["vegan"],
        ...                  summary="The user is vegan.", confidence=0.75)
        >>> texts, rows = summary_rows([r], 0.5, resolve_embeddings())
        >>> texts, rows.shape, summary_rows([r], 0.8, resolve_embeddings())
        (('The user is vegan.',), (1, 384), ((), None))
    """
    texts = admitted_summaries(records, gate_threshold)
    return texts, encode_texts(embeddings, texts) if texts else None


def embed_summaries(
    state: UserState,
    settings: AMUSettings,
    records: list[MemoryRecord],
    known: Mapping[tuple[str, ...], Vector] | None = None,
) -> Step[dict[str, Vector]]:
    """Embed the admitted records' summaries in one batch.

    A summary that is word for word an existing fact's reuses that fact's
    vector (same text, same embedding): repeated facts cost no encoder pass.
    ``known``: rows already embedded for exactly these texts, as one batch (the
    facts read off a page while it was embedded, see
    :class:`~langchain_memoryos.kernel.effects.EmbedAndRead`): the same rows
    this batch would give, so they are used as they are.
    """
    wanted = admitted_summaries(records, settings.gate_threshold)
    vectors: dict[str, Vector] = {}
    needed = set(wanted)
    for kind, facts in state.facts.items():
        for fact in facts.values():
            if fact.summary in needed and fact.summary not in vectors:
                vectors[fact.summary] = state.fact_index[kind].get(fact.id)
    missing = tuple(s for s in wanted if s not in vectors)
    if missing:
        rows = known.get(missing) if known else None
        vectors.update(zip(missing, rows if rows is not None else (yield Embed(missing)), strict=True))
    return vectors
