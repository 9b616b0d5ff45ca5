"""The learning term of p_right: students improve with practice (issue #12).

A Beta posterior over a student's own checks treats every answer as a draw from a fixed
rate: it cannot see that the fifth attempt at a concept is more often right than the
first. This module fits, per subject and over the whole population, a
performance-factor-analysis model (Pavlik, Cen & Koedinger 2009) of every logged check:

    logit p(right) = b + b_c + w · log(1 + W) + f · log(1 + F) + l · A + r · R

* W, F: the student's earlier right and wrong answers on the concept (a partial is half
  of each), so practice that went well and practice that went badly count differently;
* b_c: the concept's offset from the subject's intercept b (its difficulty), shrunk
  towards 0 by a ridge so that a concept with few checks leans on the subject;
* A: the student's level, Σ (y − m_k) / (N + LEVEL_PSEUDO_CHECKS) over their checks on
  the subject's *other* concepts (m_k: concept k's mean), so a student who does well
  elsewhere starts a new concept higher;
* R: how the student's *recent* sittings on the concept went, their share right with
  each earlier sitting weighing RECENT_SITTING_DECAY times the one after it, less ½
  (RECENT_PSEUDO_CHECKS at ½ keep one answer from saying much): W and F count all
  practice alike, so a student who failed for weeks and has now got it looks like one
  who got it and has since lost it (recency-weighted PFA, Galyardt & Goldin 2015). The
  answers of one sitting weigh the same, so their order within it cannot matter.

The coefficients are fitted by Newton's method (iteratively reweighted least squares) on
a few thousand rows in numpy, deterministically: no sampling, no generative model.
Each training row is one logged check with the features as they were *before* it.

A belief is read at the start of a sitting and must hold for the answers of that
sitting, but the fit above learns each answer from the one just before it, most often
minutes earlier in the same sitting. So a belief's logit is then recalibrated (Platt
scaling, `shift + scale · logit`) on the subject's own history as a belief would have
met it: every check of a later sitting on a concept (SESSION_GAP_MINUTES after the
student's previous check of it) against the logit as it stood when that sitting began.
The logit before any practice (the prior of a concept the student has not been checked
on) is recalibrated the same way, by its own two numbers, on the answers it must hold
for: every check of the student's first sitting on a concept against the logit before
that sitting's first answer. A fitted logit learns a first answer well but the answers
after it, minutes later in the same sitting, partly from the first; a prior read before
the sitting must forecast all of them.
Fitted by the nightly cycle (beliefs.services.beliefs_fit_learning) and stored
(BeliefLearningFit); derivation reads the newest fit of the subject and falls back to
the Beta posterior (beliefs.rules) while a subject has too little data for one.

Pure: no database.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

# Checks of one student on one concept closer than this are one sitting (session).
SESSION_GAP_MINUTES = 60.0
# A subject needs this many routed checks from this many students before a fit is made
# (below that, the Beta posterior alone: too few rows to tell practice from chance).
LEARNING_MIN_CHECKS = 200
LEARNING_MIN_STUDENTS = 20
# A subject's beliefs are re-derived with its fit the first time it has one, and again
# whenever a fit is made from this many times the checks of the last fit that did: a
# history imported before any fit (or that grew a lot since) is then derived with what
# the subject's data teach, at most 1 + log2(checks / 200) times over a subject's life.
REDERIVE_WHEN_CHECKS_GROW = 2.0
# The student's level is shrunk towards 0 by this many pseudo-checks.
LEVEL_PSEUDO_CHECKS = 10.0
# R: each earlier sitting on the concept weighs this much of the one after it, and
# this many pseudo-answers at ½ are added to the sittings' answers.
RECENT_SITTING_DECAY = 0.5
RECENT_PSEUDO_CHECKS = 2.0
# A concept's mean (for the level) is shrunk towards the subject's rate by this many
# pseudo-checks.
CONCEPT_MEAN_PSEUDO_CHECKS = 3.0
# Ridge (L2) on the concepts' offsets: a concept with a handful of checks stays near the
# subject's intercept. A tiny ridge on the other coefficients keeps Newton's steps
# defined when a feature has no spread (everyone on their first attempt).
CONCEPT_OFFSET_RIDGE = 1.0
COEFFICIENT_RIDGE = 1e-3
NEWTON_STEPS = 25
NEWTON_TOLERANCE = 1e-8
# A recalibration needs this many checks to fit on; below that the fitted
# logit is used as it is. Its two numbers are pulled towards "no change" (0, 1) by a
# ridge worth a few checks, which matters only near that minimum.
CALIBRATION_MIN_CHECKS = 200
CALIBRATION_RIDGE = 5.0

OUTCOME: dict[str, float] = {"right": 1.0, "partial": 0.5, "wrong": 0.0}


@dataclass(frozen=True)
class LoggedOutcome:
    """One routed check of a student, as the fit sees it."""

    concept_id: int
    occurred_at: datetime
    episode_id: int
    verdict: str


@dataclass(frozen=True)
class LearningModel:
    """The fitted coefficients of a subject (see the module docstring)."""

    intercept: float
    wins: float
    fails: float
    level: float
    offsets: Mapping[int, float]
    means: Mapping[int, float]
    rate: float
    checks: int = 0
    students: int = 0
    # The recalibration of a belief's logit (module docstring); a fit stored before it
    # existed reads as none.
    shift: float = 0.0
    scale: float = 1.0
    # The recalibration of the logit before practice (module docstring); likewise.
    prior_shift: float = 0.0
    prior_scale: float = 1.0
    # The weight of R, the recent sittings' share right (module docstring); a fit
    # stored before it existed reads as 0, the model it was.
    recent: float = 0.0

    def level_of(self, concept_id: int, own: Mapping[int, tuple[float, int]]) -> float:
        """A: the student's excess over the concepts' means on their *other* concepts."""
        excess = checks = 0.0
        for other, (right, n) in own.items():
            if other == concept_id or n <= 0:
                continue
            excess += right - n * self.means.get(other, self.rate)
            checks += n
        return excess / (checks + LEVEL_PSEUDO_CHECKS)

    def base_logit(self, concept_id: int, own: Mapping[int, tuple[float, int]]) -> float:
        """The logit before any practice on the concept: b + b_c + l · A."""
        return (
            self.intercept
            + self.offsets.get(concept_id, 0.0)
            + self.level * self.level_of(concept_id, own)
        )

    def prior_logit(self, concept_id: int, own: Mapping[int, tuple[float, int]]) -> float:
        """The recalibrated logit of the student's first sitting on the concept: the
        prior of a concept they have not been checked on."""
        return self.prior_shift + self.prior_scale * self.base_logit(concept_id, own)

    def as_json(self) -> dict:
        return {
            "intercept": self.intercept,
            "wins": self.wins,
            "fails": self.fails,
            "level": self.level,
            "offsets": {str(k): v for k, v in self.offsets.items()},
            "means": {str(k): v for k, v in self.means.items()},
            "rate": self.rate,
            "checks": self.checks,
            "students": self.students,
            "shift": self.shift,
            "scale": self.scale,
            "prior_shift": self.prior_shift,
            "prior_scale": self.prior_scale,
            "recent": self.recent,
        }

    @classmethod
    def from_json(cls, data: Mapping) -> LearningModel:
        return cls(
            intercept=float(data["intercept"]),
            wins=float(data["wins"]),
            fails=float(data["fails"]),
            level=float(data["level"]),
            offsets={int(k): float(v) for k, v in data["offsets"].items()},
            means={int(k): float(v) for k, v in data["means"].items()},
            rate=float(data["rate"]),
            checks=int(data.get("checks", 0)),
            students=int(data.get("students", 0)),
            shift=float(data.get("shift", 0.0)),
            scale=float(data.get("scale", 1.0)),
            prior_shift=float(data.get("prior_shift", 0.0)),
            prior_scale=float(data.get("prior_scale", 1.0)),
            recent=float(data.get("recent", 0.0)),
        )


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def practice_logit(
    wins: float, fails: float, base: float, w: float, f: float, recent: float = 0.0, r: float = 0.0
) -> float:
    """The fitted logit after W right and F wrong answers whose recent sittings give
    `recent` (R, see recent_share), R's weight being `r` (before recalibration)."""
    return base + w * math.log1p(wins) + f * math.log1p(fails) + r * recent


def recent_share(sittings: Sequence[tuple[float, float]]) -> float:
    """R: the share right of a student's sittings on a concept, (right, answers) each,
    oldest first, each weighing RECENT_SITTING_DECAY times the next, with
    RECENT_PSEUDO_CHECKS answers at ½; less ½, so no practice at all gives 0."""
    right = answers = 0.0
    for right_here, answers_here in sittings:
        right = right * RECENT_SITTING_DECAY + right_here
        answers = answers * RECENT_SITTING_DECAY + answers_here
    return (right + 0.5 * RECENT_PSEUDO_CHECKS) / (answers + RECENT_PSEUDO_CHECKS) - 0.5


def _concept_means(histories: Mapping[int, Sequence[LoggedOutcome]]) -> tuple[dict, float]:
    sums: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for rows in histories.values():
        for r in rows:
            sums[r.concept_id][0] += OUTCOME[r.verdict]
            sums[r.concept_id][1] += 1.0
    right = sum(s[0] for s in sums.values())
    total = sum(s[1] for s in sums.values())
    rate = right / total if total else 0.5
    means = {
        c: (s[0] + CONCEPT_MEAN_PSEUDO_CHECKS * rate) / (s[1] + CONCEPT_MEAN_PSEUDO_CHECKS)
        for c, s in sums.items()
    }
    return means, rate


@dataclass(frozen=True)
class TrainingRows:
    """Per logged check: its concept, (log(1+W), log(1+F), A, R) before it, its outcome,
    the row of the first check of its sitting when the student had checked the concept
    in an earlier sitting (−1 otherwise), and the row of the student's first check of
    the concept when the check is in that first sitting (−1 otherwise)."""

    concepts: list[int]
    features: np.ndarray
    outcomes: np.ndarray
    sitting_start: np.ndarray
    first_sitting_start: np.ndarray


def training_rows(
    histories: Mapping[int, Sequence[LoggedOutcome]], means: Mapping[int, float], rate: float
) -> TrainingRows:
    concepts: list[int] = []
    features: list[tuple[float, float, float, float]] = []
    outcomes: list[float] = []
    starts: list[int] = []
    first_starts: list[int] = []
    gap = timedelta(minutes=SESSION_GAP_MINUTES)
    for rows in histories.values():
        wins: dict[int, float] = defaultdict(float)
        fails: dict[int, float] = defaultdict(float)
        excess: dict[int, float] = defaultdict(float)  # per concept: Σ (y − m)
        counts: dict[int, float] = defaultdict(float)
        last_at: dict[int, datetime] = {}
        start: dict[int, int] = {}  # per concept: the row its current later sitting began at
        sittings: dict[int, list[list[float]]] = defaultdict(list)  # per concept: [right, n]
        first: dict[int, int] = {}  # per concept: the row of the student's first check
        total_excess = total_checks = 0.0
        for r in sorted(rows, key=lambda r: (r.occurred_at, r.episode_id)):
            c = r.concept_id
            y = OUTCOME[r.verdict]
            if c in last_at and r.occurred_at - last_at[c] >= gap:
                start[c] = len(concepts)
            if c not in last_at or r.occurred_at - last_at[c] >= gap:
                sittings[c].append([0.0, 0.0])
            last_at[c] = r.occurred_at
            first.setdefault(c, len(concepts))
            level = (total_excess - excess[c]) / (total_checks - counts[c] + LEVEL_PSEUDO_CHECKS)
            concepts.append(c)
            recent = recent_share([(a, n) for a, n in sittings[c] if n > 0])
            features.append((math.log1p(wins[c]), math.log1p(fails[c]), level, recent))
            outcomes.append(y)
            starts.append(start.get(c, -1))
            first_starts.append(first[c] if c not in start else -1)
            wins[c] += y
            fails[c] += 1.0 - y
            sittings[c][-1][0] += y
            sittings[c][-1][1] += 1.0
            d = y - means.get(c, rate)
            excess[c] += d
            counts[c] += 1.0
            total_excess += d
            total_checks += 1.0
    return TrainingRows(
        concepts=concepts,
        features=np.array(features, dtype=float).reshape(-1, 4),
        outcomes=np.array(outcomes, dtype=float),
        sitting_start=np.array(starts, dtype=int),
        first_sitting_start=np.array(first_starts, dtype=int),
    )


def _newton(
    x: np.ndarray, y: np.ndarray, ridge: np.ndarray, centre: np.ndarray | None = None
) -> np.ndarray:
    """Ridge-penalised logistic regression with fractional outcomes (a partial is ½);
    the ridge pulls the coefficients towards `centre` (0 by default)."""
    centre = np.zeros(x.shape[1]) if centre is None else centre
    beta = centre.copy()
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        gradient = x.T @ (p - y) + ridge * (beta - centre)
        hessian = (x * (p * (1.0 - p))[:, None]).T @ x + np.diag(ridge)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if float(np.max(np.abs(step))) < NEWTON_TOLERANCE:
            break
    return beta


def _recalibration(
    logits: np.ndarray, starts: np.ndarray, outcomes: np.ndarray
) -> tuple[float, float]:
    """(shift, scale) mapping the logit at a sitting's start (`starts`: its row, −1 for a
    check not counted) onto that sitting's answers (module docstring); (0, 1) when too
    few checks count or the fit makes no sense (no finite numbers, or a scale that
    reverses the order)."""
    counted = np.flatnonzero(starts >= 0)
    if len(counted) < CALIBRATION_MIN_CHECKS:
        return 0.0, 1.0
    x = np.column_stack([np.ones(len(counted)), logits[starts[counted]]])
    shift, scale = _newton(
        x, outcomes[counted], np.full(2, CALIBRATION_RIDGE), centre=np.array([0.0, 1.0])
    )
    if not (math.isfinite(shift) and math.isfinite(scale)) or scale <= 0.0:
        return 0.0, 1.0
    return float(shift), float(scale)


def fit(histories: Mapping[int, Sequence[LoggedOutcome]]) -> LearningModel | None:
    """The subject's learning model from every student's routed checks (student → rows).

    None when the subject has fewer than LEARNING_MIN_CHECKS checks or
    LEARNING_MIN_STUDENTS students with checks, or the fit does not converge to finite
    numbers.
    """
    histories = {k: v for k, v in histories.items() if v}
    checks = sum(len(v) for v in histories.values())
    if checks < LEARNING_MIN_CHECKS or len(histories) < LEARNING_MIN_STUDENTS:
        return None
    means, rate = _concept_means(histories)
    rows = training_rows(histories, means, rate)
    index = {c: i for i, c in enumerate(sorted(set(rows.concepts)))}
    n, k = len(rows.concepts), len(index)
    # Columns: intercept, one offset per concept, log(1+W), log(1+F), A, R.
    x = np.zeros((n, 1 + k + 4))
    x[:, 0] = 1.0
    x[np.arange(n), 1 + np.array([index[c] for c in rows.concepts])] = 1.0
    x[:, 1 + k :] = rows.features
    ridge = np.full(x.shape[1], COEFFICIENT_RIDGE)
    ridge[1 : 1 + k] = CONCEPT_OFFSET_RIDGE
    beta = _newton(x, rows.outcomes, ridge)
    if not np.all(np.isfinite(beta)):
        return None
    logits = x @ beta
    shift, scale = _recalibration(logits, rows.sitting_start, rows.outcomes)
    # At the first check of a concept W = F = 0: its logit is the one before practice.
    prior_shift, prior_scale = _recalibration(logits, rows.first_sitting_start, rows.outcomes)
    return LearningModel(
        intercept=float(beta[0]),
        offsets={c: float(beta[1 + i]) for c, i in index.items()},
        wins=float(beta[1 + k]),
        fails=float(beta[2 + k]),
        level=float(beta[3 + k]),
        recent=float(beta[4 + k]),
        means=means,
        rate=rate,
        checks=checks,
        students=len(histories),
        shift=shift,
        scale=scale,
        prior_shift=prior_shift,
        prior_scale=prior_scale,
    )


def histories_from_rows(
    rows: Iterable[tuple[int, int, int, datetime, str]],
) -> dict[int, list[LoggedOutcome]]:
    """(pair, concept, episode, occurred_at, verdict) rows → per pair, their checks."""
    out: dict[int, list[LoggedOutcome]] = defaultdict(list)
    for pair_id, concept_id, episode_id, at, verdict in rows:
        if verdict in OUTCOME:
            out[pair_id].append(LoggedOutcome(concept_id, at, episode_id, verdict))
    return dict(out)
