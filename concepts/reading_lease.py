"""The lease of a file reading: who reads it, and proof that they still are.

A reading is claimed by one process (`host:pid`) and its `heartbeat_at` is renewed every
HEARTBEAT_SECONDS by a small thread while the reading runs. A reading is *lost* when
the lease lapsed (no heartbeat for LEASE_SECONDS: the worker died, or its host did), or
at once when the claiming process was on this host and no longer exists. Lost readings
are claimable again, and the sweep re-queues them (concepts.services).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from concepts.models import FileReading

logger = logging.getLogger(__name__)

# The longest reading (the task's hard time limit is 660 s) renews its lease ~60 times.
HEARTBEAT_SECONDS = 10.0
# Three missed heartbeats: a busy database or a long pause does not make a live
# reading look lost.
LEASE_SECONDS = 3 * HEARTBEAT_SECONDS
# A file whose reading kills its worker every time (a pathological PDF, say) is failed
# with the reason after this many claims instead of being re-queued forever.
MAX_READING_ATTEMPTS = 3


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _process_gone(worker: str) -> bool:
    """True only when `worker` ran on this host and its process no longer exists."""
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    if int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


def lease_lapsed_before(now: datetime) -> datetime:
    return now - timedelta(seconds=LEASE_SECONDS)


def claimable(now: datetime) -> Q:
    """Readings a process may claim: queued, or reading under a lapsed lease."""
    return Q(state=FileReading.State.QUEUED) | Q(
        state=FileReading.State.READING, heartbeat_at__lt=lease_lapsed_before(now)
    )


def is_lost(reading: FileReading, now: datetime) -> bool:
    if reading.heartbeat_at is None or reading.heartbeat_at < lease_lapsed_before(now):
        return True
    return bool(reading.worker) and _process_gone(reading.worker)


@contextlib.contextmanager
def heartbeat(file_id: int, interval: float | None = None) -> Iterator[None]:
    """Renew the lease of `file_id` (when this process holds it) until the block ends."""
    interval = interval if interval is not None else HEARTBEAT_SECONDS
    me = worker_id()
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(interval):
                with transaction.atomic():
                    # SKIP LOCKED: never wait behind the reading's own transaction.
                    held = (
                        FileReading.objects.select_for_update(skip_locked=True)
                        .filter(pk=file_id, state=FileReading.State.READING, worker=me)
                        .values_list("pk", flat=True)
                    )
                    FileReading.objects.filter(pk__in=list(held)).update(
                        heartbeat_at=timezone.now()
                    )
        except Exception:  # a missed heartbeat only risks a second reading, never data
            logger.exception("heartbeat of file reading %s stopped", file_id)
        finally:
            connection.close()

    thread = threading.Thread(target=beat, name=f"reading-heartbeat-{file_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=interval + 5)
