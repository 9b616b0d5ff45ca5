"""The read-replica router (issue 15, point 6): block builds read from the "replica"
alias when it is the block-read database, and nothing is ever written there.

The test settings give the test database a second alias, "replica" (a mirror: its own
connections, the same data, as a streaming replica would hold), so which alias served
each query is visible in each connection's own query log.
"""

from __future__ import annotations

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from config.routers import BlockReadRouter
from memory.models import Episode, Pair
from memory.services import api_key_create, episode_append
from tests.factories import OrganizationFactory, PairFactory
from tutorbrain.block.build import memory_block_build

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "replica"])

WRITES = ("INSERT", "UPDATE", "DELETE", "TRUNCATE", "CREATE", "ALTER", "DROP")


@pytest.fixture
def history():
    organization = OrganizationFactory()
    pair = PairFactory(student__organization=organization, subject__organization=organization)
    for i in range(6):
        episode_append(pair=pair, kind="question", summary=f"What is osmosis? ({i})")
    episode_append(pair=pair, kind="check", summary="Check on osmosis", verdict="wrong")
    return organization, pair


def _build(organization, pair):
    return memory_block_build(
        organization=organization,
        student_external_id=pair.student.external_id,
        subject_external_id=pair.subject.external_id,
        message="What did I get wrong about osmosis?",
        now=timezone.now(),
        budget=900,
    )


def _sql(captured) -> list[str]:
    return [q["sql"].lstrip().upper() for q in captured.captured_queries]


def test_with_a_replica_the_block_reads_only_from_it(settings, history):
    organization, pair = history
    settings.TUTORBRAIN_BLOCK_READ_DATABASE = "replica"
    with (
        CaptureQueriesContext(connections["default"]) as on_default,
        CaptureQueriesContext(connections["replica"]) as on_replica,
    ):
        result = _build(organization, pair)
    assert result.recalled, result.text
    assert len(on_replica.captured_queries) >= 2
    assert on_default.captured_queries == []
    assert not [q for q in _sql(on_replica) if q.startswith(WRITES)]


def test_without_a_replica_the_block_reads_from_default(settings, history):
    organization, pair = history
    assert settings.TUTORBRAIN_BLOCK_READ_DATABASE == "default"
    with (
        CaptureQueriesContext(connections["default"]) as on_default,
        CaptureQueriesContext(connections["replica"]) as on_replica,
    ):
        _build(organization, pair)
    assert on_default.captured_queries
    assert on_replica.captured_queries == []


def test_a_turn_over_http_reads_the_block_from_the_replica_and_writes_to_default(settings, history):
    organization, pair = history
    settings.TUTORBRAIN_BLOCK_READ_DATABASE = "replica"
    _, raw = api_key_create(organization=organization, name="replica test")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw}")
    body = {"student": pair.student.external_id, "subject": pair.subject.external_id}
    # The block runs in a deadline worker thread: its queries go to that thread's
    # replica connection, which the capture below cannot see; the router's choice in
    # the worker is what the first test proves. Here: the request's writes.
    with CaptureQueriesContext(connections["replica"]) as on_replica:
        block = client.post(
            "/api/v1/memory-block/", {**body, "message": "What is osmosis?"}, format="json"
        )
        appended = client.post(
            "/api/v1/episodes/", {**body, "kind": "question", "summary": "And diffusion?"},
            format="json",
        )  # fmt: skip
    assert block.status_code == 200 and block.json()["dropped"] is False
    assert appended.status_code == 201, appended.json()
    assert not [q for q in _sql(on_replica) if q.startswith(WRITES)]
    assert Episode.objects.using("default").filter(summary="And diffusion?").exists()


def test_the_router_sends_every_write_to_default_even_inside_a_block_read(settings, history):
    organization, pair = history
    settings.TUTORBRAIN_BLOCK_READ_DATABASE = "replica"
    from config.routers import block_reads

    router = BlockReadRouter()
    with block_reads():
        assert router.db_for_read(Pair) == "replica"
        read_there = Pair.objects.get(pk=pair.pk)
        assert read_there._state.db == "replica"
        assert router.db_for_write(Pair, instance=read_there) == "default"
        with CaptureQueriesContext(connections["replica"]) as on_replica:
            episode_append(pair=read_there, kind="question", summary="Written inside")
    assert not [q for q in _sql(on_replica) if q.startswith(WRITES)]
    assert router.db_for_read(Pair) == "default"
    assert router.allow_migrate("replica", "memory") is False
    assert router.allow_migrate("default", "memory") is True
