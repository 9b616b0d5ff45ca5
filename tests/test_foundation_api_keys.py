from __future__ import annotations

import pytest
from django.db import connection
from rest_framework.test import APIClient

from memory.services import api_key_create, api_key_revoke
from tests.factories import OrganizationFactory, PairFactory

pytestmark = pytest.mark.django_db


def chain_url(pair) -> str:
    return f"/api/v1/pairs/{pair.student.external_id}/{pair.subject.external_id}/chain/"


def test_a_request_without_a_key_is_refused_with_401(pair):
    response = APIClient().get(chain_url(pair))
    assert response.status_code == 401
    assert "API key" in response.json()["error"]


def test_a_request_with_a_wrong_key_is_refused_with_401(pair):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Api-Key tb_not-a-real-key")
    response = client.get(chain_url(pair))
    assert response.status_code == 401
    assert response.json()["error"] == "invalid or revoked API key"


def test_a_revoked_key_is_refused_with_401(organization, pair):
    key, raw = api_key_create(organization=organization, name="old")
    api_key_revoke(api_key=key)
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=raw)
    assert client.get(chain_url(pair)).status_code == 401


def test_a_valid_key_reads_its_own_organizations_pair(api, pair):
    response = api.get(chain_url(pair))
    assert response.status_code == 200
    assert response.json()["student"] == pair.student.external_id
    assert response.json()["length"] == 0


def test_another_organizations_student_and_subject_are_404(api):
    other = OrganizationFactory()
    foreign = PairFactory(student__organization=other, subject__organization=other)
    response = api.get(chain_url(foreign))
    assert response.status_code == 404
    assert "no record" in response.json()["error"]


def test_the_same_external_ids_in_two_organizations_are_two_different_students(api, organization):
    other = OrganizationFactory()
    foreign = PairFactory(
        student__organization=other,
        student__external_id="alice",
        subject__organization=other,
        subject__external_id="bio",
    )
    assert foreign.student.organization == other
    response = api.get("/api/v1/pairs/alice/bio/chain/")
    assert response.status_code == 404


def test_a_key_never_appears_in_plain_text_in_the_database(organization):
    _, raw = api_key_create(organization=organization, name="secret")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM memory_apikey k WHERE row_to_json(k)::text LIKE %s", [f"%{raw}%"]
        )
        assert cursor.fetchone()[0] == 0
        cursor.execute("SELECT count(*) FROM memory_apikey WHERE prefix = %s", [raw[:8]])
        assert cursor.fetchone()[0] == 1
