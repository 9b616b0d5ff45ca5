from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from memory.services import episode_append
from tutorbrain.block.build import memory_block_build
from tutorbrain.models import SelfModel
from tutorbrain.nightly.selectors import self_model_limits_sentence

pytestmark = pytest.mark.django_db


def test_a_pair_without_a_self_model_is_told_confidence_is_a_ranking(pair):
    sentence = self_model_limits_sentence(pair=pair)

    assert "ranking, not a probability" in sentence
    assert "fewer than 5 checks" in sentence


def test_no_pair_at_all_gets_the_uncalibrated_sentence():
    assert "ranking, not a probability" in self_model_limits_sentence(pair=None)


def _calibrated_self_model(pair, *, ece: float = 0.075) -> SelfModel:
    return SelfModel.objects.create(
        pair=pair,
        day=dt.date(2026, 3, 1),
        computed_at=timezone.now(),
        calibrated=True,
        predicted_checks=7,
        ece=ece,
        belief_predictions=9,
        belief_ece=0.04,
    )


def test_a_calibrated_self_model_states_its_expected_calibration_error(pair):
    _calibrated_self_model(pair)

    sentence = self_model_limits_sentence(pair=pair)

    assert "ranking" not in sentence
    assert "7 checks" in sentence
    assert "0.07" in sentence or "0.08" in sentence
    assert "9 checks that followed a belief (p_right, expected calibration error 0.04)" in sentence


def test_a_self_model_stored_calibrated_but_more_than_a_tenth_off_says_ranking(pair):
    # A row written before the error bound existed still says "calibrated".
    _calibrated_self_model(pair, ece=0.26)

    sentence = self_model_limits_sentence(pair=pair)

    assert sentence.startswith("Confidence figures are a ranking, not a probability")
    assert "(expected calibration error 0.26)" in sentence
    assert "(p_right, 0.04)" in sentence


def test_the_block_states_the_calibration_its_lookup_read_with_the_pair(pair):
    episode_append(pair=pair, kind="question", summary="What is osmosis?")
    _calibrated_self_model(pair)

    block = memory_block_build(
        organization=pair.student.organization,
        student_external_id=pair.student.external_id,
        subject_external_id=pair.subject.external_id,
        message="What is osmosis?",
        now=timezone.now(),
        budget=900,
    )

    assert self_model_limits_sentence(pair=pair) in block.text
    assert "ranking, not a probability" not in block.text
