"""The per-user write lock: a lease released exactly once, and the protocol of locks between processes."""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["ProcessLocks", "UserLease"]

logger = logging.getLogger(__name__)


class ProcessLocks(Protocol):
    """Per-user locks between processes (PostgreSQL advisory locks, SQLite file locks).

    ``acquire(user_id)`` blocks until this process holds the user's lock and
    returns the function that releases it.
    """

    def acquire(self, user_id: str) -> Callable[[], None]:
        """Take the user's lock; return its release."""
        ...


class UserLease:
    """A held per-user write lock, released exactly once.

    ``release()`` ends a write that went well; ``fail()`` first drops the
    user's cached state (it is reloaded from the store, so a half-applied
    write is never seen). A lease that is dropped without either — a graph run
    abandoned between two nodes — fails when it is garbage-collected, so the
    lock is never leaked.

    Example:
        >>> released = []
        >>> lease = UserLease(lambda: released.append(1), lambda: None)
        >>> lease.release(); lease.release(); released
        [1]
    """

    def __init__(self, release: Callable[[], None], invalidate: Callable[[], None]) -> None:
        self._release = release
        self._invalidate = invalidate
        self._finalizer = weakref.finalize(self, _abandon, release, invalidate)

    @property
    def held(self) -> bool:
        """Whether the lock is still held."""
        return self._finalizer.alive

    def release(self) -> None:
        """Release the lock (idempotent)."""
        if self._finalizer.detach() is not None:
            self._release()

    def fail(self) -> None:
        """Drop the user's cached state, then release the lock (idempotent)."""
        if self._finalizer.detach() is not None:
            _abandon(self._release, self._invalidate)

    def __enter__(self) -> UserLease:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        """Release the lock; fail when the block raised."""
        if exc_type is not None:
            self.fail()
        else:
            self.release()


def _abandon(release: Callable[[], None], invalidate: Callable[[], None]) -> None:
    try:
        invalidate()
    finally:
        release()
