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
    assert "RETRIEVAL PROBES" in proc.stdout and "SUMMARY" in proc.stdout
