"""The `memoryos` command as a real process (the installed console script, `python -m`) and on PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import postgres_url, wipe_postgres
from tests.unit_tests.test_cli import SMALL, assert_one_error, run, write_jsonl

# -- storage options ----------------------------------------------------------------------------------


def test_postgres_storage_is_a_real_server(tmp_path: Path) -> None:
    url = postgres_url()
    wipe_postgres(url)
    path = write_jsonl(tmp_path / "c.jsonl", SMALL)
    assert run("ingest", path, "--user", "ana", "--postgres", url, "--no-progress").exit_code == 0
    found = run("recall", "Where do I live?", "--user", "ana", "--postgres", url)
    assert found.exit_code == 0 and "Lisbon" in found.output
    assert run("delete", "--user", "ana", "--yes", "--postgres", url).exit_code == 0
    empty = run("recall", "Where do I live?", "--user", "ana", "--postgres", url, "--json")
    assert empty.exit_code == 0 and "Lisbon" not in empty.output


def test_an_unreachable_postgres_is_one_error() -> None:
    result = run("recall", "q", "--user", "u", "--postgres", "postgresql://postgres@127.0.0.1:1/x?connect_timeout=2")
    assert_one_error(result, 1, "cannot connect")


# -- the real process ---------------------------------------------------------------------------------


def _process(*args: str | Path, input: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("MEMORYOS_MODEL", None)
    return subprocess.run(
        [sys.executable, "-m", "langchain_memoryos.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        input=input,
        timeout=300,
        check=False,
    )


def test_python_dash_m_runs_the_commands(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    path = write_jsonl(tmp_path / "chat.jsonl", SMALL)
    done = _process("ingest", path, "--user", "ana", "--db", db, "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "3 added" in done.stdout
    recall = _process("recall", "Where do I live?", "--user", "ana", "--db", db, "--json")
    assert recall.returncode == 0 and "Lisbon" in json.loads(recall.stdout)["prompt"]
    missing = _process("inspect", "--user", "ana", "--db", tmp_path / "other.db")
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'other.db'}: no such database (run 'memoryos ingest' or 'memoryos chat' first, "
        "or pass --db PATH)"
    ]
    chat = _process("chat", "--user", "ana", "--db", db, input="What's my cat called?\n")
    assert chat.returncode == 0 and "Miso" in chat.stdout and "hint:" in chat.stderr


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "memoryos"
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run([str(script), "bench", "locomo", "--help"], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and "LoCoMo" in done.stdout
    listed = subprocess.run([str(script), "--help"], capture_output=True, text=True, env=env)
    for command in ("demo", "chat", "ingest", "recall", "inspect", "export", "import", "delete", "bench"):
        assert command in listed.stdout
