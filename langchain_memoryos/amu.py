"""The AMU write path for long-term memory: gate → candidates → judge → action → fuse.

Every record that would enter the user knowledge base or the agent traits
passes here, whether it comes from a promoted segment, ``add_fact`` or a tool.
The decisions themselves are the pure functions of :mod:`langchain_memoryos.scoring`.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from langchain_memoryos.config import MemoryOSConfig, ModelThresholds
from langchain_memoryos.controllers.base import FuseResult, RelationJudgement
from langchain_memoryos.effects import Control, Embed, Step
from langchain_memoryos.schema import MemoryRecord, WriteEvent
from langchain_memoryos.scoring import decide_action, gate, select_candidates
from langchain_memoryos.storage import UserState
from langchain_memoryos.vector_index import Vector

__all__ = ["AMUSettings", "write_record"]


@dataclass(frozen=True)
class AMUSettings:
    """The thresholds and capacities the write path needs.

    Example:
        >>> from langchain_memoryos.config import MemoryOSConfig
        >>> AMUSettings.from_config(MemoryOSConfig(), MemoryOSConfig().thresholds(None)).gate_threshold
        0.5
    """

    gate_threshold: float
    write_similarity: float
    user_capacity: int
    agent_capacity: int

    @classmethod
    def from_config(cls, config: MemoryOSConfig, thresholds: ModelThresholds) -> AMUSettings:
        """Build from the memory's config and resolved thresholds.

        Example:
            >>> from langchain_memoryos.config import MemoryOSConfig
            >>> AMUSettings.from_config(MemoryOSConfig(), MemoryOSConfig().thresholds(None)).user_capacity
            100
        """
        return cls(
            gate_threshold=config.gate_threshold,
            write_similarity=thresholds.write_similarity,
            user_capacity=config.user_kb_capacity,
            agent_capacity=config.agent_traits_capacity,
        )


def write_record(
    state: UserState,
    record: MemoryRecord,
    settings: AMUSettings,
    *,
    now: _dt.datetime,
    source: str,
    vector: Vector | None = None,
) -> Step[WriteEvent]:
    """Step: pass one typed record through the AMU write path and log the decision.

    Args:
        state: the user's state (mutations are buffered for the caller's flush).
        record: the new record (its ``kind`` picks the user KB or agent traits).
        settings: thresholds and capacities.
        now: the decision time (conversation clock).
        source: where the record came from (``promotion``, ``add_fact``, ``tool``).
        vector: the summary's embedding when the caller already has it (a
            promotion embeds all its records in one batch).

    Returns:
        The logged :class:`~langchain_memoryos.schema.WriteEvent`.

    Example:
        >>> write_record  # doctest: +ELLIPSIS
        <function write_record at ...>
    """
    record.created_at = record.created_at if record.created_at.year > 1970 else now
    record.updated_at = now
    verdict = gate(record, settings.gate_threshold)
    if not verdict.admitted:
        event = WriteEvent(
            "filtered", record, reason=f"write-gate: {verdict.reason}", timestamp=now, source=source,
            gate_score=verdict.score,
        )
        state.log_event(event)
        return event
    if vector is None:
        vector = (yield Embed((record.summary,)))[0]
    kind = record.kind
    index = state.fact_index[kind]
    existing = [(state.facts[kind][key], score) for key, score in index.search(vector, len(index))]
    candidates = select_candidates(record, existing, settings.write_similarity)
    fallback = False
    relations = []
    if candidates:
        judgement: RelationJudgement = yield Control("judge_relations", (record, candidates))
        state.count_usage(judgement.usage.llm_calls, judgement.usage.llm_tokens)
        fallback = judgement.usage.fallback
        relations = judgement.relations
    action = decide_action(relations)
    if action == "discard":
        dups = [r.candidate_id for r in relations if r.label == "duplicate"]
        event = WriteEvent(
            "discarded", record, relations=relations, reason=f"duplicate of {', '.join(dups)}",
            timestamp=now, source=source, gate_score=verdict.score, fallback=fallback,
        )
        state.log_event(event)
        return event
    replaced: list[str] = []
    if action == "fuse":
        olds = [state.facts[kind][r.candidate_id] for r in relations if r.label == "update"]
        fused: FuseResult = yield Control("fuse", (record, olds))
        state.count_usage(fused.usage.llm_calls, fused.usage.llm_tokens)
        fallback = fallback or fused.usage.fallback
        new = fused.record
        new.kind = kind
        new.updated_at = now
        if new.summary != record.summary:
            vector = (yield Embed((new.summary,)))[0]
        for old in olds:
            state.delete_fact(kind, old.id)
            replaced.append(old.id)
        record = new
    record.id = record.id or f"f_{state.next_seq():012d}"
    state.put_fact(record, vector)
    capacity = settings.user_capacity if kind == "user" else settings.agent_capacity
    evicted = _enforce_capacity(state, kind, capacity, keep=record.id)
    if action == "fuse":
        olds_text = ", ".join(replaced)
        reason = f"updates {olds_text}: fused into one current record"
        event = WriteEvent(
            "updated", record, relations=relations, replaced_ids=replaced + evicted, reason=reason,
            timestamp=now, source=source, gate_score=verdict.score, fallback=fallback,
        )
    else:
        reason = "new fact" if not relations else "separate from every candidate"
        if evicted:
            reason += f"; capacity {capacity} reached, evicted oldest {', '.join(evicted)}"
        event = WriteEvent(
            "stored", record, relations=relations, replaced_ids=evicted, reason=reason,
            timestamp=now, source=source, gate_score=verdict.score, fallback=fallback,
        )
    state.log_event(event)
    return event


def _enforce_capacity(state: UserState, kind: str, capacity: int, *, keep: str) -> list[str]:
    """FIFO: drop the records that entered (or were last updated) earliest beyond the capacity."""
    facts = state.facts[kind]
    if len(facts) <= capacity:
        return []
    ordered = sorted((r for r in facts.values() if r.id != keep), key=lambda r: (r.updated_at, r.created_at, r.id))
    excess = len(facts) - capacity
    evicted = [r.id for r in ordered[:excess]]
    for rid in evicted:
        state.delete_fact(kind, rid)  # type: ignore[arg-type]
    return evicted
