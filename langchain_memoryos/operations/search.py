"""Search: ``MemoryOS.search`` as scored items (pages and facts), ranked as ``retrieve`` ranks them.

A search is a read-only retrieval (``touch=False``: no visit counted, nothing
written) whose ranked pages and matched facts are returned as
:class:`~langchain_memoryos.schema.SearchHit` items instead of a prompt, the
way LangGraph's ``BaseStore.search`` returns ``SearchItem`` and mem0's
``search`` returns scored memories.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from langchain_memoryos.errors import InvalidInputError, InvalidTypeError
from langchain_memoryos.operations.runtime import Runtime
from langchain_memoryos.operations.turns import Retrieve, checked_messages
from langchain_memoryos.operations.validation import check_query, check_thread, check_user
from langchain_memoryos.retrieval.recall import ReadRun, copy_page
from langchain_memoryos.schema import MemoryContext, SearchHit, ensure_utc
from langchain_memoryos.schema.messages import turn_keys

__all__ = ["KINDS", "Search", "search"]

#: The thread a search without ``thread_id`` reads as: no thread has it, so every short-term page is ranked.
_NO_THREAD = "\x1fmemoryos-search"


#: The kinds of item a search returns.
KINDS = ("page", "fact")


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
    offset: int = 0
    filter: Mapping[str, Any] | None = None
    since: _dt.datetime | None = None
    until: _dt.datetime | None = None
    kinds: tuple[str, ...] = KINDS

    def run(self, runtime: Runtime) -> list[SearchHit]:
        """Run with blocking IO."""
        return self._hits(self.retrieve.run(runtime))

    async def arun(self, runtime: Runtime) -> list[SearchHit]:
        """Run with async IO."""
        return self._hits(await self.retrieve.arun(runtime))

    def _keep(self, metadata: Mapping[str, Any], when: _dt.datetime) -> bool:
        if self.since is not None and when < self.since:
            return False
        if self.until is not None and when >= self.until:
            return False
        return not self.filter or all(_matches(metadata.get(k), v) for k, v in self.filter.items())

    def _hits(self, ctx: MemoryContext) -> list[SearchHit]:
        # the page ranking before the context's word budget, copied (the ranking holds the stored pages themselves)
        wanted = self.offset + self.limit
        pages: list[SearchHit] = []
        for hit in self.retrieve.read.ranked if "page" in self.kinds else []:
            if len(pages) == wanted:
                break
            if self._keep(hit.page.metadata, hit.page.timestamp):
                pages.append(
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
                )
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
            if "fact" in self.kinds and self._keep(getattr(hit.record, "metadata", None) or {}, hit.record.updated_at)
        ]
        # the two rankings interleaved, best of each first: a fact, then a page, and so on
        merged = [hit for pair in zip_longest(facts, pages) for hit in pair if hit is not None]
        return merged[self.offset : wanted]


def _matches(value: Any, wanted: Any) -> bool:
    """A metadata value against a filter's: equal, or — for a list such as ``source_id`` — holding it."""
    if value == wanted:
        return True
    return isinstance(value, list) and not isinstance(wanted, list) and wanted in value


def search(
    runtime: Runtime,
    query: Any,
    user_id: Any,
    limit: Any,
    thread_id: Any,
    *,
    offset: Any = 0,
    filter: Any = None,  # noqa: A002 - LangGraph's BaseStore.search name
    since: Any = None,
    until: Any = None,
    kinds: Any = KINDS,
    messages: Any = None,
) -> Search:
    """Operation: ``MemoryOS.search`` (the arguments checked now).

    Raises:
        ValueError: an empty query, a limit below 1, a negative offset, an unknown kind, a bad user or thread id.
        TypeError: a filter that is not a mapping, a time that is not one.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> memory._sync(search(memory._runtime, "anything", "u", 10, None))
        []
        >>> search(memory._runtime, " ", "u", 10, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: search needs a non-empty query; ...
        >>> search(memory._runtime, "x", "u", 10, None, kinds=("pages",))
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: kinds must name 'page' and/or 'fact', got ('pages',).
    """
    user = check_user(user_id)
    text = check_query(query)
    if not text.strip():
        raise InvalidInputError("search needs a non-empty query; list_facts and list_pages list everything.")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidInputError(f"limit must be a positive int, got {limit!r}.")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidInputError(f"offset must be an int >= 0, got {offset!r}.")
    if filter is not None and not isinstance(filter, Mapping):
        raise InvalidTypeError(f"filter must be a mapping of metadata keys to values, got {type(filter).__name__}.")
    if isinstance(kinds, str) or not isinstance(kinds, tuple | list) or not kinds or set(kinds) - set(KINDS):
        raise InvalidInputError(f"kinds must name 'page' and/or 'fact', got {kinds!r}.")
    window = (None if since is None else ensure_utc(since), None if until is None else ensure_utc(until))
    thread = _NO_THREAD if thread_id is None else check_thread(thread_id)
    known = frozenset() if messages is None else turn_keys(checked_messages(messages))
    # rank every page when only some will do (a filter, a time window); else as many as are asked for
    depth = 1 << 30 if filter or since is not None or until is not None else offset + limit
    # "full": the whole of the thread's STM is the caller's conversation, so none of it is ranked
    read = ReadRun(user, thread, text, stm_view="full", touch=False, known=known, depth=depth)
    return Search(Retrieve(read), limit, offset, dict(filter or {}), window[0], window[1], tuple(kinds))
