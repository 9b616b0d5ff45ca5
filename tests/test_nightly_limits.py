from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from tutorbrain.models import SelfModel
from tutorbrain.nightly.selectors import self_model_limits_sentence

pytestmark = pytest.mark.django_db


def test_a_pair_without_a_self_model_is_told_confidence_is_a_ranking(pair):
    sentence = self_model_limits_sentence(pair=pair)

    assert "ranking, not a probability" in sentence
    assert "fewer than 5 checks" in sentence


def test_no_pair_at_all_gets_the_uncalibrated_sentence():
    assert "ranking, not a probability" in self_model_limits_sentence(pair=None)


def test_a_calibrated_self_model_states_its_expected_calibration_error(pair):
    SelfModel.objects.create(
        pair=pair,
        day=dt.date(2026, 3, 1),
        computed_at=timezone.now(),
        calibrated=True,
        predicted_checks=7,
        ece=0.125,
        belief_predictions=9,
        belief_ece=0.04,
    )

    sentence = self_model_limits_sentence(pair=pair)

    assert "ranking" not in sentence
    assert "7 checks" in sentence
    assert "0.12" in sentence or "0.13" in sentence
    assert "9 checks that followed a belief (p_right, expected calibration error 0.04)" in sentence
