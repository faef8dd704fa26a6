"""Flat baselines for the LoCoMo benchmark, on the same pages as the memory.

Every baseline sees the pages of :func:`~langchain_memoryos.evaluation.locomo.conversation_pages`
(turn pairs, session date in the text) and returns the pages it would put in
the context for a question:

* ``last-N`` — the most recent N pages (a sliding window);
* ``bm25 top-k`` — BM25 (the ``bm25s`` library, on the same stemmed tokens as
  the memory's lexical index);
* ``dense top-k`` — cosine over the same embeddings the memory uses;
* ``hybrid top-k`` — reciprocal-rank fusion of the two (flat, no hierarchy);
* ``full context`` — every page.

Example:
    >>> import datetime as dt
    >>> from langchain_memoryos.evaluation.locomo import LocomoPage
    >>> day = dt.datetime(2023, 5, 8, tzinfo=dt.UTC)
    >>> pages = [LocomoPage("I love pottery.", "Cool!", "Ana", "Ben", ("D1:1", "D1:2"), day, 1),
    ...          LocomoPage("We went camping.", "Fun!", "Ana", "Ben", ("D1:3", "D1:4"), day, 1)]
    >>> flat = FlatPages(pages, embeddings=None)
    >>> [p.dia_ids for p in Baseline("bm25", 1).select(flat, "Who loves pottery?")]
    [('D1:1', 'D1:2')]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_memoryos.embeddings import encode_texts
from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.evaluation.locomo import LocomoPage
from langchain_memoryos.index.lexical import rrf, tokenize

__all__ = ["DEFAULT_BASELINES", "Baseline", "BaselineKind", "FlatPages", "render_pages"]

BaselineKind = Literal["last", "bm25", "dense", "hybrid", "full"]


def _bm25s() -> Any:
    try:
        import bm25s
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError(
            "the BM25 baselines need bm25s; install the 'bench' extra: pip install 'langchain-memoryos[bench]'"
        ) from exc
    return bm25s


class FlatPages:
    """One conversation's pages, indexed once for every baseline.

    Args:
        pages: the conversation's pages, in order.
        embeddings: the embeddings for the dense rankings (``None``: dense
            baselines are unavailable).
        rrf_k: rank offset of the hybrid fusion (the memory's default).
        embed_texts: what the dense ranking embeds per page (default: the
            rendered :attr:`texts`); the benchmark passes the memory's own
            page embedding texts, so dense search ranks the memory's vectors.

    Example:
        >>> import datetime as dt
        >>> day = dt.datetime(2023, 5, 8, tzinfo=dt.UTC)
        >>> pages = [LocomoPage("I love pottery.", "Cool!", "Ana", "Ben", ("D1:1", "D1:2"), day, 1),
        ...          LocomoPage("We went camping.", "Fun!", "Ana", "Ben", ("D1:3", "D1:4"), day, 1),
        ...          LocomoPage("My dog is sick.", "Oh no.", "Ana", "Ben", ("D1:5", "D1:6"), day, 1)]
        >>> flat = FlatPages(pages, embeddings=None)
        >>> flat.texts[1]
        '[8 May 2023] Ana: We went camping. Ben: Fun!'
        >>> flat.dense_order("Who went camping?")
        Traceback (most recent call last):
        ...
        langchain_memoryos.errors.InvalidInputError: dense baselines need embeddings: FlatPages(pages, embeddings=...)
    """

    def __init__(
        self,
        pages: Sequence[LocomoPage],
        *,
        embeddings: Embeddings | None,
        rrf_k: float = 20.0,
        embed_texts: Sequence[str] | None = None,
    ) -> None:
        self.pages = list(pages)
        self.texts = [page.text() for page in self.pages]
        self.rrf_k = rrf_k
        self._embeddings = embeddings
        self._bm25: Any = None
        if self.pages:
            bm25s = _bm25s()
            self._bm25 = bm25s.BM25()
            self._bm25.index([tokenize(text) for text in self.texts], show_progress=False)
        self._vectors: np.ndarray[Any, np.dtype[np.float32]] | None = None
        if embed_texts is not None and len(embed_texts) != len(self.pages):
            raise InvalidInputError(f"embed_texts: {len(embed_texts)} texts for {len(self.pages)} pages")
        if embeddings is not None and self.pages:
            self._vectors = encode_texts(embeddings, list(embed_texts) if embed_texts is not None else self.texts)

    def lexical_order(self, question: str) -> list[int]:
        """Page indices by BM25 score, best first (pages scoring 0 last, in order).

        Example:
            >>> import datetime as dt
            >>> day = dt.datetime(2023, 5, 8, tzinfo=dt.UTC)
            >>> pages = [LocomoPage("I love pottery.", "Cool!", "Ana", "Ben", ("D1:1", "D1:2"), day, 1),
            ...          LocomoPage("We went camping.", "Fun!", "Ana", "Ben", ("D1:3", "D1:4"), day, 1),
            ...          LocomoPage("My dog is sick.", "Oh no.", "Ana", "Ben", ("D1:5", "D1:6"), day, 1)]
            >>> FlatPages(pages, embeddings=None).lexical_order("Who went camping?")  # no match: in order, last
            [1, 0, 2]
        """
        if self._bm25 is None:
            return []
        scores = self._bm25.get_scores(list(dict.fromkeys(tokenize(question))))
        return [int(i) for i in np.argsort(-np.asarray(scores), kind="stable")]

    def dense_order(self, question: str) -> list[int]:
        """Page indices by cosine to the question, best first.

        Example:
            >>> import datetime as dt
            >>> from langchain_memoryos.embeddings import resolve_embeddings
            >>> day = dt.datetime(2023, 5, 8, tzinfo=dt.UTC)
            >>> pages = [LocomoPage("I love pottery.", "Cool!", "Ana", "Ben", ("D1:1", "D1:2"), day, 1),
            ...          LocomoPage("We went camping.", "Fun!", "Ana", "Ben", ("D1:3", "D1:4"), day, 1)]
            >>> FlatPages(pages, embeddings=resolve_embeddings()).dense_order("Where did they sleep in a tent?")
            [1, 0]
        """
        if not self.pages:
            return []
        if self._vectors is None or self._embeddings is None:
            raise InvalidInputError("dense baselines need embeddings: FlatPages(pages, embeddings=...)")
        query = encode_texts(self._embeddings, [question])[0]
        return [int(i) for i in np.argsort(-(self._vectors @ query), kind="stable")]


@dataclass(frozen=True)
class Baseline:
    """A flat baseline: which pages it puts in the context for a question.

    Attributes:
        kind: ``last``, ``bm25``, ``dense``, ``hybrid`` or ``full``.
        k: pages kept (ignored for ``full``).
        words: instead of ``k`` pages, fill a word budget: pages in rank order
            while the rendered context stays within this many words (a page that
            does not fit is skipped, as the memory does) — for comparisons at
            equal cost.

    Example:
        >>> Baseline("bm25", 10).name, Baseline("full").name, Baseline("hybrid", words=1000).name
        ('bm25 top-10', 'full context', 'hybrid ≤1000 words')
    """

    kind: BaselineKind
    k: int = 10
    words: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("last", "bm25", "dense", "hybrid", "full"):
            raise InvalidInputError(f"unknown baseline kind {self.kind!r}")
        if self.k < 1:
            raise InvalidInputError(f"baseline k must be >= 1, got {self.k}")
        if self.words is not None and (self.words < 1 or self.kind in ("full", "last")):
            raise InvalidInputError(
                f"a word budget needs a ranking baseline (bm25, dense, hybrid) and >= 1 word, got {self}"
            )

    @property
    def name(self) -> str:
        """The system name in reports (``bm25 top-10``, ``last-10``, ``full context``)."""
        if self.kind == "full":
            return "full context"
        if self.kind == "last":
            return f"last-{self.k}"
        if self.words is not None:
            return f"{self.kind} ≤{self.words} words"
        return f"{self.kind} top-{self.k}"

    def select(self, flat: FlatPages, question: str) -> list[LocomoPage]:
        """The pages this baseline gives for ``question``, in context order.

        Example:
            >>> import datetime as dt
            >>> day = dt.datetime(2023, 5, 8, tzinfo=dt.UTC)
            >>> pages = [LocomoPage("I love pottery.", "Cool!", "Ana", "Ben", ("D1:1", "D1:2"), day, 1),
            ...          LocomoPage("We went camping.", "Fun!", "Ana", "Ben", ("D1:3", "D1:4"), day, 1),
            ...          LocomoPage("My dog is sick.", "Oh no.", "Ana", "Ben", ("D1:5", "D1:6"), day, 1)]
            >>> flat = FlatPages(pages, embeddings=None)
            >>> [p.dia_ids for p in Baseline("last", 2).select(flat, "Who went camping?")]
            [('D1:3', 'D1:4'), ('D1:5', 'D1:6')]
            >>> [p.dia_ids for p in Baseline("bm25", words=12).select(flat, "Who went camping?")]  # 9 words each
            [('D1:3', 'D1:4')]
        """
        pages = flat.pages
        if self.kind == "full":
            return list(pages)
        if self.kind == "last":
            return list(pages[-self.k :])
        if self.kind == "bm25":
            order = flat.lexical_order(question)
        elif self.kind == "dense":
            order = flat.dense_order(question)
        else:
            fused = rrf(
                [[str(i) for i in flat.dense_order(question)], [str(i) for i in flat.lexical_order(question)]],
                k=flat.rrf_k,
            )
            order = [int(i) for i in fused]
        if self.words is None:
            return [pages[i] for i in order[: self.k]]
        chosen: list[LocomoPage] = []
        used = 0
        for i in order:
            cost = len(flat.texts[i].split())
            if used + cost <= self.words:
                chosen.append(pages[i])
                used += cost
        return chosen


#: The baselines of a default run: a window; BM25, dense and their fusion at the paper's k=10, at 20 and at the
#: memory's default budget of 1,000 words; everything.
DEFAULT_BASELINES: tuple[Baseline, ...] = (
    Baseline("last", 10),
    Baseline("bm25", 10),
    Baseline("bm25", 20),
    Baseline("bm25", words=1000),
    Baseline("dense", 10),
    Baseline("dense", 20),
    Baseline("dense", words=1000),
    Baseline("hybrid", 10),
    Baseline("hybrid", 20),
    Baseline("hybrid", words=1000),
    Baseline("full"),
)


def render_pages(pages: Sequence[LocomoPage]) -> str:
    """A baseline's context: its pages' texts, one per line, in the order given.

    Example:
        >>> import datetime as dt
        >>> render_pages([LocomoPage("Hi", "", "Ana", "Ben", ("D1:1",), dt.datetime(2023, 5, 8), 1)])
        '[8 May 2023] Ana: Hi'
    """
    return "\n".join(page.text() for page in pages)
