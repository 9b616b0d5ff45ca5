"""API-key authentication: one key per organization, every query scoped to it.

Send `Authorization: Api-Key <key>` (or `X-Api-Key: <key>`). Only the key's sha256 is
stored, so a key never appears in plain text in the database.
"""

from __future__ import annotations

from rest_framework import authentication, exceptions, permissions

from memory.models import ApiKey
from memory.services import api_key_hash


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Api-Key"

    def authenticate(self, request):
        raw = self._raw_key(request)
        if raw is None:
            return None
        key = (
            ApiKey.objects.select_related("organization")
            .filter(key_hash=api_key_hash(raw), revoked_at__isnull=True)
            .first()
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


class HasOrganization(permissions.BasePermission):
    message = "an API key is required (header 'Authorization: Api-Key <key>')"

    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, ApiKey)


def organization_of(request):
    """The organization of the request's API key (set by ApiKeyAuthentication)."""
    return request.auth.organization
