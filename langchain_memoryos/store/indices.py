"""The derived index cache of one user: FAISS indices, BM25 and the chain windows, derived from the records.

The records (:class:`~langchain_memoryos.store.state.UserState`) are the truth;
these indices are what retrieval and the write stages search, kept in step by
the state's mutations, and built when a user is loaded: from the records, or
restored from the user's index snapshot (:mod:`~langchain_memoryos.store.snapshot`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from langchain_memoryos.index.chain import ChainWindows
from langchain_memoryos.index.lexical import LexicalIndex, page_tokens
from langchain_memoryos.index.vector_index import Vector, VectorIndex
from langchain_memoryos.schema import DialoguePage, page_words

__all__ = ["DerivedIndices"]


@dataclass
class DerivedIndices:
    """FAISS indices of a user's MTM pages, segments, facts and STM pages; BM25 and chain windows over all pages.

    Attributes:
        dimension: the embedding dimension.
        pages, segments, stm: the FAISS indices (cosine on unit vectors).
        facts: one FAISS index per fact kind (``"user"``, ``"agent"``).
        stm_vectors: the STM pages' vectors, by page id.

    Example:
        >>> import numpy as np
        >>> ix = DerivedIndices(2)
        >>> ix.add_page(DialoguePage(id="p", user_input="pottery class", agent_response=""), np.ones(2, np.float32))
        >>> from langchain_memoryos.index.lexical import tokenize
        >>> len(ix.pages), [k for k, _ in ix.lexicon([]).search(tokenize("pottery"), 3)]
        (1, [])
    """

    dimension: int
    pages: VectorIndex = field(init=False)
    segments: VectorIndex = field(init=False)
    facts: dict[str, VectorIndex] = field(init=False)
    stm: VectorIndex = field(init=False)
    stm_vectors: dict[str, Vector] = field(default_factory=dict)
    _lexicon: LexicalIndex | None = field(default=None, repr=False)
    _chain: ChainWindows | None = field(default=None, repr=False)
    _words: dict[str, int] = field(default_factory=dict, repr=False)
    _sides: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.stm = VectorIndex(self.dimension)
        self.pages = VectorIndex(self.dimension)
        self.segments = VectorIndex(self.dimension)
        self.facts = {"user": VectorIndex(self.dimension), "agent": VectorIndex(self.dimension)}

    def lexicon(self, every_page: Iterable[DialoguePage]) -> LexicalIndex:
        """The BM25 index over ``every_page``, built on first use and then kept in step.

        Example:
            >>> from langchain_memoryos.index.lexical import tokenize
            >>> page = DialoguePage(id="p", user_input="pottery class", agent_response="")
            >>> [k for k, _ in DerivedIndices(2).lexicon([page]).search(tokenize("pottery"), 3)]
            ['p']
        """
        if self._lexicon is None:
            self._lexicon = LexicalIndex()
            for page in every_page:
                self._lexicon.add(page.id, page_tokens(page))
        return self._lexicon

    def chain(
        self, every_page: Callable[[], Iterable[tuple[DialoguePage, Vector]]], gap_seconds: float
    ) -> ChainWindows:
        """The dialogue-chain windows over ``every_page()`` (page, vector), built on first use and then kept in step.

        Built again if asked with another ``gap_seconds``.

        Example:
            >>> import numpy as np
            >>> pages = [(DialoguePage(id=i, user_input="x", agent_response=""), np.ones(2, np.float32)) for i in "ab"]
            >>> ix = DerivedIndices(2); w = ix.chain(lambda: pages, 60)
            >>> ix.page_added(DialoguePage(id="c", user_input="y", agent_response=""), np.ones(2, np.float32))
            >>> w.members(2, "b"), w.members(3, "c")
            (('a', 'b'), ('a', 'b', 'c'))
        """
        if self._chain is None or self._chain.gap_seconds != gap_seconds:
            self._chain = ChainWindows(self.dimension, gap_seconds=gap_seconds)
            self._chain.build(every_page())
        return self._chain

    def restore(self, lexicon: LexicalIndex) -> None:
        """Use a restored BM25 index (from a snapshot) as the lexicon.

        Example:
            >>> ix = DerivedIndices(2); ix.restore(LexicalIndex())
            >>> ix.lexicon([DialoguePage(id="p", user_input="x", agent_response="")]).bags().keys  # the restored one
            []
        """
        self._lexicon = lexicon

    def restore_chain(self, chain: ChainWindows) -> None:
        """Use restored chain windows (from a snapshot); asked with another gap, they are built again.

        Example:
            >>> ix = DerivedIndices(2); ix.restore_chain(ChainWindows(2, gap_seconds=60))
            >>> ix.built_chain().gap_seconds
            60.0
        """
        self._chain = chain

    def built_chain(self) -> ChainWindows | None:
        """The chain windows if they are built (``None`` otherwise; nothing is built).

        Example:
            >>> DerivedIndices(2).built_chain() is None
            True
        """
        return self._chain

    def page_words(self, page: DialoguePage) -> int:
        """:func:`~langchain_memoryos.schema.page_words` of a page, remembered by page id (a page's text never changes).

        Example:
            >>> DerivedIndices(2).page_words(DialoguePage(id="p", user_input="I paint.", agent_response="Nice!"))
            5
        """
        words = self._words.get(page.id)
        if words is None:
            words = self._words[page.id] = page_words(page)
        return words

    def side_words(self, page: DialoguePage, side: str) -> int:
        """Words one side of a page shows (its label and text; 0 when empty), remembered by page id.

        Example:
            >>> p = DialoguePage(id="p", user_input="I paint daily.", agent_response="Nice!")
            >>> DerivedIndices(2).side_words(p, "user"), DerivedIndices(2).side_words(p, "agent")
            (4, 2)
        """
        words = self._sides.get(page.id)
        if words is None:
            words = self._sides[page.id] = (
                len(page.user_label.split()) + len(page.user_input.split()) if page.user_input else 0,
                len(page.agent_label.split()) + len(page.agent_response.split()) if page.agent_response else 0,
            )
        return words[0] if side == "user" else words[1]

    def add_page(self, page: DialoguePage, vector: Vector) -> None:
        """Index an MTM page (FAISS; BM25 and the chain once built)."""
        self.pages.add(page.id, vector)
        self.page_added(page, vector)

    def page_added(self, page: DialoguePage, vector: Vector) -> None:
        """Keep BM25 and the chain windows in step with a page added (nothing while they are not built)."""
        self._words.pop(page.id, None)
        self._sides.pop(page.id, None)
        if self._lexicon is None and self._chain is None:
            return
        tokens = page_tokens(page)  # once for both
        if self._lexicon is not None:
            self._lexicon.add(page.id, tokens)
        if self._chain is not None:
            self._chain.add(page, vector, tokens)

    def pages_removed(self, page_ids: list[str]) -> None:
        """Keep BM25 and the chain windows in step with pages removed (nothing while they are not built)."""
        for page_id in page_ids:
            self._words.pop(page_id, None)
            self._sides.pop(page_id, None)
        if self._lexicon is not None:
            self._lexicon.remove(page_ids)
        if self._chain is not None:
            self._chain.remove(page_ids)
