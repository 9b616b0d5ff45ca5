"""Celery tasks of the concept map. Each takes ids, loads rows and calls a service."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready

logger = logging.getLogger(__name__)


@shared_task(
    name="concepts.embed_missing",
    soft_time_limit=120,
    time_limit=150,
    autoretry_for=(ConnectionError,),
    retry_backoff=True,
    max_retries=3,
)
def concepts_embed_missing(subject_id: int) -> int:
    """Embed the names of the subject's concepts that have no vector yet."""
    from concepts.services import concepts_embed
    from memory.models import Subject

    subject = Subject.objects.filter(pk=subject_id).first()
    if subject is None:
        return 0
    return concepts_embed(subject=subject)


@shared_task(name="concepts.read_file", soft_time_limit=600, time_limit=660, acks_late=True)
def file_read_task(file_id: int) -> str:
    """Read one uploaded file into its subject's map (claimed: a duplicate does nothing).

    The lease is renewed while the reading runs, so a reading whose worker dies is found
    by the sweep below and read again.
    """
    from concepts.reading_lease import heartbeat
    from concepts.services import file_read
    from memory.models import SubjectFile

    subject_file = SubjectFile.objects.select_related("subject").filter(pk=file_id).first()
    if subject_file is None:
        return "missing"
    with heartbeat(file_id):
        return file_read(subject_file=subject_file).state


@shared_task(name="concepts.requeue_lost_readings", soft_time_limit=60, time_limit=90)
def file_readings_requeue_lost_task() -> list[int]:
    """The periodic sweep (config.settings.CELERY_BEAT_SCHEDULE): lost readings re-queued."""
    from concepts.services import file_readings_requeue_lost

    return file_readings_requeue_lost()


@worker_ready.connect
def requeue_lost_readings_at_start(sender=None, **kwargs) -> None:
    """A worker coming back (after a kill, a deploy) re-queues what its predecessor lost
    at once, instead of waiting for the next beat."""
    from django.db import connection

    from concepts.services import file_readings_requeue_lost

    try:
        file_readings_requeue_lost()
    except Exception:  # the worker must start even if the database is not there yet
        logger.exception("the start-up sweep of lost file readings failed")
    finally:
        connection.close()  # the pool's processes must not share this connection


@shared_task(
    name="concepts.teach_from_episode",
    soft_time_limit=60,
    time_limit=90,
    autoretry_for=(ConnectionError,),
    retry_backoff=True,
    max_retries=3,
)
def concept_teach_task(episode_id: int) -> int | None:
    """Apply one teaching message (idempotent: a second run finds the note and stops)."""
    from concepts.services import concept_teach_from_episode
    from memory.models import Episode

    episode = (
        Episode.objects.select_related("pair__subject", "pair__student")
        .filter(pk=episode_id)
        .first()
    )
    if episode is None:
        return None
    note = concept_teach_from_episode(episode=episode)
    return note.pk if note is not None else None
