from __future__ import annotations

import datetime as dt

import pytest

from beliefs.models import Belief
from concepts.models import Concept
from concepts.selectors import concept_key
from memory.models import CitationCheck, Episode
from memory.services import episode_append, subject_file_register
from tests.factories import PairFactory
from tests.nightly_helpers import DAY, a_day_of_activity, at
from tutorbrain.models import CalibrationSnapshot, NightlyRun, SelfModel
from tutorbrain.nightly import cycle, services
from tutorbrain.nightly.rules import STEPS
from tutorbrain.nightly.selectors import self_model_limits_sentence

pytestmark = pytest.mark.django_db

NEXT_DAY = DAY + dt.timedelta(days=1)


def consolidations(pair):
    return Episode.objects.filter(pair=pair, kind=Episode.Kind.CONSOLIDATION)


# --- consolidation --------------------------------------------------------------


def test_a_day_of_activity_is_consolidated_into_one_episode(pair):
    a_day_of_activity(pair)

    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)

    note = consolidations(pair).get()
    assert note.evidence["counts"] == {"question": 1, "answer": 1, "check": 2}
    assert note.evidence["check_balance"] == {"right": 1, "partial": 0, "wrong": 1}
    assert note.evidence["topics"] == ["fractions"]
    assert note.summary == (
        "Day 2026-03-10: 1 question, 1 answer, 2 checks (1 right, 1 wrong); topics: fractions"
    )
    assert note.idempotency_key == f"consolidation:{DAY.isoformat()}"


def test_the_consolidation_does_not_list_an_utterance_topic_as_a_topic(pair):
    episode_append(
        pair=pair,
        kind="check",
        summary="Check: ok now tell me again",
        topic="ok now tell me again",
        verdict="partial",
        occurred_at=at(10),
        now=at(10),
        embed=False,
    )
    episode_append(
        pair=pair,
        kind="check",
        summary="Check on fractions",
        topic="fractions",
        verdict="right",
        occurred_at=at(11),
        now=at(11),
        embed=False,
    )

    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)

    assert consolidations(pair).get().evidence["topics"] == ["fractions"]


def test_the_consolidation_lists_the_five_most_salient_headlines(pair):
    a_day_of_activity(pair)
    for i in range(3):
        episode_append(
            pair=pair,
            kind="taught",
            summary=f"Taught rule {i}",
            occurred_at=at(12, i),
            now=at(12, i),
            embed=False,
        )

    note = services.consolidation_compose(pair=pair, day=DAY)

    headlines = [h["summary"] for h in note.extra["headlines"]]
    # taught (0.85) x3, then the wrong check (0.70), then the right check (0.60).
    assert headlines == [
        "Taught rule 0",
        "Taught rule 1",
        "Taught rule 2",
        "Confused numerator and denominator",
        "Added 1/2 + 1/3 correctly",
    ]


def test_running_the_cycle_twice_for_the_same_day_writes_no_second_consolidation(pair):
    a_day_of_activity(pair)

    first = cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)
    head_after_first = type(pair).objects.get(pk=pair.pk).head_seq
    second = cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)

    assert first.status == "done"
    assert second.status == "skipped-done"
    assert consolidations(pair).count() == 1
    assert type(pair).objects.get(pk=pair.pk).head_seq == head_after_first
    assert CalibrationSnapshot.objects.filter(pair=pair).count() == 1


def test_a_forced_second_consolidation_of_the_same_day_returns_the_first(pair):
    a_day_of_activity(pair)
    first = services.consolidation_write(pair=pair, day=DAY, now=at(23, 59), embed=False)

    second = services.consolidation_write(pair=pair, day=DAY, now=at(23, 59), embed=False)

    assert second.pk == first.pk
    assert consolidations(pair).count() == 1


def test_a_quiet_day_writes_no_consolidation(pair):
    a_day_of_activity(pair)

    outcome = cycle.pair_cycle_run(pair_id=pair.pk, day=NEXT_DAY, embed=False)

    assert outcome.wrote["consolidate"] == {"episode_id": None}
    assert consolidations(pair).count() == 0


def test_the_consolidation_never_summarises_consolidation_episodes(pair):
    a_day_of_activity(pair)
    services.consolidation_write(pair=pair, day=DAY, now=at(23, 59), embed=False)

    again = services.consolidation_compose(pair=pair, day=DAY)

    assert again.extra["counts"] == {"question": 1, "answer": 1, "check": 2}
    assert "consolidation" not in again.summary


def test_a_day_with_only_a_consolidation_counts_as_quiet(pair):
    a_day_of_activity(pair)
    services.consolidation_write(pair=pair, day=DAY, now=at(23, 59), embed=False)

    assert cycle.active_pair_ids(day=NEXT_DAY) == []
    assert services.consolidation_compose(pair=pair, day=NEXT_DAY) is None


def test_the_active_pairs_are_those_with_an_episode_on_the_day(pair, organization):
    quiet = PairFactory(student__organization=organization, subject=pair.subject)
    a_day_of_activity(quiet, day=DAY - dt.timedelta(days=1))
    a_day_of_activity(pair)

    assert cycle.active_pair_ids(day=DAY) == [pair.pk]


def test_the_day_is_the_students_day_whatever_the_nightly_time_zone(pair, settings):
    settings.CELERY_TIMEZONE = "America/Sao_Paulo"  # UTC-3
    pair.student.timezone = "America/Sao_Paulo"
    pair.student.save()
    # 01:00 UTC on the 11th is 22:00 on the 10th in Sao Paulo: the student's 10th.
    episode_append(
        pair=pair,
        kind="question",
        summary="late question",
        occurred_at=at(1, 0, NEXT_DAY),
        now=at(1, 0, NEXT_DAY),
        embed=False,
    )

    assert cycle.active_pair_ids(day=DAY) == [pair.pk]
    assert cycle.active_pair_ids(day=NEXT_DAY) == []

    # A UTC student's episode at the same instant is on their 11th, whatever the
    # nightly zone: it is consolidated by the cycle whose end follows their 11th.
    utc = PairFactory(student__timezone="UTC")
    episode_append(
        pair=utc,
        kind="question",
        summary="late question",
        occurred_at=at(1, 0, NEXT_DAY),
        now=at(1, 0, NEXT_DAY),
        embed=False,
    )
    assert utc.pk not in cycle.active_pair_ids(day=DAY)
    assert utc.pk in cycle.active_pair_ids(day=NEXT_DAY)


# --- decay ------------------------------------------------------------------------


def _belief(pair, *, last_evidence_at, name="fractions", confidence=0.8):
    concept = Concept.objects.create(subject=pair.subject, name=name, key=concept_key(name))
    return Belief.objects.create(
        pair=pair,
        concept=concept,
        claim=Belief.Claim.UNDERSTANDS,
        confidence=confidence,
        reason=Belief.Reason.EVIDENCE,
        p_right=confidence,
        check_count=3,
        last_evidence_at=last_evidence_at,
        created_at=last_evidence_at,
    )


def test_a_belief_untouched_for_45_days_decays_by_supersession(pair):
    _, end = services.day_bounds(DAY)
    old = _belief(pair, last_evidence_at=end - dt.timedelta(days=45))
    before = Belief.objects.filter(pk=old.pk).values().get()

    outcome = cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)

    new = Belief.objects.get(pk=outcome.wrote["decay"]["superseding_belief_ids"][0])
    assert new.reason == Belief.Reason.DECAY
    # p_right 0.8 moves 15 % of the way to the prior (0.5: no other student): 0.755.
    assert (new.p_right, new.confidence) == (0.76, 0.76)
    assert new.needs_confirmation
    after = Belief.objects.filter(pk=old.pk).values().get()
    assert after.pop("superseded_by_id") == new.pk
    before.pop("superseded_by_id")
    assert after == before


def test_a_belief_untouched_for_44_days_does_not_decay(pair):
    _, end = services.day_bounds(DAY)
    _belief(pair, last_evidence_at=end - dt.timedelta(days=44))

    outcome = cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)

    assert outcome.wrote["decay"]["superseding_belief_ids"] == []
    assert Belief.objects.filter(pair=pair).count() == 1


def test_a_decayed_belief_does_not_decay_again_the_next_night(pair):
    _, end = services.day_bounds(DAY)
    _belief(pair, last_evidence_at=end - dt.timedelta(days=45))
    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)

    outcome = cycle.pair_cycle_run(pair_id=pair.pk, day=NEXT_DAY, embed=False)

    assert outcome.wrote["decay"]["superseding_belief_ids"] == []


def test_the_next_check_on_a_decayed_concept_clears_the_flag(
    pair, django_capture_on_commit_callbacks
):
    _, end = services.day_bounds(DAY)
    _belief(pair, last_evidence_at=end - dt.timedelta(days=45))
    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)
    assert Belief.objects.current().get(pair=pair).needs_confirmation

    with django_capture_on_commit_callbacks(execute=True):
        episode_append(
            pair=pair,
            kind="check",
            summary="Added fractions again",
            topic="fractions",
            verdict="right",
            occurred_at=end + dt.timedelta(hours=9),
            now=end + dt.timedelta(hours=9),
            embed=False,
        )

    current = Belief.objects.current().get(pair=pair)
    assert not current.needs_confirmation
    assert current.reason == Belief.Reason.EVIDENCE


def test_pairs_with_a_belief_due_for_decay_are_in_the_night_even_when_quiet(pair):
    _, end = services.day_bounds(DAY)
    _belief(pair, last_evidence_at=end - dt.timedelta(days=45))

    assert cycle.active_pair_ids(day=DAY) == []
    assert cycle.cycle_pair_ids(day=DAY) == [pair.pk]


# --- verification order ----------------------------------------------------------


def _cited_answers(pair, n):
    file = subject_file_register(
        subject=pair.subject, name="notes.pdf", content=b"%PDF notes", page_count=3, now=at(7)
    )
    return [
        episode_append(
            pair=pair,
            kind="answer",
            summary=f"answer {i}",
            citations=[{"file_id": file.pk}],
            occurred_at=at(8, i),
            now=at(8, i),
            embed=False,
        )
        for i in range(n)
    ]


def test_verification_takes_never_checked_citations_first_then_the_oldest_checked(pair):
    a, b, c, d = _cited_answers(pair, 4)
    episode_append(
        pair=pair,
        kind="answer",
        summary="no citation",
        occurred_at=at(8, 30),
        now=at(8, 30),
        embed=False,
    )
    CitationCheck.objects.create(episode=a, result="holds", checked_at=at(20, 0))
    CitationCheck.objects.create(episode=b, result="holds", checked_at=at(19, 0))
    _, end = services.day_bounds(DAY)

    batch = services.verification_batch(pair=pair, end=end, size=3)

    assert [e.pk for e in batch] == [c.pk, d.pk, b.pk]


def test_the_nightly_verification_is_bounded_by_the_batch_size(pair, settings):
    settings.TUTORBRAIN_VERIFY_BATCH_SIZE = 2
    _cited_answers(pair, 3)

    outcome = cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)

    assert outcome.wrote["verify"]["results"] == {"holds": 2}
    assert CitationCheck.objects.filter(episode__pair=pair).count() == 2
    model = SelfModel.objects.get(pair=pair)
    assert (model.citations_holding, model.citations_unchecked) == (2, 1)


# --- self-model ----------------------------------------------------------


def _predicted_checks(pair, n, *, topic="nowhere-topic", verdicts=("right",), predicted=0.8):
    return [
        episode_append(
            pair=pair,
            kind="check",
            summary=f"check {i}",
            topic=topic,
            verdict=verdicts[i % len(verdicts)],
            predicted_mastery=predicted,
            occurred_at=at(10, i),
            now=at(10, i),
            embed=False,
        ).pk
        for i in range(n)
    ]


def test_the_self_model_measures_p_right_on_the_checks_that_followed_a_belief(pair):
    from beliefs.services import beliefs_derive_from_checks

    Concept.objects.create(subject=pair.subject, name="Fractions", key=concept_key("Fractions"))
    ids = _predicted_checks(pair, 6, topic="Fractions")
    beliefs_derive_from_checks(pair=pair, episode_ids=ids)

    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)

    model = SelfModel.objects.get(pair=pair)
    assert model.ece == pytest.approx(0.2)
    # The first check had no belief before it; each of the other five followed one.
    assert model.belief_predictions == 5
    assert model.calibration.belief_predictions == 5 and len(model.calibration.belief_bins) == 10
    # Six rights in a row: every p_right (0.60, 0.67, …) ran below the outcome.
    assert model.belief_ece == pytest.approx(
        sum(1 - p for p in (0.6, 0.67, 0.71, 0.75, 0.78)) / 5, abs=0.01
    )
    # Enough checks to measure, but figures 0.20 and 0.30 off are no probabilities.
    assert not model.calibrated
    sentence = self_model_limits_sentence(pair=pair)
    assert sentence.startswith("Confidence figures are a ranking, not a probability")
    assert "6 checks with a predicted mastery (expected calibration error 0.20)" in sentence
    assert "5 checks that followed a belief (p_right, 0.30)" in sentence
    assert "one runs more than 0.10 off what happened" in sentence


def test_the_self_model_is_calibrated_when_both_errors_are_within_a_tenth(pair):
    from beliefs.services import beliefs_derive_from_checks

    Concept.objects.create(subject=pair.subject, name="Fractions", key=concept_key("Fractions"))
    # Two of every three right, and the tutor predicted 0.65 each time.
    ids = _predicted_checks(
        pair, 60, topic="Fractions", verdicts=("wrong", "right", "right"), predicted=0.65
    )
    beliefs_derive_from_checks(pair=pair, episode_ids=ids)

    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)

    model = SelfModel.objects.get(pair=pair)
    assert model.ece == pytest.approx(40 / 60 - 0.65, abs=1e-3)
    assert model.belief_predictions == 59 and model.belief_ece <= 0.10
    assert model.calibrated
    sentence = self_model_limits_sentence(pair=pair)
    assert "ranking" not in sentence
    assert "calibrated on 60 checks with a predicted mastery (expected calibration error 0.02)" in (
        sentence
    )
    assert (
        f"on 59 checks that followed a belief (p_right, expected calibration error {model.belief_ece:.2f})"
        in sentence
    )


def test_the_self_model_is_not_calibrated_until_checks_have_followed_a_belief(pair):
    _predicted_checks(pair, 5)

    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)

    model = SelfModel.objects.get(pair=pair)
    assert model.predicted_checks == 5 and model.belief_predictions == 0
    assert not model.calibrated
    assert "fewer than 5 checks have followed a belief" in self_model_limits_sentence(pair=pair)


def test_the_self_model_is_not_calibrated_at_four_predicted_checks(pair):
    _predicted_checks(pair, 4)

    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)

    assert not SelfModel.objects.get(pair=pair).calibrated
    assert "ranking, not a probability" in self_model_limits_sentence(pair=pair)


def test_the_self_model_counts_unlinkable_checks_and_unanswerable_questions(pair):
    from memory.services import answer_stance_report

    a_day_of_activity(pair)
    answer = Episode.objects.get(pair=pair, kind="answer")
    answer_stance_report(episode=answer, stance="cannot", now=at(10))

    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)

    model = SelfModel.objects.get(pair=pair)
    linked = Episode.objects.filter(pair=pair, kind="check", beliefs__isnull=False).distinct()
    assert model.unlinkable_checks == 2 - linked.count()
    assert model.unanswerable_questions == 1
    assert model.unanswerable_examples[0]["question"] == "Asked how to add fractions"


# --- the run's bookkeeping ---------------------------------------------------------------


def test_a_done_run_records_every_step_and_what_it_wrote(pair):
    a_day_of_activity(pair)

    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)

    run = NightlyRun.objects.get(pair=pair, day=DAY)
    assert run.status == NightlyRun.Status.DONE
    assert run.steps_done == list(STEPS)
    assert run.wrote["consolidate"]["episode_id"] == consolidations(pair).get().pk
    assert run.failures == []


def test_a_failing_step_is_recorded_the_others_run_and_the_rerun_completes_it(pair, monkeypatch):
    a_day_of_activity(pair)

    def broken(**kwargs):
        raise ValueError("disk on fire")

    monkeypatch.setattr(services, "citations_verify_batch", broken)
    outcome = cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)
    run = NightlyRun.objects.get(pair=pair, day=DAY)

    assert outcome.status == "failed"
    assert run.status == NightlyRun.Status.FAILED
    assert "verify" not in run.steps_done
    assert "self_model" in run.steps_done
    assert run.failures[0]["step"] == "verify"
    assert "disk on fire" in run.failures[0]["error"]

    monkeypatch.undo()
    again = cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)

    run.refresh_from_db()
    assert again.steps_run == ["verify"]
    assert run.status == NightlyRun.Status.DONE
    assert sorted(run.steps_done) == sorted(STEPS)
    assert consolidations(pair).count() == 1


def test_the_night_runs_every_active_pair_and_the_all_pairs_calibration(pair, organization):
    other = PairFactory(student__organization=organization, subject=pair.subject)
    a_day_of_activity(pair)
    a_day_of_activity(other)

    fan = cycle.night_run(day=DAY, embed=False)
    again = cycle.night_run(day=DAY, embed=False)

    assert sorted(fan.pair_ids) == sorted([pair.pk, other.pk])
    assert again.pair_ids == []
    assert Episode.objects.filter(kind="consolidation").count() == 2
    overall = CalibrationSnapshot.objects.get(pair__isnull=True, day=DAY)
    assert overall.predicted_checks == 4
