"""A turn's facts are written when the turn is added, dated by the turn.

A fact stated in turn 1 is listed, searched and retrieved as soon as turn 1 returns (sync mode; after
``flush()`` in background mode), through ``add_turn``, ``add_messages`` and ``add_turns``, sync and async,
on InMemoryStore and SQLite, and through a real LangGraph agent whose tool searches the memory. With a
model, the facts come inside the page's one structured call, made when the page is added.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.controllers.llm import LLMController
from langchain_memoryos.graph import create_memoryos_agent, create_search_memory_tool
from langchain_memoryos.schema import MemoryContext
from tests.scripted_model import ScriptedToolModel, page_answer

T1 = dt.datetime(2023, 5, 7, 14, 30, tzinfo=dt.UTC)
SAID = "(said 7 May 2023)"
ALLERGY = ("I'm allergic to peanuts.", "Noted, no peanuts.")
QUESTION = "What am I allergic to?"
MakeMemory = Callable[..., MemoryOS]


def _peanut_facts(memory: MemoryOS) -> list[Any]:
    return [f for f in memory.list_facts(user_id="u") if "peanuts" in f.summary]


def _check_turn_one(facts: list[Any], hits: list[Any], ctx: MemoryContext) -> None:
    """The allergy is listed, searched and retrieved, dated with turn 1's timestamp."""
    assert [f.summary for f in facts] == ["The user is allergic to peanuts."]
    assert facts[0].valid_at == T1 and facts[0].source_page_ids  # read off turn 1's page, dated by it
    found = [h for h in hits if h.kind == "fact"]
    assert [h.id for h in found] == [facts[0].id] and found[0].timestamp == T1
    assert [h.record.id for h in ctx.user_facts] == [facts[0].id]
    assert f"The user is allergic to peanuts. {SAID}" in ctx.to_prompt()


def test_a_fact_of_turn_one_is_listed_searched_and_retrieved_when_add_turn_returns(make_memory: MakeMemory) -> None:
    memory = make_memory()
    report = memory.add_turn(*ALLERGY, user_id="u", thread_id="t", timestamp=T1)
    assert [e.action for e in report.events] == ["stored"] and report.moved_to_mtm == []  # written with its turn
    _check_turn_one(
        _peanut_facts(memory),
        memory.search("peanuts", user_id="u"),
        memory.retrieve(QUESTION, user_id="u", thread_id="t"),
    )
    # the page leaves STM later and writes no fact again
    for i in range(8):
        memory.add_turn(f"Chat {i}.", "ok", user_id="u", thread_id="t", timestamp=T1 + dt.timedelta(minutes=i + 1))
    assert memory.stats(user_id="u").mtm_pages >= 1
    assert [e.action for e in memory.write_log(user_id="u") if "peanuts" in e.record.summary] == ["stored"]
    assert _peanut_facts(memory)[0].valid_at == T1  # still dated by the turn it was said in


def test_async_a_fact_of_turn_one_is_seen_when_aadd_turn_returns(make_memory: MakeMemory) -> None:
    memory = make_memory()

    async def main() -> tuple[list[Any], list[Any], MemoryContext]:
        await memory.aadd_turn(*ALLERGY, user_id="u", thread_id="t", timestamp=T1)
        facts = [f for f in await memory.alist_facts(user_id="u") if "peanuts" in f.summary]
        return (
            facts,
            await memory.asearch("peanuts", user_id="u"),
            await memory.aretrieve(QUESTION, user_id="u", thread_id="t"),
        )

    _check_turn_one(*asyncio.run(main()))


def test_add_messages_sync_and_async_write_the_facts_of_turn_one(make_memory: MakeMemory) -> None:
    messages = [HumanMessage(ALLERGY[0]), AIMessage(ALLERGY[1])]
    memory = make_memory()
    memory.add_messages(messages, user_id="u", thread_id="t", timestamp=T1)
    _check_turn_one(
        _peanut_facts(memory),
        memory.search("peanuts", user_id="u"),
        memory.retrieve(QUESTION, user_id="u", thread_id="t"),
    )
    other = make_memory()

    async def main() -> None:
        await other.aadd_messages(messages, user_id="u", thread_id="t", timestamp=T1)

    asyncio.run(main())
    _check_turn_one(
        _peanut_facts(other),
        other.search("peanuts", user_id="u"),
        other.retrieve(QUESTION, user_id="u", thread_id="t"),
    )


def test_add_turns_writes_every_turns_facts_dated_by_each_turn(make_memory: MakeMemory) -> None:
    memory = make_memory()
    turns = [
        {"user_input": ALLERGY[0], "agent_response": ALLERGY[1], "timestamp": T1},
        {"user_input": "I work as a nurse.", "agent_response": "Nice.", "timestamp": T1 + dt.timedelta(days=2)},
    ]
    memory.add_turns(turns, user_id="u", thread_id="t")  # both pages stay in STM
    dated = {f.summary: f.valid_at for f in memory.list_facts(user_id="u")}
    assert dated == {"The user is allergic to peanuts.": T1, "The user works as a nurse.": T1 + dt.timedelta(days=2)}
    one = make_memory()
    for turn in turns:
        one.add_turn(user_id="u", thread_id="t", **turn)  # type: ignore[arg-type]
    assert [f.to_dict() for f in one.list_facts(user_id="u")] == [f.to_dict() for f in memory.list_facts(user_id="u")]


def test_background_mode_shows_the_facts_after_flush(tmp_path: Path) -> None:
    memory = MemoryOS.from_sqlite(tmp_path / "bg.db", write_mode="background")
    try:
        assert memory.add_turn(*ALLERGY, user_id="u", thread_id="t", timestamp=T1).queued
        memory.flush()
        _check_turn_one(
            _peanut_facts(memory),
            memory.search("peanuts", user_id="u"),
            memory.retrieve(QUESTION, user_id="u", thread_id="t"),
        )
    finally:
        memory.close()


def test_the_date_is_stored_and_exported_and_a_new_process_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with MemoryOS.from_sqlite(path) as memory:
        memory.add_turn(*ALLERGY, user_id="u", thread_id="t", timestamp=T1)
        exported = memory.export_user(user_id="u")
    stored = [i["value"] for i in exported["items"] if i["value"].get("summary") == "The user is allergic to peanuts."]
    assert [v["valid_at"] for v in stored] == [T1.isoformat()]
    with MemoryOS.from_sqlite(path) as again:
        assert [f.valid_at for f in again.list_facts(user_id="u")] == [T1]


def test_a_page_stored_before_facts_were_written_at_once_writes_them_as_it_leaves_stm(tmp_path: Path) -> None:
    """An STM page without its analysis (an older store) is analysed, and its facts written, as it leaves."""
    path = tmp_path / "old.db"
    config = MemoryOSConfig(stm_capacity=1)
    with MemoryOS.from_sqlite(path, config=config) as memory:
        memory.add_turn(*ALLERGY, user_id="u", thread_id="t", timestamp=T1)
        store = memory.store
        for item in store.search(("memoryos",), limit=1000):  # the store as an older version left it
            value = dict(item.value)
            if item.namespace[2] == "stm":
                for key in ("topic", "candidates", "keywords", "meta"):
                    value.pop(key, None)
                store.put(item.namespace, item.key, value, index=False)
            elif item.namespace[2] in ("facts", "snapshot"):  # no fact yet; the cache snapshot rebuilt
                store.delete(item.namespace, item.key)
    with MemoryOS.from_sqlite(path, config=config) as memory:
        assert memory.list_facts(user_id="u") == []
        report = memory.add_turn(
            "I work as a nurse.", "Nice.", user_id="u", thread_id="t", timestamp=T1 + dt.timedelta(1)
        )
        assert len(report.moved_to_mtm) == 1
        facts = {f.summary: f.valid_at for f in memory.list_facts(user_id="u")}
        assert facts == {"The user is allergic to peanuts.": T1, "The user works as a nurse.": T1 + dt.timedelta(1)}
        assert memory.list_pages(user_id="u")[0].keywords  # analysed as it left
        assert memory.check(user_id="u") == []


def test_a_langgraph_agent_finds_the_fact_with_its_tool_at_the_next_turn() -> None:
    memory = MemoryOS()
    model = ScriptedToolModel(
        script={"search_memory": ["Noted, no peanuts.", {"query": QUESTION}, "You are allergic to peanuts."]}
    )
    agent = create_memoryos_agent(
        model, [create_search_memory_tool(memory)], memory=memory, checkpointer=InMemorySaver()
    )
    cfg = {"configurable": {"thread_id": "t", "user_id": "u"}}
    agent.invoke({"messages": [HumanMessage(ALLERGY[0])]}, cfg)  # type: ignore[call-overload]
    [fact] = _peanut_facts(memory)  # written when the turn was remembered
    assert fact.valid_at == memory.get_stm(user_id="u", thread_id="t")[0].timestamp
    out = agent.invoke({"messages": [HumanMessage("Can you suggest a snack?")]}, cfg)  # type: ignore[call-overload]
    [result] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    day = fact.valid_at
    assert f"The user is allergic to peanuts. (said {day.day} {day:%B} {day.year})" in str(result.content)
    assert f"[f:{int(fact.id[2:])}]" in str(result.content)  # its id, for the manage_memory tool
    assert out["messages"][-1].content == "You are allergic to peanuts."


def test_with_a_model_the_facts_come_in_the_pages_one_call_made_when_it_is_added() -> None:
    def answer(messages: list[Any]) -> dict[str, Any]:
        prompt = str(messages[-1].content)
        if "allergic" in prompt.split("Current page", 1)[1]:
            out = page_answer("The user is allergic to peanuts.", aspect="health")
            out["records"][0]["entities"] = ["peanuts"]
            return out
        return page_answer()

    model = ScriptedToolModel(script={"PageAnalysisOutput": [answer]})
    memory = MemoryOS(controller=LLMController(model))
    memory.add_turn(*ALLERGY, user_id="u", thread_id="t", timestamp=T1)
    assert len(model.calls) == 1  # the page's one call, at add time: no judge, no fuse
    [fact] = _peanut_facts(memory)
    assert fact.valid_at == T1
    memory.add_turn("Any snack ideas?", "Apples.", user_id="u", thread_id="t", timestamp=T1 + dt.timedelta(minutes=1))
    assert len(model.calls) == 2
    # the second page is linked against the thread's previous page, still in STM
    assert "I'm allergic to peanuts." in model.calls[1][1].split("Current page", 1)[0]
    memory.retrieve(QUESTION, user_id="u", thread_id="t")
    memory.search("peanuts", user_id="u")
    assert len(model.calls) == 2  # none per retrieval
