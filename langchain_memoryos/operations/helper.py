"""Helper processes: pure work on the other core, in a process that cannot outlive this one.

The read-ahead (:mod:`~langchain_memoryos.operations.reader`: ``add_turn``'s
opt-in page reader and the page analyser of bulk writes) hands
work to a :class:`Helper`: a plain ``python`` process started with
:mod:`subprocess` (never a fork: a fork would inherit this process's pooled
database connections, and a user's advisory lock held on one of them would
outlive this process in the fork; a fork taken while another thread holds a
lock can hang; never ``multiprocessing``'s spawn either: it imports the
caller's main script again). The helper has its own pipes and inherits no
other descriptor (``close_fds``). It is fed pickled requests on its stdin,
one after another, answers each on its stdout, and exits

* when its stdin closes: this process closed it (at exit), or died, however
  it died (the kernel closes the pipes of a process killed with ``SIGKILL``
  or ``SIGTERM``);
* when the process that started it is gone (it checks every
  :data:`PARENT_POLL_SECONDS`), in case a fork of this process still holds
  the pipe open.

A helper starts in the background on first use and is kept for the process's
life. Until it is ready, and for good once it failed or was stopped,
:meth:`Helper.submit` answers ``None`` and the caller does the work itself
(the same function on the same data: the same result).
"""

from __future__ import annotations

import atexit
import importlib
import logging
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any

from langchain_memoryos.errors import HelperError

__all__ = ["PARENT_POLL_SECONDS", "START_SECONDS", "Helper", "HelperError", "serve"]

logger = logging.getLogger("langchain_memoryos")

#: How long a helper may take to start (imports, warm-up) before it is given up.
START_SECONDS = 120.0
#: How often a helper checks that the process that started it still runs.
PARENT_POLL_SECONDS = 1.0
#: How long this process, exiting, waits for its helpers to see their pipe closed before killing them.
EXIT_SECONDS = 2.0

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the helper imports this copy of the package
_HELPERS: weakref.WeakSet[Helper] = weakref.WeakSet()


def _send(out: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(struct.pack("<Q", len(data)) + data)
    out.flush()


def _receive(stream: IO[bytes]) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the helper process closed its pipe")
    (size,) = struct.unpack("<Q", head)
    return pickle.loads(stream.read(size))  # noqa: S301 - our own process's messages


def _resolve(target: str) -> Callable[..., Any]:
    module, _, name = target.partition(":")
    function: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return function


class Helper:
    """One helper process: started on first use, kept for this process's life, stopped for good on a failure.

    Args:
        name: the helper's name in log messages and thread names (``"reader"``).
        task: ``"module:function"``, the function the helper applies to each request.
        warm: ``"module:function"`` the helper calls once before it reports ready (loading a model), or ``None``.
        env: environment variables set for the helper.

    Example:
        >>> helper = Helper("echo", "builtins:sorted")
        >>> helper.ready(120)  # started in the background, waited for here
        True
        >>> helper.submit([3, 1, 2]).result(timeout=60)  # sorted([3, 1, 2]), in the other process
        [1, 2, 3]
        >>> helper.stop("was stopped by its example"); helper.submit([1]) is None  # stopped for good
        True
    """

    def __init__(self, name: str, task: str, *, warm: str | None = None, env: Mapping[str, str] | None = None) -> None:
        self.name = name
        self.task = task
        self.warm = warm
        self._env = dict(env or {})
        self._reset()
        _HELPERS.add(self)

    def _reset(self) -> None:
        self._lock = threading.Lock()  # the state below
        self._send_lock = threading.Lock()  # one request written at a time
        self._process: subprocess.Popen[bytes] | None = None
        self._pending: deque[Future[Any]] = deque()
        self._ready = threading.Event()
        self._failed = False

    @property
    def failed(self) -> bool:
        """Whether the helper failed or was stopped (the caller does the work itself from now on)."""
        return self._failed

    def _start(self) -> None:
        """Start the process (``self._lock`` held); a thread waits for its "ready", then for its answers."""
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, **self._env, "PYTHONPATH": _PACKAGE_ROOT + (os.pathsep + path if path else "")}
        code = "from langchain_memoryos.operations.helper import serve; serve()"
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", code, self.task, self.warm or "", str(os.getpid())],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,  # no descriptor of this process (a database connection) is inherited
                env=env,
            )
        except OSError as exc:
            self._failed = True
            logger.warning("the %s process could not be started (%s); the work is done in this process", self.name, exc)
            return
        self._process = process
        threading.Thread(target=self._listen, args=(process,), name=f"memoryos-{self.name}", daemon=True).start()
        timer = threading.Timer(START_SECONDS, self._started, args=(process,))
        timer.daemon = True
        timer.start()

    def _started(self, process: subprocess.Popen[bytes]) -> None:
        """:data:`START_SECONDS` after the start: a process not ready yet is stopped."""
        if not self._ready.is_set():
            self._fail(process, f"did not start in {START_SECONDS:g} s")

    def _listen(self, process: subprocess.Popen[bytes]) -> None:
        """In a thread: the process's "ready", then its answers, each to the oldest request waiting."""
        assert process.stdout is not None
        try:
            if _receive(process.stdout) != "ready":
                raise HelperError("a wrong first message")
            self._ready.set()
            while True:
                status, answer = _receive(process.stdout)
                with self._lock:
                    future = self._pending.popleft()
                if status == "ok":
                    future.set_result(answer)
                else:
                    future.set_exception(HelperError(f"the {self.name} process failed: {answer}"))
        except Exception:  # noqa: BLE001 - a closed pipe, a bad message: reported by _fail
            self._fail(process, "stopped")
        process.wait()  # reaped

    def _fail(self, process: subprocess.Popen[bytes], why: str) -> None:
        """Stop ``process`` for good (logged once); its waiting requests fail with :class:`HelperError`."""
        with self._lock:
            current = self._process is process
            if current:
                self._failed, self._process = True, None
                self._ready.clear()
            pending, self._pending = list(self._pending), deque()
        if current:
            logger.warning("the %s process %s; its work is done in this process from now on", self.name, why)
        for future in pending:
            future.set_exception(HelperError(f"the {self.name} process {why}"))
        if process.returncode is None:
            process.kill()

    def _usable(self) -> bool:
        """Whether the helper answers requests now (starting it, when it is not running yet)."""
        with self._lock:
            if self._failed:
                return False
            if self._process is None:
                self._start()
        return self._ready.is_set()

    def ready(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until the helper is ready (starting it if needed); whether it is.

        Example:
            >>> Helper("sorter", "builtins:sorted").ready(120)
            True
        """
        self._usable()
        return self._ready.wait(timeout) and not self._failed

    def submit(self, request: Any, *, idle_only: bool = False) -> Future[Any] | None:
        """Send ``request``; the future of its answer, or ``None`` (do the work here).

        ``None`` while the helper starts, once it failed or was stopped, and,
        with ``idle_only``, while it works on another request. The future
        fails with :class:`HelperError` when the helper could not answer.
        Answers come in the order of the requests.

        Example:
            >>> helper = Helper("lengths", "builtins:len")
            >>> _ = helper.ready(120)
            >>> [helper.submit(word).result(timeout=60) for word in ("a", "abc")]
            [1, 3]
        """
        if not self._usable():
            return None
        future: Future[Any] = Future()
        with self._send_lock:
            with self._lock:
                process = self._process
                if process is None or (idle_only and self._pending):
                    return None
                self._pending.append(future)
            try:
                assert process.stdin is not None
                _send(process.stdin, request)
            except Exception:  # noqa: BLE001 - a broken pipe: reported by _fail (the future fails)
                self._fail(process, "failed")
        return future

    def stop(self, why: str) -> None:
        """Stop the helper for good (its work is done in this process from now on), logging ``why``.

        Example:
            >>> helper = Helper("sorter", "builtins:sorted")
            >>> helper.stop("is not needed"); helper.failed, helper.ready(0)
            (True, False)
        """
        with self._lock:
            process = self._process
            if process is None:
                self._failed = True
                return
        self._fail(process, why)

    def _close(self) -> None:
        """At exit: close the helper's stdin (it exits) and reap it, killing it if it does not exit in time."""
        with self._lock:
            process, self._process, self._failed = self._process, None, True
        if process is None:
            return
        try:
            if process.stdin is not None:
                process.stdin.close()
            process.wait(EXIT_SECONDS)
        except Exception:  # noqa: BLE001 - a helper that does not exit is killed
            process.kill()

    def _forget(self) -> None:
        """In a fork of this process: the parent's helper is the parent's; the fork starts its own."""
        process = self._process
        self._reset()
        if process is None:
            return
        devnull = os.open(os.devnull, os.O_RDWR)
        try:
            for stream in (process.stdin, process.stdout):
                if stream is not None:  # the fork lets go of the pipes (the helper sees them close)
                    os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)


def _close_all() -> None:
    for helper in list(_HELPERS):
        helper._close()


def _forget_all() -> None:
    for helper in list(_HELPERS):
        helper._forget()


atexit.register(_close_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_all)


def _watch_parent(parent: int) -> None:  # pragma: no cover - runs in the helper process
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(0)


def serve() -> None:  # pragma: no cover - runs in the helper process (the tests drive it through Helper)
    """The helper process's loop, run as ``python -c "..." TASK WARM PARENT_PID`` (see :class:`Helper`).

    Answers each request on stdin with ``("ok", TASK(request))`` or
    ``("error", repr(exception))``; returns when stdin closes. Its own stdin
    and stdout are /dev/null meanwhile (a print cannot break the pipe's
    messages); Ctrl-C in a terminal is left to this process's parent, which
    closes the pipe.
    """
    task, warm, parent = sys.argv[1], sys.argv[2], int(sys.argv[3])
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent,), name="memoryos-parent", daemon=True).start()
    requests, answers = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    function = _resolve(task)
    if warm:
        _resolve(warm)()
    _send(answers, "ready")
    while True:
        try:
            request = _receive(requests)
        except EOFError:
            return
        try:
            answer = ("ok", function(request))
        except Exception as exc:  # noqa: BLE001 - the parent does the work itself
            answer = ("error", repr(exc))
        _send(answers, answer)
