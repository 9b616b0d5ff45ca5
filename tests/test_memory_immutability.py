"""R-1.4: episodes, stances and citation checks are never edited nor deleted."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import DatabaseError, connection, transaction

from memory.immutability import ImmutableRecordError
from memory.models import AnswerStance, ChainVerification, CitationCheck, Episode
from memory.services import answer_stance_report, chain_verify, citation_verify, episode_append

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 7, 12, 10, 0, tzinfo=UTC)


@pytest.fixture
def episode(pair):
    return episode_append(pair=pair, kind="answer", summary="Cells have membranes", now=NOW)


def test_saving_an_existing_episode_is_refused_by_the_model(episode):
    episode.summary = "rewritten"
    with pytest.raises(ImmutableRecordError):
        episode.save()
    assert Episode.objects.get(pk=episode.pk).summary == "Cells have membranes"


def test_deleting_an_episode_is_refused_by_the_model(episode):
    with pytest.raises(ImmutableRecordError):
        episode.delete()
    assert Episode.objects.filter(pk=episode.pk).exists()


def test_queryset_update_and_delete_and_bulk_update_are_refused(episode):
    with pytest.raises(ImmutableRecordError):
        Episode.objects.filter(pk=episode.pk).update(summary="x")
    with pytest.raises(ImmutableRecordError):
        Episode.objects.filter(pk=episode.pk).delete()
    with pytest.raises(ImmutableRecordError):
        Episode.objects.bulk_update([episode], ["summary"])
    assert Episode.objects.get(pk=episode.pk).summary == "Cells have membranes"


def test_updating_an_episode_with_raw_sql_is_rejected_by_the_database(episode):
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE memory_episode SET text = 'x' WHERE id = %s", [episode.pk])
    assert Episode.objects.get(pk=episode.pk).text == ""


def test_deleting_an_episode_with_raw_sql_is_rejected_by_the_database(episode):
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM memory_episodeindex WHERE episode_id = %s", [episode.pk])
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM memory_episode WHERE id = %s", [episode.pk])
    assert Episode.objects.filter(pk=episode.pk).exists()


RAW_WRITES = {
    "memory_answerstance": ("UPDATE memory_answerstance SET stance = 'cannot'",),
    "memory_citationcheck": ("UPDATE memory_citationcheck SET result = 'holds'",),
    "memory_chainverification": ("UPDATE memory_chainverification SET length = 0",),
}


@pytest.mark.parametrize("table", sorted(RAW_WRITES))
def test_stances_citation_checks_and_verifications_reject_raw_update_and_delete(
    pair, episode, table
):
    answer_stance_report(episode=episode, stance="answered", now=NOW)
    citation_verify(episode=episode, now=NOW)
    chain_verify(pair=pair, now=NOW)
    for sql in (*RAW_WRITES[table], f"DELETE FROM {table}"):
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql)
    assert AnswerStance.objects.get(episode=episode).stance == "answered"
    assert CitationCheck.objects.get(episode=episode).result == "unverifiable"
    assert ChainVerification.objects.get(pair=pair).length == 1


def test_a_stance_row_cannot_be_saved_again_through_the_model(episode):
    stance = answer_stance_report(episode=episode, stance="partial", now=NOW)
    stance.stance = "answered"
    with pytest.raises(ImmutableRecordError):
        stance.save()
    with pytest.raises(ImmutableRecordError):
        AnswerStance.objects.filter(pk=stance.pk).update(stance="cannot")
