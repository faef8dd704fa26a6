"""The LoCoMo benchmark's protocols: how a conversation is fed to the memory and where its questions are asked.

Example:
    >>> [(p.name, p.ingest_thread("conv-26"), p.question_thread("conv-26")) for p in PROTOCOLS.values()]
    [('harness', 'locomo', 'questions'), ('plain', 'conv-26', 'conv-26'), ('fresh', 'conv-26', 'questions')]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_memoryos.evaluation.locomo import (
    LocomoPage,
    conversation_pages,
    ingest_conversation,
    ingest_plain,
    plain_pages,
    plain_turn,
)
from langchain_memoryos.schema import DialoguePage

__all__ = ["PROTOCOLS", "Protocol"]


@dataclass(frozen=True)
class Protocol:
    """How a conversation is fed to the memory and where its questions are asked.

    The flat baselines rank the very pages the memory stores under the
    protocol (:meth:`pages`), so each protocol compares memory and flat search
    on equal pages.

    Attributes:
        name: ``harness``, ``plain`` or ``fresh``.
        plain: pages by the plain public API (:func:`~langchain_memoryos.evaluation.locomo.plain_pages`)
            rather than the harness pairing (:func:`~langchain_memoryos.evaluation.locomo.conversation_pages`).
        on_thread: questions asked on the conversation's own thread (else from a new thread, ``"questions"``).
        description: one line for reports.

    Example:
        >>> p = PROTOCOLS["plain"]
        >>> p.ingest_thread("conv-26"), p.question_thread("conv-26")
        ('conv-26', 'conv-26')
        >>> PROTOCOLS["fresh"].question_thread("conv-26"), PROTOCOLS["harness"].ingest_thread("conv-26")
        ('questions', 'locomo')
    """

    name: str
    plain: bool
    on_thread: bool
    description: str

    def pages(self, sample: Mapping[str, Any]) -> list[LocomoPage]:
        """The conversation's pages under this protocol (what the memory stores and the baselines rank).

        Example:
            >>> sample = {"conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": [
            ...     {"speaker": "B", "dia_id": "D1:1", "text": "Hi"},
            ...     {"speaker": "A", "dia_id": "D1:2", "text": "Yo"}]}}
            >>> [p.dia_ids for p in PROTOCOLS["harness"].pages(sample)]  # a lone speaker_b turn, then speaker_a's
            [('D1:1',), ('D1:2',)]
            >>> [p.dia_ids for p in PROTOCOLS["fresh"].pages(sample)]  # paired by position
            [('D1:1', 'D1:2')]
        """
        return plain_pages(sample) if self.plain else conversation_pages(sample)

    def embedding_texts(self, pages: Sequence[LocomoPage]) -> list[str]:
        r"""What the memory embeds for each page under this protocol (:attr:`DialoguePage.embedding_text`).

        The flat dense baselines rank by these, so they rank the memory's own page
        vectors (and the shared embedding cache computes each once).

        Example:
            >>> import datetime as dt
            >>> page = LocomoPage("I moved.", "Nice!", "Ana", "Ben", ("D1:1", "D1:2"), dt.datetime(2023, 5, 8), 1)
            >>> PROTOCOLS["harness"].embedding_texts([page]), PROTOCOLS["plain"].embedding_texts([page])
            (['Ana: I moved.\nBen: Nice!'], ['Ana: I moved.\nBen: Nice!'])
        """
        out: list[str] = []
        for page in pages:
            if self.plain:
                user, agent = plain_turn(page)
                stored = DialoguePage(id="", user_input=user, agent_response=agent)
            else:
                names = {"user_name": page.user_speaker, "agent_name": page.agent_speaker}
                stored = DialoguePage(
                    id="", user_input=page.user_input, agent_response=page.agent_response, metadata=names
                )
            out.append(stored.embedding_text)
        return out

    def ingest_thread(self, user_id: str) -> str:
        """The thread the conversation is fed on (the harness: ``"locomo"``; plain: the conversation's own).

        Example:
            >>> PROTOCOLS["harness"].ingest_thread("c")
            'locomo'
        """
        return user_id if self.plain else "locomo"

    def question_thread(self, user_id: str) -> str:
        """The thread questions are asked on.

        Example:
            >>> PROTOCOLS["plain"].question_thread("c")
            'c'
        """
        return self.ingest_thread(user_id) if self.on_thread else "questions"

    def ingest(
        self, memory: Any, sample: Mapping[str, Any], *, user_id: str, on_page: Callable[[], object] | None = None
    ) -> int:
        """Feed the conversation to ``memory``; return the pages added.

        Example:
            >>> from langchain_memoryos import MemoryOS
            >>> sample = {"conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": [
            ...     {"speaker": "B", "dia_id": "D1:1", "text": "Hi"},
            ...     {"speaker": "A", "dia_id": "D1:2", "text": "Yo"}]}}
            >>> m = MemoryOS(); PROTOCOLS["plain"].ingest(m, sample, user_id="c")
            1
            >>> m.get_stm(user_id="c", thread_id="c")[0].user_input
            'B: Hi'
        """
        if self.plain:
            return ingest_plain(memory, sample, user_id=user_id, thread_id=self.ingest_thread(user_id), on_page=on_page)
        return ingest_conversation(
            memory, sample, user_id=user_id, thread_id=self.ingest_thread(user_id), on_page=on_page
        )


#: The three protocols: the harness pairing, the plain public API on the conversation's thread, and plain
#: from a new thread.
PROTOCOLS: dict[str, Protocol] = {
    "harness": Protocol(
        "harness",
        plain=False,
        on_thread=False,
        description="speaker_a + speaker_b pairs, names as metadata, one minute per page; questions from a new thread",
    ),
    "plain": Protocol(
        "plain",
        plain=True,
        on_thread=True,
        description="add_turn('Name: text', 'Name: text') pairs by position, one timestamp per session; "
        "questions on the conversation's thread",
    ),
    "fresh": Protocol(
        "fresh",
        plain=True,
        on_thread=False,
        description="plain ingest; questions from a new thread",
    ),
}
