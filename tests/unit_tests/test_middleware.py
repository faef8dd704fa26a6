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
    assert system.type == "system" and system.content.startswith("You are kind.") and "Miso" in system.content  # type: ignore[union-attr]
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


def _system_texts(memory: MemoryOS, checkpointer: Any) -> list[str]:
    """The system message the model got on each of three turns of thread 'a'."""
    model = replying("Okay.")
    agent = create_agent(model, middleware=[MemoryOSMiddleware(memory)], context_schema=Ctx, checkpointer=checkpointer)
    for text in ("My cat is named Miso.", "I work as a nurse.", "What do you know about me?"):
        agent.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": "a"}}, context=Ctx("ana"))
    return [str(prompt[0].content) if prompt[0].type == "system" else "" for prompt in model.prompts]


def test_history_the_checkpointer_keeps_is_not_repeated_in_the_memory_block() -> None:
    memory = MemoryOS()
    first, second, third = _system_texts(memory, InMemorySaver())
    assert first == ""  # nothing stored yet: no memory block
    # turns 1 and 2 are in the agent's messages (the checkpointer keeps them): not again in the memory block
    assert "User: My cat is named Miso." not in second and "Recent conversation" not in second
    assert "My cat is named Miso." not in third and "I work as a nurse." not in third
    assert [p.user_input for p in memory.get_stm(user_id="ana", thread_id="a")][:2] == [
        "My cat is named Miso.",
        "I work as a nurse.",
    ]


def test_a_thread_state_without_those_messages_still_gets_the_thread_stm() -> None:
    memory = MemoryOS()
    _, second, third = _system_texts(memory, None)  # no checkpointer: each run starts with only its own message
    assert "## Recent conversation" in second and "User: My cat is named Miso." in second
    assert "I work as a nurse." in third and "My cat is named Miso." in third
