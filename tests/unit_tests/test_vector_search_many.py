"""VectorIndex.search_many: one FAISS call for several query vectors, each answered as search() alone answers it."""

from __future__ import annotations

import numpy as np
import pytest

from langchain_memoryos.index.vector_index import VectorIndex


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


def test_equal_scores_rank_by_key_whatever_order_the_vectors_came_in() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(40, 384)).astype(np.float32)
    vectors[10:30] = vectors[0]  # 21 copies of one vector: 21 equal scores for any query
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    keys = [f"k{i:02d}" for i in range(40)]
    query = vectors[0] + 0.01 * rng.normal(size=384).astype(np.float32)
    results = []
    for seed in range(5):
        order = rng.permutation(40) if seed else np.arange(40)
        index = VectorIndex(384)
        index.add_many([keys[i] for i in order], vectors[order])
        results.append([index.search(query, k) for k in (1, 4, 21, 25)])
        assert index.search_many([query, vectors[1]], 4) == [index.search(query, 4), index.search(vectors[1], 4)]
    assert all(r == results[0] for r in results)
    assert [key for key, _ in results[0][1]] == ["k00", "k10", "k11", "k12"]  # the copies cut by key
    assert len({score for _, score in results[0][2]}) == 1  # the 21 copies first, all equal
