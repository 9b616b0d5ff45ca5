"""Errors of the memory services that callers turn into a 400 naming the field."""

from __future__ import annotations


class InvalidInput(Exception):
    """Bad input to a service. `field` names the offending field (dotted for nested)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class NotFound(Exception):
    """The named object does not exist (for this organization)."""
