"""The ``memoryos`` typer app: the root command with one-line errors, its commands, and :func:`main`."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperGroup

from langchain_memoryos.cli.admin import delete, export, import_
from langchain_memoryos.cli.bench import bench_locomo
from langchain_memoryos.cli.chat import chat, demo
from langchain_memoryos.cli.common import _echo_error, _message
from langchain_memoryos.cli.ingest import ingest
from langchain_memoryos.cli.read import inspect, recall, users
from langchain_memoryos.cli.serve import serve

__all__ = ["app", "bench_app", "main"]


class _OneLineErrorGroup(TyperGroup):
    """The root command: usage errors and unexpected exceptions become one ``error:`` line.

    Set ``MEMORYOS_DEBUG=1`` to get the traceback of an unexpected exception.

    Example:
        >>> from typer.testing import CliRunner
        >>> result = CliRunner().invoke(app, ["inspect", "--frobnicate"])
        >>> result.exit_code, result.output.splitlines()[0].startswith("error: No such option")
        (2, True)
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            result = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except Exception as exc:
            # typer vendors click: its exceptions are matched by shape and name, not by click's classes
            name = type(exc).__name__
            code = getattr(exc, "exit_code", None)
            if name == "NoArgsIsHelpError" and isinstance(code, int):  # the help was printed already
                sys.exit(code)
            if isinstance(exc, typer.Abort) or name == "Abort":
                typer.echo("aborted", err=True)
                sys.exit(1)
            if isinstance(code, int) and callable(getattr(exc, "format_message", None)):  # a usage error
                message = str(exc.format_message())  # type: ignore[attr-defined]
                ctx = getattr(exc, "ctx", None)
                if ctx is not None and any(c.__name__ == "UsageError" for c in type(exc).__mro__):
                    message += f" (see '{ctx.command_path} --help')"
                _echo_error(message)
                sys.exit(code)
            if os.environ.get("MEMORYOS_DEBUG"):
                raise
            _echo_error(f"{name}: {_message(exc)} (set MEMORYOS_DEBUG=1 for the traceback)")
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)


app = typer.Typer(
    name="memoryos",
    help="Hierarchical memory for LangGraph and LangChain agents.",
    no_args_is_help=True,
    cls=_OneLineErrorGroup,
    pretty_exceptions_enable=False,
)
bench_app = typer.Typer(help="Benchmarks.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")

# the commands, in the order of ``memoryos --help``
app.command()(demo)
app.command()(chat)
app.command()(ingest)
app.command()(recall)
app.command()(inspect)
app.command()(serve)
app.command()(users)
app.command()(export)
app.command("import")(import_)
app.command()(delete)
bench_app.command("locomo")(bench_locomo)


def main() -> None:
    """Entry point of the ``memoryos`` console script (and ``python -m langchain_memoryos.cli``).

    Example:
        >>> from unittest import mock
        >>> with mock.patch("sys.argv", ["memoryos", "recall", "hi", "--user", "u", "--db", "missing.db"]):
        ...     try:
        ...         main()
        ...     except SystemExit as exc:
        ...         print("exit code", exc.code)
        exit code 2
    """
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if callable(reconfigure):
        reconfigure(errors="replace")
    app(prog_name="memoryos")
