"""The LoCoMo metrics and report modules in a fresh interpreter without their optional dependencies."""

from __future__ import annotations

import subprocess
import sys


def test_modules_import_without_nltk_and_matplotlib() -> None:
    code = (
        "import sys\n"
        "for name in ('nltk', 'matplotlib'):\n"
        "    sys.modules[name] = None\n"
        "import langchain_memoryos.evaluation.metrics as m, langchain_memoryos.evaluation.report as r\n"
        "print(m.mem0_f1('a', 'a'), r.markdown_table([]).count('|') > 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1.0", "True"]
