from __future__ import annotations

import pytest

from config.celery import app, ping


@pytest.mark.celery_worker
def test_a_real_celery_worker_executes_a_task_and_returns_its_result(celery_worker):
    result = ping.apply_async(args=["hello"], queue=celery_worker.queue)
    assert result.get(timeout=30) == "pong:hello"
    assert celery_worker.process.poll() is None


def test_the_beat_schedule_holds_the_nightly_entry_at_the_configured_time(settings):
    entry = app.conf.beat_schedule["nightly-cycle"]
    assert entry["task"] == "tutorbrain.tasks.nightly_fan_out"
    schedule = entry["schedule"]
    assert schedule.hour == {settings.TUTORBRAIN_NIGHTLY_HOUR}
    assert schedule.minute == {settings.TUTORBRAIN_NIGHTLY_MINUTE}


def test_a_worker_process_freezes_what_its_start_up_loaded_out_of_the_collectors_sight():
    import gc

    from celery.signals import worker_process_init, worker_ready

    from config.celery import freeze_what_start_up_loaded

    # Connected where tasks run: each prefork child, and the main process of a solo pool.
    assert freeze_what_start_up_loaded in worker_process_init._live_receivers(None)
    assert freeze_what_start_up_loaded in worker_ready._live_receivers(None)
    gc.unfreeze()
    try:
        freeze_what_start_up_loaded()
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()
