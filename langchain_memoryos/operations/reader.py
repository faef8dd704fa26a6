"""The reader process: ``add_turn``'s page read ahead on the other core, off this process's GIL.

While ``add_turn`` embeds its page, the page is read ahead (its keywords
and fact records, and the rows of the summaries AMU will embed of them; see
:class:`~langchain_memoryos.pipeline.effects.EmbedAndRead`). Read in a thread
of this process, that Python holds the GIL the page's forward pass needs
between its matrix products (about 4 ms of a 26 ms pass on this machine);
read here, in a separate process, it costs the pass nothing.

The process is a :class:`~langchain_memoryos.operations.helper.Helper`
(a plain ``python`` process with its own pipes, never a fork; it exits when
this process closes its pipe or dies), started in the background on first
use, fed one page at a time. Until it is ready, while it is busy with
another turn's page, and for good once it failed or did not answer within
:data:`TIMEOUT_SECONDS`, :func:`read_page` answers ``None`` and the reader
thread reads the page itself: the same result, computed by the same code
with the same encoder and batch.

It is off unless ``MEMORYOS_READER_PROCESS=1``: the process holds its own
encoder (about 195 MB resident) for about 4 ms a turn (on this machine,
``add_turn`` / embedding its page alone 1.29× → 1.15× on LoCoMo); a memory
layer should not start a process of that size behind its user's back.
"""

from __future__ import annotations

import os
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from langchain_memoryos.operations.helper import Helper

__all__ = ["TIMEOUT_SECONDS", "read_page", "ready"]

#: How long a turn waits for the process's answer before reading the page itself (and stopping the process).
TIMEOUT_SECONDS = 10.0

_HELPER = Helper(
    "reader",
    "langchain_memoryos.operations.reader:_answer",
    warm="langchain_memoryos.operations.reader:_warm",
    env={"MEMORYOS_READER_PROCESS": "0"},
)


def _answer(request: tuple[int, Any, Any, float]) -> Any:
    """In the process: the page's content, the summaries the write gate admits of it, and their rows."""
    from langchain_memoryos.amu import summary_rows
    from langchain_memoryos.controllers.heuristic import HeuristicController

    page_keywords, embeddings, page, threshold = request
    content = HeuristicController(page_keywords=page_keywords).page_content(page)
    return (content, *summary_rows(content.records, threshold, embeddings))


def _warm() -> None:  # pragma: no cover - runs in the child process
    """In the process: the encoder loaded before the first page."""
    from langchain_memoryos.embeddings import encode_texts, resolve_embeddings

    encode_texts(resolve_embeddings(), ["warm up"])


def _enabled() -> bool:
    if _HELPER.failed or os.environ.get("MEMORYOS_READER_PROCESS", "0") != "1" or (os.cpu_count() or 1) < 2:
        return False
    return os.name == "posix"


def ready(timeout: float) -> bool:
    """Wait until the reader process is ready (starting it if needed and enabled); whether it is.

    Example:
        >>> import os
        >>> os.environ.get("MEMORYOS_READER_PROCESS", "0") != "1" and not ready(0.0)  # off by default
        True
    """
    return _enabled() and _HELPER.ready(timeout)


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
    if not _enabled():
        return None
    future = _HELPER.submit((page_keywords, embeddings, page, threshold), idle_only=True)
    if future is None:
        return None
    try:
        return future.result(timeout=TIMEOUT_SECONDS)
    except FutureTimeout:
        _HELPER.stop(f"did not answer within {TIMEOUT_SECONDS:g} s")
    except Exception:  # noqa: BLE001 - the page raised there, or the process stopped (logged): read here
        pass
    return None
