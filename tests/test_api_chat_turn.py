"""docs/api.md: one chat turn, step by step, with the exact calls — run as written.

Also the reason for its order: the block is asked for *before* the turn's question is
logged, because a question logged first is recalled into its own block as earlier work.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from rest_framework.test import APIClient

from memory.services import api_key_create
from tests.factories import OrganizationFactory

NOW = datetime(2026, 9, 20, 12, 0, tzinfo=UTC)
STUDENT, SUBJECT = "s-1", "biology"


@pytest.fixture
def chat_service(transactional_db):
    # The block is built in a worker thread with its own connection: committed data.
    organization = OrganizationFactory()
    _, raw = api_key_create(organization=organization, name="chat")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw}")
    return client


def earlier_turn(client, at):
    response = client.post(
        "/api/v1/episodes/",
        {
            "student": STUDENT,
            "subject": SUBJECT,
            "events": [
                {"kind": "question", "summary": "What is osmosis?", "occurred_at": at},
                {"kind": "answer", "summary": "Water crossing a membrane", "occurred_at": at},
            ],
        },
        format="json",
    )
    assert response.status_code == 201, response.content


def block(client, message, at):
    response = client.post(
        "/api/v1/memory-block/",
        {"student": STUDENT, "subject": SUBJECT, "message": message, "now": at, "budget": 900},
        format="json",
    )
    assert response.status_code == 200, response.content
    return response.json()


def test_one_chat_turn_as_docs_api_md_tells_it(chat_service):
    client = chat_service
    earlier_turn(client, (NOW - timedelta(days=30)).isoformat())
    turn = NOW.isoformat()

    # 1. Ask for the block first.
    data = block(client, "Why does a cell burst in pure water?", turn)
    assert data["block"] and data["mode"] == "ordinary"
    assert (data["student_known"], data["subject_known"]) == (True, True)
    recalled = [r["id"] for r in data["recalled"]]
    assert recalled, "the earlier osmosis turn is recalled"

    # 2.-3. The tutor answers; log the question and the answer together, in order.
    logged = client.post(
        "/api/v1/episodes/",
        {
            "student": STUDENT,
            "subject": SUBJECT,
            "events": [
                {
                    "kind": "question",
                    "summary": "Why does a cell burst in pure water?",
                    "text": "Why does a cell burst in pure water?",
                    "occurred_at": turn,
                    "idempotency_key": "turn-812:question",
                },
                {
                    "kind": "answer",
                    "summary": "Water rushes in by osmosis until the membrane gives",
                    "occurred_at": turn,
                    "recalled_ids": recalled,
                    "idempotency_key": "turn-812:answer",
                },
            ],
        },
        format="json",
    )
    assert logged.status_code == 201, logged.content
    question_id, answer_id = [e["id"] for e in logged.json()["episodes"]]

    # 4. A check, when the tutor checked understanding.
    check = client.post(
        "/api/v1/episodes/",
        {
            "student": STUDENT,
            "subject": SUBJECT,
            "kind": "check",
            "summary": "Explained why a red blood cell bursts in water",
            "topic": "osmosis",
            "verdict": "right",
            "predicted_mastery": 0.6,
            "occurred_at": turn,
        },
        format="json",
    )
    assert check.status_code == 201, check.content

    # 5. The grounding tracker's stance on the answer, once.
    stance = client.post(
        f"/api/v1/episodes/{answer_id}/stance/", {"stance": "answered"}, format="json"
    )
    assert stance.status_code == 201, stance.content

    # A retry of step 2 appends nothing (same idempotency keys).
    again = client.post(
        "/api/v1/episodes/",
        {
            "student": STUDENT,
            "subject": SUBJECT,
            "events": [
                {"kind": "question", "summary": "Why does a cell burst in pure water?",
                 "occurred_at": turn, "idempotency_key": "turn-812:question"},
            ],
        },
        format="json",
    )  # fmt: skip
    assert again.json()["episodes"][0]["id"] == question_id
    assert again.json()["episodes"][0]["appended"] is False


def test_a_question_logged_before_its_block_is_recalled_into_it(chat_service):
    """Why docs/api.md asks for the block first."""
    client = chat_service
    earlier_turn(client, (NOW - timedelta(days=30)).isoformat())
    message = "Can you explain the mitochondria again?"

    before = block(client, message, NOW.isoformat())
    client.post(
        "/api/v1/episodes/",
        {"student": STUDENT, "subject": SUBJECT, "kind": "question", "summary": message,
         "occurred_at": NOW.isoformat()},
        format="json",
    )  # fmt: skip
    after = block(client, message, (NOW + timedelta(seconds=5)).isoformat())

    assert message not in before["block"]
    assert message in after["block"]
