"""The derived index cache of one user: FAISS indices and BM25, rebuilt from the records, never stored.

The records (:class:`~langchain_memoryos.store.state.UserState`) are the truth;
these indices are what retrieval and the write stages search, kept in step by
the state's mutations and rebuilt when a user is loaded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from langchain_memoryos.retrieval.lexical import LexicalIndex, page_tokens
from langchain_memoryos.schema import DialoguePage
from langchain_memoryos.store.vector_index import Vector, VectorIndex

__all__ = ["DerivedIndices"]


@dataclass
class DerivedIndices:
    """FAISS indices over a user's MTM pages, segments, facts (user, agent) and STM pages; BM25 over all pages.

    Attributes:
        dimension: the embedding dimension.
        pages, segments, stm: the FAISS indices (cosine on unit vectors).
        facts: one FAISS index per fact kind (``"user"``, ``"agent"``).
        stm_vectors: the STM pages' vectors, by page id.

    Example:
        >>> import numpy as np
        >>> ix = DerivedIndices(2)
        >>> ix.add_page(DialoguePage(id="p", user_input="pottery class", agent_response=""), np.ones(2, np.float32))
        >>> from langchain_memoryos.retrieval.lexical import tokenize
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

    def __post_init__(self) -> None:
        self.stm = VectorIndex(self.dimension)
        self.pages = VectorIndex(self.dimension)
        self.segments = VectorIndex(self.dimension)
        self.facts = {"user": VectorIndex(self.dimension), "agent": VectorIndex(self.dimension)}

    def lexicon(self, every_page: Iterable[DialoguePage]) -> LexicalIndex:
        """The BM25 index over ``every_page``, built on first use and then kept in step.

        Example:
            >>> from langchain_memoryos.retrieval.lexical import tokenize
            >>> page = DialoguePage(id="p", user_input="pottery class", agent_response="")
            >>> [k for k, _ in DerivedIndices(2).lexicon([page]).search(tokenize("pottery"), 3)]
            ['p']
        """
        if self._lexicon is None:
            self._lexicon = LexicalIndex()
            for page in every_page:
                self._lexicon.add(page.id, page_tokens(page))
        return self._lexicon

    def add_page(self, page: DialoguePage, vector: Vector) -> None:
        """Index an MTM page (FAISS, and BM25 once built)."""
        self.pages.add(page.id, vector)
        self.lexicon_add(page)

    def lexicon_add(self, page: DialoguePage) -> None:
        """Keep BM25 in step with a page added (nothing while it is not built)."""
        if self._lexicon is not None:
            self._lexicon.add(page.id, page_tokens(page))

    def lexicon_remove(self, page_ids: list[str]) -> None:
        """Keep BM25 in step with pages removed (nothing while it is not built)."""
        if self._lexicon is not None:
            self._lexicon.remove(page_ids)
