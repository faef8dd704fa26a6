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

from langchain_memoryos.cli.demo.results import (
    DemoResult,
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
