"""Shared fixtures-as-functions for the beliefs tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from concepts.models import Concept
from concepts.selectors import concept_key
from memory.services import episode_append

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def make_concept(subject, name: str) -> Concept:
    return Concept.objects.create(subject=subject, name=name, key=concept_key(name))


def append_check(
    pair,
    *,
    topic: str,
    verdict: str,
    at: datetime | None = None,
    assessment: str = "",
    summary: str | None = None,
):
    """Append one check through the real service (hash chain, index), no embedding."""
    return episode_append(
        pair=pair,
        kind="check",
        summary=summary or f"check: {topic}"[:300],
        topic=topic,
        verdict=verdict,
        assessment=assessment,
        occurred_at=at or T0,
        now=at or T0,
        embed=False,
    )


def days(n: float) -> timedelta:
    return timedelta(days=n)
