"""Celery tasks of the concept map. Each takes ids, loads rows and calls a service."""

from __future__ import annotations

from celery import shared_task


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
    """Read one uploaded file into its subject's map (claimed: a duplicate does nothing)."""
    from concepts.services import file_read
    from memory.models import SubjectFile

    subject_file = SubjectFile.objects.select_related("subject").filter(pk=file_id).first()
    if subject_file is None:
        return "missing"
    return file_read(subject_file=subject_file).state
