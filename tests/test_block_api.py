"""POST /api/v1/memory-block/ (SPEC R-5.1, R-5.9, R-5.10, R-5.11).

The endpoint builds in a worker thread with its own database connection (the deadline
runner), so these tests use committed data (transactional_db).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from django.db import connection
from rest_framework.test import APIClient

from memory.models import Pair, Student
from memory.services import api_key_create, episode_append
from tests.factories import OrganizationFactory

URL = "/api/v1/memory-block/"
NOW = datetime(2026, 9, 20, 12, 0, tzinfo=UTC)


def body(pair, **extra):
    data = {
        "student": pair.student.external_id,
        "subject": pair.subject.external_id,
        "message": "What is osmosis?",
        "now": NOW.isoformat(),
        "budget": 900,
    }
    data.update(extra)
    return data


def test_the_endpoint_returns_the_block_and_the_recalled_episodes_as_citations(setup):
    pair, client = setup
    check = episode_append(
        pair=pair,
        kind="check",
        summary="Check on osmosis: wrong",
        verdict="wrong",
        topic="osmosis",
        occurred_at=NOW - timedelta(days=40),
        now=NOW - timedelta(days=40),
    )

    response = client.post(URL, body(pair), format="json")

    assert response.status_code == 200, response.content
    data = response.json()
    assert data["dropped"] is False
    assert data["mode"] == "ordinary"
    assert data["block"].startswith("===== YOUR MEMORY OF THIS STUDENT AND SUBJECT =====")
    assert data["recalled"] == [
        {
            "id": check.pk,
            "occurred_at": "2026-08-11T12:00:00Z",
            "kind": "check",
            "summary": "Check on osmosis: wrong",
            "verification": "unverifiable",
            "repeats": 0,
        }
    ]
    assert data["tokens"] <= data["budget"] == 900
    assert data["time_window"] is None
    assert data["build_ms"] >= 0


def test_a_missing_message_is_recency_mode_not_an_error(setup):
    pair, client = setup
    episode_append(pair=pair, kind="question", summary="What is a cell?", now=NOW)

    payload = body(pair)
    del payload["message"]
    response = client.post(URL, payload, format="json")

    assert response.status_code == 200
    assert [r["summary"] for r in response.json()["recalled"]] == ["What is a cell?"]


def test_a_time_window_is_reported(setup):
    pair, client = setup

    response = client.post(URL, body(pair, message="¿Qué vimos en julio?"), format="json")

    data = response.json()
    assert data["mode"] == "history"
    assert data["time_window"]["label"] == "July 2026"
    assert data["time_window"]["start"] == "2026-06-30T22:00:00Z"  # Madrid midnight
    assert "No record of work with this student in July 2026." in data["block"]


def test_a_budget_below_the_frame_is_a_400_saying_the_minimum(setup):
    pair, client = setup

    response = client.post(URL, body(pair, budget=20), format="json")

    assert response.status_code == 400
    data = response.json()
    assert data["field"] == "budget"
    assert "must be at least" in data["error"] and "tokens" in data["error"]
    minimum = int(data["error"].split("at least ")[1].split(" ")[0])
    assert client.post(URL, body(pair, budget=minimum), format="json").status_code == 200
    assert client.post(URL, body(pair, budget=minimum - 1), format="json").status_code == 400


def test_a_message_over_the_limit_is_a_400(setup, settings):
    pair, client = setup
    settings.TUTORBRAIN_MAX_MESSAGE_CHARS = 50

    response = client.post(URL, body(pair, message="x" * 51), format="json")

    assert response.status_code == 400
    assert response.json()["field"] == "message"


def test_an_unknown_student_gets_an_honest_empty_block_and_nothing_is_created(setup):
    pair, client = setup
    counts = (Student.objects.count(), Pair.objects.count())

    response = client.post(URL, body(pair, student="nobody-yet"), format="json")

    assert response.status_code == 200
    data = response.json()
    assert data["recalled"] == []
    assert data["block"].endswith("===== END OF MEMORY =====")
    assert (Student.objects.count(), Pair.objects.count()) == counts


def test_another_organizations_student_is_unknown_here_and_nothing_leaks(setup):
    pair, client = setup
    episode_append(pair=pair, kind="question", summary="Private question on osmosis", now=NOW)
    other_org = OrganizationFactory()
    _, raw = api_key_create(organization=other_org, name="other")
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw}")

    response = other.post(URL, body(pair), format="json")

    assert response.status_code == 200
    data = response.json()
    assert data["recalled"] == []
    assert "Private question" not in data["block"]


def test_the_endpoint_requires_an_api_key(setup):
    pair, _ = setup

    assert APIClient().post(URL, body(pair), format="json").status_code == 401


def test_a_nothing_recorded_legacy_assessment_is_dropped_behind_the_block(setup):
    pair, client = setup
    episode_append(
        pair=pair, kind="check", summary="Check on osmosis: right", verdict="right", now=NOW
    )

    response = client.post(
        URL,
        body(pair, legacy_assessment="ASSESSMENT:\nNO QUIZ ATTEMPTS recorded"),
        format="json",
    )

    placed = response.json()["placed"]
    assert placed["assessment_dropped"] is True
    assert [p["role"] for p in placed["parts"]] == ["memory_block"]
    assert "NO QUIZ ATTEMPTS" not in placed["text"]


def test_a_real_legacy_assessment_follows_the_block_with_a_bridge_note(setup):
    pair, client = setup

    response = client.post(
        URL, body(pair, legacy_assessment="QUIZ RESULTS:\nQuiz 1 (cells): 4/5"), format="json"
    )

    placed = response.json()["placed"]
    assert [p["role"] for p in placed["parts"]] == ["memory_block", "bridge", "assessment"]
    assert placed["text"].index("YOUR MEMORY") < placed["text"].index("Quiz 1 (cells): 4/5")


def _sleeping_backends() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
            "AND query LIKE 'SELECT pg_sleep%%' AND pid <> pg_backend_pid() "
            "AND datname = current_database()"
        )
        return cursor.fetchone()[0]


def test_a_build_slowed_past_the_deadline_is_dropped_at_once_and_abandoned(setup, settings):
    pair, client = setup
    settings.TUTORBRAIN_BLOCK_DEADLINE_SECONDS = 0.3
    settings.TUTORBRAIN_BLOCK_TEST_DELAY_SECONDS = 5.0
    client.post(URL, body(pair, message=""), format="json")  # warm the worker's connection

    started = time.monotonic()
    response = client.post(URL, body(pair), format="json")
    elapsed = time.monotonic() - started

    assert response.status_code == 200
    data = response.json()
    assert data["dropped"] is True
    assert data["block"] is None and data["recalled"] == []
    # At the deadline, not after the 5 s build; the margin is for a loaded machine.
    assert elapsed < 0.3 + 1.5
    # The late build's query was cancelled, not left sleeping against the database.
    waited = time.monotonic()
    while _sleeping_backends() and time.monotonic() - waited < 10:
        time.sleep(0.05)
    assert _sleeping_backends() == 0


def test_the_deadline_keeps_the_legacy_assessment_when_no_block_exists(setup, settings):
    pair, client = setup
    settings.TUTORBRAIN_BLOCK_DEADLINE_SECONDS = 0.2
    settings.TUTORBRAIN_BLOCK_TEST_DELAY_SECONDS = 2.0

    response = client.post(
        URL, body(pair, legacy_assessment="NO QUIZ ATTEMPTS recorded"), format="json"
    )

    data = response.json()
    assert data["dropped"] is True
    assert data["placed"]["parts"] == [{"role": "assessment", "text": "NO QUIZ ATTEMPTS recorded"}]


def test_the_openapi_schema_documents_the_endpoint_with_examples(transactional_db):
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    operation = schema["paths"]["/api/v1/memory-block/"]["post"]
    examples = operation["requestBody"]["content"]["application/json"]["examples"]
    assert len(examples) >= 2
    assert "200" in operation["responses"]
