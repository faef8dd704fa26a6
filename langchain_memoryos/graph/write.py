"""The write path as a compiled LangGraph ``StateGraph`` (``memory.write_graph``).

Nodes, named as in the papers: ``stm_append``, ``chain_link``, ``mtm_insert``,
``heat_evict``, ``persona_promote``, ``write_gate``, ``relation_judge``,
``fuse``, ``lpm_commit``: one per row of the write table
(:data:`~langchain_memoryos.pipeline.stages.WRITE_STAGES`), its routes as the
node's edges (:func:`add_stage_table`). Each node runs the engine stage of the
same name (:func:`~langchain_memoryos.pipeline.write.run_write_stage`) on the turn in the state; a stage with a
choice of next stages routes itself with a ``Command`` (drawn as conditional
edges; no separate routing step), so idle work is skipped: no STM overflow →
done; no hot segment → no promotion; no candidates → no judge; no update →
no fuse. ``MemoryOS.add_turn`` runs the same stage functions directly,
without the graph runtime; the graph is for composing the memory into a
LangGraph application.

Example:
    >>> from langchain_memoryos import MemoryOS
    >>> nodes = MemoryOS().write_graph.get_graph().nodes
    >>> sorted(n for n in nodes if not n.startswith("__"))  # doctest: +NORMALIZE_WHITESPACE
    ['chain_link', 'fuse', 'heat_evict', 'lpm_commit', 'mtm_insert', 'persona_promote', 'relation_judge',
     'stm_append', 'write_gate']
"""

from __future__ import annotations

import operator
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from langchain_memoryos.kernel.effects import Services, Step, run_async, run_sync
from langchain_memoryos.operations.runtime import Runtime
from langchain_memoryos.operations.turns import graph_turn
from langchain_memoryos.pipeline.stages import DONE, WRITE_STAGES, Stage, StageResult
from langchain_memoryos.pipeline.write import run_write_stage
from langchain_memoryos.schema import WriteEvent, WriteReport
from langchain_memoryos.store.repository import MemoryRepository, UserLease
from langchain_memoryos.store.settings import EngineSettings, StageContext
from langchain_memoryos.tiers.turn import TurnWrite

__all__ = ["WriteState", "add_stage_table", "build_write_graph"]

#: A turn may pass many stages (every record of a promotion takes 2–4).
RECURSION_LIMIT = 100_000


class WriteState(TypedDict, total=False):
    """The write graph's state.

    Give either ``turn`` (a :class:`~langchain_memoryos.tiers.turn.TurnWrite`, as
    ``MemoryOS.add_turn`` does) or the turn's fields: ``user_input``,
    ``agent_response`` and optionally ``thread_id``, ``timestamp``,
    ``metadata``, ``turn_id`` and ``user_id`` — without ``user_id`` the user
    comes from the run (``context_schema`` / ``configurable``, see
    :func:`~langchain_memoryos.graph.runtime.resolve_user_id`). ``report`` is
    the resulting :class:`~langchain_memoryos.schema.WriteReport`; every node
    adds its stage's name to ``stages`` and the write events it logged to
    ``events`` (its :class:`~langchain_memoryos.pipeline.stages.StageResult`).
    """

    turn: TurnWrite
    report: WriteReport
    stages: Annotated[list[str], operator.add]
    events: Annotated[list[WriteEvent], operator.add]
    user_input: str
    agent_response: str
    user_id: str
    thread_id: str
    timestamp: Any
    metadata: dict[str, Any]
    turn_id: str


#: Takes the user's write lock for a run (sync, async); ``MemoryOS`` first waits for the user's queued writes.
Acquire = Callable[[str], UserLease]
AAcquire = Callable[[str], Awaitable[UserLease]]
#: Prepares a turn before its run (``MemoryOS`` waits for the user's queued writes); the write stages take the
#: user's lock themselves, only around store work (:mod:`langchain_memoryos.store.unit_of_work`).
Settle = Callable[[TurnWrite], None]
ASettle = Callable[[TurnWrite], Awaitable[None]]


class StageNode(Runnable[WriteState, dict[str, Any]]):
    """A graph node that runs one step-based stage with the memory's services (sync or async).

    The run's payload holds the user's lease: the node that ends the run
    releases it; a node that fails drops the user's cached state and releases
    it. A plain ``Runnable`` (no callbacks of its own), so a node costs
    LangGraph's bookkeeping only.

    Example:
        >>> from langchain_memoryos.kernel.effects import Services
        >>> def shout(t):  # a stage: change the payload, say where to go next
        ...     t.user_input, t.next = t.user_input.upper(), "done"
        ...     return
        ...     yield
        >>> services = Services(None, None, None)  # type: ignore[arg-type]
        >>> t = TurnWrite("u", "t", "hi", "", None, None, None)
        >>> StageNode("shout", shout, services).invoke({"turn": t}), t.user_input
        ({}, 'HI')
        >>> StageNode("shout", shout, services, routed=True).invoke({"turn": t}).goto  # a routed node: a Command
        '__end__'
    """

    def __init__(
        self, name: str, stage: Callable[[Any], Step[Any]], services: Services | None, *, routed: bool = False
    ) -> None:
        self.name = name
        self._stage = stage
        self._services = services
        self._routed = routed

    def _out(self, payload: Any, update: dict[str, Any]) -> Any:
        """The node's result: the update, and for a routed node where the stage said to go next."""
        if not self._routed:
            return update
        return Command(update=update, goto=END if payload.next == "done" else payload.next)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the stage with blocking IO."""
        payload = _payload(input)
        return self._out(payload, self._update(payload))

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the stage with async IO (``abatch``, ``a``-twins of the controller)."""
        payload = _payload(input)
        return self._out(payload, await self._aupdate(payload))

    def _update(self, payload: Any) -> dict[str, Any]:
        try:
            result = run_sync(self._stage(payload), self._services)  # type: ignore[arg-type]
        except BaseException:
            _fail(payload)
            raise
        _end(payload)
        return _result_update(result)

    async def _aupdate(self, payload: Any) -> dict[str, Any]:
        try:
            result = await run_async(self._stage(payload), self._services)  # type: ignore[arg-type]
        except BaseException:
            _fail(payload)
            raise
        _end(payload)
        return _result_update(result)


class EntryNode(StageNode):
    """The first node: builds the run's payload from plain fields when it was not given, then prepares it.

    ``acquire`` / ``aacquire`` prepare the payload: the read graph's take the
    user's lease for the run; the write graph's wait for the user's queued
    writes (its stages take the lock themselves).

    Example:
        >>> from langchain_memoryos.kernel.effects import Services
        >>> def shout(t):
        ...     t.user_input, t.next = t.user_input.upper(), "done"
        ...     return
        ...     yield
        >>> def make(state, config):  # the payload from plain fields
        ...     return TurnWrite("u", "t", state["user_input"], "", None, None, None)
        >>> settled, services = [], Services(None, None, None)  # type: ignore[arg-type]
        >>> node = EntryNode("shout", shout, services, "turn", make, settled.append, None)  # type: ignore[arg-type]
        >>> out = node.invoke({"user_input": "hi"})
        >>> out["turn"].user_input, settled == [out["turn"]]
        ('HI', True)
    """

    def __init__(
        self,
        name: str,
        stage: Callable[[Any], Step[Any]],
        services: Services | None,
        key: str,
        make: Callable[[Any, RunnableConfig | None], Any],
        acquire: Acquire | Settle,
        aacquire: AAcquire | ASettle,
        extra: Callable[[Any], dict[str, Any]] = lambda payload: {},
        *,
        routed: bool = False,
    ) -> None:
        super().__init__(name, stage, services, routed=routed)
        self._key, self._make, self._extra = key, make, extra
        self._acquire, self._aacquire = acquire, aacquire

    def _prepare(self, input: Any, config: RunnableConfig | None) -> tuple[Any, Any]:
        payload = input.get(self._key) or self._make(input, config)
        return {**input, self._key: payload}, payload

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Build the payload if needed, prepare it, run the stage with blocking IO."""
        _, payload = self._prepare(input, config)
        if isinstance(payload, TurnWrite):
            self._acquire(payload)  # type: ignore[arg-type]
        elif payload.lease is None:
            payload.lease = self._acquire(payload.user_id)
        update = self._update(payload)
        return self._out(payload, {self._key: payload, **update, **self._extra(payload)})

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Build the payload if needed, prepare it, run the stage with async IO."""
        _, payload = self._prepare(input, config)
        if isinstance(payload, TurnWrite):
            await self._aacquire(payload)  # type: ignore[arg-type]
        elif payload.lease is None:
            payload.lease = await self._aacquire(payload.user_id)
        update = await self._aupdate(payload)
        return self._out(payload, {self._key: payload, **update, **self._extra(payload)})


def _result_update(result: Any) -> dict[str, Any]:
    """A write stage's result as the node's state update (a read stage returns none)."""
    if isinstance(result, StageResult):
        return {"stages": [result.stage], "events": list(result.events)}
    return {}


def _end(payload: Any) -> None:
    if payload.next == "done" and payload.lease is not None:
        payload.lease.release()


def _fail(payload: Any) -> None:
    if payload.lease is not None:
        payload.lease.fail()


def _payload(state: Any) -> Any:
    return state["turn"] if "turn" in state else state["read"]


def _report(turn: Any) -> dict[str, Any]:
    return {"report": turn.report}


def add_stage_table(graph: StateGraph[Any], stages: Sequence[Stage], node: Callable[[Stage, bool], StageNode]) -> None:
    """Add a stage table to ``graph``: one node per row (``node(row, routed)``), the row's routes as its edges.

    A row with a choice of next stages is ``routed``: its node routes itself
    with a ``Command`` to one of its routes (drawn as conditional edges); a row
    with one route gets a plain edge. ``done`` is the graph's end; the first
    row is where the graph starts.

    Example:
        >>> from langchain_memoryos.pipeline.stages import READ_STAGES
        >>> from langchain_memoryos.graph.read import ReadState
        >>> def node(row, routed):  # what each node runs does not matter here
        ...     return StageNode(row.name, lambda run: iter(()), None, routed=routed)
        >>> graph = StateGraph(ReadState)
        >>> add_stage_table(graph, READ_STAGES, node)
        >>> edges = graph.compile().get_graph().edges
        >>> sorted((e.source, e.target) for e in edges if e.conditional)  # retrieve_stm: on, or done
        [('retrieve_stm', '__end__'), ('retrieve_stm', 'retrieve_lpm')]
    """
    for row in stages:
        targets = tuple(END if route == DONE else route for route in row.routes)
        routed = len(targets) > 1
        graph.add_node(row.name, node(row, routed), destinations=targets if routed else None)
        if not routed:
            graph.add_edge(row.name, targets[0])
    graph.add_edge(START, stages[0].name)


def build_write_graph(
    repo: MemoryRepository,
    settings: EngineSettings,
    services: Services,
    make_turn: Callable[[Any, RunnableConfig | None], TurnWrite],
    settle: Settle,
    asettle: ASettle,
) -> Any:
    """Compile the write graph for one memory's repository, settings and services.

    ``make_turn(state, config)`` builds the turn from plain fields (validated,
    user resolved from the run) when the input has no ``turn``; ``settle`` /
    ``asettle`` run before the turn (``MemoryOS`` waits for the user's queued
    writes). The stages take the user's lock through ``services`` around
    store work only, so turns of one user never interleave, even when the
    graph runs as a subgraph of the user's own graph, and a model call never
    holds the lock (:mod:`langchain_memoryos.store.unit_of_work`).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> m = MemoryOS()
        >>> def make_turn(state, config):
        ...     return TurnWrite("ana", "t1", state["user_input"], state["agent_response"], "2024-05-01", None, None)
        >>> async def asettle(turn):
        ...     pass
        >>> graph = build_write_graph(m.repository, m.settings, m._services, make_turn, lambda turn: None, asettle)
        >>> out = graph.invoke({"user_input": "I play the cello.", "agent_response": "Lovely."})
        >>> out["report"].added, [p.user_input for p in m.get_stm(user_id="ana", thread_id="t1")]
        (True, ['I play the cello.'])
    """
    graph = StateGraph(WriteState)
    ctx = StageContext(repo, settings)
    stage = lambda t: run_write_stage(ctx, t)  # noqa: E731

    def node(row: Stage, routed: bool) -> StageNode:
        if row is WRITE_STAGES[0]:  # the entry: the turn from plain fields, the user's queued writes waited for
            return EntryNode(row.name, stage, services, "turn", make_turn, settle, asettle, _report, routed=routed)
        return StageNode(row.name, stage, services, routed=routed)

    add_stage_table(graph, WRITE_STAGES, node)
    # never checkpointed, even inside a user's checkpointed graph: its state is in-process only
    return graph.compile(checkpointer=False, name="memoryos_write").with_config(recursion_limit=RECURSION_LIMIT)


def memory_write_graph(runtime: Runtime) -> Any:
    """A memory's write graph, compiled on first use and kept on its runtime (``MemoryOS.write_graph``).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> runtime = MemoryOS()._runtime
        >>> graph = memory_write_graph(runtime)
        >>> graph is memory_write_graph(runtime), "fuse" in graph.get_graph().nodes
        (True, True)
    """
    if runtime.write_graph is None:

        def make_turn(state: Mapping[str, Any], config: Any) -> TurnWrite:
            return graph_turn(runtime, state, config)

        runtime.write_graph = build_write_graph(
            runtime.repository,
            runtime.settings,
            runtime.services,
            make_turn,
            runtime.settle_turn,
            runtime.asettle_turn,
        )
    return runtime.write_graph
