"""Health of the parts the product needs: database, pgvector, Redis, embedder."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection


def _database() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        version = cursor.fetchone()[0]
    return {"ok": True, "version": version.split(" on ")[0]}


def _pgvector() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    if row is None:
        return {"ok": False, "error": "the vector extension is not installed"}
    return {"ok": True, "version": row[0]}


def _redis() -> dict[str, Any]:
    import redis

    client = redis.Redis.from_url(
        settings.CELERY_BROKER_URL, socket_connect_timeout=1, socket_timeout=1
    )
    try:
        client.ping()
    finally:
        client.close()
    return {"ok": True, "url": settings.CELERY_BROKER_URL.split("@")[-1]}


def _embedder() -> dict[str, Any]:
    from tutorbrain.embedder import get_embedder

    embedder = get_embedder()
    vector = embedder.embed(["health check"])
    if vector.shape != (1, embedder.dimensions):
        return {"ok": False, "error": f"unexpected embedding shape {vector.shape}"}
    return {"ok": True, "model": embedder.name, "dimensions": embedder.dimensions}


CHECKS = {"database": _database, "pgvector": _pgvector, "redis": _redis, "embedder": _embedder}


def health_report() -> tuple[bool, dict[str, Any]]:
    """Run every check; a failing check is reported by name with its error."""
    parts: dict[str, Any] = {}
    for name, check in CHECKS.items():
        try:
            parts[name] = check()
        except Exception as exc:  # a health check reports failures, it does not raise
            parts[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    healthy = all(part["ok"] for part in parts.values())
    return healthy, parts
