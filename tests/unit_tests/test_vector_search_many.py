"""VectorIndex.search_many: one FAISS call for several query vectors, each answered as search() alone answers it."""

from __future__ import annotations

import numpy as np
import pytest

from langchain_memoryos.store.vector_index import VectorIndex


@pytest.mark.parametrize("size", [0, 1, 7, 100, 300])
def test_search_many_is_search_per_query_to_the_bit(size: int) -> None:
    rng = np.random.default_rng(size)
    vectors = rng.normal(size=(size, 384)).astype(np.float32)
    vectors[size // 2 :: 5] = vectors[:1]  # exact ties, which FAISS orders by its own rule
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    index = VectorIndex(384)
    if size:
        index.add_many([f"k{i}" for i in range(size)], vectors)
    index.remove([f"k{i}" for i in range(1, size, 9)])  # holes in FAISS' id map
    queries = [rng.normal(size=384).astype(np.float32) for _ in range(2)]
    if size:
        queries.append(vectors[0].copy())
    for k in (1, 5, len(index), len(index) + 3):
        assert index.search_many(queries, k) == [index.search(q, k) for q in queries]
    assert index.search_many([], 3) == []
