"""Drop-in recall/remember nodes, the prebuilt agent and the memory tools in real LangGraph graphs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import RetryPolicy
from pydantic import BaseModel

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.graph import (
    MissingUserIdError,
    create_manage_memory_tool,
    create_memoryos_agent,
    create_recall_node,
    create_remember_node,
    create_search_memory_tool,
    resolve_user_id,
)
from tests.scripted_model import ScriptedToolModel, replying

#: what the chat model of a graph answers when a test does not care
GOT_IT = "Got it."


class State(MessagesState):
    memory_context: str


def user_graph(memory: MemoryOS, model: BaseChatModel, checkpointer: Any = None, remember: Any = None) -> Any:
    def respond(state: State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(State)
    graph.add_node("recall", create_recall_node(memory))
    graph.add_node("respond", respond)
    graph.add_node("remember", remember or create_remember_node(memory))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "respond")
    graph.add_edge("respond", "remember")
    graph.add_edge("remember", END)
    return graph.compile(checkpointer=checkpointer)


def cfg(thread: str, user: str = "ana") -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def _pages(memory: MemoryOS, user: str = "ana") -> list[Any]:
    stm = [p for t in ("a", "b", "t") for p in memory.get_stm(user_id=user, thread_id=t)]
    return memory.list_pages(user_id=user) + stm


@pytest.fixture(params=["memory", "sqlite"])
def checkpointer(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemorySaver()
    else:
        with SqliteSaver.from_conn_string(":memory:") as saver:
            yield saver


def test_nodes_in_a_user_graph_over_several_turns(checkpointer: Any) -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=2))
    graph = user_graph(memory, replying("Nice!", "Cool.", "Sure."), checkpointer)
    texts = ["My sister Lena lives in Oslo.", "I play the cello.", "I like green tea.", "What does my sister do?"]
    for text in texts:
        out = graph.invoke({"messages": [HumanMessage(text)]}, cfg("t"))
    assert len(_pages(memory)) == 4  # one page per turn
    assert "Lena" in out["memory_context"]  # recalled before the last answer
    stored = {p.user_input: p.agent_response for p in _pages(memory)}
    assert stored["I play the cello."] in ("Nice!", "Cool.", "Sure.")


def test_replay_and_retry_never_add_a_page_twice() -> None:
    memory = MemoryOS()
    saver = InMemorySaver()
    graph = user_graph(memory, replying(GOT_IT), saver)
    for text in ["I moved to Denver.", "I started climbing."]:
        graph.invoke({"messages": [HumanMessage(text)]}, cfg("t"))
    assert len(_pages(memory)) == 2
    # replay from the checkpoint taken just before "remember" ran for the second turn
    before_remember = next(s for s in graph.get_state_history(cfg("t")) if s.next == ("remember",))
    graph.invoke(None, {"configurable": {**before_remember.config["configurable"], "user_id": "ana"}})
    assert len(_pages(memory)) == 2

    # a remember node that fails after storing, retried by LangGraph
    failures = {"left": 1}
    remember = create_remember_node(memory)

    def flaky(state: State, config: RunnableConfig) -> dict[str, Any]:
        remember.invoke(state, config)
        if failures["left"]:
            failures["left"] -= 1
            raise ConnectionError("network blip after the write")
        return {}

    graph2 = StateGraph(State)
    graph2.add_node("respond", lambda s: {"messages": [AIMessage("Noted.")]})
    graph2.add_node("remember", flaky, retry_policy=RetryPolicy(max_attempts=2, initial_interval=0.01))
    graph2.add_edge(START, "respond")
    graph2.add_edge("respond", "remember")
    graph2.add_edge("remember", END)
    graph2.compile(checkpointer=InMemorySaver()).invoke({"messages": [HumanMessage("I adopted a cat.")]}, cfg("t2"))  # type: ignore[call-overload]
    assert failures["left"] == 0
    assert [p.user_input for p in memory.get_stm(user_id="ana", thread_id="t2")] == ["I adopted a cat."]


def test_two_threads_share_mtm_and_lpm_not_stm() -> None:
    memory = MemoryOS(config=MemoryOSConfig(stm_capacity=2))
    graph = user_graph(memory, replying(GOT_IT), InMemorySaver())
    for text in ["My dog is called Biscuit.", "I work as a nurse.", "ok", "fine", "sure"]:
        graph.invoke({"messages": [HumanMessage(text)]}, cfg("a"))
    out = graph.invoke({"messages": [HumanMessage("What is my dog called?")]}, cfg("b"))
    assert "Biscuit" in out["memory_context"]
    assert [p.user_input for p in memory.get_stm(user_id="ana", thread_id="b")] == ["What is my dog called?"]
    assert "Biscuit" not in " ".join(p.user_input for p in memory.get_stm(user_id="ana", thread_id="b"))
    # another user sees nothing of it
    other = graph.invoke({"messages": [HumanMessage("What is my dog called?")]}, cfg("c", user="ben"))
    assert "Biscuit" not in other["memory_context"]


def test_missing_user_id_fails_closed() -> None:
    memory = MemoryOS()
    graph = user_graph(memory, replying(GOT_IT))
    with pytest.raises(MissingUserIdError, match="context_schema"):
        graph.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "t"}})
    with pytest.raises(MissingUserIdError):
        resolve_user_id({"configurable": {}}, context={"user_id": ""})


def test_user_id_from_the_runtime_context() -> None:
    from dataclasses import dataclass

    @dataclass
    class Ctx:
        user_id: str

    memory = MemoryOS()

    def respond(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage("ok")]}

    graph = StateGraph(State, context_schema=Ctx)
    graph.add_node("recall", create_recall_node(memory))
    graph.add_node("respond", respond)
    graph.add_node("remember", create_remember_node(memory))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "respond")
    graph.add_edge("respond", "remember")
    graph.add_edge("remember", END)
    graph.compile().invoke(  # type: ignore[call-overload]
        {"messages": [HumanMessage("I love jazz.")]}, {"configurable": {"thread_id": "t"}}, context=Ctx(user_id="zoe")
    )
    assert [p.user_input for p in memory.get_stm(user_id="zoe", thread_id="t")] == ["I love jazz."]


def _chat(agent: Any, text: str, thread: str) -> dict[str, Any]:
    return agent.invoke({"messages": [HumanMessage(text)]}, cfg(thread))  # type: ignore[no-any-return]


def test_prebuilt_agent_recalls_a_fact_from_20_turns_earlier_in_another_thread() -> None:
    memory = MemoryOS()
    model = replying(GOT_IT)
    agent = create_memoryos_agent(model, memory=memory, system_prompt="Be brief.", checkpointer=InMemorySaver())
    _chat(agent, "My dog's name is Biscuit, he is a beagle.", "a")
    for i in range(19):
        _chat(agent, f"Random chat number {i} about the weather and traffic.", "a")
    _chat(agent, "What is my dog's name?", "b")
    system = model.prompts[-1][0]
    assert system.type == "system" and system.content.startswith("Be brief.") and "Biscuit" in system.content  # type: ignore[union-attr]
    assert len(_pages(memory)) == 21


def test_prebuilt_agent_with_tools_keeps_tool_calls_in_the_page() -> None:
    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return "sunny, 21 C"

    memory = MemoryOS()
    model = ScriptedToolModel(script={"lookup": [{"q": "weather"}, "It is sunny."]})  # a tool call, then the answer
    agent = create_memoryos_agent(model, [lookup], memory=memory)
    out = _chat(agent, "What's the weather like?", "t")
    assert out["messages"][-1].content == "It is sunny."
    page = memory.get_stm(user_id="ana", thread_id="t")[0]
    assert page.agent_response == "It is sunny."
    assert page.metadata["tool_calls"][0]["name"] == "lookup"
    assert page.metadata["tool_results"][0]["content"] == "sunny, 21 C"


def test_async_and_streaming_variants() -> None:
    memory = MemoryOS()
    model = replying("Noted!")
    agent = create_memoryos_agent(model, memory=memory, checkpointer=InMemorySaver())

    async def main() -> list[Any]:
        await agent.ainvoke({"messages": [HumanMessage("I speak Portuguese.")]}, cfg("a"))
        chunks = [c async for c in agent.astream({"messages": [HumanMessage("I have two kids.")]}, cfg("a"))]
        return chunks

    chunks = asyncio.run(main())
    assert [list(c)[0] for c in chunks] == ["recall", "agent", "remember"]
    list(agent.stream({"messages": [HumanMessage("Which language do I speak?")]}, cfg("b")))
    assert "Portuguese" in model.prompts[-1][0].content
    assert len(_pages(memory)) == 3


def test_memory_tools_use_the_runs_user() -> None:
    memory = MemoryOS()
    search, manage = create_search_memory_tool(memory), create_manage_memory_tool(memory)
    config = cfg("t", user="ana")
    added = manage.invoke({"action": "add", "content": "I am allergic to peanuts."}, config)
    assert added.startswith("stored: The user is allergic to peanuts.")
    fact_id = memory.list_facts(user_id="ana")[0].id
    assert "peanuts" in search.invoke({"query": "What am I allergic to?"}, config)
    assert "peanuts" not in search.invoke({"query": "What am I allergic to?"}, cfg("t", user="ben"))
    edited = manage.invoke({"action": "update", "fact_id": fact_id, "content": "I am allergic to shellfish."}, config)
    assert edited.startswith("edited:") and "shellfish" in memory.list_facts(user_id="ana")[0].summary
    assert manage.invoke({"action": "delete", "fact_id": "nope"}, config).startswith("No fact with id")
    assert "needs the fact" in manage.invoke({"action": "add"}, config)
    assert asyncio.run(manage.ainvoke({"action": "delete", "fact_id": fact_id}, config)).startswith("deleted:")
    assert memory.list_facts(user_id="ana") == []
    assert "user_id" not in manage.args  # the model cannot choose whose memory
    with pytest.raises(MissingUserIdError):
        search.invoke({"query": "x"}, {"configurable": {}})


def test_streaming_hygiene_with_a_streaming_model_inside_the_llm_controller() -> None:
    import json

    from langchain_memoryos.controllers.llm import LLMController

    analysis = json.dumps(
        {"linked": False, "chain_meta": "SECRET-MEMORY-TOKENS", "keywords": ["x"], "topic_summary": "t", "records": []}
    )
    internal = replying(analysis, tool_calling=False)  # JSON mode: the analysis is the streamed text
    memory = MemoryOS(controller=LLMController(internal), config=MemoryOSConfig(stm_capacity=1))
    chat = replying("first answer", "second answer here")
    agent = create_memoryos_agent(chat, memory=memory, checkpointer=InMemorySaver())
    agent.invoke({"messages": [HumanMessage("hello")]}, cfg("t"))
    # subgraphs=True: even the memory's own (sub)graph runs are streamed, so only the nostream tag hides its calls
    chunks = [
        item
        for _, item in agent.stream(
            {"messages": [HumanMessage("again")]}, cfg("t"), stream_mode="messages", subgraphs=True
        )
    ]
    assert memory.stats(user_id="ana").llm_usage["analyze_page"]["calls"] == 2  # the memory's model did run …
    streamed = "".join(str(c.content) for c, _ in chunks)  # type: ignore[str-unpack,union-attr]
    assert "SECRET" not in streamed  # … but none of its tokens reached the user's stream
    assert streamed.replace(" ", "") == "secondanswerhere"
    assert {meta["langgraph_node"] for _, meta in chunks} == {"agent"}  # type: ignore[index,str-unpack]


@pytest.mark.parametrize("build", ["prebuilt", "nodes"])
def test_turns_in_the_checkpointed_messages_are_not_repeated_in_the_memory_block(build: str, checkpointer: Any) -> None:
    def run(saver: Any) -> tuple[MemoryOS, list[str]]:
        memory = MemoryOS()
        model = replying(GOT_IT)
        if build == "prebuilt":
            graph = create_memoryos_agent(model, memory=memory, system_prompt="Be brief.", checkpointer=saver)
        else:
            graph = user_graph(memory, model, saver)
        contexts = []
        for text in ("My sister Lena lives in Oslo.", "I play the cello.", "What do you know about me?"):
            out = graph.invoke({"messages": [HumanMessage(text)]}, cfg("t"))
            contexts.append(str(model.prompts[-1][0].content) if build == "prebuilt" else out["memory_context"])
        return memory, contexts

    memory, kept = run(checkpointer)
    assert "Recent conversation" not in kept[1] and "User: My sister Lena lives in Oslo." not in kept[1]
    assert "Lena lives in Oslo." not in kept[2] and "I play the cello." not in kept[2]
    assert len(memory.get_stm(user_id="ana", thread_id="t")) == 3
    _, fresh = run(None)  # the same thread without a checkpointer: its runs do not carry the earlier messages
    assert "## Recent conversation" in fresh[1] and "User: My sister Lena lives in Oslo." in fresh[1]
    assert "I play the cello." in fresh[2]


def test_an_agent_searches_then_updates_then_deletes_a_fact_by_the_id_it_read() -> None:
    import re

    from langchain_core.messages import ToolMessage

    memory = MemoryOS()
    memory.add_fact("I live in Lisbon.", user_id="ana")
    memory.add_fact("I am allergic to peanuts.", user_id="ana")
    search, manage = create_search_memory_tool(memory), create_manage_memory_tool(memory)

    def read_id(messages: list[Any], about: str) -> str:
        """The id the model read in the last search_memory result, on the line about ``about``."""
        found = [m for m in messages if isinstance(m, ToolMessage) and m.name == "search_memory"][-1]
        line = next(line for line in str(found.content).splitlines() if about in line)
        match = re.search(r"\[(f:\d+)\]", line)
        assert match, f"no fact id shown on {line!r}"
        return match.group(1)

    def manage_call(n: int, **args: Any) -> AIMessage:
        return AIMessage("", tool_calls=[{"name": "manage_memory", "args": args, "id": f"m{n}", "type": "tool_call"}])

    script: dict[str, list[Any]] = {
        "search_memory": [
            {"query": "Where do I live?"},
            lambda m: manage_call(1, action="update", fact_id=read_id(m, "Lisbon"), content="The user lives in Porto."),
            "Updated: you live in Porto now.",
            {"query": "What am I allergic to?"},
            lambda m: manage_call(2, action="delete", fact_id=read_id(m, "peanuts")),
            "Forgotten.",
        ]
    }
    model = ScriptedToolModel(script=script)
    agent = create_memoryos_agent(model, [search, manage], memory=memory, checkpointer=InMemorySaver())
    lisbon = next(f for f in memory.list_facts(user_id="ana") if "Lisbon" in f.summary)

    _chat(agent, "I moved to Porto, please fix my address.", "t")
    facts = {f.id: f.summary for f in memory.list_facts(user_id="ana")}
    assert facts[lisbon.id] == "The user lives in Porto."  # the same fact, corrected in place
    assert len(facts) == 2 and not any("Lisbon" in s for s in facts.values())

    _chat(agent, "Forget my allergy.", "t")
    # (the turns' own facts are written with them: keep to the two facts the agent handled)
    summaries = [f.summary for f in memory.list_facts(user_id="ana")]
    assert "The user lives in Porto." in summaries and not any("peanuts" in s for s in summaries)
    assert [e.action for e in memory.write_log(user_id="ana") if e.source != "page"][-2:] == ["edited", "deleted"]


def test_the_agent_and_memoryos_share_the_store_they_are_given(tmp_path: Any) -> None:
    from langgraph.store.sqlite import SqliteStore

    with SqliteStore.from_conn_string(str(tmp_path / "shared.db")) as store:
        store.setup()
        model = ScriptedToolModel(script={"search_memory": [GOT_IT, {"query": "Where do I live?"}, GOT_IT]})
        tools = [create_search_memory_tool(), create_manage_memory_tool()]  # no memory: the graph's store's
        agent = create_memoryos_agent(model, tools, store=store, checkpointer=InMemorySaver())
        _chat(agent, "I live in Lisbon and I play the cello.", "t")
        _chat(agent, "Where do I live?", "t2")  # another thread: a search never returns the thread's own turns
    with SqliteStore.from_conn_string(str(tmp_path / "shared.db")) as again:
        reader = MemoryOS(again)  # another memory over the same data
        assert [p.user_input for p in reader.get_stm(user_id="ana", thread_id="t")] == [
            "I live in Lisbon and I play the cello."
        ]
        assert [p.user_input for p in reader.get_stm(user_id="ana", thread_id="t2")] == ["Where do I live?"]
    # the search tool ran inside the agent, over the agent's store: it found the other thread's turn
    found = [m for m in model.prompts[-1] if m.type == "tool"][-1]
    assert "Lisbon" in str(found.content)


def test_nodes_tools_and_middleware_without_a_memory_use_the_graphs_store() -> None:
    from langchain.agents import create_agent
    from langgraph.store.memory import InMemoryStore

    from langchain_memoryos.graph import MemoryOSMiddleware
    from langchain_memoryos.graph.runtime import MissingStoreError, memory_for_store

    store = InMemoryStore()
    graph = StateGraph(State)
    graph.add_node("recall", create_recall_node())
    graph.add_node("respond", lambda state: {"messages": [AIMessage("Nice!")]})
    graph.add_node("remember", create_remember_node())
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "respond")
    graph.add_edge("respond", "remember")
    graph.add_edge("remember", END)
    app = graph.compile(store=store)
    app.invoke({"messages": [HumanMessage("My sister Lena lives in Oslo.")]}, cfg("a"))  # type: ignore[call-overload]
    out = app.invoke({"messages": [HumanMessage("Where does my sister live?")]}, cfg("b"))  # type: ignore[call-overload]
    assert "Lena lives in Oslo." in out["memory_context"]  # written and read through the graph's store
    again = asyncio.run(app.ainvoke({"messages": [HumanMessage("Where does Lena live?")]}, cfg("e")))  # type: ignore[call-overload]
    assert "Lena lives in Oslo." in again["memory_context"]  # the async twins find the store the same way
    assert [p.user_input for p in MemoryOS(store).get_stm(user_id="ana", thread_id="a")] == [
        "My sister Lena lives in Oslo."
    ]

    model = replying("Okay.")
    agent = create_agent(model, middleware=[MemoryOSMiddleware()], store=store)
    agent.invoke({"messages": [HumanMessage("Where does my sister live?")]}, cfg("c"))
    assert "Lena lives in Oslo." in str(model.prompts[-1][0].content)
    assert (
        len(memory_for_store(store).get_stm(user_id="ana", thread_id="c")) == 1
    )  # one memory per store, shared by every node

    with pytest.raises(MissingStoreError, match="compile the graph with a store"):
        graph.compile().invoke({"messages": [HumanMessage("hi")]}, cfg("d"))  # type: ignore[call-overload]


def test_a_memory_over_another_store_than_the_agents_is_refused() -> None:
    from langgraph.store.memory import InMemoryStore

    with pytest.raises(ValueError, match="another store"):
        create_memoryos_agent(replying(GOT_IT), memory=MemoryOS(), store=InMemoryStore())
    memory = MemoryOS()
    agent = create_memoryos_agent(replying(GOT_IT), memory=memory)
    assert agent.store is memory.store  # the graph runs with the memory's store


def test_a_run_that_names_an_agent_uses_that_agents_scope() -> None:
    from langchain.agents import create_agent
    from langgraph.store.memory import InMemoryStore

    from langchain_memoryos.graph import MemoryOSMiddleware

    store = InMemoryStore()
    memory = MemoryOS(store)
    graph = StateGraph(State)
    graph.add_node("recall", create_recall_node(memory))
    graph.add_node("respond", lambda state: {"messages": [AIMessage("Nice!")]})
    graph.add_node("remember", create_remember_node(memory))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "respond")
    graph.add_edge("respond", "remember")
    graph.add_edge("remember", END)
    app = graph.compile()

    def run(text: str, thread: str, agent: str | None) -> Any:
        configurable = {"user_id": "ana", "thread_id": thread} | ({"agent_id": agent} if agent else {})
        return app.invoke({"messages": [HumanMessage(text)]}, {"configurable": configurable})  # type: ignore[call-overload]

    run("My sister Lena lives in Oslo.", "a", "coach")
    assert run("Where does Lena live?", "b", "coach")["memory_context"].count("Lena lives in Oslo.") == 1
    assert "Oslo" not in run("Where does Lena live?", "c", "tutor")["memory_context"]  # another agent: nothing
    assert "Oslo" not in run("Where does Lena live?", "d", None)["memory_context"]  # the default scope: nothing
    coach = memory.for_agent("coach")
    assert [p.user_input for p in coach.get_stm(user_id="ana", thread_id="a")] == ["My sister Lena lives in Oslo."]
    assert memory.get_stm(user_id="ana", thread_id="a") == []
    # the middleware reads the agent from the run's context too
    model = replying("Okay.")
    agent = create_agent(model, middleware=[MemoryOSMiddleware(memory)], context_schema=AgentCtx)
    agent.invoke({"messages": [HumanMessage("Where does Lena live?")]}, context=AgentCtx("ana", "coach"))
    assert "Lena lives in Oslo." in str(model.prompts[-1][0].content)
    assert len(coach.get_stm(user_id="ana", thread_id="default")) == 1


def _call_schema(one: BaseTool) -> dict[str, Any]:
    """The JSON schema of a tool's call arguments (the tools declare them as a pydantic v2 model)."""
    model = one.tool_call_schema
    assert isinstance(model, type) and issubclass(model, BaseModel), model
    return model.model_json_schema()


@dataclass
class AgentCtx:
    user_id: str
    agent_id: str


def test_the_tools_parameters_are_described_and_manage_memory_forgets() -> None:
    memory = MemoryOS()
    search, manage = create_search_memory_tool(memory), create_manage_memory_tool(memory)
    for one in (search, manage):
        schema = _call_schema(one)
        assert schema["description"] and all(p.get("description") for p in schema["properties"].values()), one.name
    assert search.response_format == "content_and_artifact"
    assert "forget" in _call_schema(manage)["properties"]["action"]["enum"]
    config = cfg("t", user="ana")
    memory.add_turn("My locker code is 4417. I also play chess.", "Noted!", user_id="ana", thread_id="t")
    said = manage.invoke({"action": "forget", "content": "locker code"}, config)
    assert "4417" not in str(memory.export_user(user_id="ana")) and "chess" in str(memory.export_user(user_id="ana"))
    assert said and "needs what to forget" in manage.invoke({"action": "forget"}, config)
