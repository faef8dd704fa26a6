"""The declared pipelines: every write and read stage, its tier, and where it may go next.

This table is the one place the papers' figure is written down. The engine
loop (:func:`~langchain_memoryos.pipeline.write.run_stage`), the write and
read graphs (their nodes and edges), the AMU record loop
(:data:`~langchain_memoryos.amu.RECORD_STAGES`) and the tests all read it; a
stage that routes somewhere its row does not name is an error.

Write path (one ``add_turn``)::

    stm_append ─▶ chain_link ─▶ write_gate ─▶ relation_judge ─▶ fuse ─▶ lpm_commit   (AMU, once per record)
                                                    │
                      mtm_insert ◀──────────────────┘ (pages leaving STM)
                       │      ▲
                       ▼      │
                   heat_evict ┘ ─▶ persona_promote ─▶ write_gate (agent traits) …

A page is analysed when it is added (``chain_link``: chain link against the
thread's previous page, meta, keywords, its typed records), and its facts go
through AMU at once, in the turn's store batch (``chain_link`` ─▶
``write_gate``; after the last record the pages leaving STM go to
``mtm_insert``). A page leaving STM joins a segment and writes no facts again
(one stored before pages were analysed when added is analysed as it leaves:
``mtm_insert``/``lpm_commit`` ─▶ ``chain_link``). A hot segment's promotion
updates the persona and sends the agent traits it finds.

Read path (one ``retrieve``)::

    retrieve_stm ─▶ retrieve_lpm ─▶ retrieve_mtm ─▶ assemble_context

Example:
    >>> [s.name for s in WRITE_STAGES if s.tier == "AMU"]
    ['write_gate', 'relation_judge', 'fuse', 'lpm_commit']
    >>> WRITE_TABLE["fuse"].routes
    ('lpm_commit',)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from langchain_memoryos.schema import WriteEvent

__all__ = ["DONE", "READ_STAGES", "READ_TABLE", "RESTART", "WRITE_STAGES", "WRITE_TABLE", "Stage", "StageResult"]

#: Where a run ends.
DONE = "done"
#: A turn that found its user moved at commit starts again here (see ``unit_of_work``): from any stage that commits.
RESTART = "stm_append"

Tier = Literal["STM", "MTM", "LPM", "AMU", "read"]


@dataclass(frozen=True)
class Stage:
    """One stage of a pipeline: its name (the papers' term), its tier, and the stages it may go to next.

    Example:
        >>> [s.name for s in WRITE_STAGES if "persona_promote" in s.routes]  # where a promotion can start from
        ['chain_link', 'mtm_insert', 'heat_evict', 'persona_promote', 'write_gate', 'relation_judge', 'lpm_commit']
        >>> WRITE_TABLE["stm_append"].routes, "write_gate" in WRITE_TABLE["chain_link"].routes  # facts at once
        (('chain_link', 'done'), True)
    """

    name: str
    tier: Tier
    routes: tuple[str, ...]
    does: str


@dataclass(frozen=True)
class StageResult:
    """What one run of a write stage did: the stage, where the turn goes next, the write events it logged.

    The stage's store operations are buffered in the user's state (the unit of
    work) and committed with the turn, in one batch. The write graph's nodes
    return these as their state updates (``stages``, ``events``).

    Example:
        >>> StageResult("fuse", "lpm_commit").events
        ()
    """

    stage: str
    next: str
    events: tuple[WriteEvent, ...] = ()


WRITE_STAGES: tuple[Stage, ...] = (
    Stage(
        "stm_append", "STM", ("chain_link", DONE), "the page joins its thread's FIFO; overflow and idle threads leave"
    ),
    Stage(
        "chain_link",
        "STM",
        ("write_gate", "mtm_insert", "chain_link", "persona_promote", DONE),
        "the page just added: chain link, meta, keywords, its fact records to AMU now",
    ),
    Stage(
        "mtm_insert",
        "MTM",
        ("heat_evict", "mtm_insert", "chain_link", "persona_promote", DONE),
        "a page leaving STM joins the best segment (F_score > theta) or starts one",
    ),
    Stage(
        "heat_evict",
        "MTM",
        ("mtm_insert", "chain_link", "persona_promote", DONE),
        "over capacity: the coldest segment goes",
    ),
    Stage(
        "persona_promote",
        "LPM",
        ("write_gate", "persona_promote", DONE),
        "a segment at heat tau updates the persona; the agent traits it finds go to AMU",
    ),
    Stage(
        "write_gate",
        "AMU",
        ("relation_judge", "lpm_commit", "write_gate", "mtm_insert", "chain_link", "persona_promote", DONE),
        "the write-gate score; the candidates of an admitted record",
    ),
    Stage(
        "relation_judge",
        "AMU",
        ("fuse", "lpm_commit", "write_gate", "mtm_insert", "chain_link", "persona_promote", DONE),
        "duplicate / update / separate per candidate; the action rule",
    ),
    Stage("fuse", "AMU", ("lpm_commit",), "one current record from the new one and those it updates"),
    Stage(
        "lpm_commit",
        "AMU",
        ("write_gate", "mtm_insert", "chain_link", "persona_promote", DONE),
        "store and log the record; over capacity the least useful goes",
    ),
)

READ_STAGES: tuple[Stage, ...] = (
    Stage("retrieve_stm", "read", ("retrieve_lpm", DONE), "the thread's STM, the persona; the query embedded"),
    Stage("retrieve_lpm", "read", ("retrieve_mtm",), "user facts and agent traits above tau_r"),
    Stage("retrieve_mtm", "read", ("assemble_context",), "MTM pages ranked, filling the word budget"),
    Stage("assemble_context", "read", (DONE,), "no repeated evidence; segment visits saved"),
)

WRITE_TABLE: Mapping[str, Stage] = {s.name: s for s in WRITE_STAGES}
READ_TABLE: Mapping[str, Stage] = {s.name: s for s in READ_STAGES}
