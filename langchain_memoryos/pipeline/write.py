"""The write pipeline: the declared stages (:data:`~langchain_memoryos.pipeline.stages.WRITE_STAGES`) run one by one.

:func:`run_stage` runs the stage a turn names, checks that the stage went
where the table says it may, and commits the turn when it is done; the engine
loop (:func:`add_turn`) and the write graph's nodes both run it. The AMU
stages run one record (the new page's facts, a promotion's traits) through
the record stages of :mod:`langchain_memoryos.amu` (the same functions
``add_fact`` runs).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from langchain_memoryos.amu import RECORD_STAGES, next_stage
from langchain_memoryos.errors import StageRouteError
from langchain_memoryos.pipeline.effects import Step, judged
from langchain_memoryos.pipeline.settings import EngineSettings
from langchain_memoryos.pipeline.stages import DONE, WRITE_TABLE, StageResult
from langchain_memoryos.pipeline.turn import TurnWrite, after_record, commit_turn, embed_turn
from langchain_memoryos.schema import WriteReport
from langchain_memoryos.store.repository import MemoryRepository
from langchain_memoryos.tiers.lpm import stage_persona_promote
from langchain_memoryos.tiers.mtm import stage_chain_link, stage_heat_evict, stage_mtm_insert
from langchain_memoryos.tiers.stm import stage_stm_append

__all__ = ["STAGE_FUNCTIONS", "add_turn", "run_stage", "run_turn"]

logger = logging.getLogger("langchain_memoryos")


def _record_done(t: TurnWrite, settings: EngineSettings) -> None:
    """After an AMU record stage: the record's next stage, else the next record / hot segment / done."""
    assert t.write is not None
    stage = next_stage(t.write)
    if stage == DONE:
        t.report.events.extend(t.write.events)
        t.write = None
        t.next = after_record(t, settings)
    else:
        t.next = stage


def _amu(name: str) -> Callable[[MemoryRepository, EngineSettings, TurnWrite], Step[None]]:
    """A turn-level AMU stage: the record stage of that name on the current (or next) record."""
    record_stage = RECORD_STAGES[name]

    def stage(repo: MemoryRepository, settings: EngineSettings, t: TurnWrite) -> Step[None]:
        if name == "write_gate":
            t.write = t.records.pop(0)
        assert t.write is not None
        yield from record_stage(t.user, t.write, settings.amu)
        _record_done(t, settings)

    stage.__name__ = stage.__qualname__ = f"stage_{name}"
    stage.__doc__ = f"``{name}``: {WRITE_TABLE[name].does} (AMU, one record)."
    return stage


def _step(fn: Callable[..., object]) -> Callable[[MemoryRepository, EngineSettings, TurnWrite], Step[None]]:
    """A stage that needs no IO, as a step like the others."""

    def stage(repo: MemoryRepository, settings: EngineSettings, t: TurnWrite) -> Step[None]:
        fn(settings, t)
        return
        yield  # pragma: no cover - a step like the others

    stage.__name__ = stage.__qualname__ = fn.__name__
    stage.__doc__ = fn.__doc__
    return stage


#: The function of every write stage, by the name the table (:data:`~langchain_memoryos.pipeline.stages.WRITE_STAGES`)
#: gives it; each is ``(repo, settings, turn) -> Step[None]`` and sets ``turn.next`` to one of its routes.
STAGE_FUNCTIONS: Mapping[str, Callable[[MemoryRepository, EngineSettings, TurnWrite], Step[None]]] = {
    "stm_append": stage_stm_append,
    "chain_link": lambda repo, settings, t: stage_chain_link(settings, t),
    "mtm_insert": _step(stage_mtm_insert),
    "heat_evict": _step(stage_heat_evict),
    "persona_promote": lambda repo, settings, t: stage_persona_promote(settings, t),
    "write_gate": _amu("write_gate"),
    "relation_judge": _amu("relation_judge"),
    "fuse": _amu("fuse"),
    "lpm_commit": _amu("lpm_commit"),
}
assert list(STAGE_FUNCTIONS) == list(WRITE_TABLE), "every declared write stage has one function"


def run_stage(repo: MemoryRepository, settings: EngineSettings, t: TurnWrite) -> Step[StageResult]:
    """Step: run the stage ``t.next`` names (as the table declares it); commit the turn when it is done.

    Returns:
        What the stage did (:class:`~langchain_memoryos.pipeline.stages.StageResult`): where the turn
        goes next (``stm_append`` again when the user moved while the turn was judged) and the write
        events it logged.

    Raises:
        ValueError: an unknown stage, or a stage that routed where its row of
            the table does not allow.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> from langchain_memoryos.pipeline.effects import run_sync
        >>> m = MemoryOS()
        >>> t = TurnWrite("u", "t", "I live in Oslo.", "Nice!", "2024-01-01", None, None)
        >>> run_sync(run_stage(m.repository, m.settings, t), m._services)
        StageResult(stage='stm_append', next='chain_link', events=())
        >>> run_sync(run_stage(m.repository, m.settings, t), m._services).next  # the page read: a fact to AMU
        'write_gate'
        >>> while t.next != "done":
        ...     _ = run_sync(run_stage(m.repository, m.settings, t), m._services)
        >>> [p.user_input for p in m.get_stm(user_id="u", thread_id="t")]
        ['I live in Oslo.']
        >>> [f.summary for f in m.list_facts(user_id="u")]
        ['The user lives in Oslo.']
    """
    spec = WRITE_TABLE.get(t.next)
    if spec is None:
        raise StageRouteError(f"unknown write stage {t.next!r}; the stages are {list(WRITE_TABLE)}")
    logged = len(t.report.events) + (len(t.write.events) if t.write is not None else 0)
    yield from judged(STAGE_FUNCTIONS[spec.name](repo, settings, t), t.judgements)
    if t.next not in spec.routes:
        raise StageRouteError(f"write stage {spec.name!r} routed to {t.next!r}; its routes are {spec.routes}")
    events = [*t.report.events, *(t.write.events if t.write is not None else ())][logged:]
    if t.next == DONE and t.state is not None:
        yield from commit_turn(repo, t)  # may restart the turn at RESTART (the user moved meanwhile)
    return StageResult(spec.name, t.next, tuple(events))


def add_turn(
    repo: MemoryRepository,
    settings: EngineSettings,
    *,
    user_id: str,
    thread_id: str,
    user_input: str,
    agent_response: str,
    timestamp: Any,
    metadata: Mapping[str, Any] | None,
    turn_id: str | None,
    optimistic: bool = False,
) -> Step[WriteReport]:
    """Step: store one exchange and run everything it triggers, stage by stage.

    The page goes to the thread's STM and is analysed (chain link, meta,
    keywords, its fact records), and its facts go through the AMU stages at
    once; while STM is over capacity its oldest page moves to MTM (segment
    join or creation, heat eviction); the STM of the user's idle threads
    moves too (``stm_idle_seconds``); then every hot segment is promoted
    (persona, agent traits through AMU). The stages are those of the table (the write
    graph's nodes), run here directly; all writes are flushed in one store
    batch. Re-adding the same turn changes nothing.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> from langchain_memoryos.pipeline.effects import run_sync
        >>> m = MemoryOS()
        >>> def step():
        ...     return add_turn(m.repository, m.settings, user_id="u", thread_id="t", user_input="I'm vegan.",
        ...                     agent_response="Noted.", timestamp="2024-01-01", metadata=None, turn_id="t1")
        >>> run_sync(step(), m._services).added, run_sync(step(), m._services).added  # the same turn again
        (True, False)
    """
    t = TurnWrite(user_id, thread_id, user_input, agent_response, timestamp, metadata, turn_id, optimistic=optimistic)
    yield from embed_turn(settings, t)
    return (yield from run_turn(repo, settings, t))


def run_turn(repo: MemoryRepository, settings: EngineSettings, t: TurnWrite) -> Step[WriteReport]:
    """Step: run a turn through its stages until it is done (committed); a failure drops the user's cached state.

    The write graph's nodes run the same stages (:func:`run_stage`) one per
    node; ``MemoryOS.add_turn`` and ``add_turns`` run them here directly,
    without the graph runtime's per-node bookkeeping.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> from langchain_memoryos.pipeline.effects import run_sync
        >>> m = MemoryOS()
        >>> t = TurnWrite("u", "t", "I live in Oslo.", "Nice!", "2024-01-01", None, None)
        >>> run_sync(run_turn(m.repository, m.settings, t), m._services).added, t.next
        (True, 'done')
    """
    try:
        while t.next != DONE:
            yield from run_stage(repo, settings, t)
    except BaseException:
        if t.lease is not None:
            t.lease.fail()
        raise
    return t.report
