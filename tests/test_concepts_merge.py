"""Merging by embedding (R-2.3): the calibration picks per-embedder thresholds from the
labelled pair set, and the stored calibration covers the default embedder."""

from __future__ import annotations

import numpy as np
import pytest

from concepts import merge
from concepts.merge import LabelledPair, Thresholds, calibrate, same_concept


def _fake_embed(table):
    def embed(texts):
        return np.array([table[t] for t in texts], dtype=np.float32)

    return embed


def _unit(angle_degrees):
    a = np.radians(angle_degrees)
    return np.array([np.cos(a), np.sin(a)], dtype=np.float32)


def test_calibration_puts_the_threshold_between_same_and_different_pairs():
    table = {
        "osmosis": _unit(0), "osmose": _unit(10),  # cos 0.985: same
        "diffusion": _unit(0), "difusion": _unit(20),  # 0.94: same (spelling twins)
        "cell": _unit(0), "wall": _unit(40),  # 0.77: different
        "mitosis": _unit(0), "meiosis": _unit(60),  # 0.5: different
    }  # fmt: skip
    pairs = [
        LabelledPair("osmosis", "osmose", True),
        LabelledPair("diffusion", "difusion", True),
        LabelledPair("cell", "wall", False),
        LabelledPair("mitosis", "meiosis", False),
    ]
    result = calibrate(pairs=pairs, embed=_fake_embed(table), model_name="fake")
    assert result.merged_same == 2 and result.merged_different == 0
    assert np.cos(np.radians(40)) < result.cognate_threshold <= result.threshold
    assert result.threshold <= 1.0


def test_the_default_embedder_has_a_stored_calibration_with_the_named_cross_language_pairs():
    thresholds = merge.thresholds_for("use-multilingual-v3")
    assert thresholds is not None
    pairs = {(p.name_a, p.name_b): p.same for p in merge.labelled_pairs()}
    assert pairs[("osmosis", "ósmosis")] is True
    assert pairs[("mitochondria", "mitocondria")] is True
    assert pairs[("mitochondria", "chloroplasts")] is False


def test_a_spelling_twin_merges_at_the_lower_threshold_and_a_stranger_does_not():
    thresholds = Thresholds(threshold=0.87, cognate_threshold=0.77)
    assert same_concept(
        key_a="mitochondria", key_b="mitocondria", cosine=0.78, thresholds=thresholds
    )
    assert not same_concept(key_a="nucleus", key_b="nucleolus", cosine=0.82, thresholds=thresholds)
    assert same_concept(
        key_a="cell membrane", key_b="membrana celular", cosine=0.91, thresholds=thresholds
    )
    # Without a calibration for the embedder only keys merge.
    assert not same_concept(
        key_a="cell membrane", key_b="membrana celular", cosine=0.99, thresholds=None
    )


@pytest.mark.parametrize(
    "a, b",
    [
        ("study", "studies"), ("luz", "luces"), ("animal", "animais"), ("cheval", "chevaux"),
        ("nucleus", "nuclei"), ("bacterium", "bacteria"), ("tooth", "teeth"),
        ("sistema nervioso", "sistemas nerviosos"), ("cortex", "cortices"),
    ],
)  # fmt: skip
def test_plural_forms_of_five_languages_are_one_concept(a, b):
    assert same_concept(key_a=a, key_b=b, cosine=None, thresholds=None)


def test_names_that_differ_by_a_number_or_ordinal_never_merge_by_their_vectors():
    thresholds = Thresholds(threshold=0.8, cognate_threshold=0.7)
    for a, b in [
        ("one sigma rule", "two sigma rule"),
        ("g 1 phase", "g 2 phase"),
        ("type i error", "type ii error"),
        ("first law", "second law"),
    ]:
        assert not same_concept(key_a=a, key_b=b, cosine=0.95, thresholds=thresholds)
    assert same_concept(key_a="cell wall", key_b="cell walls", cosine=0.95, thresholds=thresholds)


def test_an_abbreviation_is_recognised_against_its_long_form_only():
    from concepts.naming import is_abbreviation_of

    assert is_abbreviation_of("IQR", "interquartile range")
    assert is_abbreviation_of("UDHR", "Universal Declaration of Human Rights")
    assert not is_abbreviation_of("oxidante", "agente oxidante")
    assert not is_abbreviation_of("Z", "número atómico")
