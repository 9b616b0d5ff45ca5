"""Strict input fields of the API: what the docs say is taken, nothing coerced.

DRF's defaults are lenient in ways that hide client bugs: `"summary": 123` becomes
"123", a date-time without a zone is silently read as UTC, an unknown key is ignored.
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework import serializers


class StrictSerializer(serializers.Serializer):
    """Refuses keys it does not know: a misspelt `verdit` must not pass silently."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({unknown[0]: ["is not a known field"]})
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """A JSON string, and only a string (no number or boolean turned into text)."""

    default_error_messages = {"invalid": "must be a string"}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictFloatField(serializers.FloatField):
    """A JSON number, and only a number (no "0.5" string, no true)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer, and only an integer (no "900" string, no 9.0, no true)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class AwareDateTimeField(serializers.DateTimeField):
    """An ISO 8601 date-time that names its zone (`Z` or `±hh:mm`), within a range.

    A naive value would be read in the server's zone; the docs require a zone, so it is
    refused rather than guessed.
    """

    default_error_messages = {
        "naive": "must include a time zone (Z or +hh:mm), e.g. 2026-07-12T10:00:00Z",
        "range": "must be between years {low} and {high}",
    }

    def __init__(self, *args, min_year: int = 1, max_year: int = 9998, **kwargs):
        self.min_year, self.max_year = min_year, max_year
        super().__init__(*args, **kwargs)

    def to_internal_value(self, value):
        if isinstance(value, str):
            try:
                raw = parse_datetime(value.strip())
            except ValueError:
                raw = None  # out-of-range parts: DRF's own message below
            if raw is not None and timezone.is_naive(raw):
                self.fail("naive")
        result: datetime = super().to_internal_value(value)
        if not (self.min_year <= result.year <= self.max_year):
            self.fail("range", low=self.min_year, high=self.max_year)
        return result
