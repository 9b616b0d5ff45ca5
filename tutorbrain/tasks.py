"""Celery tasks of the nightly cycle (R-7). Tasks take ids and call the cycle; no logic.

`nightly_fan_out` is the beat entry (CELERY_BEAT_SCHEDULE["nightly-cycle"] in
config/settings.py): it finds the pairs of the night and sends one `nightly_pair` task
each. `nightly_pair` is idempotent (NightlyRun unique per pair and day, claimed by a
conditional update) and retried with exponential backoff on transient database errors.
"""

from __future__ import annotations

import datetime as dt

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from tutorbrain.nightly import cycle, services


def _day(value: str | None) -> dt.date:
    return services.day_before(timezone.now()) if not value else dt.date.fromisoformat(value)


@shared_task(
    name="tutorbrain.tasks.nightly_fan_out",
    soft_time_limit=settings.TUTORBRAIN_NIGHTLY_FAN_OUT_SOFT_TIME_LIMIT,
    time_limit=settings.TUTORBRAIN_NIGHTLY_FAN_OUT_SOFT_TIME_LIMIT + 60,
    autoretry_for=cycle.TRANSIENT_ERRORS,
    retry_backoff=True,
    retry_backoff_max=settings.TUTORBRAIN_NIGHTLY_RETRY_BACKOFF_MAX,
    retry_jitter=True,
    max_retries=settings.TUTORBRAIN_NIGHTLY_MAX_RETRIES,
)
def nightly_fan_out(day: str | None = None) -> dict:
    """Fan the night out: one `nightly_pair` task per pair active on `day` (default yesterday)."""
    the_day = _day(day)

    def enqueue(pair_id: int, d: dt.date) -> None:
        nightly_pair.apply_async(args=[pair_id, d.isoformat()])

    result = cycle.night_run(day=the_day, enqueue=enqueue)
    return {"day": the_day.isoformat(), "enqueued": result.enqueued}


@shared_task(
    bind=True,
    name="tutorbrain.tasks.nightly_pair",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.TUTORBRAIN_NIGHTLY_PAIR_SOFT_TIME_LIMIT,
    time_limit=settings.TUTORBRAIN_NIGHTLY_PAIR_SOFT_TIME_LIMIT + 30,
    autoretry_for=cycle.TRANSIENT_ERRORS,
    retry_backoff=True,
    retry_backoff_max=settings.TUTORBRAIN_NIGHTLY_RETRY_BACKOFF_MAX,
    retry_jitter=True,
    max_retries=settings.TUTORBRAIN_NIGHTLY_MAX_RETRIES,
)
def nightly_pair(self, pair_id: int, day: str) -> dict:
    """One pair's cycle for one day (a no-op when that run is already done)."""
    outcome = cycle.pair_cycle_run(
        pair_id=pair_id, day=dt.date.fromisoformat(day), token=self.request.id or ""
    )
    return {"pair_id": pair_id, "day": day, "status": outcome.status}
