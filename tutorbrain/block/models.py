"""The working set (R-7.5): compact, rebuildable per-pair state that makes the block fast.

A block build ranks the pair's whole history by similarity to the message. Read from
the episode index, that means detoasting every 2 KB vector of the pair (10,000
episodes: ~20 ms on the 2-core bench machine). The working set keeps, per pair and per
episode, a 64-byte binary signature of the vector (pgvector `binary_quantize`), inline in
narrow rows: the vector pool scans signatures by Hamming distance (~1–2 ms for 10,000),
then re-ranks the best few hundred by exact cosine on the real vectors.

Each row also carries its episode's search document and **keys**: its words and concept
names, each prefixed with the pair's id (`word_key`, `concept_key`), under a GIN index.
The lexical and concept pools look their matches up there: the posting list of
"<pair>:enzym" holds this pair's episodes only, where a plain index on the words would
cross every pair of the database (and a scan reads the pair's 10,000 rows every time).

It is derived data, rebuilt nightly (tutorbrain.block.working_set.working_set_rebuild);
episodes appended since the last rebuild (seq > `max_seq`) are read from the
episode tables directly, so the block is always complete, the working set only faster.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from pgvector.django import BitField

from memory.models import Episode, Pair


class WorkingSet(models.Model):
    """What the pair's working set covers: episodes up to `max_episode_id`."""

    pair = models.OneToOneField(
        Pair, primary_key=True, on_delete=models.CASCADE, related_name="block_working_set"
    )
    max_episode_id = models.BigIntegerField(default=0)
    # The chain position of that episode: "appended since" is a range on the
    # (pair, seq) unique index, whatever other pairs appended meanwhile.
    max_seq = models.BigIntegerField(default=0)
    episode_count = models.PositiveIntegerField(default=0)
    # Signatures of another embedding model are not comparable: such a set is ignored.
    embedding_model = models.CharField(max_length=100, blank=True)
    built_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"working set of {self.pair_id} (≤ episode {self.max_episode_id})"


class WorkingSetEpisode(models.Model):
    """One episode of a pair's working set: a binary signature, the search document and
    the keys of its words and concept names."""

    episode = models.OneToOneField(
        Episode, primary_key=True, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="+")
    occurred_at = models.DateTimeField()
    # None: the episode has no vector of the current model (the other pools still see it).
    signature = BitField(length=settings.TUTORBRAIN_EMBEDDING_DIMENSIONS, null=True)
    # A copy of the episode index's search document (the lexical pool counts terms in it).
    search = SearchVectorField(null=True)
    # word_key of each word of `search`, concept_key of each concept name (KEYS_SQL).
    keys = ArrayField(models.TextField(), default=list, blank=True)

    class Meta:
        indexes = [
            # Every pool query of the block reads one pair's rows (optionally in a window).
            models.Index(fields=["pair", "occurred_at"], name="wsepisode_pair_time_idx"),
            GinIndex(fields=["keys"], name="wsepisode_keys_gin"),
        ]

    def __str__(self) -> str:
        return f"working-set row of episode {self.episode_id}"


# The keys of one working-set row, from its episode `e` and index row `ix` (SQL), and the
# same keys for a message's words and routed concepts (Python). The pair's id ends at the
# first non-digit, so no key of one pair equals a key of another; ":" marks a word, "!"
# a concept name.
KEYS_SQL = (
    "ARRAY(SELECT e.pair_id::text || ':' || w FROM unnest(tsvector_to_array(ix.search)) w)"
    " || ARRAY(SELECT e.pair_id::text || '!' || c FROM unnest(e.concepts) c)"
)
# A word the 'simple' text-search parser keeps whole (index terms are such words; any
# other falls back to the scan, which parses it as the index did).
_PLAIN_WORD = re.compile(r"[^\W_]+")


def word_key(pair_id: int, term: str) -> str | None:
    return f"{pair_id}:{term}" if _PLAIN_WORD.fullmatch(term) and term == term.lower() else None


def concept_key(pair_id: int, name: str) -> str:
    return f"{pair_id}!{name}"
