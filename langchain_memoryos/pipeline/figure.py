"""The stage figure of ``docs/architecture.md``, written from the stage table (never by hand).

:func:`stage_figure` renders :data:`~langchain_memoryos.pipeline.stages.WRITE_STAGES` and
:data:`~langchain_memoryos.pipeline.stages.READ_STAGES` — each row's name, what it does, its tier and
where it may go next — as a text table and a Mermaid flowchart of every route. The figure sits in the
document between two markers; ``python -m langchain_memoryos.pipeline.figure docs/architecture.md``
rewrites it there, and a unit test fails while the document's copy differs from the table.

Example:
    >>> print(stage_figure().splitlines()[1].split("  ")[0], "|", stage_figure().splitlines()[2].split()[:2])
    write (one add_turn) | ['stm_append', 'the']
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

from langchain_memoryos.errors import InvalidInputError
from langchain_memoryos.pipeline.stages import DONE, READ_STAGES, WRITE_STAGES, Stage

__all__ = ["BEGIN", "END", "stage_figure", "update_figure"]

#: The markers around the generated figure in a Markdown document.
BEGIN = "<!-- stage figure: generated from pipeline/stages.py by python -m langchain_memoryos.pipeline.figure -->"
END = "<!-- end of the stage figure -->"

_NAME, _DOES = 18, 46


def _rows(title: str, stages: Sequence[Stage]) -> list[str]:
    lines = [f"{title:<{2 + _NAME + _DOES}}tier   may go next"]
    for stage in stages:
        does = textwrap.wrap(stage.does, _DOES - 2) or [""]
        routes = " | ".join(stage.routes)
        lines.append(f"  {stage.name:<{_NAME}}{does[0]:<{_DOES}}{stage.tier:<7}{routes}")
        lines += [f"  {'':<{_NAME}}{rest}" for rest in does[1:]]
    return lines


def stage_figure() -> str:
    """The stage figure: the write and read tables as text, then every route as a Mermaid flowchart.

    Example:
        >>> figure = stage_figure()
        >>> "  fuse --> lpm_commit" in figure, "retrieve_lpm --> retrieve_mtm" in figure
        (True, True)
        >>> [line for line in figure.splitlines() if line.startswith("  fuse ")][0].split()[-2:]
        ['AMU', 'lpm_commit']
    """
    text = _rows("write (one add_turn)", WRITE_STAGES) + [""] + _rows("read (one retrieve)", READ_STAGES)
    every = (*WRITE_STAGES, *READ_STAGES)
    edges = [f"  {stage.name} --> {route}" for stage in every for route in stage.routes if route != DONE]
    return "\n".join(["```", *text, "```", "", "```mermaid", "flowchart LR", *edges, "```"])


def update_figure(path: str | Path) -> bool:
    """Rewrite the figure between :data:`BEGIN` and :data:`END` in ``path``; True when it changed.

    Raises:
        InvalidInputError: the document has not both markers, in order.

    Example:
        >>> import tempfile, pathlib
        >>> doc = pathlib.Path(tempfile.mkdtemp()) / "a.md"
        >>> _ = doc.write_text(chr(10).join(["# A", BEGIN, "old", END, ""]))
        >>> update_figure(doc), update_figure(doc), "fuse --> lpm_commit" in doc.read_text()
        (True, False, True)
    """
    doc = Path(path)
    text = doc.read_text(encoding="utf-8")
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise InvalidInputError(f"{doc} has no stage figure markers: put {BEGIN!r} and {END!r} where it goes")
    new = f"{text[: start + len(BEGIN)]}\n{stage_figure()}\n{text[end:]}"
    if new == text:
        return False
    doc.write_text(new, encoding="utf-8")
    return True


if __name__ == "__main__":  # pragma: no cover - the command line of update_figure
    for arg in sys.argv[1:] or ["docs/architecture.md"]:
        print(f"{arg}: {'rewritten' if update_figure(arg) else 'current'}")
