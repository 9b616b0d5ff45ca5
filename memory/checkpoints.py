"""Signed checkpoints of every chain head (R-1.6).

A chain's own hashes prove that nothing inside it changed, as long as the chain is
compared with itself. Two rewrites leave a chain perfectly consistent: cutting off its
tail (and moving the head back), and rewriting it from some point on with freshly
computed hashes. Both are caught only by comparing with a copy of the heads kept
elsewhere: this module writes and reads that copy.

File format (JSON, UTF-8)::

    {"format": "tutorbrain-chain-checkpoint/1",
     "created_at": "2026-11-29T17:00:00.000000Z",
     "key_id": "<first 16 hex of sha256(key)>",
     "heads": [{"pair_id": 7, "organization": "school-a", "student": "s-1",
                "subject": "bio", "seq": 812, "hash": "<64 hex>"}, ...],
     "signature": "<hex HMAC-SHA256(key, canonical JSON of every other field)>"}

The key is the setting TUTORBRAIN_CHECKPOINT_KEY (defaults to SECRET_KEY; set it on
its own so a checkpoint survives a rotation of the web secret). The key id lets a
verifier tell "signed with another key" from "the file was altered".
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.utils.dateparse import parse_datetime

from memory.errors import InvalidInput
from memory.models import ChainCheckpoint, Pair

CHECKPOINT_FORMAT = "tutorbrain-chain-checkpoint/1"
KEY_ID_HEX_CHARS = 16


@dataclass(frozen=True)
class CheckpointHead:
    pair_id: int
    seq: int
    hash: str
    organization: str = ""
    student: str = ""
    subject: str = ""


@dataclass(frozen=True)
class ParsedCheckpoint:
    created_at: datetime
    heads: list[CheckpointHead]

    def by_pair(self) -> dict[int, CheckpointHead]:
        return {head.pair_id: head for head in self.heads}


def _key() -> bytes:
    return settings.TUTORBRAIN_CHECKPOINT_KEY.encode("utf-8")


def key_id() -> str:
    return hashlib.sha256(_key()).hexdigest()[:KEY_ID_HEX_CHARS]


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _signed_payload(*, created_at: str, key: str, heads: list[dict[str, Any]]) -> bytes:
    body = {"format": CHECKPOINT_FORMAT, "created_at": created_at, "key_id": key, "heads": heads}
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def checkpoint_heads() -> list[dict[str, Any]]:
    """Every non-empty chain's head, read from the pairs' head mirror (one query)."""
    rows = (
        Pair.objects.filter(head_seq__gt=0)
        .order_by("pk")
        .values_list(
            "pk",
            "student__organization__slug",
            "student__external_id",
            "subject__external_id",
            "head_seq",
            "head_hash",
        )
    )
    return [
        {
            "pair_id": pk,
            "organization": org,
            "student": student,
            "subject": subject,
            "seq": seq,
            "hash": head_hash,
        }
        for pk, org, student, subject, seq, head_hash in rows.iterator(chunk_size=5000)
    ]


def checkpoint_sign(*, created_at: datetime, heads: list[dict[str, Any]]) -> str:
    payload = _signed_payload(created_at=_iso(created_at), key=key_id(), heads=heads)
    return hmac.new(_key(), payload, hashlib.sha256).hexdigest()


def checkpoint_document(checkpoint: ChainCheckpoint) -> dict[str, Any]:
    """The file form of a stored checkpoint."""
    return {
        "format": CHECKPOINT_FORMAT,
        "created_at": _iso(checkpoint.created_at),
        "key_id": key_id(),
        "heads": checkpoint.heads,
        "signature": checkpoint.signature,
    }


def checkpoint_parse(text: str) -> ParsedCheckpoint:
    """Read a checkpoint file and check its signature; InvalidInput("checkpoint") if bad."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInput("checkpoint", f"is not JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise InvalidInput("checkpoint", f"is not a {CHECKPOINT_FORMAT} file")
    for name in ("created_at", "key_id", "heads", "signature"):
        if name not in data:
            raise InvalidInput("checkpoint", f"has no {name!r}")
    if data["key_id"] != key_id():
        raise InvalidInput(
            "checkpoint",
            f"was signed with another key (key id {data['key_id']}, ours is {key_id()}): "
            "set TUTORBRAIN_CHECKPOINT_KEY to the key it was written with",
        )
    heads = data["heads"]
    if not isinstance(heads, list) or not isinstance(data["created_at"], str):
        raise InvalidInput("checkpoint", "has a malformed body")
    payload = _signed_payload(created_at=data["created_at"], key=data["key_id"], heads=heads)
    expected = hmac.new(_key(), payload, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, str(data["signature"])):
        raise InvalidInput("checkpoint", "signature does not match: the file was altered")
    created_at = parse_datetime(data["created_at"])
    if created_at is None:
        raise InvalidInput("checkpoint", "has a malformed created_at")
    try:
        parsed = [
            CheckpointHead(
                pair_id=int(h["pair_id"]),
                seq=int(h["seq"]),
                hash=str(h["hash"]),
                organization=str(h.get("organization", "")),
                student=str(h.get("student", "")),
                subject=str(h.get("subject", "")),
            )
            for h in heads
        ]
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput("checkpoint", f"has a malformed head ({exc})") from exc
    return ParsedCheckpoint(created_at=created_at, heads=parsed)
