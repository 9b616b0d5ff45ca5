"""Rebuild and clear a pair's working set (R-7.5); see tutorbrain.block.models for what it is.

`working_set_rebuild` is called by the nightly cycle for each active pair, and by
`manage.py bench_block --working-set rebuild`. It is idempotent, safe to run while
blocks are built (one transaction: readers see the old set or the new one) and while
episodes are appended (the coverage it records is computed from the very rows it
inserted, in the same statement, so an episode appended meanwhile is simply not yet
covered and is read from the episode tables by the block).

Incremental when it can be: episodes are immutable, so only episodes appended since
the last run (seq > max_seq) are added, plus signatures for episodes that have received
a vector since (e.g. after `manage.py reembed`). A set built with another embedding
model is rebuilt from scratch.

Between two nights a busy pair's set is also extended as it grows
(`on_episodes_appended`): every `EXTEND_EVERY` chain positions, right after the append
commits, in the appending process. The episodes past the set are read from the episode
tables by every block (a scan of the tail and an exact cosine per vector), so a pair
that gets thousands of turns in a day would otherwise see its blocks slow down until
the night.
"""

from __future__ import annotations

import logging

from django.db import connection, transaction
from django.utils import timezone

from memory import indexing
from memory.models import Pair
from tutorbrain.block.models import KEYS_SQL, WorkingSet, WorkingSetEpisode

logger = logging.getLogger(__name__)

# A pair's working set is extended each time its chain length crosses a multiple of
# this: the tail a block reads from the episode tables stays under ~EXTEND_EVERY
# episodes (a scan and exact cosines of ~1-2 ms), and the extension, ~EXTEND_EVERY
# rows, costs ~6-10 ms once per EXTEND_EVERY appends.
EXTEND_EVERY = 200

# Serialises rebuilds of one pair (a retried nightly task may overlap its first try)
# without touching the pair's row lock, which is the episode chain's append lock.
_LOCK_NAMESPACE = "tutorbrain_block_working_set"

# A signature only for vectors of the current model (comparable with the message's);
# every episode gets its row, so the concept pool sees them all. The coverage comes
# from the inserted rows themselves (same snapshot).
_INSERT_SQL = f"""
    WITH inserted AS (
        INSERT INTO tutorbrain_block_workingsetepisode
            (episode_id, pair_id, occurred_at, signature, search, keys)
        SELECT e.id, e.pair_id, e.occurred_at,
               CASE WHEN ix.embedding_model = %(model)s THEN binary_quantize(ix.embedding) END,
               ix.search, {KEYS_SQL}
        FROM memory_episode e
        LEFT JOIN memory_episodeindex ix ON ix.episode_id = e.id
        WHERE e.pair_id = %(pair)s AND e.seq > %(after)s
        RETURNING episode_id
    )
    SELECT count(*), max(e.id), max(e.seq)
    FROM inserted JOIN memory_episode e ON e.id = inserted.episode_id
"""


@transaction.atomic
def working_set_rebuild(*, pair: Pair) -> None:
    """Bring the pair's working set up to date with its episode log."""
    model = indexing.embed_model_name()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s), %s)", [_LOCK_NAMESPACE, pair.pk])
    current = WorkingSet.objects.filter(pair_id=pair.pk).first()
    incremental = current is not None and current.embedding_model == model
    after = current.max_seq if incremental and current is not None else 0
    with connection.cursor() as cursor:
        if incremental:
            cursor.execute(
                """
                UPDATE tutorbrain_block_workingsetepisode w
                SET signature = binary_quantize(ix.embedding)
                FROM memory_episodeindex ix
                WHERE w.pair_id = %s AND w.signature IS NULL
                  AND ix.episode_id = w.episode_id AND ix.embedding_model = %s
                """,
                [pair.pk, model],
            )
        else:
            WorkingSetEpisode.objects.filter(pair_id=pair.pk).delete()
        cursor.execute(_INSERT_SQL, {"model": model, "pair": pair.pk, "after": after})
        added, max_id, max_seq = cursor.fetchone()
    if incremental and current is not None:
        count = current.episode_count + added
        max_id = max_id or current.max_episode_id
        max_seq = max_seq or current.max_seq
    else:
        count = added
    WorkingSet.objects.update_or_create(
        pair_id=pair.pk,
        defaults={
            "max_episode_id": max_id or 0,
            "max_seq": max_seq or 0,
            "episode_count": count,
            "embedding_model": model,
            "built_at": timezone.now(),
        },
    )


@transaction.atomic
def working_set_clear(*, pair: Pair) -> None:
    """Drop the pair's working set (the block then reads the episode index directly)."""
    WorkingSetEpisode.objects.filter(pair_id=pair.pk).delete()
    WorkingSet.objects.filter(pair_id=pair.pk).delete()


def on_episodes_appended(sender, *, episode_ids, pair_id, head_seq=None, **kwargs) -> None:
    """Receiver of memory.signals.episodes_appended: extend the pair's working set when
    its chain crosses a multiple of EXTEND_EVERY (no query otherwise).

    Only a set that exists, of the current embedding model, is extended: which pairs get
    one, and a rebuild from scratch, stay the nightly cycle's. A failure must not turn a
    stored episode into an error for the chat service: the block reads the tail from
    the episode tables either way, and the night catches up. It is logged.
    """
    if (
        head_seq is None
        or head_seq // EXTEND_EVERY == (head_seq - len(episode_ids)) // EXTEND_EVERY
    ):
        return
    try:
        model = indexing.embed_model_name()
        pair = Pair.objects.filter(pk=pair_id, block_working_set__embedding_model=model).first()
        if pair is not None:
            working_set_rebuild(pair=pair)
    except Exception:
        logger.exception("extending the working set of pair %s failed", pair_id)
