"""Registers the episode log's vectors with tutorbrain's `reembed` command."""

from __future__ import annotations

from memory import indexing


def episode_index_texts(rows) -> list[str]:
    return [indexing.episode_embedding_text(r.episode.summary, r.episode.text) for r in rows]


EPISODE_INDEX_SQL = (
    "CREATE INDEX episodeindex_embedding_hnsw ON {table} USING hnsw ({column} vector_cosine_ops) "
    "WITH (m = 16, ef_construction = 64)"
)
