"""``memoryos ingest``: a JSONL file of turns or a LoCoMo file into the memory."""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
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
    _input_file,
    _json_file,
    _message,
    _open_memory,
    _progress,
    _stats_line,
    _utf8,
    _where,
)
from langchain_memoryos.errors import InvalidInputError

if TYPE_CHECKING:
    from langchain_memoryos.memory import MemoryOS

__all__ = ["TurnLine", "ingest", "read_turns"]

#: Turns per ``add_turns`` call (progress is reported after each).
_BATCH = 256


@dataclass
class TurnLine:
    r"""One turn of a JSONL file.

    Attributes:
        user_input: what the user said.
        agent_response: what the agent answered.
        line: its 1-based line number.
        timestamp: when it happened (``None``: now).
        thread_id: its thread (``None``: the ``--thread`` option).
        metadata: kept on the page (``source_id`` defaults to ``<resolved file path>:<line>``, one per
            line of a turn made of message lines).
        turn_id: the idempotency key (default ``<file name>:<line>:<digest>``, see :func:`read_turns`).
        waiting: message lines of the user still waiting for an answer at the end of the file: not
            stored (the turn is stored once the answer is in the file).

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
    waiting: bool = False


#: The roles of a message line, as ``add_messages`` reads role dicts (a system message is no part of a turn).
_ROLES = {"user": "human", "human": "human", "assistant": "ai", "ai": "ai", "system": "system"}
#: A turn line's text fields (a line has these or a message's ``role`` and ``content``, never both).
_TURN_FIELDS = ("user_input", "user", "agent_response", "assistant")


def _text_field(obj: dict[str, Any], *names: str) -> str:
    for name in names:
        value = obj.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise InvalidInputError(f"{name!r} must be a string, got {type(value).__name__}")
        return value
    return ""


def _turn_from(obj: Any, path: Path, number: int) -> TurnLine:
    if not isinstance(obj, dict):
        raise InvalidInputError(f"a JSON object expected, got {type(obj).__name__}")
    user_input = _text_field(obj, "user_input", "user")
    agent_response = _text_field(obj, "agent_response", "assistant")
    if not user_input.strip() and not agent_response.strip():
        raise InvalidInputError(
            "no 'user_input' (or 'user') and no 'agent_response' (or 'assistant') text, "
            "nor a message's 'role' and 'content'"
        )
    metadata, thread, timestamp = _line_fields(obj)
    turn_id = obj.get("turn_id")
    if turn_id is not None and not isinstance(turn_id, str | int):
        raise InvalidInputError(f"'turn_id' must be a string, got {type(turn_id).__name__}")
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


def _line_fields(obj: dict[str, Any]) -> tuple[dict[str, Any], str | None, _dt.datetime | None]:
    """A line's ``metadata``, ``thread_id`` and ``timestamp``, checked as the memory checks them."""
    from langchain_memoryos.config import MemoryOSConfig
    from langchain_memoryos.memory import clean_metadata
    from langchain_memoryos.schema import check_timestamp

    metadata = obj.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InvalidInputError(f"'metadata' must be an object, got {type(metadata).__name__}")
    metadata = clean_metadata(metadata)  # NaN and Infinity parse as JSON here but are refused by the memory
    thread = obj.get("thread_id")
    if thread is not None and (not isinstance(thread, str) or not thread):
        raise InvalidInputError(f"'thread_id' must be a non-empty string, got {thread!r}")
    raw_time = obj.get("timestamp")
    # the memory opened by the CLI has the default config: its clock-skew check, before anything is stored
    timestamp = check_timestamp(raw_time, MemoryOSConfig().max_clock_skew_seconds) if raw_time is not None else None
    return metadata, thread, timestamp


@dataclass
class _Said:
    """A message line waiting in its thread for the turn it belongs to."""

    number: int
    obj: dict[str, Any]
    message: Any  # a HumanMessage or an AIMessage
    metadata: dict[str, Any]
    timestamp: _dt.datetime | None


def _message_from(obj: dict[str, Any], number: int) -> tuple[str | None, _Said | None]:
    """A message line (``{"role": ..., "content": ...}``) read: its thread and message (``None``: a system message)."""
    from langchain_core.messages import AIMessage, HumanMessage

    if any(name in obj for name in _TURN_FIELDS):
        raise InvalidInputError(
            "a line is either a message ('role' and 'content') or a turn ('user_input' / 'agent_response'), not both"
        )
    role = obj.get("role")
    if not isinstance(role, str) or role.lower() not in _ROLES:
        raise InvalidInputError(f"'role' must be one of {', '.join(_ROLES)}, got {role!r}")
    content = obj.get("content")
    if not isinstance(content, str):
        raise InvalidInputError(f"'content' must be a string, got {type(content).__name__}")
    metadata, thread, timestamp = _line_fields(obj)
    kind = _ROLES[role.lower()]
    if kind == "system":
        return thread, None  # as add_messages: a system message is no part of a turn
    message = HumanMessage(content) if kind == "human" else AIMessage(content)
    return thread, _Said(number, obj, message, metadata, timestamp)


def _turn_of_messages(said: list[_Said], path: Path, thread: str | None, *, waiting: bool) -> TurnLine:
    """The turn ``add_messages`` makes of a thread's message lines: the user's, then the answer (unless ``waiting``)."""
    from langchain_memoryos.schema.messages import pair_messages, unanswered_turn

    messages = [s.message for s in said]
    turn = unanswered_turn(messages) if waiting else pair_messages([], messages)[0][0]
    assert turn is not None  # waiting: there is a user message; else the last message answers
    metadata: dict[str, Any] = {}
    for s in said:
        metadata.update(s.metadata)
    where = [f"{path}:{s.number}" for s in said]
    content = json.dumps([s.obj for s in said], sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(f"{where[0]}\x1f{content}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return TurnLine(
        user_input=turn.user_input,
        agent_response=turn.agent_response,
        line=said[0].number,
        timestamp=next((s.timestamp for s in said if s.timestamp is not None), None),
        thread_id=thread,
        metadata={"source_id": where if len(where) > 1 else where[0], **metadata},
        turn_id=f"{path.name}:{said[0].number}:{digest}",
        waiting=waiting,
    )


def read_turns(path: Path) -> list[TurnLine]:
    r"""The turns of a JSONL file: one JSON object per line, blank lines skipped.

    Each object is a turn — ``user_input`` (or ``user``) and/or
    ``agent_response`` (or ``assistant``), and optionally ``timestamp``,
    ``thread_id``, ``metadata`` and ``turn_id`` — or a message, ``{"role":
    ..., "content": ...}`` (``user`` / ``human``, ``assistant`` / ``ai``,
    ``system``; optionally ``timestamp``, ``thread_id``, ``metadata``), as
    mem0 and chat exports write them. Message lines are paired into turns as
    ``MemoryOS.add_messages`` pairs messages, per thread: the user's
    message(s), then the assistant's answer (a turn's time is its first
    line's, its ``source_id`` one per line); system messages are no part of a
    turn; user messages still unanswered at the end of the file are a
    ``waiting`` turn, not stored. Without a ``turn_id`` the turn's id is
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
        InvalidInputError: for a bad line; the message starts with ``<path>:<line>:``.

    Example:
        >>> import pathlib, tempfile
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "chat.jsonl"
        >>> lines = [{"role": "user", "content": "I live in Oslo."}, {"role": "assistant", "content": "Nice!"},
        ...          {"role": "human", "content": "I play chess."}]
        >>> _ = f.write_text("".join(json.dumps(line) + "\n" for line in lines))
        >>> [(t.user_input, t.agent_response, t.line, t.waiting) for t in read_turns(f)]
        [('I live in Oslo.', 'Nice!', 1, False), ('I play chess.', '', 3, True)]
        >>> _ = f.write_text('{"user": "I live in Oslo.", "assistant": "Nice!"}\n\n{"user": 3}\n')
        >>> read_turns(f)
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: ...chat.jsonl:3: 'user' must be a string, got int
        >>> _ = f.write_text('{"role": "tool", "content": "42"}\n')
        >>> read_turns(f)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: ...chat.jsonl:1: 'role' must be one of user, ..., got 'tool'
    """
    from langchain_core.messages import HumanMessage

    turns: list[TurnLine] = []
    source = path.resolve()
    asked: dict[str | None, list[_Said]] = {}  # per thread: the message lines waiting for their answer
    start = 0
    for number, chunk in enumerate(path.read_bytes().splitlines(keepends=True), start=1):
        raw = _utf8(path, chunk, line=number, start=start)  # a line that is not UTF-8: its line and offset
        start += len(chunk)
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
            if not (isinstance(obj, dict) and "role" in obj):
                turns.append(_turn_from(obj, source, number))
                continue
            thread, said = _message_from(obj, number)
            if said is None:
                continue
            if isinstance(said.message, HumanMessage):
                asked.setdefault(thread, []).append(said)
            else:
                turns.append(_turn_of_messages([*asked.pop(thread, []), said], source, thread, waiting=False))
        except (ValueError, TypeError) as exc:
            reason = f"invalid JSON: {exc.msg}" if isinstance(exc, json.JSONDecodeError) else _message(exc)
            raise InvalidInputError(f"{path}:{number}: {reason}") from None
    for thread, unanswered in asked.items():
        turns.append(_turn_of_messages(unanswered, source, thread, waiting=True))
    return turns


def _is_jsonl(path: Path, data: bytes) -> bool:
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return True
    return not data.lstrip().startswith(b"[")


def _ingest_jsonl(
    memory: MemoryOS, path: Path, turns: list[TurnLine], user: str, thread: str, progress: bool
) -> tuple[int, int]:
    turns = [t for t in turns if not t.waiting]  # a question still unanswered: stored once its answer is in the file
    added = 0
    with _progress(progress) as bar:
        task = bar.add_task(f"ingest {path.name}", total=len(turns))
        for start in range(0, len(turns), _BATCH):  # add_turns: the same result as add_turn line by line
            batch = turns[start : start + _BATCH]
            reports = memory.add_turns(
                [
                    {
                        "user_input": t.user_input,
                        "agent_response": t.agent_response,
                        "thread_id": t.thread_id or thread,
                        "timestamp": t.timestamp,
                        "metadata": t.metadata,
                        "turn_id": t.turn_id,
                    }
                    for t in batch
                ],
                user_id=user,
                thread_id=thread,
            )
            added += sum(int(r.added) for r in reports)
            bar.advance(task, len(batch))
    return len(turns), added


def _locomo_samples(
    path: Path, data: bytes, user: str, conversation: int | None
) -> list[tuple[str, int, dict[str, Any]]]:
    """``(user id, index, sample)`` of each conversation to ingest, every one checked (:func:`_check_sessions`)."""
    samples = _json_file(path, data)
    if not isinstance(samples, list):
        raise InvalidInputError(f"{path}: not a LoCoMo file (a JSON list of conversations expected)")
    for i, sample in enumerate(samples):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise InvalidInputError(f"{path}: item {i} has no 'conversation' object (not a LoCoMo file)")
        _check_sessions(path, i, sample)
    if conversation is not None:
        if not 0 <= conversation < len(samples):
            raise InvalidInputError(f"--conversation {conversation}: the file has conversations 0..{len(samples) - 1}")
        return [(user, conversation, samples[conversation])]
    if len(samples) == 1:
        return [(user, 0, samples[0])]
    return [(f"{user}-{s.get('sample_id') or i}", i, s) for i, s in enumerate(samples)]


def _conversation(path: Path, index: int, sample: dict[str, Any]) -> str:
    name = sample.get("sample_id")
    return f"{path}: conversation {index}" + (f" ({name})" if isinstance(name, str) and name else "")


def _check_sessions(path: Path, index: int, sample: dict[str, Any]) -> None:
    """A LoCoMo conversation's sessions checked: lists of turns, each an object with a speaker and a text.

    Raises:
        InvalidInputError: naming the file, the conversation, the session and the turn.
    """
    where = _conversation(path, index, sample)
    conv = sample["conversation"]
    for name in ("speaker_a", "speaker_b"):
        if not isinstance(conv.get(name), str) or not conv[name].strip():
            raise InvalidInputError(f"{where}: '{name}' must name a speaker, got {conv.get(name)!r}")
    sessions = sorted((int(k.split("_")[1]), k) for k in conv if re.fullmatch(r"session_\d+", k))
    if not sessions:
        raise InvalidInputError(f"{where}: no sessions ('session_1', ... lists of turns)")
    for _, key in sessions:
        turns = conv[key]
        if not isinstance(turns, list):
            raise InvalidInputError(f"{where}: {key} is a {type(turns).__name__}, not a list of turns")
        for t, turn in enumerate(turns):
            at = f"{where}: {key} turn {t}"
            if not isinstance(turn, dict):
                raise InvalidInputError(f"{at}: a {type(turn).__name__}, not an object with speaker, dia_id and text")
            for field_name in ("speaker", "text", "dia_id"):
                if not isinstance(turn.get(field_name), str):
                    raise InvalidInputError(f"{at}: '{field_name}' must be a string, got {turn.get(field_name)!r}")
            if not isinstance(turn.get("blip_caption") or "", str):
                raise InvalidInputError(f"{at}: 'blip_caption' must be a string, got {turn['blip_caption']!r}")


def _check_pages(memory: MemoryOS, path: Path, targets: list[tuple[str, int, dict[str, Any]]], thread: str) -> None:
    """Every page of every conversation checked as ``add_turns`` checks it, before any is written."""
    from langchain_memoryos.evaluation.locomo import conversation_pages
    from langchain_memoryos.operations.turns import turn_input

    for uid, index, sample in targets:
        for page in conversation_pages(sample):
            try:
                turn_input(
                    memory._runtime,
                    page.user_input,
                    page.agent_response,
                    uid,
                    thread,
                    page.timestamp,
                    {"source_id": list(page.dia_ids), "user_name": page.user_speaker, "agent_name": page.agent_speaker},
                    "+".join(page.dia_ids) or None,
                )
            except (ValueError, TypeError) as exc:
                turns = "+".join(page.dia_ids) or "?"
                raise InvalidInputError(
                    f"{_conversation(path, index, sample)}: session {page.session}, turns {turns}: {_message(exc)}"
                ) from None


def _check_lines(memory: MemoryOS, path: Path, turns: list[TurnLine], user: str, thread: str) -> None:
    """Every line's turn checked as ``add_turns`` checks it, before any is written."""
    from langchain_memoryos.operations.turns import turn_input

    for t in turns:
        try:
            turn_input(
                memory._runtime,
                t.user_input,
                t.agent_response,
                user,
                t.thread_id or thread,
                t.timestamp,
                t.metadata,
                t.turn_id,
            )
        except (ValueError, TypeError) as exc:
            raise InvalidInputError(f"{path}:{t.line}: {_message(exc)}") from None


def _ingest_locomo(
    memory: MemoryOS, path: Path, targets: list[tuple[str, int, dict[str, Any]]], thread: str, progress: bool
) -> list[tuple[str, int, int]]:
    from langchain_memoryos.evaluation.locomo import conversation_pages, ingest_conversation

    sizes = [len(conversation_pages(sample)) for _, _, sample in targets]
    out: list[tuple[str, int, int]] = []
    with _progress(progress) as bar:
        task = bar.add_task(f"ingest {path.name}", total=sum(sizes))
        for (uid, _, sample), size in zip(targets, sizes, strict=True):
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
    turn_id; or a message, {"role": "user" | "assistant" (human, ai, system),
    "content": ...}, paired into turns as add_messages pairs them (user
    messages still unanswered at the end of the file wait for their answer).
    Without a turn_id a line's id comes from the file's path, its line
    number and its content, so another file with the same name is never taken
    for a duplicate. A LoCoMo file (a JSON list of samples with a
    'conversation') goes to --user when it has one conversation or
    --conversation picks one, else each conversation to user '<USER>-<sample_id>'.

    The whole file is checked before anything is stored (every line, every
    conversation's sessions and pages, as add_turns checks a turn); an error
    names the file and the line (JSONL) or the conversation and session (LoCoMo).
    """
    data = _input_file(file, "pass a .jsonl file of turns or a LoCoMo .json file")
    with _errors():
        # the whole file is read and checked before the database is opened: a bad file stores nothing
        jsonl = _is_jsonl(file, data)
        if jsonl and conversation is not None:
            raise _fail("--conversation is for LoCoMo files, not JSONL")
        turns = read_turns(file) if jsonl else []
        targets = [] if jsonl else _locomo_samples(file, data, user, conversation)
        # every turn checked as add_turns checks it (by a memory of the same config), before any is stored
        from langchain_memoryos.memory import MemoryOS

        checker = MemoryOS()
        if jsonl:
            _check_lines(checker, file, turns, user, thread)
        else:
            _check_pages(checker, file, targets, thread)
        with _open_memory(db, postgres, _chat_model(model), must_exist=False) as memory:
            if jsonl:
                total, added = _ingest_jsonl(memory, file, turns, user, thread, progress)
                results = [(user, total, added)]
            else:
                results = _ingest_locomo(memory, file, targets, thread, progress)
            kind = "JSONL" if jsonl else "LoCoMo"
            typer.echo(f"ingested {file} ({kind}) into {_where(db, postgres)}")
            waiting = [t.line for t in turns if t.waiting]
            if waiting:
                typer.echo(
                    f"  {len(waiting)} user message(s) without an answer yet (line {', '.join(map(str, waiting))}): "
                    "not stored; ingest the file again once the answer is in it"
                )
            for uid, total, added in results:
                typer.echo(
                    f"  user {uid!r}: {total} turns, {added} added, {total - added} duplicates skipped; "
                    f"memory: {_stats_line(memory.stats(user_id=uid))}"
                )
