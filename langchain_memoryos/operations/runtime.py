"""How an operation runs: the memory's runtime and the two kinds of step operations.

An *operation* is what one public method of ``MemoryOS`` does, built once
from the caller's arguments (validated then, before anything is read or
written) and run by either driver: ``operation.run(runtime)`` with blocking
IO, ``await operation.arun(runtime)`` with async IO. Its body is a *step* (a
generator of effects, :mod:`langchain_memoryos.kernel.effects`), so the sync
and async methods share it, as LangGraph's ``BaseStore`` builds ``get`` and
``aget`` on ``batch`` and ``abatch``.

Every operation on a user first waits for the user's queued background writes
(``write_mode="background"``), so the memory always reads its own writes.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from langchain_memoryos.background import BackgroundWriter
from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.kernel.effects import Services, Step, run_async, run_sync
from langchain_memoryos.operations.validation import check_time, check_user
from langchain_memoryos.store.repository import MemoryRepository, UserLease
from langchain_memoryos.store.settings import EngineSettings
from langchain_memoryos.tiers.turn import TurnWrite

__all__ = ["Locked", "Operation", "Runtime", "Unlocked"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Runtime:
    """What one memory's operations are built from and run with.

    Args:
        config: the memory's knobs.
        settings: the engine's settings derived from them.
        repository: the users' states, caches and locks.
        services: what the drivers perform effects with (store, encoder, controllers, locks).
        writer: the background writer (``None`` in ``write_mode="sync"``).
        local: the controller makes no model call (the offline default): a
            write may then judge under the user's lock.

    Attributes:
        write_graph, read_graph: the compiled graphs, built on first use
            (:mod:`langchain_memoryos.operations.turns`).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> runtime = MemoryOS()._runtime
        >>> runtime.optimistic, runtime.writer is None
        (False, True)
    """

    def __init__(
        self,
        config: MemoryOSConfig,
        settings: EngineSettings,
        repository: MemoryRepository,
        services: Services,
        writer: BackgroundWriter | None,
        *,
        local: bool,
    ) -> None:
        self.config = config
        self.settings = settings
        self.repository = repository
        self.services = services
        self.writer = writer
        self.local = local
        self.write_graph: Any = None
        self.read_graph: Any = None

    @property
    def optimistic(self) -> bool:
        """Writes judge without the user's lock (the controller may call a model).

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> MemoryOS()._runtime.optimistic
            False
        """
        return not self.local

    def timestamp(self, value: Any) -> _dt.datetime:
        """A caller's timestamp in UTC, refused beyond ``max_clock_skew_seconds`` ahead of the wall clock.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> MemoryOS()._runtime.timestamp(0).year
            1970
        """
        return check_time(value, self.config)

    # -- the user's queued background writes and lock ---------------------------
    def settle(self, user: str) -> None:
        """Wait for the user's queued turns (background mode), so reads see them; never from the writer itself.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> memory = MemoryOS(write_mode="background")
            >>> memory.add_turn("I moved to Oslo.", "Nice!", user_id="u").queued
            True
            >>> memory._runtime.settle("u"); memory._runtime.writer.pending("u")
            0
            >>> memory.close()
        """
        if self.writer is not None and self.writer.pending(user):
            self.writer.wait(user)

    async def asettle(self, user: str) -> None:
        """Async twin of :meth:`settle` (waits in a worker thread)."""
        if self.writer is not None and self.writer.pending(user):
            await asyncio.to_thread(self.writer.wait, user)

    def settle_turn(self, turn: TurnWrite) -> None:
        """Before a turn through the write graph: wait for the user's queued turns, unless it is one of them."""
        if not turn.queued:
            self.settle(turn.user_id)

    async def asettle_turn(self, turn: TurnWrite) -> None:
        """Async twin of :meth:`settle_turn`."""
        if not turn.queued:
            await self.asettle(turn.user_id)

    def lease(self, user: str) -> UserLease:
        """The user's write lock for a graph run, after the user's queued background writes.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> with MemoryOS()._runtime.lease("u") as lease:
            ...     lease.held
            True
        """
        self.settle(user)
        return self.repository.lease(user)

    async def alease(self, user: str) -> UserLease:
        """Async twin of :meth:`lease`."""
        await self.asettle(user)
        return await self.repository.alease(user)

    def flush(self, user_id: str | None = None) -> None:
        """Wait until queued background writes are stored (all users, or one); see ``MemoryOS.flush``.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> MemoryOS()._runtime.flush("")  # no background writer: nothing to wait for
        """
        if self.writer is not None:
            self.writer.flush(None if user_id is None else check_user(user_id))

    async def aflush(self, user_id: str | None = None) -> None:
        """Async twin of :meth:`flush` (waits in a worker thread)."""
        if self.writer is not None:
            await asyncio.to_thread(self.flush, user_id)


class Operation(Protocol[T_co]):
    """One public method's work, run by either driver.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> def step():
        ...     return "done"
        ...     yield
        >>> operation: Operation[str] = Unlocked("u", step())
        >>> operation.run(memory._runtime)
        'done'
    """

    def run(self, runtime: Runtime) -> T_co:
        """Run with blocking IO."""
        ...

    async def arun(self, runtime: Runtime) -> T_co:
        """Run with async IO."""
        ...


@dataclass(frozen=True)
class Locked(Generic[T]):
    """A step run under the user's write lock, after the user's queued background writes.

    A step that raises drops the user's cached state (the next access
    reloads it from the store).

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_fact("I'm vegan.", user_id="u")
        >>> def facts():
        ...     state = yield from memory.repository.load("u")
        ...     return [f.summary for f in state.facts["user"].values()]
        >>> Locked("u", facts()).run(memory._runtime)
        ['The user is vegan.']
    """

    user: str
    step: Step[T]

    def run(self, runtime: Runtime) -> T:
        """Run with blocking IO."""
        runtime.settle(self.user)
        with runtime.repository.locked(self.user):  # drops the cached state on an error
            return run_sync(self.step, runtime.services)

    async def arun(self, runtime: Runtime) -> T:
        """Run with async IO."""
        await runtime.asettle(self.user)
        async with runtime.repository.alocked(self.user):  # drops the cached state on an error
            return await run_async(self.step, runtime.services)


@dataclass(frozen=True)
class Unlocked(Generic[T]):
    """A step that takes the user's lock itself (``Lock`` effects), after the user's queued background writes.

    So a write holds the lock around its store work only, never while a model
    is judging (:mod:`langchain_memoryos.store.unit_of_work`).

    Example:
        >>> import asyncio
        >>> from langchain_memoryos import MemoryOS
        >>> from langchain_memoryos.kernel.effects import Lock
        >>> def step():
        ...     with (yield Lock("u")) as lease:
        ...         return lease.held
        >>> asyncio.run(Unlocked("u", step()).arun(MemoryOS()._runtime))
        True
    """

    user: str
    step: Step[T]

    def run(self, runtime: Runtime) -> T:
        """Run with blocking IO."""
        runtime.settle(self.user)
        return run_sync(self.step, runtime.services)

    async def arun(self, runtime: Runtime) -> T:
        """Run with async IO."""
        await runtime.asettle(self.user)
        return await run_async(self.step, runtime.services)
