"""Hooks through which the episode log gets its derived search data.

`memory` sits at the bottom of the dependency order and imports no other app of ours,
yet the embedder and the language data live in `tutorbrain`. tutorbrain registers
them here when Django starts (tutorbrain.apps.TutorbrainConfig.ready), so memory's
services call them without importing upwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

EmbedFn = Callable[[Sequence[str]], np.ndarray]
TermsFn = Callable[[str], list[str]]

_embed: EmbedFn | None = None
_embed_model_name: str = ""
_search_terms: TermsFn | None = None

# How much of an episode is embedded: the summary and the start of the text carry
# what it is about; a long answer's tail only dilutes the vector.
EMBED_TEXT_CHARS = 600


def register(*, embed: EmbedFn, model_name: str, search_terms: TermsFn) -> None:
    global _embed, _embed_model_name, _search_terms
    _embed = embed
    _embed_model_name = model_name
    _search_terms = search_terms


def embed(texts: Sequence[str]) -> np.ndarray:
    if _embed is None:
        raise RuntimeError("no embedder registered: is 'tutorbrain' in INSTALLED_APPS?")
    return _embed(texts)


def embed_model_name() -> str:
    return _embed_model_name


def search_terms(text: str) -> list[str]:
    if _search_terms is None:
        raise RuntimeError("no language data registered: is 'tutorbrain' in INSTALLED_APPS?")
    return _search_terms(text)


def episode_embedding_text(summary: str, text: str) -> str:
    body = text[:EMBED_TEXT_CHARS]
    return f"{summary}\n{body}" if body and body != summary else summary


def search_document(summary: str, text: str, topic: str, concepts: Sequence[str]) -> str:
    """The words the full-text pool may match, already normalised and stop-word free."""
    raw = " ".join([summary, text, topic, *concepts])
    return " ".join(search_terms(raw))
