"""Typed long-term records (AMU's ``m = {a, i, p, e, s, v, c}``), relations and write events.

The vocabularies of a record's fields are ``Literal`` types with their values as tuples.
"""

from __future__ import annotations

import copy
import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from langchain_memoryos.schema.timestamps import _EPOCH, _iso, _ts

__all__ = [
    "ASPECTS",
    "INTENTS",
    "SENTIMENTS",
    "Aspect",
    "FactKind",
    "Intent",
    "MemoryRecord",
    "Relation",
    "RelationLabel",
    "Sentiment",
    "WriteAction",
    "WriteEvent",
    "WriteReport",
]

Aspect = Literal["personal_profile", "social_relationship", "activity", "health", "preference", "other"]
Intent = Literal["inform", "request", "express", "plan", "reflect", "other"]
Sentiment = Literal["positive", "neutral", "negative"]
RelationLabel = Literal["duplicate", "update", "separate"]
WriteAction = Literal["stored", "discarded", "updated", "filtered", "evicted", "edited", "deleted"]
FactKind = Literal["user", "agent"]

ASPECTS: tuple[str, ...] = get_args(Aspect)
INTENTS: tuple[str, ...] = get_args(Intent)
SENTIMENTS: tuple[str, ...] = get_args(Sentiment)


@dataclass
class MemoryRecord:
    """A typed long-term memory record (AMU's ``m = {a, i, p, e, s, v, c}``).

    Attributes:
        id: record key ("" until stored).
        kind: ``"user"`` for the user knowledge base, ``"agent"`` for agent traits.
        aspect: what the fact is about.
        intent: how the user presented it.
        personal: whether it carries reusable personal information.
        entities: salient entities that anchor the fact.
        summary: one affect-neutral, third-person, self-contained statement.
        sentiment: the user's affect, kept apart from the summary.
        confidence: rubric score in [0, 1] (explicit, stable, unambiguous).
        created_at: when the fact first entered memory.
        updated_at: when it was last fused or changed.
        source_page_ids: dialogue pages the fact came from.
        slot: the property the fact fills, when the controller can name it
            (``location``, ``sister.employer``, ``preference:coffee``; ``""``
            when unknown). Our addition to AMU's record: records with the same
            slot are always relation candidates, whatever their cosine.
        subject: who the fact is about, by the name its summary uses
            (``"Caroline"``); ``""`` for the user unnamed ("The user ...").
            Facts of two people are never duplicates or updates of each other.
        valid_at: when the fact was said: the timestamp of the turn it was read off
            (``None``: not known, e.g. an ``add_fact`` or a record stored before
            facts were dated). A fused record carries its newest statement's.
        metadata: the caller's JSON metadata (``add_fact(..., metadata=...)``;
            ``{}`` for a fact read off a page). A fused record carries the
            metadata of the records it fuses, the newest statement's winning a key.

    Example:
        >>> import datetime as dt
        >>> said = dt.datetime(2023, 5, 7, 14, tzinfo=dt.UTC)
        >>> r = MemoryRecord(summary="The user lives in Denver.", aspect="personal_profile", valid_at=said)
        >>> back = MemoryRecord.from_dict(r.to_dict())
        >>> back.summary, back.valid_at == said
        ('The user lives in Denver.', True)
        >>> MemoryRecord.from_dict({"summary": "x"}).valid_at is None  # a record stored without it
        True
        >>> MemoryRecord.from_dict(MemoryRecord(summary="x", metadata={"source": "crm"}).to_dict()).metadata
        {'source': 'crm'}
    """

    id: str = ""
    kind: FactKind = "user"
    aspect: Aspect = "other"
    intent: Intent = "inform"
    personal: bool = True
    entities: list[str] = field(default_factory=list)
    summary: str = ""
    sentiment: Sentiment = "neutral"
    confidence: float = 1.0
    created_at: _dt.datetime = field(default_factory=lambda: _EPOCH)
    updated_at: _dt.datetime = field(default_factory=lambda: _EPOCH)
    source_page_ids: list[str] = field(default_factory=list)
    slot: str = ""
    subject: str = ""
    valid_at: _dt.datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Serialise to JSON-compatible values (``metadata`` only when there is some).

        Returns:
            A dict that :meth:`from_dict` reads back.

        Example:
            >>> import json
            >>> r = MemoryRecord(summary="The user lives in Oslo.", entities=["Oslo"], confidence=0.9)
            >>> MemoryRecord.from_dict(json.loads(json.dumps(r.to_dict()))) == r  # JSON and back, unchanged
            True
        """
        return {
            "id": self.id,
            "kind": self.kind,
            "aspect": self.aspect,
            "intent": self.intent,
            "personal": self.personal,
            "entities": list(self.entities),
            "summary": self.summary,
            "sentiment": self.sentiment,
            "confidence": self.confidence,
            "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at),
            "source_page_ids": list(self.source_page_ids),
            "slot": self.slot,
            "subject": self.subject,
            "valid_at": _iso(self.valid_at) if self.valid_at is not None else None,
        } | ({"metadata": copy.deepcopy(self.metadata)} if self.metadata else {})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryRecord:
        """Read a record written by :meth:`to_dict`.

        Args:
            data: the stored dict.

        Returns:
            The record.

        Example:
            >>> MemoryRecord.from_dict({"summary": "x"}).kind
            'user'
        """
        return cls(
            id=str(data.get("id", "")),
            kind=data.get("kind", "user"),
            aspect=data.get("aspect", "other"),
            intent=data.get("intent", "inform"),
            personal=bool(data.get("personal", True)),
            entities=list(data.get("entities", [])),
            summary=str(data.get("summary", "")),
            sentiment=data.get("sentiment", "neutral"),
            confidence=float(data.get("confidence", 1.0)),
            created_at=_ts(data.get("created_at")),
            updated_at=_ts(data.get("updated_at")),
            source_page_ids=list(data.get("source_page_ids", [])),
            slot=str(data.get("slot", "")),
            subject=str(data.get("subject", "")),
            valid_at=_ts(data["valid_at"]) if data.get("valid_at") is not None else None,
            metadata=copy.deepcopy(dict(data.get("metadata") or {})),
        )


@dataclass
class Relation:
    """The relation-judge's label for one candidate of a new record.

    Attributes:
        candidate_id: id of the existing record.
        label: duplicate, update or separate.
        similarity: cosine between the two records' summaries.
        reason: why the judge chose the label.

    Example:
        >>> r = Relation("f1", "update", 0.8, "same slot: location")
        >>> Relation.from_dict(r.to_dict()) == r
        True
        >>> from langchain_memoryos.scoring import decide_action
        >>> decide_action([r, Relation("f2", "separate")])  # any update: fuse
        'fuse'
    """

    candidate_id: str
    label: RelationLabel
    similarity: float = 0.0
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Serialise to JSON-compatible values.

        Example:
            >>> Relation("f_1", "update", 0.8123456789, "same location").to_dict()
            {'candidate_id': 'f_1', 'label': 'update', 'similarity': 0.8123456789, 'reason': 'same location'}
        """
        return {
            "candidate_id": self.candidate_id,
            "label": self.label,
            "similarity": self.similarity,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Relation:
        """Read a relation written by :meth:`to_dict`.

        Example:
            >>> Relation.from_dict({"candidate_id": "f", "label": "duplicate"}).similarity
            0.0
        """
        return cls(
            candidate_id=str(data["candidate_id"]),
            label=data["label"],
            similarity=float(data.get("similarity", 0.0)),
            reason=str(data.get("reason", "")),
        )


@dataclass
class WriteEvent:
    """One decision of the AMU write path, logged per user.

    Attributes:
        action: what the AMU write path decided: ``stored``, ``discarded``
            (a duplicate of a kept record), ``updated`` (fused with the records
            it revises) or ``filtered`` (rejected by the write-gate); or what
            happened to a kept record: ``evicted`` (over capacity), ``edited``
            or ``deleted`` (a correction by the user through ``update_fact`` /
            ``delete_fact``).
        record: the record concerned (the fused record for ``updated``, the
            removed record for ``evicted`` and ``deleted``, the new text for
            ``edited``).
        relations: the relation-judge's labels for each candidate.
        replaced_ids: records deleted by this write (fused olds and the
            duplicates of the new record; the evicted or deleted record).
        reason: a human-readable reason.
        timestamp: when the decision was made (conversation clock).
        id: event key.
        source: where the fact came from (``promotion``, ``add_fact``, ``tool``).
        gate_score: the write-gate score ``G``.
        fallback: whether a fallback controller made the judgement.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> m = MemoryOS()
        >>> [(e.action, e.reason) for e in m.add_fact("I'm vegan.", user_id="u")]
        [('stored', 'new fact')]
        >>> [(e.action, e.reason) for e in m.add_fact("I am vegan.", user_id="u")]  # doctest: +ELLIPSIS
        [('discarded', 'duplicate of f_...')]
        >>> [(e.action, e.reason) for e in m.add_fact("Book a table for two.", user_id="u")]  # the caller's word
        [('stored', 'new fact')]
    """

    action: WriteAction
    record: MemoryRecord
    relations: list[Relation] = field(default_factory=list)
    replaced_ids: list[str] = field(default_factory=list)
    reason: str = ""
    timestamp: _dt.datetime = field(default_factory=lambda: _EPOCH)
    id: str = ""
    source: str = "add_fact"
    gate_score: float = 0.0
    fallback: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Serialise to JSON-compatible values.

        Example:
            >>> import json
            >>> e = WriteEvent("stored", MemoryRecord(summary="The user is vegan."), reason="new fact")
            >>> WriteEvent.from_dict(json.loads(json.dumps(e.to_dict()))) == e  # JSON and back, unchanged
            True
        """
        return {
            "id": self.id,
            "action": self.action,
            "record": self.record.to_dict(),
            "relations": [r.to_dict() for r in self.relations],
            "replaced_ids": list(self.replaced_ids),
            "reason": self.reason,
            "timestamp": _iso(self.timestamp),
            "source": self.source,
            "gate_score": self.gate_score,
            "fallback": self.fallback,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WriteEvent:
        """Read an event written by :meth:`to_dict`.

        Example:
            >>> WriteEvent.from_dict({"action": "stored", "record": {}}).record.kind
            'user'
        """
        return cls(
            action=data["action"],
            record=MemoryRecord.from_dict(data.get("record", {})),
            relations=[Relation.from_dict(r) for r in data.get("relations", [])],
            replaced_ids=list(data.get("replaced_ids", [])),
            reason=str(data.get("reason", "")),
            timestamp=_ts(data.get("timestamp")),
            id=str(data.get("id", "")),
            source=str(data.get("source", "add_fact")),
            gate_score=float(data.get("gate_score", 0.0)),
            fallback=bool(data.get("fallback", False)),
        )


@dataclass
class WriteReport:
    """What one ``add_turn`` did.

    Attributes:
        page_id: the page key of the turn.
        added: ``False`` when the page already existed (idempotent replay).
        moved_to_mtm: pages that left STM for MTM.
        segments_joined: existing segments that received a page.
        segments_created: new segments.
        segments_evicted: segments removed by heat-evict.
        segments_promoted: segments promoted to long-term memory.
        events: the AMU write events of this turn.
        queued: the turn was queued for a background write (``write_mode="background"``):
            the other fields are filled in later, not in this report.

    Example:
        >>> WriteReport(page_id="p").added
        True
    """

    page_id: str
    added: bool = True
    moved_to_mtm: list[str] = field(default_factory=list)
    segments_joined: list[str] = field(default_factory=list)
    segments_created: list[str] = field(default_factory=list)
    segments_evicted: list[str] = field(default_factory=list)
    segments_promoted: list[str] = field(default_factory=list)
    events: list[WriteEvent] = field(default_factory=list)
    queued: bool = False
