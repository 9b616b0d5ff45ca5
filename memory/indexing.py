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
# (text, the language to read it in when its own cannot be told) -> stemmed terms
TermsFn = Callable[[str, str], list[str]]

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


def search_terms(text: str, language: str) -> list[str]:
    if _search_terms is None:
        raise RuntimeError("no language data registered: is 'tutorbrain' in INSTALLED_APPS?")
    return _search_terms(text, language)


def episode_embedding_text(summary: str, text: str) -> str:
    body = text[:EMBED_TEXT_CHARS]
    return f"{summary}\n{body}" if body and body != summary else summary


def search_document(
    summary: str, text: str, topic: str, concepts: Sequence[str], language: str
) -> str:
    """The terms the full-text pool may match: stems of the episode's content words.

    Read in the episode's own language (`language` is the subject's, used when the
    text's own cannot be told), its function words removed. The text is left out when
    and the summary do not both go in when one holds the other (a chat service often
    sends the turn as both), so that repeating does not count as saying a word twice.
    """
    summary, text = summary.strip(), text.strip()
    if summary and summary in text:
        parts = [text]
    elif text in summary:
        parts = [summary]
    else:
        parts = [summary, text]
    raw = " ".join([*parts, topic, *concepts])
    return " ".join(search_terms(raw, language))
