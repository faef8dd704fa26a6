"""LoCoMo reports: Markdown table, plot, and the files of a run."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from langchain_memoryos.evaluation.metrics import QuestionOutcome, SystemSummary, summarize
from langchain_memoryos.evaluation.report import markdown_table, plot_recall_vs_words, write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def make_summary(system: str, **overrides: Any) -> SystemSummary:
    base = SystemSummary(
        system=system,
        questions=10,
        recall_by_category={1: 0.5, 2: 0.8, 3: 0.25, 4: 0.9},
        count_by_category={1: 2, 2: 2, 3: 2, 4: 4},
        recall=0.753,
        recall_ci=(0.731, 0.774),
        all_hit=0.6,
        any_hit=0.85,
        words_mean=123.45,
        words_p95=300.0,
        tokens_mean=160.0,
        tokens_p95=400.0,
        latency_p50_ms=1.25,
        latency_p95_ms=4.5,
        f1=None,
        f1_by_category={},
        mem0_f1=None,
        bleu1=None,
        llm_calls_per_answer=None,
        llm_tokens_per_answer=None,
    )
    return replace(base, **overrides)


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


# --------------------------------------------------------------------------- markdown


def test_markdown_one_row_per_system() -> None:
    table = markdown_table([make_summary("bm25 top-10"), make_summary("memoryos")])
    lines = table.splitlines()
    assert len(lines) == 4  # header, separator, two systems
    header = cells(lines[0])
    assert header == [
        "System",
        "Recall 1–4 (95% CI)",
        "multi-hop",
        "temporal",
        "open-domain",
        "single-hop",
        "adversarial",
        "all-hit",
        "any-hit",
        "words mean",
        "words p95",
        "tokens mean",
        "p50 ms",
        "p95 ms",
    ]
    assert [cells(line)[0] for line in lines[2:]] == ["bm25 top-10", "memoryos"]
    assert all(len(cells(line)) == len(header) for line in lines[1:])


def test_markdown_percent_formatting() -> None:
    row = cells(markdown_table([make_summary("bm25")]).splitlines()[2])
    # 0.753 -> 75.3 %, interval 0.731-0.774 -> 73.1-77.4
    assert row[1] == "75.3 % (73.1–77.4)"
    # per category: 0.5, 0.8, 0.25, 0.9, no adversarial
    assert row[2:7] == ["50.0 %", "80.0 %", "25.0 %", "90.0 %", "n/a"]
    assert row[7:9] == ["60.0 %", "85.0 %"]
    # 123.45 is stored as 123.4500...03 -> 123.5; 1.25 is exact and rounds half to even -> 1.2
    assert row[9:] == ["123.5", "300.0", "160.0", "1.2", "4.5"]


def test_markdown_undefined_recall() -> None:
    empty = make_summary("empty", recall=math.nan, recall_ci=(math.nan, math.nan))
    row = cells(markdown_table([empty]).splitlines()[2])
    assert row[1] == "n/a"


def test_markdown_answer_columns_when_any_system_has_f1() -> None:
    with_f1 = make_summary(
        "llm", f1=0.4567, mem0_f1=0.5, bleu1=0.25, llm_calls_per_answer=1.5, llm_tokens_per_answer=200.0
    )
    lines = markdown_table([with_f1, make_summary("bm25")]).splitlines()
    assert cells(lines[0])[-5:] == ["F1", "Mem0 F1", "BLEU-1", "LLM calls/answer", "LLM tokens/answer"]
    # scores x100 with one decimal; calls with two decimals; tokens whole
    assert cells(lines[2])[-5:] == ["45.7", "50.0", "25.0", "1.50", "200"]
    assert cells(lines[3])[-5:] == ["n/a"] * 5
    assert "F1" not in markdown_table([make_summary("bm25")])


def test_markdown_escapes_pipes_in_names() -> None:
    row = markdown_table([make_summary("a|b")]).splitlines()[2]
    assert row.startswith("| a\\|b | ")


# --------------------------------------------------------------------------- plot


def test_plot_joins_families(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib.axes import Axes

    calls: list[tuple[str, list[float], list[float], str]] = []
    original = Axes.errorbar

    def spy(self: Axes, x: Any, y: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append((kwargs["label"], list(x), list(y), kwargs["fmt"]))
        return original(self, x, y, *args, **kwargs)

    monkeypatch.setattr(Axes, "errorbar", spy)
    summaries = [
        make_summary("bm25 top-20", words_mean=400.0, recall=0.8, recall_ci=(0.7, 0.9)),
        make_summary("memoryos@k5", words_mean=150.0, recall=0.6, recall_ci=(0.5, 0.7)),
        make_summary("bm25 top-10", words_mean=200.0, recall=0.7, recall_ci=(0.6, 0.8)),
        make_summary("dense", words_mean=300.0, recall=0.65, recall_ci=(0.6, 0.7)),
        make_summary("memoryos@k10", words_mean=250.0, recall=0.75, recall_ci=(0.7, 0.8)),
        make_summary("memoryos (paper)", words_mean=120.0, recall=0.5, recall_ci=(0.4, 0.6)),
        make_summary("bm25 ≤1000 words", words_mean=990.0, recall=0.85, recall_ci=(0.8, 0.9)),
        make_summary("last-10", words_mean=500.0, recall=0.1, recall_ci=(0.05, 0.15)),
    ]
    path = plot_recall_vs_words(summaries, tmp_path / "sub" / "plot.png", title="t")
    assert path == tmp_path / "sub" / "plot.png"
    assert path.read_bytes().startswith(PNG_MAGIC)
    # one series per family, members ordered by words, recall in percent; a line only for several members
    assert calls == [
        ("bm25", [200.0, 400.0, 990.0], [70.0, 80.0, 85.0], "o-"),
        ("memoryos", [150.0, 250.0], [60.0, pytest.approx(75.0)], "o-"),
        ("dense", [300.0], [65.0], "o"),
        ("memoryos (paper)", [120.0], [50.0], "o"),
        ("last", [500.0], [pytest.approx(10.0)], "o"),
    ]


def test_plot_missing_matplotlib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r"pip install 'langchain-memoryos\[bench\]'"):
        plot_recall_vs_words([make_summary("x")], tmp_path / "p.png")


# --------------------------------------------------------------------------- files


def run_outcomes() -> list[QuestionOutcome]:
    return [
        QuestionOutcome(
            "bm25 top-10", "conv-1", "Where?", 4, ("D1:2", "D1:1"), frozenset({"D1:2", "D3:1"}), 100, 130, 2.0
        ),
        QuestionOutcome("bm25 top-10", "conv-1", "When?", 2, ("D2:1",), frozenset({"D2:1"}), 300, 390, 6.0),
        QuestionOutcome("bm25 top-10", "conv-1", "Trick?", 5, (), frozenset(), 50, 60, 1.0),
    ]


def test_write_report_files(tmp_path: Path) -> None:
    outcomes = run_outcomes()
    summary = summarize("bm25 top-10", outcomes)
    meta = {"dataset": "locomo10.json", "questions": 3}
    paths = write_report([summary], tmp_path / "run", meta=meta, outcomes=outcomes)

    assert set(paths) == {"json", "markdown", "plot"}
    assert paths["json"] == tmp_path / "run" / "report.json"
    assert paths["markdown"] == tmp_path / "run" / "report.md"
    assert paths["plot"] == tmp_path / "run" / "recall_vs_words.png"
    assert all(p.is_file() for p in paths.values())

    png = paths["plot"].read_bytes()
    assert png.startswith(PNG_MAGIC)
    assert len(png) > 10_000

    markdown = paths["markdown"].read_text(encoding="utf-8")
    assert markdown.startswith("# ")
    assert "- dataset: locomo10.json" in markdown
    assert "- questions: 3" in markdown
    # recall (1/2 + 1) / 2 = 75.0 %; both bootstrap bounds lie in [50, 100]
    assert "| bm25 top-10 | 75.0 % (" in markdown


def test_write_report_json_round_trip(tmp_path: Path) -> None:
    outcomes = run_outcomes()
    summary = summarize("bm25 top-10", outcomes)
    paths = write_report([summary], tmp_path, meta={"dataset": "locomo10.json"}, outcomes=outcomes)
    data = json.loads(paths["json"].read_text(encoding="utf-8"))

    assert data["meta"] == {"dataset": "locomo10.json"}
    [system] = data["systems"]
    assert system == json.loads(json.dumps(summary.as_dict()))
    # question 1: D1:2 of (D1:2, D1:1) -> 1/2; question 2: 1 -> mean 0.75
    assert system["recall"] == pytest.approx(0.75)
    assert system["recall_by_category"] == {"2": 1.0, "4": 0.5}
    # categories 1-4 words [100, 300]: mean 200, p95 100 + 0.95 * 200 = 290
    assert system["words_mean"] == pytest.approx(200.0)
    assert system["words_p95"] == pytest.approx(290.0)
    # latency [2, 6]: p50 = 4
    assert system["latency_p50_ms"] == pytest.approx(4.0)
    assert system["f1"] is None

    assert len(data["questions"]) == 3
    first = data["questions"][0]
    assert first["retrieved"] == ["D1:2", "D3:1"]
    assert first["evidence"] == ["D1:2", "D1:1"]
    assert first["question"] == "Where?"
    assert first["prediction"] is None


def test_write_report_without_meta_or_outcomes(tmp_path: Path) -> None:
    paths = write_report([make_summary("a"), make_summary("b")], tmp_path)
    data = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert data["meta"] == {}
    assert data["questions"] == []
    assert [s["system"] for s in data["systems"]] == ["a", "b"]
    assert data["systems"][0]["recall_ci"] == [0.731, 0.774]
    table_rows = [line for line in paths["markdown"].read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    assert len(table_rows) == 3  # header and two systems
