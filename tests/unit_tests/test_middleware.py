"""MemoryOSMiddleware inside langchain.agents.create_agent (fake chat model, real graph and checkpointer)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_memoryos import MemoryOS
from langchain_memoryos.graph import MemoryOSMiddleware
from tests.scripted_model import ScriptedToolModel, replying


@dataclass
class Ctx:
    user_id: str


def _agent(memory: MemoryOS, model: ScriptedToolModel) -> Any:
    return create_agent(
        model,
        system_prompt="You are kind.",
        middleware=[MemoryOSMiddleware(memory)],
        context_schema=Ctx,
        checkpointer=InMemorySaver(),
    )


def test_middleware_recalls_a_fact_from_20_turns_earlier_in_another_thread() -> None:
    memory = MemoryOS()
    model = replying("Okay.")
    agent = _agent(memory, model)
    ctx = Ctx(user_id="ana")
    agent.invoke(
        {"messages": [HumanMessage("My cat is named Miso.")]}, {"configurable": {"thread_id": "a"}}, context=ctx
    )
    for i in range(19):
        agent.invoke(
            {"messages": [HumanMessage(f"Chat {i} about traffic.")]}, {"configurable": {"thread_id": "a"}}, context=ctx
        )
    out = agent.invoke(
        {"messages": [HumanMessage("What is my cat called?")]}, {"configurable": {"thread_id": "b"}}, context=ctx
    )
    system = model.prompts[-1][0]
    assert system.type == "system" and system.content.startswith("You are kind.") and "Miso" in system.content
    assert "memoryos_context" not in out  # private: not in the agent's output
    pages = (
        memory.list_pages(user_id="ana")
        + memory.get_stm(user_id="ana", thread_id="a")
        + memory.get_stm(user_id="ana", thread_id="b")
    )
    assert len(pages) == 21
    # another user's run sees nothing of it
    agent.invoke(
        {"messages": [HumanMessage("What is my cat called?")]},
        {"configurable": {"thread_id": "c"}},
        context=Ctx(user_id="ben"),
    )
    assert "Miso" not in model.prompts[-1][0].content


def test_middleware_async_and_streaming() -> None:
    memory = MemoryOS()
    model = replying("Sure.")
    agent = _agent(memory, model)

    async def main() -> None:
        await agent.ainvoke(
            {"messages": [HumanMessage("I live in Porto.")]},
            {"configurable": {"thread_id": "a"}},
            context=Ctx(user_id="zoe"),
        )
        async for _ in agent.astream(
            {"messages": [HumanMessage("Where do I live?")]},
            {"configurable": {"thread_id": "b"}},
            context=Ctx(user_id="zoe"),
        ):
            pass

    asyncio.run(main())
    assert "Porto" in model.prompts[-1][0].content
    assert [p.user_input for p in memory.get_stm(user_id="zoe", thread_id="b")] == ["Where do I live?"]
