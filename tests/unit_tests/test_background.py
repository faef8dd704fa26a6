"""write_mode="background": per-user ordered queues, users in parallel, reads see queued writes, nothing lost."""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
import time
from typing import Any

import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.background import BackgroundWriteError
from langchain_memoryos.controllers import HeuristicController

T0 = dt.datetime(2024, 8, 1, 9, tzinfo=dt.UTC)


class SlowController(HeuristicController):
    """The heuristic judgements, each page analysis taking a while; records the most in flight at once."""

    def __init__(self, delay: float = 0.03, fail_on: str = "", meet: int = 0) -> None:
        super().__init__()
        self.delay, self.fail_on = delay, fail_on
        self.active = self.peak = 0
        self.lock = threading.Lock()
        # the first analyses of `meet` writers wait for each other: writers that run in parallel meet (on a
        # loaded machine too); writers run one after another never do (the barrier breaks after 10 s)
        self.meet = threading.Barrier(meet, timeout=10) if meet else None

    def analyze_page(self, page: Any, previous: Any, similarity: Any) -> Any:  # type: ignore[override]
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            if self.meet is not None and not self.meet.broken:
                try:
                    self.meet.wait()
                except threading.BrokenBarrierError:
                    pass
                self.meet = None
            time.sleep(self.delay)
            if self.fail_on and self.fail_on in page.user_input:
                self.fail_on = ""  # a transient failure: once
                raise RuntimeError("disk on fire")
            return super().analyze_page(page, previous, similarity)
        finally:
            with self.lock:
                self.active -= 1


def _turn(memory: MemoryOS, user: str, i: int, text: str | None = None) -> Any:
    return memory.add_turn(
        text or f"Turn {i} of {user}.",
        "ok",
        user_id=user,
        thread_id="t",
        timestamp=T0 + dt.timedelta(minutes=i),
        turn_id=f"{user}-{i}",
    )


def _all_pages(memory: MemoryOS, user: str) -> list[Any]:
    return sorted(
        memory.list_pages(user_id=user) + memory.get_stm(user_id=user, thread_id="t"), key=lambda p: p.timestamp
    )


def test_turns_of_a_user_are_written_in_order_and_users_in_parallel() -> None:
    controller = SlowController(meet=2)
    memory = MemoryOS(controller=controller, config=MemoryOSConfig(stm_capacity=1), write_mode="background")
    reports = [_turn(memory, user, i) for i in range(6) for user in ("ana", "ben")]
    assert all(r.queued for r in reports)
    memory.flush()
    for user in ("ana", "ben"):
        pages = _all_pages(memory, user)
        assert [p.user_input for p in pages] == [f"Turn {i} of {user}." for i in range(6)]
    assert controller.peak == 2  # the two users' queues ran at the same time
    memory.close()


def test_a_read_waits_for_the_users_queued_turns() -> None:
    memory = MemoryOS(controller=SlowController(), config=MemoryOSConfig(stm_capacity=1), write_mode="background")
    for i, text in enumerate(["I play the cello.", "ok", "fine"]):
        _turn(memory, "ana", i, text)
    ctx = memory.retrieve("What instrument do I play?", user_id="ana", thread_id="other")  # no flush needed
    assert "cello" in ctx.to_prompt()
    assert memory.stats(user_id="ana").mtm_pages + memory.stats(user_id="ana").stm_pages == 3
    memory.close()


def test_a_failed_write_is_reported_by_flush_and_the_queue_goes_on() -> None:
    memory = MemoryOS(
        controller=SlowController(delay=0, fail_on="BOOM"),
        config=MemoryOSConfig(stm_capacity=1),
        write_mode="background",
    )
    for i, text in enumerate(["first", "BOOM here", "third", "fourth"]):
        _turn(memory, "ana", i, text)
    with pytest.raises(BackgroundWriteError, match="disk on fire") as err:
        memory.flush()
    assert err.value.failures[0][0] == "ana"
    memory.flush()  # reported once
    # the failed write was the turn that added "BOOM here" (its page is analysed as it is added); it is
    # not stored, and the queue went on: "third" and "fourth" are stored
    assert [p.user_input for p in _all_pages(memory, "ana")] == ["first", "third", "fourth"]
    memory.close()


def test_close_drains_the_queue() -> None:
    memory = MemoryOS(controller=SlowController(), write_mode="background")
    store = memory.store
    for i in range(8):
        _turn(memory, "ana", i)
    memory.close()
    again = MemoryOS(store)
    assert len(_all_pages(again, "ana")) == 8
    with pytest.raises(RuntimeError, match="closed"):
        _turn(memory, "ana", 99)


def test_a_servers_lifespan_stores_the_queued_turns_and_closes_the_store(tmp_path: Any) -> None:
    memory = MemoryOS.from_sqlite(tmp_path / "memory.db", controller=SlowController(), write_mode="background")

    async def serve(app: object) -> None:  # as Starlette and FastAPI run ``lifespan=memory.lifespan``
        async with memory.lifespan(app) as m:
            assert m is memory
            for i in range(8):
                await m.aadd_turn(
                    f"turn {i}", "ok", user_id="ana", thread_id="t", timestamp=T0 + dt.timedelta(minutes=i)
                )

    asyncio.run(serve(object()))
    with pytest.raises(RuntimeError, match="closed"):
        _turn(memory, "ana", 99)
    with MemoryOS.from_sqlite(tmp_path / "memory.db") as again:
        assert [p.user_input for p in _all_pages(again, "ana")] == [f"turn {i}" for i in range(8)]


def test_async_add_turn_and_aflush() -> None:
    memory = MemoryOS(write_mode="background")

    async def main() -> None:
        for i in range(3):
            report = await memory.aadd_turn(
                f"async turn {i}", "ok", user_id="zoe", thread_id="t", timestamp=T0 + dt.timedelta(minutes=i)
            )
            assert report.queued
        await memory.aflush()

    asyncio.run(main())
    assert [p.user_input for p in memory.get_stm(user_id="zoe", thread_id="t")] == [f"async turn {i}" for i in range(3)]
    memory.close()


def test_bad_input_fails_before_queueing_and_bad_mode_is_rejected() -> None:
    memory = MemoryOS(write_mode="background")
    with pytest.raises(ValueError, match="empty turn"):
        memory.add_turn("", "", user_id="u")
    with pytest.raises(ValueError, match="write_mode"):
        MemoryOS(write_mode="later")
    memory.close()
