"""The LoCoMo benchmark's protocols, word budgets and leave-one-conversation-out cross-validation.

Tiny hand-written conversations only (never the LoCoMo file); a real MemoryOS with the offline embeddings.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langchain_memoryos import MemoryOS, MemoryOSConfig
from langchain_memoryos.evaluation.baselines import Baseline, render_pages
from langchain_memoryos.evaluation.benchmark import PROTOCOLS, MemorySystem, budget_baselines, run_locomo
from langchain_memoryos.evaluation.cv import (
    DEFAULT_CV_GRID,
    check_grid,
    config_value,
    coordinate_ascent,
    loco_cv,
    recall_1_4,
    with_values,
)
from langchain_memoryos.evaluation.embedding_cache import CachedEmbeddings
from langchain_memoryos.evaluation.locomo import ingest_plain, plain_pages, plain_turn
from langchain_memoryos.evaluation.metrics import QuestionOutcome, count_words

UTC = dt.UTC


def conversation(sample_id: str, topic: str, place: str) -> dict[str, Any]:
    """Two sessions: an odd one (5 turns, a caption, opened by speaker_b) and an undated one (2 turns)."""
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ben", "dia_id": "D1:1", "text": "Hi Ana, what's new?"},
                {"speaker": "Ana", "dia_id": "D1:2", "text": f"I started {topic} classes last week."},
                {"speaker": "Ben", "dia_id": "D1:3", "text": "Great!", "blip_caption": f"a photo of {topic}"},
                {"speaker": "Ben", "dia_id": "D1:4", "text": "My dog ate my homework."},
                {"speaker": "Ana", "dia_id": "D1:5", "text": "Oh no."},
            ],
            "session_2_date_time": "not a date",  # unparsable: the session is dated a day after the last
            "session_2": [
                {"speaker": "Ana", "dia_id": "D2:1", "text": f"We moved to {place} in the spring."},
                {"speaker": "Ben", "dia_id": "D2:2", "text": "Lovely city."},
            ],
        },
        "qa": [
            {"question": "What classes did Ana start?", "answer": topic, "evidence": ["D1:2"], "category": 4},
            {"question": "Where did Ana move to?", "answer": place, "evidence": ["D2:1"], "category": 4},
            {"question": "What did Ben's dog eat?", "answer": "homework", "evidence": ["D1:4"], "category": 1},
        ],
    }


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    samples = [conversation("t1", "pottery", "Oslo"), conversation("t2", "salsa", "Lisbon")]
    path.write_text(json.dumps(samples))
    return path


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[dict[str, Any]]]]:
    """Record every turn added (add_turn, or one of add_turns) and every retrieve of every MemoryOS (they still run)."""
    seen: dict[str, list[dict[str, Any]]] = {"add_turn": [], "retrieve": []}
    add_turn, add_turns, retrieve = MemoryOS.add_turn, MemoryOS.add_turns, MemoryOS.retrieve

    def spy_add(self: MemoryOS, user_input: str, agent_response: str, **kwargs: Any) -> Any:
        seen["add_turn"].append({"user_input": user_input, "agent_response": agent_response, **kwargs})
        return add_turn(self, user_input, agent_response, **kwargs)

    def spy_add_many(self: MemoryOS, turns: list[dict[str, Any]], *, user_id: str, thread_id: str) -> Any:
        for turn in turns:
            seen["add_turn"].append({"user_id": user_id, "thread_id": thread_id, **turn})
        return add_turns(self, turns, user_id=user_id, thread_id=thread_id)

    def spy_retrieve(self: MemoryOS, query: str, **kwargs: Any) -> Any:
        seen["retrieve"].append({"query": query, **kwargs})
        return retrieve(self, query, **kwargs)

    monkeypatch.setattr(MemoryOS, "add_turn", spy_add)
    monkeypatch.setattr(MemoryOS, "add_turns", spy_add_many)
    monkeypatch.setattr(MemoryOS, "retrieve", spy_retrieve)
    yield seen


# -- the plain pairing ---------------------------------------------------------------------------------------


def test_plain_pages_pair_turns_by_position() -> None:
    pages = plain_pages(conversation("t1", "pottery", "Oslo"))
    assert [p.dia_ids for p in pages] == [("D1:1", "D1:2"), ("D1:3", "D1:4"), ("D1:5",), ("D2:1", "D2:2")]
    # whoever speaks: a page may be Ben + Ana, or Ben + Ben
    assert [(p.user_speaker, p.agent_speaker) for p in pages] == [
        ("Ben", "Ana"),
        ("Ben", "Ben"),
        ("Ana", ""),
        ("Ana", "Ben"),
    ]
    assert pages[2].agent_response == ""  # an odd last turn: a page with an empty answer
    assert pages[1].user_input == "Great! [shares a photo: a photo of pottery]"  # the caption kept as in the harness
    # one timestamp per session; an undated session a day after the previous one
    assert {p.timestamp for p in pages[:3]} == {dt.datetime(2023, 5, 8, 13, 56, tzinfo=UTC)}
    assert pages[3].timestamp == dt.datetime(2023, 5, 9, 13, 56, tzinfo=UTC)
    assert plain_turn(pages[1]) == ("Ben: Great! [shares a photo: a photo of pottery]", "Ben: My dog ate my homework.")
    assert plain_turn(pages[2]) == ("Ana: Oh no.", "")
    assert pages[0].text() == "[8 May 2023] Ben: Hi Ana, what's new? Ana: I started pottery classes last week."


def test_ingest_plain_is_the_plain_public_api(calls: dict[str, list[dict[str, Any]]]) -> None:
    memory = MemoryOS()
    assert ingest_plain(memory, conversation("t1", "pottery", "Oslo"), user_id="t1") == 4
    first = calls["add_turn"][0]
    assert first == {
        "user_input": "Ben: Hi Ana, what's new?",
        "agent_response": "Ana: I started pottery classes last week.",
        "user_id": "t1",
        "thread_id": "t1",
        "timestamp": dt.datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
        "metadata": {"source_id": ["D1:1", "D1:2"]},  # no user_name / agent_name, no turn id
    }
    assert calls["add_turn"][2]["agent_response"] == ""
    stm = memory.get_stm(user_id="t1", thread_id="t1")
    assert [tuple(p.source_ids()) for p in stm][-1] == ("D2:1", "D2:2")


# -- protocols in the benchmark ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "ingest_thread", "question_thread"),
    [("harness", "locomo", "questions"), ("plain", "t1", "t1"), ("fresh", "t1", "questions")],
)
def test_each_protocol_feeds_and_asks_on_its_threads(
    locomo_file: Path,
    calls: dict[str, list[dict[str, Any]]],
    protocol: str,
    ingest_thread: str,
    question_thread: str,
) -> None:
    run = run_locomo(
        locomo_file,
        systems=[MemorySystem("memoryos", MemoryOSConfig())],
        baselines=[Baseline("full")],
        conversations=1,
        protocol=protocol,
        progress=False,
        n_boot=10,
    )
    assert {c["thread_id"] for c in calls["add_turn"]} == {ingest_thread}
    # 3 questions, read as the memory, without facts and with the oracle's facts (answers in context)
    assert [c["thread_id"] for c in calls["retrieve"]] == [question_thread] * 9
    assert all(c["user_id"] == "t1" for c in calls["retrieve"])
    assert run.meta["protocol"] == protocol
    # the flat baselines rank the pages the memory stores under the protocol
    pages = PROTOCOLS[protocol].pages(conversation("t1", "pottery", "Oslo"))
    assert len(calls["add_turn"]) == len(pages)
    full = [o for o in run.outcomes if o.system == "full context"]
    assert {o.words for o in full} == {count_words(render_pages(pages))}
    if protocol != "harness":
        assert "Ben: Hi Ana" in calls["add_turn"][0]["user_input"]
        assert "metadata" in calls["add_turn"][0] and "user_name" not in calls["add_turn"][0]["metadata"]


def test_unknown_protocol_is_refused(locomo_file: Path) -> None:
    with pytest.raises(ValueError, match="unknown protocol 'live'; use harness, plain or fresh"):
        run_locomo(locomo_file, protocol="live", progress=False)


# -- word budgets ----------------------------------------------------------------------------------------------


def test_budgets_read_the_same_store_without_ingesting_again(
    locomo_file: Path, calls: dict[str, list[dict[str, Any]]]
) -> None:
    run = run_locomo(
        locomo_file,
        systems=[MemorySystem("memoryos", MemoryOSConfig(context_words=1000))],
        baselines=[Baseline("hybrid", words=1000), Baseline("last", 1)],
        budgets=[60, 120, 1000],
        protocol="fresh",
        progress=False,
        n_boot=10,
    )
    pages = sum(len(plain_pages(conversation(c, "x", "y"))) for c in ("t1", "t2"))
    assert len(calls["add_turn"]) == pages  # ingested once, read at three budgets
    # three budgets, 2 x 3 questions: as the memory, without facts and with the oracle's facts (answers in context)
    assert len(calls["retrieve"]) == 3 * 3 * 6
    names = [s.system for s in run.summaries]
    assert names == [
        "memoryos ≤60 words",
        "memoryos ≤120 words",
        "memoryos",
        "hybrid ≤1000 words",
        "last-1",
        "hybrid ≤60 words",
        "hybrid ≤120 words",
    ]
    words = {name: max(o.words for o in run.outcomes if o.system == name) for name in names}
    assert words["memoryos ≤60 words"] <= 60 < words["memoryos"] and words["memoryos ≤120 words"] <= 120
    assert words["hybrid ≤60 words"] <= 60 and words["hybrid ≤120 words"] <= 120
    assert run.meta["word_budgets"]["memoryos"] == 1000 and run.meta["word_budgets"]["hybrid ≤60 words"] == 60
    assert "memoryos / hybrid ≤1000 words" in run.meta["latency"]["p95_ratio"]
    assert run.meta["latency"]["query_embedding_ms"]["p50"] is not None


def test_budget_baselines_and_bad_budgets(locomo_file: Path) -> None:
    extra = budget_baselines([Baseline("bm25", words=1000), Baseline("dense", 10)], [500])
    assert [b.name for b in extra] == ["bm25 ≤1000 words", "dense top-10", "bm25 ≤500 words"]
    for bad in ([], [0], [500, 500]):
        with pytest.raises(ValueError, match="budgets"):
            run_locomo(locomo_file, budgets=bad, progress=False)


@pytest.mark.parametrize("protocol", ["harness", "plain"])
def test_dense_baselines_rank_the_memorys_own_page_vectors(locomo_file: Path, protocol: str) -> None:
    """The flat dense ranking embeds each page as the memory does, so it adds no embedding of its own."""

    def texts_embedded(baselines: list[Baseline]) -> int:
        cached = CachedEmbeddings(MemoryOS().embeddings)
        run_locomo(
            locomo_file,
            systems=[MemorySystem("memoryos", MemoryOSConfig())],
            baselines=baselines,
            embeddings=cached,
            protocol=protocol,
            progress=False,
            n_boot=10,
        )
        return cached.misses

    assert texts_embedded([Baseline("dense", 2), Baseline("hybrid", words=100)]) == texts_embedded([])


def test_systems_share_one_embedding_cache(locomo_file: Path) -> None:
    cached = CachedEmbeddings(MemoryOS().embeddings)
    run_locomo(
        locomo_file,
        systems=[MemorySystem("a", MemoryOSConfig()), MemorySystem("b", MemoryOSConfig(rrf_k=20.0))],
        baselines=[Baseline("dense", 2), Baseline("hybrid", 2)],
        embeddings=cached,
        progress=False,
        n_boot=10,
    )
    # system b's pages and every question for b and the baselines come from the cache
    assert cached.hits > cached.misses


# -- leave-one-conversation-out cross-validation ---------------------------------------------------------------


def one_question(conv: str, hit: bool, category: int = 4) -> QuestionOutcome:
    return QuestionOutcome("m", conv, f"q-{conv}", category, ("D1:1",), frozenset({"D1:1"} if hit else ()), 9, 9, 1.0)


def test_cv_fits_on_the_training_folds_only() -> None:
    """A constant that helps on four conversations and hurts on the fifth (3 of its questions).

    In-sample (fit on all five) x = 1 wins, 4 of 7 questions against 3; cross-validated, the fifth is
    scored with x = 1 (fitted on the four it helps) and each of the four with x = 0 (without it, the
    remaining three gained by x = 1 are exactly offset by the fifth's three losses: a tie keeps the start).
    """
    helped = ["a", "b", "c", "d"]

    def evaluate(conv: str, params: dict[str, Any]) -> list[QuestionOutcome]:
        x = params["x"]
        if conv in helped:
            return [one_question(conv, hit=x == 1)]
        return [one_question(conv, hit=x == 0) for _ in range(3)]

    evaluated: list[tuple[str, int]] = []

    def logged(conv: str, params: Any) -> list[QuestionOutcome]:
        evaluated.append((conv, params["x"]))
        return evaluate(conv, params)

    cv = loco_cv([*helped, "e"], logged, {"x": 0}, {"x": (0, 1)})
    in_sample = max(recall_1_4([o for c in [*helped, "e"] for o in evaluate(c, {"x": x})]) for x in (0, 1))
    assert in_sample == pytest.approx(4 / 7)
    assert cv.chosen == {"a": {"x": 0}, "b": {"x": 0}, "c": {"x": 0}, "d": {"x": 0}, "e": {"x": 1}}
    assert recall_1_4(cv.held_out) == 0.0 < in_sample
    assert [o.sample_id for o in cv.held_out] == ["a", "b", "c", "d", "e", "e", "e"]
    assert cv.evaluations == len(set(evaluated)) == 10  # each (conversation, constants) scored once
    assert cv.train_recall["e"] == 1.0


def test_coordinate_ascent_keeps_ties_and_moves_on_gains() -> None:
    flat = coordinate_ascent(lambda p: 0.5, {"a": 1.0}, {"a": (0.0, 1.0, 2.0)})
    assert flat == ({"a": 1.0}, 0.5)
    params, best = coordinate_ascent(lambda p: p["a"] + p["b"], {"a": 0, "b": 0}, {"a": (0, 1), "b": (0, 2)})
    assert params == {"a": 1, "b": 2} and best == 3


def test_grid_keys_name_config_fields_and_components() -> None:
    config = MemoryOSConfig()
    check_grid(DEFAULT_CV_GRID, config)
    assert config_value(config, "chain_weights[1]") == config.chain_weights[1]
    changed = with_values(config, {"chain_weights[0]": 0.0, "chain_weights[1]": 3.0, "rrf_k": 20.0})
    assert changed.chain_weights == (0.0, 3.0) and changed.rrf_k == 20.0
    with pytest.raises(ValueError, match="unknown MemoryOSConfig field"):
        check_grid({"speed": (1,)}, config)
    with pytest.raises(ValueError, match="no component 2"):
        check_grid({"chain_weights[2]": (1.0,)}, config)
    with pytest.raises(ValueError, match="rrf_k"):
        check_grid({"rrf_k": (-1.0,)}, config)  # MemoryOSConfig validates every candidate


def test_cv_in_the_benchmark_reads_each_store_without_ingesting(
    locomo_file: Path, calls: dict[str, list[dict[str, Any]]]
) -> None:
    run = run_locomo(
        locomo_file,
        systems=[MemorySystem("memoryos", MemoryOSConfig(top_pages=1))],
        baselines=[],
        categories=(1, 2, 3, 4),
        cv_grid={"top_pages": (1, 40), "rrf_k": (10.0, 20.0)},
        protocol="plain",
        progress=False,
        n_boot=10,
    )
    pages = sum(len(plain_pages(conversation(c, "x", "y"))) for c in ("t1", "t2"))
    assert len(calls["add_turn"]) == pages  # the grid points are read, never re-ingested
    assert [s.system for s in run.summaries] == ["memoryos", "memoryos (LOCO-CV)"]
    held = [o for o in run.outcomes if o.system == "memoryos (LOCO-CV)"]
    assert sorted((o.sample_id, o.question) for o in held) == sorted(
        (o.sample_id, o.question) for o in run.outcomes if o.system == "memoryos"
    )
    info = run.meta["cv"]["memoryos"]
    assert set(info["chosen"]) == {"t1", "t2"} and info["start"] == {"top_pages": 1, "rrf_k": 10.0}
    assert all(set(params) == {"top_pages", "rrf_k"} for params in info["chosen"].values())
    assert {c["thread_id"] for c in calls["retrieve"]} == {"t1", "t2"}  # plain: on the conversation's thread
    # the facts' words are fitted apart, on answers in context over chance, and its held-out row is scored
    shares = run.meta["cv"]["memoryos: facts words"]
    assert set(shares["chosen"]) == {"t1", "t2"} and shares["objective"].startswith("answers in context")
    assert all(set(params) == {"facts_words"} for params in shares["chosen"].values())
    held_share = [o for o in run.outcomes if o.system == "memoryos, facts words by LOCO-CV"]
    assert held_share and all(o.answer_hit is not None or not o.answer for o in held_share)


def test_cv_needs_two_conversations_and_a_grid(locomo_file: Path) -> None:
    with pytest.raises(ValueError, match="at least 2 conversations"):
        run_locomo(locomo_file, conversations=1, cv_grid={"rrf_k": (10.0,)}, baselines=[], progress=False)
    with pytest.raises(ValueError, match="cv_systems needs a cv_grid"):
        run_locomo(locomo_file, cv_systems=["memoryos"], progress=False)
    with pytest.raises(ValueError, match="unknown systems"):
        run_locomo(locomo_file, cv_grid={"rrf_k": (10.0,)}, cv_systems=["mem0"], progress=False)


# -- the command -------------------------------------------------------------------------------------------------


def test_bench_cli_runs_a_protocol_at_budgets_with_cv(locomo_file: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from langchain_memoryos.cli import app

    out = tmp_path / "rep"
    args = ["bench", "locomo", str(locomo_file), "--out", str(out), "--no-progress", "--systems", "memoryos"]
    args += ["--baselines", "none", "--protocol", "plain", "--budgets", "60,1000", "--cv", "--cv-grid", "rrf_k=10,20"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "protocol plain:" in result.output and "| memoryos (LOCO-CV) |" in result.output
    assert "LOCO-CV [memoryos]" in result.output and "| t1 | " in result.output
    report = json.loads((out / "report.json").read_text())
    assert report["meta"]["protocol"] == "plain" and report["meta"]["cv"]["memoryos"]["grid"] == {"rrf_k": [10, 20]}
    markdown = (out / "report.md").read_text()
    assert (
        "protocol plain" in markdown and "Recall 1–4 vs context words" in markdown and "LOCO-CV constants" in markdown
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--protocol", "live"], "--protocol: unknown protocol 'live'; use harness, plain or fresh"),
        (["--budgets", "0,500"], "--budgets: '0,500': use distinct word counts >= 1"),
        (["--budgets", "500,500"], "--budgets: '500,500': use distinct word counts >= 1"),
        (["--budgets", "many"], "--budgets: 'many': use word counts >= 1"),
        (["--cv-grid", "rrf_k=10"], "--cv-grid needs --cv"),
        (["--cv", "--cv-grid", "rrf_k"], "--cv-grid: 'rrf_k': use field=v1,v2"),
        (["--cv", "--cv-grid", "speed=1,2"], "unknown MemoryOSConfig field 'speed'"),
        (["--cv", "--conversations", "1"], "cross-validation needs at least 2 conversations"),
    ],
)
def test_bench_cli_flags_are_validated(locomo_file: Path, extra: list[str], message: str) -> None:
    from typer.testing import CliRunner

    from langchain_memoryos.cli import app

    result = CliRunner().invoke(app, ["bench", "locomo", str(locomo_file), "--no-progress", *extra])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0] and "Traceback" not in result.output
