"""The API's JSON parser: a malformed, too deep or too large body is a JSON 400/413.

DRF's own parser lets a deeply nested body (`[[[[...]]]]`) reach Python's recursion
limit inside `json.load`, which ends as a 500. Nothing the API accepts is nested more
than a few levels (`extra` and citations are the deepest), so a body nested deeper
than MAX_JSON_DEPTH is refused before any serializer walks it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from rest_framework import exceptions, parsers, status

from memory.errors import InvalidInput

# Deepest nesting of objects and arrays accepted anywhere in a JSON body. The API's own
# shapes need 4 (a batch → events → citations → pages); `extra` is free-form, 32 is
# plenty for it and far below Python's recursion limit (1,000).
MAX_JSON_DEPTH = 32


def too_large_body(size: int | None, limit: int, setting: str) -> dict:
    """The 413 body: names the limit, in bytes, and the setting that holds it."""
    said = f"is {size} bytes" if size is not None else "is larger than the limit"
    return {
        "error": f"body: the request body {said}; the limit is {limit} bytes ({setting})",
        "field": "body",
        "limit_bytes": limit,
    }


class BodyTooLarge(exceptions.APIException):
    """A body found too large while it was read (no Content-Length to refuse it by)."""

    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "body_too_large"

    def __init__(self, limit: int, setting: str):
        self.body = too_large_body(None, limit, setting)
        super().__init__(self.body["error"])


def json_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether `value` nests objects/arrays deeper than `limit` (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, plus a body size limit and a nesting limit, both a JSON error."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.TUTORBRAIN_MAX_JSON_BODY_BYTES
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise BodyTooLarge(limit, "TUTORBRAIN_MAX_JSON_BODY_BYTES")
        try:
            data = json.loads(raw.decode(encoding), parse_constant=_refuse_constant)
        except RecursionError as exc:
            raise InvalidInput("body", f"is nested deeper than {MAX_JSON_DEPTH} levels") from exc
        except (ValueError, UnicodeDecodeError) as exc:
            raise InvalidInput("body", f"is not valid JSON: {exc}") from exc
        if json_depth_exceeds(data, MAX_JSON_DEPTH):
            raise InvalidInput("body", f"is nested deeper than {MAX_JSON_DEPTH} levels")
        return data


def _refuse_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; Python's parser accepts them by default.
    raise ValueError(f"{name} is not a JSON number")
