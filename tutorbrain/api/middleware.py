"""Request-level rules of the REST API (paths under /api/), before and after DRF.

- The request's arrival time is noted first thing, so the memory block's deadline
  counts from it (authentication and parsing included), not from the view's start.
- A body over the limit is refused from its Content-Length with a JSON 413 naming the
  limit, before a byte of it is read.
- Any other 4xx Django answers itself (an unknown URL, a disallowed host, a body Django
  refused) becomes the API's JSON error, `{"error": "...", "field": null}`, so a client
  never has to parse an HTML page.
"""

from __future__ import annotations

import time
from http import HTTPStatus

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from tutorbrain.api.parsers import too_large_body

API_PREFIX = "/api/"
# Multipart form fields beside the file (student, subject, name, ...) and the multipart
# framing itself: far below this.
MULTIPART_OVERHEAD_BYTES = 1024 * 1024


def body_limit(content_type: str) -> tuple[int, str]:
    """(the body limit in bytes, the setting it comes from) for a request's content type."""
    if content_type.startswith("multipart/"):
        return (
            settings.TUTORBRAIN_MAX_FILE_BYTES + MULTIPART_OVERHEAD_BYTES,
            "TUTORBRAIN_MAX_FILE_BYTES + 1 MiB",
        )
    return settings.TUTORBRAIN_MAX_JSON_BODY_BYTES, "TUTORBRAIN_MAX_JSON_BODY_BYTES"


class ApiRequestMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.tutorbrain_arrived = time.monotonic()  # type: ignore[attr-defined]
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        try:
            size = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            size = 0
        limit, setting = body_limit(request.META.get("CONTENT_TYPE", ""))
        if size > limit:
            return JsonResponse(too_large_body(size, limit, setting), status=413)
        response = self.get_response(request)
        if 400 <= response.status_code < 500 and not _is_json(response):
            return _json_error(response.status_code)
        return response


def _is_json(response: HttpResponse) -> bool:
    return response.get("Content-Type", "").startswith("application/json")


def _json_error(code: int) -> JsonResponse:
    try:
        phrase = HTTPStatus(code).phrase.lower()
    except ValueError:
        phrase = "client error"
    messages = {
        404: "not found: no API endpoint at this address (see /api/schema/)",
        400: "bad request: the request could not be read",
    }
    return JsonResponse({"error": messages.get(code, phrase), "field": None}, status=code)


def server_error(request: HttpRequest, *args, **kwargs) -> HttpResponse:
    """handler500: JSON under /api/, Django's page elsewhere (the admin)."""
    from django.views.defaults import server_error as django_server_error

    if request.path.startswith(API_PREFIX):
        return JsonResponse(
            {"error": "internal error: the server could not answer; try again", "field": None},
            status=500,
        )
    return django_server_error(request, *args, **kwargs)
