"""Orchestration of the nightly cycle (R-7): which pairs, the claim, the steps in order.

One pair's cycle for one day is a `NightlyRun` row (unique per pair and day). A run is
claimed by a conditional update (`status != done`) while the worker holds a session
advisory lock on (pair, day): the lock says "someone is working on it right now" and
dies with the worker's connection, so a worker killed mid-pair does not block the
retry, and two live workers never run the same pair-day at once.

Each step runs in its own transaction together with the line in `steps_done` that
records it, so a killed worker leaves whole steps or none; the rerun skips the steps
done and completes the rest. Consolidation is the exception that proves the rule: it
embeds its note (no embedding inside a transaction, DESIGN §3.2), so it is idempotent
by the chain's idempotency key instead and only its bookkeeping is transactional.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from beliefs.selectors import beliefs_due_for_decay
from beliefs.services import (
    beliefs_fit_learning_all,
    beliefs_link_waiting_checks,
    beliefs_rederive_after_fits,
)
from memory.models import Episode, Pair
from memory.services import advisory_lock_key
from tutorbrain.models import NightlyRun
from tutorbrain.nightly import services
from tutorbrain.nightly.rules import (
    STEP_CALIBRATE,
    STEP_CONSOLIDATE,
    STEP_DECAY,
    STEP_SELF_MODEL,
    STEP_VERIFY,
    STEP_WORKING_SET,
    STEPS,
)

logger = logging.getLogger(__name__)

# Errors worth retrying: the database or the network blinked. Anything else is a bug
# or bad data, recorded as the step's failure and not retried in a loop.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (OperationalError, InterfaceError)

# The namespace of the advisory lock keys of nightly runs (any constant distinct from
# other users of memory.services.advisory_lock_key).
NIGHTLY_LOCK_NAMESPACE = 7

# Fault injection for the "worker killed mid-pair" test: when this environment variable
# names a step, the process exits right after that step commits. Never set in production.
CRASH_AFTER_STEP_ENV = "TUTORBRAIN_NIGHTLY_CRASH_AFTER_STEP"
CRASH_EXIT_CODE = 70


@dataclass
class RunOutcome:
    pair_id: int
    day: dt.date
    status: str  # done | failed | skipped-done | skipped-busy
    steps_run: list[str] = field(default_factory=list)
    wrote: dict = field(default_factory=dict)
    failures: list[dict] = field(default_factory=list)


# --------------------------------------------------------------------------------------
# Which pairs
# --------------------------------------------------------------------------------------


def active_pair_ids(*, day: dt.date) -> list[int]:
    """Pairs with at least one episode (other than a consolidation) on the student's own
    day that the cycle of `day` consolidates (services.student_day).

    `Pair.last_episode_at` narrows by the index first (a local day starts at most a day
    before the nightly one); then, zone by zone of the students concerned, the EXISTS on
    the episodes' (pair, occurred_at) index drops pairs whose only news is older backfill
    or a consolidation note.
    """
    start, _ = services.day_bounds(day)
    recent = Pair.objects.filter(last_episode_at__gte=start - dt.timedelta(days=1))
    ids: list[int] = []
    zones = recent.values_list("student__timezone", flat=True).distinct()
    for zone in sorted(set(zones)):
        _, local_start, local_end = services.student_day(timezone_name=zone, day=day)
        happened = Episode.objects.filter(
            pair=OuterRef("pk"), occurred_at__gte=local_start, occurred_at__lt=local_end
        ).exclude(kind=Episode.Kind.CONSOLIDATION)
        ids += (
            recent.filter(student__timezone=zone)
            .filter(Exists(happened))
            .values_list("pk", flat=True)
        )
    return sorted(ids)


def decay_pair_ids(*, day: dt.date) -> list[int]:
    """Pairs with a belief due for decay at the end of `day`, active or not (R-7.2)."""
    _, end = services.day_bounds(day)
    return sorted({belief.pair_id for belief in beliefs_due_for_decay(now=end)})


def cycle_pair_ids(*, day: dt.date) -> list[int]:
    return sorted(set(active_pair_ids(day=day)) | set(decay_pair_ids(day=day)))


# --------------------------------------------------------------------------------------
# One pair
# --------------------------------------------------------------------------------------


def run_ensure(*, pair_id: int, day: dt.date) -> NightlyRun:
    NightlyRun.objects.bulk_create(
        [NightlyRun(pair_id=pair_id, day=day, created_at=timezone.now())], ignore_conflicts=True
    )
    return NightlyRun.objects.get(pair_id=pair_id, day=day)


def _asynchronous_commit(on: bool) -> None:
    # The cycle is idempotent and resumable, so it does not need to wait for each
    # commit to reach the disk: a server crash can lose only the last few commits (WAL
    # order: never a later one without the earlier), and the rerun redoes exactly those
    # steps. Session-level and reset afterwards, so the worker's other tasks keep the
    # server's default. Saves one disk flush per step.
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit = off" if on else "RESET synchronous_commit")


def _try_lock(key: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
        return bool(cursor.fetchone()[0])


def _unlock(key: int) -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])
    except (OperationalError, InterfaceError):
        # The connection is gone, and with it the session lock.
        pass


def _record_step(run_id: int, step: str, wrote: object) -> bool:
    """Inside the step's transaction: mark it done. False if a rerun already had it."""
    run = NightlyRun.objects.select_for_update().get(pk=run_id)
    if step in run.steps_done:
        return False
    run.steps_done = [*run.steps_done, step]
    run.wrote = {**run.wrote, step: wrote}
    run.save(update_fields=["steps_done", "wrote"])
    return True


def _record_failure(run_id: int, attempt: int, step: str, error: BaseException) -> dict:
    failure = {
        "at": timezone.now().isoformat(),
        "attempt": attempt,
        "step": step,
        "error": f"{type(error).__name__}: {error}"[:500],
    }
    try:
        with transaction.atomic():
            run = NightlyRun.objects.select_for_update().get(pk=run_id)
            run.failures = [*run.failures, failure]
            run.save(update_fields=["failures"])
    except TRANSIENT_ERRORS:
        logger.exception("could not record the failure of nightly run %s", run_id)
    return failure


def _crash_if_asked(step: str) -> None:
    if os.environ.get(CRASH_AFTER_STEP_ENV) == step:
        logger.warning("fault injection: exiting after nightly step %s", step)
        os._exit(CRASH_EXIT_CODE)


def _step_consolidate(pair: Pair, day: dt.date, now: dt.datetime, run: NightlyRun, embed: bool):
    episode = services.consolidation_write(pair=pair, day=day, now=now, embed=embed)
    return {"episode_id": episode.pk if episode else None}


def _step_decay(pair: Pair, day: dt.date, now: dt.datetime, run: NightlyRun, embed: bool):
    return {"superseding_belief_ids": services.decay_apply(pair=pair, now=now)}


def _step_calibrate(pair: Pair, day: dt.date, now: dt.datetime, run: NightlyRun, embed: bool):
    snapshot = services.calibration_snapshot_write(pair=pair, day=day, now=now)
    return {
        "snapshot_id": snapshot.pk,
        "predicted_checks": snapshot.predicted_checks,
        "ece": snapshot.ece,
    }


def _step_verify(pair: Pair, day: dt.date, now: dt.datetime, run: NightlyRun, embed: bool):
    return {"results": services.citations_verify_batch(pair=pair, day=day, now=now)}


def _step_working_set(pair: Pair, day: dt.date, now: dt.datetime, run: NightlyRun, embed: bool):
    from tutorbrain.block.working_set import working_set_rebuild

    working_set_rebuild(pair=pair)
    return {"rebuilt": True}


def _step_self_model(pair: Pair, day: dt.date, now: dt.datetime, run: NightlyRun, embed: bool):
    model = services.self_model_recompose(pair=pair, day=day, now=now, run=run)
    return {
        "calibrated": model.calibrated,
        "unlinkable_checks": model.unlinkable_checks,
        "unanswerable_questions": model.unanswerable_questions,
    }


STEP_FUNCTIONS: dict[str, Callable] = {
    STEP_CONSOLIDATE: _step_consolidate,
    STEP_DECAY: _step_decay,
    STEP_CALIBRATE: _step_calibrate,
    STEP_VERIFY: _step_verify,
    STEP_WORKING_SET: _step_working_set,
    STEP_SELF_MODEL: _step_self_model,
}
# Steps whose service embeds, so they cannot sit inside the bookkeeping transaction.
STEPS_OUTSIDE_TRANSACTION = {STEP_CONSOLIDATE}


def pair_cycle_run(
    *, pair_id: int, day: dt.date, token: str = "", embed: bool | None = None
) -> RunOutcome:
    """Run (or finish) one pair's cycle for one day. Idempotent; safe on many workers.

    Transient database errors propagate (the Celery task retries with backoff); any
    other error in a step is recorded on the run and the next steps still run, so one
    broken step does not cost the pair its consolidation or its decay.
    """
    token = token or f"manual:{uuid.uuid4().hex[:12]}"
    embed = settings.TUTORBRAIN_NIGHTLY_EMBED if embed is None else embed
    pair = Pair.objects.select_related("student", "subject").get(pk=pair_id)
    run = run_ensure(pair_id=pair_id, day=day)
    if run.status == NightlyRun.Status.DONE:
        return RunOutcome(pair_id=pair_id, day=day, status="skipped-done")
    key = advisory_lock_key(NIGHTLY_LOCK_NAMESPACE, pair_id, day.toordinal())
    if not _try_lock(key):
        return RunOutcome(pair_id=pair_id, day=day, status="skipped-busy")
    try:
        _asynchronous_commit(True)
        started = timezone.now()
        clock = time.monotonic()
        claimed = (
            NightlyRun.objects.filter(pk=run.pk)
            .exclude(status=NightlyRun.Status.DONE)
            .update(
                status=NightlyRun.Status.RUNNING,
                attempts=F("attempts") + 1,
                claimed_by=token[:100],
                started_at=started,
                finished_at=None,
            )
        )
        if not claimed:
            return RunOutcome(pair_id=pair_id, day=day, status="skipped-done")
        run.refresh_from_db()
        _, now = services.day_bounds(day)
        outcome = RunOutcome(pair_id=pair_id, day=day, status="done")
        for step in STEPS:
            if step in run.steps_done:
                continue
            function = STEP_FUNCTIONS[step]
            try:
                if step in STEPS_OUTSIDE_TRANSACTION:
                    wrote = function(pair, day, now, run, embed)
                    with transaction.atomic():
                        _record_step(run.pk, step, wrote)
                else:
                    with transaction.atomic():
                        wrote = function(pair, day, now, run, embed)
                        _record_step(run.pk, step, wrote)
            except (*TRANSIENT_ERRORS, SoftTimeLimitExceeded) as error:
                # Retried by the task (transient) or out of time: stop here, keep the
                # steps done, let the retry or the next rerun finish the rest.
                _record_failure(run.pk, run.attempts, step, error)
                NightlyRun.objects.filter(pk=run.pk).update(status=NightlyRun.Status.FAILED)
                raise
            except Exception as error:
                logger.exception("nightly step %s failed for pair %s on %s", step, pair_id, day)
                outcome.failures.append(_record_failure(run.pk, run.attempts, step, error))
                outcome.status = "failed"
                continue
            outcome.steps_run.append(step)
            outcome.wrote[step] = wrote
            _crash_if_asked(step)
        NightlyRun.objects.filter(pk=run.pk).update(
            status=NightlyRun.Status.DONE if outcome.status == "done" else NightlyRun.Status.FAILED,
            finished_at=timezone.now(),
            duration_seconds=time.monotonic() - clock,
        )
        return outcome
    finally:
        # If the connection is gone, so is the setting.
        with contextlib.suppress(OperationalError, InterfaceError):
            _asynchronous_commit(False)
        _unlock(key)


# --------------------------------------------------------------------------------------
# The night
# --------------------------------------------------------------------------------------


@dataclass
class FanOut:
    day: dt.date
    pair_ids: list[int]
    enqueued: int
    all_pairs_snapshot_id: int | None
    # Subjects whose learning model (beliefs.learning) was fitted tonight.
    learning_fits: int = 0
    rederived_pairs: int = 0  # pairs re-derived after their subject's fit
    linked_pairs: int = 0  # pairs re-derived for checks the grown map now routes


def fan_out_prepare(*, day: dt.date, pair_ids: list[int] | None = None) -> list[int]:
    """Create the night's run rows (pending) and return the pairs whose run is not done."""
    ids = cycle_pair_ids(day=day) if pair_ids is None else pair_ids
    created = timezone.now()
    NightlyRun.objects.bulk_create(
        [NightlyRun(pair_id=i, day=day, created_at=created) for i in ids],
        ignore_conflicts=True,
        batch_size=2000,
    )
    done = set(
        NightlyRun.objects.filter(
            day=day, status=NightlyRun.Status.DONE, pair_id__in=ids
        ).values_list("pair_id", flat=True)
    )
    return [i for i in ids if i not in done]


def night_run(
    *,
    day: dt.date,
    enqueue: Callable[[int, dt.date], None] | None = None,
    pair_ids: list[int] | None = None,
    embed: bool | None = None,
) -> FanOut:
    """The whole night: the all-pairs calibration snapshot, the subjects' learning models
    (before the pairs' cycles, so tonight's decays lean on them) and one cycle per pair.

    With `enqueue`, each pair's cycle is handed to it (the Celery fan-out); without, the
    cycles run here, one after the other.
    """
    start, end = services.day_bounds(day)
    snapshot = services.calibration_all_pairs_write(day=day, now=end)
    fits = beliefs_fit_learning_all(now=end)
    # A subject's first fit (or one from twice the checks) re-derives its beliefs, before
    # the pairs' cycles here; queued beside them with the fan-out (a busy pair is retried).
    # A failure leaves the beliefs as they were and must not cost the pairs their night.
    try:
        relearnt = beliefs_rederive_after_fits(fits=fits, now=end, queue=enqueue is not None)
    except Exception:
        logger.exception("re-derivation after tonight's learning fits failed")
        relearnt = []
    # Checks that came before the map had their concept (a file read that day added it)
    # become beliefs now, by the same re-derivation. A failure costs no pair its night.
    try:
        linked = beliefs_link_waiting_checks(
            map_changed_since=start, now=end, queue=enqueue is not None, rederived=relearnt
        )
    except Exception:
        logger.exception("linking the checks that waited for a concept failed")
        linked = []
    todo = fan_out_prepare(day=day, pair_ids=pair_ids)
    for pair_id in todo:
        if enqueue is not None:
            enqueue(pair_id, day)
        else:
            pair_cycle_run(pair_id=pair_id, day=day, embed=embed)
    return FanOut(
        day=day,
        pair_ids=todo,
        enqueued=len(todo) if enqueue else 0,
        all_pairs_snapshot_id=snapshot.pk,
        learning_fits=len(fits),
        rederived_pairs=len(relearnt),
        linked_pairs=len(linked),
    )
