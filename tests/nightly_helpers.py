"""Shared set-up of the nightly tests: a day of episodes through the real services."""

from __future__ import annotations

import datetime as dt

from memory.services import episode_append

DAY = dt.date(2026, 3, 10)
UTC = dt.UTC


def at(hour: int, minute: int = 0, day: dt.date = DAY) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour, minute), tzinfo=UTC)


def a_day_of_activity(pair, day: dt.date = DAY) -> list:
    """A question, an answer, a right and a wrong check on `day` (no embedding)."""
    now = at(23, 0, day)
    return [
        episode_append(
            pair=pair,
            kind="question",
            summary="Asked how to add fractions",
            occurred_at=at(9, 0, day),
            now=now,
            embed=False,
        ),
        episode_append(
            pair=pair,
            kind="answer",
            summary="Explained common denominators",
            occurred_at=at(9, 1, day),
            now=now,
            embed=False,
        ),
        episode_append(
            pair=pair,
            kind="check",
            summary="Added 1/2 + 1/3 correctly",
            topic="fractions",
            verdict="right",
            predicted_mastery=0.7,
            occurred_at=at(9, 5, day),
            now=now,
            embed=False,
        ),
        episode_append(
            pair=pair,
            kind="check",
            summary="Confused numerator and denominator",
            topic="fractions",
            verdict="wrong",
            predicted_mastery=0.6,
            occurred_at=at(9, 9, day),
            now=now,
            embed=False,
        ),
    ]
