"""The facade runs the stages directly; the LangGraph graphs built from the same table store the same memory."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

from langchain_memoryos import MemoryOS, MemoryOSConfig

T0 = dt.datetime(2024, 3, 1, 9, 0, tzinfo=dt.UTC)
SMALL = MemoryOSConfig(stm_capacity=3, mtm_max_segments=2, user_kb_capacity=4, agent_traits_capacity=2)
TURNS = [
    ("My name is Ana and I live in Lyon.", "Nice to meet you, Ana."),
    ("I work as a nurse at the city hospital.", "Nursing is demanding work."),
    ("I love hiking in the Alps on weekends.", "The Alps are beautiful."),
    ("How is the weather today?", "I can't check the weather, sorry."),
    ("I moved to Denver last month.", "Denver is a great city."),
    ("I am vegan and I cook a lot of lentils.", "Lentils are a great vegan protein."),
    ("I play chess every Sunday at the club.", "Chess clubs are fun."),
    ("Actually I now work at Stripe as an engineer.", "Congratulations on the new job!"),
    ("My sister Lea is visiting from Paris.", "Have a nice time with Lea."),
    ("I live in Denver, near the park.", "Sounds lovely."),
    ("I eat meat now.", "Noted."),
    ("I am allergic to peanuts.", "Good to know."),
]


def _turn(i: int) -> dict[str, Any]:
    user_input, answer = TURNS[i]
    return {
        "user_input": user_input,
        "agent_response": answer,
        "timestamp": T0 + dt.timedelta(hours=7 * i),
        "turn_id": f"turn-{i}",
    }


def _thread(i: int) -> str:
    return "ab"[i % 2]


def _state(memory: MemoryOS) -> tuple[Any, Any]:
    return memory.export_user(user_id="ana"), [e.to_dict() for e in memory.write_log(user_id="ana")]


def test_the_same_turns_through_add_turn_and_through_the_write_graph_store_the_same_memory() -> None:
    direct, via_graph = MemoryOS(config=SMALL), MemoryOS(config=SMALL)
    graph = via_graph.write_graph
    for i in range(len(TURNS)):
        report = direct.add_turn(**_turn(i), user_id="ana", thread_id=_thread(i))
        out = graph.invoke(_turn(i), {"configurable": {"user_id": "ana", "thread_id": _thread(i)}})
        assert out["report"] == report
    exported, log = _state(direct)
    assert _state(via_graph) == (exported, log)
    kinds = {tuple(item["namespace"][:2]) for item in exported["items"]}
    assert ("facts", "user") in kinds and len(direct.list_segments(user_id="ana")) >= 1  # the path did work
    assert any(e["action"] == "updated" for e in log)  # an update went through judge and fuse
    question = "Where do I live and what do I eat?"
    ctx = direct.retrieve(question, user_id="ana", thread_id="q", touch=False)
    read = via_graph.read_graph.invoke({"query": question}, {"configurable": {"user_id": "ana", "thread_id": "q"}})
    assert read["context"].to_prompt() == ctx.to_prompt()


def test_the_async_twins_store_what_the_graph_stores() -> None:
    via_graph, direct = MemoryOS(config=SMALL), MemoryOS(config=SMALL)

    async def run() -> None:
        for i in range(len(TURNS)):
            await direct.aadd_turn(**_turn(i), user_id="ana", thread_id=_thread(i))
            config: Any = {"configurable": {"user_id": "ana", "thread_id": _thread(i)}}
            await via_graph.write_graph.ainvoke(_turn(i), config)

    asyncio.run(run())
    assert _state(via_graph) == _state(direct)
