"""Benchmark of the read path (R-5, DESIGN §5): embedding, block build, whole HTTP request.

    TUTORBRAIN_DB_NAME=tutorbrain_bench python manage.py bench_block \
        --create-database --pair-episodes 10000 --total-episodes 1000000 --turns 200

Builds a synthetic history at the given scale (tutorbrain.block.synthetic: a fast,
chain-valid COPY path), then times `--turns` turns with messages of several shapes and
prints median / p90 / p95 of (a) the message embedding, (b) the block build without the
embedding, (c) the whole HTTP request through the test client (auth, JSON, deadline
runner and all), plus the queries per build. Never point it at a test database.
"""

from __future__ import annotations

import os
import random
import statistics
import time

import psycopg
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, connections, reset_queries
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory.models import Organization, Pair

BENCH_MESSAGES = [
    "What is osmosis in plants?",
    "Can you explain the Krebs cycle again?",
    "¿Qué es la mitocondria?",
    "What did I get wrong so far?",
    "What did we see in July?",
    "o que vimos em março sobre fotossíntese?",
    "ماذا أخطأت",
    "How do enzymes work at high temperature?",
    "qu'avons-nous vu la semaine dernière ?",
    "",
    "Tell me about ribosomes and translation",
    "What did we do yesterday?",
]


def backend_cpu_ns(pid: int) -> int | None:
    """CPU time the database backend has used, from /proc (same machine only)."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * p
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def describe(name: str, values: list[float]) -> str:
    return (
        f"{name:<34} median {statistics.median(values):7.2f} ms   "
        f"p90 {percentile(values, 0.90):7.2f} ms   p95 {percentile(values, 0.95):7.2f} ms"
    )


class Command(BaseCommand):
    help = "Benchmark the memory block (embedding, build, HTTP) on a synthetic history."

    def add_arguments(self, parser):
        parser.add_argument("--pair-episodes", type=int, default=10_000)
        parser.add_argument("--total-episodes", type=int, default=1_000_000)
        parser.add_argument("--other-pair-size", type=int, default=1_000)
        parser.add_argument("--turns", type=int, default=200)
        parser.add_argument("--budget", type=int, default=900)
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument(
            "--create-database",
            action="store_true",
            help="create the database named by the settings if it does not exist, and migrate",
        )
        parser.add_argument("--generate-only", action="store_true")
        parser.add_argument(
            "--student",
            default="",
            help="benchmark this bench student's pair (default: the largest pair)",
        )
        parser.add_argument(
            "--reuse", action="store_true", help="benchmark the bench data already there"
        )
        parser.add_argument(
            "--nice",
            type=int,
            default=None,
            help="run this process and its database backends at this nice value (e.g. -10: "
            "measure latency as on a dedicated machine while the shared one is busy)",
        )
        parser.add_argument(
            "--working-set",
            choices=["as-is", "rebuild", "clear"],
            default="as-is",
            help="rebuild or clear the target pair's working set (R-7.5) before timing",
        )

    def handle(self, *args, **options):
        name = connection.settings_dict["NAME"]
        if name.startswith("test_") or name == "tutorbrain":
            raise CommandError(
                f"refusing to write benchmark data into {name!r}: set TUTORBRAIN_DB_NAME "
                "to a benchmark database (e.g. tutorbrain_bench)"
            )
        if options["create_database"]:
            self._create_database(name)
            call_command("migrate", verbosity=0)
        org = Organization.objects.filter(slug="bench").first()
        if org is None or not options["reuse"]:
            from tutorbrain.block.synthetic import generate

            scale = generate(
                total_episodes=options["total_episodes"],
                pair_episodes=options["pair_episodes"],
                other_pair_size=options["other_pair_size"],
                seed=options["seed"],
                log=self.stdout.write,
            )
            self.stdout.write(
                f"generated {scale.pairs} pairs, {scale.total_episodes:,} episodes in the "
                f"database, {scale.pair_episodes:,} in the target pair, in {scale.seconds:.0f} s"
            )
        if options["generate_only"]:
            return
        self._bench(options)

    def _set_priority(self, value: int) -> None:
        """This process (threads started later inherit it) and every backend of this
        database (only the benchmark uses it) at nice `value`."""
        # Linux keeps a nice value per thread: every thread of this process (the deadline
        # workers, the BLAS threads of the embedder), then the database backends.
        for task in os.listdir("/proc/self/task"):
            os.setpriority(os.PRIO_PROCESS, int(task), value)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
            pids = [row[0] for row in cursor.fetchall()]
        for pid in pids:
            try:
                os.setpriority(os.PRIO_PROCESS, pid, value)
            except OSError as exc:
                raise CommandError(f"cannot set the priority of backend {pid}: {exc}") from exc
        self.stdout.write(f"nice {value} for this process and backends {pids}")

    def _create_database(self, name: str) -> None:
        params = dict(connection.get_connection_params())
        params["dbname"] = "postgres"
        with psycopg.connect(**params, autocommit=True) as admin:
            exists = admin.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", [name]
            ).fetchone()
            if not exists:
                admin.execute(f'CREATE DATABASE "{name}"')
                self.stdout.write(f"created database {name}")
        with psycopg.connect(**{**params, "dbname": name}, autocommit=True) as db:
            db.execute("CREATE EXTENSION IF NOT EXISTS vector")

    def _bench(self, options) -> None:
        from django.test import Client

        from memory.models import Episode
        from memory.services import api_key_create
        from tutorbrain.block.build import memory_block_build, message_embed
        from tutorbrain.block.working_set import working_set_clear, working_set_rebuild
        from tutorbrain.embedder import forget_recent_texts

        org = Organization.objects.get(slug="bench")
        pairs = Pair.objects.select_related("student", "subject").filter(student__organization=org)
        if options["student"]:
            pairs = pairs.filter(student__external_id=options["student"])
        pair = pairs.order_by("-head_seq", "pk").first()
        if pair is None:
            raise CommandError(f"no bench pair for student {options['student']!r}")
        from tutorbrain.block.synthetic import map_and_beliefs

        map_and_beliefs(subject=pair.subject, pair=pair, log=self.stdout.write)
        if options["working_set"] == "rebuild":
            working_set_rebuild(pair=pair)
        elif options["working_set"] == "clear":
            working_set_clear(pair=pair)
        total = Episode.objects.count()
        self.stdout.write(
            f"database: {total:,} episodes; pair {pair.student.external_id}: "
            f"{pair.head_seq:,} episodes; {options['turns']} turns, budget {options['budget']}"
        )
        _, raw_key = api_key_create(organization=org, name="bench")
        client = Client(HTTP_AUTHORIZATION=f"Api-Key {raw_key}")
        rng = random.Random(options["seed"])
        now = timezone.now()
        embed_ms: list[float] = []
        build_ms: list[float] = []
        http_ms: list[float] = []
        queries: list[int] = []
        cpu_ms: list[float] = []
        # Warm-up: load the embedder, open the connections, fill the caches once.
        for message in BENCH_MESSAGES:
            vector = message_embed(message)
            memory_block_build(
                organization=org,
                student_external_id=pair.student.external_id,
                subject_external_id=pair.subject.external_id,
                message=message,
                now=now,
                budget=options["budget"],
                vector=vector,
            )
            client.post(
                "/api/v1/memory-block/",
                {
                    "student": pair.student.external_id,
                    "subject": pair.subject.external_id,
                    "message": message,
                    "budget": options["budget"],
                },
                content_type="application/json",
            )
        if options["nice"] is not None:
            # After the warm-up: the deadline workers' connections exist by now.
            self._set_priority(options["nice"])
        for _ in range(options["turns"]):
            message = rng.choice(BENCH_MESSAGES)
            # (a) and (c) pay the model, as for a message this process has not seen
            # (in a chat turn the block usually finds it embedded by its append).
            forget_recent_texts()
            started = time.perf_counter()
            vector = message_embed(message)
            if message.strip():
                embed_ms.append((time.perf_counter() - started) * 1000)
            reset_queries()
            connection.ensure_connection()
            pid = connection.connection.info.backend_pid
            backend_before = backend_cpu_ns(pid)
            thread_before = time.thread_time_ns()
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                memory_block_build(
                    organization=org,
                    student_external_id=pair.student.external_id,
                    subject_external_id=pair.subject.external_id,
                    message=message,
                    now=now,
                    budget=options["budget"],
                    vector=vector,
                )
                build_ms.append((time.perf_counter() - started) * 1000)
            backend_after = backend_cpu_ns(pid)
            if backend_before is not None and backend_after is not None:
                cpu_ms.append(
                    (time.thread_time_ns() - thread_before + backend_after - backend_before) / 1e6
                )
            queries.append(len(captured.captured_queries))
            forget_recent_texts()
            started = time.perf_counter()
            response = client.post(
                "/api/v1/memory-block/",
                {
                    "student": pair.student.external_id,
                    "subject": pair.subject.external_id,
                    "message": message,
                    "budget": options["budget"],
                },
                content_type="application/json",
            )
            http_ms.append((time.perf_counter() - started) * 1000)
            if response.status_code != 200 or response.json()["dropped"]:
                raise CommandError(f"the API answered {response.status_code}: {response.content!r}")
        self.stdout.write(describe("(a) embedding of the message", embed_ms))
        self.stdout.write(describe("(b) block build, no embedding", build_ms))
        self.stdout.write(describe("(c) whole HTTP request", http_ms))
        if cpu_ms:
            # On a shared machine wall time includes waiting for a CPU; the CPU time of
            # the build (this thread + its database backend) is what it costs when idle.
            self.stdout.write(describe("(b) build CPU (client + database)", cpu_ms))
        load = os.getloadavg()
        self.stdout.write(f"load average during the run: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
        self.stdout.write(
            f"queries per build: median {statistics.median(queries):.0f}, max {max(queries)}"
        )
        self.stdout.write(
            f"machine: {os.cpu_count()} CPU cores; settings {settings.SETTINGS_MODULE}"
        )
        for alias in connections:
            connections[alias].close()
