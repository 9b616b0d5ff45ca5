"""Every API error is JSON: {"error": "<readable message>", "field": "<name or null>"}."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from memory.errors import InvalidInput, NotFound
from tutorbrain.api.parsers import BodyTooLarge


def _first_error(detail, prefix: str = "") -> tuple[str | None, str]:
    """Walk DRF's nested error detail to the first (field path, message)."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = key if key != "non_field_errors" else ""
            if str(name).isdigit():  # a list's errors by index: {"events": {"0": {...}}}
                path = f"{prefix}[{name}]"
            else:
                path = f"{prefix}.{name}" if prefix and name else (name or prefix)
            return _first_error(value, path)
    if isinstance(detail, list):
        for i, value in enumerate(detail):
            if isinstance(value, dict | list) and value:
                path = f"{prefix}[{i}]" if prefix else f"[{i}]"
                if isinstance(value, dict):
                    return _first_error(value, path)
                return _first_error(value, prefix)
            if value:
                return (prefix or None, str(value))
    return (prefix or None, str(detail))


def json_exception_handler(exc, context):
    if isinstance(exc, InvalidInput):
        return Response(
            {"error": f"{exc.field}: {exc.message}", "field": exc.field},
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, BodyTooLarge):
        return Response(exc.body, status=exc.status_code)
    if isinstance(exc, NotFound | Http404):
        return Response(
            {"error": str(exc) or "not found", "field": None}, status=status.HTTP_404_NOT_FOUND
        )
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(
            exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        )
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        field, message = _first_error(exc.detail)
        text = f"{field}: {message}" if field else message
        response.data = {"error": text, "field": field, "detail": exc.detail}
    elif isinstance(exc, exceptions.NotAuthenticated):
        response.data = {
            "error": "an API key is required: send 'Authorization: Api-Key <key>'",
            "field": None,
        }
    else:
        detail = getattr(exc, "detail", str(exc))
        response.data = {"error": str(detail), "field": None}
    return response
