"""The rules that turn checks into beliefs (R-4), as named constants and pure functions.

A belief's number is `p_right`: the predicted probability that the student answers the
next check on the concept right (SPEC R-4.1). docs/beliefs.md has the longer version and
the measurements behind every constant; in short:

* **Empirical Bayes.** `p_right` is the mean of a Beta posterior whose prior is the
  concept's accuracy over the subject's *other* students (what the concept's difficulty
  looks like here), shrunk towards the subject's overall rate while few students have
  data. A student with one right answer on a hard concept is not "1.0": they lean on
  what the others show. The prior's strength (how many checks the prior is worth) is
  estimated from the same rows by the method of moments of the beta-binomial (how much
  students really differ on a concept, beyond the noise of few checks), within bounds.
* **Recency.** Students learn and forget: a check's weight halves every
  `RECENCY_HALF_LIFE_DAYS`, counted back from the concept's newest check (not the wall
  clock, so a replay reproduces the belief exactly).
* **Sessions.** Checks less than `SESSION_GAP_MINUTES` apart form one session and all
  weigh as the session's last check: the order of checks minutes apart cannot matter.
* **Partial = half right**, as everywhere in the product (calibration too).
* **The claim follows from `p_right`**: understands above `UNDERSTANDS_ABOVE`, struggles
  otherwise; the confidence shown is `p_right` for understands, `1 − p_right` for
  struggles.
* **Decay** moves `p_right` `DECAY_SHARE` of the way back to the concept's prior: never
  past it, and never across the claim threshold (less certain, not the opposite claim).
* **Practice** (beliefs.learning): once the subject has a fitted learning model, the
  prior is the model's prediction before any practice on the concept (its difficulty and
  the student's level) and `p_right` adds the weights of the student's earlier right and
  wrong answers on it, instead of the Beta posterior: students improve with practice,
  which a fixed rate cannot show. Everything else here (claim, confidence, decay) holds.

A predicted mastery the tutor sends with a check is not an input here: it is evidence
for calibration (R-7.3), where the beliefs' own `p_right` is measured too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from beliefs.learning import (
    SESSION_GAP_MINUTES,
    LearningModel,
    practice_logit,
    recent_share,
    sigmoid,
)

# Recorded on every re-derivation so a reader knows which rules produced a belief.
RULES_VERSION = "eb-beta-learning-6"

# A verdict as an outcome: a partial answer is half right.
VERDICT_OUTCOME: dict[str, float] = {"right": 1.0, "partial": 0.5, "wrong": 0.0}
# A check this many days older than the newest check of the concept counts half.
RECENCY_HALF_LIFE_DAYS = 30.0
# "understands" when p_right (rounded) is above this; "struggles" otherwise.
UNDERSTANDS_ABOVE = 0.5
# p_right and confidence are stored and compared at this precision: a change smaller
# than this is not a change of mind, so it does not supersede the belief.
CONFIDENCE_DECIMALS = 2

# --- The prior (empirical Bayes) ------------------------------------------------------
# With no other student's data at all, the prior is this rate...
SUBJECT_RATE_DEFAULT = 0.5
# ... and the subject's observed rate is shrunk towards it by this many pseudo-checks.
SUBJECT_RATE_PSEUDO_CHECKS = 10.0
# A concept's accuracy over other students is shrunk towards the subject's rate by this
# many pseudo-students: with one other student the prior is mostly the subject's rate.
CONCEPT_PRIOR_PSEUDO_STUDENTS = 3.0
# How many checks the prior is worth. Estimated from data (method of moments) when at
# least PRIOR_STRENGTH_MIN_STUDENTS other students have checks on the subject's
# concepts, kept within [MIN, MAX]; this default otherwise.
PRIOR_STRENGTH_DEFAULT = 4.0
PRIOR_STRENGTH_MIN = 2.0
PRIOR_STRENGTH_MAX = 30.0
PRIOR_STRENGTH_MIN_STUDENTS = 20
# The student's general level: how far their answers on the subject's *other* concepts
# ran above or below those concepts' priors (right − n × prior, summed) shifts the prior
# mean, shrunk by K pseudo-checks. K is estimated from the other students (how much
# students' levels really differ, beyond the noise of their checks: K = per-check
# variance / variance of levels) once ABILITY_MIN_STUDENTS have two checks or more,
# within [MIN, MAX]; no shift at all when their levels do not differ; this default before.
ABILITY_PSEUDO_CHECKS = 20.0
ABILITY_PSEUDO_CHECKS_MIN = 5.0
ABILITY_PSEUDO_CHECKS_MAX = 500.0
ABILITY_MIN_STUDENTS = 20
# The shifted prior mean stays inside these bounds (never a certainty).
PRIOR_MEAN_MIN = 0.02
PRIOR_MEAN_MAX = 0.98

# Decay: a belief untouched this long moves this share of the way back to the
# concept's prior, once, and waits for the next check to confirm it.
BELIEF_DECAY_AFTER_DAYS = 45
DECAY_SHARE = 0.15

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class CheckPoint:
    """One logged check as the rule sees it."""

    episode_id: int
    occurred_at: datetime
    verdict: str


@dataclass(frozen=True)
class Practice:
    """The learning term (beliefs.learning) for one student and concept: the logit before
    any practice on it, the weights of earlier right and wrong answers, and of how the
    recent sittings went."""

    base_logit: float
    wins: float
    fails: float
    # The recalibration of a belief's logit (beliefs.learning).
    shift: float = 0.0
    scale: float = 1.0
    recent: float = 0.0


@dataclass(frozen=True)
class Prior:
    """What the subject's other students show on a concept, as a Beta prior; with the
    subject's fitted learning model, `practice` replaces the Beta posterior and
    `strength` is None (the prior is not worth a number of checks there)."""

    mean: float
    strength: float | None
    practice: Practice | None = None


DEFAULT_PRIOR = Prior(mean=SUBJECT_RATE_DEFAULT, strength=PRIOR_STRENGTH_DEFAULT)


@dataclass(frozen=True)
class Derived:
    claim: str  # Belief.Claim value
    confidence: float
    p_right: float
    prior: Prior
    right_count: float  # unweighted: right 1, partial ½
    check_count: int


def round_probability(value: float) -> float:
    return round(min(max(value, 0.0), 1.0), CONFIDENCE_DECIMALS)


def claim_of(p_right: float) -> str:
    return "understands" if round_probability(p_right) > UNDERSTANDS_ABOVE else "struggles"


def confidence_of(claim: str, p_right: float) -> float:
    """The number shown beside a claim: p_right for understands, 1 − p_right for struggles."""
    p = round_probability(p_right)
    return p if claim == "understands" else round_probability(1.0 - p)


def p_right_of(claim: str, confidence: float) -> float:
    """The inverse of confidence_of (for rows written with a claim and a confidence only)."""
    return round_probability(confidence if claim == "understands" else 1.0 - confidence)


def recency_weight(age_days: float) -> float:
    return 0.5 ** (max(age_days, 0.0) / RECENCY_HALF_LIFE_DAYS)


def session_times(points: Sequence[CheckPoint]) -> dict[int, datetime]:
    """Each check's session time: the last check of its run of checks less than
    SESSION_GAP_MINUTES apart. Depends only on the set of times, not on their order."""
    gap = timedelta(minutes=SESSION_GAP_MINUTES)
    ordered = sorted(points, key=lambda p: (p.occurred_at, p.episode_id))
    out: dict[int, datetime] = {}
    session: list[CheckPoint] = []
    for point in ordered:
        if session and point.occurred_at - session[-1].occurred_at >= gap:
            for member in session:
                out[member.episode_id] = session[-1].occurred_at
            session = []
        session.append(point)
    for member in session:
        out[member.episode_id] = session[-1].occurred_at
    return out


def posterior_p_right(points: Sequence[CheckPoint], prior: Prior) -> float:
    """Beta posterior mean of a right answer: prior pseudo-checks plus weighted outcomes.

    With a learning model (prior.practice) the prediction is the fitted model's instead:
    the counts of earlier right and wrong answers and the share right of the recent
    sessions move the logit (beliefs.learning). Sums over the checks of a session, so
    their order within it does not matter.
    """
    sessions = session_times(points)
    if prior.practice is not None:
        wins = sum(VERDICT_OUTCOME[p.verdict] for p in points)
        practice = prior.practice
        logit = practice.shift + practice.scale * practice_logit(
            wins,
            len(points) - wins,
            practice.base_logit,
            practice.wins,
            practice.fails,
            recent_share(_session_counts(points, sessions)),
            practice.recent,
        )
        return min(max(sigmoid(logit), PRIOR_MEAN_MIN), PRIOR_MEAN_MAX)
    if prior.strength is None:
        raise ValueError("a Beta prior needs a strength")
    newest = max(sessions.values())
    right, total = prior.strength * prior.mean, prior.strength
    for point in points:
        age = (newest - sessions[point.episode_id]).total_seconds() / SECONDS_PER_DAY
        weight = recency_weight(age)
        right += weight * VERDICT_OUTCOME[point.verdict]
        total += weight
    return right / total


def _session_counts(
    points: Sequence[CheckPoint], sessions: Mapping[int, datetime]
) -> list[tuple[float, float]]:
    """(right, checks) of each session, oldest first."""
    counts: dict[datetime, list[float]] = {}
    for point in points:
        acc = counts.setdefault(sessions[point.episode_id], [0.0, 0.0])
        acc[0] += VERDICT_OUTCOME[point.verdict]
        acc[1] += 1.0
    return [(right, n) for _, (right, n) in sorted(counts.items())]


def derive(points: Sequence[CheckPoint], prior: Prior = DEFAULT_PRIOR) -> Derived:
    """The belief a concept's checks support, given the concept's prior.

    Order does not matter (a sum over checks), nor does the order of checks within a
    session (they share one weight).
    """
    if not points:
        raise ValueError("a belief needs at least one check")
    p_right = round_probability(posterior_p_right(points, prior))
    claim = claim_of(p_right)
    return Derived(
        claim=claim,
        confidence=confidence_of(claim, p_right),
        p_right=p_right,
        prior=prior,
        right_count=sum(VERDICT_OUTCOME[p.verdict] for p in points),
        check_count=len(points),
    )


def decayed_p_right(*, p_right: float, prior_mean: float, claim: str) -> float:
    """R-7.2: DECAY_SHARE of the way back to the prior, never past it, never flipping.

    Moving a share of the distance cannot pass the prior; the claim is kept by holding
    p_right on its side of the threshold (a belief just above it stays just above).
    """
    moved = round_probability(p_right + DECAY_SHARE * (prior_mean - p_right))
    if claim == "understands":
        lowest = round_probability(UNDERSTANDS_ABOVE + 10**-CONFIDENCE_DECIMALS)
        return max(moved, min(lowest, round_probability(p_right)))
    return min(moved, max(round_probability(UNDERSTANDS_ABOVE), round_probability(p_right)))


def is_untouched(*, last_evidence_at: datetime | None, now: datetime) -> bool:
    if last_evidence_at is None:
        return False
    return (now - last_evidence_at).total_seconds() >= BELIEF_DECAY_AFTER_DAYS * SECONDS_PER_DAY


# --- The prior from the other students' rows (empirical Bayes) -------------------------


@dataclass(frozen=True)
class ConceptStats:
    """Sums over the current beliefs of the subject's other students on one concept.

    Per student i: n_i checks, s_i right (partial ½), x_i = s_i / n_i.
    """

    students: int
    checks: float  # Σ n_i
    right: float  # Σ s_i
    sum_x: float  # Σ x_i
    sum_x2: float  # Σ x_i²
    sum_inv_n: float  # Σ 1 / n_i


def subject_rate(stats: Mapping[int, ConceptStats]) -> float:
    checks = sum(s.checks for s in stats.values())
    right = sum(s.right for s in stats.values())
    return (right + SUBJECT_RATE_PSEUDO_CHECKS * SUBJECT_RATE_DEFAULT) / (
        checks + SUBJECT_RATE_PSEUDO_CHECKS
    )


def concept_mean(stats: ConceptStats | None, rate: float) -> float:
    """The concept's mean student accuracy, shrunk towards the subject's rate."""
    if stats is None or stats.students == 0:
        return rate
    return (stats.sum_x + CONCEPT_PRIOR_PSEUDO_STUDENTS * rate) / (
        stats.students + CONCEPT_PRIOR_PSEUDO_STUDENTS
    )


def prior_strength(stats: Mapping[int, ConceptStats]) -> float:
    """Method of moments for the beta-binomial, pooled over the subject's concepts.

    For a student with n checks and true rate θ ~ Beta(mean m, strength κ), the observed
    x = s/n has E(x − m)² = m(1−m)/n + (1 − 1/n)·m(1−m)/(κ+1). Summing over students
    and solving for ρ = 1/(κ+1) gives how much students really differ on a concept
    beyond the noise of few checks; concepts are pooled so that one odd concept does
    not decide. κ = 1/ρ − 1, within [PRIOR_STRENGTH_MIN, PRIOR_STRENGTH_MAX].
    """
    students = sum(s.students for s in stats.values())
    if students < PRIOR_STRENGTH_MIN_STUDENTS:
        return PRIOR_STRENGTH_DEFAULT
    excess = spread = 0.0
    for s in stats.values():
        if s.students < 2:
            continue
        m = s.sum_x / s.students
        base = m * (1.0 - m)
        if base <= 0.0:
            continue
        squares = s.sum_x2 - 2.0 * m * s.sum_x + s.students * m * m
        excess += squares - base * s.sum_inv_n
        spread += base * (s.students - s.sum_inv_n)
    if spread <= 0.0 or excess <= 0.0:
        return PRIOR_STRENGTH_MAX
    rho = excess / spread
    if rho >= 1.0:
        return PRIOR_STRENGTH_MIN
    return min(max(1.0 / rho - 1.0, PRIOR_STRENGTH_MIN), PRIOR_STRENGTH_MAX)


@dataclass(frozen=True)
class PriorTable:
    """The priors of a subject's concepts; a concept nobody else has data on gets the
    subject's rate."""

    rate: float
    strength: float
    means: Mapping[int, float]
    # Pseudo-checks of the student's level; None: students' levels do not differ here.
    ability_checks: float | None = ABILITY_PSEUDO_CHECKS
    # The subject's fitted learning model (nightly), when it has one.
    learning: LearningModel | None = None

    def for_concept(self, concept_id: int) -> Prior:
        return Prior(mean=self.means.get(concept_id, self.rate), strength=self.strength)

    def for_student(self, concept_id: int, own: Mapping[int, tuple[float, int]]) -> Prior:
        """The concept's prior shifted by the student's level on their other concepts.

        `own`: the student's (right, checks) per concept (a partial is half right).
        With a learning model, the model's logit before practice (its own concept
        difficulty and level weight) is the prior: recalibrated on first sittings for
        the mean, as fitted for the practice term (which has its own recalibration).
        """
        if self.learning is not None:
            logit = self.learning.base_logit(concept_id, own)
            prior_logit = self.learning.prior_logit(concept_id, own)
            return Prior(
                mean=min(max(sigmoid(prior_logit), PRIOR_MEAN_MIN), PRIOR_MEAN_MAX),
                strength=None,
                practice=Practice(
                    logit,
                    self.learning.wins,
                    self.learning.fails,
                    self.learning.shift,
                    self.learning.scale,
                    self.learning.recent,
                ),
            )
        base = self.for_concept(concept_id)
        if self.ability_checks is None:
            return base
        excess = checks = 0.0
        for other, (right, n) in own.items():
            if other == concept_id or n <= 0:
                continue
            excess += right - n * self.means.get(other, self.rate)
            checks += n
        shift = excess / (checks + self.ability_checks)
        mean = min(max(base.mean + shift, PRIOR_MEAN_MIN), PRIOR_MEAN_MAX)
        return Prior(mean=mean, strength=base.strength)


def ability_checks(
    rows: Sequence[tuple[int, int, float, int]], means: Mapping[int, float], rate: float
) -> float | None:
    """K, the pseudo-checks of the student's level, from other students' rows.

    Per student i: z_i = Σ (right − n·m_c) / N_i over their concepts, whose variance is
    τ² (how much levels really differ) plus V_i / N_i² (binomial noise, V_i = Σ n·m(1−m)).
    τ² = mean(z_i² − V_i / N_i²); the Bayes shrinkage of a mean of N checks with per-check
    variance v̄ towards 0 is N / (N + v̄/τ²), so K = v̄ / τ². None when τ² ≤ 0.
    """
    per: dict[int, list[float]] = {}
    for pair_id, concept_id, right, n in rows:
        m = means.get(concept_id, rate)
        acc = per.setdefault(pair_id, [0.0, 0.0, 0.0])
        acc[0] += right - n * m
        acc[1] += n
        acc[2] += n * m * (1.0 - m)
    usable = [(r, n, v) for r, n, v in per.values() if n >= 2]
    if len(usable) < ABILITY_MIN_STUDENTS:
        return ABILITY_PSEUDO_CHECKS
    tau2 = sum((r / n) ** 2 - v / n**2 for r, n, v in usable) / len(usable)
    if tau2 <= 0.0:
        return None
    per_check = sum(v for _, _, v in usable) / sum(n for _, n, _ in usable)
    return min(max(per_check / tau2, ABILITY_PSEUDO_CHECKS_MIN), ABILITY_PSEUDO_CHECKS_MAX)


def concept_stats(rows: Sequence[tuple[int, int, float, int]]) -> dict[int, ConceptStats]:
    """Per concept, the sums ConceptStats holds, from (pair, concept, right, checks) rows."""
    acc: dict[int, list[float]] = {}
    for _, concept_id, right, n in rows:
        x = right / n
        s = acc.setdefault(concept_id, [0, 0.0, 0.0, 0.0, 0.0, 0.0])
        s[0] += 1
        s[1] += n
        s[2] += right
        s[3] += x
        s[4] += x * x
        s[5] += 1.0 / n
    return {cid: ConceptStats(int(s[0]), s[1], s[2], s[3], s[4], s[5]) for cid, s in acc.items()}


def priors_from_rows(rows: Sequence[tuple[int, int, float, int]]) -> PriorTable:
    """The subject's priors from the other students' (pair, concept, right, checks) rows."""
    stats = concept_stats(rows)
    rate = subject_rate(stats)
    means = {cid: concept_mean(s, rate) for cid, s in stats.items()}
    return PriorTable(
        rate=rate,
        strength=prior_strength(stats),
        means=means,
        ability_checks=ability_checks(rows, means, rate),
    )
