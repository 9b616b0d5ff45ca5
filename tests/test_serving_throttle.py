"""Requests per API key: DRF throttling on the shared Redis cache (issue 15, point 3)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
import redis
from rest_framework.test import APIClient

from memory.models import ApiKey
from memory.services import api_key_create

pytestmark = pytest.mark.django_db


def _client(raw_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw_key}")
    return client


def _episodes_url(pair) -> str:
    return f"/api/v1/pairs/{pair.student.external_id}/{pair.subject.external_id}/episodes/"


def test_a_key_past_its_rate_gets_429_json_with_retry_after(settings, api, pair):
    settings.TUTORBRAIN_API_RATE = "3/minute"
    for _ in range(3):
        assert api.get(_episodes_url(pair)).status_code == 200
    refused = api.get(_episodes_url(pair))
    assert refused.status_code == 429
    assert refused["Content-Type"] == "application/json"
    body = refused.json()
    assert body["field"] is None and "throttled" in body["error"].lower()
    wait = int(refused["Retry-After"])
    assert 1 <= wait <= 60


def test_the_count_is_per_key_not_per_organization(settings, api, organization, pair):
    settings.TUTORBRAIN_API_RATE = "2/minute"
    for _ in range(2):
        assert api.get(_episodes_url(pair)).status_code == 200
    assert api.get(_episodes_url(pair)).status_code == 429
    _, other_raw = api_key_create(organization=organization, name="second service")
    assert _client(other_raw).get(_episodes_url(pair)).status_code == 200


def test_the_count_lives_in_the_shared_redis_cache(settings, api, api_key, pair):
    settings.TUTORBRAIN_API_RATE = "5/minute"
    api.get(_episodes_url(pair))
    api.get(_episodes_url(pair))
    key = ApiKey.objects.get(key_hash__isnull=False, revoked_at__isnull=True, name="test")
    client = redis.Redis.from_url(settings.TUTORBRAIN_CACHE_URL)
    try:
        stored = client.keys(f"tutorbrain:*throttle_api_key_{key.key_hash[:32]}")
    finally:
        client.close()
    # Another web process (any server sharing this Redis) reads the same count.
    assert len(stored) == 1


def test_liveness_and_refused_keys_are_not_counted(settings, pair):
    settings.TUTORBRAIN_API_RATE = "1/minute"
    anonymous = APIClient()
    for _ in range(3):
        assert anonymous.get("/api/v1/health/").status_code == 200
    bad = _client("not-a-key")
    for _ in range(3):
        assert bad.get(_episodes_url(pair)).status_code == 401


def test_the_default_rate_is_the_documented_one(settings):
    env = {k: v for k, v in os.environ.items() if k != "TUTORBRAIN_API_RATE"}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "from django.conf import settings; print(settings.TUTORBRAIN_API_RATE)",
        ],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert shown == "3000/minute"
    readme = (settings.BASE_DIR / "README.md").read_text()
    assert "| `TUTORBRAIN_API_RATE` | `3000/minute` |" in readme


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_cache_lets_requests_through(settings, api, pair):
    settings.TUTORBRAIN_API_RATE = "1/minute"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{_closed_port()}/0",
            "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
        }
    }
    for _ in range(3):
        assert api.get(_episodes_url(pair)).status_code == 200
