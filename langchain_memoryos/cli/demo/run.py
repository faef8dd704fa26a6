"""Running the demo: every section in order, the summary, and :func:`main`."""

from __future__ import annotations

import sys
import time
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

    stats = memory.stats(user_id=USER_ID)
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
        ``main()`` prints the whole demo (here with :func:`run_demo` stubbed out) and returns 0:

        >>> from unittest import mock
        >>> with mock.patch("langchain_memoryos.cli.demo.run.run_demo") as demo:
        ...     main(), demo.call_count
        (0, 1)
    """
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if callable(reconfigure):
        reconfigure(errors="replace")
    run_demo()
    return 0
