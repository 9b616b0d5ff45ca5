"""Reading cost as a map grows (issue 13, item 7): a whole book, one file after another.

Every section file of a development set is uploaded through the real HTTP endpoint
(`POST /api/v1/files/`, run in-process by Django's test client: the real view, auth and
middleware) and read by a real Celery worker, which this command starts on its own queue
and stops at the end. One file is uploaded only when the previous one is read, so file k
is read into a map holding files 1..k-1. The time of a reading is the worker's own
(`FileReading.started_at` -> `finished_at`): parse, extraction, name vectors, merge and
recomputation. Prints one line per file, then the median of the first and last ten; then
reads the last ten files again into a fresh subject (same API, a new worker, so that
none of these files' names is in its caches) and prints their median there: the ratio of
the two is what the map's size costs, apart from how big the files are.

Run it on a scratch database: it creates an organization and writes a whole map.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.test import Client

from concepts.models import FileReading, SubjectMap
from memory.models import Subject
from memory.services import api_key_create, organization_create

WAIT_SECONDS_PER_FILE = 600


def _median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000 if values else 0.0


def _percentile_ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


# A file this many times slower than the median is an outlier of the run (the worker
# loading the embedding model on its first names), not a reading cost.
OUTLIER_TIMES_MEDIAN = 5.0


@dataclass(frozen=True)
class CostFit:
    """Reading time = fixed_ms + per_concept_ms x concepts found, by least squares."""

    fixed_ms: float
    per_concept_ms: float

    def per_concept_ms_for(self, first: float, last: float, ratio: float = 1.5) -> float | None:
        """The per-concept cost at which files finding `last` concepts take `ratio` times
        files finding `first`; None when they would at any cost."""
        if last <= ratio * first:
            return None
        return (ratio - 1.0) * self.fixed_ms / (last - ratio * first)


def cost_fit(seconds: list[float], concepts: list[int]) -> CostFit | None:
    """The fit over a run's files, outliers left out; None with fewer than three files
    or no spread in the concepts found."""
    limit = OUTLIER_TIMES_MEDIAN * statistics.median(seconds) if seconds else 0.0
    points = [(n, t * 1000) for t, n in zip(seconds, concepts, strict=True) if t <= limit]
    if len(points) < 3 or len({n for n, _ in points}) < 2:
        return None
    slope, intercept = statistics.linear_regression(
        [float(n) for n, _ in points], [t for _, t in points]
    )
    return CostFit(fixed_ms=intercept, per_concept_ms=slope)


class Command(BaseCommand):
    help = "Upload a development book file by file through the API; a worker reads each."

    def add_arguments(self, parser):
        parser.add_argument("--devset", required=True, help="a folder holding text/*.md")
        parser.add_argument("--language", default="", help="the subject's language (en, es, …)")
        parser.add_argument("--limit", type=int, default=0, help="read only the first N files")
        parser.add_argument(
            "--no-worker",
            action="store_true",
            help="do not start a worker (one is already consuming CELERY_TASK_DEFAULT_QUEUE)",
        )

    def handle(self, *args, **options):
        folder = Path(options["devset"]) / "text"
        files = sorted(folder.glob("*.md"))
        if not files:
            raise CommandError(f"--devset: no text/*.md under {options['devset']}")
        if options["limit"]:
            files = files[: options["limit"]]
        tag = uuid.uuid4().hex[:8]
        organization = organization_create(name=f"bench reading {tag}", slug=f"bench-read-{tag}")
        _, raw_key = api_key_create(organization=organization, name="bench")
        queue = f"bench-reading-{tag}"
        self.worker = None if options["no_worker"] else self._start_worker(queue)
        try:
            self._run(files, raw_key, tag, options["language"], organization, queue)
        finally:
            self._stop_worker()

    def _stop_worker(self) -> None:
        if self.worker is not None:
            self.worker.terminate()
            self.worker.wait(timeout=30)
            self.worker = None

    def _start_worker(self, queue: str) -> subprocess.Popen:
        env = dict(os.environ)
        env["TUTORBRAIN_DB_NAME"] = connection.settings_dict["NAME"]
        env["CELERY_TASK_DEFAULT_QUEUE"] = queue
        settings.CELERY_TASK_DEFAULT_QUEUE = queue
        from config.celery import app

        app.conf.task_default_queue = queue
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo",
             "--concurrency=1", "-Q", queue, "--without-heartbeat", "--without-gossip",
             "--without-mingle", "--loglevel=WARNING", "-n", f"{queue}@%h"],
            cwd=settings.BASE_DIR,
            env=env,
        )  # fmt: skip

    def _run(
        self, files: list[Path], raw_key: str, tag: str, language: str, organization, queue: str
    ):
        client = Client(HTTP_AUTHORIZATION=f"Api-Key {raw_key}")
        durations, found = self._read_all(client, files, f"book-{tag}", language, organization)
        first, last = durations[:10], durations[-10:]
        ratio = _median_ms(last) / _median_ms(first) if first and _median_ms(first) else 0.0
        self.stdout.write(
            f"files {len(durations)}; median first ten {_median_ms(first):.0f} ms, "
            f"last ten {_median_ms(last):.0f} ms, ratio {ratio:.2f}; "
            f"all: median {_median_ms(durations):.0f} ms, p90 {_percentile_ms(durations, 0.9):.0f} ms, "
            f"p95 {_percentile_ms(durations, 0.95):.0f} ms"
        )
        fit = cost_fit(durations, found)
        if fit is not None:
            first_n, last_n = statistics.median(found[:10]), statistics.median(found[-10:])
            needed = fit.per_concept_ms_for(first_n, last_n)
            self.stdout.write(
                f"time = {fit.fixed_ms:.0f} ms + {fit.per_concept_ms:.2f} ms x concepts found; "
                f"concepts a file, median: first ten {first_n:.0f}, last ten {last_n:.0f}; "
                + (
                    "last / first within 1.5x at any per-concept cost"
                    if needed is None
                    else f"within 1.5x only at <= {needed:.2f} ms a concept"
                )
            )
        if len(files) <= 10:
            return
        # The same last ten files into a fresh map: what the map's size costs, apart from
        # how big those files are (a book's later sections often define more terms).
        self.stdout.write("the last ten files again, into a fresh map of the same book:")
        if self.worker is not None:
            # A new worker, so the fresh map's reads do not find these files' names in
            # the first worker's caches (its name vectors cost nothing there).
            self._stop_worker()
            self.worker = self._start_worker(queue)
        fresh, _ = self._read_all(client, files[-10:], f"book-{tag}-fresh", language, organization)
        self.stdout.write(
            f"last ten into the whole book's map {_median_ms(last):.0f} ms, into a fresh map "
            f"{_median_ms(fresh):.0f} ms (median), ratio {_median_ms(last) / _median_ms(fresh):.2f}; "
            f"file by file: {' '.join(f'{a / b:.2f}' for a, b in zip(last, fresh, strict=True))}"
        )

    def _read_all(
        self, client: Client, files: list[Path], subject_id: str, language: str, organization
    ) -> tuple[list[float], list[int]]:
        """Upload the files one after another into one subject; each one's reading time
        and the concepts it found."""
        durations: list[float] = []
        found: list[int] = []
        for index, path in enumerate(files, start=1):
            response = client.post(
                "/api/v1/files/",
                {
                    "student": "bench-student",
                    "subject": subject_id,
                    "subject_language": language,
                    "file": path.open("rb"),
                },
            )
            if response.status_code not in (200, 201):
                raise CommandError(f"{path.name}: upload answered {response.status_code}")
            file_id = response.json()["file_id"]
            reading = self._wait(file_id, path.name)
            assert reading.started_at is not None and reading.finished_at is not None
            seconds = (reading.finished_at - reading.started_at).total_seconds()
            durations.append(seconds)
            found.append(reading.concepts_found)
            subject = Subject.objects.get(organization=organization, external_id=subject_id)
            size = SubjectMap.objects.filter(subject=subject).values_list(
                "concept_count", flat=True
            )
            self.stdout.write(
                f"{index:3d} {path.name:60s} {reading.state:6s} {seconds * 1000:8.0f} ms "
                f"found {reading.concepts_found:3d}  map {size.first() or 0:5d} concepts"
            )
        return durations, found

    def _wait(self, file_id: int, name: str) -> FileReading:
        deadline = time.monotonic() + WAIT_SECONDS_PER_FILE
        while time.monotonic() < deadline:
            reading = FileReading.objects.filter(pk=file_id).first()
            if reading is not None and reading.state in (
                FileReading.State.DONE,
                FileReading.State.FAILED,
            ):
                if reading.state == FileReading.State.FAILED:
                    raise CommandError(f"{name}: reading failed: {reading.reason}")
                return reading
            time.sleep(0.05)
        raise CommandError(f"{name}: not read within {WAIT_SECONDS_PER_FILE} s")
