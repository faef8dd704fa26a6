"""``memoryos bench locomo``: the LoCoMo benchmark, its report, table and plot."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from langchain_memoryos.cli.common import _errors, _fail

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
            raise ValueError(
                f"--baselines: {item!r}: {exc} (use e.g. bm25:10,dense:10,last:10,hybrid:20,full)"
            ) from exc
    return out


def _parse_systems(spec: str) -> list[Any]:
    from langchain_memoryos.config import MemoryOSConfig
    from langchain_memoryos.evaluation.benchmark import MemorySystem

    out = []
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        if item not in _SYSTEMS:
            raise ValueError(f"--systems: unknown system {item!r}; use memoryos, paper or both (memoryos,paper)")
        name = "memoryos" if item == "memoryos" else "memoryos (paper)"
        out.append(MemorySystem(name, MemoryOSConfig.preset(_SYSTEMS[item])))
    return out


def bench_locomo(
    path: Annotated[Path, typer.Argument(help="A LoCoMo file (locomo10.json format).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for report.json, report.md and the plot.")] = Path(
        "locomo-report"
    ),
    conversations: Annotated[int | None, typer.Option(help="Only the first N conversations.")] = None,
    systems: Annotated[str, typer.Option(help="Memory presets to test: memoryos, paper.")] = "memoryos,paper",
    baselines: Annotated[
        str, typer.Option(help="'default', 'none', or kind:k list, e.g. bm25:10,dense:10,last:10,full.")
    ] = "default",
    categories: Annotated[str, typer.Option(help="Question categories, e.g. 1,2,3,4,5.")] = "1,2,3,4,5",
    llm: Annotated[
        str | None, typer.Option(help="Answer with this chat model (init_chat_model name, or a server's model name).")
    ] = None,
    llm_base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible base URL for --llm (default: $OPENAI_BASE_URL).")
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
) -> None:
    """Run the LoCoMo retrieval benchmark (and, with --llm, answer scoring)."""
    from langchain_memoryos.evaluation.benchmark import run_locomo
    from langchain_memoryos.evaluation.report import markdown_table, write_report

    if not path.is_file():
        raise _fail(f"{path}: no such file (pass the path of a LoCoMo JSON file such as locomo10.json)")
    with _errors():
        cats = tuple(int(c) for c in categories.split(",") if c.strip())
        model = None
        if llm:
            from langchain_memoryos.controllers.chat_models import resolve_chat_model

            model = resolve_chat_model(llm, base_url=llm_base_url)
        run = run_locomo(
            path,
            systems=_parse_systems(systems),
            baselines=_parse_baselines(baselines),
            conversations=conversations,
            categories=cats,
            model=model,
            progress=progress,
        )
        files = write_report(run.summaries, out, meta=run.meta, outcomes=run.outcomes)
    typer.echo(markdown_table(run.summaries))
    for name, stats in run.meta["ingest"].items():
        typer.echo(f"ingest [{name}]: {stats['turns']} turns, {stats['turns_per_s']} turns/s")
    typer.echo(f"report: {files['markdown']} · {files['json']} · {files['plot']}")
