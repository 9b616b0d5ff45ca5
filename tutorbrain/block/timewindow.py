"""Time windows in a student's message (R-5.5): "July", "yesterday", "last week", ...

Month names and relative dates come from CLDR through `tutorbrain.language` (never typed
here), in the message's own language only (`language.detect`, falling back to the
subject's language): "Mai" is a month in French, not in an English message about a
person called Mai. Dates are interpreted in the student's time zone; the window is
returned as a half-open UTC interval [start, end).

The rules, in order (docs/memory-block.md, "Time windows"):
- A month name that is part of a proper name opens nothing: "Rio de Janeiro", "Avenue de
  Mai", "Mayo Clinic", "Julio me explicó…" (see `_reads_as_month`).
- An explicit month wins over a relative phrase: "the last week of October 2023" is the
  last seven days of October 2023, "last week, as mentioned on 6 November 2023" is
  anchored on 6 November 2023 (from the start of the week before it to the end of that
  day: a past event is usually told on the day the message names), and any other month
  with a relative phrase is that month.
- A month with a year is that year; without one it is the most recent such month that
  is not in the future: in September, "July" is this year's July; in March, last year's.
- Otherwise a relative phrase ("yesterday", "la semana pasada") is anchored on `now`.
The caller ignores a window that starts after `now` (and the block says so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cache, lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tutorbrain import language

YEAR_PATTERN = re.compile(r"^(19|20)\d\d$")
# Block text is English: labels use CLDR's English month names.
LABEL_LOCALE = "en"
# A token of the original message: letters, or digits (so "d'octobre" -> "d", "octobre"
# and "9th" -> "9", "th").
_TOKEN = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)


@dataclass(frozen=True)
class TimeWindow:
    start: datetime  # aware, inclusive
    end: datetime  # aware, exclusive
    label: str  # "July 2026", "14 July 2026", "the week of 6 July 2026"
    preposition: str  # "in" or "on": "No record of work with this student in July 2026."
    phrase: str  # the normalised words of the message that named it

    def after(self, now: datetime) -> bool:
        """Wholly after `now`: nothing can have happened in it yet, so it is ignored."""
        return self.start >= now

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


def _month_bounds(year: int, month: int) -> tuple[date, date]:
    start = date(year, month, 1)
    end = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return start, end


def _window(start: date, end: date, zone: ZoneInfo, label: str, preposition: str, phrase: str):
    return TimeWindow(
        start=_at_midnight(start, zone),
        end=_at_midnight(end, zone),
        label=label,
        preposition=preposition,
        phrase=phrase,
    )


def _month_window(year: int, month: int, zone: ZoneInfo, phrase: str) -> TimeWindow:
    start, end = _month_bounds(year, month)
    return _window(start, end, zone, f"{_month_name(month)} {year}", "in", phrase)


def _relative_window(unit: str, offset: int, today: date, zone: ZoneInfo, phrase: str):
    if unit == "day":
        day = today + timedelta(days=offset)
        return _window(day, day + timedelta(days=1), zone, _day_label(day), "on", phrase)
    if unit == "week":
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=offset)
        label = f"the week of {_day_label(monday)}"
        return _window(monday, monday + timedelta(days=7), zone, label, "in", phrase)
    if unit == "month":
        index = today.year * 12 + (today.month - 1) + offset
        return _month_window(index // 12, index % 12 + 1, zone, phrase)
    if unit == "year":
        year = today.year + offset
        return _window(date(year, 1, 1), date(year + 1, 1, 1), zone, str(year), "in", phrase)
    return None


# ---- reading the message -----------------------------------------------------------------


@dataclass(frozen=True)
class _Token:
    text: str  # as typed
    norm: str  # normalised (language.normalize)
    gap: str  # what stands between the previous token and this one


@lru_cache(maxsize=8192)
def _normalize_word(text: str) -> str:
    return language.normalize(text)


def _tokens(message: str) -> list[_Token]:
    out: list[_Token] = []
    last = 0
    for match in _TOKEN.finditer(message):
        text = match.group()
        out.append(_Token(text, _normalize_word(text), message[last : match.start()]))
        last = match.end()
    return out


@cache
def _words(key: str, code: str) -> frozenset[str]:
    return frozenset(language.normalized_phrase(w) for w in language.data(code).get(key, []))


@cache
def _calendar_words() -> frozenset[str]:
    """Month and weekday names of every language: a capitalised one is no name part."""
    from babel import Locale

    out: set[str] = set()
    for code in language.languages():
        out.update(language.month_names(code))
        for width in ("wide", "abbreviated"):
            names = Locale.parse(code).days["format"][width].values()
            out.update(language.normalize(n).rstrip(".") for n in names)
    return frozenset(out)


@cache
def _months_lowercase(code: str) -> bool:
    """Whether the language writes month names in lower case (es, pt, fr: "julio")."""
    from babel import Locale

    names = Locale.parse(code).months["format"]["wide"].values()
    return all(n == n.lower() for n in names)


def _is_capitalised(token: _Token) -> bool:
    return token.text[:1].isupper()


def _joined(token: _Token) -> bool:
    """No punctuation between this token and the previous one: same phrase."""
    return not token.gap.strip()


def _name_word(token: _Token, *, initial: bool, code: str) -> bool:
    """A capitalised word that reads as part of a proper name, not a calendar word."""
    if not _is_capitalised(token) or token.norm.isdigit() or token.text == "I":
        return False
    if token.norm in _calendar_words():
        return False
    # A sentence-initial "In", "En", "Qu" is capitalised because it starts the sentence.
    plain = token.norm in _words("detection_words", code) or token.norm in _words(
        "month_context_words", code
    )
    return not (initial and plain)


def _sentence_initial(tokens: list[_Token], i: int) -> bool:
    return i == 0 or bool(re.search(r"[.!?¿¡:;\n\"“«(]", tokens[i].gap))


def _reads_as_month(tokens: list[_Token], i: int, code: str, *, all_caps: bool) -> bool:
    """Whether the month name at `i` is a date rather than a word or part of a name."""
    token = tokens[i]
    before = tokens[i - 1] if i > 0 and _joined(token) else None
    after = tokens[i + 1] if i + 1 < len(tokens) and _joined(tokens[i + 1]) else None
    in_context = before is not None and before.norm in _words("month_context_words", code)
    numbered = (after is not None and after.norm.isdigit()) or (
        _day_before(tokens, i, _words("date_joiners", code)) is not None
    )
    if token.norm in _words("ambiguous_month_words", code) and not (in_context or numbered):
        return False  # "May I ask", "la planète Mars"
    if all_caps or not _is_capitalised(token):
        return True  # case says nothing (Arabic, "QUE VIMOS EN JULIO") or a plain month
    # Capitalised: part of a multi-word name? Look back over connectors ("Rio de Janeiro",
    # "Avenue de Mai", "Primeiro de Maio") and forward ("Mayo Clinic", "Julio César").
    connectors = language.cue_set("name_connectors")
    j = i - 1
    while j >= 0 and _joined(tokens[j + 1]) and tokens[j].norm in connectors:
        j -= 1
    joined_before = j >= 0 and _joined(tokens[j + 1])
    if joined_before and _name_word(tokens[j], initial=_sentence_initial(tokens, j), code=code):
        return False
    if not in_context and after is not None and _name_word(after, initial=False, code=code):
        return False
    # Languages that write months in lower case: a capitalised one is a month only when
    # a number or a plain context word ("en Julio", not the "de" of "avenue de Mai") says
    # so; otherwise it is a name ("Julio me explicó la ósmosis").
    if _months_lowercase(code) and not numbered:
        return in_context and before is not None and before.norm not in connectors
    return True


@dataclass(frozen=True)
class _MonthMention:
    index: int  # token index of the month name
    month: int
    year: int | None
    day: int | None
    last_week: bool  # "the last week of October"


def _day_before(tokens: list[_Token], i: int, joiners: frozenset[str]) -> int | None:
    """The day number written before the month: "9 June", "9th of June", "9 de junio"."""
    j = i - 1
    while j >= 0 and tokens[j].norm in joiners:
        j -= 1
    if j >= 0 and tokens[j].norm.isdigit() and 1 <= int(tokens[j].norm) <= 31:
        return int(tokens[j].norm)
    return None


def _month_mentions(tokens: list[_Token], code: str) -> list[_MonthMention]:
    months = language.month_names(code)
    joiners = _words("date_joiners", code)
    all_caps = not any(c.islower() for t in tokens for c in t.text)
    out: list[_MonthMention] = []
    for i, token in enumerate(tokens):
        month = months.get(token.norm)
        if month is None or not _reads_as_month(tokens, i, code, all_caps=all_caps):
            continue
        year = day = None
        # After the month: "June 9, 2023", "October 2023", "junio de 2023", "June 9th".
        for t in tokens[i + 1 : i + 5]:
            if YEAR_PATTERN.match(t.norm):
                year = int(t.norm)
                break
            if t.norm.isdigit() and day is None and 1 <= int(t.norm) <= 31:
                day = int(t.norm)
            elif t.norm not in joiners:
                break
        if day is None:
            day = _day_before(tokens, i, joiners)
        before = " " + " ".join(t.norm for t in tokens[:i])
        last_week = any(before.endswith(f" {cue}") for cue in _words("last_week_of_month", code))
        out.append(_MonthMention(i, month, year, day, last_week))
    return out


def _relative_phrase(text: str, code: str) -> tuple[str, str, int] | None:
    padded = f" {text} "
    for phrase, unit, offset in language.relative_phrases(code):
        if f" {phrase} " in padded:
            return phrase, unit, offset
    return None


@dataclass(frozen=True)
class _Reading:
    code: str  # the language the message is read in
    tokens: tuple[_Token, ...]
    mentions: tuple[_MonthMention, ...]
    relative: tuple[str, str, int] | None


@lru_cache(maxsize=64)
def _read(message: str, fallback_language: str) -> _Reading:
    """What the message says about time, independent of `now` (a build reads it twice)."""
    code = language.detect(message, fallback=fallback_language)
    tokens = _tokens(message)
    return _Reading(
        code=code,
        tokens=tuple(tokens),
        mentions=tuple(_month_mentions(tokens, code)),
        relative=_relative_phrase(language.normalized_phrase(message), code),
    )


@cache
def _relative_words(code: str) -> frozenset[str]:
    return frozenset(w for phrase, _, _ in language.relative_phrases(code) for w in phrase.split())


def time_words(message: str, *, fallback_language: str = "en") -> frozenset[str]:
    """The normalised words that name the message's time: never topic words.

    The months read as months, and every word of the language's relative-date phrases
    ("week" in "the second week of November" says when, not what about).
    """
    if not message:
        return frozenset()
    reading = _read(message, fallback_language)
    months = {reading.tokens[m.index].norm for m in reading.mentions}
    return frozenset(months) | _relative_words(reading.code)


def parse_time_window(
    message: str, *, now: datetime, timezone_name: str, fallback_language: str = "en"
) -> TimeWindow | None:
    """The window a message names, or None (see the module docstring for the rules).

    `fallback_language` is the language the message is read in when its own is unclear
    (the subject's). A window that cannot be represented (year 1, year 9999) is None.
    """
    if not message:
        return None
    zone = student_zone(timezone_name)
    try:
        return _parse(message, now=now, zone=zone, fallback_language=fallback_language)
    except (ValueError, OverflowError):
        return None  # a date before year 1 or after 9999: no window, not a 500


def _anchor_day(year: int, mention: _MonthMention) -> date | None:
    try:
        return date(year, mention.month, mention.day) if mention.day else None
    except ValueError:
        return None  # "31 June": read as the month


def _parse(message: str, *, now: datetime, zone: ZoneInfo, fallback_language: str):
    today = now.astimezone(zone).date()
    reading = _read(message, fallback_language)
    tokens, mentions, relative = reading.tokens, reading.mentions, reading.relative
    window: TimeWindow | None = None
    if mentions:
        mention = mentions[0]
        word = tokens[mention.index].norm
        year = mention.year
        if year is None:
            year = today.year if mention.month <= today.month else today.year - 1
        end = _month_bounds(year, mention.month)[1]
        anchor = _anchor_day(year, mention)
        if mention.last_week:
            label = f"the last week of {_month_name(mention.month)} {year}"
            window = _window(end - timedelta(days=7), end, zone, label, "in", word)
        elif anchor is not None and relative is not None and relative[2] < 0:
            # "the week before 9 June 2023", "last week, as mentioned on 6 November 2023":
            # from the start of that period, counted from the stated day, to the end of
            # the day itself (what happened is often told on the day the message names).
            phrase, unit, offset = relative
            first = _relative_window(unit, offset, anchor, zone, phrase).start.date()
            label = f"{_day_label(first)} to {_day_label(anchor)}"
            window = _window(first, anchor + timedelta(days=1), zone, label, "from", phrase)
        else:
            window = _month_window(year, mention.month, zone, word)
    elif relative is not None:
        window = _relative_window(relative[1], relative[2], today, zone, relative[0])
    if window is not None:
        # Must convert to UTC for the database (raises for year 1 in a zone east of UTC).
        window.start.astimezone(UTC)
        window.end.astimezone(UTC)
    return window
