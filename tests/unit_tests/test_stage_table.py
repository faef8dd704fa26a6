"""The stage table is the registry: every row's function, every route, and the graphs built from the table."""

from __future__ import annotations

import datetime as dt
import inspect
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from langchain_memoryos import MemoryOS
from langchain_memoryos.amu import AMURun, RecordRun, RecordWrite
from langchain_memoryos.errors import StageRouteError
from langchain_memoryos.kernel.effects import Step, run_sync
from langchain_memoryos.pipeline.read import read
from langchain_memoryos.pipeline.stages import (
    DONE,
    READ_STAGES,
    READ_TABLE,
    RESTART,
    WRITE_STAGES,
    WRITE_TABLE,
    Stage,
    run_stage,
    run_stages,
)
from langchain_memoryos.pipeline.write import run_turn
from langchain_memoryos.retrieval.recall import ReadRun
from langchain_memoryos.schema import MemoryRecord
from langchain_memoryos.store.settings import StageContext
from langchain_memoryos.tiers.turn import TurnWrite

T0 = dt.datetime(2024, 7, 1, 9, tzinfo=dt.UTC)
TABLES = {"write": (WRITE_STAGES, WRITE_TABLE), "read": (READ_STAGES, READ_TABLE)}


@pytest.mark.parametrize("which", sorted(TABLES))
def test_every_row_has_its_stage_function(which: str) -> None:
    stages, table = TABLES[which]
    assert list(table) == [row.name for row in stages]  # one row per name
    for row in stages:
        fn = row.function
        assert fn.__name__ == f"stage_{row.name}", row.name
        assert getattr(sys.modules[fn.__module__], fn.__name__) is fn  # a function of its module, not a wrapper
        assert inspect.isgeneratorfunction(fn), f"{row.name}: a stage is a step"
        assert list(inspect.signature(fn).parameters)[0] == "ctx" and len(inspect.signature(fn).parameters) == 2
        assert row.does


@pytest.mark.parametrize("which", sorted(TABLES))
def test_every_route_names_a_row(which: str) -> None:
    stages, table = TABLES[which]
    for row in stages:
        assert row.routes, row.name
        assert set(row.routes) <= {*table, DONE}, row.name
    assert RESTART in WRITE_TABLE
    # every row can be reached from the first
    seen, todo = {stages[0].name}, [stages[0].name]
    while todo:
        for route in table[todo.pop()].routes:
            if route != DONE and route not in seen:
                seen.add(route)
                todo.append(route)
    assert seen == set(table)


def _expected(stages: Sequence[Stage]) -> tuple[set[str], set[tuple[str, str, bool]]]:
    nodes = {"__start__", "__end__", *(row.name for row in stages)}
    edges = {("__start__", stages[0].name, False)}
    for row in stages:
        for route in row.routes:
            edges.add((row.name, "__end__" if route == DONE else route, len(row.routes) > 1))
    return nodes, edges


def _drawn(graph: Any) -> tuple[set[str], set[tuple[str, str, bool]]]:
    drawn = graph.get_graph()
    return set(drawn.nodes), {(e.source, e.target, e.conditional) for e in drawn.edges}


def test_the_graphs_nodes_and_edges_are_the_tables() -> None:
    memory = MemoryOS()
    assert _drawn(memory.write_graph) == _expected(WRITE_STAGES)
    assert _drawn(memory.read_graph) == _expected(READ_STAGES)


def test_the_runner_runs_the_rows_function_and_checks_its_route() -> None:
    memory = MemoryOS()
    ctx = StageContext(memory.repository, memory.settings)
    ran: list[str] = []

    def stage_look(ctx: StageContext, run: ReadRun) -> Step[None]:
        ran.append(run.query)
        run.next = DONE
        yield from ()

    def stage_stray(ctx: StageContext, run: ReadRun) -> Step[None]:
        run.next = "assemble_context"
        yield from ()

    table: Mapping[str, Stage] = {
        "look": Stage("look", "read", (DONE,), "a read stage of its own", stage_look),
        "stray": Stage("stray", "read", (DONE,), "goes where its row does not say", stage_stray),
    }
    r = ReadRun("u", "t", "hello?", next="look")
    assert run_sync(run_stage(table, ctx, r), memory._services).name == "look"
    assert (ran, r.ctx) == (["hello?"], None)  # its own function ran: no context was assembled
    with pytest.raises(StageRouteError, match=r"'stray' routed to 'assemble_context'; its routes are \('done',\)"):
        run_sync(run_stage(table, ctx, ReadRun("u", "t", "q", next="stray")), memory._services)
    with pytest.raises(StageRouteError, match="unknown stage 'nowhere'"):
        run_sync(run_stage(table, ctx, ReadRun("u", "t", "q", next="nowhere")), memory._services)


def test_the_three_loops_run_their_table() -> None:
    memory = MemoryOS()
    with pytest.raises(StageRouteError, match="unknown stage 'retrieve_stm'"):  # a turn runs the write table only
        run_sync(run_turn(memory.repository, memory.settings, _turn("hi", next="retrieve_stm")), memory._services)
    with pytest.raises(StageRouteError, match="unknown stage 'stm_append'"):  # a read runs the read table only
        run_sync(read(memory.repository, memory.settings, ReadRun("u", "t", "q", next="stm_append")), memory._services)


def test_the_record_loop_runs_the_amu_rows_record_after_record() -> None:
    memory = MemoryOS()
    ctx = StageContext(memory.repository, memory.settings)

    def vegan() -> RecordWrite:
        record = MemoryRecord(aspect="health", intent="inform", entities=["vegan"], summary="The user is vegan.")
        return RecordWrite(record, now=T0, source="doc")

    def step() -> Step[RecordRun]:
        state = yield from memory.repository.load("u")
        run = RecordRun(state, [vegan(), vegan()])
        yield from run_stages(WRITE_TABLE, ctx, run)
        return run

    run = run_sync(step(), memory._services)
    assert [(e.action, e.reason) for e in run.events][1:] == [("discarded", f"duplicate of {run.events[0].record.id}")]
    assert (run.events[0].action, run.next, run.write, run.records) == ("stored", DONE, None, [])
    runs: list[AMURun] = [run, _turn("hi", next="write_gate")]  # a turn runs the same AMU stages (mypy checks it)
    assert [r.write for r in runs] == [None, None]


def _turn(text: str, *, next: str) -> TurnWrite:
    t = TurnWrite("u", "t", text, "ok", T0, None, None)
    t.next = next
    return t
