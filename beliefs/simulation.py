"""A seeded simulated population of learners with known truth (issue #12).

Used as a test fixture and as an input of `manage.py evaluate_beliefs`: every check
carries the generating model's own probability of a right answer at that moment
(`p_true`), so the benchmark can put the beliefs beside the truth.

The generating model, per student s and concept c (logit scale, σ from `Setting`):

* ability a_s ~ N(0, σ_ability); difficulty d_c ~ N(μ, σ_difficulty); a student-concept
  affinity e_sc ~ N(0, σ_affinity): students differ overall and on each concept;
* learning: each check adds the student's learning rate λ_s (≥ 0) to a practice
  component L; forgetting: L decays exponentially between checks with the student's
  half-life (days), so a long break loses part of what was learnt; a warm-up H (field
  `warmup`: 0, but 0.3 in the `warmup` setting): each check adds `warmup` to the logit
  of the later checks of the same sitting, reset after an hour without the concept;
* p(right) = guess + (1 − guess − slip) · σ(a_s − d_c + e_sc + L + H);
* a share of answers is judged partial (outcome ½): the truth of a check is its
  expected outcome, (1 − partial) · p + partial · ½;
* schedule: sessions separated by gaps of days (exponential, student-specific mean,
  sometimes a break of months), each session works 1–3 concepts of a curriculum
  (new ones introduced in order, earlier ones revisited; with `shuffled`, each student
  has an order of their own), several checks per concept a
  few minutes apart (or, under a mastery rule, until a run of right answers).

A second family, `model="knowledge"` (settings `knowledge` and `knowledge-mastery`), so
that the beliefs are not only measured on the model they resemble: each concept is known
or not (the hidden state of Bayesian knowledge tracing). A concept starts known with
chance σ(a_s − d_c + e_sc); each check of an unknown concept teaches it with the
student's chance τ_s = σ(logit(transition) + a_s / 2); a known concept is kept over a
gap of t days with chance 0.5^(t / half-life). A check draws one of the concept's items
(5-40 of them, difficulty δ ~ N(0, item_sigma)), and p(right) = σ(logit(1 − slip_c) − δ
+ 0.3 · a_s) if known, σ(logit(guess_c) − δ + 0.3 · a_s) if not, with the concept's
guess and slip drawn around the setting's. Same schedule and partial answers as above.

Pure: the same seed and setting give the same rows. No database.

`forecast_at_cut` is the same model used as a predictor: what it expects of each check
after a student's cut, knowing everything about the population (difficulties, the spread
of abilities, rates and half-lives) but, of the student, only their checks before the cut.
No belief fixed at the cut can be expected to rank better; `p_true` knows more (each
student's latent state at the moment of the check, the practice after the cut included).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

import numpy as np

START = datetime(2025, 9, 1, 8, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Setting:
    students: int = 300
    concepts: int = 15
    sigma_ability: float = 0.9
    sigma_difficulty: float = 0.9
    mean_difficulty: float = -0.3
    sigma_affinity: float = 0.5
    learning_rate: float = 0.25  # mean λ (logit per check)
    forgetting_half_life_days: float = 30.0  # mean half-life of what was learnt
    guess: float = 0.1
    slip: float = 0.05
    partial_share: float = 0.1
    sessions: tuple[int, int] = (6, 16)
    checks_per_concept: tuple[int, int] = (1, 4)
    gap_days_mean: tuple[float, float] = (2.0, 12.0)  # a student's mean gap, drawn in
    long_break_share: float = 0.08  # share of gaps that are a break of 45-120 days
    # A tutoring system's mastery rule: in a session, a concept is practised until this
    # many right answers in a row (or mastery_max_checks), not checks_per_concept times.
    # 0: off.
    mastery_streak: int = 0
    mastery_max_checks: int = 10
    # "logistic" (the module docstring's first model) or "knowledge" (its second).
    model: str = "logistic"
    # knowledge: the mean chance that a check teaches a concept the student does not know,
    # and the spread (logit) of the difficulty of a concept's items.
    transition: float = 0.15
    item_sigma: float = 0.6
    # logistic: what each check adds to the logit of the checks after it in the same
    # sitting (an hour), gone by the next one: practice in a row lifts the answers of
    # that sitting more than what is learnt, as massed practice does.
    warmup: float = 0.0
    # Each student meets the concepts in an order of their own (classes that teach the
    # units in different orders, a practice site where students pick what to work on),
    # not the one curriculum: every concept has been practised by some students early on.
    shuffled: bool = False


SETTINGS: dict[str, Setting] = {
    "default": Setting(),
    # Students alike, concepts very different: the concept's mean does most of the work.
    "alike": Setting(sigma_ability=0.3, sigma_affinity=0.3, sigma_difficulty=1.3),
    # Very different students, fast learning and forgetting: history matters most.
    "diverse": Setting(
        sigma_ability=1.4,
        sigma_affinity=0.8,
        learning_rate=0.45,
        forgetting_half_life_days=15.0,
    ),
    # Few checks per student (the sparse end of a real log).
    "sparse": Setting(students=500, sessions=(2, 6), checks_per_concept=(1, 2)),
    # Practice until three right in a row, as a "skill builder" does: every session's
    # run on a concept ends on right answers, whatever the student will do days later.
    "mastery": Setting(mastery_streak=3, sessions=(4, 10)),
    # Answers in a row lift a sitting (warm-up) more than they teach: the next sitting
    # starts lower than the last one ended, as after massed practice.
    "warmup": Setting(warmup=0.3, learning_rate=0.1),
    # Another family of learner: concepts known or not, guessing and slipping, items of
    # different difficulty within a concept; knowledge kept for months.
    "knowledge": Setting(model="knowledge", guess=0.2, slip=0.1, forgetting_half_life_days=120.0),
    "knowledge-mastery": Setting(
        model="knowledge",
        guess=0.2,
        slip=0.1,
        forgetting_half_life_days=120.0,
        mastery_streak=3,
        sessions=(4, 10),
    ),
    # The default learners, each meeting the concepts in an order of their own.
    "shuffled": Setting(shuffled=True),
}

# logistic: the warm-up of a sitting is gone after this long without the concept.
SITTING_DAYS = 1 / 24
# knowledge: how much the student's ability moves an answer beyond what they know.
ABILITY_ON_ANSWER = 0.3


@dataclass(frozen=True)
class SimulatedCheck:
    student: str
    concept: str
    verdict: str
    time: datetime
    p_true: float  # the generating model's expected outcome of this check


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _rng(seed: int) -> random.Random:
    return random.Random(f"tutorbrain-beliefs-simulation:{seed}")


def _names(s: Setting) -> list[str]:
    return [f"Concept {i + 1:02d}" for i in range(s.concepts)]


def _difficulties(rng: random.Random, names: list[str], s: Setting) -> dict[str, float]:
    # The population's first draws, so that `forecast_at_cut` can draw them again.
    return {n: rng.gauss(s.mean_difficulty, s.sigma_difficulty) for n in names}


def simulate(seed: int, setting: Setting | None = None) -> list[SimulatedCheck]:
    """Every check of the population, in time order."""
    s = setting or Setting()
    if s.model not in ("logistic", "knowledge"):
        raise ValueError(f"no such model of learners: {s.model!r}")
    rng = _rng(seed)
    names = _names(s)
    difficulty = _difficulties(rng, names, s)
    concepts = _KnowledgeConcepts.draw(rng, names, s) if s.model == "knowledge" else None
    rows: list[SimulatedCheck] = []
    for k in range(s.students):
        student = f"student-{k + 1:04d}"
        ability = rng.gauss(0.0, s.sigma_ability)
        rate = max(0.0, rng.gauss(s.learning_rate, s.learning_rate / 2))
        half_life = s.forgetting_half_life_days * math.exp(rng.gauss(0.0, 0.4))
        affinity = {n: rng.gauss(0.0, s.sigma_affinity) for n in names}
        learnt = dict.fromkeys(names, 0.0)
        warm = dict.fromkeys(names, 0.0)
        known: dict[str, bool] = {}
        last_seen: dict[str, datetime] = {}
        gap_mean = rng.uniform(*s.gap_days_mean)
        when = START + timedelta(days=rng.uniform(0, 30), hours=rng.uniform(0, 10))
        order = names
        if s.shuffled:
            # Drawn only when asked for, so the other settings' draws stay as they were.
            order = rng.sample(names, k=len(names))
        frontier = 1
        for session in range(rng.randint(*s.sessions)):
            if session:
                if rng.random() < s.long_break_share:
                    gap = rng.uniform(45, 120)
                else:
                    gap = rng.expovariate(1.0 / gap_mean) + 0.3
                when += timedelta(days=gap)
            if rng.random() < 0.6 and frontier < len(names):
                frontier += 1
            new = order[frontier - 1]
            worked = [new] + rng.sample(order[:frontier], k=min(frontier, rng.randint(0, 2)))
            clock = when
            for concept in dict.fromkeys(worked):
                planned = 0 if s.mastery_streak else rng.randint(*s.checks_per_concept)
                done = streak = 0
                while _goes_on(s, planned, done, streak):
                    done += 1
                    clock += timedelta(minutes=rng.uniform(1, 8))
                    days = (
                        (clock - last_seen[concept]).total_seconds() / 86_400
                        if concept in last_seen
                        else None
                    )
                    if concepts is None:
                        if days is not None:
                            learnt[concept] *= 0.5 ** (days / half_life)
                        if days is None or days > SITTING_DAYS:
                            warm[concept] = 0.0
                        logit = ability - difficulty[concept] + affinity[concept] + learnt[concept]
                        logit += warm[concept]
                        p = s.guess + (1 - s.guess - s.slip) * _sigmoid(logit)
                    else:
                        if concept not in known:
                            start = ability - difficulty[concept] + affinity[concept]
                            known[concept] = rng.random() < _sigmoid(start)
                        elif known[concept] and days is not None:
                            known[concept] = rng.random() < 0.5 ** (days / half_life)
                        p = concepts.p_right(rng, concept, known[concept], ability)
                    expected = (1 - s.partial_share) * p + s.partial_share * 0.5
                    if rng.random() < s.partial_share:
                        verdict = "partial"
                    else:
                        verdict = "right" if rng.random() < p else "wrong"
                    rows.append(SimulatedCheck(student, concept, verdict, clock, expected))
                    streak = streak + 1 if verdict == "right" else 0
                    if concepts is None:
                        learnt[concept] += rate
                        warm[concept] += s.warmup
                    elif not known[concept]:
                        known[concept] = rng.random() < concepts.teaches(ability)
                    last_seen[concept] = clock
    rows.sort(key=lambda r: (r.time, r.student))
    return rows


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


@dataclass(frozen=True)
class _KnowledgeConcepts:
    """The knowledge model's concepts: each one's guess, slip and items' difficulties."""

    transition: float
    guess: dict[str, float]
    slip: dict[str, float]
    items: dict[str, list[float]]

    @classmethod
    def draw(cls, rng: random.Random, names: list[str], s: Setting) -> _KnowledgeConcepts:
        guess = {n: rng.uniform(0.5, 1.5) * s.guess for n in names}
        slip = {n: rng.uniform(0.5, 1.5) * s.slip for n in names}
        items = {
            n: [rng.gauss(0.0, s.item_sigma) for _ in range(rng.randint(5, 40))] for n in names
        }
        return cls(transition=s.transition, guess=guess, slip=slip, items=items)

    def p_right(self, rng: random.Random, concept: str, known: bool, ability: float) -> float:
        base = 1.0 - self.slip[concept] if known else self.guess[concept]
        item = rng.choice(self.items[concept])
        return _sigmoid(_logit(base) - item + ABILITY_ON_ANSWER * ability)

    def teaches(self, ability: float) -> float:
        return _sigmoid(_logit(self.transition) + ability / 2)


def _goes_on(s: Setting, planned: int, done: int, streak: int) -> bool:
    """Whether a session asks one more check of a concept: `planned` checks in all, or,
    under the mastery rule, until `streak` right answers in a row (at most
    mastery_max_checks)."""
    if s.mastery_streak:
        return streak < s.mastery_streak and done < s.mastery_max_checks
    return done < planned


class _Check(Protocol):
    # Read-only: the logged checks are frozen dataclasses.
    @property
    def student(self) -> str: ...
    @property
    def concept(self) -> str: ...
    @property
    def verdict(self) -> str: ...
    @property
    def time(self) -> datetime: ...


# Draws of a student's unknowns (ability, rate, half-life, affinities) per forecast.
FORECAST_SAMPLES = 4000


def forecast_at_cut(
    seed: int,
    setting: Setting,
    *,
    history: Sequence[_Check],
    targets: Sequence[_Check],
    cuts: dict[str, datetime],
    samples: int = FORECAST_SAMPLES,
) -> list[float]:
    """The generating model's expected outcome of each target, as of its student's cut.

    Per student, by importance sampling: draw the unknowns from the population's own
    distributions, weight each draw by the likelihood of the student's checks before
    the cut (right p, wrong 1 - p; a partial verdict is drawn independently of p in
    `simulate`, so it says nothing), and average p at the cut time (what was learnt,
    decayed to the cut, and the warm-up of a sitting the cut falls in; no practice after
    it) over the weighted draws. Seeded: the same arguments give the same forecasts.
    """
    if setting.model != "logistic":
        raise ValueError("the forecast is the logistic model's; this setting has no forecast")
    s = setting
    names = _names(s)
    column = {name: j for j, name in enumerate(names)}
    difficulty = np.array(list(_difficulties(_rng(seed), names, s).values()))
    rng = np.random.default_rng(seed)
    before: dict[str, list[_Check]] = defaultdict(list)
    for check in history:
        before[check.student].append(check)
    expected: dict[str, np.ndarray] = {}
    for student in sorted({t.student for t in targets}):
        ability = rng.normal(0.0, s.sigma_ability, samples)
        rate = np.maximum(0.0, rng.normal(s.learning_rate, s.learning_rate / 2, samples))
        half_life = s.forgetting_half_life_days * np.exp(rng.normal(0.0, 0.4, samples))
        affinity = rng.normal(0.0, s.sigma_affinity, (samples, len(names)))
        learnt = np.zeros((samples, len(names)))
        warm = np.zeros(len(names))  # the same for every draw: it depends on times only
        last_seen: dict[int, datetime] = {}
        log_weight = np.zeros(samples)
        cut = cuts[student]
        for check in sorted(before[student], key=lambda c: c.time):
            j = column[check.concept]
            if j in last_seen:
                days = (check.time - last_seen[j]).total_seconds() / 86_400
                learnt[:, j] *= 0.5 ** (days / half_life)
            if j not in last_seen or days > SITTING_DAYS:
                warm[j] = 0.0
            logit = ability - difficulty[j] + affinity[:, j] + learnt[:, j] + warm[j]
            p = s.guess + (1 - s.guess - s.slip) / (1.0 + np.exp(-logit))
            if check.verdict == "right":
                log_weight += np.log(p)
            elif check.verdict == "wrong":
                log_weight += np.log1p(-p)
            learnt[:, j] += rate
            warm[j] += s.warmup
            last_seen[j] = check.time
        for j, seen in last_seen.items():
            days = (cut - seen).total_seconds() / 86_400
            learnt[:, j] *= 0.5 ** (days / half_life)
            if days > SITTING_DAYS:
                warm[j] = 0.0
        weight = np.exp(log_weight - log_weight.max())
        weight /= weight.sum()
        logits = ability[:, None] - difficulty[None, :] + affinity + learnt + warm[None, :]
        p_cut = s.guess + (1 - s.guess - s.slip) / (1.0 + np.exp(-logits))
        expected[student] = (1 - s.partial_share) * (weight @ p_cut) + s.partial_share * 0.5
    return [float(expected[t.student][column[t.concept]]) for t in targets]
