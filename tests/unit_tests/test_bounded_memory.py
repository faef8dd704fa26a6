"""Memory without bound: the loaded users, the lock tables, event loops and huge messages.

The loaded users are an LRU bounded by their estimated size (``MemoryOSConfig.max_cache_bytes``); the lock
tables keep no entry nobody holds; a closed event loop is collectable; a side of a turn over
``max_message_chars`` is refused by ``add_turn`` and stored cut by the agent middleware.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.graph import MemoryOSMiddleware
from tests.conftest import at
from tests.scripted_model import replying

USERS = 120


def test_the_loaded_users_stay_within_max_cache_bytes_and_the_dropped_reload(tmp_path: Path) -> None:
    budget = 600_000  # about 28 one-turn users
    memory = MemoryOS.from_sqlite(tmp_path / "m.db", config=MemoryOSConfig(max_cache_bytes=budget))
    try:
        for n in range(USERS):
            memory.add_turn(f"I am user {n} and I keep {n} bees.", "Lovely.", user_id=f"u{n}", timestamp=at(0, n))
        cache = memory.repository.cache
        assert 0 < len(cache.states) < USERS // 2  # most users were dropped
        assert cache.states.bytes <= budget
        assert len(cache.locks) == 0  # no lock entry is left for a user nobody writes
        assert "u0" not in cache.states
        # a dropped user is loaded again from the store, whole
        assert [p.user_input for p in memory.get_stm(user_id="u0")] == ["I am user 0 and I keep 0 bees."]
        assert "u0" in cache.states and cache.states.bytes <= budget
        assert memory.check(user_id="u0") == []
    finally:
        memory.close()


def test_an_in_memory_store_keeps_every_user_written_under_the_bound() -> None:
    """InMemoryStore: a dropped user is rebuilt from the store's records, the same as it was."""
    memory = MemoryOS(config=MemoryOSConfig(max_cache_bytes=600_000, stm_capacity=2))
    for n in range(40):
        for i in range(3):
            memory.add_turn(f"User {n} turn {i} about kayaks.", "Nice.", user_id=f"u{n}", timestamp=at(0, i))
    assert len(memory.repository.cache.states) < 40
    for n in (0, 17, 39):
        assert [p.user_input for p in memory.get_stm(user_id=f"u{n}")] == [
            f"User {n} turn 1 about kayaks.",
            f"User {n} turn 2 about kayaks.",
        ]
        assert [p.user_input for p in memory.list_pages(user_id=f"u{n}")] == [f"User {n} turn 0 about kayaks."]
        assert memory.check(user_id=f"u{n}") == []


def test_the_size_estimate_grows_with_the_user() -> None:
    memory = MemoryOS()
    states = memory.repository.cache.states
    memory.add_turn("A short one.", "Ok.", user_id="u")
    small = states.bytes
    for i in range(30):
        memory.add_turn(f"Turn {i}: " + "a longer story about my garden " * 20, "Ok.", user_id="u", timestamp=at(0, i))
    memory.get_stm(user_id="u")
    assert states.bytes > 20 * small  # 30 pages of 600 characters: far more than one short page


def test_closed_event_loops_are_collectable(tmp_path: Path) -> None:
    memory = MemoryOS.from_sqlite(tmp_path / "m.db")
    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []

    async def request(i: int) -> None:
        loops.append(weakref.ref(asyncio.get_running_loop()))
        # three writes of one user at once: they wait for each other's asyncio lock
        await asyncio.gather(*(memory.aadd_turn(f"Turn {i}.{j}.", "Ok.", user_id="u") for j in range(3)))
        await memory.aretrieve("turn", user_id="u")

    try:
        for i in range(12):
            asyncio.run(request(i))  # a new event loop per request, as some servers and scripts do
        gc.collect()
        assert [ref for ref in loops if ref() is not None] == []
        assert len(memory.repository.cache.locks) == 0
        assert memory.check(user_id="u") == []
    finally:
        memory.close()


def test_add_turn_refuses_a_message_over_max_message_chars() -> None:
    memory = MemoryOS()
    huge = "I collect maps. " * 7_000  # 112,000 characters
    with pytest.raises(ValueError, match=r"112,000 characters, more than max_message_chars=100,000"):
        memory.add_turn(huge, "Nice.", user_id="u")
    with pytest.raises(ValueError, match=r"agent_response .*max_message_chars=100,000.*MemoryOSConfig"):
        memory.add_turn("Tell me a story.", huge, user_id="u")
    with pytest.raises(ValueError, match=r"turns\[1\]: user_input .*max_message_chars"):
        memory.add_turns([("Hi.", "Hello."), (huge, "Nice.")], user_id="u")
    assert memory.get_stm(user_id="u") == []  # nothing was written
    roomy = MemoryOS(config=MemoryOSConfig(max_message_chars=200_000))
    roomy.add_turn(huge, "Nice.", user_id="u")
    assert roomy.get_stm(user_id="u")[0].user_input == huge


@dataclass
class Ctx:
    user_id: str


def test_the_middleware_stores_a_huge_message_cut_and_the_run_survives() -> None:
    memory = MemoryOS(config=MemoryOSConfig(max_message_chars=5_000))
    model = replying("What a long letter.")
    agent: Any = create_agent(
        model, middleware=[MemoryOSMiddleware(memory)], context_schema=Ctx, checkpointer=InMemorySaver()
    )
    letter = "Dear diary, today I walked to the harbour. " * 400  # 17,200 characters
    out = agent.invoke(
        {"messages": [HumanMessage(letter)]}, {"configurable": {"thread_id": "t"}}, context=Ctx(user_id="ana")
    )
    assert out["messages"][-1].content == "What a long letter."
    (page,) = memory.get_stm(user_id="ana", thread_id="t")
    assert len(page.user_input) <= 5_000 and page.user_input.startswith("Dear diary, today I walked")
    assert page.user_input.endswith("characters cut: max_message_chars=5000]")
    assert page.agent_response == "What a long letter."
