"""Benchmark of the episode log: appends per second and chain verification speed.

    TUTORBRAIN_DB_NAME=tutorbrain_bench_episodes python manage.py bench_episodes \
        --create-database --chain-size 100000

Writes permanent rows (the log is append-only), so it refuses the main and test
databases. Measures, each in a fresh organization:
  1. single appends (`episode_append`) to one chain, without and with embedding;
  2. the same spread round-robin over 100 chains;
  3. concurrent writers (threads) on one chain vs on 100 chains (the per-chain lock);
  4. batch appends (`episode_append_batch`, 1,000 per transaction, no embedding);
  5. chain verification (`chain_report`, streamed) of a chain of --chain-size episodes.
Appends include the other apps' after-commit receivers unless --log-only.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta

import psycopg
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from memory import indexing
from memory.models import Pair
from memory.selectors import chain_report
from memory.services import (
    EventSpec,
    episode_append,
    episode_append_batch,
    organization_create,
    pair_get_or_create,
    student_get_or_create,
    subject_get_or_create,
)
from memory.signals import episodes_appended

T0 = datetime(2025, 1, 1, tzinfo=UTC)
SUMMARIES = [
    "What is the difference between mitosis and meiosis?",
    "Check on osmosis: water moves toward the higher solute concentration",
    "The mitochondria produce ATP through cellular respiration",
    "Quiz on cell organelles",
    "¿Qué es la fotosíntesis y dónde ocurre?",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def event(i: int) -> dict:
    kind = ("question", "check", "answer", "quiz", "question")[i % 5]
    return {
        "kind": kind,
        "summary": f"{SUMMARIES[i % len(SUMMARIES)]} ({i})",
        "text": f"Turn {i}: " + SUMMARIES[(i + 2) % len(SUMMARIES)] * 3,
        "verdict": "wrong" if kind == "check" else ("right" if kind == "quiz" else ""),
        "concepts": ["osmosis"] if kind == "check" else [],
        "occurred_at": T0 + timedelta(minutes=i),
    }


class Command(BaseCommand):
    help = "Benchmark appends/s (one chain, 100 chains, with/without embedding) and verification."

    def add_arguments(self, parser):
        parser.add_argument("--create-database", action="store_true")
        parser.add_argument("--appends", type=int, default=2000, help="single appends per run")
        parser.add_argument(
            "--embed-appends", type=int, default=500, help="single appends with embedding"
        )
        parser.add_argument("--chains", type=int, default=100)
        parser.add_argument("--threads", type=int, default=4)
        parser.add_argument("--chain-size", type=int, default=100_000)
        parser.add_argument("--verify-runs", type=int, default=3)
        parser.add_argument(
            "--reuse-chain",
            action="store_true",
            help="verify an existing chain of --chain-size episodes instead of building one",
        )
        parser.add_argument(
            "--log-only",
            action="store_true",
            help="disconnect other apps' episodes_appended receivers: time the log alone",
        )

    def handle(self, *args, **options):
        name = connection.settings_dict["NAME"]
        if name.startswith("test_") or name == "tutorbrain":
            raise CommandError(
                f"refusing to write benchmark data into {name!r}: set TUTORBRAIN_DB_NAME "
                "to a benchmark database (e.g. tutorbrain_bench_episodes)",
                returncode=2,
            )
        if options["create_database"]:
            self._create_database(name)
            call_command("migrate", verbosity=0)
        if options["log_only"]:
            # Other apps react to every append after commit (beliefs from checks,
            # teaching from taught episodes); this isolates the log's own cost.
            episodes_appended.receivers = []
            episodes_appended.sender_receivers_cache.clear()
        self.org = organization_create(name=f"bench episodes {uuid.uuid4().hex[:8]}")
        self.stdout.write(
            f"database {name}, organization {self.org.slug}, {os.cpu_count()} cores, "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        self.pairs_made = 0

        n, ne = options["appends"], options["embed_appends"]
        self._embedder(ne)
        self._singles("one chain, no embedding", [self._pair()], n, embed=False)
        self._singles("one chain, with embedding", [self._pair()], ne, embed=True)
        chains = [self._pair() for _ in range(options["chains"])]
        self._singles(f"{len(chains)} chains, no embedding", chains, n, embed=False)
        chains = [self._pair() for _ in range(options["chains"])]
        self._singles(f"{len(chains)} chains, with embedding", chains, ne, embed=True)
        threads = options["threads"]
        self._concurrent(f"{threads} threads, one chain", [self._pair()], threads, n)
        chains = [self._pair() for _ in range(options["chains"])]
        self._concurrent(f"{threads} threads, {len(chains)} chains", chains, threads, n)
        if options["chain_size"]:
            self._verify(options["chain_size"], options["verify_runs"], options["reuse_chain"])
        self.stdout.write(f"load average at the end {os.getloadavg()[0]:.1f}")

    def _create_database(self, name: str) -> None:
        params = dict(connection.get_connection_params())
        params["dbname"] = "postgres"
        with psycopg.connect(**params, autocommit=True) as admin:
            if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
                admin.execute(f'CREATE DATABASE "{name}"')
                self.stdout.write(f"created database {name}")
        with psycopg.connect(**{**params, "dbname": name}, autocommit=True) as db:
            db.execute("CREATE EXTENSION IF NOT EXISTS vector")

    def _pair(self) -> Pair:
        self.pairs_made += 1
        student = student_get_or_create(organization=self.org, external_id=f"s{self.pairs_made}")
        subject = subject_get_or_create(organization=self.org, external_id="biology")
        return pair_get_or_create(student=student, subject=subject)

    def _report(self, label: str, count: int, seconds: float, latencies: list[float]) -> None:
        ms = [x * 1000 for x in latencies]
        self.stdout.write(
            f"{label:<34} {count:>6} appends in {seconds:6.2f} s = {count / seconds:7.0f}/s; "
            f"per append median {statistics.median(ms):.2f} ms, p90 {percentile(ms, 0.9):.2f} "
            f"ms, p95 {percentile(ms, 0.95):.2f} ms"
        )

    def _singles(self, label: str, pairs: list[Pair], count: int, *, embed: bool) -> None:
        # Warm the embedder and the connection outside the timing.
        episode_append(pair=pairs[0], embed=embed, **event(0))
        latencies = []
        start = time.perf_counter()
        for i in range(count):
            t = time.perf_counter()
            episode_append(pair=pairs[i % len(pairs)], embed=embed, **event(i + 1))
            latencies.append(time.perf_counter() - t)
        self._report(label, count, time.perf_counter() - start, latencies)

    def _concurrent(self, label: str, pairs: list[Pair], threads: int, count: int) -> None:
        per_thread = count // threads
        latencies: list[float] = []
        lock = threading.Lock()
        barrier = threading.Barrier(threads + 1)

        def writer(n: int) -> None:
            mine = []
            try:
                barrier.wait()
                for i in range(per_thread):
                    pair = pairs[(n * per_thread + i) % len(pairs)]
                    t = time.perf_counter()
                    episode_append(pair=pair, embed=False, **event(i))
                    mine.append(time.perf_counter() - t)
            finally:
                connection.close()
                with lock:
                    latencies.extend(mine)

        workers = [threading.Thread(target=writer, args=(n,)) for n in range(threads)]
        for worker in workers:
            worker.start()
        barrier.wait()
        start = time.perf_counter()
        for worker in workers:
            worker.join()
        self._report(label, per_thread * threads, time.perf_counter() - start, latencies)
        for pair in pairs[:3]:
            assert chain_report(pair=pair).intact, "a concurrent chain does not verify"

    def _embedder(self, count: int) -> None:
        """The embedder alone, for reading the with-embedding rows."""
        indexing.embed(["warm up"])
        latencies = []
        for i in range(count):
            e = event(i)
            text = indexing.episode_embedding_text(e["summary"], e["text"])
            t = time.perf_counter()
            indexing.embed([text])
            latencies.append(time.perf_counter() - t)
        ms = [x * 1000 for x in latencies]
        self.stdout.write(
            f"{'embedder alone (one text)':<34} {count:>6} calls: median "
            f"{statistics.median(ms):.2f} ms, p90 {percentile(ms, 0.9):.2f} ms, p95 "
            f"{percentile(ms, 0.95):.2f} ms"
        )

    def _verify(self, size: int, runs: int, reuse: bool) -> None:
        existing = (
            Pair.objects.filter(head_seq__gte=size).order_by("head_seq").first() if reuse else None
        )
        if existing is not None:
            self.stdout.write(
                f"verifying the existing chain of pair {existing.pk} ({existing.head_seq} episodes)"
            )
            self._verify_runs(existing, existing.head_seq, runs)
            return
        pair = self._pair()
        batch = 1000
        timings = []
        start = time.perf_counter()
        for offset in range(0, size, batch):
            events = [EventSpec(**event(i)) for i in range(offset, min(size, offset + batch))]
            t = time.perf_counter()
            episode_append_batch(pair=pair, events=events, embed=False)
            timings.append((time.perf_counter() - t) / len(events))
        seconds = time.perf_counter() - start
        self._report(f"batches of {batch}, no embedding", size, seconds, timings)
        self._verify_runs(pair, size, runs)

    def _verify_runs(self, pair: Pair, size: int, runs: int) -> None:
        rates = []
        for _ in range(runs):
            t = time.perf_counter()
            report = chain_report(pair=pair)
            elapsed = time.perf_counter() - t
            if not report.intact or report.length != size:
                raise CommandError(f"the benchmark chain does not verify: {report}")
            rates.append(size / elapsed)
        self.stdout.write(
            f"verify a chain of {size} episodes, {runs} runs: median "
            f"{statistics.median(rates):,.0f} episodes/s (min {min(rates):,.0f}, max "
            f"{max(rates):,.0f}); {size / statistics.median(rates):.1f} s per verification"
        )
