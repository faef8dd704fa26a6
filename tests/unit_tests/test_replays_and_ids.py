"""A resent history without message ids stores only its new turns (mem0's habit); one fact id form. Every backend.

``add_messages`` aligns role dicts and LangChain messages without ids with the thread's stored turns
by content: a full resend, one trimmed at the front, one whose older turns have left STM for MTM, and
two threads resending at once store each new turn once. (The same tests run on PostgreSQL through
tests/integration_tests/test_postgres_backend.py.)
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from langchain_memoryos import MemoryOS, MemoryOSConfig

MakeMemory = Callable[..., MemoryOS]


def exchange(i: int) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"Day {i}: I walked {i} km along the river."},
        {"role": "assistant", "content": f"Noted, {i} km."},
    ]


def history(n: int) -> list[dict[str, str]]:
    return [m for i in range(n) for m in exchange(i)]


def thread_texts(memory: MemoryOS, user: str = "u", thread: str = "t") -> list[str]:
    """Every stored page's user side in the thread (STM and MTM), oldest first."""
    stm = [p.user_input for p in memory.get_stm(user_id=user, thread_id=thread)]
    older = [p["user_input"] for p in _mtm_pages(memory, user) if p.get("thread_id") == thread]
    return sorted(older) + stm


def _mtm_pages(memory: MemoryOS, user: str) -> list[dict[str, Any]]:
    data = memory.export_user(user_id=user)
    return [r["value"] for r in data["items"] if r["namespace"] == ["pages"]]


def test_a_full_resend_of_role_dicts_stores_only_the_new_turns(make_memory: MakeMemory) -> None:
    memory = make_memory()
    first = memory.add_messages(history(2), user_id="u", thread_id="t")
    again = memory.add_messages(history(3), user_id="u", thread_id="t")
    assert [r.added for r in first] == [True, True]
    assert [r.added for r in again] == [False, False, True]
    assert again[0].page_id == first[0].page_id and again[1].page_id == first[1].page_id
    assert memory.add_messages(history(3), user_id="u", thread_id="t")[-1].added is False  # nothing new
    assert thread_texts(memory) == [f"Day {i}: I walked {i} km along the river." for i in range(3)]
    assert memory.check(user_id="u") == []


def test_messages_without_ids_trimmed_at_the_front_and_past_stm(make_memory: MakeMemory) -> None:
    memory = make_memory(MemoryOSConfig(stm_capacity=3))
    as_messages = [HumanMessage(m["content"]) if m["role"] == "user" else AIMessage(m["content"]) for m in history(6)]
    memory.add_messages([SystemMessage("You are kind."), *as_messages], user_id="u", thread_id="t")
    assert len(memory.get_stm(user_id="u", thread_id="t")) == 3  # three turns went on to MTM
    trimmed = as_messages[8:] + [HumanMessage("Day 6: I rested."), AIMessage("Good.")]  # the caller kept 2 turns
    reports = memory.add_messages(trimmed, user_id="u", thread_id="t")
    assert [r.added for r in reports] == [False, False, True]
    full = as_messages + [
        HumanMessage("Day 6: I rested."),
        AIMessage("Good."),
        HumanMessage("Day 7."),
        AIMessage("Ok."),
    ]
    assert [r.added for r in memory.add_messages(full, user_id="u", thread_id="t")] == [False] * 7 + [True]
    # trimmed in the middle of an exchange: the first message is an answer
    tail = [AIMessage("Ok."), HumanMessage("Day 8."), AIMessage("Fine.")]
    assert [r.added for r in memory.add_messages(tail, user_id="u", thread_id="t")] == [False, True]
    assert len(thread_texts(memory)) == 9
    assert memory.check(user_id="u") == []


def test_a_new_exchange_alone_and_other_threads(make_memory: MakeMemory) -> None:
    memory = make_memory()
    memory.add_messages(history(2), user_id="u", thread_id="t")
    assert [r.added for r in memory.add_messages(exchange(5), user_id="u", thread_id="t")] == [True]
    assert [r.added for r in memory.add_messages(history(2), user_id="u", thread_id="other")] == [True, True]
    assert len(thread_texts(memory)) == 3 and len(thread_texts(memory, thread="other")) == 2


def test_async_resend_and_two_threads_resending_at_once(make_memory: MakeMemory) -> None:
    memory = make_memory()
    asyncio.run(memory.aadd_messages(history(2), user_id="u", thread_id="t"))
    reports = asyncio.run(memory.aadd_messages(history(4), user_id="u", thread_id="t"))
    assert [r.added for r in reports] == [False, False, True, True]
    barrier, errors = threading.Barrier(2), []

    def resend() -> None:
        try:
            barrier.wait(timeout=30)
            memory.add_messages(history(6), user_id="u", thread_id="t")
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=resend) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not errors
    assert thread_texts(memory) == [f"Day {i}: I walked {i} km along the river." for i in range(6)]
    assert memory.check(user_id="u") == []


def test_message_ids_keep_their_own_idempotency(make_memory: MakeMemory) -> None:
    memory = make_memory()
    msgs = [HumanMessage("Thanks!", id="h1"), AIMessage("You're welcome.", id="a1")]
    memory.add_messages(msgs, user_id="u", thread_id="t")
    again = [*msgs, HumanMessage("Thanks!", id="h2"), AIMessage("You're welcome.", id="a2")]
    # with ids, a repeated exchange is a turn of its own
    assert [r.added for r in memory.add_messages(again, user_id="u", thread_id="t")] == [False, True]


def test_the_fact_id_the_context_shows_is_the_id_every_method_takes(make_memory: MakeMemory) -> None:
    memory = make_memory()
    stored = memory.add_fact("I'm allergic to peanuts.", user_id="u")[0].record.id
    shown = memory.retrieve("What am I allergic to?", user_id="u").to_prompt()
    ref = shown.split("[", 1)[1].split("]", 1)[0]  # the id as the context shows it, e.g. f:1
    assert ref.startswith("f:") and ref != stored
    assert memory.get_fact(ref, user_id="u").fact.id == stored
    assert memory.get_fact(f"[{ref}]", user_id="u").fact.id == stored
    assert memory.update_fact(ref, "The user is allergic to peanuts and cashews.", user_id="u").action == "edited"
    assert memory.delete_fact(ref, user_id="u").action == "deleted"
    assert memory.list_facts(user_id="u") == []


def test_the_export_shows_the_ids_the_context_and_tools_show(make_memory: MakeMemory) -> None:
    from langchain_memoryos.graph import create_search_memory_tool

    memory = make_memory(MemoryOSConfig(stm_capacity=1))
    memory.add_turn("I keep bees on my roof.", "Lovely.", user_id="u", thread_id="t")
    memory.add_turn("I play the cello.", "Nice.", user_id="u", thread_id="t")  # the bees page leaves STM
    memory.add_fact("I'm allergic to peanuts.", user_id="u")
    shown = memory.retrieve("What am I allergic to?", user_id="u", thread_id="other").to_prompt()
    data = memory.export_user(user_id="u")
    refs = {row["ref"]: row for row in data["items"] if "ref" in row}
    facts = [ref for ref, row in refs.items() if row["namespace"][0] == "facts"]
    pages = [ref for ref, row in refs.items() if row["namespace"][0] in ("pages", "stm")]
    assert facts and all(ref.startswith("f:") for ref in facts) and any(f"[{ref}]" in shown for ref in facts)
    assert len(pages) == 2 and all(ref.startswith("p:") for ref in pages)
    config: RunnableConfig = {"configurable": {"user_id": "u", "thread_id": "other"}}
    tool_text = create_search_memory_tool(memory).invoke({"query": "bees on my roof"}, config)
    assert any(f"[{ref}]" in tool_text for ref in pages)  # the search tool shows a page by the same id
    for ref in facts:
        assert memory.get_fact(ref, user_id="u").fact.id == refs[ref]["key"]
    bees = next(ref for ref in pages if "bees" in refs[ref]["value"]["user_input"])
    assert memory.forget(user_id="u", page_id=bees, dry_run=True).pages == [refs[bees]["key"]]
    memory.delete_user(user_id="u")
    memory.import_user(data)  # the refs are shown, not imported: the export imports as before
    assert memory.export_user(user_id="u") == data
