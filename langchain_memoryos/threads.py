"""One-thread math for the hot path (BLAS in the encoder, OpenMP in FAISS).

The encoder's matrices and the FAISS searches are small. A second math thread
saves little on an idle machine and, measured on 2 cores, makes them 10–40×
slower as soon as another process competes for the cores (one 40-token
embedding: 13 ms → 510 ms; a 760-page FAISS search: 0.7 ms → 8 ms). The limit
is set and restored around each call (about 10 µs) with ``threadpoolctl``.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["side_threads", "single_math_thread"]

_CONTROLLER: Any = None
_LOCK = threading.Lock()
_SIDE: ThreadPoolExecutor | None = None


def single_math_thread() -> Any:
    """A context manager that limits BLAS and OpenMP to one thread.

    Returns:
        A ``threadpoolctl`` limit context (restores the previous limits on exit).

    Example:
        >>> from threadpoolctl import threadpool_info
        >>> with single_math_thread():
        ...     {pool["num_threads"] for pool in threadpool_info()}
        {1}
    """
    global _CONTROLLER
    if _CONTROLLER is None:
        with _LOCK:
            if _CONTROLLER is None:
                import faiss  # noqa: F401 - load its OpenMP runtime before inspecting
                import numpy  # noqa: F401 - load its BLAS before inspecting
                from threadpoolctl import ThreadpoolController

                _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1)


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
