"""The episode log's admin: read-only, a fixed number of queries, staff-only verification."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memory import admin as memory_admin
from memory.models import ChainVerification, Episode
from memory.services import (
    EventSpec,
    chain_verify,
    episode_append,
    episode_append_batch,
    subject_file_register,
)
from memory.staff import MEMORY_STAFF as MEMORY_STAFF_GROUP
from tests.factories import PairFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)
EPISODES = reverse("admin:memory_episode_changelist")
PAIRS = reverse("admin:memory_pair_changelist")


def seed(pair, n):
    events = [
        EventSpec(kind="question", summary=f"question {i}", occurred_at=T0 + timedelta(hours=i))
        for i in range(n)
    ]
    return episode_append_batch(pair=pair, events=events, embed=False)


def test_the_episode_list_shows_kind_summary_and_citation_status_in_fixed_queries(
    admin_client, pair
):
    file = subject_file_register(subject=pair.subject, name="cells.pdf", content=b"v1")
    episode_append(
        pair=pair,
        kind="answer",
        summary="cited answer",
        citations=[{"file_id": file.pk}],
        embed=False,
    )
    subject_file_register(subject=pair.subject, name="cells.pdf", content=b"v2")
    seed(pair, 2)
    with CaptureQueriesContext(connection) as few:
        response = admin_client.get(EPISODES)
    assert response.status_code == 200
    body = response.content.decode()
    assert "cited answer" in body and "changed: &#x27;cells.pdf&#x27; was replaced" in body
    seed(PairFactory(), 25)
    with CaptureQueriesContext(connection) as many:
        assert admin_client.get(EPISODES).status_code == 200
    assert len(many.captured_queries) == len(few.captured_queries)


def test_the_episode_list_filters_by_kind_and_searches_summaries(admin_client, pair):
    seed(pair, 3)
    episode_append(
        pair=pair, kind="check", summary="check on osmosis", verdict="wrong", embed=False
    )
    body = admin_client.get(EPISODES, {"kind__exact": "check"}).content.decode()
    assert "check on osmosis" in body and "question 1" not in body
    body = admin_client.get(EPISODES, {"q": "osmosis"}).content.decode()
    assert "check on osmosis" in body and "question 1" not in body


def test_an_episode_page_shows_its_neighbours_hashes_and_evidence(admin_client, pair):
    first, middle, last = seed(pair, 3)
    body = admin_client.get(
        reverse("admin:memory_episode_change", args=[middle.pk])
    ).content.decode()
    assert "previous" in body and "question 0" in body
    assert "next" in body and "question 2" in body
    assert middle.hash in body and middle.prev_hash in body
    assert "matches the stored hash" in body


def test_immutable_rows_cannot_be_added_changed_or_deleted_in_the_admin(admin_client, pair):
    (episode,) = seed(pair, 1)
    assert admin_client.get(reverse("admin:memory_episode_add")).status_code == 403
    delete = reverse("admin:memory_episode_delete", args=[episode.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    change = reverse("admin:memory_episode_change", args=[episode.pk])
    admin_client.post(change, {"summary": "rewritten"})
    assert Episode.objects.get(pk=episode.pk).summary == "question 0"


def test_the_pair_list_shows_intact_or_broken_at_seq_and_when(admin_client, pair):
    episodes = seed(pair, 3)
    assert "never verified" in admin_client.get(PAIRS).content.decode()
    chain_verify(pair=pair)
    assert "intact" in admin_client.get(PAIRS).content.decode()
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("ALTER TABLE memory_episode DISABLE TRIGGER USER")
        cursor.execute("UPDATE memory_episode SET text = 'x' WHERE id = %s", [episodes[1].pk])
        cursor.execute("ALTER TABLE memory_episode ENABLE TRIGGER USER")
    chain_verify(pair=pair)
    assert "broken at seq 2 (content changed)" in admin_client.get(PAIRS).content.decode()


def _run_verify_action(client, pair):
    return client.post(
        PAIRS, {"action": "verify_chain", "_selected_action": [pair.pk]}, follow=True
    )


def test_the_verify_action_is_only_for_memory_staff(client, pair):
    seed(pair, 2)
    plain = User.objects.create_user("viewer", password="pw", is_staff=True)
    plain.user_permissions.add(Permission.objects.get(codename="view_pair"))
    client.force_login(plain)
    assert "verify_chain" not in client.get(PAIRS).content.decode()
    _run_verify_action(client, pair)
    assert ChainVerification.objects.count() == 0

    staff = User.objects.create_user("keeper", password="pw", is_staff=True)
    staff.groups.add(Group.objects.get(name=MEMORY_STAFF_GROUP))
    client.force_login(staff)
    assert "verify_chain" in client.get(PAIRS).content.decode()
    response = _run_verify_action(client, pair)
    assert "1 intact, 0 broken" in response.content.decode()
    assert ChainVerification.objects.get(pair=pair).intact


def test_a_slow_count_falls_back_to_the_estimate_without_spoiling_the_request(pair, monkeypatch):
    seed(pair, 3)
    monkeypatch.setattr(memory_admin, "ADMIN_COUNT_TIMEOUT_MS", 1)
    slow = Episode.objects.extra(where=["pg_sleep(0.05) IS NOT NULL"]).order_by("pk")
    paginator = memory_admin.LargeTablePaginator(slow, 10)
    with CaptureQueriesContext(connection) as queries:
        assert paginator.count >= 0
    assert "pg_class" in queries.captured_queries[-1]["sql"], "the estimate stood in"
    assert Episode.objects.filter(pair=pair).count() == 3


def test_an_answer_page_shows_its_cited_files_state_and_stance(admin_client, pair):
    from memory.services import answer_stance_report, citation_verify

    file = subject_file_register(subject=pair.subject, name="cells.pdf", content=b"v1")
    answer = episode_append(
        pair=pair, kind="answer", summary="cited", citations=[{"file_id": file.pk}], embed=False
    )
    citation_verify(episode=answer)
    answer_stance_report(episode=answer, stance="partial")
    subject_file_register(subject=pair.subject, name="cells.pdf", content=b"v2")
    body = admin_client.get(reverse("admin:memory_episode_change", args=[answer.pk])).content
    text = body.decode()
    assert "changed — &#x27;cells.pdf&#x27; was replaced by a newer version" in text
    assert "last checks: holds" in text
    assert "partial" in text and file.fingerprint in text
