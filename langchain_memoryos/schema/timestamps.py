"""Timestamps of the memory: UTC normalisation and the clock-skew check.

Every stored time is a timezone-aware UTC ``datetime``; naive inputs are taken as UTC.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from langchain_memoryos.errors import InvalidInputError, InvalidTypeError

__all__ = ["check_timestamp", "ensure_utc"]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


def ensure_utc(value: _dt.datetime | str | float | int | None) -> _dt.datetime:
    """Normalise a timestamp to a timezone-aware UTC ``datetime``.

    Args:
        value: a ``datetime`` (naive means UTC), an ISO-8601 string, a POSIX
            timestamp in seconds, or ``None`` for now.

    Returns:
        The timestamp in UTC.

    Raises:
        TypeError: for any other type.
        ValueError: for an unparseable string, or a time no ``datetime`` can
            hold in UTC (``2**63`` seconds, NaN, year 10000).

    Example:
        >>> ensure_utc("2023-05-08T13:56:00").isoformat()
        '2023-05-08T13:56:00+00:00'
        >>> ensure_utc(2**63)
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: timestamp 9223372036854775808 is out of range (a UTC time \
between the years 1 and 9999 expected).
    """
    if value is None:
        return _dt.datetime.now(_dt.UTC)
    if isinstance(value, bool):
        raise InvalidTypeError("timestamp must be a datetime, an ISO string or POSIX seconds, not a bool.")
    if isinstance(value, str):
        try:
            parsed = _dt.datetime.fromisoformat(value.strip())
        except ValueError as exc:
            raise InvalidInputError(f"timestamp {value!r} is not ISO-8601 (e.g. '2023-05-08T13:56:00').") from exc
        return ensure_utc(parsed)
    if not isinstance(value, (_dt.datetime, int, float)):
        raise InvalidTypeError(
            f"timestamp must be a datetime, an ISO string or POSIX seconds, got {type(value).__name__}."
        )
    try:
        if isinstance(value, _dt.datetime):
            return value.replace(tzinfo=_dt.UTC) if value.tzinfo is None else value.astimezone(_dt.UTC)
        return _dt.datetime.fromtimestamp(float(value), tz=_dt.UTC)
    except (OverflowError, OSError, ValueError):
        raise InvalidInputError(
            f"timestamp {value!r} is out of range (a UTC time between the years 1 and 9999 expected)."
        ) from None


def check_timestamp(
    value: _dt.datetime | str | float | int | None,
    max_clock_skew_seconds: float | None,
    *,
    now: _dt.datetime | None = None,
) -> _dt.datetime:
    """A timestamp given to the memory, in UTC, refused when it lies too far ahead of the wall clock.

    The conversation clock is the latest timestamp a user's memory has seen
    and it never goes back, so one turn dated in the far future would stop
    every later turn from counting as recent. A time more than
    ``max_clock_skew_seconds`` ahead of this machine's clock is refused.

    Args:
        value: as for :func:`ensure_utc` (``None``: now).
        max_clock_skew_seconds: how far ahead of ``now`` a time may lie
            (``MemoryOSConfig.max_clock_skew_seconds``; ``None``: no limit).
        now: the wall clock (default: this machine's).

    Returns:
        The timestamp in UTC.

    Raises:
        ValueError: out of range, or ahead by more than the skew; the message
            names ``MemoryOSConfig.max_clock_skew_seconds``.
        TypeError: for a value of another type.

    Example:
        >>> check_timestamp("2023-05-08T13:56:00", 86400).year
        2023
        >>> check_timestamp("9999-12-31T23:59:59", 86400)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidInputError: timestamp 9999-12-31T23:59:59+00:00 lies ... ahead of this \
machine's clock ...
    """
    ts = ensure_utc(value)
    if max_clock_skew_seconds is None:
        return ts
    wall = now if now is not None else _dt.datetime.now(_dt.UTC)
    ahead = (ts - wall).total_seconds()
    if ahead > max_clock_skew_seconds:
        raise InvalidInputError(
            f"timestamp {ts.isoformat()} lies {ahead:.0f} s ahead of this machine's clock ({wall.isoformat()}), "
            f"more than MemoryOSConfig.max_clock_skew_seconds={max_clock_skew_seconds:g} allows; pass the time "
            "the turn happened (a naive datetime is taken as UTC), or raise max_clock_skew_seconds "
            "(None turns the check off)."
        )
    return ts


def _ts(value: Any) -> _dt.datetime:
    return ensure_utc(value) if value is not None else _EPOCH


def _iso(value: _dt.datetime) -> str:
    return value.isoformat()
