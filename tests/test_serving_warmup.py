"""The worker warm-up reaches every pooled connection (issue 15, point 1): a PostgreSQL
backend is slow during its first block, so each connection the pool keeps open must have
built one before the worker takes a turn."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from config.routers import block_read_alias
from tutorbrain.warmup import _warm_pooled_connections

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_warm_up_builds_once_on_each_connection_the_pool_keeps_open():
    kept_open = connections.settings[block_read_alias()]["OPTIONS"]["pool"]["min_size"]
    assert kept_open >= 2  # otherwise this test proves nothing
    backends: list[int] = []
    lock = threading.Lock()

    def build(index: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        with lock:
            backends.append(pid)

    warmed = _warm_pooled_connections(build)

    assert warmed == kept_open
    assert len(backends) == kept_open
    # Each build held its own connection: none was warmed twice, none skipped.
    assert len(set(backends)) == kept_open


def test_a_failing_warm_up_build_raises_instead_of_waiting_for_the_others():
    def build(index: int) -> None:
        if index == 0:
            raise RuntimeError("no such pair")

    with pytest.raises(RuntimeError, match="no such pair"):
        _warm_pooled_connections(build)
