"""Warm a web process up before it takes its first request.

The first memory block of a fresh process used to pay for loading the embedding model,
importing the API's views and opening connections inside the turn's deadline (2.5 s on a
busy machine: dropped). gunicorn calls `warm_up()` in each worker after the application
is loaded and before the worker accepts a connection (config/gunicorn.py), so the first
turn costs what every later turn costs. It reads only.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import close_old_connections, connections
from django.urls import get_resolver
from django.utils import timezone

logger = logging.getLogger(__name__)

WARM_UP_MESSAGE = "What did we see last time about this?"
# A warm-up may take what it needs (a cold model, a cold cache): it is not a turn.
WARM_UP_DEADLINE_SECONDS = 120.0


def warm_up() -> dict[str, float]:
    """One real embedding and one real block build through the deadline runner.

    The build reads the most recently active pair, if there is one (an empty database
    still runs the lookup query). Returns the milliseconds each step took.
    """
    from memory.models import Organization, Pair
    from tutorbrain.block.build import memory_block_build, message_embed
    from tutorbrain.block.deadline import run_with_deadline

    timings: dict[str, float] = {}
    started = time.perf_counter()
    get_resolver().check()  # imports every view and serializer of the URLconf
    timings["urls_ms"] = (time.perf_counter() - started) * 1000

    started = time.perf_counter()
    vector = message_embed(WARM_UP_MESSAGE)
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

    def build(cancelled):
        return memory_block_build(
            organization=organization,
            student_external_id=student,
            subject_external_id=subject,
            message=WARM_UP_MESSAGE,
            now=timezone.now(),
            budget=settings.TUTORBRAIN_DEFAULT_TOKEN_BUDGET,
            vector=vector,
            cancelled=cancelled,
        )

    outcome = run_with_deadline(build, deadline=WARM_UP_DEADLINE_SECONDS)
    timings["block_ms"] = (time.perf_counter() - started) * 1000
    if outcome.dropped:
        logger.warning("the warm-up block build did not finish")
    # This thread is not a request thread: hand its connections back to the pool.
    close_old_connections()
    for alias in connections:
        connections[alias].close()
    return timings
