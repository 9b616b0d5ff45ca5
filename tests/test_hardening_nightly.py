"""Day summaries are days of the student's time zone (issue 14): a Madrid student's
"Day 2026-10-15" was dated 16 Oct (the nightly zone's day, its last instant shown in
Madrid)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from memory.models import Episode
from memory.services import episode_append
from tests.factories import PairFactory
from tutorbrain.nightly import cycle

pytestmark = pytest.mark.django_db

UTC = dt.UTC
DAY = dt.date(2026, 10, 15)


def _at(zone: str, day: dt.date, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour, minute), tzinfo=ZoneInfo(zone))


def _question(pair, when: dt.datetime, summary: str):
    return episode_append(
        pair=pair, kind="question", summary=summary, occurred_at=when, now=when, embed=False
    )


def _notes(pair):
    return list(Episode.objects.filter(pair=pair, kind=Episode.Kind.CONSOLIDATION).order_by("seq"))


def test_a_madrid_students_day_summary_is_their_day_and_dated_on_it():
    pair = PairFactory(student__timezone="Europe/Madrid")
    _question(pair, _at("Europe/Madrid", DAY, 23, 30), "Late question on osmosis")
    _question(pair, _at("Europe/Madrid", DAY + dt.timedelta(days=1), 0, 30), "Just after midnight")

    assert pair.pk in cycle.active_pair_ids(day=DAY)
    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)
    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY + dt.timedelta(days=1), embed=False)

    first, second = _notes(pair)
    assert first.summary.startswith("Day 2026-10-15: 1 question")
    assert first.occurred_at.astimezone(ZoneInfo("Europe/Madrid")).date() == DAY
    assert second.summary.startswith("Day 2026-10-16: 1 question")
    assert second.occurred_at.astimezone(ZoneInfo("Europe/Madrid")).date() == DAY + dt.timedelta(
        days=1
    )


def test_a_student_west_of_the_nightly_zone_gets_their_evening_in_their_day():
    pair = PairFactory(student__timezone="America/Los_Angeles")
    # 20:00 in Los Angeles on the 15th is 03:00 UTC on the 16th.
    _question(pair, _at("America/Los_Angeles", DAY, 9, 0), "Morning question")
    _question(pair, _at("America/Los_Angeles", DAY, 20, 0), "Evening question")

    # The UTC cycle of the 15th ends at 17:00 in Los Angeles: their 15th is not over.
    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)
    assert _notes(pair) == []  # their 14th, quiet
    assert pair.pk in cycle.active_pair_ids(day=DAY + dt.timedelta(days=1))
    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY + dt.timedelta(days=1), embed=False)

    note = _notes(pair)[-1]
    assert note.summary.startswith("Day 2026-10-15: 2 questions")
    assert note.occurred_at.astimezone(ZoneInfo("America/Los_Angeles")).date() == DAY


def test_a_utc_students_day_is_unchanged():
    pair = PairFactory(student__timezone="UTC")
    _question(pair, dt.datetime(2026, 10, 15, 23, 30, tzinfo=UTC), "Late question")
    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)
    (note,) = _notes(pair)
    assert note.summary.startswith("Day 2026-10-15: 1 question")
    assert note.occurred_at == dt.datetime(2026, 10, 15, 23, 59, 59, 999999, tzinfo=UTC)
