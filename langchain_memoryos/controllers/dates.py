"""Relative time resolved against the time a turn was said, written in the memory's own date format.

A fact is kept for months; "yesterday" in it means nothing a week later. The memory writes dates as
"7 May 2023" (:func:`format_date`), and :func:`resolve_relative_time` rewrites the relative time
expressions of an English text against the moment it was said:

======================  ===========================================  (said on Friday 9 June 2023)
expression              becomes
======================  ===========================================
yesterday, last night   on 8 June 2023
today, this morning     on 9 June 2023
tomorrow                on 10 June 2023
last week / next week   in the week before / after 9 June 2023
this week               in the week of 9 June 2023
last / next month       in May 2023 / in July 2023
last / next year        in 2022 / in 2024
two years ago           in 2021
three weeks ago         in the week of 19 May 2023
in two weeks            in the week of 23 June 2023
last Friday, on Monday  on 2 June 2023, on 12 June 2023 (past or coming, by the sentence's tense)
last weekend            on the weekend of 3 June 2023
last summer             in summer 2022
a few days ago          a few days before 9 June 2023
in a few weeks          a few weeks after 9 June 2023
last Christmas          at Christmas 2022
======================  ===========================================

After a preposition of time ("since last year", "until next month") the date stands alone ("since
2022"). Pure functions of their arguments: no clock is read.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from collections.abc import Callable

from langchain_memoryos.controllers.lexicon import NUMBER_WORDS

__all__ = ["format_date", "has_relative_time", "relative_time", "resolve_relative_time"]

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"a": 1, "an": 1, **NUMBER_WORDS, "fifteen": 15, "twenty": 20}
_FEW = r"a few|a couple of|a couple|several|some"
_COUNT = r"\d{1,3}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True))
_UNIT = r"days?|weeks?|fortnights?|weekends?|months?|years?"
_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
_DAY = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_PART = r"morning|afternoon|evening|night"
_MONTHS = tuple(calendar.month_name[1:])
#: a month's name, capitalised ("next March"; "this may be" is no date)
_MONTH = "(?-i:" + "|".join(_MONTHS) + ")"
#: prepositions after which a date stands alone ("since 2022", "until 7 May 2023")
_BARE_AFTER = re.compile(
    r"(?i:\b(?:since|until|till|from|by|before|after|around|of|as of|(?<!'m )(?<!am )(?<!is )(?<!'s )(?<!are )(?<!'re )"
    r"starting)\s*)$"
)
_FUTURE = re.compile(
    r"(?i:\b(?:will|'ll|shall|going to|gonna|plan|plans|planning|hope|hopes|want|wants|intend|"
    r"(?:am|is|are|i'm|we're|you're|they're|he's|she's|it's)\s+(?:\w+ly\s+)?\w+ing|starts?|begins?|is on|are on|"
    r"due|scheduled|booked for|next)\b)"
)
_PAST = re.compile(
    r"(?i:\b(?:was|were|went|did|had|got|made|took|saw|met|ran|came|gave|told|bought|found|won|lost|left|sold|"
    r"broke|wrote|began|drove|flew|ate|drank|spent|kept|felt|heard|paid|said|sat|slept|stood|thought|caught|"
    r"brought|taught|built|sent|swam|sang|rode|threw|wore|chose|fell|forgot|held|led|quit|"
    r"(?!(?:need|feed|seed|speed|bleed|breed|indeed|proceed|succeed|exceed)\b)[a-z]{2,}ed)\b)"
)


def format_date(day: _dt.date) -> str:
    """A date in the memory's format: day, month name, year.

    Example:
        >>> format_date(_dt.date(2023, 5, 7))
        '7 May 2023'
    """
    return f"{day.day} {calendar.month_name[day.month]} {day.year}"


def _month(day: _dt.date, shift: int) -> str:
    index = day.year * 12 + day.month - 1 + shift
    return f"{calendar.month_name[index % 12 + 1]} {index // 12}"


def _count(text: str) -> int:
    text = text.lower()
    return int(text) if text.isdigit() else _NUMBERS.get(text, 1)


def _shift(day: _dt.date, unit: str, n: int) -> tuple[str, str]:
    """(with its preposition, alone) of ``day`` moved by ``n`` units (negative: earlier)."""
    unit = unit.lower().rstrip("s")
    if unit == "fortnight":
        unit, n = "week", 2 * n
    if unit == "weekend":  # "two weekends ago": the weekend before last
        sat = _saturday(day, "last" if n < 0 else "next") + _dt.timedelta(weeks=n + 1 if n < 0 else n - 1)
        return f"on the weekend of {format_date(sat)}", f"the weekend of {format_date(sat)}"
    if unit == "day":
        d = format_date(day + _dt.timedelta(days=n))
        return f"on {d}", d
    if unit == "week":
        d = format_date(day + _dt.timedelta(weeks=n))
        return f"in the week of {d}", f"the week of {d}"
    if unit == "month":
        m = _month(day, n)
        return f"in {m}", m
    return f"in {day.year + n}", str(day.year + n)


def _season(day: _dt.date, name: str, which: str) -> str:
    """The year label of the season ``name`` that is ``which`` ("last", "this", "next") from ``day``."""
    start = _SEASONS[name.lower()]

    # the season's occurrences as (year, first month); winter starts in December and runs into the next year
    def span(year: int) -> tuple[_dt.date, _dt.date]:
        first = _dt.date(year, start, 1)
        end_index = year * 12 + start - 1 + 3
        return first, _dt.date(end_index // 12, end_index % 12 + 1, 1)

    years = range(day.year - 2, day.year + 2)
    current = next((y for y in years if span(y)[0] <= day < span(y)[1]), None)
    if which == "last":
        year = max(y for y in years if span(y)[1] <= day and y != current)
    elif which == "next":
        year = min(y for y in years if span(y)[0] > day)
    else:
        year = current if current is not None else min(y for y in years if span(y)[0] > day)
    label = "autumn" if name.lower() == "autumn" else name.lower()
    return f"{label} {year}–{year + 1}" if start == 12 else f"{label} {year}"


def _weekday(day: _dt.date, name: str, direction: int) -> _dt.date:
    """The ``name`` weekday strictly before (``direction`` −1) or after (+1) ``day``."""
    target = _WEEKDAYS.index(name.lower())
    if direction < 0:
        back = (day.weekday() - target) % 7 or 7
        return day - _dt.timedelta(days=back)
    ahead = (target - day.weekday()) % 7 or 7
    return day + _dt.timedelta(days=ahead)


def _saturday(day: _dt.date, which: str) -> _dt.date:
    """The Saturday of the weekend ``which`` ("last", "this", "next") from ``day``."""
    on_or_before = day - _dt.timedelta(days=(day.weekday() - 5) % 7)
    in_weekend = day.weekday() >= 5
    if which == "last":
        return on_or_before - _dt.timedelta(days=7) if in_weekend else on_or_before
    coming = on_or_before if in_weekend else on_or_before + _dt.timedelta(days=7)
    if which == "next" and in_weekend:
        return coming + _dt.timedelta(days=7)
    return coming


def _is_past(sentence: str) -> bool:
    """Whether a sentence speaks of the past (a past verb and no future marker)."""
    return bool(_PAST.search(sentence)) and not _FUTURE.search(sentence)


Handler = Callable[[re.Match[str], _dt.date, str], tuple[str, str] | None]


def _on(d: _dt.date) -> tuple[str, str]:
    return f"on {format_date(d)}", format_date(d)


def _relative_day(m: re.Match[str], day: _dt.date, sentence: str) -> tuple[str, str] | None:
    word = m.group(0).lower()
    if "day before yesterday" in word:
        return _on(day - _dt.timedelta(days=2))
    if "day after tomorrow" in word:
        return _on(day + _dt.timedelta(days=2))
    if word.startswith(("yesterday", "last night")):
        return _on(day - _dt.timedelta(days=1))
    if word.startswith("tomorrow"):
        return _on(day + _dt.timedelta(days=1))
    return _on(day)  # today, tonight, this morning …


def _period(m: re.Match[str], day: _dt.date, sentence: str) -> tuple[str, str] | None:
    which, unit = m.group("which").lower(), m.group("unit").lower()
    if m.group("unit") in _MONTHS:  # "last March", "next May": that month's nearest year
        month = _MONTHS.index(m.group("unit")) + 1
        year = day.year
        if which in ("last", "past", "this past") and month >= day.month:
            year -= 1
        elif which in ("next", "coming", "this coming") and month <= day.month:
            year += 1
        return f"in {m.group('unit')} {year}", f"{m.group('unit')} {year}"
    which = "last" if which in ("last", "past", "this past") else "next" if which.endswith("coming") else which
    d = format_date(day)
    if unit == "week":
        if which == "this":
            return f"in the week of {d}", f"the week of {d}"
        side = "before" if which == "last" else "after"
        return f"in the week {side} {d}", f"the week {side} {d}"
    if unit == "weekend":
        sat = format_date(_saturday(day, which))
        return f"on the weekend of {sat}", f"the weekend of {sat}"
    shift = {"last": -1, "this": 0, "next": 1}[which]
    if unit == "month":
        return f"in {_month(day, shift)}", _month(day, shift)
    if unit == "year":
        return f"in {day.year + shift}", str(day.year + shift)
    if unit in _SEASONS:
        label = _season(day, unit, which)
        return f"in {label}", label
    if unit in _WEEKDAYS:
        if which == "last":
            return _on(_weekday(day, unit, -1))
        if which == "this" and day.weekday() == _WEEKDAYS.index(unit):
            return _on(day)
        return _on(_weekday(day, unit, 1))
    return None


def _ago(m: re.Match[str], day: _dt.date, sentence: str) -> tuple[str, str] | None:
    unit = m.group("unit")
    if m.group("few"):
        plural = unit.lower().rstrip("s") + "s"
        when = _month(day, 0) if plural == "months" else day.year if plural == "years" else format_date(day)
        text = f"{m.group('few').lower()} {plural} before {when}"
        return text, text
    return _shift(day, unit, -_count(m.group("n")))


#: A perfect or a negation before "in five years": a span of time, not a date ("I haven't eaten meat in five years").
_SPAN_BEFORE = re.compile(r"(?i:\b(?:have|has|had|'ve)(?:n't|\s+not|\s+never)\b|\b(?:first|only|once|twice)\b[^.!?]*$)")


def _ahead(m: re.Match[str], day: _dt.date, sentence: str) -> tuple[str, str] | None:
    if _is_past(sentence) or _SPAN_BEFORE.search(sentence[: m.start()]):
        return None  # "I learned it in two weeks": a duration, not a date
    if m.group("few"):  # "in a few weeks": a few weeks after the day
        unit = m.group("unit").lower().rstrip("s") + "s"
        when = _month(day, 0) if unit == "months" else day.year if unit == "years" else format_date(day)
        text = f"{m.group('few').lower()} {unit} after {when}"
        return text, text
    return _shift(day, m.group("unit"), _count(m.group("n")))


def _from_now(m: re.Match[str], day: _dt.date, sentence: str) -> tuple[str, str] | None:
    """A time "from now" ("two weeks from now"): as "in two weeks", whatever the sentence's tense."""
    if m.group("few"):
        unit = m.group("unit").lower().rstrip("s") + "s"
        when = _month(day, 0) if unit == "months" else day.year if unit == "years" else format_date(day)
        text = f"{m.group('few').lower()} {unit} after {when}"
        return text, text
    return _shift(day, m.group("unit"), _count(m.group("n")))


def _edge(m: re.Match[str], day: _dt.date, sentence: str) -> tuple[str, str] | None:
    """An edge of a period ("the end of the month", "the start of next year"): of the period named."""
    edge, which, unit = m.group("edge").lower(), m.group("which").lower(), m.group("unit").lower()
    shift = {"the": 0, "this": 0, "next": 1, "last": -1}[which]
    if unit == "week":
        side = {0: "of", 1: "after", -1: "before"}[shift]
        label = f"the {edge} of the week {side} {format_date(day)}"
    elif unit == "month":
        label = f"the {edge} of {_month(day, shift)}"
    else:
        label = f"the {edge} of {day.year + shift}"
    return label, label


def _bare_weekday(m: re.Match[str], day: _dt.date, sentence: str) -> tuple[str, str] | None:
    past = _is_past(sentence) or sentence[: m.start()].lower().endswith("since ")
    return _on(_weekday(day, m.group("day"), -1 if past else 1))


def _after_next(m: re.Match[str], day: _dt.date, sentence: str) -> tuple[str, str] | None:
    """A week or weekend "after next": the week two weeks on, or the weekend after the coming one."""
    if m.group("unit").lower() == "weekend":
        sat = format_date(_saturday(day, "next") + _dt.timedelta(weeks=1))
        return f"on the weekend of {sat}", f"the weekend of {sat}"
    d = format_date(day + _dt.timedelta(weeks=2))
    return f"in the week of {d}", f"the week of {d}"


def _easter(year: int) -> _dt.date:
    """Easter Sunday (the Gregorian computus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = b // 4, b % 4
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    j, k = c // 4, c % 4
    m = (a + 11 * h) // 319
    r = (2 * e + 2 * j - k - h + m + 32) % 7
    month = (h - m + r + 90) // 25
    return _dt.date(year, month, (h - m + r + month + 19) % 32)


def _holiday_date(name: str, year: int) -> _dt.date:
    if name.startswith("christmas eve"):
        return _dt.date(year, 12, 24)
    if name.startswith("christmas"):
        return _dt.date(year, 12, 25)
    if name == "easter":
        return _easter(year)
    if name == "thanksgiving":  # the fourth Thursday of November
        first = _dt.date(year, 11, 1)
        return first + _dt.timedelta(days=(3 - first.weekday()) % 7 + 21)
    if name == "halloween":
        return _dt.date(year, 10, 31)
    if name.startswith("new year's eve"):
        return _dt.date(year, 12, 31)
    return _dt.date(year, 1, 1)  # new year, new year's day


def _holiday(m: re.Match[str], day: _dt.date, sentence: str) -> tuple[str, str] | None:
    which, name = m.group("which").lower(), " ".join(m.group("holiday").lower().split())
    if which == "last":
        year = day.year if _holiday_date(name, day.year) < day else day.year - 1
    elif which == "next":
        year = day.year if _holiday_date(name, day.year) > day else day.year + 1
    else:
        year = day.year
    label = m.group("holiday")
    label = " ".join(w if w[:1].isupper() else w.capitalize() for w in label.split())
    preposition = "on" if name.startswith(("new year", "halloween", "christmas eve", "christmas day")) else "at"
    return f"{preposition} {label} {year}", f"{label} {year}"


#: A day of the month that recurs ("I pay rent on the 1st", "every month on the 15th"): no one date.
_RECURRING = re.compile(r"(?i:\b(?:every|each|monthly|usually|always|normally|typically)\b)")


def _month_day(m: re.Match[str], day: _dt.date, sentence: str) -> tuple[str, str] | None:
    """A day of the month ("on the 21st"): this month's or the next's (a plan), this or the last's (a past event)."""
    n = int(m.group("n"))
    if not 1 <= n <= 31 or _RECURRING.search(sentence):
        return None
    past = _is_past(sentence)
    if not past and not _FUTURE.search(sentence):
        return None  # "I pay my rent on the 1st": a habit, not a date
    step = -1 if past else 1
    index = day.year * 12 + day.month - 1
    for _ in range(3):  # a month without that day (31 April) is skipped
        year, month = divmod(index, 12)
        if n <= calendar.monthrange(year, month + 1)[1]:
            found = _dt.date(year, month + 1, n)
            if (found <= day) if past else (found >= day):
                return _on(found)
        index += step
    return None


def _other_day(m: re.Match[str], day: _dt.date, sentence: str) -> tuple[str, str] | None:
    unit = "weeks" if m.group(0).lower().endswith("week") else "days"
    text = f"a few {unit} before {format_date(day)}"
    return text, text


_RULES: tuple[tuple[re.Pattern[str], Handler], ...] = (
    (
        re.compile(
            r"(?i:\b(?:the\s+)?(?P<edge>end|start|beginning|middle)\s+of\s+(?P<which>the|this|next|last)\s+"
            r"(?P<unit>week|month|year)\b)"
        ),
        _edge,
    ),
    (
        re.compile(
            rf"(?i:\b(?:the day before yesterday|the day after tomorrow|(?:yesterday|tomorrow)(?:\s+(?:{_PART}))?|"
            rf"last night|today|tonight|earlier today|this (?:{_PART}))\b)"
        ),
        _relative_day,
    ),
    (
        re.compile(
            rf"(?i:\b(?P<which>this past|past|last|this coming|coming|this|next)\s+"
            rf"(?P<unit>weekend|week|month|year|spring|summer|fall|autumn|winter|{_DAY}|{_MONTH})\b)"
        ),
        _period,
    ),
    (re.compile(rf"(?i:\b(?:(?P<few>{_FEW})|(?P<n>{_COUNT}))\s+(?P<unit>{_UNIT})\s+ago\b)"), _ago),
    (
        re.compile(rf"(?i:\bin\s+(?:(?P<few>{_FEW})|(?P<n>{_COUNT}))\s+(?P<unit>{_UNIT})(?!\s+(?:ago|old|time))\b)"),
        _ahead,
    ),
    (re.compile(rf"(?i:\bon\s+(?P<day>{_DAY})\b(?!s)(?!\s+(?:nights|mornings|evenings|afternoons)\b))"), _bare_weekday),
    (re.compile(r"(?i:\bthe other (?:day|week)\b)"), _other_day),
    (re.compile(r"(?i:\b(?:the\s+)?(?P<unit>week|weekend)\s+after\s+next\b)"), _after_next),
    (
        re.compile(
            rf"(?i:(?:(?<=\bstarting )|(?<=\bfrom )|(?<=\buntil )|(?<=\btill )|(?<=\bby )|(?<=\bsince ))"
            rf"(?P<day>{_DAY})\b(?!s))"
        ),
        _bare_weekday,
    ),
    (re.compile(rf"(?i:\b(?:(?P<few>{_FEW})|(?P<n>{_COUNT}))\s+(?P<unit>{_UNIT})\s+from now\b)"), _from_now),
    (
        re.compile(
            r"(?i:\bon\s+the\s+(?P<n>\d{1,2})(?:st|nd|rd|th)\b(?!\s+of\b)(?!\s+(?:January|February|March|April|May|June|"
            r"July|August|September|October|November|December)\b))"
        ),
        _month_day,
    ),
    (
        re.compile(
            r"(?i:\b(?P<which>last|this|next)\s+(?P<holiday>christmas(?:\s+eve|\s+day)?|easter|thanksgiving|halloween|"
            r"new year's(?:\s+eve|\s+day)?|new year)\b)"
        ),
        _holiday,
    ),
)
_ANY = re.compile("|".join(f"(?:{re.sub(r'[?]P<[a-z]+>', '', p.pattern)})" for p, _ in _RULES))


def has_relative_time(text: str) -> bool:
    """Whether a text holds a relative time expression that :func:`resolve_relative_time` rewrites.

    Example:
        >>> has_relative_time("I ran a marathon last week."), has_relative_time("I ran a marathon in May 2023.")
        (True, False)
    """
    return bool(_ANY.search(text or ""))


def relative_time(text: str) -> str:
    """The first relative time expression of a text, as written ("" when there is none).

    Example:
        >>> relative_time("I moved to Denver last month for work."), relative_time("I moved in May.")
        ('last month', '')
    """
    found = _ANY.search(text or "")
    return found.group(0) if found else ""


def resolve_relative_time(text: str, when: _dt.datetime | _dt.date) -> str:
    """``text`` with its relative time expressions as dates, against ``when`` (the time it was said).

    Args:
        text: an English sentence or fact.
        when: the time the text was said (a datetime's date is used as it is: give it in the
            speaker's time zone when that matters).

    Returns:
        The text with each expression replaced (see the module's table); a sentence that opens on
        one keeps its capital ("Yesterday I …" → "On 8 June 2023 I …"). Text without one comes back
        unchanged.

    Example:
        >>> when = _dt.datetime(2023, 6, 9, 15, 0)  # a Friday
        >>> resolve_relative_time("I ran my first marathon yesterday.", when)
        'I ran my first marathon on 8 June 2023.'
        >>> resolve_relative_time("I started a new job last week.", when)
        'I started a new job in the week before 9 June 2023.'
        >>> resolve_relative_time("We're moving to Denver next month.", when)
        "We're moving to Denver in July 2023."
        >>> resolve_relative_time("I quit smoking two years ago.", when)
        'I quit smoking in 2021.'
        >>> resolve_relative_time("Last Saturday I ran a 10k, and my flight is on Monday.", when)
        'On 3 June 2023 I ran a 10k, and my flight is on 12 June 2023.'
        >>> resolve_relative_time("I've been learning Spanish since last year.", when)
        "I've been learning Spanish since 2022."
        >>> resolve_relative_time("I work out on Mondays.", when)
        'I work out on Mondays.'
    """
    day = when.date() if isinstance(when, _dt.datetime) else when
    if not text or not _ANY.search(text):
        return text
    out = text
    for pattern, handler in _RULES:
        pieces: list[str] = []
        last = 0
        for m in pattern.finditer(out):
            resolved = handler(m, day, out)
            if resolved is None:
                continue
            full, bare = resolved
            before = out[: m.start()]
            replacement = bare if _BARE_AFTER.search(before) else full
            if m.start() == 0 or re.search(r"[.!?]\s+$", before):
                if re.match(r"\s+(?:is|was|will be|would be|'s)\b", out[m.end() :]):
                    replacement = bare  # "Tomorrow is my last day": "16 May 2024 is …"
                replacement = replacement[0].upper() + replacement[1:]
            pieces.append(out[last : m.start()] + replacement)
            last = m.end()
        if pieces:
            out = "".join(pieces) + out[last:]
    return out
