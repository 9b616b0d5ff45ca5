"""The episode log's REST API: append, list, stance, chain status; bad input writes nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from memory.models import AnswerStance, Episode, EpisodeIndex, Pair, Student, Subject
from memory.services import EventSpec, episode_append, episode_append_batch, subject_file_register
from tests.factories import OrganizationFactory, PairFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/episodes/"
T0 = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)


def where(pair) -> dict:
    return {"student": pair.student.external_id, "subject": pair.subject.external_id}


def snapshot(pair) -> tuple:
    pair = Pair.objects.get(pk=pair.pk)
    return (
        Episode.objects.count(),
        EpisodeIndex.objects.count(),
        Student.objects.count(),
        Subject.objects.count(),
        Pair.objects.count(),
        pair.head_seq,
        pair.head_hash,
    )


# --- appending ------------------------------------------------------------------------


def test_one_event_is_appended_and_returned_with_id_seq_and_hash(api, pair):
    response = api.post(
        URL,
        {
            **where(pair),
            "kind": "check",
            "summary": "Check on osmosis",
            "verdict": "wrong",
            "topic": "osmosis",
            "assessment": "confused the direction",
            "predicted_mastery": 0.4,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    (episode,) = response.json()["episodes"]
    stored = Episode.objects.get(pk=episode["id"])
    assert (episode["seq"], episode["hash"], episode["appended"]) == (1, stored.hash, True)
    assert stored.evidence["assessment"] == "confused the direction"
    assert stored.predicted_mastery == 0.4
    assert response.json()["head_seq"] == 1


def test_a_turns_answer_to_a_known_chain_is_appended_in_a_few_statements(
    api, pair, django_capture_on_commit_callbacks
):
    # The per-turn path: the pair is found and locked in one query (no get-or-create
    # savepoints), the response needs no further lookups (the head comes from the
    # append itself), and no receiver queries for an answer.
    api.post(URL, {**where(pair), "kind": "question", "summary": "What is osmosis?"}, format="json")
    with django_capture_on_commit_callbacks(execute=True), CaptureQueriesContext(connection) as ctx:
        response = api.post(
            URL, {**where(pair), "kind": "answer", "summary": "Water crosses."}, format="json"
        )
    assert response.status_code == 201, response.json()
    statements = [q["sql"] for q in ctx.captured_queries]
    assert sum(s.startswith("SAVEPOINT") for s in statements) == 1  # the append's own
    assert len(statements) <= 8, "\n".join(statements)
    # The pair is read with its lock: one statement takes both (FOR UPDATE).
    assert sum(" FOR UPDATE" in s for s in statements) == 1
    assert response.json()["head_seq"] == 2


def test_student_subject_and_chain_are_created_on_first_use_with_the_timezone(api, organization):
    response = api.post(
        URL,
        {
            "student": "new-student",
            "subject": "chemistry",
            "student_timezone": "Europe/Madrid",
            "kind": "question",
            "summary": "What is a mole?",
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    student = Student.objects.get(organization=organization, external_id="new-student")
    assert student.timezone == "Europe/Madrid"
    assert Pair.objects.get(student=student).head_seq == 1


def test_a_batch_is_appended_in_order_in_one_call(api, pair):
    events = [{"kind": "question", "summary": f"q{i}"} for i in range(3)]
    response = api.post(URL, {**where(pair), "events": events}, format="json")
    assert response.status_code == 201
    assert [e["seq"] for e in response.json()["episodes"]] == [1, 2, 3]
    assert [e["summary"] for e in response.json()["episodes"]] == ["q0", "q1", "q2"]


def test_a_retry_with_the_same_idempotency_key_appends_nothing(api, pair):
    body = {**where(pair), "kind": "question", "summary": "q", "idempotency_key": "turn-17"}
    first = api.post(URL, body, format="json")
    before = snapshot(pair)
    again = api.post(URL, body, format="json")
    assert again.status_code == 200
    assert again.json()["episodes"][0]["id"] == first.json()["episodes"][0]["id"]
    assert again.json()["episodes"][0]["appended"] is False
    assert snapshot(pair) == before


def test_an_answer_cites_a_file_by_name_and_recalls_episodes_of_its_chain(api, pair):
    file = subject_file_register(subject=pair.subject, name="cells.pdf", content=b"x")
    recalled = episode_append(pair=pair, kind="question", summary="earlier", embed=False)
    response = api.post(
        URL,
        {
            **where(pair),
            "kind": "answer",
            "summary": "a",
            "recalled_ids": [recalled.pk],
            "citations": [{"file": "cells.pdf", "pages": [1, 2]}],
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    evidence = Episode.objects.get(pk=response.json()["episodes"][0]["id"]).evidence
    assert evidence["citations"][0]["fingerprint"] == file.fingerprint
    assert evidence["recalled_ids"] == [recalled.pk]


def test_appending_needs_an_api_key(pair):
    response = APIClient().post(
        URL, {**where(pair), "kind": "question", "summary": "q"}, format="json"
    )
    assert response.status_code == 401


# --- bad input: 400 naming the field, nothing written ---------------------------------


def _bad_cases(pair):
    other = PairFactory(student__organization=pair.student.organization)
    foreign = episode_append(pair=other, kind="question", summary="elsewhere", embed=False)
    other_subject_file = subject_file_register(subject=other.subject, name="x.pdf", content=b"x")
    long_text = "x" * 20_001
    return [
        ({"kind": "gossip", "summary": "s"}, "kind"),
        ({"kind": "check", "summary": "s"}, "verdict"),
        ({"kind": "check", "summary": "s", "verdict": "maybe"}, "verdict"),
        (
            {"kind": "check", "summary": "s", "verdict": "right", "predicted_mastery": 1.5},
            "predicted_mastery",
        ),
        (
            {"kind": "check", "summary": "s", "verdict": "right", "predicted_mastery": -0.1},
            "predicted_mastery",
        ),
        ({"kind": "question", "summary": "   "}, "summary"),
        ({"kind": "question", "summary": "s", "text": long_text}, "text"),
        (
            {"kind": "answer", "summary": "s", "citations": [{"file_id": other_subject_file.pk}]},
            "citations[0].file_id",
        ),
        (
            {"kind": "answer", "summary": "s", "citations": [{"file": "absent.pdf"}]},
            "citations[0].file",
        ),
        ({"kind": "answer", "summary": "s", "recalled_ids": [foreign.pk]}, "recalled_ids"),
        ({"kind": "question", "summary": "s", "verdit": "right"}, "verdit"),
        ({"kind": "question", "summary": "s", "occurred_at": "last tuesday"}, "occurred_at"),
    ]


def test_every_bad_event_is_a_400_naming_the_field_and_writes_nothing(api, pair):
    episode_append(pair=pair, kind="question", summary="an existing episode", embed=False)
    for body, field in _bad_cases(pair):
        before = snapshot(pair)
        response = api.post(URL, {**where(pair), **body}, format="json")
        assert response.status_code == 400, (body, response.json())
        assert response.json()["field"] == field, (body, response.json())
        assert field in response.json()["error"]
        assert snapshot(pair) == before, body


def test_a_batch_with_one_bad_event_is_rejected_whole_and_the_chain_is_unchanged(api, pair):
    episode_append(pair=pair, kind="question", summary="an existing episode", embed=False)
    events = [
        {"kind": "question", "summary": "fine"},
        {"kind": "check", "summary": "no verdict"},
        {"kind": "question", "summary": "also fine"},
    ]
    before = snapshot(pair)
    response = api.post(URL, {**where(pair), "events": events}, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == "events[1].verdict"
    assert snapshot(pair) == before


def test_a_batch_whose_late_event_cites_a_foreign_file_is_rejected_whole(api, pair):
    events = [
        {"kind": "question", "summary": "fine"},
        {"kind": "answer", "summary": "bad", "citations": [{"file": "nowhere.pdf"}]},
    ]
    before = snapshot(pair)
    response = api.post(URL, {**where(pair), "events": events}, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == "events[1].citations[0].file"
    assert snapshot(pair) == before


def test_a_bad_event_for_a_new_student_creates_no_student(api, organization, pair):
    before = snapshot(pair)
    response = api.post(
        URL,
        {
            "student": "brand-new",
            "subject": "brand-new-subject",
            "kind": "answer",
            "summary": "s",
            "citations": [{"file": "nope.pdf"}],
        },
        format="json",
    )
    assert response.status_code == 400
    assert snapshot(pair) == before


def test_an_unknown_timezone_is_a_400_naming_it(api, pair):
    response = api.post(
        URL,
        {**where(pair), "student_timezone": "Mars/Olympus", "kind": "question", "summary": "q"},
        format="json",
    )
    assert response.status_code == 400 and response.json()["field"] == "student_timezone"


# --- listing --------------------------------------------------------------------------


def _seed(pair, n=7):
    events = [
        EventSpec(
            kind="check" if i % 2 else "question",
            summary=f"e{i}",
            verdict="right" if i % 2 else "",
            occurred_at=T0 + timedelta(days=i),
        )
        for i in range(n)
    ]
    return episode_append_batch(pair=pair, events=events, embed=False)


def _list_url(pair) -> str:
    return f"/api/v1/pairs/{pair.student.external_id}/{pair.subject.external_id}/episodes/"


def test_the_list_pages_newest_first_with_a_cursor_and_never_counts(api, pair):
    _seed(pair, 7)
    seen = []
    url, params = _list_url(pair), {"limit": 3}
    with CaptureQueriesContext(connection) as queries:
        while True:
            body = api.get(url, params).json()
            seen += [e["seq"] for e in body["episodes"]]
            if not body["next_cursor"]:
                break
            params = {"limit": 3, "cursor": body["next_cursor"]}
    assert seen == [7, 6, 5, 4, 3, 2, 1]
    assert not any("COUNT(" in q["sql"].upper() for q in queries.captured_queries)


def test_the_list_filters_by_kind_and_time(api, pair):
    _seed(pair, 7)
    body = api.get(
        _list_url(pair),
        {
            "kind": "check",
            "since": (T0 + timedelta(days=2)).isoformat(),
            "until": (T0 + timedelta(days=6)).isoformat(),
            "order": "oldest",
        },
    ).json()
    assert [e["summary"] for e in body["episodes"]] == ["e3", "e5"]
    assert all(e["citation_status"] == "unverifiable" for e in body["episodes"])


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"kind": "gossip"}, "kind"),
        ({"since": "july"}, "since"),
        ({"limit": 0}, "limit"),
        ({"cursor": "!!!"}, "cursor"),
        ({"order": "sideways"}, "order"),
    ],
)
def test_a_bad_list_parameter_is_a_400_naming_it(api, pair, params, field):
    _seed(pair, 2)
    response = api.get(_list_url(pair), params)
    assert response.status_code == 400 and response.json()["field"] == field


def test_another_organizations_pair_is_not_found(pair):
    _seed(pair, 1)
    from memory.services import api_key_create

    _, raw = api_key_create(organization=OrganizationFactory(), name="other")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw}")
    assert client.get(_list_url(pair)).status_code == 404


# --- stance ---------------------------------------------------------------------------


def test_a_stance_is_written_once_and_a_second_report_is_refused(api, pair):
    answer = episode_append(pair=pair, kind="answer", summary="a", embed=False)
    url = f"/api/v1/episodes/{answer.pk}/stance/"
    first = api.post(url, {"stance": "cannot"}, format="json")
    assert first.status_code == 201 and first.json()["stance"] == "cannot"
    second = api.post(url, {"stance": "answered"}, format="json")
    assert second.status_code == 400
    assert second.json()["field"] == "stance" and "written once" in second.json()["error"]
    assert AnswerStance.objects.get(episode=answer).stance == "cannot"
    listed = api.get(_list_url(pair)).json()["episodes"][0]
    assert listed["stance"] == "cannot"


def test_a_stance_on_a_question_or_with_a_bad_value_is_refused(api, pair):
    question = episode_append(pair=pair, kind="question", summary="q", embed=False)
    answer = episode_append(pair=pair, kind="answer", summary="a", embed=False)
    not_answer = api.post(
        f"/api/v1/episodes/{question.pk}/stance/", {"stance": "answered"}, format="json"
    )
    assert not_answer.status_code == 400 and not_answer.json()["field"] == "episode"
    bad = api.post(f"/api/v1/episodes/{answer.pk}/stance/", {"stance": "maybe"}, format="json")
    assert bad.status_code == 400 and bad.json()["field"] == "stance"
    assert (
        api.post(
            "/api/v1/episodes/999999/stance/", {"stance": "answered"}, format="json"
        ).status_code
        == 404
    )
    assert AnswerStance.objects.count() == 0


# --- chain status ---------------------------------------------------------------------


def test_chain_status_shows_the_last_verification_and_can_verify_now(api, pair):
    _seed(pair, 3)
    url = f"/api/v1/pairs/{pair.student.external_id}/{pair.subject.external_id}/chain/"
    body = api.get(url).json()
    assert (body["status"], body["head_seq"], body["last_verification"]) == (
        "never verified",
        3,
        None,
    )
    body = api.get(url, {"verify": "true"}).json()
    assert body["status"] == "intact"
    assert body["last_verification"]["length"] == 3
    assert api.get(url).json()["status"] == "intact"


def test_a_page_of_episodes_costs_the_same_queries_whatever_its_length(api, pair):
    answer_file = subject_file_register(subject=pair.subject, name="cells.pdf", content=b"x")
    _seed(pair, 2)
    episode_append(
        pair=pair, kind="answer", summary="a", citations=[{"file_id": answer_file.pk}], embed=False
    )
    with CaptureQueriesContext(connection) as small:
        assert api.get(_list_url(pair), {"limit": 3, "order": "oldest"}).status_code == 200
    _seed(pair, 40)
    with CaptureQueriesContext(connection) as large:
        assert api.get(_list_url(pair), {"limit": 40, "order": "oldest"}).status_code == 200
    assert len(large.captured_queries) == len(small.captured_queries)


def test_the_openapi_schema_documents_the_episode_endpoints(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()
    paths = schema["paths"]
    assert "post" in paths["/api/v1/episodes/"]
    assert "get" in paths["/api/v1/pairs/{student}/{subject}/episodes/"]
    assert "post" in paths["/api/v1/episodes/{episode_id}/stance/"]
    assert "get" in paths["/api/v1/pairs/{student}/{subject}/chain/"]
