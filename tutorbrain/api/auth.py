"""API-key authentication: one key per organization, every query scoped to it.

Send `Authorization: Api-Key <key>` (or `X-Api-Key: <key>`). Only the key's sha256 is
stored, so a key never appears in plain text in the database.
"""

from __future__ import annotations

import time

from django.db import OperationalError, connection, transaction
from rest_framework import authentication, exceptions, permissions

from memory.models import ApiKey, Organization
from memory.rows import columns_of, instances_from_row
from memory.services import api_key_hash


class DeadlinePassed(exceptions.APIException):
    """The request's deadline passed before it was authenticated (a locked or slow key
    table): the view answers as it does for any late build."""

    status_code = 200
    default_detail = "the deadline passed during authentication"


def deadline_remaining(request) -> float | None:
    """Seconds left of the view's deadline since the request arrived; None: no deadline."""
    view = (getattr(request, "parser_context", None) or {}).get("view")
    deadline = getattr(view, "deadline_seconds", None)
    if deadline is None:
        return None
    arrived = getattr(request._request, "tutorbrain_arrived", None)
    if arrived is None:
        return deadline()
    return deadline() - (time.monotonic() - arrived)


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Api-Key"

    def authenticate(self, request):
        raw = self._raw_key(request)
        if raw is None:
            return None
        key_hash = api_key_hash(raw)
        remaining = deadline_remaining(request)
        key = (
            _active_key(key_hash) if remaining is None else _active_key_within(key_hash, remaining)
        )
        if key is None:
            raise exceptions.AuthenticationFailed("invalid or revoked API key")
        request.organization = key.organization
        return (None, key)

    def _raw_key(self, request) -> str | None:
        header = request.headers.get("Authorization", "")
        if header:
            scheme, _, value = header.partition(" ")
            if scheme.lower() in (self.keyword.lower(), "bearer") and value.strip():
                return value.strip()
            raise exceptions.AuthenticationFailed("Authorization header must be 'Api-Key <key>'")
        value = request.headers.get("X-Api-Key", "").strip()
        return value or None

    def authenticate_header(self, request) -> str:
        # Makes DRF answer 401 (not 403) when the key is missing.
        return self.keyword


# Every request runs this: as one plain statement it costs a fraction of what the ORM
# spent compiling the same query (select_related, first()), ~10 % of a server's Python
# time under load.
_ACTIVE_KEY_SQL = (
    f"SELECT {columns_of(('k', ApiKey), ('o', Organization))}"
    f" FROM {ApiKey._meta.db_table} k"
    f" JOIN {Organization._meta.db_table} o ON o.id = k.organization_id"
    " WHERE k.key_hash = %s AND k.revoked_at IS NULL"
)


def _active_key(key_hash: str) -> ApiKey | None:
    """The unrevoked key with this hash (key_hash is unique), its organization loaded."""
    with connection.cursor() as cursor:
        cursor.execute(_ACTIVE_KEY_SQL, [key_hash])
        row = cursor.fetchone()
    if row is None:
        return None
    key, key.organization = instances_from_row(row, (ApiKey, Organization), connection.alias)
    return key


def _active_key_within(key_hash: str, seconds: float) -> ApiKey | None:
    """_active_key under a statement timeout of `seconds` (lock waits included)."""
    if seconds <= 0:
        raise DeadlinePassed()
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('statement_timeout'), "
                "set_config('statement_timeout', %s, true)",
                [str(max(1, int(seconds * 1000)))],
            )
            previous = cursor.fetchone()[0]
            key = _active_key(key_hash)
            # Inside an outer transaction (a test's) the setting would outlive this block;
            # after a cancel the rollback restores it.
            cursor.execute("SELECT set_config('statement_timeout', %s, true)", [previous])
            return key
    except OperationalError as exc:  # cancelled by the statement timeout
        raise DeadlinePassed() from exc


class HasOrganization(permissions.BasePermission):
    message = "an API key is required (header 'Authorization: Api-Key <key>')"

    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, ApiKey)


def organization_of(request):
    """The organization of the request's API key (set by ApiKeyAuthentication)."""
    return request.auth.organization
