"""Search, the methods of ``MemoryOS``: scored pages and facts, ranked as ``retrieve`` ranks them.

Each sync/async pair runs one operation of :mod:`langchain_memoryos.operations.search`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_memoryos.facade import Facade
from langchain_memoryos.operations import search as ops
from langchain_memoryos.schema import SearchHit

__all__ = ["SearchMethods"]


class SearchMethods(Facade):
    """Search: a read-only retrieval whose ranked pages and facts come back as scored items.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_turn("I adopted a cat named Miso.", "Lovely!", user_id="u")
        >>> [h.kind for h in memory.search("my cat", user_id="u", kinds=("page",))]
        ['page']
    """

    def search(
        self,
        query: str,
        *,
        user_id: str,
        thread_id: str | None = None,
        limit: int = 10,
        offset: int = 0,
        filter: Mapping[str, Any] | None = None,  # noqa: A002 - LangGraph's BaseStore.search name
        since: Any = None,
        until: Any = None,
        kinds: Sequence[str] = ("page", "fact"),
        messages: Iterable[Any] | None = None,
    ) -> list[SearchHit]:
        """Search a user's memory: scored pages and facts, ranked as :meth:`retrieve` ranks them.

        Read-only (as ``retrieve(..., touch=False)``: no visit is counted,
        nothing is written). Each item carries its id, score, timestamp and
        sources, like LangGraph's ``BaseStore.search`` (``SearchItem``) and
        mem0's ``search``. The pages come in the retrieval's page ranking
        (before the context's word budget), the facts in its fact ranking
        (those above ``MemoryOSConfig``'s fact threshold); the list alternates
        them, a fact first, so the best of each comes first. A score is
        comparable within its kind only.

        Args:
            query: what to look for (non-empty).
            user_id: whose memory.
            thread_id: leave out this thread's short-term pages (the turns a
                caller already has, as ``retrieve`` shows them apart); ``None``
                ranks every page.
            limit: at most this many items.
            offset: skip this many items first (the next page of results).
            filter: only pages (and facts) whose metadata holds each
                ``key: value`` (a list value, such as ``source_id``, holds it
                when it contains it), as LangGraph's ``BaseStore.search`` filters.
            since: only items said (pages) or written (facts) at or after this time.
            until: only items before this time.
            kinds: ``("page",)``, ``("fact",)`` or both.
            messages: the messages the caller already has (LangChain messages
                or role dicts): the pages of their turns are left out, as
                ``retrieve(messages=...)`` leaves them out.

        Returns:
            The items, best first (see above).

        Raises:
            ValueError: an empty query or a ``limit`` below 1.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> m = MemoryOS()
            >>> _ = m.add_turn("I adopted a cat named Miso.", "Lovely!", user_id="u", metadata={"source_id": "D1"})
            >>> _ = m.add_fact("I'm vegan.", user_id="u")
            >>> hits = m.search("my cat", user_id="u")
            >>> [(h.kind, h.page.user_input, h.sources) for h in hits if h.kind == "page"]
            [('page', 'I adopted a cat named Miso.', ['D1'])]
            >>> [(h.kind, h.text) for h in hits if h.kind == "fact"]  # the turn's fact, written with it, and the other
            [('fact', 'The user adopted a cat named Miso.'), ('fact', 'The user is vegan.')]
            >>> hits[0].id == hits[0].fact.id
            True
            >>> [h.kind for h in m.search("my cat", user_id="u", filter={"source_id": "D1"}, kinds=("page",))]
            ['page']
            >>> m.search("my cat", user_id="u", kinds=("page",), offset=1)
            []
        """
        where = {"offset": offset, "filter": filter, "since": since, "until": until, "kinds": kinds}
        return self._sync(ops.search(self._runtime, query, user_id, limit, thread_id, messages=messages, **where))

    async def asearch(
        self,
        query: str,
        *,
        user_id: str,
        thread_id: str | None = None,
        limit: int = 10,
        offset: int = 0,
        filter: Mapping[str, Any] | None = None,  # noqa: A002 - LangGraph's BaseStore.search name
        since: Any = None,
        until: Any = None,
        kinds: Sequence[str] = ("page", "fact"),
        messages: Iterable[Any] | None = None,
    ) -> list[SearchHit]:
        """Async twin of :meth:`search`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().asearch("anything", user_id="u"))
            []
        """
        where = {"offset": offset, "filter": filter, "since": since, "until": until, "kinds": kinds}
        return await self._async(
            ops.search(self._runtime, query, user_id, limit, thread_id, messages=messages, **where)
        )
