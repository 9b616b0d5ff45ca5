"""The Celery app. Its settings, the beat schedule included, are in config/settings.py
(CELERY_* names), so there is one place to read them."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("tutorbrain")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="tutorbrain.ping")
def ping(value: str) -> str:
    """A trivial round trip, used by the health check's worker test."""
    return f"pong:{value}"
