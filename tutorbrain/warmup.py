"""Warm a web process up before it takes its first request.

The first memory block of a fresh process used to pay for loading the embedding model,
importing the API's views and opening connections inside the turn's deadline (2.5 s on a
busy machine: dropped). gunicorn calls `warm_up()` in each worker after the application
is loaded and before the worker accepts a connection (config/gunicorn.py), so the first
turn costs what every later turn costs. It reads only.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import close_old_connections, connections
from django.urls import get_resolver
from django.utils import timezone

from config.routers import block_read_alias

logger = logging.getLogger(__name__)

# A history cue (the recent pool, time words) and a question with content words in each
# language (stemmers and stop words are loaded on first use, the lexical pool and routing
# by words run only for such words): a first turn of any shape finds it all loaded.
WARM_UP_MESSAGES = (
    "What did we see last time about this?",
    "Can you explain again how this process works, step by step?",
    "¿Puedes explicar otra vez cómo funciona este proceso?",
    "Pode explicar de novo como funciona este processo?",
    "Peux-tu expliquer encore comment fonctionne ce processus ?",
    "هل يمكنك أن تشرح مرة أخرى كيف تعمل هذه العملية؟",
)
# A warm-up may take what it needs (a cold model, a cold cache): it is not a turn.
WARM_UP_DEADLINE_SECONDS = 120.0


def warm_up() -> dict[str, float]:
    """Real embeddings and real block builds: through the deadline runner for each
    warm-up message, then one on each connection the pool keeps open.

    The builds read the most recently active pair, if there is one (an empty database
    still runs the lookup query). Returns the milliseconds each step took and how many
    pooled connections were warmed.
    """
    from memory.models import Organization, Pair
    from tutorbrain.block.build import memory_block_build, message_embed
    from tutorbrain.block.deadline import run_with_deadline

    timings: dict[str, float] = {}
    started = time.perf_counter()
    get_resolver().check()  # imports every view and serializer of the URLconf
    timings["urls_ms"] = (time.perf_counter() - started) * 1000

    started = time.perf_counter()
    vectors = [message_embed(message) for message in WARM_UP_MESSAGES]
    timings["embed_ms"] = (time.perf_counter() - started) * 1000

    started = time.perf_counter()
    pair = (
        Pair.objects.select_related("student__organization", "subject")
        .order_by("-last_episode_at", "-pk")
        .first()
    )
    if pair is not None:
        organization = pair.student.organization
        student, subject = pair.student.external_id, pair.subject.external_id
    else:
        organization = Organization(pk=0, name="warm-up", slug="warm-up")
        student, subject = "warm-up", "warm-up"

    def build(index: int, cancelled: threading.Event):
        k = index % len(WARM_UP_MESSAGES)
        return memory_block_build(
            organization=organization,
            student_external_id=student,
            subject_external_id=subject,
            message=WARM_UP_MESSAGES[k],
            now=timezone.now(),
            budget=settings.TUTORBRAIN_DEFAULT_TOKEN_BUDGET,
            vector=vectors[k],
            cancelled=cancelled,
        )

    for index in range(len(WARM_UP_MESSAGES)):
        outcome = run_with_deadline(
            functools.partial(build, index), deadline=WARM_UP_DEADLINE_SECONDS
        )
        if outcome.dropped:
            logger.warning("the warm-up block build did not finish")
    timings["block_ms"] = (time.perf_counter() - started) * 1000
    # This thread is not a request thread: hand its connections back to the pool (the
    # next step needs every one of them).
    close_old_connections()
    for alias in connections:
        connections[alias].close()
    started = time.perf_counter()
    warmed = _warm_pooled_connections(lambda index: build(index, threading.Event()))
    timings["connections"] = warmed
    timings["connections_ms"] = (time.perf_counter() - started) * 1000
    return timings


def _warm_pooled_connections(build: Callable[[int], object]) -> int:
    """One block build on each connection the pool keeps open; returns how many.

    A PostgreSQL backend fills its catalog caches during its first statements: a turn
    served by a connection no build has used yet pays ~10-60 ms more. The builds run
    in as many threads at once, each holding its connection until all have built, so
    each gets a connection of its own.
    """
    alias = block_read_alias()
    count = connections.settings[alias].get("OPTIONS", {}).get("pool", {}).get("min_size", 0)
    if count < 1:
        return 0
    barrier = threading.Barrier(count)

    def run(index: int) -> None:
        try:
            build(index)
            barrier.wait(timeout=WARM_UP_DEADLINE_SECONDS)
        except threading.BrokenBarrierError:
            pass  # another thread failed: its error is what counts
        except Exception:
            barrier.abort()
            raise
        finally:
            for each in connections.all(initialized_only=True):
                each.close()

    with ThreadPoolExecutor(max_workers=count, thread_name_prefix="warm-up") as pool:
        for future in [pool.submit(run, index) for index in range(count)]:
            future.result()
    return count
