"""The offline demo as a real process: `python -m langchain_memoryos.cli.demo`."""

from __future__ import annotations

import subprocess
import sys


def test_module_runs_as_a_script() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "langchain_memoryos.cli.demo"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "AMU update #" in proc.stdout and "PROBES  5/5" in proc.stdout
    assert len(proc.stdout.splitlines()) <= 60
    full = subprocess.run(
        [sys.executable, "-m", "langchain_memoryos.cli.demo", "--verbose"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert full.returncode == 0, full.stderr[-2000:]
    assert "RETRIEVAL PROBES" in full.stdout and "SUMMARY" in full.stdout
