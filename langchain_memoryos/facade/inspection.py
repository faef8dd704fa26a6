"""Inspection, the methods of ``MemoryOS``: STM, threads, segments, pages, facts, persona, write log, stats.

Each sync/async pair runs one operation of :mod:`langchain_memoryos.operations.inspection`.
"""

from __future__ import annotations

from langchain_memoryos.facade import Facade
from langchain_memoryos.operations import inspection as ops
from langchain_memoryos.operations.validation import FactKindArg
from langchain_memoryos.schema import DialoguePage, MemoryRecord, MemoryStats, Persona, Segment, WriteEvent

__all__ = ["InspectionMethods"]


class InspectionMethods(Facade):
    """Inspection: what a user's memory holds, as copies.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_turn("I'm vegan.", "Noted.", user_id="u", thread_id="a")
        >>> memory.list_threads(user_id="u"), memory.stats(user_id="u").stm_pages
        (['a'], 1)
    """

    def get_stm(self, *, user_id: str, thread_id: str = "default") -> list[DialoguePage]:
        """The thread's short-term pages, oldest first.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> MemoryOS().get_stm(user_id="u")
            []
        """
        return self._sync(ops.get_stm(self._runtime, user_id, thread_id))

    async def aget_stm(self, *, user_id: str, thread_id: str = "default") -> list[DialoguePage]:
        """Async twin of :meth:`get_stm`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aget_stm(user_id="u"))
            []
        """
        return await self._async(ops.get_stm(self._runtime, user_id, thread_id))

    def list_threads(self, *, user_id: str) -> list[str]:
        """The user's threads that have short-term pages, sorted.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> m = MemoryOS(); _ = m.add_turn("hi", "hello", user_id="u", thread_id="b")
            >>> m.list_threads(user_id="u")
            ['b']
        """
        return self._sync(ops.list_threads(self._runtime, user_id))

    async def alist_threads(self, *, user_id: str) -> list[str]:
        """Async twin of :meth:`list_threads`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().alist_threads(user_id="u"))
            []
        """
        return await self._async(ops.list_threads(self._runtime, user_id))

    def list_segments(self, *, user_id: str) -> list[Segment]:
        """Mid-term segments with heat at the conversation clock, hottest first.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> MemoryOS().list_segments(user_id="u")
            []
        """
        return self._sync(ops.list_segments(self._runtime, user_id))

    async def alist_segments(self, *, user_id: str) -> list[Segment]:
        """Async twin of :meth:`list_segments`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().alist_segments(user_id="u"))
            []
        """
        return await self._async(ops.list_segments(self._runtime, user_id))

    def list_pages(self, *, user_id: str, segment_id: str | None = None) -> list[DialoguePage]:
        """Mid-term pages (of one segment, or all), oldest first.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> MemoryOS().list_pages(user_id="u")
            []
        """
        return self._sync(ops.list_pages(self._runtime, user_id, segment_id))

    def list_facts(self, *, user_id: str, kind: FactKindArg = "user") -> list[MemoryRecord]:
        """User facts (``kind="user"``) or agent traits (``kind="agent"``), oldest first.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> m = MemoryOS(); _ = m.add_fact("I'm vegan.", user_id="u")
            >>> [f.summary for f in m.list_facts(user_id="u")]
            ['The user is vegan.']
        """
        return self._sync(ops.list_facts(self._runtime, user_id, kind))

    async def alist_facts(self, *, user_id: str, kind: FactKindArg = "user") -> list[MemoryRecord]:
        """Async twin of :meth:`list_facts`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().alist_facts(user_id="u"))
            []
        """
        return await self._async(ops.list_facts(self._runtime, user_id, kind))

    def get_persona(self, *, user_id: str) -> Persona:
        """The user's persona (profile, traits, agent profile).

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> MemoryOS().get_persona(user_id="u").user_profile
            {}
        """
        return self._sync(ops.get_persona(self._runtime, user_id))

    async def aget_persona(self, *, user_id: str) -> Persona:
        """Async twin of :meth:`get_persona`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aget_persona(user_id="u")).user_traits
            {}
        """
        return await self._async(ops.get_persona(self._runtime, user_id))

    def write_log(self, *, user_id: str, limit: int | None = None) -> list[WriteEvent]:
        """The AMU write events of a user, oldest first (the last ``limit`` if given).

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> m = MemoryOS(); _ = m.add_fact("Book a table.", user_id="u")
            >>> [e.action for e in m.write_log(user_id="u")]
            ['filtered']
        """
        return self._sync(ops.write_log(self._runtime, user_id, limit))

    async def awrite_log(self, *, user_id: str, limit: int | None = None) -> list[WriteEvent]:
        """Async twin of :meth:`write_log`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().awrite_log(user_id="u"))
            []
        """
        return await self._async(ops.write_log(self._runtime, user_id, limit))

    def stats(self, *, user_id: str) -> MemoryStats:
        """Counts over all of the user's threads.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> MemoryOS().stats(user_id="u").stm_pages
            0
        """
        return self._sync(ops.stats(self._runtime, user_id))

    async def astats(self, *, user_id: str) -> MemoryStats:
        """Async twin of :meth:`stats`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().astats(user_id="u")).segments
            0
        """
        return await self._async(ops.stats(self._runtime, user_id))
