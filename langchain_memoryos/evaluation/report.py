"""LoCoMo reports: a Markdown table, a recall-vs-context plot, and the files of a run.

The plot needs ``matplotlib``, an optional dependency (the ``bench`` extra),
imported only when a plot is drawn.

Example:
    >>> from langchain_memoryos.evaluation.metrics import QuestionOutcome, summarize
    >>> o = QuestionOutcome("bm25 top-10", "conv-1", "q", 4, ("D1:1",), frozenset({"D1:1"}), 120, 160, 2.0)
    >>> print(markdown_table([summarize("bm25 top-10", [o])]).splitlines()[2].split(" | ")[1])
    100.0 % (100.0–100.0)
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_memoryos.evaluation.metrics import (
    CATEGORIES,
    QuestionOutcome,
    SystemSummary,
    _bench_import_error,
)

__all__ = ["cv_table", "latency_lines", "markdown_table", "plot_recall_vs_words", "recall_words_table", "write_report"]

_MISSING = "n/a"
_SIZE_SUFFIX = re.compile(r"(?:\s+top-\d+|\s+≤\s*\d+\s+words|@.*|-\d+)$")


def _is_missing(value: float | None) -> bool:
    return value is None or math.isnan(value)


def _pct(value: float | None) -> str:
    return _MISSING if value is None or _is_missing(value) else f"{value * 100:.1f} %"


def _num(value: float | None, digits: int = 1) -> str:
    return _MISSING if value is None or _is_missing(value) else f"{value:.{digits}f}"


def _recall_cell(summary: SystemSummary) -> str:
    low, high = summary.recall_ci
    if _is_missing(low) or _is_missing(high):
        return _pct(summary.recall)
    return f"{_pct(summary.recall)} ({low * 100:.1f}–{high * 100:.1f})"


_Column = tuple[str, Callable[[SystemSummary], str]]

_RETRIEVAL_COLUMNS: list[_Column] = [
    ("System", lambda s: s.system.replace("|", "\\|")),
    ("Recall 1–4 (95% CI)", _recall_cell),
    *[(name, lambda s, c=c: _pct(s.recall_by_category.get(c))) for c, name in CATEGORIES.items()],
    ("all-hit", lambda s: _pct(s.all_hit)),
    ("any-hit", lambda s: _pct(s.any_hit)),
    ("words mean", lambda s: _num(s.words_mean)),
    ("words p95", lambda s: _num(s.words_p95)),
    ("tokens mean", lambda s: _num(s.tokens_mean)),
    ("p50 ms", lambda s: _num(s.latency_p50_ms)),
    ("p95 ms", lambda s: _num(s.latency_p95_ms)),
]
# answer scores are shown x100, like the LoCoMo and Mem0 papers
_ANSWER_COLUMNS: list[_Column] = [
    ("F1", lambda s: _num(None if s.f1 is None else s.f1 * 100)),
    ("Mem0 F1", lambda s: _num(None if s.mem0_f1 is None else s.mem0_f1 * 100)),
    ("BLEU-1", lambda s: _num(None if s.bleu1 is None else s.bleu1 * 100)),
    ("LLM calls/answer", lambda s: _num(s.llm_calls_per_answer, 2)),
    ("LLM tokens/answer", lambda s: _num(s.llm_tokens_per_answer, 0)),
]


def markdown_table(summaries: Sequence[SystemSummary]) -> str:
    """A Markdown table with one row per system.

    Recall numbers are percentages with one decimal, the overall 1–4 recall
    with its 95 % bootstrap interval (``75.3 % (73.1–77.4)``); undefined values
    are ``n/a``. When any system has answer scores, the columns F1, Mem0 F1,
    BLEU-1 (all x100), LLM calls/answer and LLM tokens/answer are added.

    Args:
        summaries: the systems, in the order of the rows.

    Returns:
        The table, header and separator lines included, without a trailing newline.

    Example:
        >>> from langchain_memoryos.evaluation.metrics import QuestionOutcome, summarize
        >>> o = QuestionOutcome("bm25", "conv-1", "q", 2, ("D1:1", "D1:2"), frozenset({"D1:1"}), 100, 130, 3.0)
        >>> table = markdown_table([summarize("bm25", [o])])
        >>> table.splitlines()[0].split(" | ")[:3]
        ['| System', 'Recall 1–4 (95% CI)', 'multi-hop']
        >>> "| 50.0 % (50.0–50.0) | n/a | 50.0 % |" in table
        True
    """
    columns = _RETRIEVAL_COLUMNS + (_ANSWER_COLUMNS if any(s.f1 is not None for s in summaries) else [])
    lines = [
        "| " + " | ".join(name for name, _ in columns) + " |",
        "|" + "|".join("---" for _ in columns) + "|",
    ]
    lines += ["| " + " | ".join(cell(s) for _, cell in columns) + " |" for s in summaries]
    return "\n".join(lines)


def _family(system: str) -> str:
    """A system's family: its name without its size (``bm25 top-10``, ``bm25 ≤1000 words`` -> ``bm25``).

    The size is a trailing `` top-N``, `` ≤N words``, ``-N`` or ``@…``; other
    names are families of their own (``memoryos (paper)`` is not ``memoryos``).
    """
    return _SIZE_SUFFIX.sub("", system) or system


def _families(summaries: Sequence[SystemSummary]) -> dict[str, list[SystemSummary]]:
    families: dict[str, list[SystemSummary]] = {}
    for summary in summaries:
        families.setdefault(_family(summary.system), []).append(summary)
    return {name: sorted(members, key=lambda s: s.words_mean) for name, members in families.items()}


def _error_bar(summary: SystemSummary) -> tuple[float, float]:
    """Distances (in percentage points) from the recall down and up to its interval; 0 when undefined."""
    low, high = summary.recall_ci
    if _is_missing(low) or _is_missing(high) or _is_missing(summary.recall):
        return (0.0, 0.0)
    return (max(0.0, summary.recall - low) * 100, max(0.0, high - summary.recall) * 100)


def plot_recall_vs_words(
    summaries: Sequence[SystemSummary],
    path: str | Path,
    *,
    title: str = "LoCoMo evidence recall vs context words",
    annotate: bool = True,
) -> Path:
    """Plot each system's recall (with its 95 % interval) against its mean context words.

    Renders with matplotlib's Agg canvas, so no display is needed and the pyplot
    backend of the caller is left alone. Systems of one family (the name up to the
    size, e.g. ``bm25 top-10`` and ``bm25 ≤1000 words``) are joined by a
    line, ordered by words. The word axis is logarithmic, so a full-context
    baseline does not squeeze the others into one corner.

    Args:
        summaries: the systems.
        path: the PNG to write (parent folders are created).
        title: the plot's title.
        annotate: write each point's system name beside it.

    Returns:
        The path written.

    Raises:
        ImportError: when matplotlib (the ``bench`` extra) is missing.

    Example:
        >>> import tempfile
        >>> from langchain_memoryos.evaluation.metrics import QuestionOutcome, summarize
        >>> o = QuestionOutcome("bm25 top-10", "c", "q", 4, ("D1:1",), frozenset({"D1:1"}), 120, 160, 2.0)
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     png = plot_recall_vs_words([summarize("bm25 top-10", [o])], Path(tmp) / "plot.png")
        ...     png.read_bytes()[1:4]
        b'PNG'
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise _bench_import_error("matplotlib") from exc
    figure = Figure(figsize=(8, 5.5))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for family, members in _families(summaries).items():
        bars = [_error_bar(s) for s in members]
        axes.errorbar(
            [s.words_mean for s in members],
            [s.recall * 100 for s in members],
            yerr=[[low for low, _ in bars], [high for _, high in bars]],
            fmt="o-" if len(members) > 1 else "o",
            capsize=3,
            label=family,
        )
        for s in members if annotate else ():
            axes.annotate(
                s.system, (s.words_mean, s.recall * 100), textcoords="offset points", xytext=(5, 5), fontsize=8
            )
    if summaries and all(s.words_mean > 0 for s in summaries):
        axes.set_xscale("log")
    axes.set_xlabel("context words (mean, categories 1–4)")
    axes.set_ylabel("evidence recall, categories 1–4 (%)")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    if summaries:
        axes.legend(fontsize=8)
    figure.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=150, format="png")
    return out


def recall_words_table(summaries: Sequence[SystemSummary], budgets: Mapping[str, int]) -> str:
    """Recall 1–4 against the word budget: a row per family, a column per budget.

    Each cell is the recall and, in brackets, the mean words actually used.

    Args:
        summaries: the systems.
        budgets: the word budget of each budgeted system (``meta["word_budgets"]``); others are left out.

    Returns:
        The Markdown table ("" when no system has a budget).

    Example:
        >>> from langchain_memoryos.evaluation.metrics import QuestionOutcome, summarize
        >>> def row(name, hit, words):
        ...     o = QuestionOutcome(name, "c", "q", 4, ("D1:1",), frozenset({"D1:1"} if hit else ()), words, 1, 1.0)
        ...     return summarize(name, [o], n_boot=10)
        >>> rows = [row("memoryos", True, 990), row("memoryos ≤250 words", False, 240),
        ...         row("bm25 ≤250 words", True, 249)]
        >>> print(recall_words_table(rows, {"memoryos": 1000, "memoryos ≤250 words": 250, "bm25 ≤250 words": 250}))
        | System | ≤250 words | ≤1000 words |
        |---|---|---|
        | memoryos | 0.0 % (240) | 100.0 % (990) |
        | bm25 | 100.0 % (249) | n/a |
    """
    budgeted = [s for s in summaries if s.system in budgets]
    if not budgeted:
        return ""
    columns = sorted({budgets[s.system] for s in budgeted})
    cells: dict[str, dict[int, SystemSummary]] = {}
    for summary in budgeted:
        cells.setdefault(_family(summary.system), {})[budgets[summary.system]] = summary
    lines = [
        "| System | " + " | ".join(f"≤{b} words" for b in columns) + " |",
        "|" + "|".join("---" for _ in range(len(columns) + 1)) + "|",
    ]
    for family, by_budget in cells.items():
        row = [
            f"{_pct(by_budget[b].recall)} ({by_budget[b].words_mean:.0f})" if b in by_budget else _MISSING
            for b in columns
        ]
        lines.append("| " + " | ".join([family.replace("|", "\\|"), *row]) + " |")
    return "\n".join(lines)


def latency_lines(meta: Mapping[str, Any]) -> list[str]:
    """The latency facts of a run's meta as Markdown bullets (query embedding, p95 ratios).

    Example:
        >>> for line in latency_lines({"latency": {"query_embedding_ms": {"p50": 6.1, "p95": 9.0},
        ...                            "p95_ratio": {"memoryos / hybrid ≤1000 words": 1.3}}}):
        ...     print(line)
        - a question's embedding (measured once, alone; charged to dense and hybrid baselines): p50 6.1 ms, p95 9.0 ms
        - p95 memoryos / hybrid ≤1000 words: 1.3×
    """
    latency = meta.get("latency") or {}
    out: list[str] = []
    query = latency.get("query_embedding_ms") or {}
    if query.get("p50") is not None:
        out.append(
            "- a question's embedding (measured once, alone; charged to dense and hybrid baselines): "
            f"p50 {query['p50']} ms, p95 {query['p95']} ms"
        )
    out += [f"- p95 {pair}: {ratio}×" for pair, ratio in (latency.get("p95_ratio") or {}).items()]
    return out


def cv_table(info: Mapping[str, Any]) -> str:
    """The constants a leave-one-conversation-out run chose per held-out conversation (``meta["cv"][system]``).

    The last column is the training score of each fold's constants: evidence recall (``train_recall``), or
    the run's other objective (``train_score``, named by ``objective``, e.g. answers in context over chance).

    Example:
        >>> print(cv_table({"chosen": {"c1": {"rrf_k": 10.0}, "c2": {"rrf_k": 20.0}},
        ...                 "train_recall": {"c1": 0.8, "c2": 0.75}}))
        | held out | rrf_k | train recall 1–4 |
        |---|---|---|
        | c1 | 10.0 | 80.0 % |
        | c2 | 20.0 | 75.0 % |
        >>> print(cv_table({"chosen": {"c1": {"facts_words": 50}}, "objective": "answers over chance",
        ...                 "train_score": {"c1": 0.571}}).splitlines()[::2])
        ['| held out | facts_words | train answers over chance |', '| c1 | 50 | 57.1 % |']
    """
    chosen: Mapping[str, Mapping[str, Any]] = info.get("chosen") or {}
    keys = list(dict.fromkeys(k for params in chosen.values() for k in params))
    scored = "train_score" in info and "train_recall" not in info
    train = (info.get("train_score") if scored else info.get("train_recall")) or {}
    column = f"train {info.get('objective', 'score')}" if scored else "train recall 1–4"
    lines = [
        "| held out | " + " | ".join(keys) + f" | {column} |",
        "|" + "|".join("---" for _ in range(len(keys) + 2)) + "|",
    ]
    for conv, params in chosen.items():
        values = [str(params.get(k, "")) for k in keys]
        lines.append("| " + " | ".join([conv, *values, _pct(train.get(conv))]) + " |")
    return "\n".join(lines)


_SECTIONS = ("word_budgets", "latency", "cv", "ingest", "configs", "answers_in_context")


def _markdown_report(summaries: Sequence[SystemSummary], meta: Mapping[str, Any]) -> str:
    title = f"# LoCoMo benchmark — protocol {meta['protocol']}" if meta.get("protocol") else "# LoCoMo benchmark"
    parts = [title, ""]
    if meta:
        parts += [f"- {key}: {value}" for key, value in meta.items() if key not in _SECTIONS] + [""]
    parts += [markdown_table(summaries), ""]
    budgets = meta.get("word_budgets") or {}
    words = recall_words_table(summaries, budgets) if len(set(budgets.values())) > 1 else ""
    if words:
        parts += ["## Recall 1–4 vs context words (mean words in brackets)", "", words, ""]
    if meta.get("answers_in_context"):
        from langchain_memoryos.evaluation.answer_rows import answers_table

        info = meta["answers_in_context"]
        parts += ["## Answers in context", "", f"- {info.get('definition', '')}", "", answers_table(info), ""]
        if info.get("oracle_writes"):
            parts += [f"- oracle writes (observations through add_fact): {info['oracle_writes']}", ""]
    latency = latency_lines(meta)
    if latency:
        parts += ["## Retrieval latency", "", *latency, ""]
    for system, info in (meta.get("cv") or {}).items():
        parts += [
            f"## LOCO-CV constants of {system} (chosen on the other conversations)",
            "",
            cv_table(info),
            "",
            f"- grid: {info.get('grid')}; start: {info.get('start')}; "
            f"{info.get('evaluations')} (conversation, constants) evaluations in {info.get('seconds')} s",
            "",
        ]
    for key in ("ingest", "configs"):
        if key in meta:
            parts += [f"## {key}", "", *[f"- {name}: {value}" for name, value in meta[key].items()], ""]
    return "\n".join(parts)


def write_report(
    summaries: Sequence[SystemSummary],
    outdir: str | Path,
    *,
    meta: Mapping[str, Any] | None = None,
    outcomes: Sequence[QuestionOutcome] = (),
) -> dict[str, Path]:
    """Write a run's ``report.json``, ``report.md`` and ``recall_vs_words.png``.

    ``report.json`` holds ``{"meta": ..., "systems": [...], "questions": [...]}``
    (:meth:`SystemSummary.as_dict` and :meth:`QuestionOutcome.as_dict`);
    ``report.md`` a heading, the meta as a bullet list, and :func:`markdown_table`.

    Args:
        summaries: the systems.
        outdir: the folder (created when missing).
        meta: facts about the run (dataset, date, settings); values that are not JSON are written as strings.
        outcomes: the per-question outcomes to keep in the JSON.

    Returns:
        The paths, under the keys ``json``, ``markdown`` and ``plot`` — and
        ``budget_plot`` (``recall_vs_budget.png``: only the systems at word
        budgets, one line per family) when ``meta["word_budgets"]`` holds two
        budgets or more.

    Raises:
        ImportError: when matplotlib (the ``bench`` extra) is missing.

    Example:
        >>> import tempfile
        >>> from langchain_memoryos.evaluation.metrics import QuestionOutcome, summarize
        >>> o = QuestionOutcome("bm25", "c", "q", 4, ("D1:1",), frozenset({"D1:1"}), 120, 160, 2.0)
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     paths = write_report([summarize("bm25", [o])], tmp, meta={"dataset": "locomo10"}, outcomes=[o])
        ...     sorted(p.name for p in paths.values())
        ['recall_vs_words.png', 'report.json', 'report.md']
    """
    folder = Path(outdir)
    folder.mkdir(parents=True, exist_ok=True)
    run_meta = dict(meta or {})
    data = {
        "meta": run_meta,
        "systems": [s.as_dict() for s in summaries],
        "questions": [o.as_dict() for o in outcomes],
    }
    paths = {
        "json": folder / "report.json",
        "markdown": folder / "report.md",
        "plot": folder / "recall_vs_words.png",
    }
    paths["json"].write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    paths["markdown"].write_text(_markdown_report(summaries, run_meta), encoding="utf-8")
    protocol = run_meta.get("protocol")
    title = "LoCoMo evidence recall vs context words" + (f" (protocol {protocol})" if protocol else "")
    plot_recall_vs_words(summaries, paths["plot"], title=title)
    budgets = run_meta.get("word_budgets") or {}
    if len(set(budgets.values())) > 1:
        paths["budget_plot"] = folder / "recall_vs_budget.png"
        budgeted = [s for s in summaries if s.system in budgets]
        plot_recall_vs_words(
            budgeted, paths["budget_plot"], title=title.replace("context words", "word budget"), annotate=False
        )
    return paths
