"""R-1.5: appends to one chain are serialised — no fork, no gap, under concurrent writers."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from memory.models import Episode, Pair
from memory.selectors import chain_report
from memory.services import episode_append
from tests.factories import PairFactory

THREADS = 8
APPENDS_PER_THREAD = 100


@pytest.mark.django_db(transaction=True)
def test_eight_threads_appending_a_hundred_events_each_give_seqs_1_to_800_and_verify():
    pair = PairFactory()
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def writer(n: int) -> None:
        try:
            start.wait()
            for i in range(APPENDS_PER_THREAD):
                episode_append(
                    pair=pair, kind="question", summary=f"thread {n} question {i}", embed=False
                )
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    total = THREADS * APPENDS_PER_THREAD
    seqs = list(Episode.objects.filter(pair=pair).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, total + 1))
    prev_hashes = Episode.objects.filter(pair=pair).values_list("prev_hash", flat=True)
    assert len(set(prev_hashes)) == total, "two episodes link to the same predecessor: a fork"
    pair = Pair.objects.get(pk=pair.pk)
    assert pair.head_seq == total
    report = chain_report(pair=pair)
    assert report.intact and report.length == total
