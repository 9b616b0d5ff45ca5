"""The nightly cycle through a real Celery worker (subprocess, real Redis) and beat's schedule."""

from __future__ import annotations

import datetime as dt
import time
import uuid

import pytest
from celery import beat
from django.conf import settings as django_settings

from config.celery import app
from memory.models import Episode
from tests.factories import PairFactory
from tests.nightly_helpers import DAY, a_day_of_activity
from tutorbrain.models import CalibrationSnapshot, NightlyRun
from tutorbrain.nightly.cycle import CRASH_AFTER_STEP_ENV, CRASH_EXIT_CODE
from tutorbrain.nightly.rules import STEPS

WAIT_SECONDS = 90


def _wait_for(predicate, what: str, worker=None):
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if predicate():
            return
        if worker is not None and worker.process.poll() is not None:
            break
        time.sleep(0.2)
    output = ""
    if worker is not None and worker.process.poll() is not None:
        output = worker.process.stdout.read()
    raise AssertionError(f"timed out waiting for {what}\n{output}")


# --- beat ----------------------------------------------------------------------------------


def test_the_beat_schedule_has_the_nightly_entry_at_the_configured_time():
    entry = app.conf.beat_schedule["nightly-cycle"]

    assert entry["task"] == "tutorbrain.tasks.nightly_fan_out"
    assert entry["schedule"].hour == {django_settings.TUTORBRAIN_NIGHTLY_HOUR}
    assert entry["schedule"].minute == {django_settings.TUTORBRAIN_NIGHTLY_MINUTE}
    app.loader.import_default_modules()
    assert "tutorbrain.tasks.nightly_fan_out" in app.tasks
    assert "tutorbrain.tasks.nightly_pair" in app.tasks


def test_beat_finds_the_nightly_entry_due_at_its_time_and_not_a_minute_before():
    hour, minute = (
        django_settings.TUTORBRAIN_NIGHTLY_HOUR,
        django_settings.TUTORBRAIN_NIGHTLY_MINUTE,
    )
    tz = app.timezone
    last_run = dt.datetime.combine(DAY, dt.time(hour, minute), tzinfo=tz)
    next_run = last_run + dt.timedelta(days=1)
    clock = {"now": next_run - dt.timedelta(minutes=1)}
    schedule = app.conf.beat_schedule["nightly-cycle"]["schedule"]
    schedule = type(schedule)(
        minute=schedule._orig_minute,
        hour=schedule._orig_hour,
        day_of_week=schedule._orig_day_of_week,
        day_of_month=schedule._orig_day_of_month,
        month_of_year=schedule._orig_month_of_year,
        nowfun=lambda: clock["now"],
        app=app,
    )
    entry = beat.ScheduleEntry(
        name="nightly-cycle",
        task="tutorbrain.tasks.nightly_fan_out",
        schedule=schedule,
        last_run_at=last_run,
        app=app,
    )

    due, wait = entry.is_due()
    assert not due
    assert wait == pytest.approx(60, abs=1)
    assert schedule.remaining_estimate(last_run) == dt.timedelta(minutes=1)

    clock["now"] = next_run + dt.timedelta(seconds=1)
    due, wait = entry.is_due()
    assert due
    # Once run, the next run is a day later.
    assert wait == pytest.approx(24 * 3600 - 1, abs=1)


# --- the fan-out on a real worker ---------------------------------------------------------


def test_a_real_worker_runs_the_fan_out_for_several_pairs(celery_worker, organization):
    pairs = [
        PairFactory(student__organization=organization, subject__organization=organization)
        for _ in range(3)
    ]
    for p in pairs:
        a_day_of_activity(p)
    quiet = PairFactory(student__organization=organization, subject__organization=organization)

    result = app.send_task(
        "tutorbrain.tasks.nightly_fan_out",
        kwargs={"day": DAY.isoformat()},
        queue=celery_worker.queue,
    )
    assert result.get(timeout=WAIT_SECONDS) == {"day": DAY.isoformat(), "enqueued": 3}
    _wait_for(
        lambda: NightlyRun.objects.filter(day=DAY, status="done").count() == 3,
        "three done runs",
        celery_worker,
    )

    for p in pairs:
        assert Episode.objects.filter(pair=p, kind="consolidation").count() == 1
        assert NightlyRun.objects.get(pair=p, day=DAY).steps_done == list(STEPS)
    assert not NightlyRun.objects.filter(pair=quiet).exists()
    assert CalibrationSnapshot.objects.filter(pair__isnull=True, day=DAY).count() == 1

    # The same night again: nothing left to do, nothing written.
    again = app.send_task(
        "tutorbrain.tasks.nightly_fan_out",
        kwargs={"day": DAY.isoformat()},
        queue=celery_worker.queue,
    )
    assert again.get(timeout=WAIT_SECONDS)["enqueued"] == 0
    assert Episode.objects.filter(kind="consolidation").count() == 3


def test_a_worker_killed_mid_pair_leaves_no_half_state_and_the_rerun_completes(
    transactional_db, organization, monkeypatch
):
    from django.db import connection

    from tests.conftest import CeleryWorker

    pair = PairFactory(student__organization=organization, subject__organization=organization)
    a_day_of_activity(pair)
    database = connection.settings_dict["NAME"]
    previous = (app.conf.task_always_eager, app.conf.task_default_queue)
    app.conf.task_always_eager = False

    # A worker that dies (os._exit) right after the first step of the pair commits.
    monkeypatch.setenv(CRASH_AFTER_STEP_ENV, STEPS[0])
    # Unique per run: a queue named after the pair id would meet the unacknowledged
    # message of an earlier run's doomed worker (same id in a recreated test database).
    doomed = CeleryWorker(database, f"test-nightly-doomed-{uuid.uuid4().hex[:10]}")
    try:
        doomed.wait_ready(app)
        app.send_task(
            "tutorbrain.tasks.nightly_pair", args=[pair.pk, DAY.isoformat()], queue=doomed.queue
        )
        doomed.process.wait(timeout=WAIT_SECONDS)
        assert doomed.process.returncode == CRASH_EXIT_CODE
    finally:
        doomed.stop()

    run = NightlyRun.objects.get(pair=pair, day=DAY)
    assert run.status == NightlyRun.Status.RUNNING
    assert run.steps_done == [STEPS[0]]
    assert Episode.objects.filter(pair=pair, kind="consolidation").count() == 1
    assert not CalibrationSnapshot.objects.filter(pair=pair).exists()

    # A normal worker picks the pair up again: the lock died with the killed worker's
    # connection, the done step is skipped, the rest completes.
    monkeypatch.delenv(CRASH_AFTER_STEP_ENV)
    healthy = CeleryWorker(database, f"test-nightly-healthy-{uuid.uuid4().hex[:10]}")
    try:
        healthy.wait_ready(app)
        result = app.send_task(
            "tutorbrain.tasks.nightly_pair", args=[pair.pk, DAY.isoformat()], queue=healthy.queue
        )
        assert result.get(timeout=WAIT_SECONDS)["status"] == "done"
    finally:
        healthy.stop()
        app.conf.task_always_eager, app.conf.task_default_queue = previous

    run.refresh_from_db()
    assert run.status == NightlyRun.Status.DONE
    assert run.steps_done == list(STEPS)
    assert run.attempts == 2
    assert Episode.objects.filter(pair=pair, kind="consolidation").count() == 1
    assert CalibrationSnapshot.objects.filter(pair=pair).count() == 1
