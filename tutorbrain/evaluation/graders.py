"""Graders of the benchmark and the scenarios: id and string comparisons only (R-8.2).

A grader looks at what reached the prompt — the text, and the ids of the episodes that
were recalled into it (each with when it happened) — and at what was expected, written
down before any design ran. The same prompt always scores the same: nothing here calls a
model, ranks, or judges wording. Text is compared after `tutorbrain.language.normalize`
(case, accents, Arabic letter variants), so the comparison is about *which* words, not
their typography.

Each grader returns a `Grade` that says what was expected and what the prompt held, so
a report can list every failure with both (R-8.3).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

from tutorbrain.language import all_month_names, normalized_phrase

# The block's explicit lines, as SPEC write them. Matching is on normalised
# text, so "No record of work with this student in July 2026." matches in any case.
NO_RECORD_PATTERN = re.compile(
    r"no record of work with this student in (?P<month>[^\W\d_]+(?: [^\W\d_]+)?) (?P<year>\d{4})"
)
BUILDS_ON_PATTERN = re.compile(r"^\s*-\s*(?P<name>[^:\n]+?):.*\(builds on: (?P<names>[^)]*)\)")
STRUGGLES_PREFIX = "struggles with "
# An episode line of the block: "- 12 Jul · student: …".
DATED_LINE_PATTERN = re.compile(
    r"^\s*-\s*(?P<day>\d{1,2}) (?P<month>[^\W\d_]+)\.? (?:(?P<year>\d{4}) )?·"
)
HELD_EXCERPT_CHARS = 400


@dataclass(frozen=True)
class Recalled:
    id: int
    occurred_at: datetime


@dataclass(frozen=True)
class Shown:
    """What reached the prompt under one design."""

    text: str
    recalled: tuple[Recalled, ...] = ()

    @property
    def recalled_ids(self) -> set[int]:
        return {r.id for r in self.recalled}


@dataclass(frozen=True)
class Grade:
    passed: bool
    expected: str
    held: str
    details: dict[str, Any] = field(default_factory=dict)


def _norm(text: str) -> str:
    return normalized_phrase(text)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@cache
def _month_number(name: str) -> int | None:
    return all_month_names().get(_norm(name))


def no_record_months(text: str) -> set[tuple[int, int]]:
    """(year, month) of every explicit no-record line in the text."""
    found = set()
    for line in _lines(text):
        # normalized_phrase drops punctuation; keep the line's own words in order.
        match = NO_RECORD_PATTERN.search(_norm(line))
        if match:
            number = _month_number(match.group("month"))
            if number:
                found.add((int(match.group("year")), number))
    return found


@cache
def _date_month_names() -> dict[str, int]:
    """Month names as dates in episode lines write them ("12 Jul"): wide and abbreviated,
    every student language, from CLDR. Unlike the message parser, short abbreviations are
    kept: here they sit after a day number, where they cannot be ordinary words."""
    from babel.dates import get_month_names

    from tutorbrain.language import languages

    out: dict[str, int] = {}
    for code in languages():
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                for number, name in get_month_names(width, context=context, locale=code).items():
                    out.setdefault(_norm(name.rstrip(".")), number)
    return out


def dated_lines(text: str) -> list[tuple[int | None, int, str]]:
    """(year or None, month, line) for every episode line that starts with a date."""
    out = []
    for line in _lines(text):
        match = DATED_LINE_PATTERN.match(line)
        if not match:
            continue
        number = _date_month_names().get(_norm(match.group("month")))
        if number:
            year = int(match.group("year")) if match.group("year") else None
            out.append((year, number, line))
    return out


def builds_on_of(text: str, concept: str) -> list[list[str]]:
    """The builds-on lists stated for `concept` by map lines "- X: … (builds on: A, B)"."""
    key = _norm(concept)
    out = []
    for line in _lines(text):
        match = BUILDS_ON_PATTERN.match(line)
        if match and _norm(match.group("name")) == key:
            out.append([_norm(n) for n in match.group("names").split(",") if n.strip()])
    return out


def _excerpt(text: str) -> str:
    flat = " | ".join(line.strip() for line in _lines(text))
    return flat if len(flat) <= HELD_EXCERPT_CHARS else flat[: HELD_EXCERPT_CHARS - 1] + "…"


def _in_month(moment: datetime, year: int, month: int) -> bool:
    return moment.year == year and moment.month == month


# ---- the six categories ------------------------------------------------------------------


def grade_wrong(shown: Shown, *, concept: str, episode_ids: Sequence[int]) -> Grade:
    """What the student got wrong: a wrong check on the concept was recalled into the
    prompt (by id), or a belief line says the student struggles with it."""
    recalled = sorted(shown.recalled_ids & set(episode_ids))
    # "- struggles with Osmosis (0.72)": the name must end where the confidence starts, so
    # "struggles with Cell membrane" is not read as a belief about "Cell".
    pattern = re.compile(rf"(?:^| ){re.escape(_norm(STRUGGLES_PREFIX + concept))}(?: \d|$)")
    belief = any(pattern.search(_norm(line)) for line in _lines(shown.text))
    passed = bool(recalled) or belief
    # What the prompt said about the record: its belief lines and its check lines.
    record = [
        line.strip()
        for line in _lines(shown.text)
        if STRUGGLES_PREFIX in line or "understands " in line or " check: " in line
    ]
    return Grade(
        passed=passed,
        expected=f"a wrong check on {concept!r} (one of ids {sorted(episode_ids)}) "
        f"or the line 'struggles with {concept}'",
        held=f"recalled ids {sorted(shown.recalled_ids)}; beliefs and checks: "
        f"{_excerpt(chr(10).join(record)) or 'none'}",
        details={"matching_ids": recalled, "belief_line": belief},
    )


def grade_prerequisites(shown: Shown, *, concept: str, prerequisites: Sequence[str]) -> Grade:
    """What to review before X = X's prerequisites, stated for X in the right direction:
    a line for X saying it builds on every one of them. A line for a prerequisite saying
    it builds on X (the edge reversed) does not count."""
    wanted = {_norm(p) for p in prerequisites}
    stated = builds_on_of(shown.text, concept)
    passed = any(wanted <= set(names) for names in stated)
    return Grade(
        passed=passed,
        expected=f"{concept} builds on {sorted(prerequisites)}",
        held=f"builds-on stated for {concept}: {stated or 'none'}",
        details={"stated": stated},
    )


def grade_explain(shown: Shown, *, concept: str, definitions: Iterable[str]) -> Grade:
    """Explain X: one of X's definitions (from the map or the file) is in the prompt."""
    text = _norm(shown.text)
    options = [d for d in definitions if d and d.strip()]
    hit = next((d for d in options if _norm(d) and _norm(d) in text), None)
    return Grade(
        passed=hit is not None,
        expected=f"a definition of {concept}: {options[0] if options else '(none known)'}",
        held=_excerpt(shown.text),
        details={"matched": hit},
    )


def grade_active_month(shown: Shown, *, year: int, month: int) -> Grade:
    """A month the student was active: the prompt must not claim there is no record.

    Every design passes this when it says nothing false: the category cannot tell designs
    apart (as in the original system, 44/44 for all). `listed` records, for information,
    whether an episode of that month actually reached the prompt.
    """
    denied = (year, month) in no_record_months(shown.text)
    listed = any(_in_month(r.occurred_at, year, month) for r in shown.recalled)
    return Grade(
        passed=not denied,
        expected=f"no 'no record' line for {year}-{month:02d}",
        held=("a no-record line for that month" if denied else "no denial")
        + f"; episodes of that month listed: {listed}",
        details={"listed": listed},
    )


def grade_empty_month(shown: Shown, *, year: int, month: int) -> Grade:
    """An empty month: the explicit no-record line for it, and no session from it."""
    said = (year, month) in no_record_months(shown.text)
    from_month = [r.id for r in shown.recalled if _in_month(r.occurred_at, year, month)]
    dated = [
        line for (y, m, line) in dated_lines(shown.text) if m == month and (y is None or y == year)
    ]
    passed = said and not from_month and not dated
    return Grade(
        passed=passed,
        expected=f"'No record of work with this student in {year}-{month:02d}' and no session from it",
        held=f"no-record line: {said}; recalled from that month: {from_month}; "
        f"dated lines in that month: {dated[:3]}",
        details={"said": said, "from_month": from_month, "dated": dated},
    )


def grade_recall(shown: Shown, *, episode_ids: Sequence[int]) -> Grade:
    """Recall of a past exchange: the exchange's question or answer was recalled (by id)."""
    hit = sorted(shown.recalled_ids & set(episode_ids))
    return Grade(
        passed=bool(hit),
        expected=f"one of the exchange's episodes {sorted(episode_ids)}",
        held=f"recalled ids {sorted(shown.recalled_ids)}",
        details={"matching_ids": hit},
    )


CATEGORIES = ("wrong", "prerequisites", "explain", "active_month", "empty_month", "recall")


def grade(category: str, shown: Shown, expected: dict[str, Any]) -> Grade:
    """Dispatch on the category with the question's pre-registered expectation."""
    if category == "wrong":
        return grade_wrong(shown, concept=expected["concept"], episode_ids=expected["episode_ids"])
    if category == "prerequisites":
        return grade_prerequisites(
            shown, concept=expected["concept"], prerequisites=expected["prerequisites"]
        )
    if category == "explain":
        return grade_explain(
            shown, concept=expected["concept"], definitions=expected["definitions"]
        )
    if category == "active_month":
        return grade_active_month(shown, year=expected["year"], month=expected["month"])
    if category == "empty_month":
        return grade_empty_month(shown, year=expected["year"], month=expected["month"])
    if category == "recall":
        return grade_recall(shown, episode_ids=expected["episode_ids"])
    raise ValueError(f"unknown category {category!r}")
