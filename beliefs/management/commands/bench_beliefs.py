"""Measure belief derivation and re-derivation (R-4) at a given scale.

    TUTORBRAIN_DB_NAME=scratch manage.py bench_beliefs --checks 1000 --concepts 20 --repeat 5

It writes a benchmark organization (episodes cannot be deleted), so run it against a
scratch database. Reports median / p90 / p95 in milliseconds. The subject gets a fitted
learning model (beliefs.learning) first, so derivation takes the path of a subject with
one; `--no-learning-model` measures the Beta posterior alone.
"""

from __future__ import annotations

import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta

from django.core.management.base import BaseCommand

from beliefs.apps import DERIVE_DISPATCH_UID
from beliefs.learning import LearningModel
from beliefs.models import BeliefLearningFit
from beliefs.rules import RULES_VERSION
from beliefs.services import beliefs_derive_from_checks, beliefs_rederive, on_episodes_appended
from concepts.models import Concept
from concepts.selectors import concept_key
from memory.services import (
    EventSpec,
    episode_append_batch,
    organization_create,
    pair_get_or_create,
    student_get_or_create,
    subject_get_or_create,
)
from memory.signals import episodes_appended

BENCH_START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
VERDICT_CYCLE = ("right", "wrong", "partial", "right")
# One check in this many reads like an utterance and stays unlinked.
UTTERANCE_EVERY = 10


def _percentiles(samples_ms: list[float]) -> str:
    ordered = sorted(samples_ms)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    return (
        f"median {statistics.median(ordered):.1f} ms, p90 {pick(0.90):.1f} ms, "
        f"p95 {pick(0.95):.1f} ms (n={len(ordered)})"
    )


class Command(BaseCommand):
    help = "Benchmark belief derivation per check and re-derivation per pair."

    def add_arguments(self, parser):
        parser.add_argument("--checks", type=int, default=1000)
        parser.add_argument("--concepts", type=int, default=20)
        parser.add_argument("--repeat", type=int, default=5)
        parser.add_argument("--live", type=int, default=50, help="checks derived one by one")
        parser.add_argument(
            "--no-learning-model", action="store_true", help="no learning fit for the subject"
        )

    def handle(self, *args, **options):
        tag = uuid.uuid4().hex[:8]
        org = organization_create(name=f"bench beliefs {tag}", slug=f"bench-beliefs-{tag}")
        student = student_get_or_create(organization=org, external_id="bench-student")
        subject = subject_get_or_create(organization=org, external_id="bench-subject")
        pair = pair_get_or_create(student=student, subject=subject)
        names = [f"Concept {i:03d}" for i in range(options["concepts"])]
        concepts = Concept.objects.bulk_create(
            [Concept(subject=subject, name=n, key=concept_key(n)) for n in names]
        )
        if not options["no_learning_model"]:
            # Coefficients of the size the simulated populations give; their values do
            # not change the cost.
            model = LearningModel(
                intercept=0.3,
                wins=0.5,
                fails=-0.15,
                level=3.0,
                offsets={c.pk: 0.1 * (i % 5 - 2) for i, c in enumerate(concepts)},
                means={c.pk: 0.6 for c in concepts},
                rate=0.6,
            )
            BeliefLearningFit.objects.create(
                subject=subject,
                rules_version=RULES_VERSION,
                checks=0,
                students=0,
                coefficients=model.as_json(),
                created_at=BENCH_START,
            )
        events = []
        for i in range(options["checks"]):
            topic = (
                "ask me the questions"
                if i % UTTERANCE_EVERY == 0
                else f"Check on {names[i % len(names)]}"
            )
            at = BENCH_START + timedelta(hours=6 * i)
            events.append(
                EventSpec(
                    kind="check",
                    summary=f"check {i}",
                    topic=topic,
                    verdict=VERDICT_CYCLE[i % len(VERDICT_CYCLE)],
                    occurred_at=at,
                )
            )
        batch_size = 1000
        for start in range(0, len(events), batch_size):
            # embed=False: the benchmark is about beliefs, not the embedder.
            episode_append_batch(pair=pair, events=events[start : start + batch_size], embed=False)

        rederive_ms: list[float] = []
        for _ in range(options["repeat"]):
            started = time.perf_counter()
            result = beliefs_rederive(pair=pair)
            rederive_ms.append((time.perf_counter() - started) * 1000)
        self.stdout.write(
            f"re-derivation of one pair ({result.checks_replayed} checks, "
            f"{result.checks_linked} linked, {result.beliefs_derived} beliefs): "
            + _percentiles(rederive_ms)
        )

        live_ms: list[float] = []
        last = BENCH_START + timedelta(hours=6 * options["checks"])
        # Time the derivation itself: the after-commit receiver is off while appending.
        episodes_appended.disconnect(dispatch_uid=DERIVE_DISPATCH_UID)
        try:
            self._live(pair, names, last, options["live"], live_ms)
        finally:
            episodes_appended.connect(on_episodes_appended, dispatch_uid=DERIVE_DISPATCH_UID)
        self.stdout.write(
            f"derivation after one appended check (history of {options['checks']} checks): "
            + _percentiles(live_ms)
        )

    def _live(self, pair, names, last, count, live_ms) -> None:
        for i in range(count):
            [episode] = episode_append_batch(
                pair=pair,
                events=[
                    EventSpec(
                        kind="check",
                        summary=f"live check {i}",
                        topic=names[i % len(names)],
                        verdict=VERDICT_CYCLE[i % len(VERDICT_CYCLE)],
                        occurred_at=last + timedelta(hours=i),
                    )
                ],
                embed=False,
            )
            started = time.perf_counter()
            beliefs_derive_from_checks(pair=pair, episode_ids=[episode.pk])
            live_ms.append((time.perf_counter() - started) * 1000)
