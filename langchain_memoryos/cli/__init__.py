"""The ``memoryos`` command.

Commands:

* ``memoryos demo``: the offline demo (a built-in multi-session conversation,
  every memory tier, the AMU decisions, fused updates and recall probes).
* ``memoryos chat --user U``: a REPL. With a chat model (``--model`` or
  ``$MEMORYOS_MODEL``) it answers with the memory; without one it shows what
  the memory would inject and still stores what the user says.
* ``memoryos ingest FILE --user U``: a JSONL file of turns or a LoCoMo file.
* ``memoryos recall QUESTION --user U``: what retrieval returns (``--json``).
* ``memoryos inspect --user U``: STM, segments with heat, persona, facts and
  the AMU write log as tables.
* ``memoryos export`` / ``import`` / ``delete``: a user's data as JSON, back,
  or gone.
* ``memoryos bench locomo PATH``: the LoCoMo benchmark (the memory and the
  flat baselines on the same pages), a JSON report, a markdown table and a
  recall-vs-words plot.

Storage is ``--db PATH`` (SQLite, default ``memoryos.db`` in the working
directory) or ``--postgres URL``. Models are ``init_chat_model`` names
(``openai:gpt-4o-mini``); with ``OPENAI_BASE_URL`` set, the name is a model
of that OpenAI-compatible server. Errors are one ``error: ...`` line, not a
traceback: exit code 2 for bad arguments or input, 1 for runtime failures.

Example:
    >>> from typer.testing import CliRunner
    >>> CliRunner().invoke(app, ["bench", "locomo", "missing.json"]).exit_code
    2
    >>> CliRunner().invoke(app, ["recall", "hi", "--user", "u", "--db", "missing.db"]).exit_code
    2
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from rich.console import Console
    from rich.table import Table

    from langchain_memoryos.memory import MemoryOS
    from langchain_memoryos.schema import MemoryContext, MemoryStats

__all__ = ["CHAT_INSTRUCTIONS", "DEFAULT_DB", "TurnLine", "app", "main", "read_turns"]

#: The database ``--db`` defaults to, in the working directory.
DEFAULT_DB = Path("memoryos.db")

#: The system instructions of ``memoryos chat`` (the memory context follows them).
CHAT_INSTRUCTIONS = (
    "You are a helpful assistant that remembers the user across conversations. "
    "Use the memory below when it is relevant; do not mention it otherwise."
)

#: Builds a chat model from a ``--model`` name (``None``: ``resolve_chat_model``); tests swap in a fake.
_MODEL_FACTORY: Callable[[str], BaseChatModel] | None = None

_MODEL_HINT = (
    "no chat model configured: each message shows what the memory would inject, and is stored. "
    "To chat, pass --model openai:gpt-4o-mini (or set MEMORYOS_MODEL) with OPENAI_API_KEY set; "
    "for a local OpenAI-compatible server (vLLM, Ollama, LM Studio) also set OPENAI_BASE_URL "
    "and pass the server's model name."
)

_EXIT_WORDS = frozenset({"exit", "quit", "/exit", "/quit", ":q"})


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

_SYSTEMS = {"memoryos": "default", "paper": "paper"}

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


# -- opening the memory -------------------------------------------------------------------


def _chat_model(name: str | None) -> BaseChatModel | None:
    """The chat model for a ``--model`` name (``None`` for none)."""
    if not name or not name.strip():
        return None
    from langchain_memoryos.controllers.chat_models import resolve_chat_model

    factory = _MODEL_FACTORY or resolve_chat_model
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
        if path.is_dir():
            raise _fail(f"{path}: is a directory, not a database file")
        if must_exist and not path.exists():
            raise _fail(f"{path}: no such database (run 'memoryos ingest' or 'memoryos chat' first, or pass --db PATH)")
        if not path.parent.exists():
            raise _fail(f"{path}: no such directory {str(path.parent)!r}")
        try:
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


# -- demo -------------------------------------------------------------------------------------


@app.command()
def demo(
    model: ModelOpt = None,
    no_color: Annotated[bool, typer.Option("--no-color", help="Plain text, no ANSI colors.")] = False,
    db: Annotated[
        Path | None, typer.Option("--db", help="Keep the demo memory in this SQLite file (default: in memory).")
    ] = None,
) -> None:
    """Ingest a built-in multi-session conversation offline and show every memory tier.

    Shows the STM, the MTM segments with heat, the persona, the facts, every AMU
    decision with its reason, the updates that fused an old fact with a new one,
    and what retrieval finds for questions about the first sessions. With a
    model (--model or $MEMORYOS_MODEL) the model also answers those questions.
    """
    from langchain_memoryos.cli.demo import run_demo
    from langchain_memoryos.memory import MemoryOS

    with _errors():
        chat = _chat_model(model)
        if db is not None and not db.parent.exists():
            raise _fail(f"{db}: no such directory {str(db.parent)!r}")
        memory = MemoryOS.from_sqlite(db) if db is not None else MemoryOS()
        color = not no_color and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        with memory:
            run_demo(out=sys.stdout, memory=memory, model=chat, color=color)


# -- chat ----------------------------------------------------------------------------------------


def _lines() -> Iterator[str]:
    """The user's lines from stdin, until EOF or an exit word ("you> " prompt on a terminal)."""
    interactive = sys.stdin.isatty()
    while True:
        try:
            line = input("you> ") if interactive else sys.stdin.readline()
        except EOFError:
            return
        if not interactive and not line:
            return
        text = line.strip()
        if text.lower() in _EXIT_WORDS:
            return
        if text:
            yield text


@app.command()
def chat(
    user: UserOpt,
    thread: ThreadOpt = "default",
    model: ModelOpt = None,
    db: DbOpt = None,
    postgres: PostgresOpt = None,
) -> None:
    """Chat with memory, one message per line, until EOF, 'exit' or 'quit'.

    With a model, each message is answered with the retrieved memory and the
    exchange is stored. Without one, each message shows what the memory would
    inject and is stored with an empty answer, so the memory still learns.
    """
    from rich.panel import Panel
    from rich.text import Text

    from langchain_memoryos.cli.demo import answer_with_context

    out = _console()
    with _errors():
        llm = _chat_model(model)
    with _errors(), _open_memory(db, postgres, llm, must_exist=False) as memory:
        if llm is None:
            typer.secho(f"hint: {_MODEL_HINT}", err=True, fg=typer.colors.YELLOW)
        turns = 0
        for line in _lines():
            ctx = memory.retrieve(line, user_id=user, thread_id=thread)
            if llm is not None:
                answer = answer_with_context(llm, line, ctx, instructions=CHAT_INSTRUCTIONS)
                out.print(Text(f"assistant> {answer}"))
            else:
                answer = ""
                if _is_empty(ctx):
                    out.print(Text("(memory is empty)"))
                else:
                    title = Text(f"memory would inject for: {line}")
                    out.print(Panel(Text(ctx.to_prompt()), title=title, title_align="left"))
            memory.add_turn(line, answer, user_id=user, thread_id=thread)
            turns += 1
        typer.echo(f"stored {turns} turns for user {user!r} in thread {thread!r} ({_where(db, postgres)})", err=True)


# -- ingest -------------------------------------------------------------------------------------------


@dataclass
class TurnLine:
    """One turn of a JSONL file.

    Attributes:
        user_input: what the user said.
        agent_response: what the agent answered.
        line: its 1-based line number.
        timestamp: when it happened (``None``: now).
        thread_id: its thread (``None``: the ``--thread`` option).
        metadata: kept on the page (``source_id`` defaults to ``<resolved file path>:<line>``).
        turn_id: the idempotency key (default ``<file name>:<line>:<digest>``, see :func:`read_turns`).

    Example:
        >>> TurnLine("I moved to Oslo.", "Nice!", 3).line
        3
    """

    user_input: str
    agent_response: str
    line: int
    timestamp: _dt.datetime | None = None
    thread_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    turn_id: str | None = None


def _text_field(obj: dict[str, Any], *names: str) -> str:
    for name in names:
        value = obj.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ValueError(f"{name!r} must be a string, got {type(value).__name__}")
        return value
    return ""


def _turn_from(obj: Any, path: Path, number: int) -> TurnLine:
    from langchain_memoryos.config import MemoryOSConfig
    from langchain_memoryos.memory import clean_metadata
    from langchain_memoryos.schema import check_timestamp

    if not isinstance(obj, dict):
        raise ValueError(f"a JSON object expected, got {type(obj).__name__}")
    user_input = _text_field(obj, "user_input", "user")
    agent_response = _text_field(obj, "agent_response", "assistant")
    if not user_input.strip() and not agent_response.strip():
        raise ValueError("no 'user_input' (or 'user') and no 'agent_response' (or 'assistant') text")
    metadata = obj.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValueError(f"'metadata' must be an object, got {type(metadata).__name__}")
    metadata = clean_metadata(metadata)  # NaN and Infinity parse as JSON here but are refused by the memory
    thread = obj.get("thread_id")
    if thread is not None and (not isinstance(thread, str) or not thread):
        raise ValueError(f"'thread_id' must be a non-empty string, got {thread!r}")
    turn_id = obj.get("turn_id")
    if turn_id is not None and not isinstance(turn_id, str | int):
        raise ValueError(f"'turn_id' must be a string, got {type(turn_id).__name__}")
    raw_time = obj.get("timestamp")
    # the memory opened by the CLI has the default config: its clock-skew check, before anything is stored
    timestamp = check_timestamp(raw_time, MemoryOSConfig().max_clock_skew_seconds) if raw_time is not None else None
    where = f"{path}:{number}"  # the resolved path: two files with the same name are two sources
    content = json.dumps(obj, sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(f"{where}\x1f{content}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return TurnLine(
        user_input=user_input,
        agent_response=agent_response,
        line=number,
        timestamp=timestamp,
        thread_id=thread,
        metadata={"source_id": where, **metadata},
        turn_id=str(turn_id) if turn_id is not None else f"{path.name}:{number}:{digest}",
    )


def read_turns(path: Path) -> list[TurnLine]:
    r"""The turns of a JSONL file: one JSON object per line, blank lines skipped.

    Each object has ``user_input`` (or ``user``) and/or ``agent_response`` (or
    ``assistant``), and optionally ``timestamp``, ``thread_id``, ``metadata``
    and ``turn_id``. Without a ``turn_id`` the turn's id is
    ``<file name>:<line>:<digest>``, the digest a hash of the file's resolved
    path, the line number and the line's content: ingesting the same file
    again adds nothing (nor do lines appended to it since), while another
    file, even one with the same name, or an edited line is a new turn. The
    page's ``source_id`` is ``<resolved path>:<line>`` unless the line's
    metadata gives one.

    Args:
        path: the file.

    Returns:
        The turns, in file order.

    Raises:
        ValueError: for a bad line; the message starts with ``<path>:<line>:``.

    Example:
        >>> import pathlib, tempfile
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "chat.jsonl"
        >>> _ = f.write_text('{"user": "I live in Oslo.", "assistant": "Nice!"}\n\n{"user": 3}\n')
        >>> read_turns(f)
        Traceback (most recent call last):
        ValueError: ...chat.jsonl:3: 'user' must be a string, got int
    """
    turns: list[TurnLine] = []
    source = path.resolve()
    with path.open(encoding="utf-8") as lines:
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                turns.append(_turn_from(json.loads(raw), source, number))
            except (ValueError, TypeError) as exc:
                reason = f"invalid JSON: {exc.msg}" if isinstance(exc, json.JSONDecodeError) else _message(exc)
                raise ValueError(f"{path}:{number}: {reason}") from None
    return turns


def _is_jsonl(path: Path) -> bool:
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return True
    with path.open(encoding="utf-8") as f:
        head = f.read(4096).lstrip()
    return not head.startswith("[")


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


def _ingest_jsonl(
    memory: MemoryOS, path: Path, turns: list[TurnLine], user: str, thread: str, progress: bool
) -> tuple[int, int]:
    added = 0
    with _progress(progress) as bar:
        task = bar.add_task(f"ingest {path.name}", total=len(turns))
        for t in turns:
            report = memory.add_turn(
                t.user_input,
                t.agent_response,
                user_id=user,
                thread_id=t.thread_id or thread,
                timestamp=t.timestamp,
                metadata=t.metadata,
                turn_id=t.turn_id,
            )
            added += int(report.added)
            bar.advance(task)
    return len(turns), added


def _locomo_samples(path: Path, user: str, conversation: int | None) -> list[tuple[str, dict[str, Any]]]:
    from langchain_memoryos.evaluation.locomo import load_locomo

    samples = load_locomo(path)
    for i, sample in enumerate(samples):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise ValueError(f"{path}: item {i} has no 'conversation' object (not a LoCoMo file)")
    if conversation is not None:
        if not 0 <= conversation < len(samples):
            raise ValueError(f"--conversation {conversation}: the file has conversations 0..{len(samples) - 1}")
        return [(user, samples[conversation])]
    if len(samples) == 1:
        return [(user, samples[0])]
    return [(f"{user}-{s.get('sample_id') or i}", s) for i, s in enumerate(samples)]


def _ingest_locomo(
    memory: MemoryOS, path: Path, targets: list[tuple[str, dict[str, Any]]], thread: str, progress: bool
) -> list[tuple[str, int, int]]:
    from langchain_memoryos.evaluation.locomo import conversation_pages, ingest_conversation

    sizes = [len(conversation_pages(sample)) for _, sample in targets]
    out: list[tuple[str, int, int]] = []
    with _progress(progress) as bar:
        task = bar.add_task(f"ingest {path.name}", total=sum(sizes))
        for (uid, sample), size in zip(targets, sizes, strict=True):
            added = ingest_conversation(
                memory, sample, user_id=uid, thread_id=thread, on_page=lambda: bar.advance(task)
            )
            out.append((uid, size, added))
    return out


@app.command()
def ingest(
    file: Annotated[Path, typer.Argument(help="A JSONL file of turns, or a LoCoMo JSON file.", show_default=False)],
    user: UserOpt,
    thread: ThreadOpt = "default",
    conversation: Annotated[
        int | None, typer.Option(help="LoCoMo: only conversation N (0-based), stored for --user.")
    ] = None,
    model: ModelOpt = None,
    db: DbOpt = None,
    postgres: PostgresOpt = None,
    progress: ProgressOpt = True,
) -> None:
    """Store the turns of a file in the memory (re-ingesting the same file adds nothing).

    A .jsonl file holds one JSON object per line: user_input (or user),
    agent_response (or assistant), optional timestamp, thread_id, metadata,
    turn_id. Without a turn_id a line's id comes from the file's path, its line
    number and its content, so another file with the same name is never taken
    for a duplicate. A LoCoMo file (a JSON list of samples with a
    'conversation') goes to --user when it has one conversation or
    --conversation picks one, else each conversation to user '<USER>-<sample_id>'.
    """
    if not file.is_file():
        raise _fail(f"{file}: no such file (pass a .jsonl file of turns or a LoCoMo .json file)")
    with _errors():
        # the whole file is read and checked before the database is opened: a bad file stores nothing
        jsonl = _is_jsonl(file)
        if jsonl and conversation is not None:
            raise _fail("--conversation is for LoCoMo files, not JSONL")
        turns = read_turns(file) if jsonl else []
        targets = [] if jsonl else _locomo_samples(file, user, conversation)
        with _open_memory(db, postgres, _chat_model(model), must_exist=False) as memory:
            if jsonl:
                total, added = _ingest_jsonl(memory, file, turns, user, thread, progress)
                results = [(user, total, added)]
            else:
                results = _ingest_locomo(memory, file, targets, thread, progress)
            kind = "JSONL" if jsonl else "LoCoMo"
            typer.echo(f"ingested {file} ({kind}) into {_where(db, postgres)}")
            for uid, total, added in results:
                typer.echo(
                    f"  user {uid!r}: {total} turns, {added} added, {total - added} duplicates skipped; "
                    f"memory: {_stats_line(memory.stats(uid))}"
                )


# -- recall -----------------------------------------------------------------------------------------


@app.command()
def recall(
    question: Annotated[str, typer.Argument(help="What to recall, e.g. 'Where do I live?'.", show_default=False)],
    user: UserOpt,
    thread: ThreadOpt = "default",
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object instead.")] = False,
    db: DbOpt = None,
    postgres: PostgresOpt = None,
) -> None:
    """Show what the memory retrieves for a question (the context a model would get) and its sources."""
    from rich.panel import Panel
    from rich.text import Text

    with _errors(), _open_memory(db, postgres, must_exist=True) as memory:
        ctx = memory.retrieve(question, user_id=user, thread_id=thread)
        sources = sorted(ctx.source_ids())
        if as_json:
            data = {
                "question": question,
                "user_id": user,
                "thread_id": thread,
                "empty": _is_empty(ctx),
                "prompt": ctx.to_prompt(),
                "source_ids": sources,
                "counts": {
                    "stm": len(ctx.stm),
                    "segments": len(ctx.segments),
                    "pages": len(ctx.pages),
                    "user_facts": len(ctx.user_facts),
                    "agent_facts": len(ctx.agent_facts),
                },
                "words": ctx.word_count,
                "tokens": ctx.token_estimate,
            }
            typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
            return
        out = _console()
        if _is_empty(ctx):
            out.print(Text(f"(memory is empty for user {user!r})"))
            return
        title = Text(f"memory for {question!r} (user {user!r}, thread {thread!r})")
        out.print(Panel(Text(ctx.to_prompt()), title=title, title_align="left"))
        out.print(Text(f"sources: {', '.join(sources) if sources else '(none)'}"))
        out.print(Text(f"{ctx.word_count} words, ~{ctx.token_estimate} tokens"))


# -- inspect ------------------------------------------------------------------------------------------


@app.command()
def inspect(
    user: UserOpt,
    limit: Annotated[int, typer.Option(help="Show the last N write-log events (0: all).", min=0)] = 20,
    db: DbOpt = None,
    postgres: PostgresOpt = None,
) -> None:
    """Show a user's memory as tables: STM per thread, segments with heat, persona, facts, the AMU write log."""
    from rich.table import Table
    from rich.text import Text

    out = _console()
    with _errors(), _open_memory(db, postgres, must_exist=True) as memory:
        stats = memory.stats(user)
        log = memory.write_log(user)
        out.print(Text(f"user {user!r} in {_where(db, postgres)}: {_stats_line(stats)}, {len(log)} write events"))

        for thread in memory.list_threads(user):
            table = Table(title=Text(f"Short-term memory: thread {thread!r}"), title_justify="left")
            for col in ("time", "user", "assistant"):
                table.add_column(col)
            for page in memory.get_stm(user, thread):
                table.add_row(_time(page.timestamp), Text(page.user_input), Text(page.agent_response))
            _show(out, table)

        table = Table(title=Text("Mid-term segments (hottest first)"), title_justify="left")
        for col, justify in (("segment", "left"), ("pages", "right"), ("heat", "right"), ("visits", "right")):
            table.add_column(col, justify=justify)  # type: ignore[arg-type]
        for col in ("last visit", "keywords", "summary"):
            table.add_column(col)
        for seg in memory.list_segments(user):
            table.add_row(
                seg.id,
                str(len(seg.page_ids)),
                f"{seg.heat:.2f}",
                str(seg.n_visit),
                _time(seg.last_access),
                Text(", ".join(seg.keywords[:6])),
                Text(seg.summary),
            )
        _show(out, table)

        persona = memory.get_persona(user)
        table = Table(title=Text("Persona"), title_justify="left")
        table.add_column("part")
        table.add_column("value")
        for key, value in sorted(persona.user_profile.items()):
            table.add_row(Text(f"profile: {key}"), Text(str(value)))
        for key, values in sorted(persona.user_traits.items()):
            if values:
                table.add_row(Text(f"trait: {key}"), Text(", ".join(values)))
        table.add_row("agent profile", Text(persona.agent_profile))
        _show(out, table)

        for kind, title in (("user", "User facts"), ("agent", "Agent traits")):
            facts = memory.list_facts(user, kind)  # type: ignore[arg-type]
            table = Table(title=Text(f"{title} ({len(facts)})"), title_justify="left")
            for col in ("id", "aspect", "updated", "summary"):
                table.add_column(col)
            for fact in facts:
                table.add_row(fact.id, fact.aspect, _time(fact.updated_at), Text(fact.summary))
            _show(out, table)

        shown = log[-limit:] if limit else log
        first = len(log) - len(shown) + 1
        table = Table(title=Text(f"AMU write log (last {len(shown)} of {len(log)})"), title_justify="left")
        table.add_column("#", justify="right")
        for col in ("time", "action", "kind", "record", "reason"):
            table.add_column(col)
        for number, event in enumerate(shown, start=first):
            table.add_row(
                str(number),
                _time(event.timestamp),
                event.action,
                event.record.kind,
                Text(event.record.summary),
                Text(event.reason),
            )
        _show(out, table)


# -- export / import / delete -------------------------------------------------------------------------


@app.command()
def export(
    user: UserOpt,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write to this file (default: stdout).")] = None,
    db: DbOpt = None,
    postgres: PostgresOpt = None,
) -> None:
    """Print (or write) everything stored for a user as JSON ('memoryos import' reads it back)."""
    with _errors(), _open_memory(db, postgres, must_exist=True) as memory:
        data = memory.export_user(user)
        text = json.dumps(data, ensure_ascii=False, indent=2, default=str)
        count = len(data.get("items", []))
        if not count:
            typer.echo(f"warning: nothing is stored for user {user!r}", err=True)
        if out is None:
            typer.echo(text)
        else:
            out.write_text(text + "\n", encoding="utf-8")
            typer.echo(f"exported {count} items of user {user!r} to {out}")


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="A file written by 'memoryos export'.", show_default=False)],
    user: Annotated[
        str | None, typer.Option("--user", "-u", help="Import as this user (default: the exported user).")
    ] = None,
    db: DbOpt = None,
    postgres: PostgresOpt = None,
) -> None:
    """Write a 'memoryos export' file back into the memory (as the same or another user)."""
    if not file.is_file():
        raise _fail(f"{file}: no such file (pass a file written by 'memoryos export')")
    with _errors():
        data = json.loads(file.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("items"), list):
            raise _fail(f"{file}: not a memoryos export (a JSON object with 'items' expected)")
        target = user or data.get("user_id")
        if not isinstance(target, str) or not target:
            raise _fail(f"{file}: no user id in the file; pass --user")
        with _open_memory(db, postgres, must_exist=False) as memory:
            count = memory.import_user(data, user_id=target)
            typer.echo(f"imported {count} items for user {target!r} into {_where(db, postgres)}")


@app.command()
def delete(
    user: UserOpt,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    db: DbOpt = None,
    postgres: PostgresOpt = None,
    vacuum: Annotated[
        bool,
        typer.Option(
            "--vacuum",
            help="Then reclaim the deleted rows: PostgreSQL 'VACUUM store' (their space is reused, without "
            "blocking), SQLite 'VACUUM' (the file shrinks).",
        ),
    ] = False,
    vacuum_full: Annotated[
        bool,
        typer.Option(
            "--vacuum-full",
            help="PostgreSQL: then 'VACUUM (FULL) store': the table is rewritten, so the deleted text leaves its "
            "files now; the table is locked while it runs.",
        ),
    ] = False,
) -> None:
    """Delete everything stored for a user (asks first, unless --yes).

    On SQLite the deleted rows are overwritten and the write-ahead log is
    emptied. PostgreSQL keeps the deleted text in dead rows until VACUUM
    (--vacuum, --vacuum-full) and in its WAL and backups until they are
    recycled.
    """
    with _errors(), _open_memory(db, postgres, must_exist=True) as memory:
        if not yes and not typer.confirm(f"Delete all memory of user {user!r} in {_where(db, postgres)}?"):
            typer.echo("aborted: nothing was deleted", err=True)
            raise typer.Exit(1)
        count = memory.delete_user(user)
        typer.echo(f"deleted {count} items of user {user!r}")
        if vacuum or vacuum_full:
            statement = memory.vacuum(full=vacuum_full)
            typer.echo(f"ran {statement}")
        elif postgres:
            typer.echo(
                "note: PostgreSQL keeps the deleted text in dead rows until VACUUM: pass --vacuum (or --vacuum-full "
                "to rewrite the table now), or run 'VACUUM store;' (or 'VACUUM (FULL) store;') yourself; its WAL "
                "and backups keep it until they are recycled.",
                err=True,
            )


# -- bench ------------------------------------------------------------------------------------------------


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


@bench_app.command("locomo")
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


def main() -> None:
    """Entry point of the ``memoryos`` console script (and ``python -m langchain_memoryos.cli``).

    Example:
        >>> main  # doctest: +ELLIPSIS
        <function main at ...>
    """
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if callable(reconfigure):
        reconfigure(errors="replace")
    app(prog_name="memoryos")


if __name__ == "__main__":  # pragma: no cover
    main()
