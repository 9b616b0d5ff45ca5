"""The error half of the OpenAPI contract: one `Error` schema, documented on every
operation for every status code the API can answer with."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse, extend_schema_serializer
from rest_framework import serializers


@extend_schema_serializer(component_name="Error")
class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField(
        help_text="A readable message; for a refused field it starts with the field's name."
    )
    field = serializers.CharField(
        allow_null=True,
        help_text="The refused field as a path (e.g. `events[1].verdict`, `body`), or null.",
    )
    detail = serializers.JSONField(
        required=False, help_text="400 from field validation: every field error."
    )
    limit_bytes = serializers.IntegerField(
        required=False, help_text="413 only: the body limit, in bytes."
    )


ERROR_DESCRIPTIONS = {
    400: "Bad input (malformed JSON, a wrong type, an unknown field, a broken rule): the "
    "message names the field; nothing was written.",
    401: "No API key, or an invalid or revoked one.",
    404: "Not found in the key's organization (or no endpoint at this address).",
    413: "The body is over the limit: TUTORBRAIN_MAX_JSON_BODY_BYTES for JSON, "
    "TUTORBRAIN_MAX_FILE_BYTES + 1 MiB for a file upload. The message names the limit.",
    429: "Too many requests for this API key (TUTORBRAIN_API_RATE); the Retry-After "
    "header says how many seconds to wait.",
}


def error_responses(*, authenticated: bool = True) -> dict[int, OpenApiResponse]:
    """The error responses every operation documents, each with the `Error` schema."""
    # Throttling counts requests per API key: a public operation is never throttled.
    codes = [400, 401, 404, 413, 429] if authenticated else [400, 404, 413]
    return {
        code: OpenApiResponse(response=ErrorSerializer, description=ERROR_DESCRIPTIONS[code])
        for code in codes
    }


class ApiKeyScheme(OpenApiAuthenticationExtension):
    """Documents tutorbrain.api.auth.ApiKeyAuthentication as the `ApiKey` scheme."""

    target_class = "tutorbrain.api.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Api-Key <key>`, one key per organization (or `X-Api-Key: <key>`).",
        }
