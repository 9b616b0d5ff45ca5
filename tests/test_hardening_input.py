"""Strict input and a deadline that covers authentication (issue 14)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from django.db import connection

from memory import indexing
from memory.models import Episode, Student
from memory.services import episode_append
from tutorbrain.api.block import MAX_TOKEN_BUDGET

BLOCK = "/api/v1/memory-block/"
EPISODES = "/api/v1/episodes/"


def _event(pair, **fields):
    body = {
        "student": pair.student.external_id,
        "subject": pair.subject.external_id,
        "kind": "question",
        "summary": "What is osmosis?",
    }
    body.update(fields)
    return body


def _block(pair, **fields):
    body = {"student": pair.student.external_id, "subject": pair.subject.external_id}
    body.update(fields)
    return body


def _refused(response, field):
    assert response.status_code == 400, response.content[:300]
    assert response.json()["field"] == field, response.json()
    return response.json()["error"]


@pytest.mark.parametrize("value", ["2026-07-12T10:00:00", "2026-07-12 10:00"])
def test_a_date_time_without_a_zone_is_refused_naming_the_field(setup, value):
    pair, client = setup
    message = _refused(
        client.post(EPISODES, _event(pair, occurred_at=value), format="json"), "occurred_at"
    )
    assert "time zone" in message
    _refused(client.post(BLOCK, _block(pair, now=value), format="json"), "now")
    batch = {**_event(pair), "events": [{"kind": "question", "summary": "x", "occurred_at": value}]}
    del batch["kind"], batch["summary"]
    _refused(client.post(EPISODES, batch, format="json"), "events[0].occurred_at")
    response = client.get(
        f"/api/v1/pairs/{pair.student.external_id}/{pair.subject.external_id}/episodes/",
        {"since": value},
    )
    _refused(response, "since")
    assert Episode.objects.count() == 0


def test_an_occurred_at_far_in_the_future_is_refused_and_a_small_skew_is_not(setup):
    pair, client = setup
    for value in ("9999-12-31T23:59:59Z", (datetime.now(UTC) + timedelta(days=2)).isoformat()):
        _refused(
            client.post(EPISODES, _event(pair, occurred_at=value), format="json"), "occurred_at"
        )
    ahead = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    response = client.post(EPISODES, _event(pair, occurred_at=ahead), format="json")
    assert response.status_code == 201, response.content


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("summary", 123),
        ("summary", True),
        ("student", 5),
        ("text", ["a"]),
        ("predicted_mastery", "0.5"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_not_coerced(setup, field, value):
    pair, client = setup
    extra = {"kind": "check", "verdict": "wrong"} if field == "predicted_mastery" else {}
    body = _event(pair, **extra)
    body[field] = value
    _refused(client.post(EPISODES, body, format="json"), field)
    assert Episode.objects.count() == 0


@pytest.mark.parametrize("budget", [10**30, MAX_TOKEN_BUDGET + 1, 0, "900"])
def test_a_budget_out_of_bounds_is_refused(setup, budget):
    pair, client = setup
    _refused(client.post(BLOCK, _block(pair, budget=budget), format="json"), "budget")


def test_the_largest_budget_is_accepted(setup):
    pair, client = setup
    response = client.post(BLOCK, _block(pair, budget=MAX_TOKEN_BUDGET), format="json")
    assert response.status_code == 200, response.content


def test_an_unknown_field_of_the_block_request_is_refused(setup):
    pair, client = setup
    message = _refused(client.post(BLOCK, _block(pair, mesage="hi"), format="json"), "mesage")
    assert "not a known field" in message


def test_the_block_says_whether_the_student_and_the_subject_are_known(setup):
    pair, client = setup
    data = client.post(BLOCK, _block(pair), format="json").json()
    assert (data["student_known"], data["subject_known"]) == (True, True)
    data = client.post(BLOCK, _block(pair, subject="biolgy"), format="json").json()
    assert (data["student_known"], data["subject_known"]) == (True, False)
    assert data["recalled"] == []
    data = client.post(BLOCK, _block(pair, student="nobody"), format="json").json()
    assert (data["student_known"], data["subject_known"]) == (False, True)
    assert Student.objects.filter(external_id="nobody").count() == 0


def test_a_retried_batch_is_not_embedded_again(setup, monkeypatch):
    pair, client = setup
    embedded: list[str] = []
    real_embed = indexing.embed

    def counting_embed(texts):
        embedded.extend(texts)
        return real_embed(texts)

    monkeypatch.setattr(indexing, "embed", counting_embed)
    events = [
        {"kind": "question", "summary": f"Question {i}", "idempotency_key": f"k{i}"}
        for i in range(3)
    ]
    batch = {"student": pair.student.external_id, "subject": pair.subject.external_id}
    assert client.post(EPISODES, {**batch, "events": events}, format="json").status_code == 201
    assert len(embedded) == 3

    embedded.clear()
    again = client.post(EPISODES, {**batch, "events": events}, format="json")
    assert again.status_code == 200
    assert embedded == []

    more = [*events, {"kind": "question", "summary": "Question 3", "idempotency_key": "k3"}]
    assert client.post(EPISODES, {**batch, "events": more}, format="json").status_code == 201
    assert len(embedded) == 1 and "Question 3" in embedded[0]
    assert Episode.objects.filter(pair=pair).count() == 4


def test_with_the_key_table_locked_the_block_is_dropped_within_the_deadline(setup, settings):
    pair, client = setup
    episode_append(pair=pair, kind="question", summary="What is osmosis?")
    settings.TUTORBRAIN_BLOCK_DEADLINE_SECONDS = 1.0

    params = connection.get_connection_params()
    locked, release = threading.Event(), threading.Event()

    def hold_the_lock():
        with psycopg.connect(**params, autocommit=False) as other:
            other.execute("LOCK TABLE memory_apikey IN ACCESS EXCLUSIVE MODE")
            locked.set()
            release.wait(30)
            other.rollback()

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    try:
        assert locked.wait(10)
        started = time.monotonic()
        response = client.post(
            BLOCK, _block(pair, legacy_assessment="ASSESSMENT: 2 quizzes"), format="json"
        )
        elapsed = time.monotonic() - started
    finally:
        release.set()
        holder.join()
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["dropped"] is True and data["block"] is None
    # The deadline is 1 s; generous room for a loaded machine, far below the lock's 30 s.
    assert elapsed < 5.0
