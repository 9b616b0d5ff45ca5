"""The model-level half of "never edited, never deleted" (R-1.4).

The database half is a pgtrigger Protect trigger on each table; this half gives the
early, readable error before any SQL is sent.
"""

from __future__ import annotations

import pgtrigger
from django.db import models


class ImmutableRecordError(Exception):
    """Raised when code tries to edit or delete a write-once row."""


class AppendOnlyQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise ImmutableRecordError(
            f"{self.model.__name__} rows are append-only: update() is refused"
        )

    def delete(self):
        raise ImmutableRecordError(
            f"{self.model.__name__} rows are append-only: delete() is refused"
        )

    # bulk_update is an update by another name.
    def bulk_update(self, objs, fields, batch_size=None):
        raise ImmutableRecordError(
            f"{self.model.__name__} rows are append-only: bulk_update() is refused"
        )


AppendOnlyManager = models.Manager.from_queryset(AppendOnlyQuerySet)


class AppendOnlyModel(models.Model):
    """Abstract base: a row may be inserted once and never saved again or deleted."""

    objects = AppendOnlyManager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableRecordError(
                f"{type(self).__name__} {self.pk} is append-only: an existing row cannot be saved"
            )
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableRecordError(
            f"{type(self).__name__} {self.pk} is append-only: it cannot be deleted"
        )


def no_truncate(name: str) -> pgtrigger.Trigger:
    """The trigger that refuses TRUNCATE on a write-once table.

    Row triggers (UPDATE, DELETE) do not fire on TRUNCATE, so without this one statement
    would empty an append-only table. Tests flush their databases with TRUNCATE under
    `pgtrigger.ignore` of these triggers (tests/conftest.py).
    """
    # pgtrigger's Protect composes statement triggers from transition tables, which
    # TRUNCATE has none of: a plain statement trigger that raises.
    return pgtrigger.Trigger(
        name=name,
        operation=pgtrigger.Truncate,
        level=pgtrigger.Statement,
        when=pgtrigger.Before,
        func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table: it is append-only', TG_TABLE_NAME;",
    )
