r"""Offline demo: ingest a multi-session conversation and show every memory tier.

Run it with ``python -m langchain_memoryos.cli.demo`` (or ``make demo``). It needs no
API key and no network: the embeddings are the offline MiniLM and every
judgement is made by the deterministic :class:`HeuristicController`.

The demo feeds the built-in conversation of :mod:`langchain_memoryos.cli.demo_data`
(one user, six dated sessions, one thread per session) through
:meth:`MemoryOS.add_turn`, then shows on one screen (:mod:`.story`) each tier
doing its job: the live thread's STM; a question asked in a new thread after
the last session recalling a session-1 page through its MTM segment, the pages
listed in the ranking's order with its score ``S(p)``; a fact AMU updated (old
record, new evidence, fused record with its id) and how a question about it
recalls it; and the probes about session 1. ``--verbose`` (``run_demo(verbose=True)``)
prints every tier in full instead: what each session moved from short-term to
mid-term memory, the segments with their heat, the persona, user facts and
agent traits, the AMU write log, every fused update, what retrieval returns
for each probe and which session-1 pages it recalled. Given a chat model
(``run_demo(model=...)``, ``memoryos demo --model ...``), the model also
answers each question from the retrieved context; ingestion stays offline.

Example:
    >>> clip("a   long   text", 20)
    'a long text'
"""

from langchain_memoryos.cli.demo.results import (
    DemoResult,
    FactRecall,
    FusedUpdate,
    ProbeResult,
    SessionRecall,
    fused_updates,
    probe_thread_id,
    session1_recalls,
    session_thread_id,
    turn_timestamp,
)
from langchain_memoryos.cli.demo.run import SECTION_TITLES, main, run_demo
from langchain_memoryos.cli.demo.sections import ANSWER_INSTRUCTIONS, answer_with_context
from langchain_memoryos.cli.demo.text import WIDTH, clip, format_table

__all__ = [
    "SECTION_TITLES",
    "WIDTH",
    "ANSWER_INSTRUCTIONS",
    "DemoResult",
    "FactRecall",
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
