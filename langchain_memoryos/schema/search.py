"""What ``MemoryOS.search`` and ``MemoryOS.get_fact`` return: scored items, a fact with its history."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Literal

from langchain_memoryos.schema.pages import DialoguePage
from langchain_memoryos.schema.records import MemoryRecord, WriteEvent

__all__ = ["FactHistory", "ForgetReport", "SearchHit"]


@dataclass
class SearchHit:
    """One item found by ``MemoryOS.search``: a dialogue page or a fact, with its score.

    Attributes:
        kind: ``"page"`` (a stored exchange) or ``"fact"`` (a user fact or agent trait).
        id: the page's or the fact's id (a fact's is what ``update_fact``,
            ``delete_fact`` and ``get_fact`` take).
        text: the page as shown in a context ("User: … / Assistant: …"), or the fact's summary.
        score: the ranking's own score, comparable within a kind: the rank-fusion
            score of the page ranking (cosine in the paper's segment-first mode)
            and the similarity of the fact ranking, as ``retrieve`` ranks them.
        timestamp: when the page was said; when the fact was said (its ``valid_at``: the
            time of the turn it was read off), else when it was last written.
        sources: a page's ``source_ids()``; the ids of the pages a fact came from.
        thread_id: the page's thread (``None`` for a fact).
        page: the page (``kind="page"``).
        fact: the fact (``kind="fact"``; ``fact.kind`` tells user fact from agent trait).

    Example:
        >>> hit = SearchHit(kind="fact", id="f_1", text="The user is vegan.", score=0.8,
        ...                 timestamp=_dt.datetime(2024, 5, 1, tzinfo=_dt.UTC))
        >>> hit.kind, hit.sources
        ('fact', [])
    """

    kind: Literal["page", "fact"]
    id: str
    text: str
    score: float
    timestamp: _dt.datetime
    sources: list[str] = field(default_factory=list)
    thread_id: str | None = None
    page: DialoguePage | None = None
    fact: MemoryRecord | None = None


@dataclass
class FactHistory:
    """A stored fact (``MemoryOS.get_fact``) and the write events that made it, oldest first.

    The history follows the fact's lineage: the events that stored, fused,
    edited it, and those of the facts it replaced when it was fused.

    Attributes:
        fact: the fact as stored now.
        history: its write events (``stored``, ``updated``, ``edited`` …), oldest first.

    Example:
        >>> FactHistory(MemoryRecord(id="f_1", summary="The user is vegan.")).history
        []
    """

    fact: MemoryRecord
    history: list[WriteEvent] = field(default_factory=list)


@dataclass
class ForgetReport:
    """What ``MemoryOS.forget`` removed (or, with ``dry_run=True``, would remove).

    Attributes:
        facts: the ids of the facts and agent traits deleted.
        pages: the ids of the pages deleted whole (nothing said was left in them).
        redacted: the ids of the pages that lost sentences and keep the rest.
        texts: what was removed: the facts' texts and the sentences cut.
        events: the ``deleted`` write events (none in a dry run).
        dry_run: nothing was changed.

    Example:
        >>> ForgetReport(facts=["f_1"]).removed
        True
    """

    facts: list[str] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)
    redacted: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    events: list[WriteEvent] = field(default_factory=list)
    dry_run: bool = False

    @property
    def removed(self) -> bool:
        """Whether anything was (or would be) forgotten.

        Example:
            >>> ForgetReport().removed
            False
        """
        return bool(self.facts or self.pages or self.redacted)
