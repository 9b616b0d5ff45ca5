"""The evaluation's calls into the product, in one place.

The scenarios, the benchmark and the demo write and read only through these: the concept
map's file intake, the memory block builder, and the reading of a block result into what
the graders compare (`Shown`). Nothing here imitates a part of the product.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from tutorbrain.evaluation.graders import Recalled, Shown


@contextmanager
def tasks_inline() -> Iterator[None]:
    """Run the product's Celery tasks in this process while the block is open.

    The demo, the scenarios and the benchmark each play a whole history in one process:
    the work a worker would do after each commit (teaching from a message, embedding new
    concept names) must be done before the next event is logged, exactly as the test
    suite does it, and never left in the shared broker for some other worker.
    """
    from config.celery import app

    previous = (app.conf.task_always_eager, app.conf.task_eager_propagates)
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, True
    try:
        yield
    finally:
        app.conf.task_always_eager, app.conf.task_eager_propagates = previous


class PartMissing(RuntimeError):
    """A part of the product the evaluation needs is not installed in this tree."""


def file_intake(*, pair, name: str, content: bytes, now: datetime):
    """A file arrives for the pair's subject: registered, a `file` episode, read into the map.

    The concept map's own upload service (the path of POST /api/v1/files/), then its
    reading service synchronously, so the map is ready before the next events are logged.
    Returns the registered SubjectFile.
    """
    from concepts.models import FileReading
    from concepts.services import file_read, file_upload

    upload = file_upload(pair=pair, name=name, content=content, now=now, queue=False)
    if upload.reading.state == FileReading.State.QUEUED:
        reading = file_read(subject_file=upload.file, now=now)
        if reading.state == FileReading.State.FAILED:
            raise RuntimeError(f"reading {name} failed: {reading.reason}")
    return upload.file


def file_remove(*, subject_file, now: datetime):
    """A file is removed (recorded, not deleted); the map is recomputed without it."""
    from concepts.services import file_remove as concepts_file_remove

    return concepts_file_remove(subject_file=subject_file, now=now)


def block_build(
    *,
    pair,
    message: str,
    now: datetime,
    budget: int,
    legacy_assessment: str | None = None,
):
    """The real memory block for this pair and message (the API's own builder)."""
    try:
        from tutorbrain.block.build import memory_block_build
    except ImportError as exc:
        raise PartMissing("tutorbrain.block.build.memory_block_build (the memory block)") from exc
    return memory_block_build(
        pair_or_none=pair,
        organization=pair.subject.organization,
        student_external_id=pair.student.external_id,
        subject_external_id=pair.subject.external_id,
        message=message,
        now=now,
        budget=budget,
        legacy_assessment=legacy_assessment,
    )


def _get(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name)


def shown_of_block(result) -> Shown:
    """The block's text and the recalled episodes (id, when) the result reports (R-5.10)."""
    recalled = tuple(
        Recalled(id=int(_get(item, "id")), occurred_at=_get(item, "occurred_at"))
        for item in (result.recalled or [])
    )
    return Shown(text=result.text or "", recalled=recalled)
