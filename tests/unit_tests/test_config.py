"""MemoryOSConfig: paper defaults and validation."""

from __future__ import annotations

import pytest

from langchain_memoryos import MemoryOSConfig
from langchain_memoryos.config import MODEL_THRESHOLDS


def test_paper_defaults() -> None:
    c = MemoryOSConfig()
    assert (c.stm_capacity, c.mtm_max_segments, c.segment_threshold) == (7, 200, 0.6)
    assert (c.heat_alpha, c.heat_beta, c.heat_gamma) == (1.0, 1.0, 1.0)
    assert c.recency_tau_seconds == 1e7
    assert c.promotion_heat == 5.0
    assert (c.top_segments, c.top_facts) == (5, 10)
    # the paper's 100-fact knowledge base is the paper preset's; the default keeps thousands
    assert (c.user_kb_capacity, c.agent_traits_capacity) == (2000, 100)
    assert MemoryOSConfig.paper().user_kb_capacity == 100
    t = c.thresholds("all-MiniLM-L6-v2")
    assert t.write_similarity == 0.6
    # measured default for MTM pages: hybrid ranking within a word budget
    assert (c.page_ranking, c.top_pages, c.context_words) == ("hybrid", 40, 1000)


def test_paper_preset_is_the_paper() -> None:
    p = MemoryOSConfig.paper()
    assert (p.page_ranking, p.top_segments, p.top_pages, p.top_facts, p.context_words) == ("segments", 5, 10, 10, None)
    assert MemoryOSConfig.preset("paper") == p
    assert MemoryOSConfig.preset("paper", stm_capacity=3).stm_capacity == 3
    with pytest.raises(ValueError, match="preset"):
        MemoryOSConfig.preset("fast")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"stm_capacity": -1},
        {"stm_capacity": 0},
        {"mtm_max_segments": 0},
        {"user_kb_capacity": -5},
        {"top_facts": -1},
        {"heat_alpha": -0.1},
        {"recency_tau_seconds": 0},
        {"segment_threshold": 3.0},
        {"gate_threshold": 1.5},
        {"write_similarity": 2.0},
        {"page_ranking": "bm25"},
        {"rrf_k": -1.0},
        {"lexical_weight": float("nan")},
        {"context_words": 0},
    ],
)
def test_invalid_values_are_clear_value_errors(kwargs: dict[str, float]) -> None:
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        MemoryOSConfig(**kwargs)  # type: ignore[arg-type]


def test_wrong_types_are_type_errors() -> None:
    with pytest.raises(TypeError, match="stm_capacity"):
        MemoryOSConfig(stm_capacity=7.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        MemoryOSConfig(stm_capacity=True)


def test_thresholds_per_model_and_overrides() -> None:
    assert MemoryOSConfig().thresholds("unknown-model") == MODEL_THRESHOLDS["default"]
    assert MemoryOSConfig(retrieval_similarity=0.42).thresholds("all-MiniLM-L6-v2").retrieval_similarity == 0.42
    assert MemoryOSConfig().replace(stm_capacity=3).stm_capacity == 3
    with pytest.raises(ValueError):
        MemoryOSConfig().replace(stm_capacity=0)
