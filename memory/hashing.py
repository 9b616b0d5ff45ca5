"""Canonical serialisation and hashing of episodes (R-1.5).

The hash covers everything an episode says (not its derived search data): a rewrite of
any of these fields, a move to another chain, or a broken link is detectable.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

HASHED_FIELDS = (
    "pair_id",
    "seq",
    "kind",
    "summary",
    "text",
    "concepts",
    "salience",
    "occurred_at",
    "recorded_at",
    "topic",
    "verdict",
    "predicted_mastery",
    "evidence",
    "idempotency_key",
)


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def canonical_content(fields: dict[str, Any]) -> str:
    data = {}
    for name in HASHED_FIELDS:
        value = fields[name]
        if isinstance(value, datetime):
            value = _iso(value)
        elif name in ("salience", "predicted_mastery") and value is not None:
            # Floats are written with fixed precision so the text is stable across
            # drivers and the database's own float formatting.
            value = f"{float(value):.6f}"
        elif name == "concepts":
            value = list(value)
        data[name] = value
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def episode_hash(fields: dict[str, Any], prev_hash: str) -> str:
    payload = canonical_content(fields) + "|" + prev_hash
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def fields_of(episode) -> dict[str, Any]:
    return {name: getattr(episode, name) for name in HASHED_FIELDS}
