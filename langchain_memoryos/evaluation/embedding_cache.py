"""Embeddings that compute each distinct text once: shared by every system of a benchmark run.

In one LoCoMo run the same texts are embedded again and again: both memory
presets embed the same pages, every dense and hybrid baseline embeds the same
question, and a cross-validation grid asks the same questions at every grid
point. :class:`CachedEmbeddings` wraps any LangChain ``Embeddings`` and keeps
each text's L2-normalised row, so a repeat costs a dictionary look-up.
(LangChain's ``CacheBackedEmbeddings`` lives in ``langchain-classic``, which the
``bench`` extra does not pull, stores JSON bytes and does not forward
``model_name``, from which the memory picks its similarity thresholds.)

Example:
    >>> from langchain_memoryos.embeddings import resolve_embeddings
    >>> cached = CachedEmbeddings(resolve_embeddings())
    >>> a = cached.embed_query("Where does Ana live?")
    >>> b = cached.embed_documents(["Where does Ana live?", "Oslo"])
    >>> a == b[0], (cached.hits, cached.misses)
    (True, (1, 2))
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_memoryos.embeddings import encode_texts

__all__ = ["CachedEmbeddings"]


class CachedEmbeddings(Embeddings):
    """A caching wrapper: every distinct text is embedded once by ``inner``.

    Rows are those of :func:`~langchain_memoryos.embeddings.encode_texts`
    (L2-normalised float32). ``model_name`` and ``dimension`` are forwarded, so a
    memory built on the wrapper picks the same thresholds as on ``inner``.

    Args:
        inner: the embeddings that compute what is missing.

    Attributes:
        hits: texts served from the cache.
        misses: texts computed by ``inner``.
        seconds: time spent in ``inner``.

    Example:
        >>> from langchain_memoryos.embeddings import resolve_embeddings
        >>> cached = CachedEmbeddings(resolve_embeddings())
        >>> cached.model_name, cached.dimension
        ('all-MiniLM-L6-v2', 384)
        >>> _ = cached.encode(["a", "b", "a"]); cached.misses, cached.hits
        (2, 1)
    """

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        name = getattr(inner, "model_name", None) or getattr(inner, "model", None)
        self.model_name: str | None = name if isinstance(name, str) else None
        self.hits = 0
        self.misses = 0
        self.seconds = 0.0
        self._rows: dict[str, np.ndarray[Any, np.dtype[np.float32]]] = {}
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        """The embedding dimension (``inner``'s, else probed once).

        Example:
            >>> from langchain_memoryos.embeddings import resolve_embeddings
            >>> CachedEmbeddings(resolve_embeddings()).dimension
            384
        """
        dim = getattr(self.inner, "dimension", None)
        if isinstance(dim, int) and dim > 0:
            return dim
        return int(self.encode(["dimension probe"]).shape[1])

    def encode(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        """Rows for ``texts`` (shape ``(n, d)``), the missing ones computed in one batch.

        Example:
            >>> from langchain_memoryos.embeddings import resolve_embeddings
            >>> CachedEmbeddings(resolve_embeddings()).encode(["hello", "world"]).shape
            (2, 384)
        """
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._rows))
            if missing:
                started = time.perf_counter()
                rows = encode_texts(self.inner, missing)
                self.seconds += time.perf_counter() - started
                self._rows.update(zip(missing, rows, strict=True))
            self.misses += len(missing)
            self.hits += len(texts) - len(missing)
            if not texts:
                return np.zeros((0, self.inner_dimension()), dtype=np.float32)
            return np.stack([self._rows[t] for t in texts])

    def inner_dimension(self) -> int:
        """``inner``'s declared dimension (0 when it declares none).

        Example:
            >>> from langchain_memoryos.embeddings import resolve_embeddings
            >>> CachedEmbeddings(resolve_embeddings()).inner_dimension()
            384
        """
        dim = getattr(self.inner, "dimension", None)
        return dim if isinstance(dim, int) else 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents (cached).

        Example:
            >>> from langchain_memoryos.embeddings import resolve_embeddings
            >>> len(CachedEmbeddings(resolve_embeddings()).embed_documents(["a", "b"]))
            2
        """
        rows: list[list[float]] = self.encode(texts).tolist() if texts else []
        return rows

    def embed_query(self, text: str) -> list[float]:
        """Embed a query (cached; the same row as the text as a document).

        Example:
            >>> from langchain_memoryos.embeddings import resolve_embeddings
            >>> len(CachedEmbeddings(resolve_embeddings()).embed_query("hi"))
            384
        """
        row: list[float] = self.encode([text])[0].tolist()
        return row
