"""The demo's plain-text output: clipped lines, aligned tables and the printer."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TextIO

from langchain_memoryos.schema import DialoguePage

__all__ = ["WIDTH", "clip", "format_table"]

#: Maximum width of a printed line.
WIDTH = 110


def clip(text: str, limit: int = WIDTH) -> str:
    """Collapse whitespace and cut ``text`` to ``limit`` characters (with "...").

    Args:
        text: any text.
        limit: the maximum length (at least 4).

    Returns:
        The one-line, possibly shortened text.

    Example:
        >>> clip("The user lives in Denver now.", 16)
        'The user live...'
    """
    one_line = " ".join(str(text).split())
    limit = max(4, limit)
    if len(one_line) <= limit:
        return one_line
    return one_line[: limit - 3].rstrip() + "..."


def format_table(headers: Sequence[str], rows: Iterable[Sequence[object]], *, width: int = WIDTH) -> list[str]:
    """Lay out rows as a plain-text table with aligned columns.

    Numbers are right-aligned, text left-aligned. When the table is wider than
    ``width``, the last column is shortened (it is meant for free text).

    Args:
        headers: the column titles.
        rows: the cells, one sequence per row (converted with ``str``; floats
            with two decimals).
        width: the maximum line width.

    Returns:
        The lines: header, rule, rows.

    Example:
        >>> for line in format_table(["id", "heat"], [["s1", 5.0], ["s22", 1.25]]):
        ...     print(line)
        id   heat
        ---  ----
        s1   5.00
        s22  1.25
    """
    cells = [[_cell(v) for v in row] for row in rows]
    numeric = [_is_numeric_column(cells, i) for i in range(len(headers))]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    fixed = sum(widths[:-1]) + 2 * (len(widths) - 1)
    widths[-1] = max(len(headers[-1]), min(widths[-1], width - fixed))

    def line(values: Sequence[str]) -> str:
        parts = []
        for i, value in enumerate(values):
            text = clip(value, widths[i]) if i == len(values) - 1 else value
            parts.append(text.rjust(widths[i]) if numeric[i] else text.ljust(widths[i]))
        return "  ".join(parts).rstrip()

    out = [line(list(headers)), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in cells)
    return out


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return " ".join(str(value).split())


def _is_numeric_column(cells: list[list[str]], index: int) -> bool:
    values = [row[index] for row in cells if row[index]]
    if not values:
        return False
    try:
        for v in values:
            float(v)
    except ValueError:
        return False
    return True


#: ANSI styles of the colored output (``run_demo(color=True)``).
_STYLES: dict[str, str] = {"title": "1;36", "hit": "32", "miss": "31", "fused": "33", "answer": "35"}


class _Printer:
    r"""Writes lines to ``out``, never wider than :data:`WIDTH` (ANSI styles only with ``color=True``).

    Example:
        >>> import io
        >>> buf = io.StringIO(); _Printer(buf)("x" * 200)
        >>> len(buf.getvalue().rstrip("\n")) == WIDTH
        True
        >>> buf = io.StringIO(); _Printer(buf, color=True)("HIT", style="hit"); buf.getvalue()
        '\x1b[32mHIT\x1b[0m\n'
    """

    def __init__(self, out: TextIO, *, color: bool = False) -> None:
        self.out = out
        self.color = color

    def __call__(self, text: str = "", *, style: str = "") -> None:
        code = _STYLES.get(style, "") if self.color else ""
        for line in text.split("\n"):
            if len(line) > WIDTH:  # keep the indent, shorten the rest
                indent = line[: len(line) - len(line.lstrip())]
                line = indent + clip(line, WIDTH - len(indent))
            else:
                line = line.rstrip()
            self.out.write(f"\x1b[{code}m{line}\x1b[0m" if code and line else line)
            self.out.write("\n")

    def section(self, title: str, note: str = "") -> None:
        self()
        self("=" * WIDTH)
        self(title, style="title")
        if note:
            self(note)
        self("=" * WIDTH)

    def table(self, headers: Sequence[str], rows: Iterable[Sequence[object]], indent: str = "") -> None:
        for line in format_table(headers, rows, width=WIDTH - len(indent)):
            self(indent + line)


def _short(seg_id: str) -> str:
    return seg_id[:10]


def _n(count: int, noun: str) -> str:
    """A count with its noun, in the plural when needed.

    Example:
        >>> _n(1, "page"), _n(2, "page")
        ('1 page', '2 pages')
    """
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _page_line(page: DialoguePage) -> str:
    text = f"User: {page.user_input}"
    if page.agent_response:
        text += f" | Assistant: {page.agent_response}"
    return text


def _source(page: DialoguePage) -> str:
    ids = page.source_ids()
    return ",".join(ids) if ids else page.id[:10]
