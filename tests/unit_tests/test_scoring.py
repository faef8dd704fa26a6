"""Pure decision functions, against hand-computed values."""

from __future__ import annotations

import math

import pytest

from langchain_memoryos.schema import MemoryRecord, Relation
from langchain_memoryos.scoring import (
    COMPATIBLE_INTENTS,
    decide_action,
    f_score,
    gate,
    heat,
    jaccard,
    recency,
    select_candidates,
    top_k,
)


def test_recency_hand_values() -> None:
    assert recency(0, 1e7) == 1.0
    assert recency(1e7, 1e7) == pytest.approx(math.exp(-1))
    assert recency(2.5e6, 1e7) == pytest.approx(0.7788007830714049)
    # a clock that went backwards counts as no time at all
    assert recency(-100, 1e7) == 1.0


def test_heat_hand_values() -> None:
    assert heat(0, 1, 1.0) == 2.0
    assert heat(3, 2, math.exp(-1)) == pytest.approx(5.367879441171443)
    assert heat(2, 4, 0.5, alpha=0.5, beta=2.0, gamma=4.0) == pytest.approx(1 + 8 + 2)


def test_jaccard_hand_values() -> None:
    assert jaccard({"a", "b", "c"}, {"b", "c", "d"}) == pytest.approx(2 / 4)
    assert jaccard({"Denver"}, {"denver"}) == 1.0
    assert jaccard(set(), set()) == 0.0
    assert jaccard({"a"}, set()) == 0.0


def test_f_score_adds_cosine_and_jaccard() -> None:
    assert f_score(0.45, ["hiking", "denver"], ["denver", "dog", "park"]) == pytest.approx(0.45 + 1 / 4)
    assert f_score(-0.2, [], []) == pytest.approx(-0.2)


def _record(**kw: object) -> MemoryRecord:
    base: dict[str, object] = dict(
        aspect="health",
        intent="inform",
        personal=True,
        entities=["vegan"],
        summary="The user is vegan.",
        confidence=1.0,
    )
    base.update(kw)
    return MemoryRecord(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "score", "admitted", "reason"),
    [
        ({}, 1.0, True, "admitted"),
        ({"confidence": 0.6}, 0.6, True, "admitted"),
        ({"confidence": 0.4}, 0.4, False, "low confidence"),
        ({"personal": False}, 0.0, False, "not personal"),
        ({"aspect": "other"}, 0.0, False, "fallback aspect"),
        ({"intent": "other"}, 0.0, False, "fallback intent"),
        ({"intent": "request", "personal": False}, 0.0, False, "not personal"),
        ({"intent": "request"}, 1.0, True, "admitted"),
        ({"entities": []}, 0.0, False, "no entities"),
        ({"entities": ["  "]}, 0.0, False, "no entities"),
        ({"summary": " "}, 0.0, False, "empty summary"),
    ],
)
def test_gate(changes: dict[str, object], score: float, admitted: bool, reason: str) -> None:
    result = gate(_record(**changes), 0.5)
    assert result.score == pytest.approx(score)
    assert result.admitted is admitted
    assert reason in result.reason


def test_gate_threshold_is_inclusive() -> None:
    assert gate(_record(confidence=0.5), 0.5).admitted
    assert not gate(_record(confidence=0.49), 0.5).admitted


def test_select_candidates_exact_pair_first() -> None:
    new = _record(aspect="preference", intent="inform")
    same = _record(id="same", aspect="preference", intent="inform")
    compatible = _record(id="comp", aspect="preference", intent="plan")
    other_aspect = _record(id="other", aspect="health", intent="inform")
    kept = select_candidates(new, [(compatible, 0.95), (same, 0.7), (other_aspect, 0.99)], 0.6)
    assert [r.id for r, _ in kept] == ["same"]


def test_select_candidates_widens_when_no_exact_pair_passes_tau_s() -> None:
    new = _record(aspect="preference", intent="inform")
    unrelated = _record(id="x", aspect="preference", intent="inform")
    similar = _record(id="s", aspect="preference", intent="express")
    kept = select_candidates(new, [(unrelated, 0.2), (similar, 0.8)], 0.6)
    assert [r.id for r, _ in kept] == ["s"]


def test_select_candidates_widens_to_compatible_intents_and_filters_by_tau_s() -> None:
    new = _record(aspect="preference", intent="reflect")
    a = _record(id="a", aspect="preference", intent="plan")
    b = _record(id="b", aspect="preference", intent="express")
    c = _record(id="c", aspect="preference", intent="inform")
    req = _record(id="r", aspect="preference", intent="request")
    kept = select_candidates(new, [(a, 0.61), (b, 0.59), (c, 0.9), (req, 0.99)], 0.6)
    assert [(r.id, s) for r, s in kept] == [("c", 0.9), ("a", 0.61)]


def test_compatible_intents_table() -> None:
    assert COMPATIBLE_INTENTS["request"] == frozenset({"request"})
    for intent in ("inform", "plan", "reflect", "express"):
        assert COMPATIBLE_INTENTS[intent] == frozenset({"inform", "plan", "reflect", "express"})


@pytest.mark.parametrize(
    ("labels", "action"),
    [
        ([], "store"),
        (["separate", "separate"], "store"),
        (["separate", "duplicate"], "discard"),
        (["duplicate", "update"], "fuse"),
        (["update"], "fuse"),
        (["separate", "update", "separate"], "fuse"),
    ],
)
def test_action_rule(labels: list[str], action: str) -> None:
    relations = [Relation(str(i), label) for i, label in enumerate(labels)]  # type: ignore[arg-type]
    assert decide_action(relations) == action


def test_top_k_is_stable_and_bounded() -> None:
    assert top_k(["a", "b", "c"], [0.5, 0.9, 0.5], 2) == [("b", 0.9), ("a", 0.5)]
    assert top_k(["a"], [1.0], 0) == []


def test_best_segment_stops_early_yet_picks_what_scoring_every_segment_picks() -> None:
    """The scan stops once cos + 1 cannot beat the best F: the same segment as F computed for all (ties: first)."""
    import random

    from langchain_memoryos.schema import Segment
    from langchain_memoryos.scoring import best_segment

    words = ["tea", "Pottery", "hiking", "denver", "dog", "jazz", "chess", "paint"]
    rng = random.Random(11)
    for _ in range(2000):
        n = rng.randint(0, 12)
        cosines = sorted((rng.choice([rng.uniform(-1, 1), 0.5, 0.25]) for _ in range(n)), reverse=True)
        segments = [Segment(id=f"s{i}", keywords=rng.sample(words, rng.randint(0, 4))) for i in range(n)]
        page = rng.sample(words, rng.randint(0, 4))
        threshold = rng.choice([-2.0, 0.6, 1.0])
        scores = [f_score(c, s.keywords, page) for s, c in zip(segments, cosines, strict=True)]
        best = max(range(n), key=lambda i: (scores[i], -i), default=None)
        expected = segments[best] if best is not None and scores[best] > threshold else None
        assert best_segment(list(zip(segments, cosines, strict=True)), page, threshold) is expected
