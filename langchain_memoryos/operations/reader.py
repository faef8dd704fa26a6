"""The reader process: ``add_turn``'s page read ahead on the other core, off this process's GIL.

While ``add_turn`` embeds its page, the page is read ahead (its keywords
and fact records, and the rows of the summaries AMU will embed of them; see
:class:`~langchain_memoryos.kernel.effects.EmbedAndRead`). Read in a thread
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
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from typing import Any

from langchain_memoryos.amu import summary_rows
from langchain_memoryos.embeddings import MiniLMEmbeddings
from langchain_memoryos.kernel.controller import PageReading
from langchain_memoryos.kernel.effects import EmbedAndRead, Services
from langchain_memoryos.operations.helper import Helper

__all__ = ["TIMEOUT_SECONDS", "page_reader", "read_page", "ready"]

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


def page_reader(effect: EmbedAndRead, services: Services) -> Callable[[], PageReading | None] | None:
    """What the reader thread runs for an ``EmbedAndRead``: the controller's ``read_ahead``, the summaries embedded.

    The memory's :attr:`~langchain_memoryos.kernel.effects.Services.read_ahead`
    (:class:`~langchain_memoryos.kernel.effects.EmbedAndRead`): the summaries are
    those the write gate admits of the page's records.

    With the reader process (:func:`read_page`, off by default) both are done
    there, so that their Python does not hold this process's GIL while the
    page is embedded here; when the process cannot, here, in the reader thread.
    ``None`` when the page's rows are known already or the controller reads nothing ahead.

    Example:
        >>> from langchain_memoryos.controllers import HeuristicController
        >>> from langchain_memoryos.embeddings import resolve_embeddings
        >>> from langchain_memoryos.kernel.effects import Embed
        >>> from langchain_memoryos.schema import DialoguePage
        >>> page = DialoguePage(id="p", user_input="I'm vegan.", agent_response="Noted!")
        >>> effect = EmbedAndRead(Embed((page.embedding_text,)), page, gate_threshold=0.5)
        >>> services = Services(None, resolve_embeddings(), HeuristicController())  # type: ignore[arg-type]
        >>> reading = page_reader(effect, services)()
        >>> reading.content.records[0].summary, reading.rows[0], reading.rows[1].shape
        ('The user is vegan.', ('The user is vegan.',), (1, 384))
        >>> page_reader(effect, Services(None, resolve_embeddings(), object())) is None  # type: ignore[arg-type]
        True
    """
    if not effect.embed.texts or services.embedded(effect.embed.texts) is not None:
        return None
    read_ahead: Callable[..., PageReading | None] | None = getattr(services.controller, "read_ahead", None)
    if read_ahead is None:
        return None
    embeddings, threshold = services.embeddings, effect.gate_threshold
    page_keywords = getattr(services.controller, "page_keywords", None)

    def read() -> PageReading | None:
        assert read_ahead is not None
        local_encoder = isinstance(embeddings, MiniLMEmbeddings)
        if local_encoder and threshold is not None and isinstance(page_keywords, int):
            answer = read_page(effect.page, page_keywords, embeddings, threshold)
            if answer is not None:
                content, texts, rows = answer
                reading = read_ahead(effect.page, content)
                return replace(reading, rows=(texts, rows)) if reading is not None and texts else reading
        reading = read_ahead(effect.page)
        if reading is None or threshold is None or not local_encoder:
            return reading  # a remote encoder is not asked ahead for texts it may never need
        texts, rows = summary_rows(reading.content.records, threshold, embeddings)
        return replace(reading, rows=(texts, rows)) if texts else reading

    return read
