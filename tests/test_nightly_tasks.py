from __future__ import annotations

import pytest
from django.conf import settings
from django.db import OperationalError

from config.celery import app
from memory.models import Episode
from tests.nightly_helpers import DAY, a_day_of_activity
from tutorbrain import tasks
from tutorbrain.models import NightlyRun
from tutorbrain.nightly import services
from tutorbrain.nightly.rules import STEPS

pytestmark = pytest.mark.django_db


def test_the_pair_task_retries_with_backoff_and_has_time_limits():
    task = tasks.nightly_pair

    assert OperationalError in task.autoretry_for
    assert task.retry_backoff is True
    assert task.max_retries == settings.TUTORBRAIN_NIGHTLY_MAX_RETRIES
    assert task.soft_time_limit == settings.TUTORBRAIN_NIGHTLY_PAIR_SOFT_TIME_LIMIT
    assert task.time_limit > task.soft_time_limit
    assert task.acks_late


def test_a_transient_database_error_is_retried_and_the_retry_completes_the_pair(pair, monkeypatch):
    a_day_of_activity(pair)
    real = services.calibration_snapshot_write
    calls = {"n": 0}

    def flaky(**kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real(**kwargs)

    monkeypatch.setattr(services, "calibration_snapshot_write", flaky)
    # Let the eager run take Celery's retry path instead of raising the first error.
    previous = app.conf.task_eager_propagates
    app.conf.task_eager_propagates = False
    try:
        result = tasks.nightly_pair.apply(args=[pair.pk, DAY.isoformat()]).get()
    finally:
        app.conf.task_eager_propagates = previous

    run = NightlyRun.objects.get(pair=pair, day=DAY)
    assert result["status"] == "done"
    assert run.status == NightlyRun.Status.DONE
    assert run.attempts == 2
    assert run.steps_done == list(STEPS)
    assert [f["step"] for f in run.failures] == ["calibrate"]
    assert Episode.objects.filter(pair=pair, kind="consolidation").count() == 1


def test_the_fan_out_task_defaults_to_yesterday_in_the_nightly_zone(pair, time_machine):
    a_day_of_activity(pair)
    time_machine.move_to("2026-03-11T02:30:00Z")

    result = tasks.nightly_fan_out.delay().get()

    assert result == {"day": DAY.isoformat(), "enqueued": 1}
    assert NightlyRun.objects.get(pair=pair).status == NightlyRun.Status.DONE
