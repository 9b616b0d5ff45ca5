"""Model instances from one row of a plain SQL join.

For the few per-request reads where the ORM spent more CPU compiling a query than the
database spent running it (the API key with its organization, the appending pair with
its student and subject): the statement is written once, its columns taken from the
models' own fields, and each row is read back into one instance per model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import models


def columns_of(*aliased: tuple[str, type[models.Model]]) -> str:
    """ "k.id, k.name, …, o.id, …": every concrete column of each (alias, model)."""
    return ", ".join(
        f"{alias}.{f.column}" for alias, model in aliased for f in model._meta.concrete_fields
    )


def instances_from_row(
    row: Sequence[Any], model_classes: Sequence[type[models.Model]], db: str
) -> list[Any]:
    """One instance per model, from a row laid out as columns_of wrote it."""
    out = []
    start = 0
    for model in model_classes:
        fields = model._meta.concrete_fields
        end = start + len(fields)
        out.append(model.from_db(db, [f.attname for f in fields], row[start:end]))
        start = end
    return out
