"""The declared pipelines: every write and read stage, its tier, where it may go next, and its function.

This table is the one place the papers' figure is written down, and the one
registry of the stages: every stage is a function ``(ctx, run) -> Step[None]``
(``ctx`` the memory's :class:`~langchain_memoryos.store.settings.StageContext`,
``run`` the turn, record run or read it moves on, which it sets ``run.next``
of). One runner, :func:`run_stage`, runs the stage a run names and checks
that it went where its row allows: the engine's write loop
(:func:`~langchain_memoryos.pipeline.write.run_turn`), the AMU record loop of
``add_fact`` (:func:`~langchain_memoryos.pipeline.write.write_record`) and the
read loop (:func:`~langchain_memoryos.pipeline.read.read`) all run it; the
write and read graphs are built from the tables (one node per row, its
routes as the node's edges). A stage that routes somewhere its row does not
name is an error.

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
    >>> WRITE_TABLE["fuse"].routes, WRITE_TABLE["fuse"].function.__name__
    (('lpm_commit',), 'stage_fuse')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from langchain_memoryos.amu import stage_fuse, stage_lpm_commit, stage_relation_judge, stage_write_gate
from langchain_memoryos.errors import StageRouteError
from langchain_memoryos.kernel.effects import Step
from langchain_memoryos.retrieval.recall import (
    stage_assemble_context,
    stage_retrieve_lpm,
    stage_retrieve_mtm,
    stage_retrieve_stm,
)
from langchain_memoryos.schema import WriteEvent
from langchain_memoryos.store.settings import StageContext
from langchain_memoryos.tiers.lpm import stage_persona_promote
from langchain_memoryos.tiers.mtm import stage_chain_link, stage_heat_evict, stage_mtm_insert
from langchain_memoryos.tiers.stm import stage_stm_append

__all__ = [
    "DONE",
    "READ_STAGES",
    "READ_TABLE",
    "RESTART",
    "WRITE_STAGES",
    "WRITE_TABLE",
    "Run",
    "Stage",
    "StageFunction",
    "StageResult",
    "run_stage",
    "run_stages",
]

#: Where a run ends.
DONE = "done"
#: A turn that found its user moved at commit starts again here (see ``unit_of_work``): from any stage that commits.
RESTART = "stm_append"

Tier = Literal["STM", "MTM", "LPM", "AMU", "read"]

#: A stage: it moves the run on (its store operations buffered in the user's state) and sets ``run.next``.
StageFunction = Callable[[StageContext, Any], Step[None]]


class Run(Protocol):
    """What a stage moves on: a turn, ``add_fact``'s records, a read. ``next`` names its next stage (or ``done``)."""

    next: str


@dataclass(frozen=True)
class Stage:
    """One stage of a pipeline: its name (the papers' term), its tier, the stages it may go to next, its function.

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
    function: StageFunction


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
        "stm_append",
        "STM",
        ("chain_link", DONE),
        "the page joins its thread's FIFO; overflow and idle threads leave",
        stage_stm_append,
    ),
    Stage(
        "chain_link",
        "STM",
        ("write_gate", "mtm_insert", "chain_link", "persona_promote", DONE),
        "the page just added: chain link, meta, keywords, its fact records to AMU now",
        stage_chain_link,
    ),
    Stage(
        "mtm_insert",
        "MTM",
        ("heat_evict", "mtm_insert", "chain_link", "persona_promote", DONE),
        "a page leaving STM joins the best segment (F_score > theta) or starts one",
        stage_mtm_insert,
    ),
    Stage(
        "heat_evict",
        "MTM",
        ("mtm_insert", "chain_link", "persona_promote", DONE),
        "over capacity: the coldest segment goes",
        stage_heat_evict,
    ),
    Stage(
        "persona_promote",
        "LPM",
        ("write_gate", "persona_promote", DONE),
        "a segment at heat tau updates the persona; the agent traits it finds go to AMU",
        stage_persona_promote,
    ),
    Stage(
        "write_gate",
        "AMU",
        ("relation_judge", "lpm_commit", "write_gate", "mtm_insert", "chain_link", "persona_promote", DONE),
        "the write-gate score; the candidates of an admitted record",
        stage_write_gate,
    ),
    Stage(
        "relation_judge",
        "AMU",
        ("fuse", "lpm_commit", "write_gate", "mtm_insert", "chain_link", "persona_promote", DONE),
        "duplicate / update / separate per candidate; the action rule",
        stage_relation_judge,
    ),
    Stage("fuse", "AMU", ("lpm_commit",), "one current record from the new one and those it updates", stage_fuse),
    Stage(
        "lpm_commit",
        "AMU",
        ("write_gate", "mtm_insert", "chain_link", "persona_promote", DONE),
        "store and log the record; over capacity the least useful goes",
        stage_lpm_commit,
    ),
)

READ_STAGES: tuple[Stage, ...] = (
    Stage(
        "retrieve_stm",
        "read",
        ("retrieve_lpm", DONE),
        "the thread's STM, the persona; the query embedded",
        stage_retrieve_stm,
    ),
    Stage("retrieve_lpm", "read", ("retrieve_mtm",), "user facts and agent traits above tau_r", stage_retrieve_lpm),
    Stage(
        "retrieve_mtm", "read", ("assemble_context",), "MTM pages ranked, filling the word budget", stage_retrieve_mtm
    ),
    Stage("assemble_context", "read", (DONE,), "no repeated evidence; segment visits saved", stage_assemble_context),
)

WRITE_TABLE: Mapping[str, Stage] = {s.name: s for s in WRITE_STAGES}
READ_TABLE: Mapping[str, Stage] = {s.name: s for s in READ_STAGES}


def run_stage(table: Mapping[str, Stage], ctx: StageContext, run: Run) -> Step[Stage]:
    """Step: run the stage of ``table`` that ``run.next`` names, and check that it went where its row allows.

    The one runner of every stage: the write loop (a turn through
    :data:`WRITE_TABLE`), the AMU record loop (records through its AMU rows)
    and the read loop (:data:`READ_TABLE`) run it, as do the graphs' nodes.

    Returns:
        The row of the stage that ran.

    Raises:
        langchain_memoryos.errors.StageRouteError: ``run.next`` names no row of ``table``, or the
            stage set ``run.next`` to a stage its row does not name (a bug in that stage).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> from langchain_memoryos.kernel.effects import run_sync
        >>> from langchain_memoryos.retrieval.recall import ReadRun
        >>> m = MemoryOS(); ctx = StageContext(m.repository, m.settings)
        >>> r = ReadRun("u", "t", "Where do I live?")
        >>> run_sync(run_stage(READ_TABLE, ctx, r), m._services).name, r.next  # an empty memory: nothing more
        ('retrieve_stm', 'done')
        >>> def astray(ctx, run):  # a stage that goes where its row does not say
        ...     run.next = "retrieve_mtm"
        ...     yield from ()
        >>> table = {"look": Stage("look", "read", (DONE,), "looks, then strays", astray)}
        >>> run_sync(run_stage(table, ctx, ReadRun("u", "t", "q", next="look")), m._services)
        Traceback (most recent call last):
        ...
        langchain_memoryos.errors.StageRouteError: read stage 'look' routed to 'retrieve_mtm'; its routes are ('done',)
    """
    spec = table.get(run.next)
    if spec is None:
        raise StageRouteError(f"unknown stage {run.next!r}; the stages of this table are {list(table)}")
    yield from spec.function(ctx, run)
    if run.next not in spec.routes:
        raise StageRouteError(f"{spec.tier} stage {spec.name!r} routed to {run.next!r}; its routes are {spec.routes}")
    return spec


def run_stages(table: Mapping[str, Stage], ctx: StageContext, run: Run) -> Step[None]:
    """Step: run ``run`` through the stages of ``table`` (:func:`run_stage`, one by one) until it is done.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> from langchain_memoryos.kernel.effects import run_sync
        >>> from langchain_memoryos.retrieval.recall import ReadRun
        >>> m = MemoryOS(); _ = m.add_turn("I play the cello.", "Lovely.", user_id="u")
        >>> r = ReadRun("u", "t2", "Which instrument do I play?")
        >>> run_sync(run_stages(READ_TABLE, StageContext(m.repository, m.settings), r), m._services)
        >>> r.next, [s.page.user_input for s in r.ctx.pages]
        ('done', ['I play the cello.'])
    """
    while run.next != DONE:
        yield from run_stage(table, ctx, run)
