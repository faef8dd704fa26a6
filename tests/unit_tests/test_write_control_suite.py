"""The labelled write-control suite: coverage of the data, and a floor on the offline controller."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from langchain_memoryos import MemoryOS
from langchain_memoryos.evaluation import GOLD_ACTIONS, WriteControlResult, load_write_control_suite, run_write_control

HELDOUT = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "write_control_heldout.json"


@pytest.fixture(scope="module")
def result() -> WriteControlResult:
    return run_write_control(MemoryOS())


def test_suite_covers_what_the_issue_asks() -> None:
    writes = [w for seq in load_write_control_suite() for w in seq]
    assert len(writes) >= 80
    assert {w.gold_aspect for w in writes} >= {
        "personal_profile",
        "social_relationship",
        "activity",
        "health",
        "preference",
        "other",
    }
    phenomena = Counter(w.phenomenon for w in writes)
    for needed in (
        "exact_repeat",
        "paraphrased_repeat",
        "moved_city",
        "new_job",
        "changed_diet",
        "ended_relationship",
        "narrowing",
        "transient_request",
        "small_talk",
        "emotion_no_fact",
        "third_party_fact",
    ):
        assert phenomena[needed] >= 2, needed
    assert set(Counter(w.gold for w in writes)) == set(GOLD_ACTIONS)
    for seq in load_write_control_suite():
        for w in seq:
            if w.gold in ("discard", "update"):
                assert w.refers_to is not None and seq[w.refers_to].gold in ("store", "update")


def test_heuristic_controller_floor(result: WriteControlResult) -> None:
    # the issue's CI floor is 70 %; the measured figure is in benchmarks/README.md
    assert result.accuracy >= 0.70, result.confusion_table()
    assert result.redundancy <= 0.02
    assert sum(sum(c.values()) for c in result.confusion.values()) == len(result.rows)


def test_every_filtered_write_of_the_suite_leaves_no_fact(result: WriteControlResult) -> None:
    # small talk, emotions and task requests must never become facts
    wrong = [
        r["text"]
        for r in result.rows
        if r["phenomenon"] in ("small_talk", "transient_request") and r["predicted"] != "filter"
    ]
    assert len(wrong) <= 2, wrong


def test_heldout_suite_floor() -> None:
    held = run_write_control(MemoryOS(), load_write_control_suite(HELDOUT))
    assert len(held.rows) >= 45
    assert held.accuracy >= 0.70, held.confusion_table()
