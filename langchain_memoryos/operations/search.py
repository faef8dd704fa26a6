"""Search: ``MemoryOS.search`` as scored items (pages and facts), ranked as ``retrieve`` ranks them.

A search is a read-only retrieval (``touch=False``: no visit counted, nothing
written) whose ranked pages and matched facts are returned as
:class:`~langchain_memoryos.schema.SearchHit` items instead of a prompt, the
way LangGraph's ``BaseStore.search`` returns ``SearchItem`` and mem0's
``search`` returns scored memories.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from langchain_memoryos.operations.runtime import Runtime
from langchain_memoryos.operations.turns import Retrieve
from langchain_memoryos.operations.validation import check_query, check_thread, check_user
from langchain_memoryos.retrieval.recall import ReadRun, copy_page
from langchain_memoryos.schema import MemoryContext, SearchHit

__all__ = ["Search", "search"]

#: The thread a search without ``thread_id`` reads as: no thread has it, so every short-term page is ranked.
_NO_THREAD = "\x1fmemoryos-search"


@dataclass(frozen=True)
class Search:
    """Operation: a read-only retrieval, its ranked pages and matched facts as scored items.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_fact("I live in Oslo.", user_id="u")
        >>> [(h.kind, h.text) for h in Search(Retrieve(ReadRun("u", _NO_THREAD, "Oslo", touch=False)), 5).run(
        ...     memory._runtime)]
        [('fact', 'The user lives in Oslo.')]
    """

    retrieve: Retrieve
    limit: int

    def run(self, runtime: Runtime) -> list[SearchHit]:
        """Run with blocking IO."""
        return self._hits(self.retrieve.run(runtime))

    async def arun(self, runtime: Runtime) -> list[SearchHit]:
        """Run with async IO."""
        return self._hits(await self.retrieve.arun(runtime))

    def _hits(self, ctx: MemoryContext) -> list[SearchHit]:
        # the page ranking before the context's word budget: at most ``limit`` pages, copied (the ranking
        # holds the stored pages themselves)
        pages = [
            SearchHit(
                kind="page",
                id=hit.page.id,
                text=hit.page.text,
                score=float(hit.score),
                timestamp=hit.page.timestamp,
                sources=hit.page.source_ids(),
                thread_id=hit.page.thread_id,
                page=copy_page(hit.page),
            )
            for hit in self.retrieve.read.ranked[: self.limit]
        ]
        # the facts the read matched, those whose page is a hit too included: a list of items repeats nothing
        scored = sorted(self.retrieve.read.matched, key=lambda hit: -hit.score)
        facts = [
            SearchHit(
                kind="fact",
                id=hit.record.id,
                text=hit.record.summary,
                score=float(hit.score),
                timestamp=hit.record.valid_at or hit.record.updated_at,
                sources=list(hit.record.source_page_ids),
                fact=hit.record,
            )
            for hit in scored
        ]
        # the two rankings interleaved, best of each first: a fact, then a page, and so on
        merged = [hit for pair in zip_longest(facts, pages) for hit in pair if hit is not None]
        return merged[: self.limit]


def search(runtime: Runtime, query: Any, user_id: Any, limit: Any, thread_id: Any) -> Search:
    """Operation: ``MemoryOS.search`` (the arguments checked now).

    Raises:
        ValueError: an empty query, a limit below 1, a bad user or thread id.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> memory._sync(search(memory._runtime, "anything", "u", 10, None))
        []
        >>> search(memory._runtime, " ", "u", 10, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: search needs a non-empty query; ...
    """
    user = check_user(user_id)
    text = check_query(query)
    if not text.strip():
        raise ValueError("search needs a non-empty query; list_facts and list_pages list everything.")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive int, got {limit!r}.")
    thread = _NO_THREAD if thread_id is None else check_thread(thread_id)
    # "full": the whole of the thread's STM is the caller's conversation, so none of it is ranked
    return Search(Retrieve(ReadRun(user, thread, text, stm_view="full", touch=False)), limit)
