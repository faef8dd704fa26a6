"""The write pipeline: the declared stages (:data:`~langchain_memoryos.pipeline.stages.WRITE_STAGES`) run one by one.

:func:`run_write_stage` runs the stage a turn names (through the one runner,
:func:`~langchain_memoryos.pipeline.stages.run_stage`, which checks that the
stage went where the table says it may) and commits the turn when it is done;
the engine loop (:func:`run_turn`) and the write graph's nodes both run it.
The AMU stages run one record (the new page's facts, a promotion's traits)
at a time; :func:`write_record` runs one record of ``add_fact`` through the
same AMU rows of the table.
"""

from __future__ import annotations

import datetime as _dt
import logging

from langchain_memoryos.amu import Prejudged, RecordRun, RecordWrite
from langchain_memoryos.index.vector_index import Vector
from langchain_memoryos.kernel.effects import Step, judged
from langchain_memoryos.pipeline.stages import DONE, WRITE_TABLE, StageResult, run_stage, run_stages
from langchain_memoryos.schema import MemoryRecord, WriteEvent, WriteReport
from langchain_memoryos.store.repository import MemoryRepository, UserState
from langchain_memoryos.store.settings import EngineSettings, StageContext
from langchain_memoryos.tiers.turn import TurnWrite, commit_turn

__all__ = ["run_turn", "run_write_stage", "write_record"]

logger = logging.getLogger("langchain_memoryos")


def run_write_stage(ctx: StageContext, t: TurnWrite) -> Step[StageResult]:
    """Step: run the stage ``t.next`` names (as the table declares it); commit the turn when it is done.

    Returns:
        What the stage did (:class:`~langchain_memoryos.pipeline.stages.StageResult`): where the turn
        goes next (``stm_append`` again when the user moved while the turn was judged) and the write
        events it logged.

    Raises:
        langchain_memoryos.errors.StageRouteError: an unknown stage, or a stage that routed where its
            row of the table does not allow.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> from langchain_memoryos.kernel.effects import run_sync
        >>> m = MemoryOS(); ctx = StageContext(m.repository, m.settings)
        >>> t = TurnWrite("u", "t", "I live in Oslo.", "Nice!", "2024-01-01", None, None)
        >>> run_sync(run_write_stage(ctx, t), m._services)
        StageResult(stage='stm_append', next='chain_link', events=())
        >>> run_sync(run_write_stage(ctx, t), m._services).next  # the page read: a fact to AMU
        'write_gate'
        >>> while t.next != "done":
        ...     _ = run_sync(run_write_stage(ctx, t), m._services)
        >>> [p.user_input for p in m.get_stm(user_id="u", thread_id="t")]
        ['I live in Oslo.']
        >>> [f.summary for f in m.list_facts(user_id="u")]
        ['The user lives in Oslo.']
    """
    logged = len(t.report.events) + (len(t.write.events) if t.write is not None else 0)
    spec = yield from judged(run_stage(WRITE_TABLE, ctx, t), t.judgements)
    events = [*t.report.events, *(t.write.events if t.write is not None else ())][logged:]
    if t.next == DONE and t.state is not None:
        yield from commit_turn(ctx.repo, t)  # may restart the turn at RESTART (the user moved meanwhile)
    return StageResult(spec.name, t.next, tuple(events))


def run_turn(repo: MemoryRepository, settings: EngineSettings, t: TurnWrite) -> Step[WriteReport]:
    """Step: run a turn through its stages until it is done (committed); a failure drops the user's cached state.

    The write graph's nodes run the same stages (:func:`run_write_stage`) one per
    node; ``MemoryOS.add_turn`` and ``add_turns`` run them here directly,
    without the graph runtime's per-node bookkeeping.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> from langchain_memoryos.kernel.effects import run_sync
        >>> m = MemoryOS()
        >>> t = TurnWrite("u", "t", "I live in Oslo.", "Nice!", "2024-01-01", None, None)
        >>> run_sync(run_turn(m.repository, m.settings, t), m._services).added, t.next
        (True, 'done')
    """
    ctx = StageContext(repo, settings)
    try:
        while t.next != DONE:
            yield from run_write_stage(ctx, t)
    except BaseException:
        if t.lease is not None:
            t.lease.fail()
        raise
    return t.report


def write_record(
    repo: MemoryRepository,
    settings: EngineSettings,
    state: UserState,
    record: MemoryRecord,
    *,
    now: _dt.datetime,
    source: str,
    vector: Vector | None = None,
    prejudged: Prejudged | None = None,
    fallback: bool = False,
    offline: bool = False,
) -> Step[list[WriteEvent]]:
    """Step: pass one typed record through the AMU write path and log the decision.

    The stages are the AMU rows of the write table (``write_gate``,
    ``relation_judge``, ``fuse``, ``lpm_commit``), run by the same runner as a
    turn's: the same functions the write graph's nodes run.

    Args:
        repo: the memory's repository.
        settings: the memory's settings (``settings.amu``: thresholds and capacities).
        state: the user's state (mutations are buffered for the caller's flush).
        record: the new record (its ``kind`` picks the user KB or agent traits).
        now: the decision time (conversation clock).
        source: where the record came from (``promotion``, ``add_fact``, ``tool``).
        vector: the summary's embedding when the caller already has it.
        prejudged: a relation judgement made ahead (see :func:`~langchain_memoryos.amu.prejudge_relations`);
            used only if the record's candidates are still exactly those judged.
        fallback: a fallback controller made the record (its events say so).
        offline: judge and fuse with the offline controller (a page's records).

    Returns:
        The logged events: the decision (``stored``, ``discarded``, ``updated``
        or ``filtered``) first, then one ``evicted`` event per record that the
        capacity pushed out (the least useful: lowest confidence, then oldest).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> from langchain_memoryos.kernel.effects import run_sync
        >>> from langchain_memoryos.schema import ensure_utc
        >>> m = MemoryOS()
        >>> def step(summary):
        ...     state = yield from m.repository.load("u")
        ...     rec = MemoryRecord(aspect="health", intent="inform", entities=["vegan"], summary=summary)
        ...     return (yield from write_record(m.repository, m.settings, state, rec, now=ensure_utc(None), source="x"))
        >>> [e.action for e in run_sync(step("The user is vegan."), m._services)]
        ['stored']
        >>> [e.action for e in run_sync(step("The user is vegan."), m._services)]
        ['discarded']
    """
    w = RecordWrite(
        record, now=now, source=source, vector=vector, offline=offline, prejudged=prejudged, fallback=fallback
    )
    run = RecordRun(state, [w])
    yield from run_stages(WRITE_TABLE, StageContext(repo, settings), run)
    return run.events
