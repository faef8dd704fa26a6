"""The README's code runs as written: every Python block marked runnable is executed, in order, offline.

A block is marked by the line ``<!-- runnable -->`` just before its opening fence. The blocks of
one file share a namespace (a later block may use what an earlier one defined), run in a fresh
working directory (so ``memory.db`` is a new file), with no API key and no network.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
MARK = "<!-- runnable -->"
_BLOCK = re.compile(re.escape(MARK) + r"\s*\n```python\n(?P<code>.*?)\n```", re.DOTALL)


def runnable_blocks(text: str) -> list[str]:
    """The code of every Python block marked runnable, in order."""
    return [m.group("code") for m in _BLOCK.finditer(text)]


def test_the_marker_finds_blocks() -> None:
    sample = (
        f"intro\n{MARK}\n```python\nx = 1\n```\n\n```python\nnot = marked\n```\n{MARK}\n```python\ny = x + 1\n```\n"
    )
    assert runnable_blocks(sample) == ["x = 1", "y = x + 1"]


def test_every_runnable_readme_block_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = runnable_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 2, "the README's quick start and forget blocks are marked runnable"
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    for i, code in enumerate(blocks):
        try:
            exec(compile(code, f"README.md block {i + 1}", "exec"), namespace)  # noqa: S102 - the README's own code
        except Exception as exc:  # noqa: BLE001 - reported with the block
            pytest.fail(f"README block {i + 1} fails as written: {type(exc).__name__}: {exc}\n{code}")
    for value in namespace.values():  # close what the blocks opened
        close = getattr(value, "close", None)
        if callable(close) and type(value).__name__ == "MemoryOS":
            close()
    assert os.listdir(tmp_path)  # the blocks ran here (memory.db)
