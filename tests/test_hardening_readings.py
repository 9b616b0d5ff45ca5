"""No file stuck in `reading` (issue 14): a reading whose worker is gone is re-queued by
the sweep (beat and worker start-up) and read; killed every time, it fails with a reason.

The last test kills a real Celery worker (SIGKILL, the whole process) while it waits on
the extractor's endpoint, and starts another one: the file must end `done` within two
minutes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
import uuid
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone

from concepts import reading_lease
from concepts.models import Concept, FileReading
from concepts.services import file_read, file_readings_requeue_lost, file_upload
from concepts.tasks import file_readings_requeue_lost_task
from tests.conftest import CeleryWorker

NOTES = b"# Cell transport\n\nOsmosis is the diffusion of water across a membrane.\n"


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def _stuck(pair, *, worker: str, heartbeat_age: float = 0.0, attempts: int = 1):
    subject_file = file_upload(pair=pair, name="notes.md", content=NOTES, queue=False).file
    FileReading.objects.filter(pk=subject_file.pk).update(
        state=FileReading.State.READING,
        started_at=timezone.now(),
        worker=worker,
        heartbeat_at=timezone.now() - timedelta(seconds=heartbeat_age),
        attempts=attempts,
    )
    return subject_file


@pytest.mark.django_db
def test_a_reading_whose_process_is_gone_is_requeued_at_once_and_read(
    pair, django_capture_on_commit_callbacks
):
    subject_file = _stuck(pair, worker=f"{socket.gethostname()}:{_dead_pid()}")

    with django_capture_on_commit_callbacks(execute=True):
        requeued = file_readings_requeue_lost()

    assert requeued == [subject_file.pk]
    reading = FileReading.objects.get(pk=subject_file.pk)
    assert reading.state == FileReading.State.DONE, reading.reason
    assert reading.attempts == 2
    assert Concept.objects.filter(subject=pair.subject).exists()


@pytest.mark.django_db
def test_a_live_reading_is_left_alone(pair):
    # A process that exists (this test's parent) and a fresh lease: still being read.
    subject_file = _stuck(pair, worker=f"{socket.gethostname()}:{os.getppid()}")
    assert file_readings_requeue_lost() == []
    assert FileReading.objects.get(pk=subject_file.pk).state == FileReading.State.READING


@pytest.mark.django_db
def test_a_lapsed_lease_on_another_host_is_requeued_by_the_beat_task(pair):
    subject_file = _stuck(
        pair, worker="another-host:4242", heartbeat_age=reading_lease.LEASE_SECONDS + 1
    )
    assert file_readings_requeue_lost_task() == [subject_file.pk]
    reading = FileReading.objects.get(pk=subject_file.pk)
    # Eager tasks: the re-queued reading was read at once.
    assert reading.state in (FileReading.State.QUEUED, FileReading.State.DONE)
    assert "another-host:4242" in reading.reason or reading.state == FileReading.State.DONE


@pytest.mark.django_db
def test_a_fresh_lease_on_another_host_is_not_requeued(pair):
    subject_file = _stuck(pair, worker="another-host:4242", heartbeat_age=1)
    assert file_readings_requeue_lost() == []
    assert FileReading.objects.get(pk=subject_file.pk).state == FileReading.State.READING


@pytest.mark.django_db
def test_a_lapsed_reading_may_be_claimed_by_a_redelivered_task(pair):
    subject_file = _stuck(
        pair, worker="another-host:4242", heartbeat_age=reading_lease.LEASE_SECONDS + 1
    )
    reading = file_read(subject_file=subject_file)
    assert reading.state == FileReading.State.DONE
    assert reading.worker == reading_lease.worker_id()


@pytest.mark.django_db
def test_a_reading_lost_too_often_fails_with_the_reason(pair):
    subject_file = _stuck(
        pair,
        worker=f"{socket.gethostname()}:{_dead_pid()}",
        attempts=reading_lease.MAX_READING_ATTEMPTS,
    )
    assert file_readings_requeue_lost() == []
    reading = FileReading.objects.get(pk=subject_file.pk)
    assert reading.state == FileReading.State.FAILED
    assert f"stopped {reading_lease.MAX_READING_ATTEMPTS} times" in reading.reason


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_renews_the_lease_while_the_reading_runs(pair):
    subject_file = _stuck(pair, worker=reading_lease.worker_id(), heartbeat_age=100)
    before = FileReading.objects.get(pk=subject_file.pk).heartbeat_at
    with reading_lease.heartbeat(subject_file.pk, interval=0.05):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if FileReading.objects.get(pk=subject_file.pk).heartbeat_at > before:
                break
            time.sleep(0.05)
    assert FileReading.objects.get(pk=subject_file.pk).heartbeat_at > before


class HangingOpenAI:
    """An OpenAI-compatible chat endpoint whose first request hangs until released."""

    def __init__(self):
        self.first_request = threading.Event()
        self.release = threading.Event()
        self.count = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.count += 1
                if fake.count == 1:
                    fake.first_request.set()
                    fake.release.wait(60)
                    return  # the worker that asked is dead by now
                content = json.dumps(
                    {
                        "concepts": [
                            {
                                "name": "Osmosis",
                                "summary": "Water crossing a membrane.",
                                "definition": "Osmosis is the diffusion of water across a membrane.",
                                "builds_on": [],
                                "assumes": [],
                                "pages": [1],
                            }
                        ]
                    }
                )
                payload = json.dumps(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "m"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                    }
                ).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_killing_the_worker_mid_read_ends_done_within_two_minutes_of_a_new_worker(pair):
    from django.db import connection

    from config.celery import app

    queue = f"test-kill-{uuid.uuid4().hex[:8]}"
    previous = (app.conf.task_always_eager, app.conf.task_default_queue)
    app.conf.task_always_eager = False
    app.conf.task_default_queue = queue
    workers: list[CeleryWorker] = []
    with HangingOpenAI() as llm:
        env = {
            "TUTORBRAIN_EXTRACTOR": "llm",
            "TUTORBRAIN_LLM_BASE_URL": llm.base_url,
            "TUTORBRAIN_LLM_MODEL": "test-model",
            "TUTORBRAIN_LLM_API_KEY": "test-key",
            "TUTORBRAIN_LLM_TIMEOUT_SECONDS": "120",
        }
        try:
            first = CeleryWorker(connection.settings_dict["NAME"], queue, env)
            workers.append(first)
            first.wait_ready(app)
            subject_file = file_upload(pair=pair, name="notes.md", content=NOTES).file
            assert llm.first_request.wait(90), "the worker never asked the extractor"
            reading = FileReading.objects.get(pk=subject_file.pk)
            assert reading.state == FileReading.State.READING
            assert reading.worker.endswith(f":{first.process.pid}")

            first.process.kill()  # SIGKILL: no clean-up, the message stays unacknowledged
            first.process.wait(timeout=30)
            llm.release.set()

            second = CeleryWorker(connection.settings_dict["NAME"], queue, env)
            workers.append(second)
            second.wait_ready(app)
            back = time.monotonic()
            while time.monotonic() - back < 120:
                reading = FileReading.objects.get(pk=subject_file.pk)
                if reading.state in (FileReading.State.DONE, FileReading.State.FAILED):
                    break
                time.sleep(0.5)
            assert reading.state == FileReading.State.DONE, (reading.state, reading.reason)
            assert reading.attempts == 2
            assert reading.worker.endswith(f":{second.process.pid}")
            assert Concept.objects.filter(subject=pair.subject, name="Osmosis").exists()
        finally:
            for worker in workers:
                worker.stop()
            app.conf.task_always_eager, app.conf.task_default_queue = previous
