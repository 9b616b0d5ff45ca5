"""Reads of the nightly cycle's records: the self-model's limits, runs, snapshots."""

from __future__ import annotations

from memory.models import Pair
from tutorbrain.models import CalibrationSnapshot, NightlyRun, SelfModel
from tutorbrain.nightly.calibration import within_error
from tutorbrain.nightly.rules import CALIBRATION_MAX_ECE, CALIBRATION_MIN_PREDICTIONS

UNCALIBRATED_SENTENCE = (
    "Confidence figures are a ranking, not a probability: fewer than "
    f"{CALIBRATION_MIN_PREDICTIONS} checks with a predicted mastery are on record."
)


UNCALIBRATED_BELIEFS_SENTENCE = (
    "Confidence figures are a ranking, not a probability: fewer than "
    f"{CALIBRATION_MIN_PREDICTIONS} checks have followed a belief to test its p_right."
)


def limits_sentence_for(
    *,
    calibrated: bool,
    predicted_checks: int,
    ece: float | None,
    belief_predictions: int = 0,
    belief_ece: float | None = None,
) -> str:
    """The self-model's limits sentence from its numbers (shared by the selector and admin).

    "Calibrated" is earned twice (R-7.3, issue #12): by the tutor's predicted mastery and
    by the beliefs' own p_right against the verdicts that followed, each from five checks
    and within CALIBRATION_MAX_ECE of its outcomes; each error is stated. The errors are
    read from the numbers, so a self-model stored before that bound obeys it too.
    """
    if predicted_checks < CALIBRATION_MIN_PREDICTIONS or ece is None:
        return UNCALIBRATED_SENTENCE
    if belief_predictions < CALIBRATION_MIN_PREDICTIONS or belief_ece is None:
        return UNCALIBRATED_BELIEFS_SENTENCE
    if not (calibrated and within_error(ece) and within_error(belief_ece)):
        return (
            f"Confidence figures are a ranking, not a probability: measured on "
            f"{predicted_checks} checks with a predicted mastery (expected calibration "
            f"error {ece:.2f}) and {belief_predictions} checks that followed a belief "
            f"(p_right, {belief_ece:.2f}), one runs more than {CALIBRATION_MAX_ECE:.2f} off "
            "what happened."
        )
    return (
        f"Confidence figures are calibrated on {predicted_checks} checks with a predicted "
        f"mastery (expected calibration error {ece:.2f}) and on {belief_predictions} checks "
        f"that followed a belief (p_right, expected calibration error {belief_ece:.2f}); "
        "0 is perfect."
    )


def self_model_limits_sentence(*, pair: Pair | None) -> str:
    """The sentence the block's HOW TO USE line carries about confidence (R-7.6).

    Until the pair's self-model is calibrated (R-7.3: five checks with a prediction)
    it says to treat confidence as a ranking, not a probability; afterwards it states
    the expected calibration error. One query; a pair with no nightly cycle yet (or no
    pair at all) is uncalibrated.
    """
    if pair is None:
        return UNCALIBRATED_SENTENCE
    return limits_sentence_of(
        SelfModel.objects.filter(pair_id=pair.pk).values_list(*SELF_MODEL_FIGURES).first()
    )


# The self-model's columns the limits sentence reads, in limits_sentence_of's order.
SELF_MODEL_FIGURES = ("calibrated", "predicted_checks", "ece", "belief_predictions", "belief_ece")


def limits_sentence_of(figures: tuple | None) -> str:
    """The limits sentence from a self-model's SELF_MODEL_FIGURES; None: no self-model
    yet (no nightly cycle), so uncalibrated."""
    if figures is None:
        return UNCALIBRATED_SENTENCE
    return limits_sentence_for(**dict(zip(SELF_MODEL_FIGURES, figures, strict=True)))


def self_model_get(*, pair: Pair) -> SelfModel | None:
    return SelfModel.objects.filter(pair=pair).select_related("calibration", "last_run").first()


def nightly_run_last(*, pair: Pair) -> NightlyRun | None:
    return NightlyRun.objects.filter(pair=pair).order_by("-day").first()


def calibration_latest(*, pair: Pair | None) -> CalibrationSnapshot | None:
    """The newest snapshot of a pair, or over all pairs when `pair` is None."""
    qs = (
        CalibrationSnapshot.objects.filter(pair__isnull=True)
        if pair is None
        else (CalibrationSnapshot.objects.filter(pair=pair))
    )
    return qs.order_by("-day").first()
