"""Calibration of the tutor's predicted mastery against check verdicts (R-7.3). Pure.

Each check that carried a predicted mastery p gives one pair (p, y) with the verdict
as an outcome y: right = 1, partial = 0.5, wrong = 0. The predictions are put in
CALIBRATION_BINS equal-width bins over [0, 1] (bin i holds i/B <= p < (i+1)/B; the
last bin also holds p = 1). For each bin the reliability curve gives the mean
prediction and the mean outcome; the expected calibration error is

    ECE = sum over bins b of (n_b / N) * |mean_outcome_b - mean_predicted_b|

(Naeini et al. 2015; Guo et al. 2017), 0 when predictions match outcomes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from tutorbrain.nightly.rules import (
    CALIBRATION_BINS,
    CALIBRATION_MAX_ECE,
    CALIBRATION_MIN_PREDICTIONS,
    VERDICT_OUTCOME,
)


@dataclass(frozen=True)
class Bin:
    lower: float
    upper: float
    count: int
    mean_predicted: float | None
    mean_outcome: float | None

    def as_dict(self) -> dict:
        return {
            "lower": self.lower,
            "upper": self.upper,
            "count": self.count,
            "mean_predicted": self.mean_predicted,
            "mean_outcome": self.mean_outcome,
        }


@dataclass(frozen=True)
class Calibration:
    predicted_checks: int
    ece: float | None
    bins: list[Bin] = field(default_factory=list)

    @property
    def calibrated(self) -> bool:
        return self.predicted_checks >= CALIBRATION_MIN_PREDICTIONS and within_error(self.ece)


def within_error(ece: float | None) -> bool:
    """Whether an expected calibration error is small enough to call figures calibrated."""
    return ece is not None and ece <= CALIBRATION_MAX_ECE


def bin_index(predicted: float, bins: int = CALIBRATION_BINS) -> int:
    return min(int(predicted * bins), bins - 1)


def verdict_outcome(verdict: str) -> float:
    return VERDICT_OUTCOME[verdict]


def calibration_compute(
    pairs: Iterable[tuple[float, str]], *, bins: int = CALIBRATION_BINS
) -> Calibration:
    """Bins, reliability curve and ECE of (predicted mastery, verdict) pairs."""
    sums_p = [0.0] * bins
    sums_y = [0.0] * bins
    counts = [0] * bins
    for predicted, verdict in pairs:
        i = bin_index(predicted, bins)
        sums_p[i] += predicted
        sums_y[i] += verdict_outcome(verdict)
        counts[i] += 1
    return calibration_from_sums(sums_p, sums_y, counts)


def calibration_from_sums(
    sums_p: list[float], sums_y: list[float], counts: list[int]
) -> Calibration:
    """The same from per-bin sums (the all-pairs snapshot aggregates them in SQL)."""
    bins = len(counts)
    total = sum(counts)
    result_bins = []
    ece = 0.0
    for i in range(bins):
        n = counts[i]
        mean_p: float | None = None
        mean_y: float | None = None
        if n:
            mean_p, mean_y = sums_p[i] / n, sums_y[i] / n
            ece += (n / total) * abs(mean_y - mean_p)
        result_bins.append(
            Bin(
                lower=round(i / bins, 6),
                upper=round((i + 1) / bins, 6),
                count=n,
                mean_predicted=mean_p,
                mean_outcome=mean_y,
            )
        )
    return Calibration(
        predicted_checks=total, ece=round(ece, 6) if total else None, bins=result_bins
    )
