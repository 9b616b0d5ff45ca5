from __future__ import annotations

import socket

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_liveness_answers_without_a_key_and_tells_nothing():
    response = APIClient().get("/api/v1/health/")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    text = response.content.decode().lower()
    for secret in ("postgres", "vector", "redis", "use-multilingual", "version", "6379"):
        assert secret not in text


def test_readiness_refuses_a_request_without_a_key_or_login_with_json():
    response = APIClient().get("/api/v1/health/ready/")
    assert response.status_code == 401
    body = response.json()
    assert "parts" not in body and "version" not in response.content.decode().lower()
    assert body["error"]


def test_readiness_refuses_a_logged_in_user_who_is_not_staff(django_user_model):
    user = django_user_model.objects.create_user("reader", password="pw-not-staff-123")
    client = APIClient()
    client.force_login(user)
    response = client.get("/api/v1/health/ready/")
    assert response.status_code == 403
    assert "parts" not in response.json()


def test_readiness_is_200_with_versions_for_a_key_when_every_part_answers(api):
    response = api.get("/api/v1/health/ready/")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert set(body["parts"]) == {"database", "pgvector", "redis", "cache", "embedder"}
    assert body["parts"]["embedder"]["dimensions"] == 512
    assert body["parts"]["database"]["version"].startswith("PostgreSQL")
    assert body["parts"]["pgvector"]["version"]
    assert body["parts"]["redis"]["version"]
    # The broker's address is not part of the answer.
    assert "6379" not in response.content.decode()


def test_readiness_answers_a_staff_login_without_a_key(django_user_model):
    user = django_user_model.objects.create_user("operator", password="pw-staff-123", is_staff=True)
    client = APIClient()
    client.force_login(user)
    response = client.get("/api/v1/health/ready/")
    assert response.status_code == 200, response.json()
    assert response.json()["parts"]["database"]["ok"] is True


def test_readiness_is_503_naming_redis_when_the_broker_port_is_closed(api, settings):
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{_closed_port()}/0"
    response = api.get("/api/v1/health/ready/")
    body = response.json()
    assert response.status_code == 503
    assert body["failing"] == ["redis"]
    assert "Connection" in body["parts"]["redis"]["error"]


def test_the_openapi_schema_and_docs_page_are_served_without_network():
    schema = APIClient().get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/health/" in schema.content
    docs = APIClient().get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    # The Swagger UI assets come from the sidecar package's static files, not a CDN.
    assert "drf_spectacular_sidecar/swagger-ui-dist" in html
    assert "cdn." not in html


def test_the_docs_page_assets_and_the_admin_styles_are_served_with_debug_off(settings):
    assert settings.DEBUG is False
    client = APIClient()
    bundle = client.get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert bundle.status_code == 200
    assert client.get("/static/admin/css/base.css").status_code == 200
