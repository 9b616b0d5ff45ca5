"""R-4.5: large selections are re-derived by a real Celery worker (subprocess, real Redis)."""

from __future__ import annotations

import pytest

from beliefs.models import Belief, Rederivation
from beliefs.tasks import rederive_pairs
from tests.beliefs_helpers import T0, append_check, days, make_concept
from tests.factories import PairFactory


@pytest.mark.celery_worker
def test_a_real_worker_rederives_the_pairs_it_is_given(celery_worker):
    pairs = [PairFactory(), PairFactory()]
    for pair in pairs:
        make_concept(pair.subject, "Osmosis")
        # transactional_db: the append commits and the derivation runs after it.
        append_check(pair, topic="Osmosis", verdict="right", at=T0)
        append_check(pair, topic="Check on osmosis", verdict="wrong", at=T0 + days(1))
    assert Belief.objects.current().count() == 2

    result = rederive_pairs.apply_async(
        kwargs={"pair_ids": [p.pk for p in pairs] + [987654]}, queue=celery_worker.queue
    )
    outcome = result.get(timeout=90)

    assert sorted(outcome["rederived"]) == sorted(p.pk for p in pairs)
    assert outcome["refused"] == [
        {"pair_id": 987654, "reason": "no student-subject with id 987654"}
    ]
    assert (outcome["beliefs_retired"], outcome["checks_replayed"]) == (2, 4)
    assert set(Rederivation.objects.values_list("source", flat=True)) == {"task"}
    assert Belief.objects.current().filter(reason="rederivation").count() == 2
    assert Belief.objects.filter(reason="retirement").count() == 2
