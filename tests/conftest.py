from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pgtrigger
import pytest
from django.core.management.commands import flush
from rest_framework.test import APIClient

from memory.services import api_key_create
from tests.beliefs_helpers import append_check
from tests.factories import OrganizationFactory, PairFactory

ROOT = Path(__file__).resolve().parent.parent


def _truncate_trigger_uris() -> list[str]:
    return [
        f"{model._meta.label}:{trigger.name}"
        for model, trigger in pgtrigger.registered()
        if trigger.name.endswith("_no_truncate")
    ]


_flush_handle = flush.Command.handle


def _flush_past_the_truncate_triggers(self, *args, **options):
    """The append-only tables refuse TRUNCATE (memory.immutability.no_truncate); the
    test database is emptied by `flush` between transactional tests, so only there the
    triggers are ignored, for the flush's own statements."""
    with pgtrigger.ignore(*_truncate_trigger_uris()):
        return _flush_handle(self, *args, **options)


flush.Command.handle = _flush_past_the_truncate_triggers


@pytest.fixture
def organization(db):
    return OrganizationFactory()


@pytest.fixture
def api_key(organization):
    _, raw = api_key_create(organization=organization, name="test")
    return raw


@pytest.fixture
def api(api_key):
    """An API client authenticated with the organization's key."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {api_key}")
    return client


@pytest.fixture
def setup(transactional_db):
    """A committed pair (student in Madrid's zone) and an API client with its key."""
    pair = PairFactory(student__timezone="Europe/Madrid")
    _, raw = api_key_create(organization=pair.subject.organization, name="t")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw}")
    return pair, client


@pytest.fixture
def pair(organization):
    return PairFactory(student__organization=organization, subject__organization=organization)


@pytest.fixture
def derive(django_capture_on_commit_callbacks):
    """Append a check through the real service and run the after-commit derivation, as
    in production (the beliefs tests)."""

    def _append(pair, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return append_check(pair, **kwargs)

    return _append


class CeleryWorker:
    """A real `celery worker` subprocess on its own queue, against the real Redis."""

    def __init__(self, database_name: str, queue: str, extra_env: dict[str, str] | None = None):
        self.queue = queue
        env = dict(os.environ)
        env["DJANGO_SETTINGS_MODULE"] = "config.settings"
        env["TUTORBRAIN_DB_NAME"] = database_name
        env["CELERY_TASK_DEFAULT_QUEUE"] = queue
        env.update(extra_env or {})
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--pool=solo",
                "--concurrency=1",
                "-Q",
                queue,
                "--without-heartbeat",
                "--without-gossip",
                "--without-mingle",
                "--loglevel=WARNING",
                "-n",
                f"{queue}@%h",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def wait_ready(self, app, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"celery worker exited: {self.process.stdout.read()}")
            replies = app.control.ping(
                destination=[f"{self.queue}@{os.uname().nodename}"], timeout=0.5
            )
            if replies:
                return
        raise TimeoutError("celery worker did not answer within the timeout")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def celery_worker(transactional_db, settings):
    """Start a real worker that sees the test database; tasks go to its private queue.

    Uses transactional_db so rows the test writes are committed and visible to the
    worker process. The worker is stopped (and killed if it hangs) after the test.
    """
    from django.db import connection

    from config.celery import app

    queue = f"test-{uuid.uuid4().hex[:10]}"
    previous = (app.conf.task_always_eager, app.conf.task_default_queue)
    app.conf.task_always_eager = False
    app.conf.task_default_queue = queue
    worker = CeleryWorker(connection.settings_dict["NAME"], queue)
    try:
        worker.wait_ready(app)
        yield worker
    finally:
        worker.stop()
        app.conf.task_always_eager, app.conf.task_default_queue = previous
