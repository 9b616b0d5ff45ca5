"""R-4.2: a belief row is never updated to another claim or confidence; its successor is
set once; nothing is deleted. Enforced by the model and by database triggers."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from beliefs.models import Belief, BeliefEvidence
from beliefs.services import belief_supersede
from memory.immutability import ImmutableRecordError
from tests.beliefs_helpers import T0, append_check, days, make_concept


@pytest.fixture
def belief(pair):
    concept = make_concept(pair.subject, "Osmosis")
    return Belief.objects.create(
        pair=pair,
        concept=concept,
        claim=Belief.Claim.STRUGGLES,
        confidence=0.75,
        reason=Belief.Reason.EVIDENCE,
        check_count=1,
        created_at=T0,
    )


def test_changing_a_beliefs_claim_in_the_orm_is_refused(belief):
    belief.claim = Belief.Claim.UNDERSTANDS
    with pytest.raises(ImmutableRecordError, match="claim"):
        belief.save()
    assert Belief.objects.get(pk=belief.pk).claim == Belief.Claim.STRUGGLES


def test_changing_a_beliefs_confidence_in_the_orm_is_refused(belief):
    belief.confidence = 0.9
    with pytest.raises(ImmutableRecordError, match="confidence"):
        belief.save()
    with pytest.raises(ImmutableRecordError):
        Belief.objects.filter(pk=belief.pk).update(confidence=0.9)
    with pytest.raises(ImmutableRecordError):
        Belief.objects.bulk_update([belief], ["confidence"])
    assert Belief.objects.get(pk=belief.pk).confidence == 0.75


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE beliefs_belief SET claim = 'understands' WHERE id = %s",
        "UPDATE beliefs_belief SET confidence = 0.99 WHERE id = %s",
        "UPDATE beliefs_belief SET reason = 'decay' WHERE id = %s",
        "DELETE FROM beliefs_belief WHERE id = %s",
    ],
)
def test_raw_sql_cannot_change_or_delete_a_belief(belief, sql):
    with (
        pytest.raises(DatabaseError, match="pgtrigger"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, [belief.pk])
    stored = Belief.objects.get(pk=belief.pk)
    assert (stored.claim, stored.confidence, stored.reason) == ("struggles", 0.75, "evidence")


def test_deleting_a_belief_is_refused_by_the_model_and_the_queryset(belief):
    with pytest.raises(ImmutableRecordError):
        belief.delete()
    with pytest.raises(ImmutableRecordError):
        Belief.objects.filter(pk=belief.pk).delete()
    assert Belief.objects.filter(pk=belief.pk).exists()


def test_the_successor_is_set_once_and_a_second_time_fails_in_orm_service_and_sql(belief):
    first = belief_supersede(
        belief=belief, claim="understands", confidence=0.8, reason="evidence", now=T0 + days(1)
    )
    stored = Belief.objects.get(pk=belief.pk)
    assert stored.superseded_by_id == first.pk
    assert (stored.claim, stored.confidence) == ("struggles", 0.75)

    # ORM: a loaded row that already has a successor cannot get another one.
    other = Belief.objects.create(
        pair=belief.pair,
        concept=make_concept(belief.pair.subject, "Diffusion"),
        claim="understands",
        confidence=0.6,
        reason="evidence",
        created_at=T0,
    )
    stored.superseded_by = other
    with pytest.raises(ImmutableRecordError, match="already superseded"):
        stored.save()
    # Service: refused with a message naming the successor.
    with pytest.raises(Exception, match="already superseded"):
        belief_supersede(
            belief=Belief.objects.get(pk=belief.pk),
            claim="struggles",
            confidence=0.5,
            reason="evidence",
            now=T0 + days(2),
        )
    # Database: the conditional trigger refuses a second successor even by raw SQL.
    with (
        pytest.raises(DatabaseError, match="pgtrigger"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "UPDATE beliefs_belief SET superseded_by_id = %s WHERE id = %s",
            [other.pk, belief.pk],
        )
    assert Belief.objects.get(pk=belief.pk).superseded_by_id == first.pk


def test_setting_the_successor_once_by_sql_is_the_one_permitted_write(belief):
    new = Belief.objects.create(
        pair=belief.pair,
        concept=belief.concept,
        claim="understands",
        confidence=0.8,
        reason="evidence",
        created_at=T0 + days(1),
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE beliefs_belief SET superseded_by_id = %s WHERE id = %s", [new.pk, belief.pk]
        )
    assert Belief.objects.get(pk=belief.pk).superseded_by_id == new.pk


def test_two_current_beliefs_on_one_concept_fail_at_commit(belief):
    # The exclusion constraint is deferred (a supersession briefly has two heads), so it
    # is checked when the transaction ends; force the check now.
    with (
        pytest.raises(DatabaseError, match="belief_one_current_per_pair_concept"),
        transaction.atomic(),
    ):
        Belief.objects.create(
            pair=belief.pair,
            concept=belief.concept,
            claim="understands",
            confidence=0.8,
            reason="evidence",
            created_at=T0,
        )
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def test_evidence_links_are_append_only(pair, django_capture_on_commit_callbacks):
    make_concept(pair.subject, "Osmosis")
    with django_capture_on_commit_callbacks(execute=True):
        append_check(pair, topic="Osmosis", verdict="right")
    link = BeliefEvidence.objects.get()
    with pytest.raises(ImmutableRecordError):
        link.delete()
    with (
        pytest.raises(DatabaseError, match="pgtrigger"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("DELETE FROM beliefs_beliefevidence WHERE id = %s", [link.pk])
