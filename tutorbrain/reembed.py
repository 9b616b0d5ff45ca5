"""Rebuild derived vectors after the embedding model changes.

Each app that stores vectors registers a target here: the model, its vector field,
the HNSW index that covers it (if any), and how to build each row's text.
`manage.py reembed` then (1) resizes the column when the new embedder's dimension
differs, dropping and recreating the index around it, and (2) recomputes every row's
vector in batches.
Vectors are derived data: no hashed content is touched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import connection, models, transaction


@dataclass(frozen=True)
class ReembedTarget:
    label: str
    model: type[models.Model]
    vector_field: str
    model_field: str  # CharField naming the model that made the vector ("" = none)
    index_name: str  # "" when the column has no vector index
    index_sql: str  # CREATE INDEX ... (with {table} and {column} placeholders), or ""
    text_of: Callable[[Iterable[models.Model]], list[str]]
    select_related: tuple[str, ...] = ()


_targets: list[ReembedTarget] = []


def register_target(target: ReembedTarget) -> None:
    if all(t.label != target.label for t in _targets):
        _targets.append(target)


def targets() -> list[ReembedTarget]:
    return list(_targets)


def _column(target: ReembedTarget) -> str:
    field = target.model._meta.get_field(target.vector_field)
    assert isinstance(field, models.Field)  # a concrete vector column, not a relation
    return str(field.column)


def column_dimensions(target: ReembedTarget) -> int | None:
    table = target.model._meta.db_table
    column = _column(target)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s",
            [table, column],
        )
        row = cursor.fetchone()
    return None if row is None or row[0] < 0 else int(row[0])


@transaction.atomic
def resize_column(target: ReembedTarget, dimensions: int) -> None:
    table = connection.ops.quote_name(target.model._meta.db_table)
    column = connection.ops.quote_name(_column(target))
    with connection.cursor() as cursor:
        if target.index_name:
            cursor.execute(f"DROP INDEX IF EXISTS {connection.ops.quote_name(target.index_name)}")
        cursor.execute(
            f"ALTER TABLE {table} ALTER COLUMN {column} TYPE vector({int(dimensions)}) USING NULL"
        )
        if target.index_sql:
            cursor.execute(target.index_sql.format(table=table, column=column))


def reembed_target(
    target: ReembedTarget,
    *,
    embed,
    model_name: str,
    batch_size: int = 256,
    only_stale: bool = True,
    progress=None,
) -> int:
    """Recompute vectors of `target`; returns how many rows were written."""
    qs = target.model._default_manager.all().order_by("pk")
    if target.select_related:
        qs = qs.select_related(*target.select_related)
    if only_stale:
        qs = qs.filter(
            models.Q(**{f"{target.vector_field}__isnull": True})
            | ~models.Q(**{target.model_field: model_name})
        )
    done = 0
    last_pk = None
    while True:
        page = qs.filter(pk__gt=last_pk) if last_pk is not None else qs
        batch = list(page[:batch_size])
        if not batch:
            return done
        vectors = embed(target.text_of(batch))
        for row, vector in zip(batch, vectors, strict=True):
            setattr(row, target.vector_field, vector)
            setattr(row, target.model_field, model_name)
        with transaction.atomic():
            target.model._default_manager.bulk_update(
                batch, [target.vector_field, target.model_field]
            )
        done += len(batch)
        last_pk = batch[-1].pk
        if progress:
            progress(len(batch))
