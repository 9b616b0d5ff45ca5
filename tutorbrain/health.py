"""Readiness of the parts the product needs: database, pgvector, Redis, cache, embedder.

Liveness (is the process answering) needs none of this and tells nothing; this detailed
report is for operators (tutorbrain/api/health.py puts it behind a key or staff login).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connections


def _database() -> dict[str, Any]:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT version()")
        version = cursor.fetchone()[0]
    return {"ok": True, "version": version.split(" on ")[0]}


def _pgvector() -> dict[str, Any]:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    if row is None:
        return {"ok": False, "error": "the vector extension is not installed"}
    return {"ok": True, "version": row[0]}


def _replica() -> dict[str, Any]:
    with connections[settings.TUTORBRAIN_BLOCK_READ_DATABASE].cursor() as cursor:
        cursor.execute("SELECT pg_is_in_recovery()")
        in_recovery = cursor.fetchone()[0]
    return {"ok": True, "in_recovery": in_recovery}


def _redis() -> dict[str, Any]:
    import redis

    client = redis.Redis.from_url(
        settings.CELERY_BROKER_URL, socket_connect_timeout=1, socket_timeout=1
    )
    try:
        version = client.info("server").get("redis_version", "")
    finally:
        client.close()
    return {"ok": True, "version": version}


def _cache() -> dict[str, Any]:
    probe = f"health:{uuid.uuid4().hex}"
    cache.set(probe, "1", timeout=5)
    found = cache.get(probe) == "1"
    cache.delete(probe)
    if not found:
        return {"ok": False, "error": "a value written to the cache was not read back"}
    return {"ok": True}


def _embedder() -> dict[str, Any]:
    from tutorbrain.embedder import get_embedder

    embedder = get_embedder()
    vector = embedder.embed(["health check"])
    if vector.shape != (1, embedder.dimensions):
        return {"ok": False, "error": f"unexpected embedding shape {vector.shape}"}
    return {"ok": True, "model": embedder.name, "dimensions": embedder.dimensions}


def _checks() -> dict[str, Any]:
    checks = {"database": _database, "pgvector": _pgvector}
    if settings.TUTORBRAIN_BLOCK_READ_DATABASE != "default":  # block builds use a replica
        checks["replica"] = _replica
    checks.update({"redis": _redis, "cache": _cache, "embedder": _embedder})
    return checks


def health_report() -> tuple[bool, dict[str, Any]]:
    """Run every check; a failing check is reported by name with its error."""
    parts: dict[str, Any] = {}
    for name, check in _checks().items():
        try:
            parts[name] = check()
        except Exception as exc:  # a health check reports failures, it does not raise
            parts[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    healthy = all(part["ok"] for part in parts.values())
    return healthy, parts
