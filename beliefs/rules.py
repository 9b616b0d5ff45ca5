"""The rules that turn checks into beliefs (R-4), as named constants and pure functions.

Why a Beta posterior with a recency weight (docs/beliefs.md has the longer version):

* A check is a yes/no observation of "does the student get this concept right?". The Beta
  distribution is the conjugate posterior of exactly that, so the rule is a sum of counts
  anyone can recompute by hand from the listed checks: no fitted parameter, no model.
* A uniform prior Beta(1, 1) means one check is never certainty: one right answer gives
  "understands, 0.75", not 1.0.
* Students learn (and forget), so an old check should count less than a recent one. Each
  check's weight halves every `RECENCY_HALF_LIFE_DAYS` *counted back from the newest check
  of the concept* (not from the wall clock): the belief depends only on the logged checks,
  so a replay (R-4.5) reproduces it exactly. Time passing without checks is handled
  separately by decay (R-7.2), which is a supersession with its own reason.
* The confidence is the posterior probability that the claim is true: for "understands",
  P(p > 0.5); for "struggles", P(p <= 0.5). That is what the block's "confidence 0-1" line
  promises, and it is 0.5 exactly when the evidence is balanced.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

# Recorded on every re-derivation so a reader knows which rules produced a belief.
RULES_VERSION = "beta-recency-1"

# Uniform prior over the chance of a right answer.
PRIOR_RIGHT = 1.0
PRIOR_WRONG = 1.0
# What one check adds to (right, wrong). A partial answer is half of each.
VERDICT_WEIGHTS: dict[str, tuple[float, float]] = {
    "right": (1.0, 0.0),
    "partial": (0.5, 0.5),
    "wrong": (0.0, 1.0),
}
# A check this many days older than the newest check of the concept counts half.
RECENCY_HALF_LIFE_DAYS = 30.0
# "understands" when the posterior mean chance of a right answer is above this.
UNDERSTANDS_ABOVE = 0.5
# Confidence is stored and compared at this precision: a change smaller than this is
# not a change of mind, so it does not supersede the belief.
CONFIDENCE_DECIMALS = 2

# Decay: a belief untouched this long loses this share of its confidence, once,
# and waits for the next check to confirm it.
BELIEF_DECAY_AFTER_DAYS = 45
BELIEF_DECAY_FACTOR = 0.85

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class CheckPoint:
    """One logged check as the rule sees it."""

    episode_id: int
    occurred_at: datetime
    verdict: str


@dataclass(frozen=True)
class Derived:
    claim: str  # Belief.Claim value
    confidence: float
    right_weight: float
    wrong_weight: float


def recency_weight(age_days: float) -> float:
    return 0.5 ** (max(age_days, 0.0) / RECENCY_HALF_LIFE_DAYS)


def round_confidence(value: float) -> float:
    return round(min(max(value, 0.0), 1.0), CONFIDENCE_DECIMALS)


def derive(points: Sequence[CheckPoint]) -> Derived:
    """The claim and confidence that a concept's checks support (order does not matter)."""
    if not points:
        raise ValueError("a belief needs at least one check")
    newest = max(p.occurred_at for p in points)
    right, wrong = PRIOR_RIGHT, PRIOR_WRONG
    for point in points:
        weight = recency_weight((newest - point.occurred_at).total_seconds() / SECONDS_PER_DAY)
        add_right, add_wrong = VERDICT_WEIGHTS[point.verdict]
        right += weight * add_right
        wrong += weight * add_wrong
    mean = right / (right + wrong)
    # P(p <= 0.5) under Beta(right, wrong).
    below = regularized_incomplete_beta(UNDERSTANDS_ABOVE, right, wrong)
    if mean > UNDERSTANDS_ABOVE:
        claim, confidence = "understands", 1.0 - below
    else:
        claim, confidence = "struggles", below
    return Derived(
        claim=claim,
        confidence=round_confidence(confidence),
        right_weight=right - PRIOR_RIGHT,
        wrong_weight=wrong - PRIOR_WRONG,
    )


def decayed(confidence: float) -> float:
    return round_confidence(confidence * BELIEF_DECAY_FACTOR)


def is_untouched(*, last_evidence_at: datetime | None, now: datetime) -> bool:
    if last_evidence_at is None:
        return False
    return (now - last_evidence_at).total_seconds() >= BELIEF_DECAY_AFTER_DAYS * SECONDS_PER_DAY


# --- The regularized incomplete beta function I_x(a, b) -------------------------------
# Continued fraction (modified Lentz), as in Numerical Recipes §6.4. Written here rather
# than adding scipy for one function; tests pin it against closed forms.

_CF_MAX_ITERATIONS = 300
_CF_EPSILON = 3e-14
_CF_TINY = 1e-300


def _beta_continued_fraction(x: float, a: float, b: float) -> float:
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _CF_TINY else _CF_TINY)
    h = d
    for m in range(1, _CF_MAX_ITERATIONS + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _CF_TINY else _CF_TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _CF_TINY else _CF_TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _CF_TINY else _CF_TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _CF_TINY else _CF_TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _CF_EPSILON:
            break
    return h


def regularized_incomplete_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b) = P(X <= x) for X ~ Beta(a, b), a, b > 0."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(x, a, b) / a
    return 1.0 - front * _beta_continued_fraction(1.0 - x, b, a) / b
