"""Time expressions in a query ("last May", "in 2022", "two weeks ago") as time windows."""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime, timedelta

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "couple": 2,
    "few": 3,
}
UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_AGO = re.compile(r"\b(\d+|" + "|".join(NUMBERS) + r")\s+(day|week|month|year)s?\s+ago\b")
_MONTH = re.compile(
    r"\b(last\s+|this\s+|in\s+)?("
    + "|".join(sorted(MONTHS, key=len, reverse=True))
    + r")\b(?:\s*,?\s*(\d{4}))?"
)
_YEAR = re.compile(r"\b(?:in|during|of|since)\s+(\d{4})\b")
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
# "May 3, 2023", "3 May 2023", "3rd of May, 2023", "2023-05-03"
_DATES = (
    re.compile(rf"\b({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b"),
    re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_NAMES})\.?,?\s+(\d{{4}})\b"),
    re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"),
)
# A day named in a question is often the day after the telling ("last night", "yesterday").
DAY_BEFORE, DAYS_AFTER = timedelta(days=1), timedelta(days=2)

Window = tuple[datetime, datetime, str]


def _month_window(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def _dates(q: str, found: list[Window]) -> str:
    """Add a window for each calendar date in `q`; returns `q` with the dates blanked out (so a
    date is not also read as its whole month)."""
    for n, pattern in enumerate(_DATES):
        for m in pattern.finditer(q):
            if n == 0:
                month, day, year = MONTHS[m.group(1)], int(m.group(2)), int(m.group(3))
            elif n == 1:
                day, month, year = int(m.group(1)), MONTHS[m.group(2)], int(m.group(3))
            else:
                year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
            try:
                date = datetime(year, month, day, tzinfo=UTC)
            except ValueError:
                continue  # "February 30": not a date
            found.append((date - DAY_BEFORE, date + DAYS_AFTER, m.group(0)))
        q = pattern.sub(" ", q)
    return q


def windows(query: str, now: datetime) -> list[Window]:
    """The time windows a query names, each with the words that named it."""
    q = query.lower()
    found: list[Window] = []
    q = _dates(q, found)
    for m in _AGO.finditer(q):
        n = int(m.group(1)) if m.group(1).isdigit() else NUMBERS[m.group(1)]
        days = n * UNITS[m.group(2)]
        centre = now - timedelta(days=days)
        slack = timedelta(days=max(days // 4, 2))
        found.append((centre - slack, centre + slack, m.group(0)))
    for word, days in (
        ("yesterday", 1),
        ("last week", 7),
        ("last month", 30),
        ("last year", 365),
        ("today", 0),
    ):
        if word in q:
            found.append(
                (
                    now - timedelta(days=days + (1 if days else 0) + days // 2),
                    now - timedelta(days=max(days - days // 2 - 1, 0)) + timedelta(days=1),
                    word,
                )
            )
    for m in _MONTH.finditer(q):
        if m.group(2) == "may" and not (m.group(1) or m.group(3)):
            continue  # "may" is usually the verb
        month = MONTHS[m.group(2)]
        year = int(m.group(3)) if m.group(3) else now.year
        if not m.group(3) and (m.group(1) or "").strip() in ("last", "") and month >= now.month:
            year -= 1  # "last May" (or a bare month) is the most recent one before now
        start, end = _month_window(year, month)
        found.append((start, end, m.group(0).strip()))
    for m in _YEAR.finditer(q):
        year = int(m.group(1))
        if 1900 < year < 2200:
            found.append(
                (datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC), m.group(0))
            )
    return found
