"""Forgetting, the methods of ``MemoryOS``: forget, delete_fact: what is named, gone from every tier.

Each sync/async pair runs one operation of :mod:`langchain_memoryos.operations.forget`.
"""

from __future__ import annotations

from langchain_memoryos.facade import Facade
from langchain_memoryos.operations import forget as ops
from langchain_memoryos.schema import ForgetReport, WriteEvent

__all__ = ["ForgetMethods"]


class ForgetMethods(Facade):
    """Forgetting: what the user asks to be forgotten leaves the pages, segments, facts, log and exports.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS(); _ = memory.add_turn("My PIN is 4417.", "Got it.", user_id="u")
        >>> memory.forget(user_id="u", query="PIN 4417").texts
        ['My PIN is 4417.']
        >>> [(p.user_input, p.agent_response) for p in memory.get_stm(user_id="u")]  # the sentence left the page
        [('', 'Got it.')]
    """

    def forget(
        self,
        *,
        user_id: str,
        fact_id: str | None = None,
        page_id: str | None = None,
        query: str | None = None,
        dry_run: bool = False,
    ) -> ForgetReport:
        """Forget a fact, a page, or what a query names: gone from every tier, the log and exports.

        A fact goes with the sentences it was made from (in STM too): each of
        its source pages loses them (the rest of the page stays, re-embedded
        and re-indexed) or is deleted when nothing else is left; whatever was
        derived from them goes too — segment keywords and summaries, profile
        entries and traits, the fact's write-log text (the events stay,
        scrubbed), the index snapshot. A forgotten turn leaves a salted hash,
        so adding it again or resending the conversation does not bring it
        back. See :mod:`langchain_memoryos.amu.forgetting` for the exact rules.
        On SQLite the text then leaves the file and its WAL; on PostgreSQL the
        old row versions stay in the table as dead tuples until
        :meth:`vacuum` (``VACUUM store``; ``full=True`` rewrites the table).

        Args:
            user_id: whose memory.
            fact_id: a fact's id, as the context and tools show it (``f:12``) or stored.
            page_id: a page's id, as search and the tools show it (``p:40``) or stored; the whole page goes.
            query: forget every fact and sentence that holds all of the query's
                content words (matched lexically, never "the top hits whatever they are").
            dry_run: only report what would be forgotten.

        Returns:
            What was (or would be) removed.

        Raises:
            ValueError: not exactly one of ``fact_id``, ``page_id``, ``query``.
            FactNotFoundError: no such fact. PageNotFoundError: no such page.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> m = MemoryOS()
            >>> _ = m.add_turn("My PIN is 4417. I like chess.", "Got it.", user_id="u")
            >>> report = m.forget(user_id="u", query="PIN 4417")
            >>> report.texts, [p.user_input for p in m.get_stm(user_id="u")]
            (['My PIN is 4417.'], ['I like chess.'])
            >>> "4417" in str(m.export_user(user_id="u"))
            False
        """
        return self._sync(
            ops.forget(self._runtime, user_id, fact_id=fact_id, page_id=page_id, query=query, dry_run=dry_run)
        )

    async def aforget(
        self,
        *,
        user_id: str,
        fact_id: str | None = None,
        page_id: str | None = None,
        query: str | None = None,
        dry_run: bool = False,
    ) -> ForgetReport:
        """Async twin of :meth:`forget`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aforget(user_id="u", query="anything")).removed
            False
        """
        return await self._async(
            ops.forget(self._runtime, user_id, fact_id=fact_id, page_id=page_id, query=query, dry_run=dry_run)
        )

    def delete_fact(self, fact_id: str, *, user_id: str) -> WriteEvent:
        """Forget a user fact or agent trait: ``forget(fact_id=...)``, its ``deleted`` event.

        Args:
            user_id: whose memory.
            fact_id: the id from :meth:`list_facts` or the context (``f:12``).

        Returns:
            The ``deleted`` write event.

        Raises:
            FactNotFoundError: when the user has no such fact.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> m = MemoryOS(); fid = m.add_fact("I'm vegan.", user_id="u")[0].record.id
            >>> m.delete_fact(fid, user_id="u").action, m.list_facts(user_id="u")
            ('deleted', [])
            >>> [e.record.summary for e in m.write_log(user_id="u")]
            ['[deleted]', '[deleted]']
        """
        return self.forget(user_id=user_id, fact_id=fact_id).events[0]

    async def adelete_fact(self, fact_id: str, *, user_id: str) -> WriteEvent:
        """Async twin of :meth:`delete_fact`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> m = MemoryOS(); fid = m.add_fact("I'm vegan.", user_id="u")[0].record.id
            >>> asyncio.run(m.adelete_fact(fid, user_id="u")).action
            'deleted'
        """
        return (await self.aforget(user_id=user_id, fact_id=fact_id)).events[0]
