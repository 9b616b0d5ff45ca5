"""R-6: citation verification is a lookup of the recorded fingerprints, stored append-only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.models import CitationCheck
from memory.selectors import citation_status_for, episodes_citations_to_verify
from memory.services import (
    citation_verify,
    episode_append,
    subject_file_register,
    subject_file_remove,
)

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 7, 12, 10, 0, tzinfo=UTC)


@pytest.fixture
def cells(pair):
    return subject_file_register(
        subject=pair.subject, name="cells.pdf", content=b"cells v1", page_count=3, now=NOW
    )


def answer_citing(pair, file, pages=(2,)):
    return episode_append(
        pair=pair,
        kind="answer",
        summary="The membrane controls what enters",
        citations=[{"file_id": file.pk, "pages": list(pages)}],
        now=NOW,
        embed=False,
    )


def test_an_answer_records_each_cited_files_fingerprint_at_that_moment(pair, cells):
    answer = answer_citing(pair, cells)
    (citation,) = answer.evidence["citations"]
    assert citation == {
        "file_id": cells.pk,
        "name": "cells.pdf",
        "fingerprint": cells.fingerprint,
        "pages": [2],
    }


def test_an_unchanged_file_holds(pair, cells):
    answer = answer_citing(pair, cells)
    check = citation_verify(episode=answer, now=NOW)
    assert check.result == "holds" and check.details == {"files": []}
    assert check.checked_at == NOW


def test_a_file_replaced_by_a_new_version_is_changed_and_names_the_replacement(pair, cells):
    answer = answer_citing(pair, cells)
    newer = subject_file_register(
        subject=pair.subject, name="cells.pdf", content=b"cells v2", now=NOW + timedelta(days=1)
    )
    check = citation_verify(episode=answer, now=NOW + timedelta(days=2))
    assert check.result == "changed"
    (change,) = check.details["files"]
    assert change["change"] == "replaced"
    assert (change["file_id"], change["by_file_id"], change["by_name"]) == (
        cells.pk,
        newer.pk,
        "cells.pdf",
    )
    status = citation_status_for(episodes=[answer])[answer.pk]
    assert status == "changed"
    assert status.note == "'cells.pdf' was replaced by a newer version"


def test_a_removed_file_is_changed_removed(pair, cells):
    answer = answer_citing(pair, cells)
    subject_file_remove(subject_file=cells, now=NOW + timedelta(days=1))
    check = citation_verify(episode=answer, now=NOW + timedelta(days=2))
    assert check.result == "changed"
    assert check.details["files"][0]["change"] == "removed"
    assert citation_status_for(episodes=[answer])[answer.pk].note == "'cells.pdf' was removed"


def test_a_conversation_episode_is_unverifiable_not_holds(pair):
    question = episode_append(pair=pair, kind="question", summary="What is a cell?", embed=False)
    check_episode = episode_append(
        pair=pair, kind="check", summary="Check on cells", verdict="right", embed=False
    )
    uncited_answer = episode_append(pair=pair, kind="answer", summary="A unit", embed=False)
    for episode in (question, check_episode, uncited_answer):
        assert citation_verify(episode=episode, now=NOW).result == "unverifiable"


def test_checks_are_stored_append_only_one_row_per_verification(pair, cells):
    answer = answer_citing(pair, cells)
    citation_verify(episode=answer, now=NOW)
    subject_file_remove(subject_file=cells, now=NOW + timedelta(days=1))
    citation_verify(episode=answer, now=NOW + timedelta(days=2))
    results = list(
        CitationCheck.objects.filter(episode=answer)
        .order_by("checked_at")
        .values_list("result", flat=True)
    )
    assert results == ["holds", "changed"]


def test_the_live_status_of_many_episodes_costs_one_query(pair, cells, django_assert_num_queries):
    other = subject_file_register(subject=pair.subject, name="dna.md", content=b"dna", now=NOW)
    holding = answer_citing(pair, other)
    stale = answer_citing(pair, cells)
    question = episode_append(pair=pair, kind="question", summary="why?", embed=False)
    subject_file_register(subject=pair.subject, name="cells.pdf", content=b"v2", now=NOW)
    with django_assert_num_queries(1):
        statuses = citation_status_for(episodes=[holding, stale, question])
    assert statuses == {holding.pk: "holds", stale.pk: "changed", question.pk: "unverifiable"}


def test_no_query_when_nothing_cites_a_file(pair, django_assert_num_queries):
    question = episode_append(pair=pair, kind="question", summary="why?", embed=False)
    with django_assert_num_queries(0):
        assert citation_status_for(episodes=[question]) == {question.pk: "unverifiable"}


def test_never_checked_citations_come_first_for_the_nightly_batch(pair, cells):
    checked = answer_citing(pair, cells)
    citation_verify(episode=checked, now=NOW)
    fresh = answer_citing(pair, cells)
    episode_append(pair=pair, kind="question", summary="not an answer", embed=False)
    assert [e.pk for e in episodes_citations_to_verify(pair=pair, limit=10)] == [
        fresh.pk,
        checked.pk,
    ]
