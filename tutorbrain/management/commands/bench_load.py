"""Load benchmark of the production server: N chat services taking turns at once.

    TUTORBRAIN_DB_NAME=tutorbrain_bench python manage.py bench_load --clients 1,4,16,32

Needs the bench database of `bench_block` (a 10,000-episode pair inside a million
episodes). Starts the production server (gunicorn, config/gunicorn.py, warmed up) on a
free loopback port against that database, or uses `--url` (loopback only). Then, for each
client count, that many threads each act as one chat service doing the per-turn flow on
the bench pair, over a kept-alive HTTP connection:

    1. POST /api/v1/episodes/      the student's question
    2. POST /api/v1/memory-block/  the block for the turn (timed on its own)
    3. POST /api/v1/episodes/      the tutor's answer, with the recalled episode ids
    4. every 4th turn: POST /api/v1/episodes/  a check (right/wrong)

`--think-ms` waits between 2 and 3, as the tutor's model writing its answer would;
by default there is no wait: each client sends its next request as soon as it can.

Every text a turn sends is new, as a real student's and tutor's are: the bench messages
and answers each end with a few emoji of their own (`_unique_tag`: no word, so the
message reads the same). With the same dozen texts over and over, every embedding after
the first came from the server's cache of recent texts, and a turn paid none of its
three.

Each level runs `--seconds` (after a `--ramp` of unrecorded turns) or `--max-turns`,
whichever comes first; the whole run stops after `--max-total-seconds` at the latest.
Reports turns/s, block latency p50/p95/p99 as the client saw it, the server's build time,
the dropped share, errors, PostgreSQL's connection count (peak during the level) and the
load average. Throttling is off on the server it starts (this measures capacity; the
throttle's own test is in tests/test_serving_throttle.py).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from memory.models import Organization, Pair
from tutorbrain.management.commands.bench_block import BENCH_MESSAGES, percentile

# The server's connections, told apart from this command's own (config/gunicorn.py).
WEB_APPLICATION_NAME = "tutorbrain-web"
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
ANSWERS = [
    "Osmosis moves water across a membrane towards the side with more solute.",
    "The Krebs cycle oxidises acetyl-CoA and feeds electrons to the respiratory chain.",
    "La mitocondria produce la mayor parte del ATP de la célula.",
    "Enzymes lose their shape at high temperature, so they stop working.",
]


# Emoji, as chat messages carry: no word of any language, so a tag changes neither the
# message's language, nor its topic words, nor its cues (a made-up word would have become
# a topic word that matched the turn's own question, and given history questions a topic).
_TAG_EMOJI = "🙂😀🤔👍🎉🌱🔬📘🧪📝📐🧬💡🌍🔥⭐🍎🚀📎🧠🎯⚡🌙🌈"


def _unique_tag(rng: random.Random) -> str:
    """Six emoji (24**6 ≈ 190 million tags): a bench text new to the server's cache of
    recent embeddings, as each real student's and tutor's text is."""
    return "".join(rng.choice(_TAG_EMOJI) for _ in range(6))


@dataclass
class LevelResult:
    clients: int
    seconds: float = 0.0
    turns: int = 0
    block_ms: list[float] = field(default_factory=list)
    build_ms: list[float] = field(default_factory=list)
    turn_ms: list[float] = field(default_factory=list)
    dropped: int = 0
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    peak_connections: int = 0
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)
    # CPU the server used while the level was recorded: its processes, its backends.
    server_cpu_ms: float | None = None
    database_cpu_ms: float | None = None


def _cpu_ms(pid: int) -> float | None:
    """User + system CPU time of a process so far, from /proc (same machine only)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _cpu_snapshot(pids) -> dict[int, float]:
    out = {}
    for pid in pids:
        value = _cpu_ms(pid)
        if value is not None:
            out[pid] = value
    return out


def _cpu_delta(before: dict[int, float], after: dict[int, float]) -> float:
    return sum(value - before.get(pid, 0.0) for pid, value in after.items())


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Server:
    """gunicorn on 127.0.0.1, for the length of the benchmark."""

    def __init__(self, database: str, workers: int, threads: int, log_path: Path, nice: int | None):
        self.port = _free_port()
        self.workers = workers
        env = dict(os.environ)
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "config.settings",
                "TUTORBRAIN_DB_NAME": database,
                "TUTORBRAIN_WEB_WORKERS": str(workers),
                "TUTORBRAIN_WEB_THREADS": str(threads),
                "TUTORBRAIN_API_RATE": "off",
            }
        )
        gunicorn = Path(sys.executable).parent / "gunicorn"
        self.log_path = log_path
        self.log = open(log_path, "w")  # noqa: SIM115  # closed in stop()
        self.process = subprocess.Popen(
            [
                str(gunicorn),
                "-c",
                "config/gunicorn.py",
                "--bind",
                f"127.0.0.1:{self.port}",
                "config.wsgi",
            ],  # fmt: skip
            cwd=settings.BASE_DIR,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            # Its own process group: stop() can end the workers too, even stuck ones.
            start_new_session=True,
            preexec_fn=(lambda: os.setpriority(os.PRIO_PROCESS, 0, nice))
            if nice is not None
            else None,
        )

    def wait_warm(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise CommandError(f"gunicorn exited; see {self.log_path}")
            log = self.log_path.read_text()
            if "warm-up failed" in log:
                raise CommandError(f"a gunicorn worker could not warm up; see {self.log_path}")
            if log.count("warmed up") >= self.workers:
                return
            time.sleep(0.5)
        raise CommandError(f"gunicorn did not warm up in {timeout:.0f} s; see {self.log_path}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()


class Command(BaseCommand):
    help = "Load benchmark: N concurrent chat services against the production server."

    def add_arguments(self, parser):
        parser.add_argument("--clients", default="1,4,16,32", help="client counts, in order")
        parser.add_argument("--seconds", type=float, default=30.0, help="recorded time per level")
        parser.add_argument("--ramp", type=float, default=5.0, help="unrecorded start per level")
        parser.add_argument("--max-turns", type=int, default=5000, help="turns per level, at most")
        parser.add_argument(
            "--max-total-seconds", type=float, default=900.0, help="the whole run, at most"
        )
        parser.add_argument("--check-every", type=int, default=4)
        parser.add_argument(
            "--think-ms",
            type=int,
            default=0,
            help="wait between the block and the answer, as the tutor's model generating "
            "it (0: back-to-back turns, the most load N clients can make)",
        )
        parser.add_argument("--workers", type=int, default=settings.TUTORBRAIN_WEB_WORKERS)
        parser.add_argument("--threads", type=int, default=settings.TUTORBRAIN_WEB_THREADS)
        parser.add_argument("--url", default="", help="a running server (loopback only)")
        parser.add_argument("--student", default="", help="default: the largest bench pair")
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--log", default="var/bench_load_server.log")
        parser.add_argument(
            "--nice",
            type=int,
            default=None,
            help="run the server, the clients and the server's database backends at this "
            "nice value (e.g. -10: as on a dedicated machine while the shared one is busy)",
        )

    def handle(self, *args, **options):
        name = connection.settings_dict["NAME"]
        if name.startswith("test_") or name == "tutorbrain":
            raise CommandError(
                f"refusing to write benchmark turns into {name!r}: set TUTORBRAIN_DB_NAME "
                "to the bench database (manage.py bench_block --create-database ...)"
            )
        try:
            levels = [int(c) for c in options["clients"].split(",") if c.strip()]
        except ValueError as exc:
            raise CommandError("--clients must be a comma-separated list of integers") from exc
        if not levels or min(levels) < 1 or max(levels) > 256:
            raise CommandError("--clients: each count must be between 1 and 256")
        org = Organization.objects.filter(slug="bench").first()
        if org is None:
            raise CommandError("no bench data: run manage.py bench_block --generate-only first")
        pairs = Pair.objects.select_related("student", "subject").filter(student__organization=org)
        if options["student"]:
            pairs = pairs.filter(student__external_id=options["student"])
        pair = pairs.order_by("-head_seq", "pk").first()
        if pair is None:
            raise CommandError(f"no bench pair for student {options['student']!r}")
        from memory.models import Episode
        from memory.services import api_key_create

        _, key = api_key_create(organization=org, name="bench_load")
        total = Episode.objects.count()
        self.stdout.write(
            f"database {name}: {total:,} episodes; pair {pair.student.external_id}: "
            f"{pair.head_seq:,} episodes"
        )
        run_deadline = time.monotonic() + options["max_total_seconds"]
        server = None
        if options["url"]:
            parts = urlsplit(options["url"])
            if parts.scheme != "http" or parts.hostname not in LOOPBACK_HOSTS:
                raise CommandError("--url must be http:// on loopback (127.0.0.1, localhost, ::1)")
            host, port = parts.hostname, parts.port or 80
            self.stdout.write(f"server: {options['url']} (already running)")
        else:
            log_path = Path(settings.BASE_DIR) / options["log"]
            log_path.parent.mkdir(parents=True, exist_ok=True)
            server = _Server(
                name, options["workers"], options["threads"], log_path, options["nice"]
            )
            host, port = "127.0.0.1", server.port
            self.stdout.write(
                f"server: gunicorn {options['workers']} processes x {options['threads']} "
                f"threads on 127.0.0.1:{port}; log {log_path}"
            )
        results: list[LevelResult] = []
        try:
            if server is not None:
                server.wait_warm(timeout=min(300.0, run_deadline - time.monotonic()))
            for clients in levels:
                if time.monotonic() >= run_deadline:
                    self.stdout.write(f"stopped before {clients} clients: --max-total-seconds")
                    break
                result = self._level(
                    host,
                    port,
                    key,
                    pair,
                    clients,
                    options,
                    run_deadline,
                    server.process.pid if server is not None else None,
                )
                results.append(result)
                self._print_level(result)
        finally:
            if server is not None:
                server.stop()
        self._print_table(results, options)
        connection.close()

    # --- one level --------------------------------------------------------------------

    def _level(
        self, host, port, key, pair, clients, options, run_deadline, server_pid
    ) -> LevelResult:
        result = LevelResult(clients=clients)
        lock = threading.Lock()
        stop = threading.Event()
        recording = threading.Event()
        student, subject = pair.student.external_id, pair.subject.external_id

        def post(conn, path: str, body: dict):
            conn.request(
                "POST",
                path,
                body=json.dumps(body),
                headers={"Authorization": f"Api-Key {key}", "Content-Type": "application/json"},
            )
            response = conn.getresponse()
            raw = response.read()
            if response.status >= 300:
                raise RuntimeError(f"{path} answered {response.status}: {raw[:200]!r}")
            return json.loads(raw)

        def client(index: int) -> None:
            rng = random.Random(options["seed"] * 1000 + index)
            conn = http.client.HTTPConnection(host, port, timeout=60)
            turn = 0
            while not stop.is_set():
                message = (
                    f"{rng.choice([m for m in BENCH_MESSAGES if m.strip()])} {_unique_tag(rng)}"
                )
                answer = f"{rng.choice(ANSWERS)} {_unique_tag(rng)}"
                turn += 1
                started = time.perf_counter()
                try:
                    post(conn, "/api/v1/episodes/", {"student": student, "subject": subject,
                                                     "kind": "question", "summary": message})  # fmt: skip
                    block_started = time.perf_counter()
                    block = post(
                        conn,
                        "/api/v1/memory-block/",
                        {"student": student, "subject": subject, "message": message},
                    )
                    block_ms = (time.perf_counter() - block_started) * 1000
                    recalled = [r["id"] for r in block["recalled"]][:20]
                    if options["think_ms"]:  # the tutor's model writing the answer
                        stop.wait(options["think_ms"] / 1000)
                    post(conn, "/api/v1/episodes/", {"student": student, "subject": subject,
                                                     "kind": "answer", "summary": answer,
                                                     "recalled_ids": recalled})  # fmt: skip
                    if turn % options["check_every"] == 0:
                        post(conn, "/api/v1/episodes/", {"student": student, "subject": subject,
                                                         "kind": "check", "summary": f"Check: {message}",
                                                         "verdict": rng.choice(["right", "wrong"])})  # fmt: skip
                except Exception as exc:  # an error is counted and reported, not raised
                    conn.close()
                    conn = http.client.HTTPConnection(host, port, timeout=60)
                    if recording.is_set():
                        with lock:
                            result.errors += 1
                            if len(result.error_samples) < 3:
                                result.error_samples.append(f"{type(exc).__name__}: {exc}")
                    continue
                turn_ms = (time.perf_counter() - started) * 1000
                if not recording.is_set():
                    continue
                with lock:
                    if result.turns >= options["max_turns"]:
                        stop.set()
                        continue
                    result.turns += 1
                    result.turn_ms.append(turn_ms)
                    result.block_ms.append(block_ms)
                    if block["dropped"]:
                        result.dropped += 1
                    else:
                        result.build_ms.append(block["build_ms"])
            conn.close()

        reniced: set[int] = set()
        backends: set[int] = set()

        def sample_connections() -> None:
            while not stop.is_set():
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT pid FROM pg_stat_activity "
                        "WHERE datname = current_database() AND application_name = %s",
                        [WEB_APPLICATION_NAME],
                    )
                    pids = [row[0] for row in cursor.fetchall()]
                count = len(pids)
                backends.update(pids)
                if options["nice"] is not None:
                    for pid in set(pids) - reniced:
                        with contextlib.suppress(OSError):  # a backend gone already
                            os.setpriority(os.PRIO_PROCESS, pid, options["nice"])
                        reniced.add(pid)
                if recording.is_set():
                    result.peak_connections = max(result.peak_connections, count)
                stop.wait(0.25)

        def client_at_priority(index: int) -> None:
            if options["nice"] is not None:  # Linux keeps a nice value per thread
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), options["nice"])
            client(index)

        threads = [
            threading.Thread(target=client_at_priority, args=(i,), daemon=True)
            for i in range(clients)
        ]
        sampler = threading.Thread(target=sample_connections, daemon=True)
        for thread in threads:
            thread.start()
        sampler.start()
        stop.wait(max(0.0, min(options["ramp"], run_deadline - time.monotonic())))
        workers = _children(server_pid) if server_pid is not None else []
        server_before = _cpu_snapshot(workers)
        database_before = _cpu_snapshot(set(backends))
        recording.set()
        started = time.perf_counter()
        stop.wait(max(0.0, min(options["seconds"], run_deadline - time.monotonic())))
        stop.set()
        result.seconds = time.perf_counter() - started
        if workers:
            result.server_cpu_ms = _cpu_delta(server_before, _cpu_snapshot(workers))
            result.database_cpu_ms = _cpu_delta(database_before, _cpu_snapshot(set(backends)))
        for thread in threads:
            thread.join(timeout=90)
        sampler.join(timeout=5)
        result.load = os.getloadavg()
        return result

    # --- report -----------------------------------------------------------------------

    def _print_level(self, r: LevelResult) -> None:
        line = (
            f"{r.clients:>3} clients: {r.turns} turns in {r.seconds:.1f} s, errors {r.errors}, "
            f"dropped {r.dropped}, peak connections {r.peak_connections}, "
            f"load {r.load[0]:.1f}"
        )
        self.stdout.write(line)
        for sample in r.error_samples:
            self.stdout.write(f"      error: {sample}")

    def _print_table(self, results: list[LevelResult], options) -> None:
        self.stdout.write("")
        self.stdout.write(
            "| clients | turns | turns/s | block p50 ms | block p95 ms | block p99 ms | "
            "server build p95 ms | turn p95 ms | dropped | errors | peak connections | "
            "CPU ms/turn (web + db) | load (1 min) |"
        )
        self.stdout.write("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in results:
            rate = r.turns / r.seconds if r.seconds else 0.0
            dropped_share = f"{r.dropped / r.turns:.1%}" if r.turns else "—"
            cpu = "—"
            if r.turns and r.server_cpu_ms is not None and r.database_cpu_ms is not None:
                cpu = (
                    f"{(r.server_cpu_ms + r.database_cpu_ms) / r.turns:.0f} "
                    f"({r.server_cpu_ms / r.turns:.0f} + {r.database_cpu_ms / r.turns:.0f})"
                )

            def p(values, q):
                return f"{percentile(values, q):.0f}" if values else "—"

            self.stdout.write(
                f"| {r.clients} | {r.turns} | {rate:.1f} | {p(r.block_ms, 0.50)} | "
                f"{p(r.block_ms, 0.95)} | {p(r.block_ms, 0.99)} | {p(r.build_ms, 0.95)} | "
                f"{p(r.turn_ms, 0.95)} | {dropped_share} | {r.errors} | {r.peak_connections} | "
                f"{cpu} | {r.load[0]:.1f} |"
            )
        block = [r for r in results if r.block_ms]
        if block:
            median_all = statistics.median([v for r in block for v in r.block_ms])
            self.stdout.write(f"block median over all levels: {median_all:.0f} ms")
        self.stdout.write(
            f"machine: {os.cpu_count()} CPU cores; server {options['workers']} x "
            f"{options['threads']}; think {options['think_ms']} ms; nice {options['nice']}; "
            "pool max "
            f"{os.environ.get('TUTORBRAIN_DB_POOL_MAX_SIZE') or options['threads'] + settings.TUTORBRAIN_BLOCK_WORKERS}"
            " per process"
        )
