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
from collections.abc import Callable
from pathlib import Path

__all__ = ["FileLocks"]


class FileLocks:
    """Per-user byte-range locks on one file (POSIX; elsewhere only the in-process locks apply).

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
        self._fd: int | None = None
        self._guard = threading.Lock()

    def _file(self) -> int:
        with self._guard:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            return self._fd

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
        fd = self._file()
        offset = int.from_bytes(hashlib.sha256(user_id.encode("utf-8", "surrogatepass")).digest()[:4], "big") >> 1
        fcntl.lockf(fd, fcntl.LOCK_EX, 1, offset)
        done = threading.Lock()

        def release() -> None:
            if done.acquire(blocking=False):
                fcntl.lockf(fd, fcntl.LOCK_UN, 1, offset)

        return release

    def close(self) -> None:
        """Close the lock file (releases every lock this process holds on it)."""
        with self._guard:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
