"""memory.write_graph / memory.read_graph: node names, skipped idle work, and the facade running them."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.retrieval.recall import ReadRun
from langchain_memoryos.tiers.turn import TurnWrite

T0 = dt.datetime(2024, 7, 1, 9, tzinfo=dt.UTC)
WRITE_NODES = [
    "chain_link",
    "fuse",
    "heat_evict",
    "lpm_commit",
    "mtm_insert",
    "persona_promote",
    "relation_judge",
    "stm_append",
    "write_gate",
]
READ_NODES = ["assemble_context", "retrieve_lpm", "retrieve_mtm", "retrieve_stm"]


def _nodes(graph: Any) -> list[str]:
    return sorted(n for n in graph.get_graph().nodes if not n.startswith("__"))


def _ran(memory: MemoryOS, text: str, i: int, answer: str = "Nice.") -> list[str]:
    turn = TurnWrite("u", "t", text, answer, T0 + dt.timedelta(minutes=i), None, f"turn-{i}")
    chunks = memory.write_graph.stream({"turn": turn}, {"recursion_limit": 1000}, stream_mode="updates")
    return [next(iter(c)) for c in chunks]


def test_node_names_and_mermaid() -> None:
    memory = MemoryOS()
    assert _nodes(memory.write_graph) == WRITE_NODES
    assert _nodes(memory.read_graph) == READ_NODES
    mermaid = memory.write_graph.get_graph().draw_mermaid()
    assert "persona_promote" in mermaid and "relation_judge" in mermaid


def test_idle_work_is_skipped() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1, promotion_heat=2.5))
    # the page is read as it is added: its facts (city and job, one slot each) go through AMU at once
    # (no candidates, no judge); no STM overflow yet
    first = ["stm_append", "chain_link"] + ["write_gate", "lpm_commit"] * 2
    assert _ran(memory, "I live in Lisbon and I work as a nurse.", 0) == first
    assert [f.summary for f in memory.list_facts(user_id="u")] == [
        "The user lives in Lisbon.",
        "The user works as a nurse.",
    ]
    assert _ran(memory, "I live in Lisbon and I work as a nurse.", 0) == ["stm_append"]  # the same turn again
    runs = [
        _ran(memory, text, i)
        for i, text in enumerate(
            [
                "I love surfing at Carcavelos.",
                "Surfing at Carcavelos again today.",
                "More surfing at Carcavelos.",
                "Carcavelos surfing is the best.",
            ],
            start=1,
        )
    ]
    # the new page's fact first, then the page leaving STM joins MTM (its facts were written with its turn)
    assert runs[0] == ["stm_append", "chain_link", "write_gate", "lpm_commit", "mtm_insert"]
    promoted = next(run for run in runs if "persona_promote" in run)
    assert promoted[:3] == ["stm_append", "chain_link", "mtm_insert"] and promoted[-1] == "persona_promote"
    assert "heat_evict" not in promoted and "fuse" not in promoted
    assert runs[-1] == ["stm_append", "chain_link", "mtm_insert"]  # a page with no fact: no AMU stage
    assert [f.summary for f in memory.list_facts(user_id="u")] == [
        "The user lives in Lisbon.",
        "The user works as a nurse.",
        "The user loves surfing at Carcavelos.",
    ]


def test_judge_and_fuse_run_only_for_an_update() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1, promotion_heat=2.0))
    runs = [
        _ran(memory, text, i)
        for i, text in enumerate(["I live in Lisbon.", "I live in Lisbon.", "ok", "I moved to Porto.", "fine", "sure"])
    ]
    flat = [node for run in runs for node in run]
    assert "relation_judge" in flat and "fuse" in flat
    assert [f.summary for f in memory.list_facts(user_id="u") if f.slot == "location"] == ["The user lives in Porto."]


def test_heat_evict_runs_over_the_segment_limit() -> None:
    memory = MemoryOS(
        config=MemoryOSConfig(stm_capacity=1, mtm_max_segments=1, segment_threshold=2.0, promotion_heat=100.0)
    )
    runs = [_ran(memory, text, i) for i, text in enumerate(["Pottery class.", "Marathon training.", "Tax forms."])]
    assert "heat_evict" not in runs[1] and "heat_evict" in runs[2]
    assert len(memory.list_segments(user_id="u")) == 1


def test_read_graph_directly_and_through_the_facade() -> None:
    memory = MemoryOS()
    empty = ReadRun("u", "t", "anything")
    chunks = list(memory.read_graph.stream({"read": empty}, stream_mode="updates"))
    assert [next(iter(c)) for c in chunks] == ["retrieve_stm"]  # nothing stored: no search
    memory.add_turn("I play the cello.", "Lovely.", user_id="u", thread_id="a", timestamp=T0)
    full = ReadRun("u", "b", "What instrument do I play?")
    chunks = list(memory.read_graph.stream({"read": full}, stream_mode="updates"))
    assert [next(iter(c)) for c in chunks] == ["retrieve_stm", "retrieve_lpm", "retrieve_mtm", "assemble_context"]
    assert full.ctx is not None and "cello" in full.ctx.to_prompt()
    ctx = asyncio.run(memory.aretrieve("What instrument do I play?", user_id="u", thread_id="b"))
    assert "cello" in ctx.to_prompt()


def test_graphs_as_subgraphs_take_plain_fields_and_the_runs_user() -> None:
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    from langchain_memoryos.graph import MissingUserIdError

    class Parent(TypedDict, total=False):
        user_input: str
        agent_response: str
        query: str
        report: Any
        context: Any

    memory = MemoryOS()
    graph = StateGraph(Parent)
    graph.add_node("write", memory.write_graph)
    graph.add_node("read", memory.read_graph)
    graph.add_edge(START, "write")
    graph.add_edge("write", "read")
    graph.add_edge("read", END)
    app = graph.compile()
    config = {"configurable": {"user_id": "ana", "thread_id": "t1"}}
    out = app.invoke({"user_input": "I play the cello.", "agent_response": "Lovely.", "query": "cello?"}, config)  # type: ignore[call-overload]
    assert out["report"].added and out["report"].page_id
    assert [p.user_input for p in memory.get_stm(user_id="ana", thread_id="t1")] == ["I play the cello."]
    assert "cello" in out["context"].to_prompt()
    # the user comes from the run; without one, the subgraph fails closed; bad input is a clear error
    with pytest.raises(MissingUserIdError):
        app.invoke({"user_input": "x", "agent_response": "y", "query": "q"}, {"configurable": {"thread_id": "t"}})
    with pytest.raises(ValueError, match="empty turn"):
        app.invoke({"user_input": "", "agent_response": "", "query": "q"}, config)  # type: ignore[call-overload]


class _GatedController:
    """Wraps the heuristic controller: page analysis waits at a gate (and can fail once)."""

    def __new__(cls) -> Any:
        import threading

        from langchain_memoryos.controllers import HeuristicController

        class Gated(HeuristicController):
            def __init__(self) -> None:
                super().__init__()
                self.entered, self.go = threading.Event(), threading.Event()
                self.fail = False

            def analyze_page(self, page: Any, previous: Any, similarity: Any) -> Any:  # type: ignore[override]
                self.entered.set()
                assert self.go.wait(10), "the test never opened the gate"
                if self.fail:
                    self.fail = False
                    raise RuntimeError("analysis failed")
                return super().analyze_page(page, previous, similarity)

        return Gated()


def test_a_graph_run_as_a_subgraph_holds_the_users_lock_from_entry_to_end() -> None:
    """Turns of one user never interleave, even when the user's graph runs ours directly."""
    import threading

    controller = _GatedController()
    memory = MemoryOS(controller=controller, config=MemoryOSConfig(stm_capacity=1))
    controller.go.set()  # the first turns are analysed as they are added
    memory.add_turn("I play the cello.", "Lovely.", user_id="u", thread_id="t", timestamp=T0)
    memory.add_turn("I live in Oslo.", "Nice.", user_id="other", thread_id="t", timestamp=T0)
    controller.go.clear()
    controller.entered.clear()
    config = {"configurable": {"user_id": "u", "thread_id": "t"}}
    writer = threading.Thread(
        target=memory.write_graph.invoke,
        args=({"user_input": "I moved to Bergen.", "agent_response": "Exciting!", "timestamp": T0 + dt.timedelta(1)},),
        kwargs={"config": config},
    )
    writer.start()
    assert controller.entered.wait(10)  # the run is inside chain_link, between stm_append and write_gate
    seen: dict[str, Any] = {}
    reader = threading.Thread(target=lambda: seen.update(ctx=memory.retrieve("cello?", user_id="u", thread_id="t")))
    reader.start()
    reader.join(0.5)
    assert reader.is_alive()  # the same user's read waits for the whole write run
    other = memory.retrieve("Oslo?", user_id="other", thread_id="t")  # another user does not wait
    assert "Oslo" in other.to_prompt()
    controller.go.set()
    writer.join(10)
    reader.join(10)
    assert not writer.is_alive() and not reader.is_alive()
    assert [p.user_input for p in seen["ctx"].stm] == ["I moved to Bergen."]  # the read saw the finished turn
    assert memory.stats(user_id="u").mtm_pages == 1


def test_a_failing_node_releases_the_lock_and_drops_the_half_written_state() -> None:
    controller = _GatedController()
    controller.go.set()
    memory = MemoryOS(controller=controller, config=MemoryOSConfig(stm_capacity=1))
    memory.add_turn("first", "a", user_id="u", thread_id="t", timestamp=T0)
    controller.fail = True
    config = {"configurable": {"user_id": "u", "thread_id": "t"}}
    with pytest.raises(RuntimeError, match="analysis failed"):
        memory.write_graph.invoke({"user_input": "second", "agent_response": "b"}, config)
    assert not memory.repository.cache.locks.held("u")
    assert [p.user_input for p in memory.get_stm(user_id="u", thread_id="t")] == [
        "first"
    ]  # reloaded from the store: no half turn
    with pytest.raises(RuntimeError, match="analysis failed"):
        controller.fail = True
        asyncio.run(memory.write_graph.ainvoke({"user_input": "second", "agent_response": "b"}, config))
    assert not memory.repository.cache.locks.held("u")
    memory.write_graph.invoke({"user_input": "second", "agent_response": "b"}, config)
    assert [p.user_input for p in memory.get_stm(user_id="u", thread_id="t")] == ["second"]


def test_an_abandoned_lease_is_released_and_the_cache_dropped() -> None:
    import gc

    memory = MemoryOS()
    memory.add_turn("hello", "hi", user_id="u", timestamp=T0)
    repo = memory.repository
    assert "u" in repo._states
    lease = repo.lease("u")
    assert repo.cache.locks.held("u") and lease.held
    del lease  # a run abandoned between two nodes
    gc.collect()
    assert not repo.cache.locks.held("u")
    assert "u" not in repo._states  # a half-applied write is never seen
    kept = repo.lease("u")
    kept.release()
    kept.release()  # idempotent
    assert not repo.cache.locks.held("u") and not kept.held


def test_async_leases_queue_coroutines_of_one_user() -> None:
    memory = MemoryOS()

    async def main() -> list[str]:
        order: list[str] = []

        async def hold(name: str, delay: float) -> None:
            lease = await memory.repository.alease("u")
            order.append(f"{name}+")
            await asyncio.sleep(delay)
            order.append(f"{name}-")
            lease.release()

        await asyncio.gather(hold("a", 0.05), hold("b", 0.0))
        return order

    assert asyncio.run(main()) == ["a+", "a-", "b+", "b-"]
    assert not memory.repository.cache.locks.held("u")


def test_write_nodes_return_their_stage_results_as_state_updates() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=1, promotion_heat=2.0))
    outs = []
    for i, text in enumerate(["I live in Lisbon.", "I live in Lisbon.", "ok", "I moved to Porto.", "fine", "sure"]):
        turn = TurnWrite("u", "t", text, "Nice.", T0 + dt.timedelta(minutes=i), None, f"turn-{i}")
        outs.append(memory.write_graph.invoke({"turn": turn}, {"recursion_limit": 1000}))
    for out in outs:
        assert out["stages"][0] == "stm_append"
        assert out["events"] == out["report"].events  # every logged event reached the state, in order
    flat = [s for out in outs for s in out["stages"]]
    assert {"chain_link", "mtm_insert", "persona_promote", "write_gate", "relation_judge", "fuse"} <= set(flat)
    assert any(e.action == "updated" for out in outs for e in out["events"])
