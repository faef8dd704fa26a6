"""What callers pass, checked and converted before anything is read or written.

Ids are keys and are never rewritten, so one that no backend can store is
refused; text and metadata are made storable alike on every backend (a lone
surrogate or NUL becomes U+FFFD, metadata must be JSON); timestamps are UTC
and never too far ahead of the wall clock.
"""

from __future__ import annotations

import datetime as _dt
import logging
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from langchain_memoryos.config import MemoryOSConfig
from langchain_memoryos.errors import InvalidInputError, InvalidTypeError
from langchain_memoryos.schema import check_timestamp
from langchain_memoryos.schema.context import fact_id_from_ref

__all__ = [
    "TIME_FIELDS",
    "FactKindArg",
    "check_fact_id",
    "check_import_value",
    "check_kind",
    "check_message_size",
    "check_query",
    "check_sqlite_path",
    "check_text",
    "check_thread",
    "check_time",
    "check_user",
    "clean_metadata",
    "clean_text",
    "fit_message",
]

#: The logger these checks always used (they lived in ``langchain_memoryos.memory``).
logger = logging.getLogger("langchain_memoryos.memory")

FactKindArg = Literal["user", "agent"]

#: The time fields of stored items (pages, segments, facts, write events, the user's clock).
TIME_FIELDS = ("timestamp", "clock", "created_at", "updated_at", "last_access")


def check_user(user_id: Any) -> str:
    """A user id: a non-empty string that every backend can store.

    Example:
        >>> check_user("ana")
        'ana'
        >>> check_user("  ")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: user_id must be a non-empty string, got '  '; every memory \
belongs to one user ...
    """
    if not isinstance(user_id, str) or not user_id.strip():
        raise InvalidInputError(
            f"user_id must be a non-empty string, got {user_id!r}; every memory belongs to one user "
            "(pass user_id='...')."
        )
    return _storable_id("user_id", user_id)


def check_thread(thread_id: Any) -> str:
    """A thread id: a non-empty string that every backend can store.

    Example:
        >>> check_thread("t1")
        't1'
        >>> check_thread("")
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: thread_id must be a non-empty string, got ''.
    """
    if not isinstance(thread_id, str) or not thread_id:
        raise InvalidInputError(f"thread_id must be a non-empty string, got {thread_id!r}.")
    return _storable_id("thread_id", thread_id)


def _storable_id(name: str, value: str) -> str:
    """Ids are keys: they are never rewritten, so one that no backend can store is refused."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(f"{name} {value!r} contains a lone surrogate; pass valid Unicode text.") from None
    return value


def check_text(name: str, value: Any) -> str:
    """A text argument (``None`` is empty), cleaned as by :func:`clean_text`.

    Example:
        >>> check_text("query", None), check_text("query", "a" + chr(0) + "b") == "a" + chr(0xFFFD) + "b"
        ('', True)
        >>> check_text("query", 3)
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidTypeError: query must be a string, got int.
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidTypeError(f"{name} must be a string, got {type(value).__name__}.")
    return clean_text(value, name)


def check_query(query: Any) -> str:
    """A retrieval query: a string (``""`` asks for the context without a search: STM and persona).

    ``None`` is refused rather than read as ``""``: it is almost always a
    message whose text was lost on the way (a missing key, a tool call).

    Example:
        >>> check_query("Where do I live?")
        'Where do I live?'
        >>> check_query(None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidTypeError: query must be a string (the user's message), got None; ...
    """
    if query is None:
        raise InvalidTypeError(
            "query must be a string (the user's message), got None; pass the message's text, "
            "or '' for the context without a search (recent turns and persona)."
        )
    return check_text("query", query)


def check_sqlite_path(path: Any) -> str:
    """An SQLite database path that can be opened: its directory exists and it is not a directory.

    The file itself is created when missing; ``":memory:"`` is a throwaway database.

    Args:
        path: a ``str`` or ``os.PathLike``.

    Returns:
        The path as a string.

    Raises:
        TypeError: ``path`` is not a path.
        FileNotFoundError: its directory does not exist.
        NotADirectoryError: its directory is a file.
        IsADirectoryError: ``path`` is a directory.

    Example:
        >>> check_sqlite_path(":memory:")
        ':memory:'
        >>> check_sqlite_path("/no/such/dir/m.db")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        FileNotFoundError: the directory /no/such/dir does not exist; create it or pass another path (SQLite ...
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidTypeError(f"the SQLite path must be a str or a pathlib.Path, got {type(path).__name__}.")
    text = os.fspath(path)
    if not isinstance(text, str) or not text:
        raise InvalidTypeError(f"the SQLite path must be a non-empty str or pathlib.Path, got {path!r}.")
    if text == ":memory:":
        return text
    file = Path(text)
    parent = file.parent
    if not parent.exists():
        raise FileNotFoundError(
            f"the directory {parent} does not exist; create it or pass another path (SQLite database {file})."
        )
    if not parent.is_dir():
        raise NotADirectoryError(f"{parent} is a file, not a directory; pass another path (SQLite database {file}).")
    if file.is_dir():
        raise IsADirectoryError(
            f"{file} is a directory, not a database file; pass a file path such as {file / 'memory.db'}."
        )
    return text


def check_kind(kind: Any) -> FactKindArg:
    """A fact kind: ``"user"`` (knowledge base) or ``"agent"`` (agent traits).

    Example:
        >>> check_kind("agent")
        'agent'
        >>> check_kind("users")
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: kind must be 'user' or 'agent', got 'users'.
    """
    if kind not in ("user", "agent"):
        raise InvalidInputError(f"kind must be 'user' or 'agent', got {kind!r}.")
    return kind  # type: ignore[no-any-return]


def check_fact_id(fact_id: Any) -> str:
    """A fact id in any form the memory shows it: ``f:42`` (as the prompt and tools show it), ``[f:42]``, or stored.

    Every method that takes a fact id takes the form the context and the
    tools show, so the id a model or a person reads is the id they pass back.

    Example:
        >>> check_fact_id("f:42"), check_fact_id("[f:42]"), check_fact_id("f_000000000042")
        ('f_000000000042', 'f_000000000042', 'f_000000000042')
        >>> check_fact_id("")
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: fact_id must be a non-empty string (an id from list_facts, \
search or the context, e.g. 'f:12'), \
got ''.
    """
    if isinstance(fact_id, str) and fact_id.strip():
        return fact_id_from_ref(fact_id)
    raise InvalidInputError(
        "fact_id must be a non-empty string (an id from list_facts, search or the context, e.g. 'f:12'), "
        f"got {fact_id!r}."
    )


def check_time(value: Any, config: MemoryOSConfig) -> _dt.datetime:
    """A caller's timestamp in UTC, refused beyond ``max_clock_skew_seconds`` ahead of the wall clock.

    Example:
        >>> check_time("2024-05-01T10:00:00", MemoryOSConfig()).isoformat()
        '2024-05-01T10:00:00+00:00'
        >>> check_time("9999-12-31T23:59:59", MemoryOSConfig())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: timestamp 9999-12-31T23:59:59+00:00 lies ... \
max_clock_skew_seconds ...
    """
    return check_timestamp(value, config.max_clock_skew_seconds)


def clean_text(value: str, name: str = "text") -> str:
    r"""Text every backend can store and the encoder can read.

    Surrogate pairs written as two code points become the character they
    encode; a lone surrogate (from broken UTF-16 or JSON) and NUL (which
    PostgreSQL's JSON cannot hold) become U+FFFD, with a warning. Everything
    else, control characters and every script included, is kept as given.

    Example:
        >>> clean_text("tea " + chr(0xD83C) + chr(0xDF75)) == "tea \N{TEACUP WITHOUT HANDLE}"
        True
        >>> clean_text("a" + chr(0) + "b" + chr(0xD800)) == "a\ufffdb\ufffd"
        True
    """
    if "\x00" not in value:
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            pass
    cleaned = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace").replace("\x00", "\ufffd")
    logger.warning("%s: lone surrogates or NUL characters replaced by U+FFFD", name)
    return cleaned


def clean_metadata(metadata: Mapping[str, Any], name: str = "metadata") -> dict[str, Any]:
    """Metadata as JSON that every backend stores alike, checked before anything is written.

    Allowed: strings (cleaned as by :func:`clean_text`), 64-bit ``int``,
    finite ``float``, ``bool``, ``None``, lists (and tuples, stored as lists) and
    dicts with string keys, nested. One conversion: a ``datetime`` or
    ``date`` becomes its ISO-8601 string (``value.isoformat()``). Anything
    else (NaN or infinity, bytes, sets, other objects, non-string keys) is
    refused, naming where it sits: SQLite would store some of it silently
    changed and PostgreSQL would refuse it, so a memory could not move
    between them.

    Args:
        metadata: the mapping given to ``add_turn``.
        name: how errors name it.

    Returns:
        A new dict of JSON values.

    Raises:
        ValueError: for a value that is not JSON (the message names its key).

    Example:
        >>> import datetime as dt
        >>> clean_metadata({"at": dt.date(2024, 5, 1), "tags": ("a", "b")})
        {'at': '2024-05-01', 'tags': ['a', 'b']}
        >>> clean_metadata({"score": float("nan")})
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: metadata['score'] is NaN, not a finite number; JSON numbers are \
finite (pass None or a string).
    """
    if not isinstance(metadata, Mapping):
        raise InvalidTypeError(f"{name} must be a mapping (e.g. {{'source_id': 'D1:3'}}).")
    return _json_value(metadata, name)  # type: ignore[no-any-return]


def _json_value(value: Any, where: str) -> Any:
    if isinstance(value, str):
        return clean_text(value, where)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise InvalidInputError(
                f"{where} is {value}, beyond 64-bit integers (SQLite's JSON limit); pass it as a string."
            )
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            shown = "NaN" if math.isnan(value) else str(value)
            raise InvalidInputError(
                f"{where} is {shown}, not a finite number; JSON numbers are finite (pass None or a string)."
            )
        return float(value)
    if isinstance(value, _dt.date):  # datetime too: the one conversion
        return value.isoformat()
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidInputError(
                    f"{where} has the key {key!r} ({type(key).__name__}); JSON object keys are strings "
                    f"(use {str(key)!r})."
                )
            out[clean_text(key, where)] = _json_value(item, f"{where}[{key!r}]")
        return out
    if isinstance(value, (list, tuple)):
        if value and all(type(x) is float for x in value) and all(map(math.isfinite, value)):
            return list(value)  # a vector: no per-number walk
        return [_json_value(item, f"{where}[{i}]") for i, item in enumerate(value)]
    raise InvalidInputError(
        f"{where} is a {type(value).__name__}, not a JSON value; pass str, int, finite float, bool, None, "
        "a list or a dict with string keys (a datetime or date is stored as its ISO string)."
    )


def check_import_value(index: int, row: Any, config: MemoryOSConfig) -> dict[str, Any]:
    """An exported item's value, checked as ``add_turn`` checks its input, before anything is written.

    Values must be JSON (finite numbers; a ``datetime`` becomes its ISO
    string) and its times (``timestamp``, ``clock``, ``created_at``,
    ``updated_at``, ``last_access``) within ``max_clock_skew_seconds`` of
    the wall clock, so an export moves between backends unchanged and
    cannot set the conversation clock to year 9999.

    Example:
        >>> row = {"namespace": ["meta"], "key": "clock", "value": {"clock": "2024-05-01T10:00:00+00:00"}}
        >>> check_import_value(0, row, MemoryOSConfig())
        {'clock': '2024-05-01T10:00:00+00:00'}
        >>> row["value"]["clock"] = "9999-12-31T23:59:59+00:00"
        >>> check_import_value(0, row, MemoryOSConfig())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: import_user: item 0 (meta/clock) clock: timestamp \
9999-12-31T23:59:59+00:00 lies ...
    """
    if not isinstance(row, Mapping) or not isinstance(row.get("value"), Mapping):
        raise InvalidInputError(f"import_user: item {index} has no 'value' object (not a memoryos export item).")
    where = f"import_user: item {index} ({'/'.join(map(str, row.get('namespace', [])))}/{row.get('key')})"
    value = clean_metadata(row["value"], f"{where} value")
    for name in TIME_FIELDS:
        if value.get(name) is not None:
            try:
                check_time(value[name], config)
            except (TypeError, ValueError) as exc:
                raise InvalidInputError(f"{where} {name}: {exc}") from None
    return value


def check_message_size(name: str, value: Any, limit: int) -> None:
    """Refuse a side of a turn longer than ``limit`` characters (``MemoryOSConfig.max_message_chars``).

    Args:
        name: the argument (``"user_input"``, ``"agent_response"``).
        value: its text (anything else is left to the type check).
        limit: the most characters allowed.

    Raises:
        ValueError: the text is longer; the message names the limit and the knob.

    Example:
        >>> check_message_size("user_input", "hello", 10)
        >>> check_message_size("user_input", "x" * 11, 10)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: user_input has 11 characters, more than max_message_chars=10: ...
    """
    if isinstance(value, str) and len(value) > limit:
        raise InvalidInputError(
            f"{name} has {len(value):,} characters, more than max_message_chars={limit:,}: store a summary or an "
            f"excerpt of it, split it into several turns, or raise the limit "
            f"(MemoryOS(config=MemoryOSConfig(max_message_chars=...)))."
        )


def fit_message(value: str, limit: int) -> str:
    """``value`` cut to at most ``limit`` characters, ending with a visible marker when it was cut.

    What the agent middleware and the remember node store for a message over
    ``MemoryOSConfig.max_message_chars`` (``add_turn`` would refuse it), so an
    agent run never fails on a huge message.

    Example:
        >>> fit_message("short", 100)
        'short'
        >>> fit_message("word " * 100, 80)
        'word word word word word word word  [… 465 characters cut: max_message_chars=80]'
        >>> len(fit_message("word " * 100, 80))
        80
    """
    if len(value) <= limit:
        return value
    marker = f"[… {{}} characters cut: max_message_chars={limit}]"
    keep = max(0, limit - len(marker.format(len(value))) - 1)
    text = f"{value[:keep]} {marker.format(len(value) - keep)}" if keep else marker.format(len(value))
    return text[:limit]
