"""Registers the concept-name vectors with tutorbrain's `reembed` command."""

from __future__ import annotations

from concepts.naming import vector_text


def concept_texts(rows) -> list[str]:
    return [vector_text(r.name) for r in rows]


CONCEPT_INDEX_SQL = (
    "CREATE INDEX concept_embedding_hnsw ON {table} USING hnsw ({column} vector_cosine_ops) "
    "WITH (m = 16, ef_construction = 64)"
)
