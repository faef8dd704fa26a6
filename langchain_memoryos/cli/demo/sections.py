"""The demo's sections: ingestion, each memory tier, the write log, fused updates and the probes."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from langchain_memoryos.cli.demo.results import (
    _ACTIONS,
    FusedUpdate,
    ProbeResult,
    SessionRecall,
    _reason,
    _SessionTally,
    fused_updates,
    probe_thread_id,
    session1_recalls,
    session_thread_id,
    turn_timestamp,
)
from langchain_memoryos.cli.demo.text import WIDTH, _n, _page_line, _Printer, _short, _source
from langchain_memoryos.cli.demo_data import SESSIONS, USER_ID, Probe, Session
from langchain_memoryos.memory import MemoryOS
from langchain_memoryos.schema import MemoryContext, WriteEvent

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["ANSWER_INSTRUCTIONS", "answer_with_context"]

#: The system instructions a chat model answers the probe questions with (the memory context follows them).
ANSWER_INSTRUCTIONS = (
    "You are a helpful assistant that remembers the user across conversations. Answer the user's question "
    "in one short sentence, using the memory below."
)


def _counts(events: Iterable[WriteEvent]) -> str:
    tally: Counter[str] = Counter(e.action for e in events)
    parts = [f"{tally[a]} {a}" for a in _ACTIONS if tally[a]]
    return ", ".join(parts) if parts else "no records"


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
    pages = memory.get_stm(user_id=USER_ID, thread_id=thread)
    p.section("SHORT-TERM MEMORY (STM)", f"thread {thread!r} (the last session), oldest first")
    p.table(
        ["source", "time", "dialogue page"],
        [[_source(pg), pg.timestamp.strftime("%Y-%m-%d %H:%M"), _page_line(pg)] for pg in pages],
    )
    total = memory.stats(user_id=USER_ID).stm_pages
    if total > len(pages):
        p(
            f"({_n(total - len(pages), 'more page')} wait in the STM of earlier threads: "
            "a page moves to MTM only when its own thread overflows)"
        )


def _print_segments(memory: MemoryOS, p: _Printer) -> None:
    segments = memory.list_segments(user_id=USER_ID)
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
        sources = [_source(pg) for pg in memory.list_pages(user_id=USER_ID, segment_id=seg.id)]
        p(f"  {_short(seg.id)} pages: {', '.join(sources)}")


def _print_persona(memory: MemoryOS, p: _Printer) -> None:
    persona = memory.get_persona(user_id=USER_ID)
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
    written = {e.record.id: i for i, e in enumerate(memory.write_log(user_id=USER_ID)) if e.record.id}
    facts = sorted(memory.list_facts(user_id=USER_ID, kind="user"), key=lambda f: (written.get(f.id, -1), f.summary))
    p(f"User facts ({len(facts)}):")
    p.table(
        ["aspect", "updated", "summary"],
        [[f.aspect, f.updated_at.strftime("%Y-%m-%d"), f.summary] for f in facts],
        indent="  ",
    )
    traits = memory.list_facts(user_id=USER_ID, kind="agent")
    p(f"Agent traits ({len(traits)}):")
    if traits:
        p.table(["updated", "summary"], [[f.updated_at.strftime("%Y-%m-%d"), f.summary] for f in traits], indent="  ")
    else:
        p("  (none)")


def _print_log(memory: MemoryOS, p: _Printer) -> Counter[str]:
    log = memory.write_log(user_id=USER_ID)
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


def _page_sources(memory: MemoryOS) -> dict[str, str]:
    """Page id → demo source id (``S<session>:<turn>``) for every MTM and STM page of the demo user."""
    pages = memory.list_pages(user_id=USER_ID)
    for number in range(1, len(SESSIONS) + 1):
        pages += memory.get_stm(user_id=USER_ID, thread_id=session_thread_id(number))
    return {pg.id: _source(pg) for pg in pages}


def _print_fused(memory: MemoryOS, p: _Printer, sources: dict[str, str]) -> list[FusedUpdate]:
    updates = fused_updates(memory.write_log(user_id=USER_ID), sources)
    pages = {src: pg for pg in memory.list_pages(user_id=USER_ID) for src in pg.source_ids()}
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

    from langchain_memoryos.schema.messages import message_text, page_messages

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
