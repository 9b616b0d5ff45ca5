"""The Celery app. Its settings, the beat schedule included, are in config/settings.py
(CELERY_* names), so there is one place to read them."""

from __future__ import annotations

import gc
import os

from celery import Celery
from celery.signals import worker_process_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("tutorbrain")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="tutorbrain.ping")
def ping(value: str) -> str:
    """A trivial round trip, used by the health check's worker test."""
    return f"pong:{value}"


@worker_ready.connect
@worker_process_init.connect
def freeze_what_start_up_loaded(**kwargs) -> None:
    """What a worker process holds once started (Django, Celery, every app's modules)
    lives as long as the process: frozen out of the garbage collector's sight, a full
    collection no longer walks it, as in the web workers (config/gunicorn.py). Unfrozen,
    one walked ~165,000 objects in ~80 ms, paid by whichever task triggered it: about one
    file reading in ten, late in a book. `worker_process_init` runs in each prefork child;
    `worker_ready` in the main process, where the solo and thread pools run tasks."""
    gc.freeze()
