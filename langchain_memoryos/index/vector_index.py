"""A FAISS inner-product index keyed by strings: the rebuildable vector cache.

The store is the source of truth; these indices are rebuilt from it whenever a
user's state is loaded. Vectors are L2-normalised, so inner product is cosine.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.threads import single_math_thread

__all__ = ["VectorIndex", "decode_vector", "encode_vector"]

Vector = npt.NDArray[np.float32]


def encode_vector(vector: npt.ArrayLike) -> str:
    """Encode a vector compactly for a store value (base64 of little-endian float32).

    Args:
        vector: a 1-D array.

    Returns:
        An ASCII string.

    Example:
        >>> decode_vector(encode_vector([1.0, 0.5])).tolist()
        [1.0, 0.5]
    """
    arr = np.asarray(vector, dtype="<f4").reshape(-1)
    return base64.b64encode(arr.tobytes()).decode("ascii")


def decode_vector(data: str) -> Vector:
    """Decode a vector written by :func:`encode_vector`.

    Args:
        data: the encoded string.

    Returns:
        A float32 array.

    Example:
        >>> decode_vector(encode_vector([0.25])).dtype
        dtype('float32')
    """
    return np.frombuffer(base64.b64decode(data), dtype="<f4").astype(np.float32)


class VectorIndex:
    """String-keyed FAISS ``IndexFlatIP`` with removal and subset search.

    Args:
        dimension: the vector size.

    Example:
        >>> idx = VectorIndex(2)
        >>> idx.add("a", np.array([1.0, 0.0], dtype=np.float32))
        >>> idx.search(np.array([1.0, 0.0], dtype=np.float32), 1)
        [('a', 1.0)]
    """

    def __init__(self, dimension: int) -> None:
        import faiss  # ~0.2 s: loaded with the first index, not with the package

        self.dimension = dimension
        self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))
        self._ids: dict[str, int] = {}
        self._keys: dict[int, str] = {}
        self._next = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._ids)

    def copy(self) -> VectorIndex:
        """An independent copy (a writer's private working copy of a user's cache).

        Example:
            >>> idx = VectorIndex(2); idx.add("a", np.ones(2, dtype=np.float32))
            >>> twin = idx.copy(); twin.remove(["a"]); len(idx), len(twin)
            (1, 0)
        """
        import faiss

        twin = VectorIndex.__new__(VectorIndex)
        twin.dimension = self.dimension
        twin._lock = threading.Lock()
        with self._lock:
            twin._index = faiss.clone_index(self._index)  # type: ignore[assignment]
            twin._ids, twin._keys, twin._next = dict(self._ids), dict(self._keys), self._next
        return twin

    def __deepcopy__(self, memo: dict[int, Any]) -> VectorIndex:
        return self.copy()

    def __contains__(self, key: object) -> bool:
        return key in self._ids

    def keys(self) -> list[str]:
        """All keys, in insertion order.

        Example:
            >>> VectorIndex(2).keys()
            []
        """
        return list(self._ids)

    def arrays(self) -> tuple[list[str], Vector]:
        """Every key and its vector, as a ``(len(self), dimension)`` matrix (what :meth:`add_many` takes).

        Example:
            >>> idx = VectorIndex(2); idx.add_many(["a", "b"], np.eye(2, dtype=np.float32)); idx.remove(["a"])
            >>> keys, mat = idx.arrays(); keys, mat.tolist()
            (['b'], [[0.0, 1.0]])
        """
        import faiss

        with self._lock:
            n = int(self._index.ntotal)
            if n == 0:
                return [], np.zeros((0, self.dimension), dtype=np.float32)
            ids = faiss.vector_to_array(self._index.id_map)
            mat = np.asarray(self._index.index.reconstruct_n(0, n), dtype=np.float32)
            return [self._keys[int(i)] for i in ids], mat

    def add(self, key: str, vector: Vector) -> None:
        """Add or replace the vector of ``key``.

        Args:
            key: the item key.
            vector: its vector (length ``dimension``).

        Raises:
            ValueError: on a vector of the wrong size.

        Example:
            >>> idx = VectorIndex(2); idx.add("a", np.ones(2, dtype=np.float32)); len(idx)
            1
        """
        self.add_many([key], np.asarray(vector, dtype=np.float32).reshape(1, -1))

    def add_many(self, keys: Sequence[str], vectors: Vector) -> None:
        """Add or replace several vectors at once.

        Args:
            keys: item keys.
            vectors: a ``(len(keys), dimension)`` array.

        Raises:
            ValueError: on a shape mismatch.

        Example:
            >>> idx = VectorIndex(2)
            >>> idx.add_many(["a", "b"], np.eye(2, dtype=np.float32)); len(idx)
            2
            >>> idx.add_many([], np.zeros((0, 2), dtype=np.float32)); len(idx)  # nothing to add
            2
        """
        if len(keys) == 0:
            return
        mat = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32).reshape(len(keys), -1))
        if mat.shape[1] != self.dimension:
            raise InvalidInputError(
                f"vector has dimension {mat.shape[1]}, the index expects {self.dimension}; "
                "were the stored vectors made with another embedding model?"
            )
        with self._lock:
            self._remove_locked([k for k in keys if k in self._ids])
            ids = np.arange(self._next, self._next + len(keys), dtype=np.int64)
            self._next += len(keys)
            for key, i in zip(keys, ids.tolist(), strict=False):
                self._ids[key] = i
                self._keys[i] = key
            self._index.add_with_ids(mat, ids)

    def remove(self, keys: Iterable[str]) -> None:
        """Remove keys (unknown keys are ignored).

        Args:
            keys: item keys.

        Example:
            >>> idx = VectorIndex(2); idx.add("a", np.ones(2, dtype=np.float32)); idx.remove(["a"]); len(idx)
            0
        """
        with self._lock:
            self._remove_locked([k for k in keys if k in self._ids])

    def _remove_locked(self, keys: list[str]) -> None:
        import faiss

        if not keys:
            return
        ids = np.array([self._ids.pop(k) for k in keys], dtype=np.int64)
        for i in ids.tolist():
            self._keys.pop(i, None)
        self._index.remove_ids(faiss.IDSelectorBatch(ids))

    def get(self, key: str) -> Vector:
        """The vector stored for ``key``.

        Raises:
            KeyError: for an unknown key.

        Example:
            >>> idx = VectorIndex(2); idx.add("a", np.ones(2, dtype=np.float32)); idx.get("a").tolist()
            [1.0, 1.0]
        """
        with self._lock:
            return np.asarray(self._index.reconstruct(self._ids[key]), dtype=np.float32)

    def get_many(self, keys: Sequence[str]) -> Vector:
        """The vectors stored for ``keys``, as a ``(len(keys), dimension)`` matrix in their order (one lookup).

        Raises:
            KeyError: for an unknown key.

        Example:
            >>> idx = VectorIndex(2); idx.add_many(["a", "b"], np.eye(2, dtype=np.float32))
            >>> idx.get_many(["b", "a"]).tolist(), idx.get_many([]).shape
            ([[0.0, 1.0], [1.0, 0.0]], (0, 2))
        """
        if not keys:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            ids = np.fromiter((self._ids[k] for k in keys), dtype=np.int64, count=len(keys))
            return np.asarray(self._index.reconstruct_batch(ids), dtype=np.float32)

    def search(
        self,
        query: Vector,
        k: int,
        *,
        within: Iterable[str] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` nearest keys by inner product, best first (equal scores by key, whatever order they were added in).

        Args:
            query: the query vector.
            k: how many to return.
            within: restrict the search to these keys (``None`` for all).

        Returns:
            ``(key, score)`` pairs.

        Example:
            >>> idx = VectorIndex(2); idx.add_many(["a", "b"], np.eye(2, dtype=np.float32))
            >>> idx.search(np.array([0.0, 1.0], dtype=np.float32), 5, within=["a"])
            [('a', 0.0)]
        """
        return self.search_many([query], k, within=within)[0]

    def search_many(
        self, queries: Sequence[Vector], k: int, *, within: Iterable[str] | None = None
    ) -> list[list[tuple[str, float]]]:
        """:meth:`search` of several query vectors in one FAISS call (one pass over the vectors): a list per query.

        Each list is what :meth:`search` returns for that query alone (FAISS
        answers each query row on its own); ``within`` restricts every query to those keys.

        Example:
            >>> idx = VectorIndex(2); idx.add_many(["a", "b"], np.eye(2, dtype=np.float32))
            >>> idx.search_many([np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0], np.float32)], 1)
            [[('a', 1.0)], [('b', 1.0)]]
        """
        if not queries:
            return []
        q = np.ascontiguousarray(np.stack([np.asarray(v, dtype=np.float32).reshape(-1) for v in queries]))
        with self._lock:
            params = None
            selector = None  # kept referenced until the search is done
            total = len(self._ids)
            if within is not None:
                ids = np.array([self._ids[x] for x in within if x in self._ids], dtype=np.int64)
                total = int(ids.size)
                if total:
                    import faiss

                    selector = faiss.IDSelectorBatch(ids)
                    params = faiss.SearchParameters()
                    params.sel = selector
            k = min(k, total)
            if k <= 0:
                return [[] for _ in queries]
            fetch = min(k + 1, total)  # one more: whether the k-th ties with the next
            with single_math_thread():
                while True:
                    scores, labels = self._index.search(q, fetch, params=params)
                    if fetch == total or not bool(np.any(scores[:, k - 1] == scores[:, fetch - 1])):
                        break
                    fetch = min(2 * fetch, total)  # a tie reaches past what was fetched: fetch more
            keys = self._keys
            out = []
            for row, row_labels in zip(scores.tolist(), labels.tolist(), strict=True):
                # equal scores by key: the order the vectors were added in does not show (as in BM25's ranking)
                hits = sorted((-score, keys[label]) for score, label in zip(row, row_labels, strict=True) if label >= 0)
                out.append([(key, -negative) for negative, key in hits[:k]])
            return out
