"""Hardening of the REST API (issue 14): no 500 on crafted input, every 4xx as JSON,
body limits that match the documented batch, strict input types."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest
from django.test import Client
from rest_framework.test import APIClient

from memory.models import Episode, Student
from memory.services import api_key_create
from tests.factories import PairFactory
from tutorbrain.api.parsers import MAX_JSON_DEPTH, BodyTooLarge, JSONParser
from tutorbrain.block.timewindow import parse_time_window

BLOCK = "/api/v1/memory-block/"
EPISODES = "/api/v1/episodes/"


@pytest.fixture
def setup(transactional_db):
    pair = PairFactory(student__timezone="Europe/Madrid")
    _, raw = api_key_create(organization=pair.subject.organization, name="t")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw}")
    return pair, client, raw


def _raw_post(raw_key: str, url: str, body: bytes, content_type="application/json"):
    return Client().post(
        url, data=body, content_type=content_type, HTTP_AUTHORIZATION=f"Api-Key {raw_key}"
    )


@pytest.mark.parametrize("url", [EPISODES, BLOCK])
def test_a_deeply_nested_body_is_a_400_naming_the_body_not_a_server_error(setup, url):
    _, _, key = setup
    for depth in (MAX_JSON_DEPTH + 1, 100_000):
        response = _raw_post(key, url, b"[" * depth + b"]" * depth)
        assert response.status_code == 400, (depth, response.content[:200])
        assert response["Content-Type"].startswith("application/json")
        assert response.json()["field"] == "body"
        assert "nested deeper" in response.json()["error"]
    assert Student.objects.count() == 1  # the fixture's only


def test_a_nested_extra_within_the_limit_is_still_accepted(setup):
    pair, client, _ = setup
    extra: dict = {}
    node = extra
    for _ in range(MAX_JSON_DEPTH - 3):  # body → extra → … stays within the limit
        node["x"] = {}
        node = node["x"]
    response = client.post(
        EPISODES,
        {
            "student": pair.student.external_id,
            "subject": pair.subject.external_id,
            "kind": "question",
            "summary": "What is osmosis?",
            "occurred_at": "2026-09-01T10:00:00Z",
            "extra": extra,
        },
        format="json",
    )
    assert response.status_code == 201, response.content


def test_malformed_json_is_a_json_400_naming_the_body(setup):
    _, _, key = setup
    for body in (b'{"student": ', b'{"budget": NaN}', b"\xff\xfe"):
        response = _raw_post(key, BLOCK, body)
        assert response.status_code == 400, body
        assert response.json()["field"] == "body"
        assert "not valid JSON" in response.json()["error"]


def test_a_turn_dated_centuries_ahead_gets_a_block_not_a_server_error(setup):
    pair, client, _ = setup
    client.post(
        EPISODES,
        {
            "student": pair.student.external_id,
            "subject": pair.subject.external_id,
            "kind": "question",
            "summary": "What is osmosis?",
            "occurred_at": "2026-09-01T10:00:00Z",
        },
        format="json",
    )
    for year in (2260, 2500, 9998):
        response = client.post(
            BLOCK,
            {
                "student": pair.student.external_id,
                "subject": pair.subject.external_id,
                "message": "What is osmosis?",
                "now": f"{year}-06-01T10:00:00Z",
            },
            format="json",
        )
        assert response.status_code == 200, (year, response.content[:300])
        assert response.json()["recalled"][0]["summary"] == "What is osmosis?"


@pytest.mark.parametrize(
    "message", ["what did we do last month?", "next year", "tomorrow", "yesterday", "last week"]
)
@pytest.mark.parametrize(
    "now",
    [datetime(1, 1, 1, 0, 30, tzinfo=UTC), datetime(9999, 12, 31, 23, 30, tzinfo=UTC)],
)
@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Tokyo"])
def test_a_window_outside_the_calendar_is_no_window_not_an_error(message, now, zone):
    window = parse_time_window(message, now=now, timezone_name=zone)
    assert window is None or window.start.year in (1, 9999)


def test_last_month_asked_in_january_of_year_1_is_answered(setup):
    pair, client, _ = setup
    response = client.post(
        BLOCK,
        {
            "student": pair.student.external_id,
            "subject": pair.subject.external_id,
            "message": "What did we do last month?",
            "now": "0001-01-15T10:00:00Z",
        },
        format="json",
    )
    assert response.status_code == 200, response.content[:300]
    assert response.json()["time_window"] is None


def test_a_body_over_the_limit_is_a_json_413_naming_the_limit(setup, settings):
    pair, _, key = setup
    settings.TUTORBRAIN_MAX_JSON_BODY_BYTES = 4096
    body = json.dumps(
        {"student": "s", "subject": "t", "kind": "question", "summary": "x" * 5000}
    ).encode()
    response = _raw_post(key, EPISODES, body)
    assert response.status_code == 413
    data = response.json()
    assert data["field"] == "body" and data["limit_bytes"] == 4096
    assert "4096 bytes" in data["error"] and "TUTORBRAIN_MAX_JSON_BODY_BYTES" in data["error"]
    assert Episode.objects.count() == 0


def test_a_body_read_past_the_limit_without_a_length_is_refused_while_reading(settings):
    settings.TUTORBRAIN_MAX_JSON_BODY_BYTES = 1024
    with pytest.raises(BodyTooLarge) as raised:
        JSONParser().parse(io.BytesIO(b'{"a": "' + b"x" * 2000 + b'"}'), "application/json", {})
    assert raised.value.body["limit_bytes"] == 1024
    assert JSONParser().parse(io.BytesIO(b'{"a": 1}'), "application/json", {}) == {"a": 1}


def test_a_multipart_upload_over_the_file_limit_is_a_json_413(setup, settings):
    _, _, key = setup
    settings.TUTORBRAIN_MAX_FILE_BYTES = 2048
    response = Client().post(
        "/api/v1/files/",
        {"student": "s", "subject": "t", "file": io.BytesIO(b"x" * (2 * 1024 * 1024))},
        HTTP_AUTHORIZATION=f"Api-Key {key}",
    )
    assert response.status_code == 413
    assert "TUTORBRAIN_MAX_FILE_BYTES" in response.json()["error"]


def test_a_batch_of_150_long_events_is_read_whole_not_refused_for_its_size(setup):
    # 150 events of 20,000 characters (~3 MB, within the documented batch): the body is
    # parsed and validated event by event. The last event is wrong on purpose, so the
    # answer is the 400 naming it (nothing is embedded or written), not an HTML page.
    pair, _, key = setup
    events = [
        {"kind": "question", "summary": f"Question {i}", "text": "osmosis " * 2500}
        for i in range(150)
    ]
    events[-1]["kind"] = "not-a-kind"
    body = json.dumps(
        {"student": pair.student.external_id, "subject": pair.subject.external_id, "events": events}
    ).encode()
    assert len(body) > 3_000_000
    response = _raw_post(key, EPISODES, body)
    assert response.status_code == 400, response.content[:300]
    assert response.json()["field"] == "events[149].kind"
    assert Episode.objects.count() == 0


def test_an_unknown_address_under_the_api_is_a_json_404(setup):
    _, client, _ = setup
    response = client.get("/api/v1/no-such-endpoint/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["field"] is None


def test_a_wrong_method_is_a_json_405(setup):
    _, client, _ = setup
    response = client.get(BLOCK)
    assert response.status_code == 405
    assert "error" in response.json()


def test_a_disallowed_host_under_the_api_is_a_json_400(setup):
    response = Client().get("/api/v1/health/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert "error" in response.json()
