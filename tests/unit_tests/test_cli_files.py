"""`memoryos ingest` and `memoryos import` check a whole file before writing any of it, and name where it is wrong."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from langchain_memoryos import MemoryOS
from tests.unit_tests.test_cli import SMALL, assert_one_error, run, write_jsonl

FIXTURE = Path(__file__).parent / "data" / "locomo_fixture.json"


def _locomo(tmp_path: Path, edit: Any) -> Path:
    samples = json.loads(FIXTURE.read_text(encoding="utf-8"))
    edit(samples[1]["conversation"])
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(samples), encoding="utf-8")
    return path


def test_a_bad_locomo_conversation_stores_nothing_and_names_file_conversation_and_session(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    cases = [
        (lambda c: c["session_1"][1].update(text="", speaker="Kim") or c["session_1"][0].update(text=""), "empty"),
        (lambda c: c.update(session_2="not a session"), "session_2 is a str, not a list of turns"),
        (lambda c: c["session_1"].append("hello"), "session_1 turn 4: a str, not an object"),
        (lambda c: c["session_1"][2].update(text=None), "session_1 turn 2: 'text' must be a string, got None"),
        (lambda c: c.update(session_1_date_time="1:00 pm on 8 May, 9999"), "max_clock_skew_seconds"),
        (lambda c: c.pop("speaker_b"), "'speaker_b' must name a speaker"),
    ]
    for edit, needle in cases:
        path = _locomo(tmp_path, edit)
        error = assert_one_error(run("ingest", path, "--user", "lo", "--db", db), 2, needle)
        assert f"{path}: conversation 1 (fx-2)" in error, error
        assert not db.exists()  # the first conversation was not stored either: nothing is written
    empty_page = _locomo(tmp_path, cases[0][0])
    error = assert_one_error(run("ingest", empty_page, "--user", "lo", "--db", db), 2, "session 1, turns D1:1")
    assert "an empty turn" in error


def test_a_jsonl_turn_that_add_turns_refuses_names_its_line_and_stores_nothing(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps(SMALL[0]) + '\n{"user": "hi", "thread_id": "\\ud800"}\n', encoding="utf-8")
    assert_one_error(run("ingest", path, "--user", "ana", "--db", db), 2, f"{path}:2:", "lone surrogate")
    assert not db.exists()


def test_unreadable_input_files_are_named_with_what_is_wrong(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(json.dumps(SMALL[0]).encode() + b'\n{"user": "caf\xe9"}\n')
    offset = len(json.dumps(SMALL[0]).encode()) + 1 + len(b'{"user": "caf')
    assert_one_error(run("ingest", latin, "--user", "u", "--db", db), 2, f"{latin}:2:", f"offset {offset}", "UTF-8")
    latin_json = tmp_path / "latin.json"
    latin_json.write_bytes(b'[\n{"sample_id": "caf\xe9"}]')
    assert_one_error(run("ingest", latin_json, "--user", "u", "--db", db), 2, f"{latin_json}:2:", "not UTF-8")
    broken = tmp_path / "broken.json"
    broken.write_text('[\n{"sample_id": "x",}\n]', encoding="utf-8")
    assert_one_error(run("ingest", broken, "--user", "u", "--db", db), 2, f"{broken}:2:", "invalid JSON")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    for command in ("ingest", "import"):
        args = ["--user", "u", "--db", db]
        assert_one_error(run(command, tmp_path, *args), 2, f"{tmp_path}: is a directory, not a file")  # type: ignore[arg-type]
        assert_one_error(run(command, empty, *args), 2, f"{empty}: the file is empty")  # type: ignore[arg-type]
        assert_one_error(run(command, "/dev/null", *args), 2, "/dev/null: the file is empty")  # type: ignore[arg-type]
        assert_one_error(run(command, tmp_path / "nope", *args), 2, "nope: no such file")  # type: ignore[arg-type]
    assert not db.exists()


def _export(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    db = tmp_path / "src.db"
    assert run("ingest", write_jsonl(tmp_path / "chat.jsonl", SMALL), "--user", "ana", "--db", db).exit_code == 0
    dump = tmp_path / "ana.json"
    assert run("export", "--user", "ana", "--db", db, "--out", dump).exit_code == 0
    return dump, json.loads(dump.read_text(encoding="utf-8"))


def test_a_bad_import_item_is_named_and_nothing_is_stored(tmp_path: Path) -> None:
    dump, data = _export(tmp_path)
    db = tmp_path / "m.db"
    index = next(i for i, row in enumerate(data["items"]) if row["namespace"][0] == "stm")
    for edit, needle in [
        (lambda r: r.pop("key"), rf"item {index} (STM page): 'key' must be a non-empty string"),
        (lambda r: r.update(namespace="pages"), rf"item {index}: 'namespace' must be a list"),
        (
            lambda r: r["value"].update(seq="abc"),
            rf"item {index} (STM page '{data['items'][index]['key']}') field 'seq'",
        ),
    ]:
        bad = copy.deepcopy(data)
        edit(bad["items"][index])  # type: ignore[no-untyped-call]
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad), encoding="utf-8")
        assert_one_error(run("import", path, "--db", db), 2, f"{path}: import_user: {needle}")
        assert not db.exists()


def test_import_modes_on_the_command_line(tmp_path: Path) -> None:
    dump, data = _export(tmp_path)
    db = tmp_path / "m.db"
    assert run("import", dump, "--db", db).exit_code == 0
    again = run("import", dump, "--db", db)
    assert_one_error(
        again, 2, f"{dump}: import_user: user 'ana' already has a memory", "--mode replace", "--mode merge"
    )
    assert_one_error(run("import", dump, "--db", db, "--mode", "overwrite"), 2, "--mode 'overwrite'", "refuse")
    merged = run("import", dump, "--db", db, "--mode", "merge")
    assert (
        merged.exit_code == 0 and "imported 0 items for user 'ana'" in merged.output and "(mode merge)" in merged.output
    )
    replaced = run("import", dump, "--db", db, "--mode", "replace")
    assert replaced.exit_code == 0 and f"imported {len(data['items'])} items" in replaced.output
    with MemoryOS.from_sqlite(db) as memory:
        assert memory.export_user(user_id="ana") == data and memory.check(user_id="ana") == []


def test_import_of_a_file_that_is_no_export_names_the_file(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    turns = write_jsonl(tmp_path / "chat.jsonl", SMALL)  # JSONL turns given to import: JSON with extra data
    assert_one_error(run("import", turns, "--db", db), 2, f"{turns}:2:1: invalid JSON: Extra data")
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]", encoding="utf-8")
    assert_one_error(run("import", listed, "--db", db), 2, f"{listed}: not a memoryos export")
    assert not db.exists()
