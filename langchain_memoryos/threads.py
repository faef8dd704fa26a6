"""One-thread math for the hot path (BLAS in the encoder, OpenMP in FAISS).

The encoder's matrices and the FAISS searches are small. A second math thread
saves little on an idle machine and, measured on 2 cores, makes them 10–40×
slower as soon as another process competes for the cores (one 40-token
embedding: 13 ms → 510 ms; a 760-page FAISS search: 0.7 ms → 8 ms).

OpenBLAS on its own threads (numpy's) is set to one thread for the whole
process on first use, and left so: it keeps one number of threads for all
threads of a process, so a limit set and restored around each call
(as an earlier version did) was lifted for one thread when another left its
block, and a pass then ran on two BLAS threads, rounding its products
differently (a bulk write's vectors changed from run to run in the last
bits, measured with numpy 2.4.6's OpenBLAS 0.3.31). ``MEMORYOS_KEEP_BLAS_THREADS=1``
keeps the process's OpenBLAS as it is (a process that needs threaded BLAS
elsewhere; then calls of two threads at once may round differently).
OpenMP (FAISS, and the OpenBLAS FAISS ships, built on OpenMP) keeps a number
per thread: its limit is set and restored
around each call (about 10 µs) with ``threadpoolctl``; inside a limit already
set on the same thread (a read limits its ranking stages once) a nested one
changes nothing.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["beside", "side_threads", "single_math_thread"]

T = TypeVar("T")

_CONTROLLER: Any = None
_LOCK = threading.Lock()
_SIDE: ThreadPoolExecutor | None = None
_LIMITED = threading.local()  # .on: this thread is inside a single_math_thread() block


@contextlib.contextmanager
def single_math_thread() -> Iterator[None]:
    """A context manager that limits BLAS and OpenMP to one thread (OpenMP's restored on exit).

    The first block sets OpenBLAS to one thread for the process (see the
    module's docstring). Nested on one thread, only the outermost block sets
    and restores the OpenMP limit (``threadpoolctl``); the inner ones find
    it set already.

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

                controller = ThreadpoolController()
                if os.environ.get("MEMORYOS_KEEP_BLAS_THREADS", "0") != "1":
                    # OpenBLAS on its own threads keeps one number for the process: set once (module docstring)
                    shared = [lib for lib in controller.lib_controllers if _process_wide(lib)]
                    for library in shared:
                        library.set_num_threads(1)
                    controller = controller.select(
                        filepath=[lib.filepath for lib in controller.lib_controllers if lib not in shared]
                    )
                _CONTROLLER = controller
    with _CONTROLLER.limit(limits=1):
        _LIMITED.on = True
        try:
            yield
        finally:
            _LIMITED.on = False


def _process_wide(library: Any) -> bool:
    """Whether a math library keeps one number of threads for the whole process (OpenBLAS on pthreads)."""
    return bool(library.internal_api == "openblas" and getattr(library, "threading_layer", "") == "pthreads")


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


def beside(function: Callable[..., T], *args: Any) -> Future[T]:
    """``function(*args)`` on a side thread (:func:`side_threads`), or here once the interpreter is exiting.

    At interpreter exit ``concurrent.futures`` refuses new work ("cannot
    schedule new futures after shutdown"); a write made then (a background
    turn flushed at exit, an ``atexit`` hook's) runs its side work inline.

    Example:
        >>> beside(sum, [1, 2]).result()
        3
    """
    try:
        return side_threads().submit(function, *args)
    except RuntimeError:  # the interpreter shut its thread pools down: run it here
        future: Future[T] = Future()
        try:
            future.set_result(function(*args))
        except BaseException as exc:  # noqa: BLE001 - given to the caller through the future, as a thread's
            future.set_exception(exc)
        return future
