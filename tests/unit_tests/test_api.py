"""One consistent API, messages in, scopes.

5. ``user_id`` keyword-only everywhere; ``source_ids()`` lists; ``list_users`` and ``memoryos users``;
   ``get_fact`` with the fact's history; a structured, read-only ``search``.
6. ``add_turn`` takes messages; ``add_messages`` pairs a message list into turns (in a real LangGraph graph).
7. ``agent_id`` and ``namespace_prefix`` scopes: what one scope writes, another never sees.

The tests that take ``make_memory`` run on InMemoryStore and SQLite here, and on PostgreSQL in
tests/integration_tests/test_postgres_backend.py.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from typer.testing import CliRunner

from langchain_memoryos import FactNotFoundError, MemoryOS, MemoryOSConfig, SearchHit, pair_messages
from langchain_memoryos.cli import app
from tests.conftest import at
from tests.scripted_model import replying

MakeMemory = Callable[..., MemoryOS]


# -- 5. a consistent API ---------------------------------------------------------------------------------------
def _public_methods() -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(MemoryOS, inspect.isfunction)
        if not name.startswith("_")
    }


def test_user_id_is_keyword_only_on_every_method_that_names_a_user() -> None:
    methods = _public_methods()
    named = {name: sig for name, sig in methods.items() if "user_id" in sig.parameters}
    # every method that reads or writes one user's memory, sync and async
    for name in (
        "get_stm",
        "list_facts",
        "get_persona",
        "update_fact",
        "delete_fact",
        "export_user",
        "delete_user",
        "write_log",
        "stats",
        "clear_stm",
        "check",
        "repair",
        "set_agent_profile",
        "flush",
        "list_pages",
        "get_fact",
        "search",
        "add_messages",
        "add_turn",
        "retrieve",
    ):
        assert name in named and f"a{name}" in named, name
    positional = {
        name for name, sig in named.items() if sig.parameters["user_id"].kind is not inspect.Parameter.KEYWORD_ONLY
    }
    assert positional == set()
    memory = MemoryOS()
    with pytest.raises(TypeError):
        memory.list_facts("u")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        memory.delete_fact("u", "f_1")  # type: ignore[call-arg]


def test_every_source_ids_is_a_list() -> None:
    memory = MemoryOS()
    memory.add_turn("I moved to Oslo.", "Nice!", user_id="u", metadata={"source_id": ["D1:2", "D1:1", "D1:2"]})
    memory.add_turn("I play chess.", "Fun!", user_id="u", metadata={"source_id": "D1:0"})
    page = memory.get_stm(user_id="u")[0]
    ctx = memory.retrieve("Oslo", user_id="u")
    assert page.source_ids() == ["D1:2", "D1:1"]  # stored order, each once
    assert ctx.source_ids() == ["D1:0", "D1:1", "D1:2"]  # sorted, each once


def test_list_users_lists_stored_users_only(make_memory: MakeMemory) -> None:
    memory = make_memory()
    assert memory.list_users() == []
    for user in ("zoe", "ana.b@x.com", "50%"):
        memory.add_turn("Hi there.", "Hello!", user_id=user, timestamp=at(0))
    assert memory.list_users() == ["50%", "ana.b@x.com", "zoe"]
    memory.delete_user(user_id="zoe")
    assert asyncio.run(memory.alist_users()) == ["50%", "ana.b@x.com"]


def test_memoryos_users_command(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with MemoryOS.from_sqlite(db) as memory:
        for user in ("maya", "ana"):
            memory.add_turn("I keep bees.", "Lovely.", user_id=user)
    result = CliRunner().invoke(app, ["users", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["ana", "maya"]
    empty = CliRunner().invoke(app, ["users", "--db", str(tmp_path / "none.db")])
    assert empty.exit_code != 0 and empty.output.startswith("error:")


def test_get_fact_returns_the_fact_with_its_history(make_memory: MakeMemory) -> None:
    memory = make_memory()
    first = memory.add_fact("I live in Oslo.", user_id="u", timestamp=at(0))[0]
    fused = memory.add_fact("I moved to Bergen.", user_id="u", timestamp=at(1))[0]
    assert (first.action, fused.action) == ("stored", "updated")
    fid = fused.record.id
    found = memory.get_fact(fid, user_id="u")
    assert found.fact.summary == fused.record.summary
    assert [(e.action, e.record.id) for e in found.history] == [("stored", first.record.id), ("updated", fid)]
    memory.update_fact(fid, "The user lives in Trondheim.", user_id="u")
    again = asyncio.run(memory.aget_fact(fid, user_id="u"))
    assert again.fact.summary == "The user lives in Trondheim."
    assert [e.action for e in again.history] == ["stored", "updated", "edited"]
    memory.delete_fact(fid, user_id="u")
    with pytest.raises(FactNotFoundError):
        memory.get_fact(fid, user_id="u")
    with pytest.raises(FactNotFoundError):
        memory.get_fact(fid, user_id="someone-else")


def _filled(make_memory: MakeMemory) -> MemoryOS:
    memory = make_memory(MemoryOSConfig(stm_capacity=2))
    turns = [
        ("I adopted a cat named Miso.", "Lovely!"),
        ("Miso the cat sleeps on my keyboard.", "Cats love warm laptops."),
        ("I work as a nurse in Lyon.", "A demanding job."),
        ("I train for a marathon in April.", "Good luck!"),
        ("My sister visits next week.", "Have fun!"),
    ]
    for i, (said, answer) in enumerate(turns):
        memory.add_turn(said, answer, user_id="u", thread_id="t1", timestamp=at(0, i), metadata={"source_id": f"D{i}"})
    memory.add_fact("I'm allergic to cats.", user_id="u")
    return memory


def test_search_returns_scored_pages_and_facts_ranked_as_retrieve_and_writes_nothing(make_memory: MakeMemory) -> None:
    memory = _filled(make_memory)
    before = memory.export_user(user_id="u")
    hits = memory.search("my cat Miso", user_id="u", limit=20)
    assert memory.export_user(user_id="u") == before  # read-only: no visit counted, nothing written
    assert all(isinstance(h, SearchHit) and h.id and h.timestamp for h in hits)
    pages = [h for h in hits if h.kind == "page"]
    facts = [h for h in hits if h.kind == "fact"]
    assert [h.page.id for h in pages if h.page] == [h.id for h in pages]
    assert pages[0].sources in (["D0"], ["D1"])  # a page about Miso ranks first
    assert {h.thread_id for h in pages} == {"t1"}
    # every fact the read matched, those of the pages hit too (a list of items repeats nothing)
    assert sorted(h.fact.summary for h in facts if h.fact) == [
        "Miso the cat sleeps on the user's keyboard.",
        "The user adopted a cat named Miso.",
        "The user is allergic to cats.",
    ]
    assert all(a.score >= b.score for a, b in zip(pages, pages[1:], strict=False))
    # the same ranking as retrieve: the context's pages are the best pages of the search, in its order
    ctx = memory.retrieve("my cat Miso", user_id="u", thread_id="elsewhere", touch=False)
    shown = [hit.page.id for hit in ctx.pages]
    assert shown and [h.id for h in pages[: len(shown)]] == shown
    assert memory.search("my cat Miso", user_id="u", limit=1) == hits[:1]
    # a thread's own short-term pages are left out when the caller names it
    in_thread = memory.search("my cat Miso", user_id="u", limit=20, thread_id="t1")
    stm_ids = {p.id for p in memory.get_stm(user_id="u", thread_id="t1")}
    assert stm_ids and not stm_ids & {h.id for h in in_thread if h.kind == "page"}
    assert asyncio.run(memory.asearch("my cat Miso", user_id="u", limit=20)) == hits
    # a hit's page is the caller's copy: changing it leaves the memory as it was
    assert pages[0].page is not None
    pages[0].page.metadata["source_id"] = ["changed"]
    again = [h for h in memory.search("my cat Miso", user_id="u", limit=20) if h.kind == "page"]
    assert again[0].id == pages[0].id and again[0].sources in (["D0"], ["D1"])
    assert again[0].page is not None and again[0].page.source_ids() == again[0].sources
    assert memory.export_user(user_id="u") == before


def test_search_refuses_what_it_cannot_answer() -> None:
    memory = MemoryOS()
    with pytest.raises(ValueError, match="non-empty query"):
        memory.search("  ", user_id="u")
    with pytest.raises(ValueError, match="limit"):
        memory.search("cats", user_id="u", limit=0)
    with pytest.raises(ValueError, match="user_id"):
        memory.search("cats", user_id="")


# -- 6. messages in --------------------------------------------------------------------------------------------
def test_add_turn_takes_messages() -> None:
    memory = MemoryOS()
    report = memory.add_turn(HumanMessage("I moved to Oslo.", id="h1"), AIMessage("Nice!", id="a1"), user_id="u")
    again = memory.add_turn(HumanMessage("I moved to Oslo.", id="h1"), AIMessage("Nice!", id="a1"), user_id="u")
    assert report.added and not again.added  # the message ids make the turn id
    assert [(p.user_input, p.agent_response) for p in memory.get_stm(user_id="u")] == [("I moved to Oslo.", "Nice!")]
    with pytest.raises(TypeError, match="HumanMessage"):
        memory.add_turn(AIMessage("Nice!"), "x", user_id="u")  # type: ignore[arg-type]
    calling = AIMessage("", tool_calls=[{"name": "weather", "args": {}, "id": "c1"}])
    with pytest.raises(ValueError, match="calls tools"):
        memory.add_turn("Weather?", calling, user_id="u")
    assert len(memory.get_stm(user_id="u")) == 1


def test_add_messages_pairs_turns_and_keeps_tools_out(make_memory: MakeMemory) -> None:
    memory = make_memory()
    messages = [
        SystemMessage("You are a helpful assistant."),
        HumanMessage("What's the weather in Oslo? I live there.", id="h1"),
        AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Oslo"}, "id": "c1"}], id="a1"),
        ToolMessage("TOOL-RESULT -3C, snow", tool_call_id="c1", id="t1"),
        AIMessage("It's cold and snowing in Oslo.", id="a2"),
        HumanMessage("I also have a dog.", id="h2"),
        HumanMessage("His name is Rex.", id="h3"),
        AIMessage("Hello Rex!", id="a3"),
        HumanMessage("Are you still there?", id="h4"),
    ]
    reports = memory.add_messages(messages, user_id="u", thread_id="chat", timestamp=at(0))
    assert [r.added for r in reports] == [True, True]
    pages = memory.get_stm(user_id="u", thread_id="chat")
    assert [(p.user_input, p.agent_response) for p in pages] == [
        ("What's the weather in Oslo? I live there.", "It's cold and snowing in Oslo."),
        ("I also have a dog.\nHis name is Rex.", "Hello Rex!"),
    ]
    stored = str(memory.export_user(user_id="u"))
    assert "TOOL-RESULT" not in stored and "weather" not in str([p.metadata for p in pages])
    assert "helpful assistant" not in stored
    # the whole conversation again, now answered: only the new turn is stored
    answered = [*messages, AIMessage("Yes, I'm here.", id="a4")]
    assert [r.added for r in asyncio.run(memory.aadd_messages(answered, user_id="u", thread_id="chat"))] == [
        False,
        False,
        True,
    ]
    assert len(memory.get_stm(user_id="u", thread_id="chat")) == 3


def test_add_messages_unanswered_and_bad_input() -> None:
    memory = MemoryOS()
    reports = memory.add_messages(
        [
            {"role": "user", "content": "I'm vegan."},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "Any recipe?"},
        ],
        user_id="u",
        store_unanswered=True,
    )
    assert len(reports) == 2
    assert [(p.user_input, p.agent_response) for p in memory.get_stm(user_id="u")][-1] == ("Any recipe?", "")
    assert memory.add_messages([HumanMessage("only a question")], user_id="v") == []
    assert memory.get_stm(user_id="v") == []
    with pytest.raises(TypeError, match="list of messages"):
        memory.add_messages("I'm vegan.", user_id="u")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="user_id"):
        memory.add_messages([HumanMessage("hi"), AIMessage("hello")], user_id=None)  # type: ignore[arg-type]
    turns, pending = pair_messages([], [HumanMessage("a"), AIMessage("b"), HumanMessage("c")])
    assert [(t.user_input, t.agent_response) for t in turns] == [("a", "b")] and len(pending) == 1


def test_add_messages_in_a_langgraph_graph_stores_each_turn_once() -> None:
    memory = MemoryOS()
    model = replying("Nice to meet you, Ana.", "Lisbon is lovely.")

    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def remember(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        memory.add_messages(state["messages"], user_id="ana", thread_id=config["configurable"]["thread_id"])
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_node("remember", remember)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", "remember")
    graph = builder.compile(checkpointer=InMemorySaver())
    cfg: RunnableConfig = {"configurable": {"thread_id": "t1"}}
    graph.invoke({"messages": [HumanMessage("Hi, I'm Ana.")]}, cfg)
    graph.invoke({"messages": [HumanMessage("I live in Lisbon.")]}, cfg)
    pages = memory.get_stm(user_id="ana", thread_id="t1")
    assert [(p.user_input, p.agent_response) for p in pages] == [
        ("Hi, I'm Ana.", "Nice to meet you, Ana."),
        ("I live in Lisbon.", "Lisbon is lovely."),
    ]


# -- 7. scopes ---------------------------------------------------------------------------------------------------
def _seen(memory: MemoryOS, user: str) -> dict[str, Any]:
    return {
        "stm": [p.user_input for p in memory.get_stm(user_id=user)],
        "facts": [f.summary for f in memory.list_facts(user_id=user)],
        "users": memory.list_users(),
        "search": [h.text for h in memory.search("chess", user_id=user)],
        "prompt": "chess" in memory.retrieve("chess", user_id=user, touch=False).to_prompt(),
    }


def test_agent_scopes_keep_each_users_memory_apart(make_memory: MakeMemory) -> None:
    memory = make_memory()
    coach, tutor = memory.for_agent("coach"), memory.for_agent("tutor.v2")
    assert coach is memory.for_agent("coach") and coach.store is memory.store
    coach.add_turn("I play chess every Sunday.", "Great!", user_id="ana", timestamp=at(0))
    coach.add_fact("I play chess.", user_id="ana")
    nothing = {"stm": [], "facts": [], "users": [], "search": [], "prompt": False}
    assert _seen(memory, "ana") == nothing
    assert _seen(tutor, "ana") == nothing
    seen = _seen(coach, "ana")
    assert seen["stm"] == ["I play chess every Sunday."] and seen["facts"] and seen["users"] == ["ana"]
    assert seen["prompt"] and seen["search"]
    # the same user id in two scopes: two memories; deleting one leaves the other
    memory.add_turn("I play chess too.", "Nice.", user_id="ana", timestamp=at(0))
    assert memory.list_users() == ["ana"] and coach.list_users() == ["ana"]
    assert memory.delete_user(user_id="ana") > 0
    assert coach.get_stm(user_id="ana")[0].user_input == "I play chess every Sunday."
    # an export moves between scopes
    data = coach.export_user(user_id="ana")
    assert tutor.import_user(data, user_id="ana") == len(data["items"])
    assert [p.user_input for p in tutor.get_stm(user_id="ana")] == ["I play chess every Sunday."]
    assert tutor.check(user_id="ana") == []


def test_namespace_prefix_keeps_memories_apart_on_one_store(make_memory: MakeMemory) -> None:
    memory = make_memory()
    mine = MemoryOS(memory.store, embeddings=memory.embeddings, namespace_prefix=("myapp", "memory"))
    agent = MemoryOS(memory.store, embeddings=memory.embeddings, namespace_prefix=("myapp", "memory"), agent_id="bot")
    mine.add_turn("I play chess every Sunday.", "Great!", user_id="ana", timestamp=at(0))
    assert memory.list_users() == [] and agent.list_users() == [] and mine.list_users() == ["ana"]
    assert memory.get_stm(user_id="ana") == [] and agent.get_stm(user_id="ana") == []
    rows = memory.store.search(("myapp",), limit=1000)
    assert rows and {it.namespace[:3] for it in rows} == {("myapp", "memory", "ana")}
    assert memory.store.search(("memoryos",)) == []
    assert mine.delete_user(user_id="ana") > 0 and mine.list_users() == []


def test_scopes_fail_closed() -> None:
    for bad in (
        {"agent_id": ""},
        {"agent_id": "  "},
        {"namespace_prefix": "myapp"},
        {"namespace_prefix": ()},
        {"namespace_prefix": ("my.app",)},
    ):
        with pytest.raises((TypeError, ValueError)):
            MemoryOS(**bad)
    memory = MemoryOS(agent_id="coach")
    with pytest.raises(ValueError, match="user_id"):
        memory.add_turn("hi", "hello", user_id="")
    with pytest.raises(ValueError, match="agent_id"):
        memory.for_agent("")


def test_no_agent_profile_unless_configured_or_learned(tmp_path: Path) -> None:
    memory = MemoryOS()
    memory.add_turn("I live in Lisbon.", "Noted!", user_id="new")
    ctx = memory.retrieve("Where do I live?", user_id="new", thread_id="q")
    assert "Agent traits" not in ctx.to_prompt() and "Profile:" not in ctx.to_prompt()
    assert memory.get_persona(user_id="new").agent_profile == ""  # nothing shown as if it were stored
    db = tmp_path / "m.db"
    with MemoryOS.from_sqlite(db) as stored:
        stored.add_turn("I live in Lisbon.", "Noted!", user_id="ana")
    out = CliRunner().invoke(app, ["inspect", "--db", str(db), "--user", "ana"])
    assert out.exit_code == 0, out.output
    assert "helpful, attentive" not in out.output and "Profile:" not in out.output
    # configured by the developer, or set per user: shown, and stored when set
    coach = MemoryOS(config=MemoryOSConfig(agent_profile="A terse chess coach."))
    coach.add_turn("I play chess.", "Good.", user_id="u")
    assert "Profile: A terse chess coach." in coach.retrieve("chess?", user_id="u", thread_id="q").to_prompt()
    memory.set_agent_profile("A patient tutor.", user_id="new")
    assert memory.get_persona(user_id="new").agent_profile == "A patient tutor."
