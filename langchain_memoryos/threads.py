"""One-thread math for the hot path (BLAS in the encoder, OpenMP in FAISS).

The encoder's matrices and the FAISS searches are small. A second math thread
saves little on an idle machine and, measured on 2 cores, makes them 10–40×
slower as soon as another process competes for the cores (one 40-token
embedding: 13 ms → 510 ms; a 760-page FAISS search: 0.7 ms → 8 ms). The limit
is set and restored around each call (about 10 µs, 20–40 µs just after an
encoder pass) with ``threadpoolctl``; inside a limit already set on the same
thread (a read limits its ranking stages once) a nested one changes nothing.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["side_threads", "single_math_thread"]

_CONTROLLER: Any = None
_LOCK = threading.Lock()
_SIDE: ThreadPoolExecutor | None = None
_LIMITED = threading.local()  # .on: this thread is inside a single_math_thread() block


@contextlib.contextmanager
def single_math_thread() -> Iterator[None]:
    """A context manager that limits BLAS and OpenMP to one thread (restored on exit).

    Nested on one thread, only the outermost block sets and restores the
    limits (``threadpoolctl``); the inner ones find them set already.

    Example:
        >>> from threadpoolctl import threadpool_info
        >>> with single_math_thread():
        ...     with single_math_thread():  # nothing to change
        ...         pass
        ...     {pool["num_threads"] for pool in threadpool_info()}
        {1}
    """
    global _CONTROLLER
    if getattr(_LIMITED, "on", False):
        yield
        return
    if _CONTROLLER is None:
        with _LOCK:
            if _CONTROLLER is None:
                import faiss  # noqa: F401 - load its OpenMP runtime before inspecting
                import numpy  # noqa: F401 - load its BLAS before inspecting
                from threadpoolctl import ThreadpoolController

                _CONTROLLER = ThreadpoolController()
    with _CONTROLLER.limit(limits=1):
        _LIMITED.on = True
        try:
            yield
        finally:
            _LIMITED.on = False


def side_threads() -> ThreadPoolExecutor:
    """The process's two threads for work beside a call on the other core (made on first use).

    A turn's page read ahead while the page is embedded, a large user's chain
    windows ranked while its pages are: numpy and FAISS release the GIL, so
    the two run on two cores.

    Example:
        >>> side_threads().submit(sum, [1, 2]).result(), side_threads() is side_threads()
        (3, True)
    """
    global _SIDE
    with _LOCK:
        if _SIDE is None:
            _SIDE = ThreadPoolExecutor(2, thread_name_prefix="memoryos-side")
        return _SIDE
