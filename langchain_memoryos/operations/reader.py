"""The read-ahead: pages read (keywords, fact records) before their turns are written, one way for every write.

A page's content (:meth:`~langchain_memoryos.controllers.heuristic.HeuristicController.page_content`)
is a pure function of the page, so it can be read before the turn takes the
user's lock, beside the encoder, and handed to the page's analysis as a
:class:`~langchain_memoryos.kernel.controller.PageReading` (``chain_link``
then computes no keywords or facts under the lock). Every path reads a page
with :func:`read_pages`, here or in a :class:`~langchain_memoryos.operations.helper.Helper`
process (a plain ``python`` process with its own pipes, never a fork; it exits
when this process closes its pipe or dies), started in the background on
first use. Until a helper is ready, while it is busy, and for good once it
failed or did not answer in time, the page is read here: the same result,
computed by the same code with the same encoder and batch.

* ``add_turn``: while its page is embedded, :func:`read_ahead` reads it in a
  thread (the services' ``read_ahead`` for
  :class:`~langchain_memoryos.kernel.effects.EmbedAndRead`), and embeds the
  summaries the write gate will admit of its records on the other core. With
  ``MEMORYOS_READER_PROCESS=1`` it is read in the reader process instead: read
  in a thread of this process, that Python holds the GIL the page's forward
  pass needs between its matrix products (about 4 ms of a 26 ms pass on this
  machine); it is off by default: the process holds its own encoder (about
  195 MB resident) for about 4 ms a turn (on this machine, ``add_turn`` /
  embedding its page alone 1.29× → 1.15× on LoCoMo); a memory layer should
  not start a process of that size behind its user's back.
* ``add_turns``: each window's pages are read by the analyser process on a
  second core (:func:`analyser`, :func:`submit_pages`; it loads no encoder:
  about 43 MB resident and a quick start) while the window before is written,
  and handed to the turns as readings (:func:`contents`); the window's facts
  are embedded in one batch by the bulk write.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from langchain_memoryos.controllers.heuristic import HeuristicController
from langchain_memoryos.kernel.controller import PageContent, PageReading
from langchain_memoryos.operations.helper import Helper
from langchain_memoryos.schema import DialoguePage

if TYPE_CHECKING:
    from langchain_memoryos.kernel.effects import EmbedAndRead, Services

__all__ = [
    "TIMEOUT_SECONDS",
    "PageRead",
    "analyser",
    "contents",
    "page_reader",
    "read_ahead",
    "read_pages",
    "ready",
    "submit_pages",
]

#: How long a turn waits for the process's answer before reading the page itself (and stopping the process).
TIMEOUT_SECONDS = 10.0

#: What reading a page gives: its content, and with an encoder the summaries the write gate admits of its
#: records and their rows (``()`` and ``None`` without one, or when none is admitted).
PageRead = tuple[PageContent, tuple[str, ...], Any]

_READER = Helper(
    "reader",
    "langchain_memoryos.operations.reader:read_pages",
    warm="langchain_memoryos.operations.reader:_warm",
    env={"MEMORYOS_READER_PROCESS": "0"},
)
#: the bulk write's analyser: the same task without an encoder (this module's imports are light: the controller)
_ANALYSER = Helper("analyser", "langchain_memoryos.operations.reader:read_pages")


def read_pages(request: tuple[int, list[DialoguePage], Any, float | None]) -> list[PageRead]:
    """``(page_keywords, pages, embeddings, gate_threshold)``: each page read (what a helper process runs).

    ``embeddings`` ``None``: the pages' contents only (the analyser: the bulk
    write embeds a window's facts itself, in one batch).

    Example:
        >>> from langchain_memoryos.embeddings import resolve_embeddings
        >>> page = DialoguePage(id="p", user_input="I moved to Lyon.", agent_response="Nice city.")
        >>> [(c.keywords, texts, rows) for c, texts, rows in read_pages((8, [page], None, None))]
        [(['lyon', 'moved', 'city'], (), None)]
        >>> [(texts, rows.shape) for _, texts, rows in read_pages((8, [page], resolve_embeddings(), 0.5))]
        [(('The user lives in Lyon.',), (1, 384))]
    """
    page_keywords, pages, embeddings, threshold = request
    controller = HeuristicController(page_keywords=page_keywords)
    contents = [controller.page_content(p) for p in pages]
    if embeddings is None or threshold is None:
        return [(content, (), None) for content in contents]
    from langchain_memoryos.amu import summary_rows  # only with an encoder: the analyser imports no engine

    return [(content, *summary_rows(content.records, threshold, embeddings)) for content in contents]


def _warm() -> None:  # pragma: no cover - runs in the child process
    """In the reader process: the encoder loaded before the first page."""
    from langchain_memoryos.embeddings import encode_texts, resolve_embeddings

    encode_texts(resolve_embeddings(), ["warm up"])


# -- add_turn: one page, read in a thread beside the encoder (or in the reader process) ---------------------------
def _reader_enabled() -> bool:
    if _READER.failed or os.environ.get("MEMORYOS_READER_PROCESS", "0") != "1" or (os.cpu_count() or 1) < 2:
        return False
    return os.name == "posix"


def ready(timeout: float) -> bool:
    """Wait until the reader process is ready (starting it if needed and enabled); whether it is.

    Example:
        >>> import os
        >>> os.environ.get("MEMORYOS_READER_PROCESS", "0") != "1" and not ready(0.0)  # off by default
        True
    """
    return _reader_enabled() and _READER.ready(timeout)


def _read_there(page: DialoguePage, page_keywords: int, embeddings: Any, threshold: float) -> PageRead | None:
    """``page`` read in the reader process, or ``None`` (read it here).

    ``None`` while the process starts, while it reads another page, and once it failed.
    """
    if not _reader_enabled():
        return None
    future = _READER.submit((page_keywords, [page], embeddings, threshold), idle_only=True)
    if future is None:
        return None
    try:
        answer: list[PageRead] = future.result(timeout=TIMEOUT_SECONDS)
        return answer[0]
    except FutureTimeout:
        _READER.stop(f"did not answer within {TIMEOUT_SECONDS:g} s")
    except Exception:  # noqa: BLE001 - the page raised there, or the process stopped (logged): read here
        pass
    return None


def read_ahead(page: DialoguePage, controller: Any, embeddings: Any, threshold: float | None) -> PageReading | None:
    """The reading of ``page`` by ``controller`` and, with ``threshold`` and the offline encoder, its facts' rows.

    What ``add_turn``'s reader thread runs while the page is embedded
    (``MemoryOS`` gives it to the kernel as the services' ``read_ahead``). The
    reader process (:func:`ready`) does the work when it is on and idle, so
    that its Python does not hold this process's GIL; else it is done here.
    ``None`` when the controller reads nothing ahead (a model controller, a
    redefined analysis). A remote encoder is not asked ahead for texts it may
    never need.

    Example:
        >>> from langchain_memoryos.embeddings import resolve_embeddings
        >>> page = DialoguePage(id="p", user_input="I live in Lyon.", agent_response="Nice city.")
        >>> reading = read_ahead(page, HeuristicController(), resolve_embeddings(), 0.5)
        >>> reading.content.keywords, reading.rows[0], reading.rows[1].shape
        (['lyon', 'live', 'city'], ('The user lives in Lyon.',), (1, 384))
        >>> read_ahead(page, object(), resolve_embeddings(), 0.5) is None  # a controller that reads nothing ahead
        True
    """
    read = getattr(controller, "read_ahead", None)
    if read is None:
        return None
    from langchain_memoryos.embeddings import MiniLMEmbeddings  # the analyser process never loads the encoder

    local_encoder = isinstance(embeddings, MiniLMEmbeddings)
    page_keywords = getattr(controller, "page_keywords", None)
    if local_encoder and threshold is not None and isinstance(page_keywords, int):
        answer = _read_there(page, page_keywords, embeddings, threshold)
        if answer is not None:
            content, texts, rows = answer
            reading: PageReading | None = read(page, content)
            return replace(reading, rows=(texts, rows)) if reading is not None and texts else reading
    reading = read(page)
    if reading is None or threshold is None or not local_encoder:
        return reading
    from langchain_memoryos.amu import summary_rows

    texts, rows = summary_rows(reading.content.records, threshold, embeddings)
    return replace(reading, rows=(texts, rows)) if texts else reading


def page_reader(effect: EmbedAndRead, services: Services) -> Callable[[], PageReading | None] | None:
    """What the reader thread runs for an ``EmbedAndRead``: :func:`read_ahead` of its page, or ``None``.

    The memory's :attr:`~langchain_memoryos.kernel.effects.Services.read_ahead`. ``None`` when the
    page's rows are known already (a bulk write embedded them) or the controller reads nothing ahead.

    Example:
        >>> from langchain_memoryos.embeddings import resolve_embeddings
        >>> from langchain_memoryos.kernel.effects import Embed, EmbedAndRead, Services
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
    controller = services.controller
    if getattr(controller, "read_ahead", None) is None:
        return None
    page, embeddings, threshold = effect.page, services.embeddings, effect.gate_threshold
    return lambda: read_ahead(page, controller, embeddings, threshold)


# -- add_turns: a window's pages, read in the analyser process while the window before is written ----------------
def analyser() -> Helper | None:
    """The process that reads a bulk write's pages on a second core (started on first use, kept), or ``None``.

    ``None`` with one CPU, outside POSIX, and once the process failed: the
    pages are then read in this process.

    Example:
        >>> helper = analyser()
        >>> helper is None or helper.name == "analyser"
        True
    """
    if (os.cpu_count() or 1) < 2 or os.name != "posix" or _ANALYSER.failed:
        return None
    return _ANALYSER


def submit_pages(pool: Helper, page_keywords: int, pages: list[DialoguePage]) -> Future[list[PageRead]] | None:
    """The future of the pages read by ``pool``, or ``None`` while it starts (read them here).

    Example:
        >>> helper = Helper("pages", "langchain_memoryos.operations.reader:read_pages"); _ = helper.ready(120)
        >>> page = DialoguePage(id="p", user_input="I moved to Lyon.", agent_response="Nice city.")
        >>> [c.keywords for c, _, _ in submit_pages(helper, 8, [page]).result(timeout=60)]
        [['lyon', 'moved', 'city']]
        >>> helper.stop("was stopped by its example")
    """
    return pool.submit((page_keywords, pages, None, None))


def contents(
    controller: HeuristicController, pages: list[DialoguePage], found: list[PageRead] | None
) -> list[PageContent]:
    """The pages' contents: what a helper read (``found``), else read here by ``controller``.

    The bulk write makes each its page's reading (as ``add_turn``'s, without
    the facts' rows: a bulk write embeds a window's facts in one batch).

    Example:
        >>> page = DialoguePage(id="p", user_input="I'm vegan.", agent_response="Noted!")
        >>> [c.keywords for c in contents(HeuristicController(), [page], None)]
        [['noted', 'vegan']]
    """
    return [c for c, _, _ in found] if found is not None else [controller.page_content(p) for p in pages]
