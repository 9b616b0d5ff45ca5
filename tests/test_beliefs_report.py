"""R-4.6: honest reports. Counts from the log, beliefs only from current rows, empty
states stated, nothing invented."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone

from beliefs.selectors import checks_sentence, pair_report
from beliefs.services import beliefs_rederive
from memory.models import AnswerStance
from memory.services import episode_append
from tests.beliefs_helpers import T0, days, make_concept
from tests.factories import PairFactory
from tutorbrain.groups import MEMORY_STAFF

HONEST = "32 checks are on record, but none could be linked to a concept in the map yet."


@pytest.fixture
def unlinkable(pair, derive):
    """32 checks, none of which can be linked: the map has concepts, none named."""
    make_concept(pair.subject, "Osmosis")
    topics = ["ask me the questions", "pode repetir a pergunta", "Photosynthesis", "next one"]
    for i in range(32):
        derive(pair, topic=topics[i % 4], verdict=["right", "wrong"][i % 2], at=T0 + days(i))
    return pair


def test_the_report_of_32_unlinkable_checks_says_so_and_invents_no_belief(unlinkable):
    report = pair_report(pair=unlinkable)
    assert report.checks_sentence == HONEST
    assert (report.checks_total, report.checks_linked, report.checks_unlinked) == (32, 0, 32)
    assert report.beliefs == []
    assert "no check on record is linked" in report.beliefs_sentence
    assert report.changes == []
    assert "no checks yet" not in " ".join([report.checks_sentence, report.beliefs_sentence])
    assert report.checks_unlinked_utterances == 24  # three topics of four read as speech


def test_the_report_api_says_so_too_and_lists_no_belief(api, unlinkable):
    pair = unlinkable
    response = api.get(
        reverse("api:pair-report", args=[pair.student.external_id, pair.subject.external_id])
    )
    assert response.status_code == 200
    body = response.json()
    assert body["checks"]["sentence"] == HONEST
    assert body["checks"]["total"] == 32 and body["checks"]["linked"] == 0
    assert body["beliefs"] == []
    assert body["changes"] == []
    assert body["unanswered_questions"] == []
    assert body["unanswered_sentence"].startswith("No answer is on record")


def test_the_admin_report_page_says_so(client, django_user_model, unlinkable):
    user = django_user_model.objects.create_user("ana", password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name=MEMORY_STAFF))
    client.force_login(user)
    html = client.get(
        reverse("admin:beliefs_pairbeliefs_report", args=[unlinkable.pk])
    ).content.decode()
    assert HONEST in html
    assert 'id="report-beliefs"' not in html


def test_another_organizations_pair_is_a_404(api, db):
    other = PairFactory()
    response = api.get(
        reverse("api:pair-report", args=[other.student.external_id, other.subject.external_id])
    )
    assert response.status_code == 404
    assert "error" in response.json()


def test_a_pair_without_checks_says_there_are_none_yet(api, pair):
    body = api.get(
        reverse("api:pair-report", args=[pair.student.external_id, pair.subject.external_id])
    ).json()
    assert body["checks"]["sentence"] == "No checks are on record yet."
    assert body["beliefs_sentence"].startswith("No current beliefs")


@pytest.mark.parametrize(
    ("total", "linked", "sentence"),
    [
        (1, 0, "1 check is on record, but none could be linked to a concept in the map yet."),
        (1, 1, "1 check is on record; it is linked to a concept in the map."),
        (5, 5, "5 checks are on record; all are linked to a concept in the map."),
        (
            5,
            3,
            "5 checks are on record; 3 linked to a concept in the map, 2 could not be linked yet.",
        ),
    ],
)
def test_the_checks_sentence_states_each_case(total, linked, sentence):
    assert checks_sentence(total=total, linked=linked) == sentence


def test_the_report_lists_current_beliefs_changes_and_why(api, pair, derive):
    make_concept(pair.subject, "Osmosis")
    derive(pair, topic="Osmosis", verdict="wrong", at=T0)
    second = derive(pair, topic="Osmosis", verdict="right", at=T0 + days(1))
    derive(pair, topic="bueno ahora explícame todos los pasos", verdict="wrong", at=T0 + days(1))
    make_concept(pair.subject, "Cytoplasm")
    derive(pair, topic="Cytoplasm", verdict="wrong", at=T0 + days(50))
    # Live derivation stamps rows with the wall clock; the re-derivation comes after it.
    rederived_at = timezone.now() + days(1)
    beliefs_rederive(pair=pair, now=rederived_at)
    report = pair_report(pair=pair)
    assert report.checks_sentence == (
        "4 checks are on record; 3 linked to a concept in the map, 1 could not be linked yet."
    )
    beliefs = {b.concept: b for b in report.beliefs}
    osmosis, cytoplasm = beliefs["Osmosis"], beliefs["Cytoplasm"]
    # Osmosis was left 49 days while the student went on (Cytoplasm): derived decayed on
    # the history's own time line. Cytoplasm is the history's newest check: not decayed.
    # (Osmosis leans a little lower: the wrong Cytoplasm answer lowers the student's level.)
    assert (osmosis.claim, osmosis.confidence, osmosis.p_right) == ("struggles", 0.51, 0.49)
    assert osmosis.checks == 2 and osmosis.needs_confirmation
    assert (cytoplasm.claim, cytoplasm.p_right, cytoplasm.needs_confirmation) == (
        "struggles",
        0.4,
        False,
    )
    # In time order: the history reads forwards.
    assert [c.at for c in report.changes] == sorted(c.at for c in report.changes)
    changes = [c for c in report.changes if c.concept == "Osmosis"]
    assert [c.reason for c in changes] == ["evidence", "retirement", "rederivation"]
    evidence_change = changes[0]
    assert evidence_change.sentence == (
        "New evidence changed “struggles with Osmosis (0.60)” to “struggles with Osmosis (0.50)”."
    )
    assert (evidence_change.before_p_right, evidence_change.after_p_right) == (0.4, 0.5)
    assert evidence_change.new_evidence_episode_ids == [second.pk]
    assert changes[-1].sentence == (
        "Re-derived from 2 checks: “struggles with Osmosis (0.51)”, decayed: no check for "
        "45 days; the next check confirms it."
    )
    assert report.last_rederivation_at == rederived_at


def test_the_report_lists_the_questions_the_files_could_not_answer(api, pair):
    question = episode_append(
        pair=pair,
        kind="question",
        summary="Why do onions make you cry?",
        occurred_at=T0,
        now=T0,
        embed=False,
    )
    answer = episode_append(
        pair=pair,
        kind="answer",
        summary="Explained tear glands without a source",
        occurred_at=T0 + days(0.01),
        now=T0 + days(0.01),
        embed=False,
    )
    lone = episode_append(
        pair=pair,
        kind="answer",
        summary="What is the boiling point on Everest?",
        occurred_at=T0 + days(1),
        now=T0 + days(1),
        embed=False,
    )
    answered = episode_append(
        pair=pair, kind="answer", summary="Osmosis defined", now=T0 + days(2), embed=False
    )
    AnswerStance.objects.create(episode=answer, stance="cannot", reported_at=timezone.now())
    AnswerStance.objects.create(episode=lone, stance="cannot", reported_at=timezone.now())
    AnswerStance.objects.create(episode=answered, stance="answered", reported_at=timezone.now())
    body = api.get(
        reverse("api:pair-report", args=[pair.student.external_id, pair.subject.external_id])
    ).json()
    questions = [(q["answer_episode_id"], q["question"]) for q in body["unanswered_questions"]]
    # Newest first. An answer right after a question stands for that question; an answer
    # whose question was not logged stands for itself (its summary).
    assert questions == [
        (lone.pk, lone.summary),
        (answer.pk, question.summary),
    ]
    assert body["unanswered_sentence"] == "2 questions the files could not answer."


def test_a_check_posted_to_the_api_becomes_a_belief_in_the_report(
    api, organization, django_capture_on_commit_callbacks
):
    from memory.services import subject_get_or_create

    subject = subject_get_or_create(organization=organization, external_id="biology")
    make_concept(subject, "Cytoplasm")
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            reverse("api:episode-append"),
            {
                "student": "s-1",
                "subject": "biology",
                "kind": "check",
                "summary": "Asked where the organelles float",
                "topic": "Check on cytoplasm",
                "verdict": "right",
                "assessment": "Knew the cytoplasm holds the organelles.",
            },
            format="json",
        )
    assert response.status_code in (200, 201), response.content
    body = api.get(reverse("api:pair-report", args=["s-1", "biology"])).json()
    assert body["checks"]["sentence"] == (
        "1 check is on record; it is linked to a concept in the map."
    )
    assert [(b["concept"], b["claim"], b["confidence"], b["p_right"]) for b in body["beliefs"]] == [
        ("Cytoplasm", "understands", 0.6, 0.6)
    ]
