"""Deferred writes: each user's turns applied in order on worker threads, off the reply path.

``MemoryOS(write_mode="background")`` hands every ``add_turn`` to a
:class:`BackgroundWriter`: the call returns as soon as the turn is queued;
turns of one user run one after another, in the order given; different users
run in parallel (up to ``max_workers``). A read of a user first waits for that
user's queued turns, so the memory always reads its own writes. ``flush()``
waits for everything, and raises :class:`BackgroundWriteError` if a queued
write failed; ``close()`` drains the queue, then stops the workers.

At interpreter exit (the main script returned, called ``sys.exit()``, or
let an exception escape) every writer still open is drained before the
interpreter's thread pools shut down: its hook is registered with
``threading._register_atexit``, which runs before ``concurrent.futures``
stops its executors (a plain ``atexit`` hook runs after, when a write could
no longer use them). A turn queued after that (by an ``atexit`` hook, say)
is written inline, in the caller's thread. No signal handler is installed:
a process killed with ``SIGKILL`` loses the turns still queued, and so does
one stopped by ``SIGTERM`` under Python's default handling, which ends the
process without running exit hooks (see docs/architecture.md, "Background
writes", for the line a server adds).

Example:
    >>> w = BackgroundWriter(max_workers=2)
    >>> done = []
    >>> for i in range(3):
    ...     w.submit("u", lambda i=i: done.append(i))
    >>> w.flush(); done
    [0, 1, 2]
    >>> w.close()
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from langchain_memoryos.errors import BackgroundWriteError, InvalidInputError

__all__ = ["BackgroundWriteError", "BackgroundWriter"]

logger = logging.getLogger("langchain_memoryos")


_OPEN: weakref.WeakSet[BackgroundWriter] = weakref.WeakSet()  # the writers the exit hook drains
_HOOK_LOCK = threading.Lock()
_HOOKED = False
_EXITING = False


def _drain_at_exit() -> None:
    """At interpreter exit: every open writer drained (its failures logged), later writes done inline."""
    global _EXITING
    _EXITING = True
    for writer in list(_OPEN):
        writer._drain_all()


def _hook_exit() -> bool:
    """Register :func:`_drain_at_exit` once; ``False`` when the interpreter is exiting already."""
    global _HOOKED
    with _HOOK_LOCK:
        if _HOOKED:
            return not _EXITING
        register = getattr(threading, "_register_atexit", None)  # before concurrent.futures' own exit hook
        try:
            register(_drain_at_exit) if register is not None else atexit.register(_drain_at_exit)
        except RuntimeError:  # "can't register atexit after shutdown": write inline
            return False
        _HOOKED = True
        return True


class BackgroundWriter:
    """Per-user ordered queues served by a thread pool.

    Args:
        max_workers: users written in parallel.

    Example:
        >>> BackgroundWriter().pending("u")
        0
    """

    def __init__(self, max_workers: int = 4) -> None:
        if max_workers < 1:
            raise InvalidInputError(f"max_workers must be >= 1, got {max_workers}")
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="memoryos-writer")
        self._queues: dict[str, deque[Callable[[], object]]] = {}
        self._running: set[str] = set()
        self._failures: list[tuple[str, BaseException]] = []
        self._cond = threading.Condition()
        self._closed = False
        self._inline = not _hook_exit()  # writes run in the caller's thread (the interpreter is exiting)
        _OPEN.add(self)

    def submit(self, user_id: str, write: Callable[[], object]) -> None:
        """Queue ``write`` after the user's earlier writes.

        Once the interpreter is exiting (or the worker threads are gone), the
        write runs in the caller's thread instead, after the user's earlier ones.

        Raises:
            RuntimeError: the writer is closed.
        """
        with self._cond:
            if self._closed:
                raise RuntimeError("the memory's background writer is closed; create a new MemoryOS.")
            self._queues.setdefault(user_id, deque()).append(write)
            if user_id in self._running:
                return
            self._running.add(user_id)
        if not (self._inline or _EXITING):
            try:
                self._pool.submit(self._drain, user_id)
                return
            except RuntimeError:  # the interpreter shut the pool down: written here
                pass
        self._drain(user_id)

    def _drain_all(self) -> None:
        """At exit: wait for every queued write (the hook of :func:`_drain_at_exit`); failures are logged."""
        self._inline = True
        self.wait()
        with self._cond:
            failed = len(self._failures)
        if failed:
            logger.error("memoryos: %d background write(s) failed before exit (each logged above)", failed)

    def _drain(self, user_id: str) -> None:
        while True:
            with self._cond:
                queue = self._queues.get(user_id)
                if not queue:
                    self._queues.pop(user_id, None)
                    self._running.discard(user_id)
                    self._cond.notify_all()
                    return
                write = queue.popleft()
            try:
                write()
            except BaseException as exc:  # noqa: BLE001 - reported by flush(), never lost silently
                logger.exception("memoryos: a background write for user %r failed", user_id)
                with self._cond:
                    self._failures.append((user_id, exc))

    def pending(self, user_id: str | None = None) -> int:
        """Writes queued or running (for one user, or all).

        Example:
            >>> BackgroundWriter().pending()
            0
        """
        with self._cond:
            users = [user_id] if user_id is not None else list(set(self._queues) | self._running)
            return sum(len(self._queues.get(u, ())) + (1 if u in self._running else 0) for u in users)

    def wait(self, user_id: str | None = None) -> None:
        """Block until the user's (or every) queued write has run."""
        with self._cond:
            self._cond.wait_for(lambda: not self._busy(user_id))

    def _busy(self, user_id: str | None) -> bool:
        if user_id is None:
            return bool(self._running or any(self._queues.values()))
        return user_id in self._running or bool(self._queues.get(user_id))

    def flush(self, user_id: str | None = None) -> None:
        """Wait for the queued writes; raise :class:`BackgroundWriteError` for any that failed.

        Example:
            >>> w = BackgroundWriter()
            >>> w.submit("u", lambda: 1 / 0)
            >>> w.flush()  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            langchain_memoryos.errors.BackgroundWriteError: 1 background write(s) failed; first: ZeroDivision...
            >>> w.flush()  # a failure is reported once
            >>> w.close()
        """
        self.wait(user_id)
        with self._cond:
            failures = [f for f in self._failures if user_id is None or f[0] == user_id]
            self._failures = [f for f in self._failures if f not in failures]
        if failures:
            raise BackgroundWriteError(failures)

    def close(self) -> None:
        """Drain the queue, then stop the workers (idempotent).

        Example:
            >>> import time
            >>> w, done = BackgroundWriter(), []
            >>> w.submit("u", lambda: (time.sleep(0.05), done.append("written")))
            >>> w.close(); done, w.pending()  # the queue is drained first
            (['written'], 0)
            >>> w.submit("u", lambda: None)
            Traceback (most recent call last):
            ...
            RuntimeError: the memory's background writer is closed; create a new MemoryOS.
        """
        with self._cond:
            if self._closed:
                return
            self._closed = True
        self.wait()
        self._pool.shutdown(wait=True)
