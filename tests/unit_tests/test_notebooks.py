"""The notebooks in ``notebooks/`` are committed without outputs (their execution: tests/integration_tests)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = (
    "01_quickstart.ipynb",
    "02_langgraph_agent.ipynb",
    "03_write_control.ipynb",
    "04_locomo_benchmark.ipynb",
)


def test_notebooks_are_committed_without_outputs() -> None:
    assert sorted(p.name for p in NOTEBOOK_DIR.glob("*.ipynb")) == list(NOTEBOOKS)  # a new notebook needs a test
    for name in NOTEBOOKS:
        nb = nbformat.read(NOTEBOOK_DIR / name, as_version=4)  # type: ignore[no-untyped-call]
        nbformat.validate(nb)
        assert nb.metadata["kernelspec"]["name"] == "python3", name
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [], f"{name}: a cell has outputs: {cell.source[:60]!r}"
                assert cell.execution_count is None, f"{name}: a cell has an execution count: {cell.source[:60]!r}"
            assert "execution" not in cell.metadata, f"{name}: a cell keeps execution timings"


README = NOTEBOOK_DIR.parent / "README.md"
#: What the notebooks' text said before facts were written with their turns (issue 31): now untrue.
FACTS_WAIT = re.compile(
    r"sends its facts through|its facts pass the AMU|facts reach the knowledge base only when|every promotion sent"
    r"|facts reach long-term memory through mid-term segments",
    re.IGNORECASE,
)


def _markdown_cells(name: str) -> list[str]:
    notebook = nbformat.read(NOTEBOOK_DIR / name, as_version=4)  # type: ignore[no-untyped-call]  # nbformat.read is unannotated
    return [c.source for c in notebook.cells if c.cell_type == "markdown"]


def test_the_notebooks_text_agrees_with_the_readme() -> None:
    """The dev-set figures notebook 04 quotes are the README's; no notebook says facts wait for promotion."""
    readme = " ".join(README.read_text(encoding="utf-8").split())
    quoted = [text for text in _markdown_cells("04_locomo_benchmark.ipynb") if "development conversations" in text]
    assert quoted, "notebook 04 no longer quotes the dev-set figures: update this test"
    figures = re.findall(r"\d+\.\d %", " ".join(quoted))
    assert len(figures) >= 3 and all(f"{figure}" in readme for figure in figures), (figures, "not in the README")
    words = re.search(r"mean of ([\d–]+) words", " ".join(quoted))
    assert words is not None and f"{words[1]} words" in readme
    for name in NOTEBOOKS:
        for text in _markdown_cells(name):
            said = FACTS_WAIT.search(" ".join(text.split()))
            assert said is None, f"{name}: facts are written when their turn is added, not at promotion: {said}"
