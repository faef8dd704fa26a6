"""The stage figure of docs/architecture.md is the stage table's, regenerated (never edited by hand)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.pipeline import figure, stages

ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def test_the_architecture_figure_is_current_with_the_stage_table() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    start, end = text.index(figure.BEGIN) + len(figure.BEGIN), text.index(figure.END)
    assert text[start:end].strip() == figure.stage_figure(), (
        "docs/architecture.md's stage figure is stale: run python -m langchain_memoryos.pipeline.figure"
    )


def test_the_figure_follows_a_changed_table(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    before = figure.stage_figure()
    fuse = stages.WRITE_TABLE["fuse"]
    changed = tuple(
        dataclasses.replace(s, routes=(*s.routes, "write_gate")) if s is fuse else s for s in stages.WRITE_STAGES
    )
    monkeypatch.setattr(figure, "WRITE_STAGES", changed)
    after = figure.stage_figure()
    assert "  fuse --> write_gate" in after and "  fuse --> write_gate" not in before
    doc = tmp_path / "arch.md"
    doc.write_text(f"# x\n{figure.BEGIN}\n{before}\n{figure.END}\ntail\n", encoding="utf-8")
    assert figure.update_figure(doc) and after in doc.read_text(encoding="utf-8")
    assert doc.read_text(encoding="utf-8").endswith(f"{figure.END}\ntail\n")


def test_a_document_without_the_markers_is_refused(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("# nothing here\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="no stage figure markers"):
        figure.update_figure(doc)
