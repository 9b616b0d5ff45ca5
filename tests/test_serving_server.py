"""The production server under real requests (issue 15, points 1 and 2): gunicorn's
workers are warm before their first turn, and a burst leaves PostgreSQL's connection
count bounded by the pools."""

from __future__ import annotations

import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from memory.services import EventSpec, api_key_create, episode_append_external
from tests.factories import OrganizationFactory
from tests.serving_helpers import GunicornServer, call

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.serving]

STUDENT, SUBJECT = "s-serving", "biology"
QUESTIONS = [
    "What is osmosis?",
    "How do mitochondria make ATP?",
    "Why does a cell burst in pure water?",
    "What does the cell membrane do?",
    "Explain diffusion across a membrane",
]


def _history(organization, count: int = 40) -> None:
    """A small real history (embedded on append) for the pair the turns ask about."""
    start = timezone.now() - timedelta(days=60)
    events = []
    for i in range(count):
        when = start + timedelta(days=i, minutes=i)
        if i % 4 == 3:
            events.append(
                EventSpec(
                    kind="check",
                    summary=f"Check on {QUESTIONS[i % 5]}",
                    verdict="wrong",
                    occurred_at=when,
                )  # fmt: skip
            )
        else:
            events.append(EventSpec(kind="question", summary=QUESTIONS[i % 5], occurred_at=when))
    episode_append_external(
        organization=organization,
        student_external_id=STUDENT,
        subject_external_id=SUBJECT,
        events=events,
    )


@pytest.fixture
def served_org():
    organization = OrganizationFactory()
    _, raw = api_key_create(organization=organization, name="serving")
    _history(organization)
    return organization, raw


def _block_body(message: str) -> dict:
    return {"student": STUDENT, "subject": SUBJECT, "message": message}


def test_the_first_block_after_start_is_not_dropped_and_as_fast_as_the_rest(served_org):
    _, key = served_org
    server = GunicornServer(connection.settings_dict["NAME"])
    try:
        server.wait_warm()
        timings = []
        conn = server.connection()
        for i in range(12):
            started = time.perf_counter()
            status, body, _ = call(
                conn, "POST", "/api/v1/memory-block/", key, _block_body(QUESTIONS[i % 5])
            )
            timings.append(time.perf_counter() - started)
            assert status == 200, body
            assert body["dropped"] is False, (i, body)
            assert body["block"]
        conn.close()
    finally:
        server.stop()
    first, rest = timings[0], timings[1:]
    median = statistics.median(rest)
    # The bound: within 2x the median. A cold worker (model loaded inside the
    # turn) took 2.5 s against a median near 50 ms; the 50 ms floor only keeps a
    # loaded CI machine's scheduling noise on a very fast median from failing it.
    assert first <= 2 * max(median, 0.050), (first, median, timings)


def _server_connections() -> int:
    """The server's connections to the test database (gunicorn names them)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = 'tutorbrain-web'"
        )
        return cursor.fetchone()[0]


@pytest.mark.timeout(900)
def test_a_burst_of_2000_requests_leaves_the_connection_count_bounded(served_org):
    _, key = served_org
    workers = 2
    threads = settings.TUTORBRAIN_WEB_THREADS
    per_process = settings.TUTORBRAIN_DB_POOL_MAX_SIZE
    server = GunicornServer(
        connection.settings_dict["NAME"], workers=workers, env={"TUTORBRAIN_API_RATE": "off"}
    )
    peak = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _server_connections())
            time.sleep(0.05)

    statuses: list[int] = []
    lock = threading.Lock()
    total, clients = 2000, 32

    def client(index: int) -> None:
        conn = server.connection()
        episodes = f"/api/v1/pairs/{STUDENT}/{SUBJECT}/episodes/?limit=5"
        mine = []
        for n in range(index, total, clients):
            if n % 20 == 0:  # some block builds: their worker threads take connections too
                status, _, _ = call(
                    conn, "POST", "/api/v1/memory-block/", key, _block_body(QUESTIONS[n % 5])
                )
            else:
                status, _, _ = call(conn, "GET", episodes, key)
            mine.append(status)
        conn.close()
        with lock:
            statuses.extend(mine)

    sampler = threading.Thread(target=sample, daemon=True)
    try:
        server.wait_warm()
        before = _server_connections()
        sampler.start()
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=clients) as pool:
            list(pool.map(client, range(clients)))
        elapsed = time.perf_counter() - started
        after = _server_connections()
    finally:
        stop.set()
        server.stop()
    sampler.join(timeout=5)
    print(f"{total} requests in {elapsed:.1f} s; connections {before} -> peak {peak[0]} -> {after}")
    assert len(statuses) == total
    assert statuses.count(200) == total, {s: statuses.count(s) for s in set(statuses)}
    bound = workers * per_process
    assert per_process == threads + settings.TUTORBRAIN_BLOCK_WORKERS
    # The sampler saw the pools at work, and never more than they allow.
    assert 2 <= peak[0] <= bound, (before, peak[0], after)
    assert after <= bound
