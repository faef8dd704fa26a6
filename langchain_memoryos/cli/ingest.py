"""``memoryos ingest``: a JSONL file of turns or a LoCoMo file into the memory."""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from langchain_memoryos.cli.common import (
    DbOpt,
    ModelOpt,
    PostgresOpt,
    ProgressOpt,
    ThreadOpt,
    UserOpt,
    _chat_model,
    _errors,
    _fail,
    _message,
    _open_memory,
    _progress,
    _stats_line,
    _where,
)

if TYPE_CHECKING:
    from langchain_memoryos.memory import MemoryOS

__all__ = ["TurnLine", "ingest", "read_turns"]


@dataclass
class TurnLine:
    r"""One turn of a JSONL file.

    Attributes:
        user_input: what the user said.
        agent_response: what the agent answered.
        line: its 1-based line number.
        timestamp: when it happened (``None``: now).
        thread_id: its thread (``None``: the ``--thread`` option).
        metadata: kept on the page (``source_id`` defaults to ``<resolved file path>:<line>``).
        turn_id: the idempotency key (default ``<file name>:<line>:<digest>``, see :func:`read_turns`).

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     f = Path(tmp) / "chat.jsonl"
        ...     _ = f.write_text('{"user": "I moved to Oslo.", "assistant": "Nice!"}\n\n{"user": "I love chess."}\n')
        ...     turns = read_turns(f)
        ...     [(t.line, t.user_input, t.agent_response, t.metadata["source_id"] == f"{f.resolve()}:{t.line}")
        ...      for t in turns]
        [(1, 'I moved to Oslo.', 'Nice!', True), (3, 'I love chess.', '', True)]
        >>> [t.turn_id.rsplit(":", 1)[0] for t in turns]  # <file name>:<line>:<digest>
        ['chat.jsonl:1', 'chat.jsonl:3']
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
                    f"memory: {_stats_line(memory.stats(user_id=uid))}"
                )
