"""The notebooks in ``notebooks/`` are committed without outputs (their execution: tests/integration_tests)."""

from __future__ import annotations

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
