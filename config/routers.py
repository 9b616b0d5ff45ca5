"""Database routing: memory-block builds read from a replica when one is configured.

Set TUTORBRAIN_REPLICA_DATABASE_URL and the block's reads (its raw SQL and its ORM
queries) go to the "replica" alias; every write, and every read outside a block build,
goes to "default". A streaming replica lags its primary by a fraction of a second, so a
block may miss an episode appended in that instant; the turn's own message is in the
request, not read back, so the block loses nothing it needs (docs/deployment.md).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connections

_state = threading.local()


def block_read_alias() -> str:
    return settings.TUTORBRAIN_BLOCK_READ_DATABASE


@contextmanager
def block_reads() -> Iterator[None]:
    """Within this block (on this thread), ORM reads go to the block-read alias."""
    previous = getattr(_state, "active", False)
    _state.active = True
    try:
        yield
    finally:
        _state.active = previous


def block_connection():
    """The connection a block build's raw SQL uses."""
    return connections[block_read_alias()]


class BlockReadRouter:
    def db_for_read(self, model, **hints):
        if getattr(_state, "active", False):
            return block_read_alias()
        return "default"

    def db_for_write(self, model, **hints):
        # Never the replica, even for an object that was read from it.
        return "default"

    def allow_relation(self, obj1, obj2, **hints):
        # Both aliases hold the same data.
        return True

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == "default"
