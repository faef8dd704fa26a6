"""Facts and corrections, methods of ``MemoryOS``: add_fact, update_fact, set_agent_profile.

Each sync/async pair runs one operation of :mod:`langchain_memoryos.operations.facts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_memoryos.facade import Facade
from langchain_memoryos.operations import facts as ops
from langchain_memoryos.operations.validation import FactKindArg
from langchain_memoryos.schema import WriteEvent

__all__ = ["FactMethods"]


class FactMethods(Facade):
    """Facts and corrections: write a user fact or agent trait through the AMU path, correct it.

    Example:
        >>> from langchain_memoryos import MemoryOS
        >>> memory = MemoryOS()
        >>> fid = memory.add_fact("I live in Oslo.", user_id="u")[0].record.id
        >>> memory.update_fact(fid, "The user lives in Bergen.", user_id="u").action
        'edited'
        >>> memory.delete_fact(fid, user_id="u").action
        'deleted'
    """

    def add_fact(
        self,
        text: str,
        *,
        user_id: str,
        kind: FactKindArg = "user",
        timestamp: Any = None,
        source: str = "add_fact",
        metadata: Mapping[str, Any] | None = None,
    ) -> list[WriteEvent]:
        """Send facts straight into the AMU write path.

        The controller parses the text into typed records, one fact each ("My
        name is Ana and I live in Lisbon" is two); every record passes the
        write-gate, candidate filtering, the relation-judge and the action rule.
        The statement is the caller's decision
        (:mod:`~langchain_memoryos.amu.explicit`): never refused as "not
        personal" (a statement about a named person is stored about them),
        and what is stored keeps every content word of it, unless a later
        write replaces it; duplicates and updates are still merged.

        Args:
            text: the fact ("I'm vegan", "The user lives in Oslo", or for
                ``kind="agent"`` a trait such as "Answer in bullet points").
            user_id: whose memory.
            kind: ``"user"`` (knowledge base) or ``"agent"`` (agent traits).
            timestamp: decision time (default: the user's conversation clock;
                refused beyond ``max_clock_skew_seconds`` ahead of the wall clock).
            source: recorded on the write events.
            metadata: JSON values kept with the fact (``MemoryRecord.metadata``):
                returned by ``get_fact``, ``list_facts``, ``search`` (``filter=``
                matches them) and ``export_user``, imported back. Checked before
                anything is written, as ``add_turn``'s (string keys, finite
                numbers; a ``datetime`` becomes its ISO string). A fact fused
                with older ones carries their metadata too, this one's winning a key.

        Returns:
            One write event per record (stored, discarded, updated or filtered,
            with a reason), followed by any capacity ``evicted`` events. Text
            with no fact yields one ``filtered`` event.

        Raises:
            ValueError: on an empty text, a bad ``kind``, a bad ``timestamp`` or metadata that is not JSON.
            TypeError: metadata that is not a mapping.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> m = MemoryOS()
            >>> [e.action for e in m.add_fact("I live in Oslo.", user_id="u", metadata={"source": "crm"})]
            ['stored']
            >>> m.list_facts(user_id="u")[0].metadata
            {'source': 'crm'}
            >>> [e.action for e in m.add_fact("I live in Oslo.", user_id="u")]
            ['discarded']
            >>> events = m.add_fact("I moved to Bergen.", user_id="u", metadata={"n": 2})
            >>> [(e.action, e.record.metadata) for e in events]  # fused: both metadata
            [('updated', {'source': 'crm', 'n': 2})]
            >>> [(e.action, e.record.subject) for e in m.add_fact("Joanna adopted a dog named Max.", user_id="u")]
            [('stored', 'Joanna')]
        """
        return self._sync(ops.add_fact(self._runtime, text, user_id, kind, timestamp, source, metadata))

    async def aadd_fact(
        self,
        text: str,
        *,
        user_id: str,
        kind: FactKindArg = "user",
        timestamp: Any = None,
        source: str = "add_fact",
        metadata: Mapping[str, Any] | None = None,
    ) -> list[WriteEvent]:
        """Async twin of :meth:`add_fact`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> events = asyncio.run(MemoryOS().aadd_fact("I'm vegan.", user_id="u", metadata={"n": 1}))
            >>> [(e.action, e.record.metadata) for e in events]
            [('stored', {'n': 1})]
        """
        return await self._async(ops.add_fact(self._runtime, text, user_id, kind, timestamp, source, metadata))

    def update_fact(self, fact_id: str, summary: str, *, user_id: str) -> WriteEvent:
        """Correct a user fact or agent trait: new summary, re-embedded.

        Args:
            user_id: whose memory.
            fact_id: the id from :meth:`list_facts`.
            summary: the corrected statement, kept word for word.

        Returns:
            The ``edited`` write event (its reason quotes the old text).

        Raises:
            FactNotFoundError: when the user has no such fact.
            ValueError: on an empty summary.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> m = MemoryOS(); fid = m.add_fact("I live in Oslo.", user_id="u")[0].record.id
            >>> m.update_fact(fid, "The user lives in Bergen.", user_id="u").action
            'edited'
            >>> [f.summary for f in m.list_facts(user_id="u")]
            ['The user lives in Bergen.']
        """
        return self._sync(ops.correct_fact(self._runtime, user_id, fact_id, summary))

    async def aupdate_fact(self, fact_id: str, summary: str, *, user_id: str) -> WriteEvent:
        """Async twin of :meth:`update_fact`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> m = MemoryOS(); fid = m.add_fact("I'm vegan.", user_id="u")[0].record.id
            >>> asyncio.run(m.aupdate_fact(fid, "The user is vegetarian.", user_id="u")).record.summary
            'The user is vegetarian.'
        """
        return await self._async(ops.correct_fact(self._runtime, user_id, fact_id, summary))

    def set_agent_profile(self, profile: str, *, user_id: str) -> None:
        """Set the agent profile (the assistant's role and character) for one user.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> m = MemoryOS(); m.set_agent_profile("A terse chess coach.", user_id="u")
            >>> m.get_persona(user_id="u").agent_profile
            'A terse chess coach.'
        """
        self._sync(ops.set_agent_profile(self._runtime, user_id, profile))

    async def aset_agent_profile(self, profile: str, *, user_id: str) -> None:
        """Async twin of :meth:`set_agent_profile`.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> import asyncio
            >>> asyncio.run(MemoryOS().aset_agent_profile("A coach.", user_id="u"))
        """
        await self._async(ops.set_agent_profile(self._runtime, user_id, profile))
