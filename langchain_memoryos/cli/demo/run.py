"""Running the demo: every section in order, the summary, and :func:`main`."""

from __future__ import annotations

import io
import sys
import time
from collections import Counter
from typing import TYPE_CHECKING, TextIO

from langchain_memoryos.cli.demo.results import _ACTIONS, DemoResult, probe_thread_id
from langchain_memoryos.cli.demo.sections import (
    _ingest,
    _page_sources,
    _print_facts,
    _print_fused,
    _print_log,
    _print_persona,
    _print_segments,
    _print_session1,
    _print_stm,
    _probe,
)
from langchain_memoryos.cli.demo.story import print_story
from langchain_memoryos.cli.demo.text import _n, _Printer
from langchain_memoryos.cli.demo_data import PROBES, SESSIONS, USER_ID
from langchain_memoryos.memory import MemoryOS

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["SECTION_TITLES", "main", "run_demo"]

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


def run_demo(
    *,
    out: TextIO = sys.stdout,
    memory: MemoryOS | None = None,
    model: BaseChatModel | None = None,
    color: bool = False,
    verbose: bool = False,
) -> DemoResult:
    """Ingest the built-in conversation offline and show each memory tier doing its job.

    By default one screen (under 60 lines): the live thread's STM, a
    session-1 page recalled through its MTM segment, a fact AMU updated and
    its recall, the probes — pages in the ranking's order with its scores.
    ``verbose=True`` prints every tier in full instead (:data:`SECTION_TITLES`).
    The turns carry ``metadata={"source_id": "S<session>:<turn>"}`` and the
    same ``turn_id``, so running the demo twice on one memory stores nothing twice.

    Args:
        out: where to print (default: standard output).
        memory: the memory to use (default: a new in-memory ``MemoryOS()``).
        model: a chat model that also answers each probe question from the
            retrieved context (ingestion still uses ``memory``'s controller).
        color: ANSI colors for titles, hits, misses, fused updates and answers.
        verbose: print the full dump (every section) instead of the one-screen story.

    Returns:
        The numbers behind the printout: turns, stats, promotions, probe hits,
        the write-log action counts, the fused updates, the session-1 recalls
        and the recall of the updated fact.

    Example:
        Run it silently and keep the numbers (``tests/unit_tests/test_demo.py``
        runs exactly this)::

            result = run_demo(out=io.StringIO())
            assert result["probe_hits"] >= result["probes"] - 1
            assert result["fused"] and result["session1_recalls"]
    """
    started = time.perf_counter()
    memory = memory if memory is not None else MemoryOS()
    p, silent = _Printer(out, color=color), _Printer(io.StringIO())
    quiet = p if verbose else silent  # the full dump's sections print only with verbose
    _print_header(p, memory, model)
    turns, added, promoted = _ingest(memory, quiet)
    stats = memory.stats(user_id=USER_ID)
    if not verbose:
        first, last = SESSIONS[0]["date"][:10], SESSIONS[-1]["date"][:10]
        p(
            f"user {USER_ID!r}: {turns} turns ({added} new) in {len(SESSIONS)} sessions ({first} .. {last}), "
            f"one thread each"
        )
    events: Counter[str] = Counter(e.action for e in memory.write_log(user_id=USER_ID))
    if verbose:
        events = _print_tiers(memory, p)
    fused = _print_fused(memory, quiet, _page_sources(memory))
    if verbose:
        p.section(
            "RETRIEVAL PROBES",
            f"questions about the first sessions, asked in a new thread {probe_thread_id()!r} after all sessions",
        )
    asked = [(probe, *_probe(memory, probe, quiet, model)) for probe in PROBES]
    results = [r for _, r, _ in asked]
    recalls = _print_session1([(probe, ctx) for probe, _, ctx in asked], SESSIONS, quiet)
    fact_recall = print_story(memory, silent if verbose else p, asked, fused, events, promoted)
    result = DemoResult(
        turns=turns,
        added=added,
        stats=stats,
        promoted=promoted,
        probe_hits=sum(r["hit"] for r in results),
        probes=len(results),
        events=events,
        probe_results=results,
        fused=fused,
        session1_recalls=recalls,
        fact_recall=fact_recall,
        seconds=time.perf_counter() - started,
    )
    _print_summary(p, result, verbose)
    return result


def _print_header(p: _Printer, memory: MemoryOS, model: BaseChatModel | None) -> None:
    """The demo's first lines: what runs offline, and the model that answers the probes (if any)."""
    p("langchain-memoryos demo: MemoryOS (STM -> MTM -> LPM) with AMU-controlled long-term writes")
    if model is None:
        p("offline: MiniLM embeddings + the deterministic HeuristicController; no model or network calls")
    else:
        name = getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__
        p(f"ingestion offline (MiniLM + {type(memory.controller).__name__}); the probes are answered by {name}")


def _print_tiers(memory: MemoryOS, p: _Printer) -> Counter[str]:
    """The full dump of every tier (``verbose``): STM, segments, persona, facts, the write log (its counts)."""
    _print_stm(memory, p)
    _print_segments(memory, p)
    _print_persona(memory, p)
    _print_facts(memory, p)
    return _print_log(memory, p)


def _print_summary(p: _Printer, r: DemoResult, verbose: bool) -> None:
    """The demo's last lines: the memory's counts and the write log (with ``verbose``: the full summary)."""
    stats, events = r["stats"], r["events"]
    if verbose:
        p.section("SUMMARY")
        p(
            f"turns ingested: {r['turns']} ({r['added']} new) in {len(SESSIONS)} sessions; "
            f"segment promotions: {r['promoted']}"
        )
    else:
        p()
    p(
        f"memory: {_n(stats.stm_pages, 'STM page')}, {_n(stats.segments, 'segment')} holding "
        f"{_n(stats.mtm_pages, 'MTM page')}, {_n(stats.user_facts, 'user fact')}, "
        f"{_n(stats.agent_facts, 'agent trait')}, {_n(stats.llm_calls, 'LLM call')}"
    )
    p("AMU write log: " + ", ".join(f"{a} {events[a]}" for a in _ACTIONS))
    if verbose:
        for u in r["fused"]:
            p(f"fused update: {' + '.join(map(repr, u['old']))} -> {u['fused']!r} [{' + '.join(u['sources'])}]")
        p(f"probes answered from memory: {r['probe_hits']}/{r['probes']}")
        for recall in r["session1_recalls"]:
            p(f"recalled from session 1: {recall['question']} -> {recall['source']}")
        p(f"ran in {r['seconds']:.1f} s")
    else:
        p(f"ran in {r['seconds']:.1f} s; `memoryos demo --verbose` prints every tier in full")


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m langchain_memoryos.cli.demo`` (``--verbose``: the full dump).

    Returns:
        The process exit code (0).

    Example:
        ``main()`` prints the whole demo (here with :func:`run_demo` stubbed out) and returns 0:

        >>> from unittest import mock
        >>> with mock.patch("langchain_memoryos.cli.demo.run.run_demo") as demo:
        ...     main([]), demo.call_count, main(["--verbose"]), demo.call_args.kwargs
        (0, 1, 0, {'verbose': True})
    """
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if callable(reconfigure):
        reconfigure(errors="replace")
    args = sys.argv[1:] if argv is None else argv
    run_demo(verbose="--verbose" in args or "-v" in args)
    return 0
