"""Registers the concept-name vectors with tutorbrain's `reembed` command."""

from __future__ import annotations

from concepts.naming import vector_text


def concept_texts(rows) -> list[str]:
    return [vector_text(r.name) for r in rows]
