r"""Offline demo: ingest a multi-session conversation and show every memory tier.

Run it with ``python -m langchain_memoryos.cli.demo`` (or ``make demo``). It needs no
API key and no network: the embeddings are the offline MiniLM and every
judgement is made by the deterministic :class:`HeuristicController`.

The demo feeds the built-in conversation of :mod:`langchain_memoryos.cli.demo_data`
(one user, six dated sessions, one thread per session) through
:meth:`MemoryOS.add_turn`, printing what each session moved from short-term to
mid-term memory and which segments it created, joined, evicted or promoted.
It then prints the short-term pages, the mid-term segments with their heat, the
long-term persona, user facts and agent traits, the AMU write log, every AMU
update that fused an old record with a new fact (old → fused, with the
provenance of both), what retrieval returns for questions about the first
sessions, and which session-1 pages those questions recalled. Given a chat
model (``run_demo(model=...)``, ``memoryos demo --model ...``), the model also
answers each question from the retrieved context; ingestion stays offline.

Example:
    >>> clip("a   long   text", 20)
    'a long text'
"""

from __future__ import annotations

import datetime as _dt
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO, TypedDict

from langchain_memoryos.cli.demo_data import PROBES, SESSIONS, TURN_GAP_MINUTES, USER_ID, Probe, Session
from langchain_memoryos.memory import MemoryOS
from langchain_memoryos.schema import (
    DialoguePage,
    MemoryContext,
    MemoryRecord,
    MemoryStats,
    WriteEvent,
    WriteReport,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = [
    "SECTION_TITLES",
    "WIDTH",
    "ANSWER_INSTRUCTIONS",
    "DemoResult",
    "FusedUpdate",
    "ProbeResult",
    "SessionRecall",
    "answer_with_context",
    "clip",
    "format_table",
    "fused_updates",
    "main",
    "probe_thread_id",
    "run_demo",
    "session1_recalls",
    "session_thread_id",
    "turn_timestamp",
]

#: Maximum width of a printed line.
WIDTH = 110

#: The section headers the demo prints, in order.
SECTION_TITLES: tuple[str, ...] = (
    "INGESTION",
    "SHORT-TERM MEMORY (STM)",
    "MID-TERM MEMORY (MTM) SEGMENTS",
    "LONG-TERM PERSONA",
    "USER FACTS AND AGENT TRAITS",
    "AMU WRITE LOG",
    "FUSED UPDATES",
    "RETRIEVAL PROBES",
    "RECALLED FROM SESSION 1",
    "SUMMARY",
)

#: The system instructions a chat model answers the probe questions with (the memory context follows them).
ANSWER_INSTRUCTIONS = (
    "You are a helpful assistant that remembers the user across conversations. Answer the user's question "
    "in one short sentence, using the memory below."
)

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
        >>> u: FusedUpdate = {"event": 15, "reason": "location changed", "old": ["The user lives in Portland."],
        ...                   "old_sources": ["S1:2"], "new_sources": ["S4:1"],
        ...                   "fused": "The user lives in Denver.", "sources": ["S1:2", "S4:1"]}
        >>> u["old_sources"] + u["new_sources"] == u["sources"]
        True
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
        >>> r: SessionRecall = {"question": "What's my dog called?", "source": "S1:2", "rank": 1,
        ...                     "score": 0.58, "text": "User: I have a dog named Biscuit."}
        >>> r["source"].startswith("S1:")
        True
    """

    question: str
    source: str
    rank: int
    score: float
    text: str


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
        seconds: wall-clock time of the whole demo.

    Example:
        >>> from collections import Counter
        >>> r: DemoResult = {"turns": 1, "added": 1, "stats": MemoryStats(), "promoted": 0,
        ...                  "probe_hits": 0, "probes": 0, "events": Counter(), "probe_results": [],
        ...                  "fused": [], "session1_recalls": [], "seconds": 0.1}
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


# -- text helpers ---------------------------------------------------------------


def clip(text: str, limit: int = WIDTH) -> str:
    """Collapse whitespace and cut ``text`` to ``limit`` characters (with "...").

    Args:
        text: any text.
        limit: the maximum length (at least 4).

    Returns:
        The one-line, possibly shortened text.

    Example:
        >>> clip("The user lives in Denver now.", 16)
        'The user live...'
    """
    one_line = " ".join(str(text).split())
    limit = max(4, limit)
    if len(one_line) <= limit:
        return one_line
    return one_line[: limit - 3].rstrip() + "..."


def format_table(headers: Sequence[str], rows: Iterable[Sequence[object]], *, width: int = WIDTH) -> list[str]:
    """Lay out rows as a plain-text table with aligned columns.

    Numbers are right-aligned, text left-aligned. When the table is wider than
    ``width``, the last column is shortened (it is meant for free text).

    Args:
        headers: the column titles.
        rows: the cells, one sequence per row (converted with ``str``; floats
            with two decimals).
        width: the maximum line width.

    Returns:
        The lines: header, rule, rows.

    Example:
        >>> for line in format_table(["id", "heat"], [["s1", 5.0], ["s22", 1.25]]):
        ...     print(line)
        id   heat
        ---  ----
        s1   5.00
        s22  1.25
    """
    cells = [[_cell(v) for v in row] for row in rows]
    numeric = [_is_numeric_column(cells, i) for i in range(len(headers))]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    fixed = sum(widths[:-1]) + 2 * (len(widths) - 1)
    widths[-1] = max(len(headers[-1]), min(widths[-1], width - fixed))

    def line(values: Sequence[str]) -> str:
        parts = []
        for i, value in enumerate(values):
            text = clip(value, widths[i]) if i == len(values) - 1 else value
            parts.append(text.rjust(widths[i]) if numeric[i] else text.ljust(widths[i]))
        return "  ".join(parts).rstrip()

    out = [line(list(headers)), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in cells)
    return out


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return " ".join(str(value).split())


def _is_numeric_column(cells: list[list[str]], index: int) -> bool:
    values = [row[index] for row in cells if row[index]]
    if not values:
        return False
    try:
        for v in values:
            float(v)
    except ValueError:
        return False
    return True


# -- conversation clock and ids -------------------------------------------------


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


# -- printing ---------------------------------------------------------------------


#: ANSI styles of the colored output (``run_demo(color=True)``).
_STYLES: dict[str, str] = {"title": "1;36", "hit": "32", "miss": "31", "fused": "33", "answer": "35"}


class _Printer:
    r"""Writes lines to ``out``, never wider than :data:`WIDTH` (ANSI styles only with ``color=True``).

    Example:
        >>> import io
        >>> buf = io.StringIO(); _Printer(buf)("x" * 200)
        >>> len(buf.getvalue().rstrip("\n")) == WIDTH
        True
        >>> buf = io.StringIO(); _Printer(buf, color=True)("HIT", style="hit"); buf.getvalue()
        '\x1b[32mHIT\x1b[0m\n'
    """

    def __init__(self, out: TextIO, *, color: bool = False) -> None:
        self.out = out
        self.color = color

    def __call__(self, text: str = "", *, style: str = "") -> None:
        code = _STYLES.get(style, "") if self.color else ""
        for line in text.split("\n"):
            if len(line) > WIDTH:  # keep the indent, shorten the rest
                indent = line[: len(line) - len(line.lstrip())]
                line = indent + clip(line, WIDTH - len(indent))
            else:
                line = line.rstrip()
            self.out.write(f"\x1b[{code}m{line}\x1b[0m" if code and line else line)
            self.out.write("\n")

    def section(self, title: str, note: str = "") -> None:
        self()
        self("=" * WIDTH)
        self(title, style="title")
        if note:
            self(note)
        self("=" * WIDTH)

    def table(self, headers: Sequence[str], rows: Iterable[Sequence[object]], indent: str = "") -> None:
        for line in format_table(headers, rows, width=WIDTH - len(indent)):
            self(indent + line)


def _short(seg_id: str) -> str:
    return seg_id[:10]


def _n(count: int, noun: str) -> str:
    """A count with its noun, in the plural when needed.

    Example:
        >>> _n(1, "page"), _n(2, "page")
        ('1 page', '2 pages')
    """
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _counts(events: Iterable[WriteEvent]) -> str:
    tally: Counter[str] = Counter(e.action for e in events)
    parts = [f"{tally[a]} {a}" for a in _ACTIONS if tally[a]]
    return ", ".join(parts) if parts else "no records"


def _page_line(page: DialoguePage) -> str:
    text = f"User: {page.user_input}"
    if page.agent_response:
        text += f" | Assistant: {page.agent_response}"
    return text


def _source(page: DialoguePage) -> str:
    ids = page.source_ids()
    return ",".join(ids) if ids else page.id[:10]


# -- the demo -----------------------------------------------------------------------


def _ingest(memory: MemoryOS, p: _Printer) -> tuple[int, int, int]:
    p.section(
        "INGESTION",
        f"user {USER_ID!r}: {len(SESSIONS)} sessions, one thread each; STM keeps the last "
        f"{memory.config.stm_capacity} pages of a thread, older pages move to MTM.",
    )
    turns = added = promoted = 0
    for number, session in enumerate(SESSIONS, start=1):
        thread = session_thread_id(number)
        tally = _SessionTally()
        for index, (user_input, agent_response) in enumerate(session["turns"]):
            source = f"S{number}:{index + 1}"
            report = memory.add_turn(
                user_input,
                agent_response,
                user_id=USER_ID,
                thread_id=thread,
                timestamp=turn_timestamp(session, index),
                metadata={"source_id": source},
                turn_id=source,
            )
            tally.add(report, source)
        turns += tally.turns
        added += tally.added
        promoted += sum(len(ids) for ids, _, _ in tally.promoted)
        day = session["date"][:10]
        replay = "" if tally.added == tally.turns else f" ({tally.turns - tally.added} already stored)"
        p()
        p(f"S{number}  {day}  {thread}: {tally.turns} turns{replay}")
        p(
            f"    moved to MTM: {_n(len(tally.moved), 'page')} | segments: {len(tally.created)} created, "
            f"{len(tally.joined)} joined, {len(tally.evicted)} evicted, "
            f"{sum(len(ids) for ids, _, _ in tally.promoted)} promoted"
        )
        for seg_ids, where, events in tally.promoted:
            names = ", ".join(_short(s) for s in seg_ids)
            p(f"    promoted {names} at {where}: {_n(len(events), 'AMU decision')} ({_counts(events)})")
    return turns, added, promoted


def _print_stm(memory: MemoryOS, p: _Printer) -> None:
    thread = session_thread_id(len(SESSIONS))
    pages = memory.get_stm(USER_ID, thread)
    p.section("SHORT-TERM MEMORY (STM)", f"thread {thread!r} (the last session), oldest first")
    p.table(
        ["source", "time", "dialogue page"],
        [[_source(pg), pg.timestamp.strftime("%Y-%m-%d %H:%M"), _page_line(pg)] for pg in pages],
    )
    total = memory.stats(USER_ID).stm_pages
    if total > len(pages):
        p(
            f"({_n(total - len(pages), 'more page')} wait in the STM of earlier threads: "
            "a page moves to MTM only when its own thread overflows)"
        )


def _print_segments(memory: MemoryOS, p: _Printer) -> None:
    segments = memory.list_segments(USER_ID)
    p.section(
        "MID-TERM MEMORY (MTM) SEGMENTS",
        f"hottest first; heat = N_visit + L_interaction + recency at the conversation clock.\n"
        f"A segment is promoted at heat >= {memory.config.promotion_heat:g}; promotion resets L_interaction to 0.",
    )
    p.table(
        ["segment", "heat", "N_visit", "L_interaction", "pages", "promoted", "summary"],
        [
            [_short(s.id), s.heat, s.n_visit, s.l_interaction, len(s.page_ids), s.promotions, s.summary]
            for s in segments
        ],
    )
    p()
    for seg in segments:
        sources = [_source(pg) for pg in memory.list_pages(USER_ID, seg.id)]
        p(f"  {_short(seg.id)} pages: {', '.join(sources)}")


def _print_persona(memory: MemoryOS, p: _Printer) -> None:
    persona = memory.get_persona(USER_ID)
    p.section("LONG-TERM PERSONA", "updated only when a hot segment is promoted")
    p("User profile:")
    if persona.user_profile:
        p.table(["attribute", "value"], sorted(persona.user_profile.items()), indent="  ")
    else:
        p("  (empty)")
    p("User traits:")
    traits = [(k, ", ".join(v)) for k, v in sorted(persona.user_traits.items()) if v]
    if traits:
        p.table(["dimension", "values"], traits, indent="  ")
    else:
        p("  (none)")
    p("Agent profile:")
    for line in textwrap.wrap(persona.agent_profile, WIDTH - 2) or ["(none)"]:
        p(f"  {line}")


def _print_facts(memory: MemoryOS, p: _Printer) -> None:
    p.section("USER FACTS AND AGENT TRAITS", "the long-term records that passed the AMU write path")
    # in the order the write log recorded them (fact ids are random, so ties in
    # creation time would otherwise print in a different order on every run)
    written = {e.record.id: i for i, e in enumerate(memory.write_log(USER_ID)) if e.record.id}
    facts = sorted(memory.list_facts(USER_ID, "user"), key=lambda f: (written.get(f.id, -1), f.summary))
    p(f"User facts ({len(facts)}):")
    p.table(
        ["aspect", "updated", "summary"],
        [[f.aspect, f.updated_at.strftime("%Y-%m-%d"), f.summary] for f in facts],
        indent="  ",
    )
    traits = memory.list_facts(USER_ID, "agent")
    p(f"Agent traits ({len(traits)}):")
    if traits:
        p.table(["updated", "summary"], [[f.updated_at.strftime("%Y-%m-%d"), f.summary] for f in traits], indent="  ")
    else:
        p("  (none)")


def _print_log(memory: MemoryOS, p: _Printer) -> Counter[str]:
    log = memory.write_log(USER_ID)
    counts: Counter[str] = Counter(e.action for e in log)
    p.section(
        "AMU WRITE LOG",
        "every candidate record: stored (new), discarded (duplicate), updated (fused), filtered (write-gate)",
    )
    p("  " + ", ".join(f"{a}: {counts[a]}" for a in _ACTIONS))
    p()
    rows: list[list[object]] = []
    for i, event in enumerate(log, start=1):
        rows.append([i, event.action, event.record.kind, event.record.summary])
        rows.append(["", "", "", f"  -> {_reason(event)}"])
    p.table(["#", "action", "kind", "record / why"], rows)
    return counts


def _reason(event: WriteEvent) -> str:
    label = {"discarded": "duplicate", "updated": "update"}.get(event.action)
    judged = [r for r in event.relations if r.label == label]
    if judged:
        return f"{judged[0].reason} (cos {judged[0].similarity:.2f})"
    return event.reason


def _page_sources(memory: MemoryOS) -> dict[str, str]:
    """Page id → demo source id (``S<session>:<turn>``) for every MTM and STM page of the demo user."""
    pages = memory.list_pages(USER_ID)
    for number in range(1, len(SESSIONS) + 1):
        pages += memory.get_stm(USER_ID, session_thread_id(number))
    return {pg.id: _source(pg) for pg in pages}


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


def _print_fused(memory: MemoryOS, p: _Printer, sources: dict[str, str]) -> list[FusedUpdate]:
    updates = fused_updates(memory.write_log(USER_ID), sources)
    pages = {src: pg for pg in memory.list_pages(USER_ID) for src in pg.source_ids()}
    p.section(
        "FUSED UPDATES",
        "an 'updated' event fuses the old record and the new fact into one current record: the new state,\n"
        "the provenance of both, the old record's creation time; the old record is deleted",
    )
    if not updates:
        p("  (no update in this run)")
    for u in updates:
        p()
        p(f"  update #{u['event']}: {u['reason']}", style="fused")
        for old, src in zip(u["old"], u["old_sources"] or ["?"], strict=False):
            p(f"      old    {old!r}  [{src}]")
        for src in u["new_sources"]:
            said = pages.get(src)
            p(f"      new    said in {src}: {said.user_input if said else '?'!r}")
        p(f"      fused  {u['fused']!r}  [{' + '.join(u['sources'])}]", style="fused")
    return updates


def answer_with_context(
    model: BaseChatModel, question: str, context: MemoryContext, *, instructions: str = ANSWER_INSTRUCTIONS
) -> str:
    """Ask ``model`` to answer ``question`` with the retrieved memory.

    The system message is ``instructions`` plus the context without its STM;
    the STM pages follow as the conversation's messages, then the question.

    Args:
        model: a LangChain chat model.
        question: what the user asks.
        context: what :meth:`MemoryOS.retrieve` returned for it.
        instructions: the system instructions before the memory.

    Returns:
        The model's answer text.

    Example:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> from langchain_core.messages import AIMessage
        >>> model = GenericFakeChatModel(messages=iter([AIMessage("You live in Denver.")]))
        >>> ctx = MemoryContext(query="Where do I live?", user_id="u", thread_id="t")
        >>> answer_with_context(model, "Where do I live?", ctx)
        'You live in Denver.'
    """
    from langchain_core.messages import HumanMessage, SystemMessage

    from langchain_memoryos.integrations.messages import message_text, page_messages

    memory_text = context.without_stm().to_prompt()
    system = f"{instructions}\n\n{memory_text}" if memory_text else instructions
    reply = model.invoke([SystemMessage(system), *page_messages(context.stm), HumanMessage(question)])
    return message_text(reply).strip()


def _probe(
    memory: MemoryOS, probe: Probe, p: _Printer, model: BaseChatModel | None
) -> tuple[ProbeResult, MemoryContext]:
    ctx: MemoryContext = memory.retrieve(probe["question"], user_id=USER_ID, thread_id=probe_thread_id())
    prompt = ctx.to_prompt()
    low = prompt.lower()
    hit = all(x.lower() in low for x in probe["expected"])
    words = len(prompt.split())
    mark = "HIT " if hit else "MISS"
    p()
    p(f"[{mark}] {probe['question']}", style="hit" if hit else "miss")
    p(f"       said in {probe['about']}; expected {', '.join(repr(x) for x in probe['expected'])}")
    p(
        f"       context: {words} words, ~{ctx.token_estimate} tokens, {len(ctx.segments)} segments, "
        f"{len(ctx.pages)} pages, {len(ctx.user_facts)} facts, {len(ctx.agent_facts)} traits"
    )

    def has(text: str) -> str:
        return "*" if any(x.lower() in text.lower() for x in probe["expected"]) else " "

    hits = list(ctx.pages)
    shown = hits[:4] + [h for h in hits[4:] if has(h.page.text) == "*"]
    rows: list[list[object]] = []
    for h in shown:
        where = f"seg {_short(h.page.segment_id)}" if h.page.segment_id else f"STM {h.page.thread_id}"
        rows.append([has(h.page.text), "page", h.score, _source(h.page), where, _page_line(h.page)])
    facts = list(ctx.user_facts)
    for f in facts[:3] + [f for f in facts[3:] if has(f.record.summary) == "*"]:
        rows.append([has(f.record.summary), "fact", f.score, "", "LPM", f.record.summary])
    for f in ctx.agent_facts[:1]:
        rows.append([" ", "trait", f.score, "", "LPM", f.record.summary])
    more = (len(hits) - len(shown)) + max(0, len(facts) - 3)
    if rows:
        p.table(["", "kind", "score", "source", "from", "text (* = contains the expected answer)"], rows, indent="   ")
    if more > 0:
        p(f"       (+{more} more pages/facts not shown)")
    answer = ""
    if model is not None:
        answer = answer_with_context(model, probe["question"], ctx)
        lines = textwrap.wrap(" ".join(answer.split()), WIDTH - 23) or ["(empty answer)"]
        p(f"       model answer: {lines[0]}", style="answer")
        for line in lines[1:]:
            p(f"                     {line}", style="answer")
    result = ProbeResult(
        question=probe["question"],
        expected=probe["expected"],
        hit=hit,
        words=words,
        tokens=ctx.token_estimate,
        source_ids=sorted(ctx.source_ids()),
        answer=answer,
    )
    return result, ctx


def session1_recalls(probe: Probe, ctx: MemoryContext) -> list[SessionRecall]:
    """The session-1 pages in ``ctx`` that contain one of the probe's expected answers, in context order.

    Args:
        probe: a probe question and its expected substrings.
        ctx: what retrieval returned for it.

    Returns:
        One entry per matching page: mid-term pages first (ranked from 1), then STM pages (rank 0).

    Example:
        >>> from langchain_memoryos.schema import ScoredPage
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


def _print_session1(
    probes: Sequence[tuple[Probe, MemoryContext]], sessions: Sequence[Session], p: _Printer
) -> list[SessionRecall]:
    first, last = sessions[0]["date"][:10], sessions[-1]["date"][:10]
    p.section(
        "RECALLED FROM SESSION 1",
        f"facts said in session 1 ({first}), retrieved after the last session ({last}) in a new thread",
    )
    recalls: list[SessionRecall] = []
    for probe, ctx in probes:
        if not probe["about"].startswith("S1"):
            continue
        found = session1_recalls(probe, ctx)
        p()
        p(f"  Q: {probe['question']}")
        if not found:
            p(
                f"     not recalled: no session-1 page with {', '.join(repr(x) for x in probe['expected'])}",
                style="miss",
            )
            continue
        best = found[0]
        recalls.append(best)
        where = f"page {best['rank']} of {len(ctx.pages)}" if best["rank"] else "in STM"
        p(f"     recalled {best['source']} ({where}, score {best['score']:.2f})", style="hit")
        p(f"     {best['text']}")
    return recalls


def run_demo(
    *,
    out: TextIO = sys.stdout,
    memory: MemoryOS | None = None,
    model: BaseChatModel | None = None,
    color: bool = False,
) -> DemoResult:
    """Ingest the built-in conversation offline and print every memory tier.

    The turns carry ``metadata={"source_id": "S<session>:<turn>"}`` and the
    same ``turn_id``, so running the demo twice on one memory stores nothing twice.

    Args:
        out: where to print (default: standard output).
        memory: the memory to use (default: a new in-memory ``MemoryOS()``).
        model: a chat model that also answers each probe question from the
            retrieved context (ingestion still uses ``memory``'s controller).
        color: ANSI colors for titles, hits, misses, fused updates and answers.

    Returns:
        The numbers behind the printout: turns, stats, promotions, probe hits,
        the write-log action counts, the fused updates and the session-1 recalls.

    Example:
        Run it silently and keep the numbers (``tests/unit_tests/test_demo.py``
        runs exactly this)::

            result = run_demo(out=io.StringIO())
            assert result["probe_hits"] >= result["probes"] - 1
            assert result["fused"] and result["session1_recalls"]
    """
    started = time.perf_counter()
    memory = memory if memory is not None else MemoryOS()
    p = _Printer(out, color=color)
    p("langchain-memoryos demo: MemoryOS (STM -> MTM -> LPM) with AMU-controlled long-term writes")
    if model is None:
        p("offline: MiniLM embeddings + the deterministic HeuristicController; no model or network calls")
    else:
        name = getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__
        p(f"ingestion offline (MiniLM + {type(memory.controller).__name__}); the probes are answered by {name}")

    turns, added, promoted = _ingest(memory, p)
    _print_stm(memory, p)
    _print_segments(memory, p)
    _print_persona(memory, p)
    _print_facts(memory, p)
    events = _print_log(memory, p)
    fused = _print_fused(memory, p, _page_sources(memory))

    p.section(
        "RETRIEVAL PROBES",
        f"questions about the first sessions, asked in a new thread {probe_thread_id()!r} after all sessions",
    )
    asked = [(probe, *_probe(memory, probe, p, model)) for probe in PROBES]
    results = [r for _, r, _ in asked]
    hits = sum(r["hit"] for r in results)
    recalls = _print_session1([(probe, ctx) for probe, _, ctx in asked], SESSIONS, p)

    stats = memory.stats(USER_ID)
    seconds = time.perf_counter() - started
    p.section("SUMMARY")
    p(f"turns ingested: {turns} ({added} new) in {len(SESSIONS)} sessions; segment promotions: {promoted}")
    p(
        f"memory: {_n(stats.stm_pages, 'STM page')}, {_n(stats.segments, 'segment')} holding "
        f"{_n(stats.mtm_pages, 'MTM page')}, {_n(stats.user_facts, 'user fact')}, "
        f"{_n(stats.agent_facts, 'agent trait')}, {_n(stats.llm_calls, 'LLM call')}"
    )
    p("AMU write log: " + ", ".join(f"{a} {events[a]}" for a in _ACTIONS))
    for u in fused:
        p(f"fused update: {' + '.join(map(repr, u['old']))} -> {u['fused']!r} [{' + '.join(u['sources'])}]")
    p(f"probes answered from memory: {hits}/{len(results)}")
    for r in recalls:
        p(f"recalled from session 1: {r['question']} -> {r['source']}")
    p(f"ran in {seconds:.1f} s")
    return DemoResult(
        turns=turns,
        added=added,
        stats=stats,
        promoted=promoted,
        probe_hits=hits,
        probes=len(results),
        events=events,
        probe_results=results,
        fused=fused,
        session1_recalls=recalls,
        seconds=seconds,
    )


def main() -> int:
    """Entry point of ``python -m langchain_memoryos.cli.demo``.

    Returns:
        The process exit code (0).

    Example:
        >>> callable(main)  # ``main()`` prints the whole demo and returns 0
        True
    """
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if callable(reconfigure):
        reconfigure(errors="replace")
    run_demo()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
