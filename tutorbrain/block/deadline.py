"""The hard deadline of a block build (R-5.11).

The build runs in a worker thread with its own database connection, whose
`statement_timeout` is the deadline plus a small margin (so no query of a late build
can outlive it by much). The request thread waits at most the deadline; past it, it
answers at once with `dropped`, marks the build cancelled (the build stops at its next
step) and cancels the worker's running query with `pg_cancel_backend`, so an abandoned
build is not left running against the database.

Worker threads are a small pool; between turns their connections go back to the
process's connection pool (settings: the pool is sized for the request threads plus
these workers), so a new connection is not opened per turn.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import DatabaseError, OperationalError

from config.routers import block_connection

logger = logging.getLogger(__name__)

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        with _executor_lock:
            if _executor is None:
                _executor = ThreadPoolExecutor(
                    max_workers=settings.TUTORBRAIN_BLOCK_WORKERS,
                    thread_name_prefix="memory-block",
                )
    return _executor


@dataclass
class _Job:
    cancelled: threading.Event = field(default_factory=threading.Event)
    backend_pid: int | None = None
    started: threading.Event = field(default_factory=threading.Event)


@dataclass
class DeadlineOutcome:
    result: Any
    dropped: bool
    elapsed_ms: float


# The statement timeout is a backstop behind the deadline (the request thread cancels a
# late query itself): a little later than the deadline, so that the request thread's
# own clock decides, not a race between the two.
STATEMENT_TIMEOUT_MARGIN_MS = 250


def _statement_timeout_ms(deadline: float) -> int:
    return max(1, int(deadline * 1000) + STATEMENT_TIMEOUT_MARGIN_MS)


def _run(job: _Job, fn: Callable[[threading.Event], Any], deadline: float):
    db = block_connection()
    db.ensure_connection()
    raw = db.connection
    # Set on every build, reset after it: the connection comes from the process's pool
    # and goes back to it, where a request thread may take it next.
    with db.cursor() as cursor:
        cursor.execute(f"SET statement_timeout = {_statement_timeout_ms(deadline)}")
    job.backend_pid = raw.info.backend_pid
    job.started.set()
    try:
        if job.cancelled.is_set():
            return None
        return fn(job.cancelled)
    finally:
        job.backend_pid = None
        try:
            with db.cursor() as cursor:
                cursor.execute("RESET statement_timeout")
        except DatabaseError:  # a broken connection is discarded below
            pass
        # Back to the pool between turns (closed outright when pooling is off).
        db.close()


def run_with_deadline(
    fn: Callable[[threading.Event], Any], *, deadline: float, started: float | None = None
) -> DeadlineOutcome:
    """Run `fn(cancelled_event)` in a worker; give up `deadline` seconds after `started`.

    `started` is a `time.monotonic()` reading, the request's arrival (what was spent on
    authentication and parsing counts); default: now. Exceptions of `fn` (bad input found
    while building) propagate to the caller.
    """
    started = time.monotonic() if started is None else started
    job = _Job()
    future = _pool().submit(_run, job, fn, deadline)
    try:
        result = future.result(timeout=max(0.0, deadline - (time.monotonic() - started)))
    except OperationalError:
        # A query cancelled by the statement timeout at the very deadline is a late
        # build like any other; a database error before the deadline is a real error.
        if (time.monotonic() - started) >= deadline:
            return DeadlineOutcome(
                result=None, dropped=True, elapsed_ms=(time.monotonic() - started) * 1000
            )
        raise
    except FutureTimeout:
        job.cancelled.set()
        pid = job.backend_pid
        if pid is not None:
            try:
                # The same database as the build (the replica when there is one).
                with block_connection().cursor() as cursor:
                    cursor.execute("SELECT pg_cancel_backend(%s)", [pid])
            except Exception:  # the answer must not wait on a failed cancel
                logger.exception("could not cancel the late block build (backend %s)", pid)
        future.add_done_callback(_log_late_failure)
        return DeadlineOutcome(
            result=None, dropped=True, elapsed_ms=(time.monotonic() - started) * 1000
        )
    return DeadlineOutcome(
        result=result, dropped=False, elapsed_ms=(time.monotonic() - started) * 1000
    )


def _log_late_failure(future) -> None:
    exc = future.exception()
    if exc is not None:
        logger.info("abandoned block build ended with %s", type(exc).__name__)
