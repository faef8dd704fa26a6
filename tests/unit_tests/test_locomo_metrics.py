"""LoCoMo metrics, checked against hand-computed values."""

from __future__ import annotations

import json
import math
import sys

import pytest

from langchain_memoryos.evaluation import metrics
from langchain_memoryos.evaluation.metrics import (
    CATEGORIES,
    QuestionOutcome,
    bleu1,
    bootstrap_ci,
    count_tokens,
    count_words,
    locomo_f1,
    mem0_f1,
    normalize_answer,
    percentile,
    summarize,
)


def outcome(
    category: int,
    evidence: tuple[str, ...],
    retrieved: set[str],
    *,
    words: int = 100,
    tokens: int = 130,
    latency_ms: float = 10.0,
    answer: str = "",
    prediction: str | None = None,
    llm_calls: int = 0,
    llm_tokens: int = 0,
) -> QuestionOutcome:
    return QuestionOutcome(
        system="sys",
        sample_id="conv-1",
        question="q?",
        category=category,
        evidence=evidence,
        retrieved=frozenset(retrieved),
        words=words,
        tokens=tokens,
        latency_ms=latency_ms,
        answer=answer,
        prediction=prediction,
        llm_calls=llm_calls,
        llm_tokens=llm_tokens,
    )


# --------------------------------------------------------------------------- QuestionOutcome


def test_categories() -> None:
    assert CATEGORIES == {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def test_outcome_partial_hit() -> None:
    o = outcome(1, ("D1:1", "D1:2", "D2:3"), {"D1:2", "D2:3", "D9:9"})
    # D1:2 and D2:3 of the three evidence ids were retrieved; D9:9 is not evidence -> 2/3
    assert o.recall == pytest.approx(2 / 3)
    assert o.all_hit is False
    assert o.any_hit is True


def test_outcome_full_and_no_hit() -> None:
    full = outcome(2, ("D1:1",), {"D1:1", "D1:2"})
    none = outcome(2, ("D1:1", "D1:2"), {"D3:3"})
    assert (full.recall, full.all_hit, full.any_hit) == (1.0, True, True)
    assert (none.recall, none.all_hit, none.any_hit) == (0.0, False, False)


def test_outcome_without_evidence_is_undefined() -> None:
    o = outcome(3, (), {"D1:1"})
    assert o.recall is None
    assert o.all_hit is None
    assert o.any_hit is None


def test_outcome_as_dict_is_json_ready() -> None:
    o = outcome(4, ("D2:1", "D1:1"), {"D2:1", "D1:10", "D1:1"}, latency_ms=math.nan, prediction="x")
    data = json.loads(json.dumps(o.as_dict(), allow_nan=False))
    assert data["retrieved"] == ["D1:1", "D1:10", "D2:1"]  # sorted as strings
    assert data["evidence"] == ["D2:1", "D1:1"]  # order kept
    assert data["latency_ms"] is None
    assert data["prediction"] == "x"


# --------------------------------------------------------------------------- cost and statistics


def test_count_words() -> None:
    assert count_words("") == 0
    assert count_words("  one\ttwo\nthree  ") == 3


def test_count_tokens_is_chars_over_four_rounded_up() -> None:
    assert count_tokens("") == 0
    assert count_tokens("abc") == 1  # ceil(3/4)
    assert count_tokens("abcdefgh") == 2  # 8/4
    assert count_tokens("abcdefghi") == 3  # ceil(9/4)


def test_percentile_linear() -> None:
    # sorted [1, 2, 3, 4, 5]; q=95 -> rank 0.95*4 = 3.8 -> 4 + 0.8*(5-4) = 4.8
    assert percentile([5, 1, 4, 2, 3], 95) == pytest.approx(4.8)
    # sorted [1, 2, 3, 10]; q=50 -> rank 1.5 -> 2 + 0.5*(3-2) = 2.5
    assert percentile([3, 1, 10, 2], 50) == pytest.approx(2.5)
    assert math.isnan(percentile([], 50))


def test_bootstrap_contains_mean_and_is_deterministic() -> None:
    values = [0.0, 1.0, 0.5, 1.0, 0.0, 1.0, 1.0, 0.25, 0.75, 1.0]
    mean = sum(values) / len(values)  # 6.5 / 10 = 0.65
    low, high = bootstrap_ci(values, seed=7)
    assert 0.0 <= low < mean < high <= 1.0
    assert bootstrap_ci(values, seed=7) == (low, high)


def test_bootstrap_narrower_for_larger_alpha() -> None:
    values = [float(i) for i in range(20)]
    # same seed -> same resampled means; the 25-75 % percentiles lie inside the 2.5-97.5 % ones
    low95, high95 = bootstrap_ci(values, seed=3, alpha=0.05)
    low50, high50 = bootstrap_ci(values, seed=3, alpha=0.5)
    assert low95 < low50 < 9.5 < high50 < high95


def test_bootstrap_degenerate_cases() -> None:
    assert all(math.isnan(v) for v in bootstrap_ci([]))
    assert bootstrap_ci([0.3]) == (0.3, 0.3)
    # every resample of a constant is the constant
    assert bootstrap_ci([0.5] * 10) == pytest.approx((0.5, 0.5))


@pytest.mark.parametrize("kwargs", [{"n_boot": 0}, {"alpha": 0.0}, {"alpha": 1.0}])
def test_bootstrap_rejects_bad_parameters(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        bootstrap_ci([0.1, 0.2], **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- LoCoMo F1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The cat, and a Dog!", "cat dog"),  # articles and 'and' dropped, punctuation removed
        ("an apple AND the pear", "apple pear"),
        ("Andrew and Theo", "andrew theo"),  # only whole words are dropped
        ("1,000 dollars", "1000 dollars"),  # commas removed before anything else
        ("U.S.A.; don't", "usa dont"),
        ("  spaced\tout  ", "spaced out"),
    ],
)
def test_normalize_answer(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


def test_f1_normalisation_and_stemming() -> None:
    assert locomo_f1("The Eiffel Tower!", "eiffel, tower", 4) == 1.0
    # Porter: running -> run, dogs -> dog
    assert locomo_f1("running dogs", "run dog", 4) == 1.0


def test_f1_partial_overlap() -> None:
    # pred [in, may, 2023], gold [7, may, 2023]: 2 common -> P = R = 2/3 -> F1 = 2/3
    assert locomo_f1("in May 2023", "7 May 2023", 2) == pytest.approx(2 / 3)
    # multiset overlap: pred [dog, dog], gold [dog]: 1 common -> P = 1/2, R = 1 -> 2*(1/2)/(3/2) = 2/3
    assert locomo_f1("dog dog", "dog", 4) == pytest.approx(2 / 3)
    assert locomo_f1("cat", "dog", 4) == 0.0
    assert locomo_f1("", "dog", 4) == 0.0


def test_f1_multi_hop_comma_split() -> None:
    # gold parts Paris -> 1, Rome -> 0, London -> 1 -> (1 + 0 + 1) / 3
    assert locomo_f1("Paris, London", "Paris, Rome, London", 1) == pytest.approx(2 / 3)
    # hiking -> 1; pottery vs "painting pottery": P = 1/2, R = 1 -> 2/3; mean (1 + 2/3) / 2 = 5/6
    assert locomo_f1("hiking, painting pottery", "hiking, pottery", 1) == pytest.approx(5 / 6)
    # the same strings as a single-hop answer: commas vanish, pred [hike, paint, potteri] gold [hike, potteri]
    # P = 2/3, R = 1 -> 2*(2/3)/(5/3) = 4/5
    assert locomo_f1("hiking, painting pottery", "hiking, pottery", 4) == pytest.approx(4 / 5)


def test_f1_open_domain_uses_first_alternative() -> None:
    answer = "likely yes; because she likes it"
    # category 3 keeps "likely yes": pred [ye], gold [like, ye] -> P = 1, R = 1/2 -> 2/3
    assert locomo_f1("yes", answer, 3) == pytest.approx(2 / 3)
    # category 4 keeps all 6 tokens: P = 1, R = 1/6 -> 2*(1/6)/(7/6) = 2/7
    assert locomo_f1("yes", answer, 4) == pytest.approx(2 / 7)


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        ("No information available.", 1.0),
        ("That is NOT MENTIONED in the conversation", 1.0),
        ("She went to Paris", 0.0),
        ("No info", 0.0),
    ],
)
def test_f1_adversarial_phrases(prediction: str, expected: float) -> None:
    assert locomo_f1(prediction, "", 5) == expected


def test_f1_integer_answers() -> None:
    assert locomo_f1("2022", 2022, 2) == 1.0
    # pred [in, 2022], gold [2022] -> P = 1/2, R = 1 -> 2/3
    assert locomo_f1("In 2022", 2022, 2) == pytest.approx(2 / 3)
    assert locomo_f1("3", 3, 1) == 1.0


def test_f1_unknown_category() -> None:
    with pytest.raises(ValueError):
        locomo_f1("a", "a", 6)


# --------------------------------------------------------------------------- Mem0 F1 and BLEU-1


def test_mem0_f1_uses_token_sets() -> None:
    # {paris} vs {paris, france}: P = 1, R = 1/2 -> 2/3 (the repeated "paris" counts once)
    assert mem0_f1("Paris, Paris!", "paris france") == pytest.approx(2 / 3)
    # sets make "dog dog" vs "dog" a perfect match (LoCoMo F1 gives 2/3)
    assert mem0_f1("dog dog", "dog") == 1.0


def test_mem0_f1_tokenizer_and_edges() -> None:
    assert mem0_f1("2022", 2022) == 1.0
    assert mem0_f1("paris;", "paris") == 0.0  # only . , ! ? are split off
    assert mem0_f1("running", "run") == 0.0  # no stemming
    assert mem0_f1("", "paris") == 0.0
    assert mem0_f1("paris", "...") == 0.0


def test_bleu1_brevity_penalty() -> None:
    # c = 2 < r = 3, precision 2/2 = 1 -> BP = exp(1 - 3/2) = exp(-0.5)
    assert bleu1("in paris", "in paris france") == pytest.approx(math.exp(-0.5))
    # c = 2 < r = 4, precision 1/2 -> 0.5 * exp(1 - 4/2) = 0.5 * exp(-1)
    assert bleu1("paris london", "in paris france today") == pytest.approx(0.5 * math.exp(-1))


def test_bleu1_without_penalty_and_clipping() -> None:
    # c = 4 > r = 3 -> BP = 1, precision 3/4
    assert bleu1("in paris france today", "in paris france") == pytest.approx(0.75)
    # clipped: "paris" counts once of 3 predicted tokens, c = 3 > r = 2 -> 1/3
    assert bleu1("paris paris paris", "paris france") == pytest.approx(1 / 3)


def test_bleu1_edges() -> None:
    assert bleu1("", "paris") == 0.0
    assert bleu1("paris", "") == 0.0
    assert bleu1("london", "paris") == 0.0
    assert bleu1("2022", 2022) == 1.0


# --------------------------------------------------------------------------- summaries


def retrieval_outcomes() -> list[QuestionOutcome]:
    return [
        outcome(1, ("D1:1", "D1:2"), {"D1:1"}, words=100, tokens=130, latency_ms=10),  # recall 1/2
        outcome(1, ("D2:1",), {"D2:1"}, words=200, tokens=260, latency_ms=20),  # 1
        outcome(2, ("D3:1", "D3:2", "D3:3"), {"D3:1", "D3:2", "D3:3"}, words=300, tokens=390, latency_ms=30),  # 1
        outcome(4, ("D4:1",), set(), words=400, tokens=520, latency_ms=40),  # 0
        outcome(3, (), {"D5:5"}, words=500, tokens=650, latency_ms=50),  # no evidence: cost only
        outcome(5, ("D6:1",), {"D6:1"}, words=1000, tokens=1300, latency_ms=1000),  # adversarial: per category only
    ]


def test_summarize_recall() -> None:
    s = summarize("sys", retrieval_outcomes())
    assert s.system == "sys"
    assert s.questions == 6
    # cat 1: (1/2 + 1) / 2 = 0.75; cat 2: 1; cat 4: 0; cat 5: 1; cat 3 has no evidence
    assert s.recall_by_category == pytest.approx({1: 0.75, 2: 1.0, 4: 0.0, 5: 1.0})
    assert s.count_by_category == {1: 2, 2: 1, 4: 1, 5: 1}
    # overall 1-4: (0.5 + 1 + 1 + 0) / 4 = 0.625 (the adversarial hit is left out)
    assert s.recall == pytest.approx(0.625)
    # all evidence: questions 2 and 3 of 4 -> 0.5; at least one: 1, 2, 3 of 4 -> 0.75
    assert s.all_hit == pytest.approx(0.5)
    assert s.any_hit == pytest.approx(0.75)


def test_summarize_recall_ci() -> None:
    s = summarize("sys", retrieval_outcomes(), seed=11)
    assert s.recall_ci[0] <= s.recall <= s.recall_ci[1]
    assert s.recall_ci == bootstrap_ci([0.5, 1.0, 1.0, 0.0], seed=11)


def test_summarize_cost() -> None:
    s = summarize("sys", retrieval_outcomes())
    # categories 1-4, with or without evidence: words [100, 200, 300, 400, 500]
    assert s.words_mean == pytest.approx(300.0)
    # rank 0.95 * 4 = 3.8 -> 400 + 0.8 * 100 = 480
    assert s.words_p95 == pytest.approx(480.0)
    # tokens [130, 260, 390, 520, 650]: mean 390, p95 520 + 0.8 * 130 = 624
    assert s.tokens_mean == pytest.approx(390.0)
    assert s.tokens_p95 == pytest.approx(624.0)
    # latency [10, 20, 30, 40, 50]: p50 = 30, p95 = 40 + 0.8 * 10 = 48
    assert s.latency_p50_ms == pytest.approx(30.0)
    assert s.latency_p95_ms == pytest.approx(48.0)


def test_summarize_without_predictions() -> None:
    s = summarize("sys", retrieval_outcomes())
    assert s.f1 is None
    assert s.mem0_f1 is None
    assert s.bleu1 is None
    assert s.llm_calls_per_answer is None
    assert s.llm_tokens_per_answer is None
    assert s.f1_by_category == {}


def test_summarize_answers() -> None:
    outcomes = [
        outcome(
            1,
            ("D1:1",),
            {"D1:1"},
            answer="Paris, Rome, London",
            prediction="Paris, London",
            llm_calls=2,
            llm_tokens=300,
        ),
        outcome(4, ("D2:1",), set(), answer="run dog", prediction="running dogs", llm_calls=1, llm_tokens=100),
        outcome(5, ("D3:1",), set(), prediction="Not mentioned.", llm_calls=7, llm_tokens=900),
        outcome(2, ("D4:1",), set(), answer="May 2023"),  # no prediction: left out of the answer scores
    ]
    s = summarize("sys", outcomes)
    # LoCoMo F1: 2/3 (multi-hop) and 1 (stemmed) -> 5/6; the adversarial 1.0 only in its category
    assert s.f1 == pytest.approx(5 / 6)
    assert s.f1_by_category == pytest.approx({1: 2 / 3, 4: 1.0, 5: 1.0})
    # Mem0 F1: {paris, london} vs {paris, rome, london}: P 1, R 2/3 -> 0.8; {running, dogs} vs {run, dog}: 0
    assert s.mem0_f1 == pytest.approx((0.8 + 0.0) / 2)
    # BLEU-1: precision 2/2, BP exp(1 - 3/2); then 0
    assert s.bleu1 == pytest.approx(math.exp(-0.5) / 2)
    # LLM costs over the same two answers: (2 + 1) / 2 and (300 + 100) / 2
    assert s.llm_calls_per_answer == pytest.approx(1.5)
    assert s.llm_tokens_per_answer == pytest.approx(200.0)


def test_summarize_empty_and_as_dict() -> None:
    s = summarize("empty", [outcome(5, (), set())])
    assert s.questions == 1
    assert math.isnan(s.recall) and math.isnan(s.words_mean) and math.isnan(s.latency_p50_ms)
    data = json.loads(json.dumps(s.as_dict(), allow_nan=False))
    assert data["recall"] is None
    assert data["recall_ci"] == [None, None]
    assert data["f1"] is None


def test_summary_as_dict_round_trips() -> None:
    s = summarize("sys", retrieval_outcomes())
    data = json.loads(json.dumps(s.as_dict(), allow_nan=False))
    assert data["recall"] == pytest.approx(0.625)
    assert data["recall_ci"] == list(s.recall_ci)
    assert data["recall_by_category"] == {"1": 0.75, "2": 1.0, "4": 0.0, "5": 1.0}
    assert data["count_by_category"] == {"1": 2, "2": 1, "4": 1, "5": 1}
    assert data["words_p95"] == pytest.approx(480.0)


# --------------------------------------------------------------------------- optional dependency


def test_missing_nltk_gives_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("nltk", "nltk.stem", "nltk.translate.bleu_score"):
        monkeypatch.setitem(sys.modules, name, None)
    metrics._porter_stem.cache_clear()
    metrics._stem.cache_clear()
    with pytest.raises(ImportError, match=r"pip install 'langchain-memoryos\[bench\]'"):
        locomo_f1("running dogs", "run dog", 4)
    with pytest.raises(ImportError, match="bench"):
        bleu1("a", "a")
    # what needs no nltk still works
    assert mem0_f1("a b", "a b") == 1.0
    assert locomo_f1("not mentioned", "", 5) == 1.0
