"""Celery tasks of the beliefs app: re-derivation of large selections (R-4.5)."""

from __future__ import annotations

from celery import shared_task
from django.contrib.auth import get_user_model
from django.db import InterfaceError, OperationalError

from beliefs.models import Rederivation
from beliefs.services import beliefs_rederive_many

# Re-derivation is long for a big history but bounded by pairs per task.
REDERIVE_TASK_SOFT_TIME_LIMIT = 600
REDERIVE_TASK_TIME_LIMIT = 660
REDERIVE_TASK_MAX_RETRIES = 5
REDERIVE_TASK_RETRY_BACKOFF_MAX = 300


class PairsStillBusy(Exception):
    """Some pairs were refused because another belief write held their lock."""


@shared_task(
    name="beliefs.rederive_pairs",
    soft_time_limit=REDERIVE_TASK_SOFT_TIME_LIMIT,
    time_limit=REDERIVE_TASK_TIME_LIMIT,
    autoretry_for=(OperationalError, InterfaceError, PairsStillBusy),
    retry_backoff=True,
    retry_backoff_max=REDERIVE_TASK_RETRY_BACKOFF_MAX,
    retry_jitter=True,
    max_retries=REDERIVE_TASK_MAX_RETRIES,
)
def rederive_pairs(
    *,
    pair_ids: list[int],
    requested_by_id: int | None = None,
    source: str = Rederivation.Source.TASK,
) -> dict:
    """Re-derive the given pairs, each in its own transaction.

    A pair whose lock is held by another belief write is retried (only that pair: the
    retry carries the refused ids); a pair that does not exist is reported, not retried.
    """
    user = get_user_model().objects.filter(pk=requested_by_id).first() if requested_by_id else None
    batch = beliefs_rederive_many(pair_ids=pair_ids, requested_by=user, source=source)
    busy = batch.busy
    if busy:
        # Retry only the busy pairs; the finished ones are not re-derived twice.
        raise rederive_pairs.retry(
            kwargs={"pair_ids": busy, "requested_by_id": requested_by_id, "source": source},
            exc=PairsStillBusy(f"pairs {busy} were busy"),
        )
    return {
        "rederived": [r.pair_id for r in batch.done],
        "refused": [{"pair_id": pid, "reason": reason} for pid, reason in batch.refused],
        "beliefs_retired": sum(r.beliefs_retired for r in batch.done),
        "checks_replayed": sum(r.checks_replayed for r in batch.done),
        "beliefs_derived": sum(r.beliefs_derived for r in batch.done),
    }
