"""The incremental BM25 index against the bm25s library, rank fusion, and hybrid page retrieval."""

from __future__ import annotations

import datetime as dt
import random

import bm25s
import numpy as np
import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.index.lexical import LexicalIndex, rrf, tokenize

CORPUS = [
    "I started pottery classes last week and made a bowl",
    "We went camping in the mountains with the kids",
    "My sister paints sunsets and sells them at the market",
    "Pottery and painting are my hobbies, pottery mostly on weekends",
    "The marathon in Boston was hard but I finished it",
    "I adopted a grey cat named Miso from the shelter",
    "Camping again next month, the kids love the lake",
]
QUERIES = ["When did she start pottery?", "camping with kids", "Who paints sunsets?", "marathon Boston", "cat"]


def _bm25s_scores(docs: list[list[str]], query: list[str]) -> np.ndarray:
    retriever = bm25s.BM25()
    retriever.index(docs, show_progress=False)
    return np.asarray(retriever.get_scores(query))


def test_scores_equal_the_bm25s_library() -> None:
    docs = [tokenize(text) for text in CORPUS]
    index = LexicalIndex()
    for i, doc in enumerate(docs):
        index.add(str(i), doc)
    for query in QUERIES:
        q = list(dict.fromkeys(tokenize(query)))
        expected = _bm25s_scores(docs, q)
        got = dict(index.search(q, len(docs)))
        for i, score in enumerate(expected):
            assert got.get(str(i), 0.0) == pytest.approx(float(score), rel=1e-6)


def test_removal_and_compaction_match_a_fresh_index() -> None:
    rng = random.Random(7)
    index = LexicalIndex()
    live: dict[str, list[str]] = {}
    for step in range(400):  # enough removals to trigger compaction several times
        key = f"k{rng.randrange(60)}"
        if key in live and rng.random() < 0.5:
            index.remove([key])
            del live[key]
        else:
            live[key] = tokenize(rng.choice(CORPUS) + f" token{step % 9}")
            index.add(key, live[key])
    assert len(index) == len(live)
    keys = sorted(live)
    expected = _bm25s_scores([live[k] for k in keys], tokenize("pottery camping cat token3"))
    got = dict(index.search(tokenize("pottery camping cat token3"), len(keys)))
    for key, score in zip(keys, expected, strict=True):
        assert got.get(key, 0.0) == pytest.approx(float(score), rel=1e-6)


def test_search_within_and_edge_cases() -> None:
    index = LexicalIndex()
    assert index.search(["x"], 3) == []
    index.add("a", ["pottery"])
    index.add("b", ["pottery", "bowl"])
    assert [k for k, _ in index.search(["pottery"], 5, within=["a"])] == ["a"]
    assert index.search(["unknown"], 5) == [] and index.search(["pottery"], 0) == []
    assert "a" in index and "zz" not in index


def test_tokenize_stems_and_drops_stopwords() -> None:
    assert tokenize("The paintings were painted by her") == ["paint", "paint"]
    assert tokenize("") == [] and tokenize("a an the") == []


def test_rrf_by_hand() -> None:
    # k = 20, ranks from 1: a = 1/21 + 1/22, b = 1/22, c = 1/23 + 1/21
    assert rrf([["a", "b", "c"], ["c", "a"]], k=20) == ["a", "c", "b"]
    # weights: the second list counts 3x -> c = 1/23 + 3/21 beats a = 1/21 + 3/22
    assert rrf([["a", "b", "c"], ["c", "a"]], k=20, weights=[1, 3])[0] == "c"
    with pytest.raises(ValueError, match="weights"):
        rrf([["a"]], weights=[1, 2])


def _memory(config: MemoryOSConfig) -> MemoryOS:
    memory = MemoryOS(config=config)
    start = dt.datetime(2024, 1, 1, 9, tzinfo=dt.UTC)
    for i, text in enumerate(CORPUS * 2):
        memory.add_turn(f"{text} ({i})", "I see.", user_id="u", thread_id="t", timestamp=start + dt.timedelta(hours=i))
    return memory


HIKES = [
    "I love hiking in the mountains on sunny weekends",
    "My favourite hike is the ridge trail near the lake",
    "We hiked up the mountain and saw amazing views",
    "Long day at work, then groceries and laundry; also my new boots from Fjallraven arrived",
    "Hiking boots are so important for long mountain trails",
    "The mountain trail was muddy after the rain",
]


def _top_page(lexical_weight: float, question: str) -> str:
    memory = MemoryOS(
        config=MemoryOSConfig(stm_capacity=2, context_words=None, top_pages=1, lexical_weight=lexical_weight)
    )
    for i, text in enumerate(HIKES + ["ok", "ok", "ok"]):
        memory.add_turn(
            text, "Nice.", user_id="u", thread_id="t", timestamp=dt.datetime(2024, 1, 1, 9 + i, tzinfo=dt.UTC)
        )
    return memory.retrieve(question, user_id="u", thread_id="other").pages[0].page.user_input


def test_hybrid_ranking_finds_the_exact_word_dense_misses() -> None:
    # the page that names the brand is about a long day; the cosine prefers the page about hiking boots
    question = "What hiking gear did I buy from Fjallraven?"
    assert _top_page(0.0, question).startswith("Hiking boots")
    assert "Fjallraven" in _top_page(1.0, question)


def test_paper_preset_ranks_inside_the_top_segments() -> None:
    memory = _memory(MemoryOSConfig.paper(stm_capacity=2))
    ctx = memory.retrieve("pottery classes", user_id="u", thread_id="other")
    segment_pages = {pid for hit in ctx.segments for pid in hit.segment.page_ids}
    assert ctx.segments and len(ctx.segments) <= 5
    assert all(hit.page.id in segment_pages for hit in ctx.pages if hit.page.segment_id is not None)
    assert len(ctx.pages) <= 10


def test_equal_scores_rank_by_key_whatever_order_the_documents_came_in() -> None:
    # eight documents of one length holding "pottery" once: eight equal scores; two more score higher
    docs = {f"p{i}": ["pottery", f"filler{i}"] for i in range(8)}
    docs |= {"best": ["pottery", "pottery"], "next": ["pottery", "bowl", "pottery"]}
    keys = list(docs)
    rankings = []
    for seed in range(6):
        order = keys[:]
        random.Random(seed).shuffle(order)
        index = LexicalIndex()
        for key in order:
            index.add(key, docs[key])
        rankings.append([index.search(["pottery"], k) for k in (1, 3, 5, 10, 20)])
        restored = LexicalIndex.restore(index.bags())  # a snapshot's index: slots in another order again
        assert [restored.search(["pottery"], k) for k in (1, 3, 5, 10, 20)] == rankings[-1]
    assert all(r == rankings[0] for r in rankings)
    top5 = [key for key, _ in rankings[0][2]]
    assert top5[:2] == ["best", "next"] and top5[2:] == ["p0", "p1", "p2"]  # the ties cut by key, not by slot
    scores = [score for _, score in rankings[0][4]]
    assert scores == sorted(scores, reverse=True) and len(rankings[0][4]) == 10
