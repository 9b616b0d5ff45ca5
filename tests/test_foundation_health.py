from __future__ import annotations

import socket

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_health_is_200_when_database_pgvector_redis_and_embedder_answer():
    response = APIClient().get("/api/v1/health/")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert set(body["parts"]) == {"database", "pgvector", "redis", "embedder"}
    assert body["parts"]["embedder"]["dimensions"] == 512


def test_health_is_503_naming_redis_when_the_broker_port_is_closed(settings):
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{_closed_port()}/0"
    response = APIClient().get("/api/v1/health/")
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
