"""The offline demo: runs end to end and shows real memory behaviour."""

from __future__ import annotations

import datetime as dt
import io
import re
from pathlib import Path

import pytest

from langchain_memoryos import MemoryOS
from langchain_memoryos.cli.demo import SECTION_TITLES, WIDTH, DemoResult, run_demo, turn_timestamp
from langchain_memoryos.cli.demo_data import PROBES, SESSIONS
from tests.scripted_model import replying


@pytest.fixture(scope="module")
def demo() -> tuple[DemoResult, str, MemoryOS]:
    """The full dump (``--verbose``)."""
    memory = MemoryOS()
    out = io.StringIO()
    result = run_demo(out=out, memory=memory, verbose=True)
    return result, out.getvalue(), memory


@pytest.fixture(scope="module")
def story() -> tuple[DemoResult, str]:
    """The default: one screen."""
    out = io.StringIO()
    result = run_demo(out=out)
    return result, out.getvalue()


def test_the_default_demo_tells_the_story_on_one_screen(story: tuple[DemoResult, str]) -> None:
    result, text = story
    lines = text.splitlines()
    assert len(lines) <= 60 and max(len(line) for line in lines) <= WIDTH
    titles = [next(i for i, line in enumerate(lines) if line.startswith(t)) for t in ("STM", "MTM", "LPM", "PROBES")]
    assert titles == sorted(titles)
    assert not any(title in lines for title in SECTION_TITLES)  # the full dump is --verbose
    assert "`memoryos demo --verbose` prints every tier in full" in lines[-1]


def test_the_story_shows_the_live_threads_stm(story: tuple[DemoResult, str]) -> None:
    _, text = story
    block = text.split("\nSTM ", 1)[1].split("\nMTM ", 1)[0]
    assert "live thread 'session-6'" in block
    assert "S6:8  2024-08-10 18:21  User: ok see you | Assistant: See you, Maya!" in block


def test_the_story_recalls_a_session_one_page_through_its_segment_in_rank_order(story: tuple[DemoResult, str]) -> None:
    _, text = story
    block = text.split("\nMTM ", 1)[1].split("\nLPM ", 1)[0]
    rows = [line.split() for line in block.splitlines() if re.match(r"\s+\d+\s+\d\.\d\d\s", line)]
    assert [int(r[0]) for r in rows] == [1, 2, 3, 4]
    scores = [float(r[1]) for r in rows]
    assert scores == sorted(scores, reverse=True) and all(0 < s < 1 for s in scores)  # the ranking's S(p)
    assert rows[0][2] == "S1:2" and "I have a dog named Biscuit." in block
    assert "S1:2 (session 1, rank 1) was recalled through segment s_" in block
    assert "summary: Conversation about biscuit" in block


def test_the_story_shows_the_fact_amu_updated_and_its_recall(story: tuple[DemoResult, str]) -> None:
    result, text = story
    block = text.split("\nLPM ", 1)[1].split("\nPROBES ", 1)[0]
    recall = result["fact_recall"]
    assert (
        recall is not None
        and recall["fact"] == "The user lives in Denver, having moved there in April 2024."
        and recall["fact_id"].startswith("f:")
    )
    ref = recall["fact_id"]
    assert "old    'The user lives in Portland.'  [S1:2]" in block
    assert "new    said in S4:1: 'I moved to Denver last month!" in block
    assert f"fused  [{ref}] 'The user lives in Denver, having moved there in April 2024.'  [S1:2 + S4:1]" in block
    # recalled: its source pages are in the context; within a small budget the fact is shown: its date (April 2024)
    # is what no page shown says
    assert recall["sources"] == ["S1:2", "S4:1"] and all(recall["source_ranks"][s] >= 1 for s in recall["sources"])
    assert not recall["in_context"] and f"[{ref}] is not repeated: its source pages say it" in block
    assert (
        recall["in_tight_context"]
        and f"asked within 200 words: [{ref}] 'The user lives in Denver, having moved there in April 2024.'" in block
    )
    assert "persona (from 5 promoted segments): location Denver, name Maya, occupation nurse" in block


def test_the_story_lists_every_probe_with_its_session_one_recall(story: tuple[DemoResult, str]) -> None:
    result, text = story
    block = text.split("\nPROBES ", 1)[1]
    assert f"{result['probe_hits']}/{len(PROBES)} questions about session 1" in block
    assert "HIT  Where did I live before I moved?" in block and "S1:2 at rank " in block
    assert block.count("HIT ") + block.count("MISS") == len(PROBES)


def test_conversation_is_long_dated_and_varied() -> None:
    turns = [t for s in SESSIONS for t in s["turns"]]
    assert len(turns) >= 40
    assert len(SESSIONS) >= 5
    starts = [turn_timestamp(s, 0) for s in SESSIONS]
    assert starts == sorted(starts) and len(set(s.date() for s in starts)) == len(SESSIONS)
    assert starts[-1] - starts[0] >= dt.timedelta(days=60)
    for session in SESSIONS:
        last = turn_timestamp(session, len(session["turns"]) - 1)
        assert last - turn_timestamp(session, 0) < dt.timedelta(hours=2)
    users = " ".join(u for u, _ in turns)
    for needle in (
        "My name is Maya",
        "I live in Portland",
        "I moved to Denver",
        "I don't like coffee anymore",
        "From now on, please keep your answers short",
        "Can you recommend a movie for tonight?",
    ):
        assert needle.lower() in users.lower()
    assert 4 <= len(PROBES) <= 6


def test_every_section_is_printed_in_order(demo: tuple[DemoResult, str, MemoryOS]) -> None:
    _, text, _ = demo
    lines = text.splitlines()
    positions = [lines.index(title) for title in SECTION_TITLES]
    assert positions == sorted(positions)


def test_lines_fit_the_width(demo: tuple[DemoResult, str, MemoryOS]) -> None:
    _, text, _ = demo
    assert max(len(line) for line in text.splitlines()) <= WIDTH


def test_every_turn_is_ingested(demo: tuple[DemoResult, str, MemoryOS]) -> None:
    result, _, _ = demo
    assert result["turns"] == sum(len(s["turns"]) for s in SESSIONS) >= 40
    assert result["added"] == result["turns"]
    stats = result["stats"]
    assert stats.mtm_pages + stats.stm_pages == result["turns"]
    assert stats.segments >= 1 and stats.user_facts >= 1


def test_a_hot_segment_is_promoted(demo: tuple[DemoResult, str, MemoryOS]) -> None:
    result, text, memory = demo
    assert result["promoted"] >= 1
    assert any(s.promotions >= 1 for s in memory.list_segments(user_id="maya"))
    assert "promoted s_" in text


def test_write_log_stores_and_discards_or_updates(demo: tuple[DemoResult, str, MemoryOS]) -> None:
    result, _, memory = demo
    events = result["events"]
    assert events["stored"] >= 1
    assert events["discarded"] + events["updated"] >= 1
    assert sum(events.values()) == len(memory.write_log(user_id="maya"))


def test_moved_city_probe_retrieves_the_earlier_city(demo: tuple[DemoResult, str, MemoryOS]) -> None:
    result, _, _ = demo
    moved = [r for r in result["probe_results"] if "Portland" in r["expected"]]
    assert moved, "a probe must ask for the city the user lived in before moving"
    assert all(r["hit"] for r in moved)


def test_probes_are_mostly_answered(demo: tuple[DemoResult, str, MemoryOS]) -> None:
    result, text, _ = demo
    assert result["probes"] == len(PROBES)
    assert result["probe_hits"] >= result["probes"] - 1
    assert text.count("[HIT ]") == result["probe_hits"]
    assert all(r["words"] > 0 and r["source_ids"] for r in result["probe_results"])


def test_replay_on_the_same_memory_adds_nothing(demo: tuple[DemoResult, str, MemoryOS]) -> None:
    first, _, memory = demo
    again = run_demo(out=io.StringIO(), memory=memory, verbose=True)
    assert again["turns"] == first["turns"] and again["added"] == 0
    assert again["events"] == first["events"]
    assert again["stats"].mtm_pages == first["stats"].mtm_pages
    assert again["stats"].user_facts == first["stats"].user_facts


def test_fused_updates_join_an_old_fact_and_a_new_one(demo: tuple[DemoResult, str, MemoryOS]) -> None:
    result, text, memory = demo
    assert len(result["fused"]) == result["events"]["updated"] >= 1
    moved = next(u for u in result["fused"] if "Denver" in u["fused"])
    assert moved["old"] == ["The user lives in Portland."] and moved["old_sources"] == ["S1:2"]
    assert moved["new_sources"] == ["S4:1"] and moved["sources"] == ["S1:2", "S4:1"]
    assert "portland → denver" in moved["reason"]
    # the fused record is what long-term memory holds now; the old one is gone
    summaries = [f.summary for f in memory.list_facts(user_id="maya")]
    assert (
        "The user lives in Denver, having moved there in April 2024." in summaries
        and "The user lives in Portland." not in summaries
    )
    block = text.split("FUSED UPDATES", 1)[1].split("RETRIEVAL PROBES", 1)[0]
    assert f"update #{moved['event']}: location changed: portland → denver" in block
    assert "old    'The user lives in Portland.'  [S1:2]" in block
    assert "fused  'The user lives in Denver, having moved there in April 2024.'  [S1:2 + S4:1]" in block
    assert memory.write_log(user_id="maya")[moved["event"] - 1].action == "updated"


def test_session_one_facts_are_recalled_at_the_end(demo: tuple[DemoResult, str, MemoryOS]) -> None:
    result, text, _ = demo
    recalls = {r["question"]: r for r in result["session1_recalls"]}
    where = recalls["Where did I live before I moved?"]
    assert where["source"] == "S1:2" and "Portland" in where["text"] and where["rank"] >= 1
    assert all(r["source"].startswith("S1:") for r in recalls.values())
    assert len(recalls) >= len([p for p in PROBES if p["about"].startswith("S1")]) - 1
    block = text.split("RECALLED FROM SESSION 1", 1)[1].split("SUMMARY", 1)[0]
    assert "recalled S1:2 (page" in block and "User: I live in Portland." in block
    assert "recalled from session 1: Where did I live before I moved? -> S1:2" in text


def test_a_model_answers_the_probes_from_the_context() -> None:
    model = replying(*[f"You said {i}." for i in range(len(PROBES))])
    out = io.StringIO()
    result = run_demo(out=out, model=model)
    assert [r["answer"] for r in result["probe_results"]] == [f"You said {i}." for i in range(len(PROBES))]
    assert out.getvalue().count("model answer: You said") == len(PROBES)
    assert result["stats"].llm_calls == 0  # ingestion stays offline


def test_color_only_when_asked() -> None:
    colored = io.StringIO()
    run_demo(out=colored, color=True, verbose=True)
    assert "\x1b[1;36mFUSED UPDATES\x1b[0m" in colored.getvalue() and "\x1b[32m[HIT ]" in colored.getvalue()


def test_make_demo_runs_the_console_script() -> None:
    makefile = (Path(__file__).parents[2] / "Makefile").read_text()
    recipe = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "$(VENV)/bin/memoryos demo" in recipe
