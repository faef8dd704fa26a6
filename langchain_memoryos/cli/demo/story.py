"""The demo on one screen: each memory tier doing its job, with the ranking's own scores.

* **STM** — the live thread's newest turns, kept as they were said;
* **MTM** — a question asked in a new thread after the last session recalls a
  session-1 page through its segment; the pages are listed in the ranking's
  order with its score ``S(p)`` (rank fusion of cosine and BM25 plus chain
  windows, see :mod:`langchain_memoryos.retrieval.recall`);
* **LPM + AMU** — a fact AMU updated (old, new evidence, fused), then recalled
  by a question about it: either its source pages are in the context (and the
  fact is not repeated) or, within a smaller word budget, the fact itself;
* the probes about session 1, one line each.

``memoryos demo --verbose`` prints every tier in full instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from langchain_memoryos.cli.demo.results import FactRecall, FusedUpdate, ProbeResult, session1_recalls
from langchain_memoryos.cli.demo.text import WIDTH, _n, _page_line, _Printer, _short, _source, clip
from langchain_memoryos.cli.demo_data import FACT_PROBE, SESSIONS, USER_ID, Probe
from langchain_memoryos.retrieval.facts import Shown
from langchain_memoryos.schema import MemoryContext, ScoredPage
from langchain_memoryos.schema.context import fact_ref

if TYPE_CHECKING:
    from langchain_memoryos.memory import MemoryOS

__all__ = ["STM_SHOWN", "TIGHT_WORDS", "TOP_SHOWN", "print_story"]

#: STM pages the story shows (the newest).
STM_SHOWN = 3

#: Ranked pages the story shows per question.
TOP_SHOWN = 4

#: The smaller word budget the fact question is asked again with (a small model's memory block).
TIGHT_WORDS = 200


def _fit(prefix: str, text: str) -> str:
    """``prefix`` then ``text`` clipped to the line width (the prefix keeps its alignment)."""
    return prefix + clip(text, WIDTH - len(prefix))


def _ranked(p: _Printer, pages: Sequence[ScoredPage], top: int = TOP_SHOWN) -> None:
    p("  rank  S(p)  source  from            text")
    for rank, hit in enumerate(pages[:top], start=1):
        page = hit.page
        where = f"seg {_short(page.segment_id)}" if page.segment_id else f"STM {page.thread_id}"
        p(_fit(f"  {rank:>4}  {hit.score:.2f}  {_source(page):<6}  {where:<14}  ", _page_line(page)))


def _stm(memory: MemoryOS, p: _Printer) -> None:
    thread = f"session-{len(SESSIONS)}"
    pages = memory.get_stm(user_id=USER_ID, thread_id=thread)
    p()
    p(
        f"STM  short-term: the live thread {thread!r} keeps its newest {memory.config.stm_capacity} turns "
        f"as said (the newest {min(STM_SHOWN, len(pages))}):",
        style="title",
    )
    for page in pages[-STM_SHOWN:]:
        p(_fit(f"  {_source(page):<5} {page.timestamp:%Y-%m-%d %H:%M}  ", _page_line(page)))


def _mtm(memory: MemoryOS, p: _Printer, asked: Sequence[tuple[Probe, ProbeResult, MemoryContext]]) -> None:
    recalls = [(probe, ctx, found[0]) for probe, _, ctx in asked if (found := session1_recalls(probe, ctx))]
    if not recalls:
        p()
        p("MTM  mid-term: no question recalled a session-1 page", style="miss")
        return
    probe, ctx, best = min(recalls, key=lambda r: r[2]["rank"] or 10**6)  # the best-ranked recall
    p()
    p(f"MTM  mid-term: asked in a new thread after session {len(SESSIONS)}: {probe['question']!r}", style="title")
    p(f"     {len(ctx.pages)} pages in the context, ranked by S(p) = rank fusion (cosine, BM25) + chain windows:")
    _ranked(p, ctx.pages)
    page = next((h.page for h in ctx.pages if best["source"] in h.page.source_ids()), None)
    segment = next((s for s in memory.list_segments(user_id=USER_ID) if page and s.id == page.segment_id), None)
    if segment is not None:
        p(
            f"  {best['source']} (session 1, rank {best['rank']}) was recalled through segment {_short(segment.id)}: "
            f"{_n(len(segment.page_ids), 'page')}, heat {segment.heat:.2f}, promoted {segment.promotions}x",
            style="hit",
        )
        p(_fit("  summary: ", segment.summary))


def _lpm(
    memory: MemoryOS, p: _Printer, fused: Sequence[FusedUpdate], events: Counter[str], promoted: int
) -> FactRecall | None:
    persona = memory.get_persona(user_id=USER_ID)
    profile = ", ".join(f"{k} {v}" for k, v in sorted(persona.user_profile.items()))
    p()
    p(
        f"LPM  long-term: {_n(len(memory.list_facts(user_id=USER_ID, kind='user')), 'user fact')}, "
        f"{_n(len(memory.list_facts(user_id=USER_ID, kind='agent')), 'agent trait')}, and the persona",
        style="title",
    )
    p(_fit(f"     persona (from {_n(promoted, 'promoted segment')}): ", profile or "(empty)"))
    p(
        f"     AMU: {events['stored']} stored, {events['discarded']} discarded as duplicates, "
        f"{events['updated']} updated (fused), {events['filtered']} filtered by the write gate"
    )
    expected = [x.lower() for x in FACT_PROBE["expected"]]
    update = next((u for u in fused if all(x in u["fused"].lower() for x in expected)), None)
    if update is None:
        p("     no AMU update in this run", style="miss")
        return None
    record = next((f for f in memory.list_facts(user_id=USER_ID, kind="user") if f.summary == update["fused"]), None)
    ref = fact_ref(record.id) if record and record.id else "?"
    said = {src: pg for pg in memory.list_pages(user_id=USER_ID) for src in pg.source_ids()}
    p(f"  AMU update #{update['event']}: {update['reason']}", style="fused")
    for old, src in zip(update["old"], update["old_sources"] or ["?"], strict=False):
        p(f"    old    {old!r}  [{src}]")
    for src in update["new_sources"]:
        page = said.get(src)
        p(_fit(f"    new    said in {src}: ", repr(page.user_input) if page else "?"))
    p(f"    fused  [{ref}] {update['fused']!r}  [{' + '.join(update['sources'])}]", style="fused")

    question = FACT_PROBE["question"]
    ctx = memory.retrieve(question, user_id=USER_ID, thread_id="fact-probe", touch=False)
    ranks = {src: 0 for src in update["sources"]}
    for rank, hit in enumerate(ctx.pages, start=1):
        for src in hit.page.source_ids():
            if src in ranks and not ranks[src]:
                ranks[src] = rank
    in_context = any(f"[{ref}]" in line for line in ctx.to_prompt().splitlines())
    p(f"  asked in a new thread: {question!r}: {len(ctx.pages)} pages in the context")
    _ranked(p, ctx.pages)
    where = ", ".join(f"{src} rank {r}" if r else f"{src} not shown" for src, r in ranks.items())
    if in_context:
        p(f"  [{ref}] is in the context ({where})", style="hit")
    else:
        p(f"  [{ref}] is not repeated: its source pages say it ({where})")
    tight = _tight(memory)
    small = tight.retrieve(question, user_id=USER_ID, thread_id="fact-probe", touch=False)
    in_small = any(f"[{ref}]" in line for line in small.to_prompt().splitlines())
    score = next((f"{h.score:.2f}" for h in small.user_facts if h.record.id == (record.id if record else None)), "")
    pages = ", ".join(_source(h.page) for h in small.pages)
    if in_small:
        p(
            f"  asked within {TIGHT_WORDS} words: [{ref}] {update['fused']!r} (cosine {score}), pages {pages}",
            style="hit",
        )
    elif record is not None and not any(Shown.of(small.to_prompt()).new_in(record.summary)):
        p(f"  asked within {TIGHT_WORDS} words: pages {pages}; [{ref}] not repeated: the context already says it")
    else:
        p(f"  asked within {TIGHT_WORDS} words: pages {pages}; [{ref}] not shown", style="miss")
    return FactRecall(
        question=question,
        fact_id=ref,
        fact=update["fused"],
        sources=list(update["sources"]),
        source_ranks=ranks,
        in_context=in_context,
        tight_words=TIGHT_WORDS,
        in_tight_context=in_small,
    )


def _tight(memory: MemoryOS) -> MemoryOS:
    """The same memory read with a :data:`TIGHT_WORDS` budget (its store, embeddings and controller)."""
    from langchain_memoryos.memory import MemoryOS

    config = memory.config.replace(context_words=TIGHT_WORDS)
    return MemoryOS(memory.store, embeddings=memory.embeddings, controller=memory.controller, config=config)


def _probes(p: _Printer, asked: Sequence[tuple[Probe, ProbeResult, MemoryContext]]) -> None:
    hits = sum(r["hit"] for _, r, _ in asked)
    p()
    p(f"PROBES  {hits}/{len(asked)} questions about session 1 found their answer in the context:", style="title")
    width = max(len(probe["question"]) for probe, _, _ in asked)
    for probe, result, ctx in asked:
        found = session1_recalls(probe, ctx)
        if found:
            best = found[0]
            where = f"rank {best['rank']} of {len(ctx.pages)}, S(p) {best['score']:.2f}" if best["rank"] else "STM"
            recall = f"{best['source']} at {where}"
        else:
            recall = "no session-1 page"
        mark = "HIT " if result["hit"] else "MISS"
        p(f"  {mark} {probe['question']:<{width}}  {recall}", style="hit" if result["hit"] else "miss")
        if result["answer"]:
            p(f"       model answer: {' '.join(result['answer'].split())}", style="answer")


def print_story(
    memory: MemoryOS,
    p: _Printer,
    asked: Sequence[tuple[Probe, ProbeResult, MemoryContext]],
    fused: Sequence[FusedUpdate],
    events: Counter[str],
    promoted: int,
) -> FactRecall | None:
    """Print the one-screen story (STM, MTM, LPM with AMU, the probes); the fact recall it shows.

    Example:
        ``run_demo`` prints it after ingesting the conversation and asking the probes
        (``tests/unit_tests/test_demo.py`` checks it)::

            result = run_demo(out=io.StringIO())
            assert result["fact_recall"]["sources"] == ["S1:2", "S4:1"]
    """
    _stm(memory, p)
    _mtm(memory, p, asked)
    recall = _lpm(memory, p, fused, events, promoted)
    _probes(p, asked)
    return recall
