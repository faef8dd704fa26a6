"""The `memoryos` command through its real entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from langchain_memoryos.cli import app

FIXTURE = Path(__file__).parent / "data" / "locomo_fixture.json"
runner = CliRunner()


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
    assert len(report["questions"]) == 4 * 9  # 9 category 1-4 questions in the fixture, 4 systems
    assert (out / "recall_vs_words.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "report.md").read_text().count("| memoryos |") == 1


def test_bad_arguments_are_one_line_errors(tmp_path: Path) -> None:
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
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}')
    result = runner.invoke(app, ["bench", "locomo", str(bad), "--no-progress"])
    assert result.exit_code == 2 and "not a LoCoMo file" in result.output


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "memoryos"
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run([str(script), "bench", "locomo", "--help"], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and "LoCoMo" in done.stdout
