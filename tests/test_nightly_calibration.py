from __future__ import annotations

import pytest
from django.db import transaction
from django.utils import timezone

from memory.immutability import ImmutableRecordError
from memory.services import episode_append
from tests.nightly_helpers import DAY, at
from tutorbrain.models import CalibrationSnapshot
from tutorbrain.nightly.calibration import calibration_compute
from tutorbrain.nightly.services import (
    calibration_all_pairs_write,
    calibration_snapshot_write,
)

# Hand-computed example (10 equal bins; right = 1, partial = 0.5, wrong = 0):
#   bin 0: 0.05 wrong                -> mean p 0.05,  mean y 0     gap 0.05
#   bin 1: 0.15 right                -> mean p 0.15,  mean y 1     gap 0.85
#   bin 8: 0.82 right, 0.88 wrong    -> mean p 0.85,  mean y 0.5   gap 0.35
#   bin 9: 0.95 right, 1.0 partial   -> mean p 0.975, mean y 0.75  gap 0.225
#   ECE = (1*0.05 + 1*0.85 + 2*0.35 + 2*0.225) / 6 = 2.05 / 6
EXAMPLE = [
    (0.05, "wrong"),
    (0.15, "right"),
    (0.82, "right"),
    (0.88, "wrong"),
    (0.95, "right"),
    (1.0, "partial"),
]


def test_the_expected_calibration_error_matches_the_hand_computed_example():
    result = calibration_compute(EXAMPLE)

    assert result.predicted_checks == 6
    assert result.ece == pytest.approx(2.05 / 6, abs=1e-6)


def test_the_reliability_bins_match_the_hand_computed_example():
    bins = calibration_compute(EXAMPLE).bins

    assert len(bins) == 10
    assert [b.count for b in bins] == [1, 1, 0, 0, 0, 0, 0, 0, 2, 2]
    assert bins[8].mean_predicted == pytest.approx(0.85)
    assert bins[8].mean_outcome == pytest.approx(0.5)
    assert bins[9].mean_predicted == pytest.approx(0.975)
    assert bins[9].mean_outcome == pytest.approx(0.75)
    assert bins[2].mean_predicted is None
    assert (bins[9].lower, bins[9].upper) == (0.9, 1.0)


def test_a_prediction_on_a_bin_edge_goes_to_the_upper_bin():
    bins = calibration_compute([(0.3, "right"), (0.0, "wrong")]).bins

    assert bins[3].count == 1
    assert bins[0].count == 1


def test_perfect_predictions_have_zero_error():
    assert calibration_compute([(1.0, "right"), (0.0, "wrong")]).ece == 0


def test_no_prediction_has_no_error_and_is_not_calibrated():
    result = calibration_compute([])

    assert result.ece is None
    assert not result.calibrated


def test_calibrated_needs_five_predictions_not_four():
    four = calibration_compute([(0.9, "right")] * 4)
    five = calibration_compute([(0.9, "right")] * 5)

    assert not four.calibrated
    assert five.calibrated


def test_predictions_more_than_a_tenth_off_their_outcomes_are_not_calibrated():
    near = calibration_compute([(0.85, "right")] * 9 + [(0.85, "wrong")])  # 0.85 → 0.9
    off = calibration_compute([(0.75, "right")] * 9 + [(0.75, "wrong")])  # 0.75 → 0.9

    assert near.ece == pytest.approx(0.05) and near.calibrated
    assert off.ece == pytest.approx(0.15) and not off.calibrated


def _checks(pair, predictions):
    for i, (p, verdict) in enumerate(predictions):
        episode_append(
            pair=pair,
            kind="check",
            summary=f"check {i}",
            topic="fractions",
            verdict=verdict,
            predicted_mastery=p,
            occurred_at=at(8, i),
            now=at(8, i),
            embed=False,
        )


@pytest.mark.django_db
def test_the_pair_snapshot_reads_predicted_checks_and_ignores_checks_without_prediction(pair):
    _checks(pair, EXAMPLE)
    episode_append(
        pair=pair,
        kind="check",
        summary="no prediction",
        verdict="right",
        occurred_at=at(10),
        now=at(10),
        embed=False,
    )

    snapshot = calibration_snapshot_write(pair=pair, day=DAY, now=at(23))

    assert snapshot.predicted_checks == 6
    assert snapshot.ece == pytest.approx(2.05 / 6, abs=1e-6)
    # Six checks are enough to measure, but 0.34 off is no calibration.
    assert not snapshot.calibrated
    assert [b["count"] for b in snapshot.bins] == [1, 1, 0, 0, 0, 0, 0, 0, 2, 2]


@pytest.mark.django_db
def test_the_all_pairs_snapshot_aggregated_in_sql_matches_the_python_computation(
    pair, organization
):
    from tests.factories import PairFactory

    other = PairFactory(student__organization=organization, subject=pair.subject)
    _checks(pair, EXAMPLE[:3])
    _checks(other, EXAMPLE[3:])

    snapshot = calibration_all_pairs_write(day=DAY, now=at(23))

    assert snapshot.pair is None
    assert snapshot.predicted_checks == 6
    assert snapshot.ece == pytest.approx(2.05 / 6, abs=1e-6)


@pytest.mark.django_db
def test_a_second_snapshot_of_the_same_night_is_not_written(pair):
    _checks(pair, EXAMPLE)

    first = calibration_snapshot_write(pair=pair, day=DAY, now=at(23))
    second = calibration_snapshot_write(pair=pair, day=DAY, now=at(23))

    assert first.pk == second.pk
    assert CalibrationSnapshot.objects.filter(pair=pair).count() == 1


@pytest.mark.django_db
def test_updating_a_calibration_snapshot_is_rejected_by_the_database(pair):
    from django.db import ProgrammingError, connection

    snapshot = calibration_snapshot_write(pair=pair, day=DAY, now=timezone.now())

    with pytest.raises(ImmutableRecordError):
        snapshot.save()
    with pytest.raises(ProgrammingError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE tutorbrain_calibrationsnapshot SET ece = 0 WHERE id = %s", [snapshot.pk]
        )
