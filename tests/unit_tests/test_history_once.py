"""What the agent already sees is not repeated: no page of a turn in the model's messages, on any tier.

Real LangGraph graphs (the prebuilt agent, ``create_agent`` with the middleware, a graph with the
nodes), real checkpointers (InMemorySaver, SqliteSaver), the shared scripted chat model. A thread of
12 turns puts its first turns in MTM (STM holds 7): at turn 12 the memory block holds none of the
thread's earlier turns, which the checkpointer hands the model as messages; the search tool returns
neither the thread's STM nor a turn in the messages, and gives its hits as the ToolMessage's artifact.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langchain_memoryos import MemoryOS
from langchain_memoryos.graph import MemoryOSMiddleware, create_memoryos_agent, create_search_memory_tool
from tests.scripted_model import ScriptedToolModel, replying

PETS = [
    f"I have a pet number {i} named {name}."
    for i, name in enumerate(
        ["Rio", "Kiwi", "Mango", "Pixel", "Olive", "Biscuit", "Nemo", "Pepper", "Ziggy", "Luna", "Comet"]
    )
]


@dataclass
class Ctx:
    user_id: str


@pytest.fixture(params=["memory", "sqlite"])
def saver(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemorySaver()
    else:
        with SqliteSaver.from_conn_string(":memory:") as checkpointer:
            yield checkpointer


def _system(model: ScriptedToolModel) -> str:
    first = model.prompts[-1][0]
    return str(first.content) if first.type == "system" else ""


def _twelve_turns(invoke: Any) -> None:
    for text in PETS:
        invoke(text)
    invoke("Which pets do I have?")


@pytest.mark.parametrize("build", ["prebuilt", "middleware"])
def test_a_checkpointed_thread_never_gets_its_own_turns_again(build: str, saver: Any) -> None:
    memory = MemoryOS()
    model = replying("Noted.")
    config = {"configurable": {"thread_id": "t", "user_id": "ana"}}
    if build == "prebuilt":
        agent = create_memoryos_agent(model, memory=memory, checkpointer=saver)

        def invoke(text: str) -> None:
            agent.invoke({"messages": [HumanMessage(text)]}, config)  # type: ignore[call-overload]
    else:
        agent = create_agent(model, middleware=[MemoryOSMiddleware(memory)], context_schema=Ctx, checkpointer=saver)

        def invoke(text: str) -> None:
            agent.invoke({"messages": [HumanMessage(text)]}, config, context=Ctx("ana"))  # type: ignore[call-overload]

    _twelve_turns(invoke)
    assert len(memory.get_stm(user_id="ana", thread_id="t")) == 7  # the first turns are in MTM now
    assert memory.list_pages(user_id="ana")
    block = _system(model)
    assert not [pet for pet in PETS if pet in block]  # every one of them is in the messages already
    messages = model.prompts[-1]
    assert sum(1 for m in messages if PETS[0] in str(m.content)) == 1  # once: as its own message
    # another thread has none of them as messages: its block brings the pets back from memory
    other = {"configurable": {"thread_id": "u", "user_id": "ana"}}
    if build == "prebuilt":
        agent.invoke({"messages": [HumanMessage("Which pets do I have?")]}, other)  # type: ignore[call-overload]
    else:
        agent.invoke({"messages": [HumanMessage("Which pets do I have?")]}, other, context=Ctx("ana"))  # type: ignore[call-overload]
    assert [pet for pet in PETS if pet in _system(model)]


def test_async_middleware_leaves_out_the_messages_turns() -> None:
    memory = MemoryOS()
    model = replying("Noted.")
    agent = create_agent(
        model, middleware=[MemoryOSMiddleware(memory)], context_schema=Ctx, checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}

    async def main() -> None:
        for text in [*PETS, "Which pets do I have?"]:
            await agent.ainvoke({"messages": [HumanMessage(text)]}, config, context=Ctx("ana"))  # type: ignore[call-overload]

    asyncio.run(main())
    assert not [pet for pet in PETS if pet in _system(model)]


class KeepLastMessages(AgentMiddleware[Any, Any]):
    """Trims the model's messages to the last few (as a trimming middleware does)."""

    def wrap_model_call(self, request: ModelRequest[Any], handler: Any) -> Any:
        return handler(request.override(messages=list(request.messages)[-3:]))


def test_turns_a_trimming_middleware_drops_come_back_from_memory() -> None:
    memory = MemoryOS()
    model = replying("Noted.")
    middleware = [KeepLastMessages(), MemoryOSMiddleware(memory)]  # the trimming first: memory sees what is kept
    agent = create_agent(model, middleware=middleware, context_schema=Ctx, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    for text in [*PETS[:4], "Do I have a pet named Rio?"]:
        agent.invoke({"messages": [HumanMessage(text)]}, config, context=Ctx("ana"))  # type: ignore[call-overload]
    sent = model.prompts[-1]
    assert not any(PETS[0] in str(m.content) for m in sent[1:])  # trimmed away from the messages …
    assert PETS[0] in _system(model)  # … so memory shows it
    assert PETS[3] not in _system(model)  # the kept turn is not repeated
    assert sum(PETS[3] in str(m.content) for m in sent) == 1


def test_the_search_tool_returns_no_turn_the_model_already_has(saver: Any) -> None:
    memory = MemoryOS()
    search = create_search_memory_tool(memory)

    def search_then_answer(messages: list[Any]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage("Here is what I found.")
        call = {"name": "search_memory", "args": {"query": "pet named"}, "id": f"s{len(messages)}", "type": "tool_call"}
        return AIMessage("", tool_calls=[call])

    model = ScriptedToolModel(script={"search_memory": [search_then_answer]})
    agent = create_memoryos_agent(model, [search], memory=memory, checkpointer=saver)
    elsewhere = {"configurable": {"thread_id": "old", "user_id": "ana"}}
    agent.invoke({"messages": [HumanMessage("My neighbour has a pet named Tofu.")]}, elsewhere)  # type: ignore[call-overload]
    config = {"configurable": {"thread_id": "t", "user_id": "ana"}}
    for text in PETS:
        agent.invoke({"messages": [HumanMessage(text)]}, config)  # type: ignore[call-overload]
    out = agent.invoke({"messages": [HumanMessage("What pets did I mention?")]}, config)  # type: ignore[call-overload]
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    last = results[-1]
    assert "Tofu" in str(last.content)  # another thread's turn: the model does not have it
    assert not [pet for pet in PETS if pet in str(last.content)]  # the thread's own turns, STM or MTM: never
    assert "Recent conversation" not in str(last.content)
    assert last.artifact and {hit["kind"] for hit in last.artifact} <= {"page", "fact"}
    assert any("Tofu" in hit["text"] for hit in last.artifact) and last.artifact[0]["ref"].startswith(("p:", "f:"))
    # in the checkpointed thread, no turn is repeated in the prompt by the tool's earlier answers
    prompt = model.prompts[-1]
    assert max(sum(pet in str(m.content) for m in prompt) for pet in PETS) == 1


def test_retrieve_and_search_leave_out_the_given_messages_on_every_tier() -> None:
    memory = MemoryOS()
    for text in PETS:
        memory.add_turn(text, "Noted.", user_id="ana", thread_id="t")
    seen: list[Any] = []
    for text in PETS:
        seen += [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]
    ctx = memory.retrieve("Which pets do I have?", user_id="ana", thread_id="t", messages=seen)
    assert not [pet for pet in PETS if pet in ctx.to_prompt()]
    hits = memory.search("pet named", user_id="ana", thread_id="t", messages=seen[:4])
    assert hits and not [h for h in hits if PETS[0] in h.text or PETS[1] in h.text]
    assert any(PETS[2] in h.text for h in hits)  # in MTM, not in the messages: found


def test_async_prebuilt_agent_and_search_tool_leave_out_the_messages_turns() -> None:
    """The prebuilt agent (its recall and remember nodes) and the search tool, through ``ainvoke``."""
    memory = MemoryOS()
    search = create_search_memory_tool(memory)

    def search_then_answer(messages: list[Any]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage("Here is what I found.")
        call = {"name": "search_memory", "args": {"query": "pet named"}, "id": f"s{len(messages)}", "type": "tool_call"}
        return AIMessage("", tool_calls=[call])

    model = ScriptedToolModel(script={"search_memory": [search_then_answer]})
    agent = create_memoryos_agent(model, [search], memory=memory, checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t", "user_id": "ana"}}

    async def main() -> list[Any]:
        for text in PETS:
            await agent.ainvoke({"messages": [HumanMessage(text)]}, config)
        out = await agent.ainvoke({"messages": [HumanMessage("What pets did I mention?")]}, config)
        return list(out["messages"])

    messages = asyncio.run(main())
    assert len(memory.get_stm(user_id="ana", thread_id="t")) == 7 and memory.list_pages(user_id="ana")
    last = [m for m in messages if isinstance(m, ToolMessage)][-1]
    assert not [pet for pet in PETS if pet in str(last.content)] and "Recent conversation" not in str(last.content)
    assert not [pet for pet in PETS if pet in _system(model)]
    assert max(sum(pet in str(m.content) for m in model.prompts[-1]) for pet in PETS) == 1
