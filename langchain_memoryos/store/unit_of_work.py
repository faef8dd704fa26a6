"""The unit of work: how a write gets its user state and commits it, holding the user's lock for store work only.

A write whose controller may call a model (an ``LLMController``) never holds
the user's lock while it waits for the model. It works *optimistically*:

1. under the lock, load the user and take a private copy (:func:`fork_user`);
2. without the lock, run the write on the copy — judgements included;
3. under the lock again, commit the copy's writes in one store batch if the
   user's revision is still the one copied, and make the copy the cached
   state (:func:`commit_fork`); otherwise run the write again on the new
   state, reusing the answers to the same requests
   (:class:`~langchain_memoryos.kernel.effects.Judgements`), so a conflict costs
   CPU, not model calls.

After :data:`MAX_ATTEMPTS` conflicts the write runs under the lock, and a
request still unanswered is decided by the offline controller (counted as a
fallback): a write always ends, and a read never waits for a model.

A write with a local controller (the offline default makes no model call)
runs under the lock on the cached state, with no copy.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from langchain_memoryos.kernel.effects import Judgements, Lock, Step, judged
from langchain_memoryos.store.repository import MemoryRepository, UserState, flush

__all__ = ["MAX_ATTEMPTS", "commit_fork", "fork_user", "write_user"]

T = TypeVar("T")
logger = logging.getLogger("langchain_memoryos")

#: Optimistic runs of one write before it runs under the user's lock.
MAX_ATTEMPTS = 3


def fork_user(repo: MemoryRepository, user_id: str) -> Step[tuple[UserState, int]]:
    """Step: a private copy of the user's state and the revision it was copied from (lock held to load only).

    Example:
        >>> from langchain_memoryos.kernel.effects import Services, run_sync
        >>> from langgraph.store.memory import InMemoryStore
        >>> repo = MemoryRepository(2)
        >>> copy, base = run_sync(fork_user(repo, "u"), Services(InMemoryStore(), None, None, lease=repo.lease))
        >>> copy is repo.cached("u"), base == repo.cached("u").revision
        (False, True)
    """
    with (yield Lock(user_id)):
        current = yield from repo.load(user_id)
        return current.fork(), current.revision


def commit_fork(repo: MemoryRepository, state: UserState, base: int) -> Step[bool]:
    """Step: commit a private copy's writes if the user is still at revision ``base``.

    Returns:
        ``True`` when committed (or there was nothing to write); ``False`` when
        the user moved: nothing was written and the write must run again.

    Example:
        >>> from langchain_memoryos.kernel.effects import Services, run_sync
        >>> from langgraph.store.memory import InMemoryStore
        >>> repo = MemoryRepository(2); services = Services(InMemoryStore(), None, None, lease=repo.lease)
        >>> mine, base = run_sync(fork_user(repo, "u"), services)
        >>> theirs, _ = run_sync(fork_user(repo, "u"), services)
        >>> mine.advance_clock("2024-01-01"); theirs.advance_clock("2024-02-01")
        >>> run_sync(commit_fork(repo, theirs, base), services), run_sync(commit_fork(repo, mine, base), services)
        (True, False)
        >>> repo.cached("u").clock.month
        2
    """
    if not state.pending:
        return True
    with (yield Lock(state.user_id)):
        current = yield from repo.load(state.user_id)
        if current.revision != base:
            logger.info("user %r moved while a write was judged: it runs again", state.user_id)
            return False
        state.current_at = current.current_at  # the copy is of the state just loaded (same revision)
        yield from flush(state)
        repo.install(state)
        return True


def write_user(
    repo: MemoryRepository, user_id: str, work: Callable[[UserState], Step[T]], *, optimistic: bool
) -> Step[T]:
    """Step: run ``work`` on the user's state and commit its writes in one batch (see the module doc).

    Args:
        repo: the repository.
        user_id: whose state.
        work: the write, given the state to work on; it buffers its store
            operations in the state (they are flushed here).
        optimistic: judge without the lock (the controller may call a model).

    Returns:
        What ``work`` returned (from the run that was committed).

    Example:
        >>> from langchain_memoryos.kernel.effects import Services, run_sync
        >>> from langgraph.store.memory import InMemoryStore
        >>> repo = MemoryRepository(2); services = Services(InMemoryStore(), None, None, lease=repo.lease)
        >>> def tick(state):
        ...     state.advance_clock("2024-03-01")
        ...     return state.clock.month
        ...     yield
        >>> run_sync(write_user(repo, "u", tick, optimistic=True), services), repo.cached("u").clock.month
        (3, 3)
    """
    working: list[UserState] = []  # the state the current run works on: its usage counters get the judgements'
    judgements = Judgements(count=lambda name, usage: working[-1].count_usage(name, usage), keep=optimistic)
    attempts = 0
    while optimistic and judgements.calls:
        state, base = yield from fork_user(repo, user_id)
        working.append(state)
        result = yield from judged(work(state), judgements)
        if (yield from commit_fork(repo, state, base)):
            return result
        attempts += 1
        judgements.calls = attempts < MAX_ATTEMPTS
    with (yield Lock(user_id)):
        state = yield from repo.load(user_id)
        working.append(state)
        result = yield from judged(work(state), judgements)
        yield from flush(state)
        return result
