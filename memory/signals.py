"""Signals other apps listen to. Sent after the appending transaction commits."""

from __future__ import annotations

from django.dispatch import Signal

# kwargs: episode_ids (list[int], in chain order), pair_id (int), kinds (sorted list of
# the kinds among them: a receiver can tell without a query that nothing concerns it),
# head_seq (int: the chain's length after the append, so a receiver can act every N
# appends without a query)
episodes_appended = Signal()
