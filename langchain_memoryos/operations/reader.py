"""The reader process: ``add_turn``'s page read ahead on the other core, off this process's GIL.

While ``add_turn`` embeds its page, the page is read ahead (its keywords
and fact records, and the rows of the summaries AMU will embed of them; see
:class:`~langchain_memoryos.pipeline.effects.EmbedAndRead`). Read in a thread
of this process, that Python holds the GIL the page's forward pass needs
between its matrix products (about 4 ms of a 26 ms pass on this machine);
read here, in a separate process, it costs the pass nothing.

The process is a plain ``python -m langchain_memoryos.operations.reader``
(never a fork: a fork taken while another thread holds a lock, the
encoder's for one, can hang; never ``multiprocessing``'s spawn: it would
import the caller's main script again), started in the background on first
use, fed pickled requests on its stdin, one at a time. Until it is ready, while
it is busy with another turn's page, and for good once it failed or did not
answer within :data:`TIMEOUT_SECONDS`, :func:`read_page` answers ``None`` and
the reader thread reads the page itself: the same result, computed by the
same code with the same encoder and batch.

It is off unless ``MEMORYOS_READER_PROCESS=1``: the process holds its own
encoder (about 195 MB resident) for about 4 ms a turn (on this machine,
``add_turn`` / embedding its page alone 1.29× → 1.15× on LoCoMo); a memory
layer should not start a process of that size behind its user's back.
"""

from __future__ import annotations

import logging
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
from typing import IO, Any

__all__ = ["TIMEOUT_SECONDS", "read_page", "ready"]

logger = logging.getLogger("langchain_memoryos")

#: How long a turn waits for the process's answer before reading the page itself (and stopping the process).
TIMEOUT_SECONDS = 10.0

_LOCK = threading.Lock()  # one request in flight
_STATE_LOCK = threading.Lock()
_PROCESS: subprocess.Popen[bytes] | None = None
_READY = threading.Event()
_FAILED = False


def _send(out: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(struct.pack("<Q", len(data)) + data)
    out.flush()


def _receive(stream: IO[bytes]) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the reader process closed its output")
    (size,) = struct.unpack("<Q", head)
    return pickle.loads(stream.read(size))  # noqa: S301 - our own child's answers


def _answer(request: tuple[int, Any, Any, float]) -> Any:
    """In the process: the page's content, the summaries the write gate admits of it, and their rows."""
    from langchain_memoryos.amu import summary_rows
    from langchain_memoryos.controllers.heuristic import HeuristicController

    page_keywords, embeddings, page, threshold = request
    content = HeuristicController(page_keywords=page_keywords).page_content(page)
    return (content, *summary_rows(content.records, threshold, embeddings))


def _serve() -> None:  # pragma: no cover - runs in the child process (the tests drive it through read_page)
    from langchain_memoryos.embeddings import encode_texts, resolve_embeddings

    encode_texts(resolve_embeddings(), ["warm up"])  # the encoder loaded before the first page
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    _send(stdout, "ready")
    while True:
        try:
            request = _receive(stdin)
        except EOFError:
            return
        try:
            _send(stdout, ("ok", _answer(request)))
        except Exception as exc:  # noqa: BLE001 - the parent reads the page itself
            _send(stdout, ("error", repr(exc)))


def _start() -> None:
    """Start the process and wait (in a background thread) for its "ready"."""
    global _PROCESS
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "langchain_memoryos.operations.reader"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "MEMORYOS_READER_PROCESS": "0"},
        )
    except OSError:
        _fail("could not be started")
        return
    _PROCESS = process

    def wait_ready() -> None:
        assert process.stdout is not None
        try:
            if _readable(process.stdout, 120.0) and _receive(process.stdout) == "ready":
                _READY.set()
                return
        except Exception:  # noqa: BLE001 - reported below
            pass
        _fail("did not start")

    threading.Thread(target=wait_ready, name="memoryos-reader-start", daemon=True).start()


def _readable(stream: IO[bytes], timeout: float) -> bool:
    return bool(select.select([stream], [], [], timeout)[0])


def _fail(why: str) -> None:
    """Stop the process for good: pages are read in this process from now on."""
    global _FAILED, _PROCESS
    with _STATE_LOCK:
        _FAILED, process, _PROCESS = True, _PROCESS, None
    _READY.clear()
    logger.warning("the reader process %s; pages are read in this process from now on", why)
    if process is not None:
        process.kill()


def _enabled() -> bool:
    if _FAILED or os.environ.get("MEMORYOS_READER_PROCESS", "0") != "1" or (os.cpu_count() or 1) < 2:
        return False
    return sys.platform.startswith("linux") or sys.platform == "darwin"  # select() on pipes


def _usable() -> bool:
    if not _enabled():
        return False
    with _STATE_LOCK:
        if _PROCESS is None and not _FAILED:
            _start()
    return _READY.is_set()


def ready(timeout: float) -> bool:
    """Wait until the reader process is ready (starting it if needed and enabled); whether it is.

    Example:
        >>> import os
        >>> os.environ.get("MEMORYOS_READER_PROCESS", "0") != "1" and not ready(0.0)  # off by default
        True
    """
    if not _enabled():
        return False
    _usable()
    return _READY.wait(timeout) and not _FAILED


def read_page(page: Any, page_keywords: int, embeddings: Any, threshold: float) -> Any:
    """``(content, summaries, rows)`` of ``page`` read in the reader process, or ``None`` (read it here).

    ``None`` while the process starts, while it reads another page, and once it failed.

    Example:
        >>> from langchain_memoryos.embeddings import resolve_embeddings
        >>> from langchain_memoryos.schema import DialoguePage
        >>> page = DialoguePage(id="p", user_input="I live in Lyon.", agent_response="Nice city.")
        >>> answer = read_page(page, 8, resolve_embeddings(), 0.5)  # None until the process is ready
        >>> answer is None or answer[0].keywords == ["lyon", "live", "city"]
        True
    """
    if not _usable() or not _LOCK.acquire(blocking=False):
        return None
    try:
        process = _PROCESS
        if process is None or process.stdin is None or process.stdout is None:
            return None
        try:
            _send(process.stdin, (page_keywords, embeddings, page, threshold))
            if not _readable(process.stdout, TIMEOUT_SECONDS):
                _fail(f"did not answer within {TIMEOUT_SECONDS:g} s")
                return None
            status, answer = _receive(process.stdout)
        except Exception:  # noqa: BLE001 - a broken pipe, a bad answer
            _fail("failed")
            return None
        return answer if status == "ok" else None
    finally:
        _LOCK.release()


if __name__ == "__main__":  # pragma: no cover - the child process
    _serve()
