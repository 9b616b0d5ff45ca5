"""Time windows in a student's message (R-5.5): "July", "yesterday", "last week", ...

Month names and relative dates come from CLDR through `tutorbrain.language` (never typed
here), in every student language. Dates are interpreted in the student's time zone;
the window is returned as a half-open UTC interval [start, end).

A month without a year is the most recent such month that is not in the future: in
September, "July" is this year's July; in March, "July" is last year's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tutorbrain import language

YEAR_PATTERN = re.compile(r"^(19|20)\d\d$")
# Block text is English: labels use CLDR's English month names.
LABEL_LOCALE = "en"


@dataclass(frozen=True)
class TimeWindow:
    start: datetime  # aware, inclusive
    end: datetime  # aware, exclusive
    label: str  # "July 2026", "14 July 2026", "the week of 6 July 2026"
    preposition: str  # "in" or "on": "No record of work with this student in July 2026."
    phrase: str  # the normalised words of the message that named it

    def as_dict(self) -> dict:
        return {
            "start": self.start,
            "end": self.end,
            "label": self.label,
            "phrase": self.phrase,
        }


def student_zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def _month_name(month: int) -> str:
    from babel import Locale

    return Locale.parse(LABEL_LOCALE).months["format"]["wide"][month]


def _day_label(day: date) -> str:
    return f"{day.day} {_month_name(day.month)} {day.year}"


def _at_midnight(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time.min, tzinfo=zone)


def _month_window(year: int, month: int, zone: ZoneInfo, phrase: str) -> TimeWindow:
    start = date(year, month, 1)
    end = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return TimeWindow(
        start=_at_midnight(start, zone),
        end=_at_midnight(end, zone),
        label=f"{_month_name(month)} {year}",
        preposition="in",
        phrase=phrase,
    )


def _relative_window(unit: str, offset: int, today: date, zone: ZoneInfo, phrase: str):
    if unit == "day":
        day = today + timedelta(days=offset)
        return TimeWindow(
            start=_at_midnight(day, zone),
            end=_at_midnight(day + timedelta(days=1), zone),
            label=_day_label(day),
            preposition="on",
            phrase=phrase,
        )
    if unit == "week":
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=offset)
        return TimeWindow(
            start=_at_midnight(monday, zone),
            end=_at_midnight(monday + timedelta(days=7), zone),
            label=f"the week of {_day_label(monday)}",
            preposition="in",
            phrase=phrase,
        )
    if unit == "month":
        index = today.year * 12 + (today.month - 1) + offset
        return _month_window(index // 12, index % 12 + 1, zone, phrase)
    if unit == "year":
        year = today.year + offset
        return TimeWindow(
            start=_at_midnight(date(year, 1, 1), zone),
            end=_at_midnight(date(year + 1, 1, 1), zone),
            label=str(year),
            preposition="in",
            phrase=phrase,
        )
    return None


def _month_in(words: list[str]) -> tuple[int, int, str] | None:
    """(month, word index, word) of the first month name that reads as a month."""
    months = language.all_month_names()
    ambiguous = language.cue_set("ambiguous_month_words")
    context = language.cue_set("month_context_words")
    for i, word in enumerate(words):
        number = months.get(word)
        if number is None:
            continue
        if word in ambiguous:
            before = words[i - 1] if i > 0 else ""
            after = words[i + 1] if i + 1 < len(words) else ""
            if before not in context and not after.isdigit():
                continue
        return number, i, word
    return None


def parse_time_window(message: str, *, now: datetime, timezone_name: str) -> TimeWindow | None:
    """The window a message names, or None. Relative phrases win over month names."""
    if not message:
        return None
    zone = student_zone(timezone_name)
    today = now.astimezone(zone).date()
    text = language.normalized_phrase(message)
    padded = f" {text} "
    for code in language.languages():
        for phrase, unit, offset in language.relative_phrases(code):
            if f" {phrase} " in padded:
                return _relative_window(unit, offset, today, zone, phrase)
    words = text.split(" ")
    found = _month_in(words)
    if found is None:
        return None
    month, index, word = found
    year = None
    for candidate in words[index + 1 : index + 3]:
        if YEAR_PATTERN.match(candidate):
            year = int(candidate)
            break
    if year is None:
        year = today.year if month <= today.month else today.year - 1
    return _month_window(year, month, zone, word)
