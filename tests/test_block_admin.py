"""The staff preview of the memory block (issue 6, item 5)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from memory.services import episode_append
from tests.factories import PairFactory

URL = "/admin/tutorbrain/block-preview/"
NOW = datetime(2026, 9, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def pair(db):
    return PairFactory()


def staff(*, allowed: bool) -> User:
    user = User.objects.create_user("staff", password="pw", is_staff=True)
    if allowed:
        user.user_permissions.add(Permission.objects.get(codename="view_episode"))
    return user


def query(pair, message):
    return {
        "organization": pair.subject.organization.pk,
        "student": pair.student.external_id,
        "subject": pair.subject.external_id,
        "message": message,
        "budget": 900,
        "now": "2026-09-20 12:00:00",
    }


def test_staff_see_the_block_and_why_each_episode_was_recalled(client, pair):
    episode = episode_append(
        pair=pair, kind="question", summary="What does osmosis do?", occurred_at=NOW, now=NOW
    )
    client.force_login(staff(allowed=True))

    response = client.get(URL, query(pair, "osmosis"))

    assert response.status_code == 200
    html = response.content.decode()
    assert "===== YOUR MEMORY OF THIS STUDENT AND SUBJECT =====" in html
    # The recalled id is a link to its episode, named as everywhere else.
    url = reverse("admin:memory_episode_change", args=[episode.pk])
    assert f'<a href="{url}">episode {episode.pk}</a>' in html
    recalled = response.context["result"].recalled[0]
    assert recalled.parts["words_matched"] == 1
    assert "words" in recalled.pools


def test_staff_without_the_episode_permission_are_refused(client, pair):
    client.force_login(staff(allowed=False))

    assert client.get(URL, query(pair, "osmosis")).status_code == 403


def test_anonymous_visitors_are_sent_to_the_login(client, pair):
    response = client.get(URL, query(pair, "osmosis"))

    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_a_budget_below_the_frame_is_shown_as_a_form_error(client, pair):
    client.force_login(staff(allowed=True))

    response = client.get(URL, {**query(pair, "osmosis"), "budget": 5})

    assert response.status_code == 200
    assert "must be at least" in response.content.decode()
