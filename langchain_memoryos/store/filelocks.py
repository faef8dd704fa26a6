"""Per-user locks between processes that share an SQLite file: POSIX record locks on a sidecar file.

Each user maps to one byte of ``<database>.locks``; ``fcntl.lockf`` on that
byte blocks other processes until it is released, and the kernel drops the
locks of a process that dies, so a killed writer never leaves a user locked.
Threads of one process are kept apart by the repository's own lock.

Example:
    >>> import os, tempfile
    >>> locks = FileLocks(os.path.join(tempfile.mkdtemp(), "m.db.locks"))
    >>> release = locks.acquire("ana"); release()
"""

from __future__ import annotations

import hashlib
import os
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_memoryos.store.cache import LockTable

__all__ = ["FileLocks"]


class _LockFile:
    """One lock file of this process: its descriptor, its users, and a thread lock per user (held → byte locked)."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        self.users = 0
        self.table = LockTable()


#: The lock files open in this process, by real path: POSIX record locks belong to the process, not to a
#: descriptor (a second descriptor of the same file would neither wait for them nor keep them when closed),
#: so every FileLocks of one file shares one descriptor and one thread lock per user.
_OPEN: dict[str, _LockFile] = {}
_OPEN_GUARD = threading.Lock()


class FileLocks:
    """Per-user byte-range locks on one file (POSIX; elsewhere only the in-process locks apply).

    Every ``FileLocks`` of one file in a process shares its descriptor, and a
    user's lock is taken by one thread of the process at a time, whichever
    ``FileLocks`` (whichever memory) it goes through.

    Example:
        >>> import os, tempfile
        >>> locks = FileLocks(os.path.join(tempfile.mkdtemp(), "m.db.locks"))
        >>> release = locks.acquire("ana")
        >>> oct(locks.path.stat().st_mode & 0o777)  # the lock file is private
        '0o600'
        >>> release(); release()  # releasing twice is harmless
        >>> locks.close()
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file: _LockFile | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._guard = threading.Lock()

    def _open(self) -> _LockFile:
        with self._guard:
            if self._file is None:
                key = os.path.realpath(self.path)
                with _OPEN_GUARD:
                    found = _OPEN.get(key)
                    if found is None:
                        found = _OPEN[key] = _LockFile(self.path)
                    found.users += 1
                self._file = found
                self._finalizer = weakref.finalize(self, _drop, key, found)
            return self._file

    def acquire(self, user_id: str) -> Callable[[], None]:
        """Take the user's lock (blocking); returns its release.

        Example:
            >>> import os, tempfile
            >>> FileLocks(os.path.join(tempfile.mkdtemp(), "x.locks")).acquire("u")()
        """
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: one process per SQLite file
            return lambda: None
        file = self._open()
        offset = int.from_bytes(hashlib.sha256(user_id.encode("utf-8", "surrogatepass")).digest()[:4], "big") >> 1
        release_thread = file.table.acquire(user_id)
        try:
            fcntl.lockf(file.fd, fcntl.LOCK_EX, 1, offset)
        except BaseException:
            release_thread()
            raise
        done, owner = threading.Lock(), self  # the release keeps this FileLocks (and so the descriptor) open

        def release() -> None:
            if done.acquire(blocking=False) and owner is not None:
                try:
                    fcntl.lockf(file.fd, fcntl.LOCK_UN, 1, offset)
                finally:
                    release_thread()

        return release

    def close(self) -> None:
        """Let go of the lock file: its descriptor closes (releasing this process's locks) with its last user."""
        with self._guard:
            finalizer, self._file, self._finalizer = self._finalizer, None, None
        if finalizer is not None:
            finalizer()


def _drop(key: str, file: _LockFile) -> None:
    with _OPEN_GUARD:
        if file.fd < 0:
            return
        file.users -= 1
        if file.users <= 0:
            os.close(file.fd)
            file.fd = -1
            if _OPEN.get(key) is file:
                del _OPEN[key]
