"""STM, the short-term tier: a thread's FIFO of dialogue pages; overflow and idle threads' pages leave for MTM."""

from __future__ import annotations

import datetime as _dt
import logging

from langchain_memoryos.amu.forgetting import apply_forget, forgotten_page, plan_forget, turn_digest
from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.index.vector_index import Vector
from langchain_memoryos.kernel.effects import Step
from langchain_memoryos.schema import DialoguePage
from langchain_memoryos.store.repository import UserState
from langchain_memoryos.store.settings import EngineSettings, StageContext
from langchain_memoryos.tiers.turn import TurnWrite, embed_turn, open_turn, turn_page

__all__ = ["idle_horizon", "idle_thread_pages", "previous_page", "stage_stm_append"]

logger = logging.getLogger("langchain_memoryos")


def stage_stm_append(ctx: StageContext, t: TurnWrite) -> Step[None]:
    """``stm_append``: the page joins its thread's STM; overflow and idle threads' pages queue for MTM.

    The page goes on to ``chain_link``, its analysis, now: its facts are
    written with the turn, not when it leaves STM. Re-adding the same turn
    (same ``turn_id``, or same thread, timestamp and text) changes nothing
    (``report.added`` is ``False``); so does re-adding a turn the user had
    forgotten (its tombstone, :mod:`~langchain_memoryos.amu.forgetting`).
    """
    repo, settings = ctx.repo, ctx.settings
    config = settings.config
    page = turn_page(t)
    state = t.state if t.state is not None else (yield from open_turn(repo, t))
    stm = yield from repo.load_thread(state, t.thread_id)
    t.report.page_id = page.id
    if page.id in state.pages or any(p.id == page.id for p in stm) or forgotten_page(state, page.id):
        t.report.added = False
        t.next = "done"
        return
    if t.forget:  # the turn asks to forget: done first, in the turn's batch (its own text is already cut)
        if t.said is not None:  # a resend of the turn as it was said is known by this
            page.metadata["_digest"] = list(turn_digest(state, *t.said))
        plan = plan_forget(state, query=t.forget)
        if not plan.empty():
            now = state.clock or page.timestamp
            t.report.events.extend(
                (yield from apply_forget(repo, state, plan, now=now, max_chars=config.max_embedding_chars))
            )
    if t.vector is None:
        yield from embed_turn(settings, t)
    vector = t.vector
    assert vector is not None
    t.previous = previous_page(state, t.thread_id)
    state.stm_append(page, vector)
    state.advance_clock(page.timestamp)
    while len(state.stm[t.thread_id]) > config.stm_capacity:
        t.moving.append(state.stm_pop_oldest(t.thread_id))
    t.moving.extend(idle_thread_pages(state, settings, current=t.thread_id))
    t.next = "chain_link"


def previous_page(state: UserState, thread_id: str) -> tuple[DialoguePage, Vector | None] | None:
    """The thread's newest page and its vector: its newest STM page, else the last page that left its STM.

    What a page added to the thread now is chain-linked against (``None``: the
    thread's first page, or its previous page is gone).

    Example:
        >>> import numpy as np
        >>> s = UserState(user_id="u", label="u", dimension=2)
        >>> previous_page(s, "t") is None
        True
        >>> s.stm_append(DialoguePage(id="p1", user_input="hi", agent_response="", thread_id="t"),
        ...              np.ones(2, dtype=np.float32))
        >>> previous_page(s, "t")[0].id
        'p1'
    """
    stm = state.stm.get(thread_id)
    if stm:
        return stm[-1], state.stm_vectors[stm[-1].id]
    tail = state.pages.get(state.chain_tail(thread_id) or "")
    if tail is None:
        return None
    return tail, state.page_index.get(tail.id) if tail.id in state.page_index else None


def idle_thread_pages(
    state: UserState, settings: EngineSettings, *, current: str, now: _dt.datetime | None = None
) -> list[tuple[DialoguePage, Vector]]:
    """The STM pages of the user's idle threads, popped oldest first (``stm_idle_seconds``).

    A thread is idle when its newest page is older than ``stm_idle_seconds``
    at :func:`idle_horizon`. The current thread is never flushed.
    """
    idle = settings.config.stm_idle_seconds
    horizon = idle_horizon(state.clock, settings.config, now)
    out: list[tuple[DialoguePage, Vector]] = []
    if idle is None or horizon is None:
        return out
    for thread, pages in list(state.stm.items()):
        if thread == current or not pages:
            continue
        newest = max(p.timestamp for p in pages)
        if (horizon - newest).total_seconds() <= idle:
            continue
        while state.stm[thread]:
            out.append(state.stm_pop_oldest(thread))
    return out


def idle_horizon(
    clock: _dt.datetime | None, config: MemoryOSConfig, now: _dt.datetime | None = None
) -> _dt.datetime | None:
    """The time at which threads' idleness is judged: the conversation clock, capped at the wall clock.

    The conversation clock is the user's latest timestamp, so a turn dated
    ahead of the wall clock (allowed up to ``max_clock_skew_seconds``: a fast
    client clock, a local time passed as UTC) would otherwise make another
    thread look idle and flush its STM. Capped at the wall clock, only a
    real gap does: replayed or imported conversations dated in the past are
    judged on their own clock as before. With ``max_clock_skew_seconds=None``
    (no wall-clock check) the conversation clock alone decides.

    Args:
        clock: the user's conversation clock (``None``: no turn yet).
        config: ``max_clock_skew_seconds`` decides whether the cap applies.
        now: the wall clock (default: this machine's).

    Returns:
        The horizon, or ``None`` without a clock.

    Example:
        >>> import datetime as dt
        >>> now = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
        >>> idle_horizon(now + dt.timedelta(hours=20), MemoryOSConfig(), now) == now
        True
        >>> idle_horizon(now + dt.timedelta(hours=20), MemoryOSConfig(max_clock_skew_seconds=None), now).hour
        20
    """
    if clock is None or config.max_clock_skew_seconds is None:
        return clock
    wall = now if now is not None else _dt.datetime.now(_dt.UTC)
    return min(clock, wall)
