"""The read path as a compiled LangGraph ``StateGraph`` (``memory.read_graph``).

Nodes: ``retrieve_stm`` (the thread's STM, the persona, the query embedded),
``retrieve_lpm`` (facts and agent traits above ``tau_r``), ``retrieve_mtm``
(pages ranked and fitted to the word budget) and ``assemble_context`` (no
fact that repeats a shown page; segment visits saved): one per row of the
read table (:data:`~langchain_memoryos.pipeline.stages.READ_STAGES`), its
routes as the node's edges. An empty memory or an empty query ends after
``retrieve_stm``. No node calls a model. ``MemoryOS.retrieve`` runs the same
stages directly (:func:`~langchain_memoryos.pipeline.read.read`).

Example:
    >>> from langchain_memoryos import MemoryOS
    >>> nodes = MemoryOS().read_graph.get_graph().nodes
    >>> sorted(n for n in nodes if not n.startswith("__"))
    ['assemble_context', 'retrieve_lpm', 'retrieve_mtm', 'retrieve_stm']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import StateGraph

from langchain_memoryos.graph.write import RECURSION_LIMIT, AAcquire, Acquire, EntryNode, StageNode, add_stage_table
from langchain_memoryos.kernel.effects import Services
from langchain_memoryos.operations.runtime import Runtime
from langchain_memoryos.operations.turns import graph_read
from langchain_memoryos.pipeline.stages import READ_STAGES, READ_TABLE, Stage, run_stage
from langchain_memoryos.retrieval.recall import ReadRun
from langchain_memoryos.schema import MemoryContext
from langchain_memoryos.store.repository import MemoryRepository
from langchain_memoryos.store.settings import EngineSettings, StageContext

__all__ = ["ReadState", "build_read_graph"]


class ReadState(TypedDict, total=False):
    """The read graph's state.

    Give either ``read`` (a :class:`~langchain_memoryos.retrieval.recall.ReadRun`, as
    ``MemoryOS.retrieve`` does) or ``query`` and optionally ``thread_id`` and
    ``user_id`` (without it, the user comes from the run). ``context`` is the
    resulting :class:`~langchain_memoryos.schema.MemoryContext`.
    """

    read: ReadRun
    context: MemoryContext
    query: str
    user_id: str
    thread_id: str


def _context(run: ReadRun) -> dict[str, Any]:
    return {"context": run.ctx}  # built by retrieve_stm, completed in place by the later nodes


def build_read_graph(
    repo: MemoryRepository,
    settings: EngineSettings,
    services: Services,
    make_read: Callable[[Any, RunnableConfig | None], ReadRun],
    acquire: Acquire,
    aacquire: AAcquire,
) -> Any:
    """Compile the read graph for one memory's repository, settings and services.

    ``make_read(state, config)`` builds the retrieval from ``query`` (user
    resolved from the run) when the input has no ``read``; ``acquire`` /
    ``aacquire`` take the user's lease (a read never sees a half-written turn).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> m = MemoryOS()
        >>> _ = m.add_turn("I play the cello.", "Lovely.", user_id="ana", thread_id="t1")
        >>> def make_read(state, config):
        ...     return ReadRun("ana", "t2", state["query"])
        >>> graph = build_read_graph(m.repository, m.settings, m._services, make_read,
        ...                          m.repository.lease, m.repository.alease)
        >>> ctx = graph.invoke({"query": "Which instrument do I play?"})["context"]
        >>> [p.user_input for p in ctx.stm], [s.page.user_input for s in ctx.pages]
        ([], ['I play the cello.'])
    """
    graph = StateGraph(ReadState)
    ctx = StageContext(repo, settings)
    stage = lambda r: run_stage(READ_TABLE, ctx, r)  # noqa: E731

    def node(row: Stage, routed: bool) -> StageNode:
        if row is READ_STAGES[0]:  # the entry: the read from plain fields, under the user's lease
            return EntryNode(row.name, stage, services, "read", make_read, acquire, aacquire, _context, routed=routed)
        return StageNode(row.name, stage, services, routed=routed)

    add_stage_table(graph, READ_STAGES, node)
    return graph.compile(checkpointer=False, name="memoryos_read").with_config(recursion_limit=RECURSION_LIMIT)


def memory_read_graph(runtime: Runtime) -> Any:
    """A memory's read graph, compiled on first use and kept on its runtime (``MemoryOS.read_graph``).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> runtime = MemoryOS()._runtime
        >>> graph = memory_read_graph(runtime)
        >>> graph is memory_read_graph(runtime), "retrieve_mtm" in graph.get_graph().nodes
        (True, True)
    """
    if runtime.read_graph is None:
        runtime.read_graph = build_read_graph(
            runtime.repository, runtime.settings, runtime.services, graph_read, runtime.lease, runtime.alease
        )
    return runtime.read_graph
