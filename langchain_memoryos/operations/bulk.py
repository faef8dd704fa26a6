"""``MemoryOS.add_turns``: many turns of one user, stored as the same turns added one by one, in far less time.

Every turn is checked first (nothing is written when one is invalid). Then,
window by window, the turns' pages are embedded in one encoder batch, every
page is read ahead (keywords and facts, written as each turn is added; a
pure function of each page:
:meth:`~langchain_memoryos.controllers.heuristic.HeuristicController.page_content`)
— in a helper process on a second core, the read-ahead of
:mod:`~langchain_memoryos.operations.reader` — and their facts' summaries
are embedded in one batch too. Then the turns run through the write stages
one by one, exactly as ``add_turn`` runs them
(:func:`~langchain_memoryos.pipeline.write.run_turn`), each with its page's
reading (as ``add_turn``'s) and the embeddings answered from what was
computed ahead: the same pages,
segments, facts and write events as ``add_turn`` turn by turn (the encoder
gives a text its row alone in any batch, up to how the BLAS rounds a product
of many rows: equal to the bit on some CPUs, a few float32 ulps apart on
others). A window's turns are written under one lease of the user and
stored in one store batch (:func:`_write_window`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Any

from langchain_memoryos.amu import admitted_summaries
from langchain_memoryos.controllers.heuristic import HeuristicController
from langchain_memoryos.errors import InvalidInputError, InvalidTypeError
from langchain_memoryos.index.vector_index import Vector
from langchain_memoryos.kernel.effects import Embed, Lock, Services, Step, Wait, run_async, run_sync
from langchain_memoryos.operations import reader
from langchain_memoryos.operations.helper import Helper, HelperError
from langchain_memoryos.operations.reader import PageRead
from langchain_memoryos.operations.replay import AlignedTurns
from langchain_memoryos.operations.runtime import Runtime
from langchain_memoryos.operations.turns import message_turns, turn_input
from langchain_memoryos.operations.validation import check_user
from langchain_memoryos.pipeline.write import run_turn
from langchain_memoryos.schema import DialoguePage, WriteReport
from langchain_memoryos.store.repository import flush
from langchain_memoryos.store.settings import embedding_text
from langchain_memoryos.tiers.turn import TurnWrite, turn_page

__all__ = ["TURN_KEYS", "WriteTurns", "add_messages", "add_turns", "turn_fields"]

#: The keys of a turn given as a dict (``add_turn``'s arguments).
TURN_KEYS = ("user_input", "agent_response", "thread_id", "timestamp", "metadata", "turn_id")
#: Turns embedded, analysed and written per window (the worker analyses the next windows meanwhile).
WINDOW = 128
#: Forward passes of the encoder at once in a bulk write (one per core, up to two).
THREADS = max(1, min(2, os.cpu_count() or 1))
#: Fewer pages to analyse than this: analysed in this process (a worker's round trip would cost more).
MIN_PARALLEL_PAGES = 24

#: How long a window waits for the worker's analyses (plus a second per page) before doing them itself (and
#: stopping the worker for good): a bulk write never waits for ever on it.
WORKER_TIMEOUT_SECONDS = 30.0
WORKER_SECONDS_PER_PAGE = 1.0


def turn_fields(item: Any, index: int = 0) -> dict[str, Any]:
    """``add_turn``'s arguments of one item of ``add_turns``: a pair, a dict, or a lone user input.

    Raises:
        ValueError: a dict with other keys than :data:`TURN_KEYS`, a sequence that is not a pair.

    Example:
        >>> turn_fields(("I moved to Oslo.", "Nice!"))
        {'user_input': 'I moved to Oslo.', 'agent_response': 'Nice!'}
        >>> turn_fields({"user_input": "Hi", "turn_id": "t1"})
        {'user_input': 'Hi', 'turn_id': 't1'}
        >>> turn_fields("Hi")
        {'user_input': 'Hi'}
        >>> turn_fields({"user": "Hi"}, 3)
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: turns[3] has unknown keys ['user']; a turn's keys are \
user_input, agent_response, thread_id, \
timestamp, metadata, turn_id.
    """
    if isinstance(item, Mapping):
        unknown = sorted(str(k) for k in item if k not in TURN_KEYS)
        if unknown:
            raise InvalidInputError(
                f"turns[{index}] has unknown keys {unknown}; a turn's keys are {', '.join(TURN_KEYS)}."
            )
        return dict(item)
    if isinstance(item, tuple | list):
        if len(item) != 2:
            raise InvalidInputError(
                f"turns[{index}] is a sequence of {len(item)} items; give (user_input, agent_response) pairs "
                "or dicts with the keys of add_turn."
            )
        return {"user_input": item[0], "agent_response": item[1]}
    return {"user_input": item}


def _checked(runtime: Runtime, turns: Iterable[Any], user_id: Any, thread_id: Any) -> tuple[TurnWrite, ...]:
    """Every turn checked as ``add_turn`` checks it (nothing is written when one is invalid)."""
    if isinstance(turns, str | bytes | Mapping) or not isinstance(turns, Iterable):
        raise InvalidTypeError(
            "turns must be an iterable of turns: (user_input, agent_response) pairs, dicts with the keys of "
            f"add_turn ({', '.join(TURN_KEYS)}) or user inputs, got {type(turns).__name__}."
        )
    out: list[TurnWrite] = []
    for i, item in enumerate(turns):
        f = turn_fields(item, i)
        try:
            out.append(
                turn_input(
                    runtime,
                    f.get("user_input", ""),
                    f.get("agent_response", ""),
                    user_id,
                    f.get("thread_id", thread_id),
                    f.get("timestamp"),
                    f.get("metadata"),
                    f.get("turn_id"),
                )
            )
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"turns[{i}]: {exc}") from exc
    return tuple(out)


# -- the pages read ahead -------------------------------------------------------
def _analyser(services: Services) -> HeuristicController | None:
    """The controller whose page analysis can be computed ahead: the offline one, unless redefined."""
    c = services.controller
    if isinstance(c, HeuristicController) and type(c).page_content is HeuristicController.page_content:
        return c
    return None


@dataclass
class _Plan:
    """One call's turns, cut into windows, and what is computed ahead for them."""

    windows: list[tuple[TurnWrite, ...]]
    ahead: list[list[DialoguePage]]
    vectors: dict[str, Vector]
    analyser: HeuristicController | None
    jobs: list[Future[list[PageRead]] | None]
    parallel: bool = False
    pool: Helper | None = None


def _plan(runtime: Runtime, turns: tuple[TurnWrite, ...]) -> _Plan:
    analyser = _analyser(runtime.services)
    windows = [turns[i : i + WINDOW] for i in range(0, len(turns), WINDOW)]
    # every page is analysed as its turn is added (its facts are written with it)
    ahead = [[turn_page(t) for t in window] if analyser is not None else [] for window in windows]
    jobs: list[Future[list[PageRead]] | None] = [None] * len(windows)
    parallel = analyser is not None and sum(map(len, ahead)) >= MIN_PARALLEL_PAGES
    plan = _Plan(windows, ahead, {}, analyser, jobs, parallel)
    _analyse_ahead(plan, 0)
    return plan


def _analyse_ahead(plan: _Plan, w: int) -> None:
    """Give window ``w``'s pages to the analyser process (the first window's at once).

    Each next window's pages go while the window before it is written: the
    process then uses the core the writing leaves idle, not one the encoder needs.
    """
    if not plan.parallel or w >= len(plan.windows) or not plan.ahead[w] or plan.analyser is None:
        return
    plan.pool = reader.analyser()
    if plan.pool is None:
        return
    plan.jobs[w] = reader.submit_pages(plan.pool, plan.analyser.page_keywords, plan.ahead[w])  # None: read here


def _write_turns(runtime: Runtime, plan: _Plan) -> Step[None]:
    """Step: window by window, embed the pages, get their analyses and embed their facts, then write each turn."""
    settings = runtime.settings
    max_chars = settings.config.max_embedding_chars
    threshold = settings.amu.gate_threshold
    for w, (window, pages) in enumerate(zip(plan.windows, plan.ahead, strict=True)):
        texts = tuple(embedding_text(turn_page(t).embedding_text, max_chars) for t in window)
        rows = yield Embed(texts, threads=THREADS)  # the window's pages in batches, outside the user's lock
        for t, row in zip(window, rows, strict=True):
            t.vector = row
        job = plan.jobs[w]
        if plan.analyser is not None and pages:
            found: list[PageRead] | None = None
            if job is not None:
                try:
                    found = yield Wait(job, timeout=WORKER_TIMEOUT_SECONDS + WORKER_SECONDS_PER_PAGE * len(pages))
                except HelperError:  # the worker raised or stopped (logged): read here (same function, same result)
                    pass
                except Exception:  # noqa: BLE001 - the worker hung: read here, and stop it
                    if plan.pool is not None:
                        plan.pool.stop("did not answer in time")
            read = reader.contents(plan.analyser, pages, found)
            for t, page, content in zip(window, pages, read, strict=True):
                t.reading = plan.analyser.read_ahead(page, content)  # as add_turn's: chain_link uses it
            admitted = admitted_summaries([r for c in read for r in c.records], threshold)
            summaries = tuple(s for s in admitted if s not in plan.vectors)
            if summaries:  # one encoder batch for the facts of the window's pages
                plan.vectors.update(zip(summaries, (yield Embed(summaries, threads=THREADS)), strict=True))
        _analyse_ahead(plan, w + 1)
        yield from _write_window(runtime, window)


def _write_window(runtime: Runtime, window: tuple[TurnWrite, ...]) -> Step[None]:
    """Step: a window's turns through the write stages, under one lease of the user, stored in one batch.

    Each turn runs exactly as ``add_turn`` runs it, but its writes stay
    buffered (:attr:`~langchain_memoryos.tiers.turn.TurnWrite.held`) until
    the window's last turn: the store gets one transaction per window, and a
    row that several turns rewrite (a segment, the STM) is written once. A
    failure drops the user's cached state and stores nothing of the window
    (the windows before it are stored; adding the same turns again stores
    each turn once). Turns that may call a model work on private copies and
    commit their own writes, as ``add_turn``'s do (their window is not held).
    """
    if any(t.optimistic for t in window):
        for t in window:
            try:
                yield from run_turn(runtime.repository, runtime.settings, t)
            finally:
                if t.lease is not None:
                    t.lease.release()
        return
    with (yield Lock(window[0].user_id)) as lease:  # a failure drops the user's cached state (UserLease)
        for t in window:
            t.lease, t.held = lease, True
            yield from run_turn(runtime.repository, runtime.settings, t)
        yield from flush(window[-1].user)


def _services(runtime: Runtime, plan: _Plan) -> Services:
    """The memory's services, answering embeddings from what the call computed ahead."""
    return replace(runtime.services, vectors=plan.vectors)


@dataclass(frozen=True)
class WriteTurns:
    """Store many turns of one user (checked when built), as ``add_turn`` would one by one, in batches.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> op = add_turns(memory._runtime, [("I moved to Oslo.", "Nice!"), ("I'm a nurse.", "Cool.")], "u", "t")
        >>> [r.added for r in op.run(memory._runtime)], len(memory.get_stm(user_id="u", thread_id="t"))
        ([True, True], 2)
    """

    user_id: str
    turns: tuple[TurnWrite, ...]

    def run(self, runtime: Runtime) -> list[WriteReport]:
        """Run with blocking IO."""
        if runtime.writer is not None:
            return self._queue(runtime)
        runtime.settle(self.user_id)
        plan = _plan(runtime, self.turns)
        run_sync(_write_turns(runtime, plan), _services(runtime, plan))
        return [t.report for t in self.turns]

    async def arun(self, runtime: Runtime) -> list[WriteReport]:
        """Run with async IO."""
        if runtime.writer is not None:
            return self._queue(runtime)
        await runtime.asettle(self.user_id)
        plan = _plan(runtime, self.turns)
        await run_async(_write_turns(runtime, plan), _services(runtime, plan))
        return [t.report for t in self.turns]

    def _queue(self, runtime: Runtime) -> list[WriteReport]:
        assert runtime.writer is not None
        for t in self.turns:
            t.queued = True

        def write() -> None:
            plan = _plan(runtime, self.turns)
            run_sync(_write_turns(runtime, plan), _services(runtime, plan))

        if self.turns:
            runtime.writer.submit(self.user_id, write)
        return [WriteReport(page_id=turn_page(t).id, queued=True) for t in self.turns]


def add_messages(
    runtime: Runtime,
    messages: Any,
    user_id: Any,
    thread_id: Any,
    timestamp: Any,
    metadata: Mapping[str, Any] | None,
    store_unanswered: Any,
) -> WriteTurns | AlignedTurns:
    """Operation: ``MemoryOS.add_messages``: the messages' turns (:func:`message_turns`) written as ``add_turns``.

    Turns without message ids are aligned with the thread's stored turns by
    content first (:mod:`~langchain_memoryos.operations.replay`): a resent
    history stores only the turns after the match.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> op = add_messages(memory._runtime, [HumanMessage("hi"), AIMessage("hello")], "u", "t", None, None, False)
        >>> [r.added for r in memory._sync(op)]
        [True]
    """
    turns = message_turns(runtime, messages, user_id, thread_id, timestamp, metadata, store_unanswered)
    user = check_user(user_id)
    if turns and all(t.turn_id is None for t in turns):  # no message ids: aligned with the thread by content
        return AlignedTurns(user, turns[0].thread_id, turns, lambda new: WriteTurns(user, new))
    return WriteTurns(user, turns)


def add_turns(runtime: Runtime, turns: Iterable[Any], user_id: Any, thread_id: Any) -> WriteTurns:
    """Operation: ``MemoryOS.add_turns`` (every turn checked now, written when run).

    Raises:
        TypeError, ValueError: as ``add_turn`` for the first invalid turn (its
            index in the message); nothing is written then.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> add_turns(MemoryOS()._runtime, [("Hi", "Hello"), ("", "")], "u", "t")
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: turns[1]: an empty turn: user_input and agent_response are both \
empty.
    """
    user = check_user(user_id)
    return WriteTurns(user, _checked(runtime, turns, user, thread_id))
