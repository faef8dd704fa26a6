"""The `memoryos` command through its real entry point, typer's CliRunner on `app` (in this process).

The installed script, `python -m` and the `--postgres` storage: tests/integration_tests/test_cli.py.
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from langchain_memoryos import MemoryOS
from langchain_memoryos import cli as cli_module
from langchain_memoryos.cli import app, read_turns
from langchain_memoryos.cli.demo import session_thread_id, turn_timestamp
from langchain_memoryos.cli.demo_data import PROBES, SESSIONS
from tests.scripted_model import ScriptedToolModel, replying

FIXTURE = Path(__file__).parent / "data" / "locomo_fixture.json"
runner = CliRunner()
#: wide output (no wrapped table cells), no colors, no model from the environment
ENV: dict[str, str | None] = {"COLUMNS": "200", "NO_COLOR": "1", "MEMORYOS_MODEL": None, "OPENAI_BASE_URL": None}


def run(*args: str | Path, input: str | None = None, env: dict[str, str | None] | None = None) -> Result:
    return runner.invoke(app, [str(a) for a in args], input=input, env={**ENV, **(env or {})})


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def assert_one_error(result: Result, code: int, *needles: str) -> str:
    assert result.exit_code == code, (result.exit_code, result.output)
    errors = error_lines(result.output)
    assert len(errors) == 1, result.output
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    return errors[0]


def write_jsonl(path: Path, rows: Sequence[dict[str, Any] | str]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


SMALL = [
    {"user": "Hi, my name is Ana and I live in Lisbon.", "assistant": "Nice to meet you, Ana!"},
    {"user_input": "I teach chemistry at a high school.", "agent_response": "A great job.", "turn_id": "t2"},
    {"user": "My cat is called Miso.", "assistant": "Cute name!", "timestamp": "2024-02-03T10:00:00"},
]


@pytest.fixture
def small_db(tmp_path: Path) -> Path:
    db = tmp_path / "m.db"
    result = run("ingest", write_jsonl(tmp_path / "chat.jsonl", SMALL), "--user", "ana", "--db", db, "--no-progress")
    assert result.exit_code == 0, result.output
    return db


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo conversation (six dated sessions, one thread each) ingested through `memoryos ingest`."""
    folder = tmp_path_factory.mktemp("demo")
    rows: list[dict[str, Any] | str] = []
    for number, session in enumerate(SESSIONS, start=1):
        for index, (user_input, agent_response) in enumerate(session["turns"]):
            rows.append(
                {
                    "user": user_input,
                    "assistant": agent_response,
                    "timestamp": turn_timestamp(session, index).isoformat(),
                    "thread_id": session_thread_id(number),
                    "metadata": {"source_id": f"S{number}:{index + 1}"},
                    "turn_id": f"S{number}:{index + 1}",
                }
            )
    db = folder / "demo.db"
    result = run("ingest", write_jsonl(folder / "maya.jsonl", rows), "--user", "maya", "--db", db)
    assert result.exit_code == 0, result.output
    assert f"{len(rows)} turns, {len(rows)} added, 0 duplicates skipped" in result.output
    return db


def copy_db(db: Path, to: Path) -> Path:
    target = to / db.name
    shutil.copy(db, target)
    return target


# -- ingest -------------------------------------------------------------------------------


def test_ingest_jsonl_is_idempotent(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    path = write_jsonl(tmp_path / "chat.jsonl", [SMALL[0], "", SMALL[1], "   ", SMALL[2]])
    first = run("ingest", path, "--user", "ana", "--db", db)
    assert first.exit_code == 0, first.output
    assert "user 'ana': 3 turns, 3 added, 0 duplicates skipped" in first.output
    assert "3 STM pages" in first.output
    again = run("ingest", path, "--user", "ana", "--db", db, "--no-progress")
    assert again.exit_code == 0, again.output
    assert "3 turns, 0 added, 3 duplicates skipped" in again.output
    with MemoryOS.from_sqlite(db) as memory:
        pages = memory.get_stm(user_id="ana")
    assert [p.user_input for p in pages] == [SMALL[0]["user"], SMALL[1]["user_input"], SMALL[2]["user"]]
    # ids: given turn ids are kept; the others are "<file>:<line>:<digest>" (blank lines count)
    ids = [p.metadata.get("turn_id") for p in pages]
    assert ids[0].startswith("chat.jsonl:1:") and ids[1] == "t2" and ids[2].startswith("chat.jsonl:5:")  # type: ignore[union-attr]
    assert [p.source_ids() for p in pages] == [[f"{path.resolve()}:{n}"] for n in (1, 3, 5)]
    assert pages[2].timestamp.isoformat() == "2024-02-03T10:00:00+00:00"


def test_ingest_files_with_the_same_name_lose_no_turn(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    (tmp_path / "x1").mkdir()
    (tmp_path / "x2").mkdir()
    one = write_jsonl(tmp_path / "x1" / "chat.jsonl", [SMALL[0], SMALL[2]])
    two = write_jsonl(tmp_path / "x2" / "chat.jsonl", [{"user": "I play the cello.", "assistant": "Lovely!"}, SMALL[2]])
    first = run("ingest", one, "--user", "zed", "--db", db, "--no-progress")
    assert "2 turns, 2 added, 0 duplicates skipped" in first.output, first.output
    second = run("ingest", two, "--user", "zed", "--db", db, "--no-progress")
    # line 2 is the same text as x1's line 2, but another file's turn: stored too
    assert "2 turns, 2 added, 0 duplicates skipped" in second.output, second.output
    again = run("ingest", two, "--user", "zed", "--db", db, "--no-progress")
    assert "2 turns, 0 added, 2 duplicates skipped" in again.output, again.output
    with MemoryOS.from_sqlite(db) as memory:
        pages = memory.get_stm(user_id="zed")
    assert sorted(p.user_input for p in pages) == sorted(
        [SMALL[0]["user"], SMALL[2]["user"], "I play the cello.", SMALL[2]["user"]]
    )
    sources = sorted(s for p in pages for s in p.source_ids())
    assert len(set(sources)) == 4  # provenance tells the two files apart
    assert {s.rsplit(":", 1)[0] for s in sources} == {str(one.resolve()), str(two.resolve())}


def test_ingest_bad_line_is_one_error_with_its_line_number(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    bad_json = write_jsonl(tmp_path / "bad.jsonl", [SMALL[0], "", '{"user": "unterminated'])
    line = assert_one_error(run("ingest", bad_json, "--user", "ana", "--db", db), 2, "bad.jsonl:3:", "invalid JSON")
    assert line.startswith("error: ")
    assert not db.exists()  # the file is checked before anything is stored
    cases = [
        ({"user": 3}, "'user' must be a string"),
        ({"note": "no text"}, "no 'user_input'"),
        ({"user": "hi", "metadata": [1]}, "'metadata' must be an object"),
        ({"user": "hi", "timestamp": "yesterday-ish"}, "bad.jsonl:2:"),
        ('["a list"]', "a JSON object expected"),
        ({"user": "hi", "timestamp": "9999-12-31T23:59:59"}, "max_clock_skew_seconds"),
        ({"user": "hi", "timestamp": 2**63}, "out of range"),
        ('{"user": "hi", "metadata": {"score": NaN}}', "metadata['score'] is NaN"),
    ]
    for row, needle in cases:
        path = write_jsonl(tmp_path / "bad.jsonl", [SMALL[0], row])  # type: ignore[list-item]
        assert_one_error(run("ingest", path, "--user", "ana", "--db", db), 2, "bad.jsonl:2:", needle)
    assert not db.exists()


MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Hi, I'm Ana and I live in Lisbon.", "timestamp": "2024-02-03T10:00:00"},
    {"role": "assistant", "content": "Nice to meet you, Ana!"},
    {"role": "human", "content": "I teach chemistry."},
    {"role": "user", "content": "At a high school.", "thread_id": "work"},
    {"role": "human", "content": "Mostly to teenagers."},
    {"role": "ai", "content": "A great job.", "metadata": {"channel": "web"}},
    {"role": "assistant", "content": "Noted: a high school.", "thread_id": "work"},
    {"role": "user", "content": "My cat is called Miso."},
]


def test_ingest_takes_role_and_content_lines_paired_as_add_messages_pairs_them(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    path = write_jsonl(tmp_path / "chat.jsonl", MESSAGES)
    first = run("ingest", path, "--user", "ana", "--db", db, "--no-progress")
    assert first.exit_code == 0, first.output
    assert "user 'ana': 3 turns, 3 added, 0 duplicates skipped" in first.output
    assert "1 user message(s) without an answer yet (line 9)" in first.output
    expected = MemoryOS()  # the same messages through add_messages, per thread
    for thread in ("default", "work"):
        said = [{k: m[k] for k in ("role", "content")} for m in MESSAGES if m.get("thread_id", "default") == thread]
        expected.add_messages(said, user_id="ana", thread_id=thread)
    with MemoryOS.from_sqlite(db) as memory:
        for thread in ("default", "work"):
            pages = memory.get_stm(user_id="ana", thread_id=thread)
            want = expected.get_stm(user_id="ana", thread_id=thread)
            assert [(p.user_input, p.agent_response) for p in pages] == [(p.user_input, p.agent_response) for p in want]
        home = memory.get_stm(user_id="ana")
    assert home[0].timestamp.isoformat() == "2024-02-03T10:00:00+00:00"
    assert home[0].source_ids() == [f"{path.resolve()}:2", f"{path.resolve()}:3"]
    assert home[1].metadata["channel"] == "web" and home[1].source_ids() == [f"{path.resolve()}:{n}" for n in (4, 6, 7)]
    again = run("ingest", path, "--user", "ana", "--db", db, "--no-progress")
    assert "3 turns, 0 added, 3 duplicates skipped" in again.output, again.output
    # the answer comes: the waiting question is stored with it, nothing else again
    answered = write_jsonl(path, [*MESSAGES, {"role": "assistant", "content": "Cute name!"}])
    later = run("ingest", answered, "--user", "ana", "--db", db, "--no-progress")
    assert "4 turns, 1 added, 3 duplicates skipped" in later.output, later.output
    with MemoryOS.from_sqlite(db) as memory:
        assert [p.agent_response for p in memory.get_stm(user_id="ana")][-1] == "Cute name!"


def test_ingest_bad_message_line_names_the_file_and_line(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    cases: list[tuple[dict[str, Any], str]] = [
        ({"role": "tool", "content": "42"}, "'role' must be one of user, human, assistant, ai, system, got 'tool'"),
        ({"role": 3, "content": "hi"}, "'role' must be one of"),
        ({"role": "user", "content": None}, "'content' must be a string, got NoneType"),
        ({"role": "user", "content": [{"type": "text"}]}, "'content' must be a string, got list"),
        ({"role": "user", "content": "hi", "user": "hi"}, "either a message ('role' and 'content') or a turn"),
        ({"role": "user", "content": "hi", "metadata": {"x": float("inf")}}, "metadata['x'] is inf"),
        ({"role": "user", "content": "hi", "timestamp": "9999-12-31T23:59:59"}, "max_clock_skew_seconds"),
    ]
    for row, needle in cases:
        path = write_jsonl(tmp_path / "bad.jsonl", [MESSAGES[1], row])  # json.dumps writes inf as Infinity
        assert_one_error(run("ingest", path, "--user", "ana", "--db", db), 2, f"{path}:2:", needle)
    assert not db.exists()  # the file is checked before anything is stored


def test_read_turns_reads_both_field_names(tmp_path: Path) -> None:
    turns = read_turns(write_jsonl(tmp_path / "t.jsonl", SMALL))
    assert [(t.user_input, t.agent_response, t.line) for t in turns][1] == (
        "I teach chemistry at a high school.",
        "A great job.",
        2,
    )
    assert turns[0].metadata == {"source_id": f"{(tmp_path / 't.jsonl').resolve()}:1"} and turns[0].timestamp is None


def test_ingest_locomo_fixture(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    result = run("ingest", FIXTURE, "--user", "lo", "--db", db)
    assert result.exit_code == 0, result.output
    assert "(LoCoMo)" in result.output
    # two conversations: one user each
    assert "user 'lo-fx-1': 7 turns, 7 added" in result.output
    assert "user 'lo-fx-2': 3 turns, 3 added" in result.output
    again = run("ingest", FIXTURE, "--user", "lo", "--db", db, "--no-progress")
    assert "user 'lo-fx-1': 7 turns, 0 added, 7 duplicates skipped" in again.output
    found = run("recall", "Where did Ana move?", "--user", "lo-fx-1", "--db", db, "--json")
    data = json.loads(found.stdout)
    assert "Oslo" in data["prompt"] and "D1:1" in data["source_ids"]
    # one conversation picked: it goes to the user as given
    one = run("ingest", FIXTURE, "--user", "solo", "--conversation", "1", "--db", db, "--no-progress")
    assert one.exit_code == 0 and "user 'solo': 3 turns, 3 added" in one.output
    assert_one_error(run("ingest", FIXTURE, "--user", "x", "--conversation", "7", "--db", db), 2, "0..1")


# -- recall ---------------------------------------------------------------------------------


def test_recall_prints_the_context_and_its_sources(small_db: Path) -> None:
    result = run("recall", "Where do I live?", "--user", "ana", "--db", small_db)
    assert result.exit_code == 0, result.output
    assert "Lisbon" in result.output and "# Memory" in result.output
    assert "sources: " in result.output and "chat.jsonl:3" in result.output
    as_json = run("recall", "Where do I live?", "--user", "ana", "--db", small_db, "--json")
    data = json.loads(as_json.stdout)
    assert data["empty"] is False and data["counts"]["stm"] == 1 and data["counts"]["pages"] == 2  # compact STM
    assert "I live in Lisbon" in data["prompt"]
    chat = (small_db.parent / "chat.jsonl").resolve()
    assert data["source_ids"] == [f"{chat}:1", f"{chat}:2", f"{chat}:3"]
    assert [p["id"][:2] for p in data["stm"] + data["pages"]] == ["p:"] * 3  # the ids forget(page_id=) takes
    assert any("Lisbon" in p["text"] for p in data["stm"] + data["pages"])
    assert all(p["stored_id"].startswith("p_") and p["source_ids"] for p in data["stm"] + data["pages"])
    other = json.loads(run("recall", "Where do I live?", "--user", "bob", "--db", small_db, "--json").stdout)
    assert other["empty"] is True and other["source_ids"] == [] and "Lisbon" not in other["prompt"]


def test_recall_finds_a_first_session_fact_in_mid_term_memory(demo_db: Path) -> None:
    data = json.loads(run("recall", "What's my dog called?", "--user", "maya", "--db", demo_db, "--json").stdout)
    assert data["counts"]["pages"] > 0 and "S1:2" in data["source_ids"]
    assert "Biscuit" in data["prompt"]


# -- inspect -----------------------------------------------------------------------------------


def test_inspect_shows_every_tier(demo_db: Path) -> None:
    result = run("inspect", "--user", "maya", "--db", demo_db, "--limit", "0")
    assert result.exit_code == 0, result.output
    out = result.output
    with MemoryOS.from_sqlite(demo_db) as memory:
        segment = memory.list_segments(user_id="maya")[0]
        log = memory.write_log(user_id="maya")
        stm = memory.get_stm(user_id="maya", thread_id="session-6")
    assert "Short-term memory: thread 'session-6'" in out
    assert stm[-1].user_input in out  # "ok see you"
    assert "Mid-term segments" in out and segment.id in out and f"{segment.heat:.2f}" in out
    assert "Persona" in out and "agent profile" in out
    facts = out.split("User facts (", 1)[1].split("Agent traits (", 1)[0]
    assert (
        "The user lives in Denver, having moved there in April 2024." in facts
        and "The user lives in Portland." not in facts
    )  # fused away
    assert f"AMU write log (last {len(log)} of {len(log)})" in out
    for action in ("stored", "discarded", "updated", "filtered"):
        assert f" {action} " in out
    assert "fused into one current record" in out  # an update's reason
    last3 = run("inspect", "--user", "maya", "--db", demo_db, "--limit", "3").output
    shown = last3.split(f"AMU write log (last 3 of {len(log)})", 1)[1]
    # (the first event's text may come back in a later one: a duplicate, discarded, names what it repeats)
    assert log[-1].record.summary in shown and "│ 1 │" not in shown
    assert f"│ {len(log)} │" in shown and f"│ {len(log) - 3} │" not in shown


def test_inspect_an_empty_user_says_none(small_db: Path) -> None:
    out = run("inspect", "--user", "nobody", "--db", small_db).output
    assert (
        "0 STM pages" in out and "User facts (0): (none)" in out and "Mid-term segments (hottest first): (none)" in out
    )


# -- export / delete / import -------------------------------------------------------------------


def test_export_delete_import_roundtrip(small_db: Path, tmp_path: Path) -> None:
    dump = tmp_path / "ana.json"
    exported = run("export", "--user", "ana", "--db", small_db, "--out", dump)
    assert exported.exit_code == 0 and "exported" in exported.output
    data = json.loads(dump.read_text())
    assert data["user_id"] == "ana" and len(data["items"]) >= 3
    assert json.loads(run("export", "--user", "ana", "--db", small_db).stdout) == data  # same JSON on stdout

    kept = run("delete", "--user", "ana", "--db", small_db, input="n\n")
    assert kept.exit_code == 1 and "aborted: nothing was deleted" in kept.output
    assert "Lisbon" in run("recall", "Where do I live?", "--user", "ana", "--db", small_db).output

    deleted = run("delete", "--user", "ana", "--db", small_db, "--yes")
    assert deleted.exit_code == 0 and f"deleted {len(data['items'])} items of user 'ana'" in deleted.output
    gone = run("recall", "Where do I live?", "--user", "ana", "--db", small_db)
    assert gone.exit_code == 0 and "(memory is empty for user 'ana')" in gone.output and "Lisbon" not in gone.output

    imported = run("import", dump, "--db", small_db)
    assert imported.exit_code == 0 and f"imported {len(data['items'])} items for user 'ana'" in imported.output
    assert "Lisbon" in run("recall", "Where do I live?", "--user", "ana", "--db", small_db).output
    as_other = run("import", dump, "--user", "copy", "--db", small_db)
    assert as_other.exit_code == 0
    assert "Lisbon" in run("recall", "Where do I live?", "--user", "copy", "--db", small_db).output


def test_delete_vacuum_shrinks_the_sqlite_file(tmp_path: Path) -> None:
    from tests.conftest import bulky_export

    db = tmp_path / "m.db"
    with MemoryOS.from_sqlite(db) as memory:
        memory.import_user(bulky_export(1500, "zebraquartz", user_id="ana"), user_id="ana")
        memory.add_turn("Bob keeps goats.", "ok", user_id="bob")
    size = db.stat().st_size
    result = run("delete", "--user", "ana", "--yes", "--db", db, "--vacuum")
    assert result.exit_code == 0 and "deleted 1500 items" in result.output and "ran VACUUM" in result.output
    assert db.stat().st_size < size / 4  # the freed pages went back to the file system
    with MemoryOS.from_sqlite(db) as memory:
        assert [p.user_input for p in memory.get_stm(user_id="bob")] == ["Bob keeps goats."]


def test_delete_confirmed_interactively(small_db: Path) -> None:
    result = run("delete", "--user", "ana", "--db", small_db, input="y\n")
    assert result.exit_code == 0 and "deleted" in result.output
    with MemoryOS.from_sqlite(small_db) as memory:
        assert memory.stats(user_id="ana").stm_pages == 0


# -- chat ------------------------------------------------------------------------------------


def test_chat_without_a_model_shows_the_context_and_learns(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    lines = "I moved to Oslo last week.\n\nMy cat is called Miso.\nWhere do I live?\nquit\nnot read\n"
    result = run("chat", "--user", "bo", "--db", db, input=lines)
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.count("hint: no chat model configured") == 1
    assert "--model openai:gpt-4o-mini" in out and "MEMORYOS_MODEL" in out and "OPENAI_BASE_URL" in out
    first, rest = out.split("memory would inject for: My cat is called Miso.", 1)
    assert "(memory is empty)" in first
    assert "I moved to Oslo last week." in rest  # a later message sees the earlier one
    assert "stored 3 turns for user 'bo' in thread 'default'" in out
    with MemoryOS.from_sqlite(db) as memory:
        pages = memory.get_stm(user_id="bo")
    assert [(p.user_input, p.agent_response) for p in pages] == [
        ("I moved to Oslo last week.", ""),
        ("My cat is called Miso.", ""),
        ("Where do I live?", ""),
    ]
    # the next session remembers
    again = run("chat", "--user", "bo", "--db", db, "--thread", "t2", input="Where do I live again?\n")
    assert "Oslo" in again.output and "(memory is empty)" not in again.output


def test_chat_with_a_model_answers_with_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names: list[str] = []
    model = ScriptedToolModel(script={"text": [lambda messages: f"reply {len(messages)}"]})

    def factory(name: str) -> ScriptedToolModel:
        names.append(name)
        return model

    monkeypatch.setattr(cli_module, "_MODEL_FACTORY", factory)
    db = tmp_path / "m.db"
    # the model comes from $MEMORYOS_MODEL when --model is not given
    result = run(
        "chat",
        "--user",
        "bo",
        "--db",
        db,
        input="I moved to Oslo.\nWhere do I live?\n",
        env={"MEMORYOS_MODEL": "fake:model"},
    )
    assert result.exit_code == 0, result.output
    assert names == ["fake:model"]
    assert "hint:" not in result.output
    # system + question, then system + (human, ai) from STM + question
    assert "assistant> reply 2" in result.output and "assistant> reply 4" in result.output
    prompts = [prompt for schema, prompt in model.calls if schema == "text"]
    assert len(prompts) == 2
    assert "remembers the user" in prompts[1] and "I moved to Oslo." in prompts[1] and "reply 2" in prompts[1]
    with MemoryOS.from_sqlite(db) as memory:
        pages = memory.get_stm(user_id="bo")
    assert [(p.user_input, p.agent_response) for p in pages] == [
        ("I moved to Oslo.", "reply 2"),
        ("Where do I live?", "reply 4"),
    ]
    flag = run("chat", "--user", "bo", "--db", db, "--model", "other:model", input="")
    assert flag.exit_code == 0 and names[-1] == "other:model"


def test_a_model_that_cannot_be_built_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def factory(name: str) -> Any:
        raise ImportError("install the 'openai' extra")

    monkeypatch.setattr(cli_module, "_MODEL_FACTORY", factory)
    result = run("chat", "--user", "bo", "--db", tmp_path / "m.db", "--model", "openai:x", input="hi\n")
    assert_one_error(result, 2, "--model 'openai:x'", "install the 'openai' extra")
    assert not (tmp_path / "m.db").exists()


# -- demo ------------------------------------------------------------------------------------------


def test_demo_shows_a_fused_update_and_a_session_one_recall() -> None:
    story = run("demo", "--no-color")
    assert story.exit_code == 0, story.output
    assert len(story.output.splitlines()) <= 60 and "\x1b[" not in story.output
    assert "old    'The user lives in Portland.'  [S1:2]" in story.output
    assert "'The user lives in Denver, having moved there in April 2024.'  [S1:2 + S4:1]" in story.output
    result = run("demo", "--no-color", "--verbose")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "\x1b[" not in out
    fused = out.split("FUSED UPDATES", 1)[1].split("RETRIEVAL PROBES", 1)[0]
    assert "old    'The user lives in Portland.'  [S1:2]" in fused
    assert "new    said in S4:1: 'I moved to Denver last month!" in fused
    assert "fused  'The user lives in Denver, having moved there in April 2024.'  [S1:2 + S4:1]" in fused
    recalled = out.split("RECALLED FROM SESSION 1", 1)[1]
    assert "Q: Where did I live before I moved?" in recalled
    assert "recalled S1:2 (page" in recalled and "I live in Portland." in recalled
    assert "probes answered from memory: 5/5" in out


def test_demo_with_a_model_answers_the_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    numbers = itertools.count(1)
    model = replying(lambda messages: f"answer {next(numbers)}")
    monkeypatch.setattr(cli_module, "_MODEL_FACTORY", lambda name: model)
    result = run("demo", "--model", "fake:model", "--no-color")
    assert result.exit_code == 0, result.output
    assert result.output.count("model answer: ") == len(PROBES)
    assert f"model answer: answer {len(PROBES)}" in result.output
    assert "0 LLM calls" in result.output  # ingestion stayed offline


def test_demo_can_keep_its_memory(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    assert run("demo", "--db", db).exit_code == 0
    data = json.loads(run("recall", "Where did I live before?", "--user", "maya", "--db", db, "--json").stdout)
    assert "Portland" in data["prompt"]


# -- storage options ----------------------------------------------------------------------------------


def test_default_database_is_memoryos_db_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", SMALL)
    monkeypatch.chdir(tmp_path)
    assert_one_error(run("recall", "q", "--user", "ana"), 2, "memoryos.db: no such database")
    assert run("ingest", path, "--user", "ana", "--no-progress").exit_code == 0
    assert (tmp_path / "memoryos.db").is_file()
    assert "Lisbon" in run("recall", "Where do I live?", "--user", "ana").output


# -- errors ----------------------------------------------------------------------------------------


def test_bad_arguments_are_one_line_errors(tmp_path: Path, small_db: Path) -> None:
    missing = tmp_path / "missing.db"
    not_a_db = tmp_path / "notes.db"
    not_a_db.write_text("this is not sqlite" * 100)
    not_an_export = tmp_path / "x.json"
    not_an_export.write_text('{"hello": 1}')
    not_locomo = tmp_path / "list.json"
    not_locomo.write_text('[{"no": "conversation"}]')
    cases: list[tuple[list[str | Path], str]] = [
        (["recall", "q", "--user", "u", "--frobnicate"], "No such option: --frobnicate"),
        (["recall", "q"], "Missing option '--user'"),
        (["inspect", "--user", "u", "--db", small_db, "--limit", "many"], "--limit"),
        (["recall", "q", "--user", "u", "--db", small_db, "--postgres", "postgresql://x"], "--db and --postgres"),
        (["ingest", tmp_path / "nope.jsonl", "--user", "u", "--db", small_db], "nope.jsonl: no such file"),
        (["ingest", not_locomo, "--user", "u", "--db", small_db], "not a LoCoMo file"),
        (["ingest", FIXTURE.with_suffix(".jsonl"), "--user", "u"], "no such file"),
        (["import", tmp_path / "nope.json", "--db", small_db], "nope.json: no such file"),
        (["import", not_an_export, "--db", small_db], "not a memoryos export"),
        (["recall", "q", "--user", "u", "--db", not_a_db], "not a memoryos database"),
        (["recall", "q", "--user", "u", "--db", tmp_path / "no" / "such.db"], "no such database"),
    ]
    for command in ("recall", "inspect", "export", "delete"):
        args: list[str | Path] = [command, "--user", "u", "--db", missing]
        if command == "recall":
            args.insert(1, "question")
        cases.append((args, f"{missing}: no such database (run 'memoryos ingest'"))
    for args, needle in cases:
        assert_one_error(run(*args), 2, needle)
    assert not missing.exists()  # a read command never creates the database


def test_an_unexpected_failure_is_one_line_too(small_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(self: MemoryOS, *args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(MemoryOS, "retrieve", boom)
    assert_one_error(run("recall", "q", "--user", "ana", "--db", small_db), 1, "ZeroDivisionError: division by zero")


def test_no_command_shows_help() -> None:
    result = run()
    assert "ingest" in result.output and "recall" in result.output and "Traceback" not in result.output


# -- bench ------------------------------------------------------------------------------------------------


def test_bench_locomo_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "rep"
    result = runner.invoke(
        app,
        [
            "bench",
            "locomo",
            str(FIXTURE),
            "--out",
            str(out),
            "--no-progress",
            "--systems",
            "memoryos",
            "--baselines",
            "bm25:2,last:1,full",
            "--categories",
            "1,2,3,4",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "| memoryos |" in result.output and "| bm25 top-2 |" in result.output
    assert "turns/s" in result.output
    report = json.loads((out / "report.json").read_text())
    assert [s["system"] for s in report["systems"]] == ["memoryos", "bm25 top-2", "last-1", "full context"]
    assert report["meta"]["categories"] == [1, 2, 3, 4]
    # 9 category 1-4 questions in the fixture, 4 systems + 3 rows of answers in context (no facts, oracle, raw turns)
    assert len(report["questions"]) == 7 * 9
    assert "answers in context" in result.output and "## Answers in context" in (out / "report.md").read_text()
    assert (out / "recall_vs_words.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "report.md").read_text().count("| memoryos |") == 1


def test_bench_bad_arguments_are_one_line_errors(tmp_path: Path) -> None:
    cases = [
        (["bench", "locomo", str(tmp_path / "missing.json")], "no such file"),
        (["bench", "locomo", str(FIXTURE), "--baselines", "tfidf:3"], "unknown baseline kind"),
        (["bench", "locomo", str(FIXTURE), "--systems", "mem0"], "unknown system"),
        (["bench", "locomo", str(FIXTURE), "--categories", "9"], "categories"),
        (["bench", "locomo", str(FIXTURE), "--conversations", "0"], "conversations"),
    ]
    for args, message in cases:
        result = runner.invoke(app, [*args, "--no-progress"])
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "Traceback" not in result.output
        assert len(error_lines(result.output)) == 1
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}')
    result = runner.invoke(app, ["bench", "locomo", str(bad), "--no-progress"])
    assert result.exit_code == 2 and "not a LoCoMo file" in result.output


def test_recall_is_a_preview_that_counts_no_visit(demo_db: Path) -> None:
    def visits() -> list[tuple[str, int]]:
        with MemoryOS.from_sqlite(demo_db) as memory:
            return [(s.id, s.n_visit) for s in memory.list_segments(user_id="maya")]

    before = visits()
    for _ in range(2):
        assert run("recall", "What's my dog called?", "--user", "maya", "--db", demo_db).exit_code == 0
    assert visits() == before
