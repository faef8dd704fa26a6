"""What the ``memoryos`` commands share: the options, one-line errors, opening the memory, output helpers."""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from langchain_memoryos.errors import InvalidInputError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from rich.console import Console
    from rich.table import Table

    from langchain_memoryos.memory import MemoryOS
    from langchain_memoryos.schema import MemoryContext, MemoryStats

__all__ = [
    "DEFAULT_DB",
    "DbOpt",
    "ModelOpt",
    "PostgresOpt",
    "ProgressOpt",
    "ThreadOpt",
    "UserOpt",
]

#: The database ``--db`` defaults to, in the working directory.
DEFAULT_DB = Path("memoryos.db")


def _echo_error(message: str) -> None:
    one_line = " ".join(str(message).split())
    typer.secho(f"error: {one_line}", err=True, fg=typer.colors.RED)


def _fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` (one line, on stderr) and return the ``Exit`` to raise.

    Example:
        >>> _fail("bad", 2).exit_code
        2
    """
    _echo_error(message)
    return typer.Exit(code)


# -- shared options -----------------------------------------------------------------

UserOpt = Annotated[str, typer.Option("--user", "-u", help="Whose memory (a user id).", show_default=False)]
ThreadOpt = Annotated[str, typer.Option("--thread", "-t", help="The conversation thread (STM is per thread).")]
DbOpt = Annotated[
    Path | None,
    typer.Option("--db", help="SQLite database file (default: memoryos.db in the working directory).", dir_okay=False),
]
PostgresOpt = Annotated[
    str | None, typer.Option("--postgres", help="PostgreSQL URL (postgresql://...), instead of --db.")
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        envvar="MEMORYOS_MODEL",
        help="Chat model: an init_chat_model name (openai:gpt-4o-mini), or a model of the "
        "OpenAI-compatible server at $OPENAI_BASE_URL. Default: $MEMORYOS_MODEL.",
    ),
]
ProgressOpt = Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar.")]


# -- errors ---------------------------------------------------------------------------


def _message(exc: BaseException) -> str:
    """One line describing ``exc``.

    Example:
        >>> _message(KeyError("conversation"))
        "missing key 'conversation'"
        >>> _message(FileNotFoundError(2, "No such file or directory", "x.json"))
        'x.json: No such file or directory'
    """
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    if isinstance(exc, KeyError) and exc.args:
        return f"missing key {exc.args[0]!r}"
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


@contextmanager
def _errors() -> Iterator[None]:
    """Turn the expected exceptions into one ``error:`` line: exit 2 for bad input, 1 for runtime failures.

    Example:
        >>> try:
        ...     with _errors():
        ...         int("x")
        ... except typer.Exit as exc:
        ...     exc.exit_code
        2
    """
    try:
        yield
    except (typer.Exit, typer.Abort):  # RuntimeErrors, but the command's own way out
        raise
    except sqlite3.OperationalError as exc:  # locked, disk I/O, ...
        raise _fail(f"database: {_message(exc)}", 1) from None
    except sqlite3.Error as exc:  # not a database, ...
        raise _fail(f"database: {_message(exc)}", 2) from None
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as exc:
        raise _fail(_message(exc), 2) from None
    except OSError as exc:
        raise _fail(_message(exc), 1) from None
    except (ValueError, TypeError, LookupError, ImportError) as exc:
        raise _fail(_message(exc), 2) from None
    except RuntimeError as exc:  # EmbeddingsNotAvailableError, BackgroundWriteError, ...
        raise _fail(_message(exc), 1) from None


# -- input files ------------------------------------------------------------------------------------


def _input_file(path: Path, what: str) -> bytes:
    """The bytes of an input file, or one ``error:`` line (exit 2) naming what is wrong with it.

    Args:
        path: the file given on the command line.
        what: what it should be, for the messages (``"pass a .jsonl file of turns"``).

    Returns:
        Its bytes (a device or a pipe is read too).

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     try:
        ...         _input_file(Path(tmp), "pass a file")
        ...     except typer.Exit as exc:
        ...         print(exc.exit_code)
        2
    """
    if not path.exists():
        raise _fail(f"{path}: no such file ({what})")
    if path.is_dir():
        raise _fail(f"{path}: is a directory, not a file ({what})")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _fail(f"{path}: cannot be read: {exc.strerror or exc} ({what})") from None
    if not data.strip():
        raise _fail(f"{path}: the file is empty ({what})")
    return data


def _utf8(path: Path, data: bytes, *, line: int | None = None, start: int = 0) -> str:
    r"""``data`` decoded as UTF-8, or a ``ValueError`` naming the file, the line and the byte offset.

    Args:
        path: the file (for the message).
        data: its bytes, or one line's.
        line: the 1-based line ``data`` is (``None``: ``data`` is the whole file).
        start: the offset of ``data`` in the file.

    Example:
        >>> _utf8(Path("a.jsonl"), b'{"user": "caf\xe9"}', line=4, start=120)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: a.jsonl:4: not UTF-8 text (byte 0xe9 at offset 133 ...
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = line if line is not None else data.count(b"\n", 0, exc.start) + 1
        raise InvalidInputError(
            f"{path}:{at}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {start + exc.start} of the file); "
            "save the file as UTF-8."
        ) from None


def _json_file(path: Path, data: bytes) -> Any:
    r"""The JSON value of a file, or a ``ValueError`` naming the file, line and column.

    Example:
        >>> _json_file(Path("x.json"), b'{"items": [1,\n 2,]}')
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: x.json:2:4: invalid JSON: Expecting value
    """
    text = _utf8(path, data)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None


# -- opening the memory -------------------------------------------------------------------


def _chat_model(name: str | None) -> BaseChatModel | None:
    """The chat model for a ``--model`` name (``None`` for none)."""
    if not name or not name.strip():
        return None
    from langchain_memoryos import cli
    from langchain_memoryos.controllers.chat_models import resolve_chat_model

    factory = cli._MODEL_FACTORY or resolve_chat_model
    try:
        return factory(name.strip())
    except Exception as exc:  # noqa: BLE001 - a missing package, an unknown provider, a missing API key ...
        raise _fail(f"--model {name.strip()!r}: {_message(exc)}") from None


def _where(db: Path | None, postgres: str | None) -> str:
    if postgres:
        return "postgres"
    return str(db or DEFAULT_DB)


@contextmanager
def _open_memory(
    db: Path | None, postgres: str | None, model: BaseChatModel | None = None, *, must_exist: bool
) -> Iterator[MemoryOS]:
    """The memory in ``--db`` (SQLite) or ``--postgres``, closed on exit.

    Args:
        db: the SQLite file (``None``: :data:`DEFAULT_DB`).
        postgres: a PostgreSQL URL, instead of ``db``.
        model: a chat model (from ``--model``) that makes the memory's judgements.
        must_exist: a read command: a missing SQLite file is an error, not a new database.

    Example:
        >>> from typer.testing import CliRunner
        >>> from langchain_memoryos.cli import app
        >>> CliRunner().invoke(app, ["inspect", "--user", "u", "--db", "no/such.db"]).output.startswith("error:")
        True
    """
    from langchain_memoryos.memory import MemoryOS

    if db is not None and postgres:
        raise _fail("--db and --postgres together: choose one storage")
    kwargs: dict[str, Any] = {} if model is None else {"model": model}
    if postgres:
        memory: MemoryOS = MemoryOS.from_postgres(postgres, **kwargs)
    else:
        path = db or DEFAULT_DB
        if must_exist and not path.exists():
            raise _fail(f"{path}: no such database (run 'memoryos ingest' or 'memoryos chat' first, or pass --db PATH)")
        try:  # a missing directory or a directory as path: from_sqlite's own errors (exit 2)
            memory = MemoryOS.from_sqlite(path, **kwargs)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise
            raise _fail(f"{path}: not a memoryos database ({_message(exc)})") from None
    try:
        yield memory
    finally:
        memory.close()


def _console(*, stderr: bool = False, no_color: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, markup=False, emoji=False, no_color=no_color or None)


def _show(out: Console, table: Table) -> None:
    """Print ``table``, or its title and "(none)" when it has no rows."""
    from rich.text import Text

    if table.row_count:
        out.print(table)
    else:
        out.print(Text(f"{table.title}: (none)"))


def _is_empty(ctx: MemoryContext) -> bool:
    persona = ctx.persona
    return not (
        ctx.stm
        or ctx.pages
        or ctx.user_facts
        or ctx.agent_facts
        or persona.user_profile
        or any(persona.user_traits.values())
    )


def _stats_line(stats: MemoryStats) -> str:
    return (
        f"{stats.stm_pages} STM pages, {stats.segments} segments ({stats.mtm_pages} MTM pages), "
        f"{stats.user_facts} user facts, {stats.agent_facts} agent traits"
    )


def _time(value: _dt.datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M")


def _progress(enabled: bool) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = _console(stderr=True)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not enabled or not console.is_terminal,  # no bar in logs and pipes
    )
