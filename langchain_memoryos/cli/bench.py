"""``memoryos bench locomo``: the LoCoMo benchmark, its report, table and plot."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from langchain_memoryos.cli.common import _errors, _fail
from langchain_memoryos.errors import InvalidInputError

if TYPE_CHECKING:
    from langchain_memoryos.evaluation.benchmark import LocomoRun

__all__ = ["bench_locomo"]

_SYSTEMS = {"memoryos": "default", "paper": "paper"}


def _parse_baselines(spec: str) -> list[Any]:
    from langchain_memoryos.evaluation.baselines import DEFAULT_BASELINES, Baseline

    if spec == "default":
        return list(DEFAULT_BASELINES)
    if spec in ("", "none"):
        return []
    out = []
    for item in spec.split(","):
        kind, _, k = item.strip().partition(":")
        try:
            out.append(Baseline(kind, int(k)) if k else Baseline(kind))  # type: ignore[arg-type]
        except ValueError as exc:
            raise InvalidInputError(
                f"--baselines: {item!r}: {exc} (use e.g. bm25:10,dense:10,last:10,hybrid:20,full)"
            ) from exc
    return out


def _parse_systems(spec: str) -> list[Any]:
    from langchain_memoryos.config import MemoryOSConfig
    from langchain_memoryos.evaluation.benchmark import MemorySystem

    out = []
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        if item not in _SYSTEMS:
            raise InvalidInputError(f"--systems: unknown system {item!r}; use memoryos, paper or both (memoryos,paper)")
        name = "memoryos" if item == "memoryos" else "memoryos (paper)"
        out.append(MemorySystem(name, MemoryOSConfig.preset(_SYSTEMS[item])))
    return out


def _parse_budgets(spec: str) -> list[int] | None:
    if not spec.strip():
        return None
    try:
        budgets = [int(b) for b in spec.split(",") if b.strip()]
    except ValueError:
        raise InvalidInputError(f"--budgets: {spec!r}: use word counts >= 1, e.g. 250,500,1000,2000") from None
    if not budgets or any(b < 1 for b in budgets) or len(set(budgets)) != len(budgets):
        raise InvalidInputError(f"--budgets: {spec!r}: use distinct word counts >= 1, e.g. 250,500,1000,2000")
    return budgets


def _parse_grid(spec: str | None) -> dict[str, tuple[float, ...]]:
    from langchain_memoryos.evaluation.cv import DEFAULT_CV_GRID

    if not spec:
        return dict(DEFAULT_CV_GRID)
    grid: dict[str, tuple[float, ...]] = {}
    for item in (part.strip() for part in spec.split(";") if part.strip()):
        key, sep, values = item.partition("=")
        try:
            candidates = tuple(float(v) for v in values.split(",") if v.strip())
        except ValueError:
            candidates = ()
        if not sep or not key.strip() or not candidates:
            raise InvalidInputError(
                f"--cv-grid: {item!r}: use field=v1,v2;field[i]=v1,v2 (e.g. 'rrf_k=10,20;date_weight=0,0.2')"
            )
        grid[key.strip()] = candidates
    return grid


#: The options of ``memoryos bench locomo`` whose help takes several lines.
_Baselines = Annotated[str, typer.Option(help="'default', 'none', or kind:k list, e.g. bm25:10,dense:10,last:10,full.")]
_Llm = Annotated[
    str | None, typer.Option(help="Answer with this chat model (init_chat_model name, or a server's model name).")
]
_LlmBaseUrl = Annotated[
    str | None, typer.Option(help="OpenAI-compatible base URL for --llm (default: $OPENAI_BASE_URL).")
]
_Protocol = Annotated[
    str,
    typer.Option(
        help="How turns are fed and where questions are asked: harness (speaker pairs, names as metadata, "
        "questions from a new thread), plain (add_turn('Name: text', 'Name: text') by position, questions on "
        "the conversation's thread) or fresh (plain, questions from a new thread)."
    ),
]
_Budgets = Annotated[
    str,
    typer.Option(
        help="Word budgets, e.g. 250,500,1000,2000: the memory (ingested once) and the flat baselines at each "
        "(default: the config's)."
    ),
]
_Cv = Annotated[
    bool,
    typer.Option(
        help="Also fit the ranking constants by leave-one-conversation-out coordinate ascent and report the "
        "held-out recall as 'memoryos (LOCO-CV)'."
    ),
]
_CvGrid = Annotated[
    str | None,
    typer.Option(help="The --cv grid: field=v1,v2;field[i]=v1,v2 (default: chain_weights, date_weight, rrf_k)."),
]
_Answers = Annotated[
    bool,
    typer.Option(
        help="Also measure answers in context: the first system again with top_facts=0 over the same store, "
        "with LoCoMo's observations as its facts (oracle), and the raw turns at the same words."
    ),
]


def bench_locomo(
    path: Annotated[Path, typer.Argument(help="A LoCoMo file (locomo10.json format).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for report.json, report.md and the plot.")] = Path(
        "locomo-report"
    ),
    conversations: Annotated[int | None, typer.Option(help="Only the first N conversations.")] = None,
    systems: Annotated[str, typer.Option(help="Memory presets to test: memoryos, paper.")] = "memoryos,paper",
    baselines: _Baselines = "default",
    categories: Annotated[str, typer.Option(help="Question categories, e.g. 1,2,3,4,5.")] = "1,2,3,4,5",
    llm: _Llm = None,
    llm_base_url: _LlmBaseUrl = None,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
    protocol: _Protocol = "harness",
    budgets: _Budgets = "",
    cv: _Cv = False,
    cv_grid: _CvGrid = None,
    answers: _Answers = True,
) -> None:
    """Run the LoCoMo retrieval benchmark (and, with --llm, answer scoring)."""
    from langchain_memoryos.evaluation.benchmark import run_locomo
    from langchain_memoryos.evaluation.report import write_report

    if not path.is_file():
        raise _fail(f"{path}: no such file (pass the path of a LoCoMo JSON file such as locomo10.json)")
    with _errors():
        from langchain_memoryos.evaluation.benchmark import PROTOCOLS

        if protocol not in PROTOCOLS:
            raise InvalidInputError(f"--protocol: unknown protocol {protocol!r}; use harness, plain or fresh")
        if cv_grid is not None and not cv:
            raise InvalidInputError("--cv-grid needs --cv")
        cats = tuple(int(c) for c in categories.split(",") if c.strip())
        memory_systems = _parse_systems(systems)
        model = None
        if llm:
            from langchain_memoryos.controllers.chat_models import resolve_chat_model

            model = resolve_chat_model(llm, base_url=llm_base_url)
        run = run_locomo(
            path,
            systems=memory_systems,
            baselines=_parse_baselines(baselines),
            conversations=conversations,
            categories=cats,
            model=model,
            progress=progress,
            protocol=protocol,
            budgets=_parse_budgets(budgets),
            cv_grid=_parse_grid(cv_grid) if cv else None,
            cv_systems=["memoryos"] if cv and "memoryos" in [s.name for s in memory_systems] else None,
            answers=answers,
        )
        files = write_report(run.summaries, out, meta=run.meta, outcomes=run.outcomes)
    _print_run(run, protocol, bool(budgets), files)


def _print_run(run: LocomoRun, protocol: str, budgets: bool, files: dict[str, Path]) -> None:
    """What ``memoryos bench locomo`` prints of a run: the tables, latencies, ingestion and the report's files."""
    from langchain_memoryos.evaluation.answer_rows import answers_table
    from langchain_memoryos.evaluation.report import cv_table, latency_lines, markdown_table, recall_words_table

    typer.echo(f"protocol {protocol}: {run.meta['protocol_description']}")
    typer.echo(markdown_table(run.summaries))
    words = recall_words_table(run.summaries, run.meta["word_budgets"])
    if words and budgets:
        typer.echo("\nrecall 1–4 vs context words (mean words in brackets):\n" + words)
    for line in latency_lines(run.meta):
        typer.echo(line.removeprefix("- "))
    for system, info in run.meta.get("cv", {}).items():
        typer.echo(f"\nLOCO-CV [{system}]: constants chosen on the other conversations ({info['seconds']} s):")
        typer.echo(cv_table(info))
    if run.meta.get("answers_in_context"):
        typer.echo("\nanswers in context (categories 1, 2, 4; chance: the answer against another question's context):")
        typer.echo(answers_table(run.meta["answers_in_context"]))
    for name, stats in run.meta["ingest"].items():
        typer.echo(f"ingest [{name}]: {stats['turns']} turns, {stats['turns_per_s']} turns/s")
    typer.echo(f"wall time: {run.meta['seconds']} s (before LOCO-CV)")
    typer.echo(f"report: {files['markdown']} · {files['json']} · {files['plot']}")
