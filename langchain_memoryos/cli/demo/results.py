"""The numbers behind the demo's printout: its result types, the conversation clock, fused updates, recalls."""

from __future__ import annotations

import datetime as _dt
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from langchain_memoryos.cli.demo.text import _page_line
from langchain_memoryos.cli.demo_data import TURN_GAP_MINUTES, Probe, Session
from langchain_memoryos.schema import MemoryContext, MemoryRecord, MemoryStats, WriteEvent, WriteReport

__all__ = [
    "DemoResult",
    "FactRecall",
    "FusedUpdate",
    "ProbeResult",
    "SessionRecall",
    "fused_updates",
    "probe_thread_id",
    "session1_recalls",
    "session_thread_id",
    "turn_timestamp",
]

_ACTIONS: tuple[str, ...] = ("stored", "discarded", "updated", "filtered", "evicted")


class ProbeResult(TypedDict):
    """What retrieval returned for one probe question.

    Attributes:
        question: the question asked.
        expected: the substrings the context had to contain.
        hit: whether every expected substring was in the rendered context.
        words: words in the rendered context.
        tokens: the context's model-free token estimate.
        source_ids: provenance ids of the pages in the context.
        answer: the chat model's answer ("" without a model).

    Example:
        >>> r: ProbeResult = {"question": "q", "expected": ("x",), "hit": True,
        ...                   "words": 3, "tokens": 4, "source_ids": ["S1:2"], "answer": ""}
        >>> r["hit"]
        True
    """

    question: str
    expected: tuple[str, ...]
    hit: bool
    words: int
    tokens: int
    source_ids: list[str]
    answer: str


class FusedUpdate(TypedDict):
    """One AMU ``updated`` event: old records fused with a new fact into one current record.

    Attributes:
        event: the event's 1-based position in the write log.
        reason: the relation-judge's reason (e.g. "location changed: portland → denver").
        old: the summaries of the records it replaced.
        old_sources: the demo source ids (``S<session>:<turn>``) the old records came from.
        new_sources: the source ids of the new evidence.
        fused: the summary of the fused record.
        sources: the fused record's source ids (old and new).

    Example:
        >>> old = MemoryRecord(id="f1", summary="The user lives in Portland.", source_page_ids=["p1"])
        >>> new = MemoryRecord(id="f2", summary="The user lives in Denver.", source_page_ids=["p1", "p2"])
        >>> log = [WriteEvent("stored", old), WriteEvent("updated", new, replaced_ids=["f1"])]
        >>> u = fused_updates(log, {"p1": "S1:2", "p2": "S4:1"})[0]
        >>> u["event"], u["old_sources"], u["new_sources"], u["sources"]
        (2, ['S1:2'], ['S4:1'], ['S1:2', 'S4:1'])
    """

    event: int
    reason: str
    old: list[str]
    old_sources: list[str]
    new_sources: list[str]
    fused: str
    sources: list[str]


class SessionRecall(TypedDict):
    """A session-1 page that a probe question retrieved, with the expected answer in it.

    Attributes:
        question: the probe question.
        source: the page's source id (``S1:<turn>``).
        rank: the page's position among the context's mid-term pages (1 = first), 0 for an STM page.
        score: its retrieval score.
        text: the page's text.

    Example:
        >>> from langchain_memoryos.schema import DialoguePage
        >>> page = DialoguePage(id="p", user_input="I have a dog named Biscuit.", agent_response="",
        ...                     metadata={"source_id": "S1:2"})
        >>> ctx = MemoryContext(query="q", user_id="u", thread_id="t", stm=[page])  # in STM: rank 0
        >>> session1_recalls({"question": "What's my dog called?", "expected": ("biscuit",), "about": "S1"}, ctx)
        ... # doctest: +NORMALIZE_WHITESPACE
        [{'question': "What's my dog called?", 'source': 'S1:2', 'rank': 0, 'score': 0.0,
          'text': 'User: I have a dog named Biscuit.'}]
    """

    question: str
    source: str
    rank: int
    score: float
    text: str


class FactRecall(TypedDict):
    """A fact AMU updated, and how a question about it recalled it.

    Attributes:
        question: the question asked (in a new thread, after the last session).
        fact_id: the fused fact's id as the context shows it (``f:3``).
        fact: its summary.
        sources: its source ids, old and new (``["S1:2", "S4:1"]``).
        source_ranks: each source page's rank among the context's pages (0: not in the context).
        in_context: whether the fact itself is in the context (it is left out when all its sources are shown).
        tight_words: the smaller word budget the question is asked again with.
        in_tight_context: whether the fact is in the context within ``tight_words``.

    Example:
        >>> r: FactRecall = {"question": "q", "fact_id": "f:3", "fact": "The user lives in Denver.",
        ...                  "sources": ["S1:2"], "source_ranks": {"S1:2": 2}, "in_context": False,
        ...                  "tight_words": 150, "in_tight_context": True}
        >>> r["in_tight_context"]
        True
    """

    question: str
    fact_id: str
    fact: str
    sources: list[str]
    source_ranks: dict[str, int]
    in_context: bool
    tight_words: int
    in_tight_context: bool


class DemoResult(TypedDict):
    """The numbers behind the demo's printout (for tests and scripts).

    Attributes:
        turns: turns fed to ``add_turn``.
        added: turns that were new (a replay on the same memory adds none).
        stats: the user's memory counts after ingestion.
        promoted: segment promotions during ingestion.
        probe_hits: probes whose expected substrings were all retrieved.
        probes: probes asked.
        events: AMU write-log actions (stored, discarded, updated, filtered) and their counts.
        probe_results: one entry per probe.
        fused: the AMU updates that fused an old record with a new fact.
        session1_recalls: session-1 pages retrieved (with the expected answer) by the probes about session 1.
        fact_recall: the fact AMU updated and how the question about it recalled it (``None``: no update).
        seconds: wall-clock time of the whole demo.

    Example:
        >>> from collections import Counter
        >>> r: DemoResult = {"turns": 1, "added": 1, "stats": MemoryStats(), "promoted": 0,
        ...                  "probe_hits": 0, "probes": 0, "events": Counter(), "probe_results": [],
        ...                  "fused": [], "session1_recalls": [], "fact_recall": None, "seconds": 0.1}
        >>> r["turns"]
        1
    """

    turns: int
    added: int
    stats: MemoryStats
    promoted: int
    probe_hits: int
    probes: int
    events: Counter[str]
    probe_results: list[ProbeResult]
    fused: list[FusedUpdate]
    session1_recalls: list[SessionRecall]
    fact_recall: FactRecall | None
    seconds: float


@dataclass
class _SessionTally:
    """What the turns of one session did, summed over their write reports.

    Example:
        >>> tally = _SessionTally()
        >>> tally.add(WriteReport(page_id="p", moved_to_mtm=["p0"]), "S1:8")
        >>> tally.turns, tally.moved
        (1, ['p0'])
    """

    turns: int = 0
    added: int = 0
    moved: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    joined: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    promoted: list[tuple[list[str], str, list[WriteEvent]]] = field(default_factory=list)

    def add(self, report: WriteReport, where: str) -> None:
        self.turns += 1
        self.added += int(report.added)
        self.moved += report.moved_to_mtm
        self.created += report.segments_created
        self.joined += [s for s in report.segments_joined if s not in self.joined]
        self.evicted += report.segments_evicted
        if report.segments_promoted:
            # one turn can promote several segments; its events are listed together
            events = [e for e in report.events if e.source == "promotion"]
            self.promoted.append((list(report.segments_promoted), where, events))


def session_thread_id(session_number: int) -> str:
    """The thread id of a session (1-based).

    Example:
        >>> session_thread_id(3)
        'session-3'
    """
    return f"session-{session_number}"


def probe_thread_id() -> str:
    """The thread the probe questions are asked in: a new conversation with empty STM.

    Example:
        >>> probe_thread_id()
        'probes'
    """
    return "probes"


def turn_timestamp(session: Session, turn_index: int) -> _dt.datetime:
    """When turn ``turn_index`` (0-based) of a session happened (UTC).

    Args:
        session: the session.
        turn_index: the turn's position in the session, from 0.

    Returns:
        The session's start plus ``turn_index * TURN_GAP_MINUTES`` minutes.

    Example:
        >>> turn_timestamp({"date": "2024-03-02T10:00:00", "turns": []}, 2).isoformat()
        '2024-03-02T10:06:00+00:00'
    """
    start = _dt.datetime.fromisoformat(session["date"])
    if start.tzinfo is None:
        start = start.replace(tzinfo=_dt.UTC)
    return start + _dt.timedelta(minutes=TURN_GAP_MINUTES * turn_index)


def _reason(event: WriteEvent) -> str:
    label = {"discarded": "duplicate", "updated": "update"}.get(event.action)
    judged = [r for r in event.relations if r.label == label]
    if judged:
        return f"{judged[0].reason} (cos {judged[0].similarity:.2f})"
    return event.reason


def _sources_of(record: MemoryRecord, sources: dict[str, str]) -> list[str]:
    return [sources.get(pid, pid[:10]) for pid in record.source_page_ids]


def fused_updates(log: Sequence[WriteEvent], sources: dict[str, str]) -> list[FusedUpdate]:
    """The ``updated`` events of a write log, each with the records it fused and their provenance.

    Args:
        log: a user's write log, oldest first (an updated record's old records were logged before it).
        sources: page id → source id (pages not in it are shown by their id).

    Returns:
        One entry per ``updated`` event, in log order.

    Example:
        >>> old = MemoryRecord(id="f1", summary="The user lives in Portland.", source_page_ids=["p1"])
        >>> new = MemoryRecord(id="f2", summary="The user lives in Denver.", source_page_ids=["p1", "p2"])
        >>> log = [WriteEvent("stored", old), WriteEvent("updated", new, replaced_ids=["f1"], reason="moved")]
        >>> u = fused_updates(log, {"p1": "S1:2", "p2": "S4:1"})[0]
        >>> u["old"], u["new_sources"], u["fused"]
        (['The user lives in Portland.'], ['S4:1'], 'The user lives in Denver.')
    """
    known: dict[str, MemoryRecord] = {}
    out: list[FusedUpdate] = []
    for number, event in enumerate(log, start=1):
        if event.action == "updated":
            olds = [known[i] for i in event.replaced_ids if i in known]
            old_sources = [s for r in olds for s in _sources_of(r, sources)]
            fused = _sources_of(event.record, sources)
            out.append(
                FusedUpdate(
                    event=number,
                    reason=_reason(event),
                    old=[r.summary for r in olds],
                    old_sources=list(dict.fromkeys(old_sources)),
                    new_sources=[s for s in fused if s not in old_sources],
                    fused=event.record.summary,
                    sources=fused,
                )
            )
        if event.record.id and event.action in ("stored", "updated", "edited"):
            known[event.record.id] = event.record
    return out


def session1_recalls(probe: Probe, ctx: MemoryContext) -> list[SessionRecall]:
    """The session-1 pages in ``ctx`` that contain one of the probe's expected answers, in context order.

    Args:
        probe: a probe question and its expected substrings.
        ctx: what retrieval returned for it.

    Returns:
        One entry per matching page: mid-term pages first (ranked from 1), then STM pages (rank 0).

    Example:
        >>> from langchain_memoryos.schema import DialoguePage, ScoredPage
        >>> page = DialoguePage(id="p", user_input="I have a dog named Biscuit.", agent_response="",
        ...                     metadata={"source_id": "S1:2"})
        >>> ctx = MemoryContext(query="q", user_id="u", thread_id="t", pages=[ScoredPage(page, 0.5)])
        >>> probe: Probe = {"question": "What's my dog called?", "expected": ("Biscuit",), "about": "S1"}
        >>> [(r["source"], r["rank"]) for r in session1_recalls(probe, ctx)]
        [('S1:2', 1)]
    """
    scored = [(i, h.page, h.score) for i, h in enumerate(ctx.pages, start=1)] + [(0, pg, 0.0) for pg in ctx.stm]
    out: list[SessionRecall] = []
    for rank, page, score in scored:
        from_s1 = [s for s in page.source_ids() if s.startswith("S1:")]
        if from_s1 and any(x.lower() in page.text.lower() for x in probe["expected"]):
            out.append(
                SessionRecall(
                    question=probe["question"], source=from_s1[0], rank=rank, score=score, text=_page_line(page)
                )
            )
    return out
