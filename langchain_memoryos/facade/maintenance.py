"""Maintenance, the methods of ``MemoryOS``: check and repair, export and import, deletion, vacuum.

Each sync/async pair runs one operation of :mod:`langchain_memoryos.operations.maintenance`
(``vacuum`` one of :mod:`langchain_memoryos.backends`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from langgraph.store.base import BaseStore

from langchain_memoryos import backends
from langchain_memoryos.facade import Facade
from langchain_memoryos.operations import maintenance as ops
from langchain_memoryos.operations.maintenance import ImportMode

__all__ = ["MaintenanceMethods"]


class MaintenanceMethods(Facade):
    """Maintenance: a user's memory checked, repaired, exported, imported, cleared or deleted.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> a = MemoryOS(); _ = a.add_turn("Hi", "Hello", user_id="u")
        >>> b = MemoryOS(); _ = b.import_user(a.export_user(user_id="u"), user_id="v")
        >>> b.check(user_id="v"), a.delete_user(user_id="u") > 0, a.stats(user_id="u").stm_pages
        ([], True, 0)
    """

    store: BaseStore
    _backend: Any

    def clear_stm(self, *, user_id: str, thread_id: str = "default") -> int:
        """Forget one thread's short-term pages; other threads, MTM and LPM are kept.

        What earlier turns of the thread already gave MTM and LPM stays there;
        the cleared pages are not moved to MTM.

        Returns:
            How many pages were removed.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> m = MemoryOS()
            >>> _ = m.add_turn("hi", "hello", user_id="u", thread_id="a")
            >>> m.clear_stm(user_id="u", thread_id="a"), m.get_stm(user_id="u", thread_id="a")
            (1, [])
        """
        return self._sync(ops.clear_stm(self._runtime, user_id, thread_id))

    async def aclear_stm(self, *, user_id: str, thread_id: str = "default") -> int:
        """Async twin of :meth:`clear_stm`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aclear_stm(user_id="u"))
            0
        """
        return await self._async(ops.clear_stm(self._runtime, user_id, thread_id))

    def check(self, *, user_id: str) -> list[str]:
        """The problems in a user's stored memory (an empty list when every invariant holds).

        Checks that every MTM page belongs to exactly one segment, that segment
        page lists point at existing pages, STM within capacity, segments within
        the maximum, fact capacities, and that every page, segment and fact has
        its vector.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> MemoryOS().check(user_id="u")
            []
        """
        return self._sync(ops.check(self._runtime, user_id, repair=False))

    async def acheck(self, *, user_id: str) -> list[str]:
        """Async twin of :meth:`check`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().acheck(user_id="u"))
            []
        """
        return await self._async(ops.check(self._runtime, user_id, repair=False))

    def repair(self, *, user_id: str) -> list[str]:
        """Fix what :meth:`check` reports that can be fixed; returns what was done.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> MemoryOS().repair(user_id="u")
            []
        """
        return self._sync(ops.check(self._runtime, user_id, repair=True))

    async def arepair(self, *, user_id: str) -> list[str]:
        """Async twin of :meth:`repair`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().arepair(user_id="u"))
            []
        """
        return await self._async(ops.check(self._runtime, user_id, repair=True))

    def export_user(self, *, user_id: str) -> dict[str, Any]:
        """Everything stored for a user, as JSON-compatible data.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> m = MemoryOS(); _ = m.add_turn("Hi", "Hello", user_id="u")
            >>> len(m.export_user(user_id="u")["items"]) > 0
            True
        """
        return self._sync(ops.export_user(self._runtime, user_id))

    async def aexport_user(self, *, user_id: str) -> dict[str, Any]:
        """Async twin of :meth:`export_user`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aexport_user(user_id="u"))["items"]
            []
        """
        return await self._async(ops.export_user(self._runtime, user_id))

    def import_user(self, data: Mapping[str, Any], *, user_id: str | None = None, mode: ImportMode = "refuse") -> int:
        """Write an :meth:`export_user` dump back (to the same or another user id).

        The whole export is checked before anything is written: every item
        against the schema of its records (required keys, their types, the
        vectors' dimension; values JSON, times within
        ``MemoryOSConfig.max_clock_skew_seconds``) and the counts against this
        memory's capacities (``stm_capacity`` per thread, ``mtm_max_segments``,
        ``user_kb_capacity``, ``agent_traits_capacity``); an error names the
        item (its index, kind and key) and the field. The export's version stamp
        is never used: the import writes a new one, so every cached copy of the
        user, in any process, is reloaded.

        Modes:

        * ``"refuse"`` (default): a user that already has a memory is refused (nothing written).
        * ``"replace"``: the stored user is deleted (as by :meth:`delete_user`), then the export imported.
        * ``"merge"``: the export's items are added by key; an item whose key the user already has keeps
          its stored value (a page id counts in STM and MTM alike, a stored persona is kept); the
          conversation clock becomes the later of the two and the id counter the larger. Segments and
          facts over their capacity after the merge are refused; a thread's STM over ``stm_capacity``
          has its oldest pages moved to MTM, as a turn would. A merge brings back what the export has and
          the user no longer has (a forgotten fact too): use ``"replace"`` to restore a backup exactly.

        In every mode the imported user is then repaired as :meth:`repair` does
        (segment membership and centroids …), so :meth:`check` returns ``[]``.

        Returns:
            The number of the export's items written (in ``"merge"`` mode: those the user did not have).

        Raises:
            ValueError: not an export, an item that fails the checks (named), an unknown mode, or a user
                that already has a memory in ``"refuse"`` mode.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> a = MemoryOS(); _ = a.add_turn("Hi", "Hello", user_id="u")
            >>> b = MemoryOS(); b.import_user(a.export_user(user_id="u")) > 0
            True
            >>> b.import_user(a.export_user(user_id="u"))  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            langchain_memoryos.errors.InvalidInputError: import_user: user 'u' already has a memory; nothing was \
imported. Pass mode="replace" ...
            >>> b.import_user(a.export_user(user_id="u"), mode="replace") > 0, b.check(user_id="u")
            (True, [])
        """
        return self._sync(ops.import_user(self._runtime, data, user_id, mode))

    async def aimport_user(
        self, data: Mapping[str, Any], *, user_id: str | None = None, mode: ImportMode = "refuse"
    ) -> int:
        """Async twin of :meth:`import_user`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> a = MemoryOS(); _ = a.add_turn("Hi", "Hello", user_id="u")
            >>> b = MemoryOS(); asyncio.run(b.aimport_user(a.export_user(user_id="u"), user_id="v")) > 0
            True
        """
        return await self._async(ops.import_user(self._runtime, data, user_id, mode))

    def delete_user(self, *, user_id: str) -> int:
        """Delete every item of a user in every namespace of this memory's scope.

        A memory with an ``agent_id`` (or a ``namespace_prefix``) deletes the
        user's memory of that scope only: delete it in every scope you use
        (``memory.for_agent(a).delete_user(user_id=...)`` for each agent).

        A deletion that has started always finishes. Its first transaction
        marks the user with a tombstone (and a new version stamp, so every
        process drops its cached copy of the user); the rows then go in batches
        and the tombstone last. If the deletion is interrupted (a crash,
        ``kill -9``, a store error), the next access to the user, in any
        process, finishes it first: reads (``retrieve``, ``get_stm``,
        ``list_facts``, ``export_user``, ``stats``, ``check`` …) see an empty
        user, ``repair()`` and ``delete_user`` finish the deletion, and a write
        first finishes it and then starts the user afresh — nothing of the old
        user is ever rebuilt from what was left.

        On SQLite the deleted rows are overwritten with zeros
        (``secure_delete``) and the write-ahead log is checkpointed with
        ``TRUNCATE``, so the text leaves the files. PostgreSQL keeps it in dead
        rows and its WAL until ``VACUUM``: see :meth:`vacuum`.

        Returns:
            The number of items deleted.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> m = MemoryOS(); _ = m.add_turn("Hi", "Hello", user_id="u")
            >>> m.delete_user(user_id="u") > 0, m.stats(user_id="u").stm_pages, m.export_user(user_id="u")["items"]
            (True, 0, [])
        """
        return self._sync(ops.delete_user(self._runtime, user_id))

    async def adelete_user(self, *, user_id: str) -> int:
        """Async twin of :meth:`delete_user`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> m = MemoryOS(); _ = m.add_turn("Hi", "Hello", user_id="u")
            >>> asyncio.run(m.adelete_user(user_id="u")) > 0, m.get_stm(user_id="u")
            (True, [])
        """
        return await self._async(ops.delete_user(self._runtime, user_id))

    def vacuum(self, *, full: bool = False) -> str | None:
        """Reclaim the space of deleted rows, so that deleted text leaves the database files.

        * PostgreSQL (:meth:`from_postgres`): ``VACUUM store``: the dead rows
          (a deleted user's, the old versions of rewritten ones) and their TOAST
          data become free space that later writes overwrite. ``full=True`` runs
          ``VACUUM (FULL) store``: the table and its TOAST table are rewritten
          into new files at once, but the table is locked exclusively while it
          runs (every memory process waits). The server's WAL, WAL archives,
          replicas and backups keep old text until they are recycled or expire.
        * SQLite: ``VACUUM`` (the file is rebuilt, and shrinks), then the WAL is
          checkpointed. ``delete_user`` already overwrote the deleted rows and
          emptied the WAL.
        * Other stores: nothing.

        Args:
            full: PostgreSQL: ``VACUUM (FULL)``.

        Returns:
            The statement that was run (``None`` when there is none).

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import os, tempfile
            >>> with MemoryOS.from_sqlite(os.path.join(tempfile.mkdtemp(), "m.db")) as memory:
            ...     memory.vacuum()
            'VACUUM'
            >>> MemoryOS().vacuum() is None
            True
        """
        return backends.vacuum(self.store, self._backend, full=full)

    async def avacuum(self, *, full: bool = False) -> str | None:
        """Async twin of :meth:`vacuum`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().avacuum()) is None
            True
        """
        return await asyncio.to_thread(self.vacuum, full=full)
