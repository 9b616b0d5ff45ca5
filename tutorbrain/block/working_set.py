"""Rebuild and clear a pair's working set (R-7.5); see tutorbrain.block.models for what it is.

`working_set_rebuild` is called by the nightly cycle for each active pair, and by
`manage.py bench_block --working-set rebuild`. It is idempotent and safe to run while
blocks are being built (one transaction: readers see the old set or the new one).
"""

from __future__ import annotations

from django.db import connection, transaction
from django.utils import timezone

from memory import indexing
from memory.models import Pair
from tutorbrain.block.models import WorkingSet, WorkingSetEpisode


@transaction.atomic
def working_set_rebuild(*, pair: Pair) -> None:
    """Recompute the pair's signatures and concept rows from its episode index."""
    WorkingSetEpisode.objects.filter(pair_id=pair.pk).delete()
    model = indexing.embed_model_name()
    with connection.cursor() as cursor:
        # A signature only for vectors of the current model (comparable with the
        # message's); every episode gets its row, so the concept pool sees them all.
        cursor.execute(
            """
            INSERT INTO tutorbrain_block_workingsetepisode
                (episode_id, pair_id, occurred_at, signature, concepts)
            SELECT e.id, e.pair_id, e.occurred_at,
                   CASE WHEN ix.embedding_model = %s THEN binary_quantize(ix.embedding) END,
                   e.concepts
            FROM memory_episode e
            LEFT JOIN memory_episodeindex ix ON ix.episode_id = e.id
            WHERE e.pair_id = %s
            """,
            [model, pair.pk],
        )
        count = cursor.rowcount
        cursor.execute(
            "SELECT COALESCE(max(id), 0), COALESCE(max(seq), 0) FROM memory_episode "
            "WHERE pair_id = %s",
            [pair.pk],
        )
        max_id, max_seq = cursor.fetchone()
    WorkingSet.objects.update_or_create(
        pair_id=pair.pk,
        defaults={
            "max_episode_id": max_id,
            "max_seq": max_seq,
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
