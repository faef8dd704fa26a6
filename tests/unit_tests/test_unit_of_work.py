"""A model call never holds the user's lock: writes judge on a private copy and commit under the lock."""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
from typing import Any

from langgraph.store.memory import InMemoryStore

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.kernel.effects import Services, run_sync
from langchain_memoryos.kernel.judgements import ParseRecords
from langchain_memoryos.store.repository import MemoryRepository, UserState
from langchain_memoryos.store.unit_of_work import MAX_ATTEMPTS, write_user
from tests.scripted_model import ScriptedToolModel, page_answer

T0 = dt.datetime(2024, 5, 1, 9, tzinfo=dt.UTC)


class Gate:
    """A model answer that waits until the test opens the gate."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.entered, self.go = threading.Event(), threading.Event()
        self.answer = answer

    def __call__(self, messages: Any) -> dict[str, Any]:
        self.entered.set()
        assert self.go.wait(20), "the test never opened the gate"
        return self.answer


def _gated_memory() -> tuple[MemoryOS, ScriptedToolModel, Gate]:
    gate = Gate(page_answer("The user moved to Bergen."))  # the second page's analysis waits at the gate
    model = ScriptedToolModel(
        script={"PageAnalysisOutput": [page_answer("The user plays the cello."), gate, page_answer()]}
    )
    memory = MemoryOS(model=model, config=MemoryOSConfig(stm_capacity=1))
    memory.add_turn("I play the cello.", "Lovely.", user_id="u", thread_id="t", timestamp=T0)
    return memory, model, gate


def test_a_read_and_a_write_of_the_same_user_never_wait_for_a_writers_model_call() -> None:
    memory, model, gate = _gated_memory()
    writer = threading.Thread(
        target=memory.add_turn,
        args=("I moved to Bergen.", "Exciting!"),
        kwargs={"user_id": "u", "thread_id": "t", "timestamp": T0 + dt.timedelta(minutes=1)},
    )
    writer.start()
    assert gate.entered.wait(20)  # the writer waits for the model (analysis of the page it adds)
    done: dict[str, Any] = {}

    def read_and_write() -> None:
        done["ctx"] = memory.retrieve("cello?", user_id="u", thread_id="t")
        done["report"] = memory.add_turn("Other thread.", "Ok.", user_id="u", thread_id="t2", timestamp=T0)

    other = threading.Thread(target=read_and_write)
    other.start()
    other.join(20)
    try:
        assert not other.is_alive(), "a read or write of the user waited for another writer's model call"
        assert writer.is_alive() and not gate.go.is_set()  # ... which is still waiting
        assert "cello" in done["ctx"].to_prompt() and done["report"].added
    finally:
        gate.go.set()
        writer.join(20)
    assert not writer.is_alive()
    # one call per page added; the writer found the user moved at commit and ran again on the new state,
    # reusing the model's answer (no fourth call)
    assert model.count("PageAnalysisOutput") == 3
    assert [p.user_input for p in memory.get_stm(user_id="u", thread_id="t")] == ["I moved to Bergen."]
    assert [p.user_input for p in memory.get_stm(user_id="u", thread_id="t2")] == ["Other thread."]
    assert [p.user_input for p in memory.list_pages(user_id="u")] == ["I play the cello."]
    assert memory.check(user_id="u") == []


def test_async_a_read_does_not_wait_for_a_writers_model_call() -> None:
    memory, model, gate = _gated_memory()

    async def main() -> str:
        write = asyncio.create_task(
            memory.aadd_turn(
                "I moved to Bergen.", "Exciting!", user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(1)
            )
        )
        while not gate.entered.is_set():
            await asyncio.sleep(0.01)
        ctx = await asyncio.wait_for(memory.aretrieve("cello?", user_id="u", thread_id="t"), 20)
        assert not write.done()  # the read went through while the writer still waits for the model
        gate.go.set()
        await asyncio.wait_for(write, 20)
        return ctx.to_prompt()

    try:
        assert "cello" in asyncio.run(main())
    finally:
        gate.go.set()
    assert [p.user_input for p in memory.get_stm(user_id="u", thread_id="t")] == ["I moved to Bergen."]
    assert memory.check(user_id="u") == []


def test_the_offline_default_keeps_the_whole_turn_under_the_lock() -> None:
    memory = MemoryOS()
    assert memory._local and not memory._services.offline is None  # noqa: E714
    memory.add_turn("I play the cello.", "Lovely.", user_id="u", timestamp=T0)
    cached = memory.repository.cached("u")
    memory.add_turn("I live in Oslo.", "Nice.", user_id="u", timestamp=T0 + dt.timedelta(minutes=1))
    assert memory.repository.cached("u") is cached  # no private copy: written in place


class _Judge:
    """A controller whose every judgement is counted (``calls``) and answered with the method's name."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def parse_records(self, text: str, kind: str) -> str:
        self.calls.append(text)
        return f"model:{text}"


class _Offline:
    def parse_records(self, text: str, kind: str) -> str:
        return f"offline:{text}"


def test_a_write_that_keeps_losing_the_race_runs_under_the_lock_with_the_offline_controller() -> None:
    repo = MemoryRepository(2)
    model = _Judge()
    services = Services(InMemoryStore(), None, model, offline=_Offline(), lease=repo.lease)  # type: ignore[arg-type]
    runs: list[bool] = []

    def work(state: UserState) -> Any:
        forked = state is not repo.cached("u")
        runs.append(forked)
        first = yield ParseRecords("a", "user")
        second = yield ParseRecords(f"b{len(runs)}", "user")  # a request that differs in every run
        if forked:  # another writer commits meanwhile: this run's copy is stale at commit
            other = repo.cached("u")
            assert other is not None
            other.advance_clock(f"2024-01-0{len(runs)}")
            other.take_ops()
        state.meta["seen"] = [first, second]
        state.save_meta()
        return first, second

    result = run_sync(write_user(repo, "u", work, optimistic=True), services)
    assert runs == [True] * MAX_ATTEMPTS + [False]  # then once under the lock, on the cached state
    assert model.calls == ["a"] + [f"b{i}" for i in range(1, MAX_ATTEMPTS + 1)]  # "a" asked once, then reused
    assert result == ("model:a", f"offline:b{MAX_ATTEMPTS + 1}")  # the unanswered request: decided offline
    assert repo.cached("u").meta["seen"] == list(result)  # type: ignore[union-attr]
