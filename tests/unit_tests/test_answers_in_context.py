"""Answers in context: the measure's pure parts and its rows in the benchmark.

Synthetic fixtures only (the project's own words, no LoCoMo text).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from langchain_memoryos import MemoryOSConfig
from langchain_memoryos.evaluation.answer_rows import with_answers
from langchain_memoryos.evaluation.answers import (
    answer_in_context,
    answer_tokens,
    chance_corrected_gain,
    chance_partners,
    paired_difference,
)
from langchain_memoryos.evaluation.baselines import Baseline
from langchain_memoryos.evaluation.benchmark import MemorySystem, run_locomo
from langchain_memoryos.evaluation.metrics import QuestionOutcome

FORMS_OF_7_MAY_2023 = [
    "7 May 2023",
    "May 7, 2023",
    "2023-05-07",
    "7/5/2023",
    "7th May 2023",
    "May 7th, 2023",
    "7 May, 2023",
    "2023-05-07T14:30:00+00:00",
    "[2023-05-07 14:30]",
]


def test_formatting_alone_scores_nothing() -> None:
    # every written form of one date is the same tokens: each form finds each other form, and no form finds
    # another day, whatever its form
    for gold, shown in itertools.product(FORMS_OF_7_MAY_2023, repeat=2):
        assert answer_in_context(gold, f"Ana went to the group on {shown}.") is True, (gold, shown)
    for gold, other in itertools.product(FORMS_OF_7_MAY_2023, ["8 May 2023", "2023-05-08", "May 8, 2023"]):
        assert answer_in_context(gold, f"Ana went to the group on {other}.") is False, (gold, other)
    # case, punctuation, stopwords and plurals are formatting too
    assert answer_tokens("The Pottery Classes!") == answer_tokens("pottery class")
    assert answer_tokens("Sweden.") == answer_tokens("sweden")
    # coarser answers are held by a finer date, not the other way round
    assert answer_in_context("May 2023", "on 2023-05-07") and answer_in_context("2023", "on 7 May 2023")
    assert not answer_in_context("7 May 2023", "in May 2023")
    assert answer_in_context("The week before 9 June 2023", "[2023-06-09] Ana: the week before") is True


def test_all_content_tokens_must_be_there() -> None:
    assert answer_in_context("adoption agencies", "Ana looked into adoption agencies.") is True
    assert answer_in_context("adoption agencies", "Ana looked into adoption.") is False
    assert answer_in_context("Yes", "anything") is None  # no content token: not scored


def test_chance_is_the_question_half_the_list_away() -> None:
    assert chance_partners(4) == [2, 3, 0, 1]
    assert chance_partners(0) == []
    outcomes = [
        QuestionOutcome("m", "c", f"q{i}", 4, (), frozenset(), 5, 5, 0.0, answer=a)
        for i, a in enumerate(["Oslo", "Bergen", "Max", "Luna"])
    ]
    scored = with_answers(outcomes, ["Oslo", "Bergen", "Oslo", "Luna"])  # the context of q2 holds q0's answer too
    assert [o.answer_hit for o in scored] == [True, True, False, True]
    assert [o.chance_hit for o in scored] == [True, False, False, False]


def _conversation(stuffed: bool) -> tuple[list[QuestionOutcome], list[QuestionOutcome]]:
    """Twelve questions whose answers are dates and names; the 'with' contexts are stuffed with all of them."""
    answers = [f"{day} May 2023" for day in range(1, 7)] + ["Oslo", "Bergen", "Max", "Luna", "Ana", "Ben"]
    names = [f"q{i}" for i in range(len(answers))]
    plain = [f"Someone talked about {a}." if i % 3 == 0 else "Small talk." for i, a in enumerate(answers)]
    stuffing = " ".join(answers)
    with_ctx = [f"{c} {stuffing}" for c in plain] if stuffed else plain
    outcomes = [
        QuestionOutcome("m", "c", q, 4, (), frozenset(), 9, 9, 0.0, answer=a)
        for q, a in zip(names, answers, strict=True)
    ]
    return with_answers(outcomes, with_ctx), with_answers(outcomes, plain)


def test_a_context_stuffed_with_dates_and_names_gains_nothing_over_chance() -> None:
    with_facts, without = _conversation(stuffed=True)
    raw = paired_difference(
        [float(bool(a.answer_hit)) - float(bool(b.answer_hit)) for a, b in zip(with_facts, without, strict=True)]
    )
    assert raw.mean > 0.5  # the raw share rewards stuffing
    gain = chance_corrected_gain(
        [bool(o.answer_hit) for o in with_facts],
        [bool(o.chance_hit) for o in with_facts],
        [bool(o.answer_hit) for o in without],
        [bool(o.chance_hit) for o in without],
    )
    assert gain.mean <= 0.0 and gain.high <= 0.0  # ... the gain over chance does not


def test_information_about_the_question_is_a_gain() -> None:
    with_facts, without = _conversation(stuffed=False)
    answers = [o.answer for o in with_facts]
    own = with_answers(with_facts, [f"Someone talked about {a}." for a in answers])  # each context its own answer
    gain = chance_corrected_gain(
        [bool(o.answer_hit) for o in own],
        [bool(o.chance_hit) for o in own],
        [bool(o.answer_hit) for o in without],
        [bool(o.chance_hit) for o in without],
    )
    assert gain.mean == pytest.approx(8 / 12) and gain.low > 0


def test_chance_corrected_gain_pairs_question_by_question() -> None:
    with pytest.raises(ValueError, match="pair question by question"):
        chance_corrected_gain([True], [False], [True, False], [False, False])


SAMPLE = {
    "sample_id": "c1",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I started pottery classes last week."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Fun! What do you make?"},
            {"speaker": "Ana", "dia_id": "D1:3", "text": "Bowls, mostly. And we got a puppy yesterday!"},
            {"speaker": "Ben", "dia_id": "D1:4", "text": "Lovely."},
        ],
        "session_2_date_time": "10:00 am on 20 June, 2023",
        "session_2": [
            {"speaker": "Ana", "dia_id": "D2:1", "text": "We hiked up the hill near the lake."},
            {"speaker": "Ben", "dia_id": "D2:2", "text": "Sounds great."},
        ],
    },
    "observation": {
        "session_1_observation": {
            "Ana": [
                ["Ana started pottery classes in the week before 8 May 2023.", "D1:1"],
                ["Ana adopted a puppy named Biscuit on 7 May 2023.", "D1:3"],
            ],
            "Ben": [["Ben likes pottery.", "D1:2"]],
        },
        "session_2_observation": {"Ana": [["Ana hiked near Lake Tove in June 2023.", "D2:1"]]},
    },
    "qa": [
        {"question": "What did Ana start?", "answer": "pottery classes", "evidence": ["D1:1"], "category": 4},
        {"question": "What is the name of Ana's puppy?", "answer": "Biscuit", "evidence": ["D1:3"], "category": 1},
        {"question": "When did Ana get her puppy?", "answer": "7 May 2023", "evidence": ["D1:3"], "category": 2},
        {"question": "Where did Ana hike?", "answer": "Lake Tove", "evidence": ["D2:1"], "category": 4},
    ],
}


def test_the_benchmark_reports_answers_in_context_with_every_row(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([SAMPLE]))
    system = MemorySystem("memoryos", MemoryOSConfig())
    run = run_locomo(
        path, systems=[system], baselines=[Baseline("hybrid", words=60)], budgets=[60, 200], progress=False, n_boot=20
    )
    # the recall report keeps its rows; the answer rows are beside it
    assert [s.system for s in run.summaries] == [
        "memoryos ≤60 words",
        "memoryos ≤200 words",
        "hybrid ≤60 words",
        "hybrid ≤200 words",
    ]
    info = run.meta["answers_in_context"]
    assert info["oracle_writes"]["c1"]["written"] == 4 and info["oracle_writes"]["c1"]["stored"] == 4
    rows = info["budgets"][200]["rows"]
    assert set(rows) == {"with facts", "without facts", "oracle facts", "hybrid", "raw turns"}
    assert rows["without facts"]["system"] == "memoryos, no facts ≤200 words"
    # only the observations name the puppy and the lake: the oracle row finds them, no other row does
    oracle = {o.question: o for o in run.outcomes if o.system == "memoryos, oracle facts ≤200 words"}
    assert oracle["What is the name of Ana's puppy?"].answer_hit and oracle["Where did Ana hike?"].answer_hit
    for name in ("memoryos ≤200 words", "memoryos, no facts ≤200 words", "raw turns ≤200 words"):
        assert not [o for o in run.outcomes if o.system == name and o.question == "Where did Ana hike?"][0].answer_hit
    assert rows["oracle facts"]["share"] > rows["without facts"]["share"]
    assert "gain" in info["budgets"][200] and "oracle_gain" in info["budgets"][200]
    every = [o for o in run.outcomes if o.system.startswith(("memoryos", "hybrid", "raw turns"))]
    assert all(o.answer_hit is not None and o.chance_hit is not None for o in every)


def test_the_answer_rows_can_be_left_out(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([SAMPLE]))
    run = run_locomo(
        path,
        systems=[MemorySystem("memoryos", MemoryOSConfig())],
        baselines=[],
        progress=False,
        n_boot=10,
        answers=False,
    )
    assert "answers_in_context" not in run.meta and {o.system for o in run.outcomes} == {"memoryos"}
    assert all(o.answer_hit is not None for o in run.outcomes)  # every outcome is still scored
