"""One-thread math for the hot path (BLAS in the encoder, OpenMP in FAISS).

The encoder's matrices and the FAISS searches are small. A second math thread
saves little on an idle machine and, measured on 2 cores, makes them 10–40×
slower as soon as another process competes for the cores (one 40-token
embedding: 13 ms → 510 ms; a 760-page FAISS search: 0.7 ms → 8 ms). The limit
is set and restored around each call (about 10 µs) with ``threadpoolctl``.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["single_math_thread"]

_CONTROLLER: Any = None
_LOCK = threading.Lock()


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
