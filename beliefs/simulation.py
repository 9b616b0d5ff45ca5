"""A seeded simulated population of learners with known truth (issue #12).

Used as a test fixture and as an input of `manage.py evaluate_beliefs`: every check
carries the generating model's own probability of a right answer at that moment
(`p_true`), so the benchmark can put the beliefs beside the truth.

The generating model, per student s and concept c (logit scale, σ from `Setting`):

* ability a_s ~ N(0, σ_ability); difficulty d_c ~ N(μ, σ_difficulty); a student-concept
  affinity e_sc ~ N(0, σ_affinity): students differ overall and on each concept;
* learning: each check adds the student's learning rate λ_s (≥ 0) to a practice
  component L; forgetting: L decays exponentially between checks with the student's
  half-life (days), so a long break loses part of what was learnt;
* p(right) = guess + (1 − guess − slip) · σ(a_s − d_c + e_sc + L);
* a share of answers is judged partial (outcome ½): the truth of a check is its
  expected outcome, (1 − partial) · p + partial · ½;
* schedule: sessions separated by gaps of days (exponential, student-specific mean,
  sometimes a break of months), each session works 1–3 concepts of a curriculum
  (new ones introduced in order, earlier ones revisited), several checks per concept a
  few minutes apart.

Pure: the same seed and setting give the same rows. No database.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

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
}


@dataclass(frozen=True)
class SimulatedCheck:
    student: str
    concept: str
    verdict: str
    time: datetime
    p_true: float  # the generating model's expected outcome of this check


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def simulate(seed: int, setting: Setting | None = None) -> list[SimulatedCheck]:
    """Every check of the population, in time order."""
    s = setting or Setting()
    rng = random.Random(f"tutorbrain-beliefs-simulation:{seed}")
    names = [f"Concept {i + 1:02d}" for i in range(s.concepts)]
    difficulty = {n: rng.gauss(s.mean_difficulty, s.sigma_difficulty) for n in names}
    rows: list[SimulatedCheck] = []
    for k in range(s.students):
        student = f"student-{k + 1:04d}"
        ability = rng.gauss(0.0, s.sigma_ability)
        rate = max(0.0, rng.gauss(s.learning_rate, s.learning_rate / 2))
        half_life = s.forgetting_half_life_days * math.exp(rng.gauss(0.0, 0.4))
        affinity = {n: rng.gauss(0.0, s.sigma_affinity) for n in names}
        learnt = dict.fromkeys(names, 0.0)
        last_seen: dict[str, datetime] = {}
        gap_mean = rng.uniform(*s.gap_days_mean)
        when = START + timedelta(days=rng.uniform(0, 30), hours=rng.uniform(0, 10))
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
            new = names[frontier - 1]
            worked = [new] + rng.sample(names[:frontier], k=min(frontier, rng.randint(0, 2)))
            clock = when
            for concept in dict.fromkeys(worked):
                for _ in range(rng.randint(*s.checks_per_concept)):
                    clock += timedelta(minutes=rng.uniform(1, 8))
                    if concept in last_seen:
                        days = (clock - last_seen[concept]).total_seconds() / 86_400
                        learnt[concept] *= 0.5 ** (days / half_life)
                    logit = ability - difficulty[concept] + affinity[concept] + learnt[concept]
                    p = s.guess + (1 - s.guess - s.slip) * _sigmoid(logit)
                    expected = (1 - s.partial_share) * p + s.partial_share * 0.5
                    if rng.random() < s.partial_share:
                        verdict = "partial"
                    else:
                        verdict = "right" if rng.random() < p else "wrong"
                    rows.append(SimulatedCheck(student, concept, verdict, clock, expected))
                    learnt[concept] += rate
                    last_seen[concept] = clock
    rows.sort(key=lambda r: (r.time, r.student))
    return rows
