"""Benchmark of the nightly cycle (R-7) through real Celery workers.

    TUTORBRAIN_DB_NAME=tutorbrain_bench_nightly python manage.py bench_nightly \
        --recreate-database --pairs 10000 --workers 2

Creates (or reuses) a benchmark database, generates `--pairs` student-subject pairs with
one day of activity each (a question, an answer, two checks with a predicted mastery,
through `episode_append_batch` with embed=False: the real service, chain and all, just
without vectors), starts `--workers` real `celery worker` processes (solo pool, one
process each, a private queue), sends the beat task `nightly_fan_out` for that day and
waits for every pair's run. Prints the wall time of the night and the median / p90 / p95
of the per-pair cycle (NightlyRun.duration_seconds). Never point it at a test database.
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psycopg
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from memory.models import Organization, Pair, Student, Subject
from memory.services import EventSpec, episode_append_batch
from tutorbrain.models import NightlyRun

BENCH_DAY = dt.date(2026, 3, 10)
BENCH_ORGANIZATION = "bench-nightly"
BENCH_SUBJECTS = 20
WORKER_READY_SECONDS = 120
ROOT = Path(settings.BASE_DIR)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def day_events(day: dt.date, i: int) -> list[EventSpec]:
    def at(hour: int, minute: int) -> dt.datetime:
        return dt.datetime.combine(day, dt.time(hour, minute), tzinfo=dt.UTC)

    hour = 8 + i % 12
    return [
        EventSpec(kind="question", summary=f"Asked about topic {i % 50}", occurred_at=at(hour, 0)),
        EventSpec(kind="answer", summary=f"Explained topic {i % 50}", occurred_at=at(hour, 1)),
        EventSpec(
            kind="check",
            summary="Answered the first check",
            topic=f"topic {i % 50}",
            verdict="right" if i % 3 else "wrong",
            predicted_mastery=round((i % 10) / 10 + 0.05, 2),
            occurred_at=at(hour, 5),
        ),
        EventSpec(
            kind="check",
            summary="Answered the second check",
            topic=f"topic {(i + 7) % 50}",
            verdict="partial" if i % 4 else "right",
            predicted_mastery=round(((i + 3) % 10) / 10 + 0.05, 2),
            occurred_at=at(hour, 9),
        ),
    ]


class Command(BaseCommand):
    help = "Benchmark the nightly cycle for many active pairs with real Celery workers."

    def add_arguments(self, parser):
        parser.add_argument("--pairs", type=int, default=10_000)
        parser.add_argument("--workers", type=int, default=2)
        parser.add_argument(
            "--recreate-database",
            action="store_true",
            help="drop and recreate the benchmark database, migrate, generate the pairs",
        )
        parser.add_argument(
            "--no-embed",
            action="store_true",
            help="workers write consolidation notes without a vector",
        )
        parser.add_argument(
            "--generate-only", action="store_true", help="generate the data, do not run the night"
        )
        parser.add_argument("--timeout", type=int, default=3 * 3600, help="seconds to wait")

    def handle(self, *args, **options):
        name = connection.settings_dict["NAME"]
        if name.startswith("test_") or name == "tutorbrain" or "bench" not in name:
            raise CommandError(
                f"refusing to benchmark in {name!r}: set TUTORBRAIN_DB_NAME to a benchmark "
                "database (e.g. tutorbrain_bench_nightly)"
            )
        if options["pairs"] < 1 or options["workers"] < 1:
            raise CommandError("--pairs and --workers must be at least 1")
        if options["recreate_database"]:
            self._recreate_database(name)
            call_command("migrate", verbosity=0)
            self._generate(options["pairs"])
            if options["generate_only"]:
                return
        else:
            call_command("migrate", verbosity=0)
        if NightlyRun.objects.filter(day=BENCH_DAY).exists():
            raise CommandError(
                f"the night of {BENCH_DAY} already ran in {name!r}: use --recreate-database"
            )
        self._bench(name, options)

    def _recreate_database(self, name: str) -> None:
        connection.close()
        params = dict(connection.get_connection_params())
        params["dbname"] = "postgres"
        with psycopg.connect(**params, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}"')
        with psycopg.connect(**{**params, "dbname": name}, autocommit=True) as db:
            db.execute("CREATE EXTENSION IF NOT EXISTS vector")
        self.stdout.write(f"recreated database {name}")

    def _generate(self, pairs: int) -> None:
        started = time.monotonic()
        with transaction.atomic():
            org = Organization.objects.create(name="Nightly bench", slug=BENCH_ORGANIZATION)
            subjects = Subject.objects.bulk_create(
                [
                    Subject(organization=org, external_id=f"subject-{i}", name=f"Subject {i}")
                    for i in range(BENCH_SUBJECTS)
                ]
            )
            students = Student.objects.bulk_create(
                [Student(organization=org, external_id=f"student-{i}") for i in range(pairs)],
                batch_size=2000,
            )
            rows = Pair.objects.bulk_create(
                [
                    Pair(student=s, subject=subjects[i % BENCH_SUBJECTS])
                    for i, s in enumerate(students)
                ],
                batch_size=2000,
            )
        for i, pair in enumerate(rows):
            episode_append_batch(
                pair=pair, events=day_events(BENCH_DAY, i), embed=False, now=self._now()
            )
            if (i + 1) % 1000 == 0:
                self.stdout.write(f"  {i + 1} pairs generated ({time.monotonic() - started:.0f} s)")
        self.stdout.write(
            f"generated {pairs} pairs x 4 episodes on {BENCH_DAY} in "
            f"{time.monotonic() - started:.0f} s"
        )

    @staticmethod
    def _now() -> dt.datetime:
        return dt.datetime.combine(BENCH_DAY, dt.time(23, 0), tzinfo=dt.UTC)

    def _start_workers(self, name: str, count: int, queue: str, embed: bool):
        env = dict(os.environ)
        env.update(
            DJANGO_SETTINGS_MODULE="config.settings",
            TUTORBRAIN_DB_NAME=name,
            CELERY_TASK_DEFAULT_QUEUE=queue,
        )
        if not embed:
            env["TUTORBRAIN_NIGHTLY_EMBED"] = "0"
        workers = []
        for i in range(count):
            workers.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        "config",
                        "worker",
                        "--pool=solo",
                        "-Q",
                        queue,
                        "--without-heartbeat",
                        "--without-gossip",
                        "--without-mingle",
                        "--loglevel=WARNING",
                        "-n",
                        f"{queue}-{i}@%h",
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        return workers

    def _wait_ready(self, app, queue: str, count: int) -> None:
        names = [f"{queue}-{i}@{os.uname().nodename}" for i in range(count)]
        deadline = time.monotonic() + WORKER_READY_SECONDS
        while time.monotonic() < deadline:
            replies = app.control.ping(destination=names, timeout=1.0)
            if len(replies) == count:
                return
        raise CommandError("the workers did not answer within the timeout")

    def _bench(self, name: str, options) -> None:
        from config.celery import app

        queue = f"bench-nightly-{uuid.uuid4().hex[:8]}"
        app.conf.task_default_queue = queue
        workers = self._start_workers(name, options["workers"], queue, not options["no_embed"])
        try:
            self._wait_ready(app, queue, options["workers"])
            # Warm-up: each worker loads Django (and the embedder on first use) before
            # the clock starts, as a long-running worker has at 02:30.
            warm = [app.send_task("tutorbrain.ping", args=["warm"], queue=queue) for _ in workers]
            for result in warm:
                result.get(timeout=WORKER_READY_SECONDS)
            started = time.monotonic()
            fan = app.send_task(
                "tutorbrain.tasks.nightly_fan_out",
                kwargs={"day": BENCH_DAY.isoformat()},
                queue=queue,
            ).get(timeout=options["timeout"])
            expected = fan["enqueued"]
            fanned = time.monotonic() - started
            deadline = started + options["timeout"]
            finished = NightlyRun.objects.filter(day=BENCH_DAY, status__in=["done", "failed"])
            while finished.count() < expected:
                if time.monotonic() > deadline:
                    raise CommandError("timed out before every pair's run finished")
                if any(w.poll() is not None for w in workers):
                    raise CommandError("a worker died during the benchmark")
                time.sleep(0.5)
            wall = time.monotonic() - started
        finally:
            for w in workers:
                w.terminate()
            for w in workers:
                try:
                    w.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    w.kill()
            # Whatever an interrupted run left in the private queue goes with it.
            with app.connection_for_write() as conn:
                conn.default_channel.queue_delete(queue)
        durations = list(
            NightlyRun.objects.filter(day=BENCH_DAY).values_list("duration_seconds", flat=True)
        )
        failed = NightlyRun.objects.filter(day=BENCH_DAY, status="failed").count()
        ms = [d * 1000 for d in durations if d is not None]
        self.stdout.write(
            f"night of {BENCH_DAY}: {expected} pairs, {options['workers']} workers, "
            f"wall {wall:.1f} s (fan-out task {fanned:.1f} s), {expected / wall:.1f} pairs/s"
        )
        self.stdout.write(
            f"per-pair cycle: median {statistics.median(ms):.1f} ms, "
            f"p90 {percentile(ms, 0.90):.1f} ms, p95 {percentile(ms, 0.95):.1f} ms; "
            f"{failed} failed run(s)"
        )
