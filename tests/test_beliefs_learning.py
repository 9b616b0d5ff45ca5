"""Issue #12: the learning term of p_right — a model of practice (right and wrong answers
so far) fitted per subject over the whole population, nightly, and used by derivation."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import numpy as np
import pytest
from django.urls import reverse

from beliefs import learning, rules
from beliefs.models import Belief, BeliefLearningFit, Rederivation
from beliefs.selectors import beliefs_current, concept_priors, learning_model_latest
from beliefs.services import (
    belief_decay,
    beliefs_fit_learning,
    beliefs_rederive,
    beliefs_rederive_after_fits,
)
from beliefs.simulation import SETTINGS, simulate
from memory.immutability import ImmutableRecordError
from memory.services import (
    EventSpec,
    episode_append_batch,
    pair_get_or_create,
    student_get_or_create,
)
from tests.beliefs_helpers import T0, days, make_concept
from tutorbrain.nightly import cycle

SMALL = replace(SETTINGS["default"], students=120, concepts=8)


def _histories(rows) -> dict[int, list[learning.LoggedOutcome]]:
    students: dict[str, int] = {}
    concepts: dict[str, int] = {}
    out: dict[int, list[learning.LoggedOutcome]] = defaultdict(list)
    for i, r in enumerate(rows):
        s = students.setdefault(r.student, len(students) + 1)
        c = concepts.setdefault(r.concept, len(concepts) + 1)
        out[s].append(learning.LoggedOutcome(c, r.time, i, r.verdict))
    return dict(out)


def test_the_fit_finds_that_practice_and_a_students_level_raise_the_chance_of_a_right_answer():
    model = learning.fit(_histories(simulate(4, SMALL)))
    assert model is not None
    # The simulated learners improve with every check and differ in ability.
    assert model.wins > 0.2
    assert model.level > 0.5
    base = model.base_logit(1, {})
    before = learning.sigmoid(base)
    # Three answers in one sitting: counted by W and F, and as that sitting's share.
    rights, wrongs = learning.recent_share([(3, 3)]), learning.recent_share([(0, 3)])
    assert wrongs < 0 < rights
    after_three_rights = learning.sigmoid(
        learning.practice_logit(3, 0, base, model.wins, model.fails, rights, model.recent)
    )
    after_three_wrongs = learning.sigmoid(
        learning.practice_logit(0, 3, base, model.wins, model.fails, wrongs, model.recent)
    )
    assert after_three_wrongs < before < after_three_rights
    # A student above the concepts' means elsewhere starts a new concept higher.
    strong = {2: (9.0, 10), 3: (9.0, 10)}
    weak = {2: (1.0, 10), 3: (1.0, 10)}
    assert model.base_logit(1, weak) < base < model.base_logit(1, strong)


def test_the_fit_is_deterministic_and_survives_its_json_round_trip():
    histories = _histories(simulate(5, SMALL))
    first, second = learning.fit(histories), learning.fit(histories)
    assert first == second
    assert learning.LearningModel.from_json(first.as_json()) == first


def test_a_subject_with_too_few_students_or_checks_gets_no_fit():
    rows = simulate(6, replace(SMALL, students=learning.LEARNING_MIN_STUDENTS - 1))
    assert learning.fit(_histories(rows)) is None
    many_students_few_checks = {
        k: v[:2] for k, v in list(_histories(simulate(6, SMALL)).items())[:60]
    }
    assert len(many_students_few_checks) >= learning.LEARNING_MIN_STUDENTS
    assert sum(len(v) for v in many_students_few_checks.values()) < learning.LEARNING_MIN_CHECKS
    assert learning.fit(many_students_few_checks) is None


def _table_with(model: learning.LearningModel) -> rules.PriorTable:
    return replace(rules.priors_from_rows([]), learning=model)


MODEL = learning.LearningModel(
    intercept=-0.4,
    wins=0.5,
    fails=-0.2,
    level=3.0,
    offsets={1: -0.8},
    means={1: 0.4, 2: 0.6},
    rate=0.55,
)


def test_with_a_learning_model_one_right_answer_stays_near_the_concepts_prior_not_one():
    prior = _table_with(MODEL).for_student(1, {})
    assert prior.strength is None and prior.practice is not None
    assert prior.mean == pytest.approx(learning.sigmoid(-1.2))
    one_right = rules.derive([rules.CheckPoint(1, T0, "right")], prior)
    assert one_right.p_right != 1.0
    assert abs(one_right.p_right - prior.mean) < 0.1
    assert one_right.claim == "struggles"


# The same model with a weight on how the recent sittings went (R).
MODEL_RECENT = replace(MODEL, recent=1.5)


def test_with_a_learning_model_two_checks_a_minute_apart_give_the_same_belief_in_either_order():
    prior = _table_with(MODEL_RECENT).for_student(1, {2: (4.0, 5)})
    forward = [
        rules.CheckPoint(1, T0, "wrong"),
        rules.CheckPoint(2, T0 + days(1 / 1440), "right"),
    ]
    swapped = [
        rules.CheckPoint(1, T0, "right"),
        rules.CheckPoint(2, T0 + days(1 / 1440), "wrong"),
    ]
    assert rules.derive(forward, prior) == rules.derive(swapped, prior)


def test_the_recent_share_weighs_each_earlier_sitting_half_as_much_as_the_next():
    assert learning.recent_share([]) == 0.0
    # One sitting of three right: (3 + 1) / (3 + 2) − ½.
    assert learning.recent_share([(3, 3)]) == pytest.approx(0.3)
    # Wrong then right: (0·½ + 3 + 1) / (3·½ + 3 + 2) − ½.
    assert learning.recent_share([(0, 3), (3, 3)]) == pytest.approx(4 / 6.5 - 0.5)
    assert learning.recent_share([(3, 3), (0, 3)]) == pytest.approx(2.5 / 6.5 - 0.5)


def _daily(verdicts: list[str]) -> list[rules.CheckPoint]:
    return [rules.CheckPoint(i, T0 + days(i), v) for i, v in enumerate(verdicts)]


def test_with_a_learning_model_a_student_who_has_lately_got_it_beats_one_who_has_lost_it():
    got_it, lost_it = ["wrong"] * 3 + ["right"] * 3, ["right"] * 3 + ["wrong"] * 3
    prior = _table_with(MODEL_RECENT).for_student(1, {})
    assert (
        rules.derive(_daily(lost_it), prior).p_right < rules.derive(_daily(got_it), prior).p_right
    )
    # Without R's weight only the counts speak, and they are the same.
    plain = _table_with(MODEL).for_student(1, {})
    assert rules.derive(_daily(lost_it), plain).p_right == pytest.approx(
        rules.derive(_daily(got_it), plain).p_right
    )


def test_decay_under_a_learning_model_moves_towards_its_prior_without_flipping():
    prior = _table_with(MODEL).for_student(1, {})
    derived = rules.derive([rules.CheckPoint(i, T0 + days(i), "right") for i in range(20)], prior)
    assert derived.claim == "understands"
    decayed = rules.decayed_p_right(
        p_right=derived.p_right, prior_mean=prior.mean, claim="understands"
    )
    assert prior.mean < 0.5 < decayed < derived.p_right


def _sitting_forecasts(histories, model, starts_of):
    """Each check counted by `starts_of` (the TrainingRows field naming, per check, the
    row its sitting began at), the fitted logit as that sitting began (before
    recalibration), the check's outcome, and the features at the sitting's start."""
    rows = learning.training_rows(histories, model.means, model.rate)
    counted = np.flatnonzero(getattr(rows, starts_of) >= 0)
    starts = getattr(rows, starts_of)[counted]
    coefficients = np.array([model.wins, model.fails, model.level, model.recent])
    offsets = np.array([model.offsets[rows.concepts[i]] for i in starts])
    logits = model.intercept + offsets + rows.features[starts] @ coefficients
    return logits, rows.outcomes[counted], rows.features[starts]


def test_a_beliefs_logit_is_recalibrated_on_the_answers_of_the_sittings_that_came_later():
    # Learners who lose what they knew between sittings and practise until three right
    # in a row: what a sitting's practice shows runs ahead of the next sitting.
    setting = replace(SETTINGS["knowledge-mastery"], students=120, concepts=8)
    histories = _histories(simulate(5, setting))
    model = learning.fit(histories)
    logits, outcomes, _ = _sitting_forecasts(histories, model, "sitting_start")
    assert len(outcomes) > 1000
    raw = 1.0 / (1.0 + np.exp(-logits))
    calibrated = 1.0 / (1.0 + np.exp(-(model.shift + model.scale * logits)))
    # The fitted logit spreads the students too far; recalibrated, the forecasts of the
    # later sittings are right on average and closer answer by answer.
    assert model.scale < 0.8
    assert abs(raw.mean() - outcomes.mean()) > 0.01
    assert abs(calibrated.mean() - outcomes.mean()) < 0.002
    assert np.mean((calibrated - outcomes) ** 2) < np.mean((raw - outcomes) ** 2)


def test_students_who_never_come_back_to_a_concept_leave_a_beliefs_logit_uncalibrated():
    # The same learners with every check a minute after the one before: one sitting each.
    histories = {
        student: [replace(r, occurred_at=T0 + days(i / 1440)) for i, r in enumerate(rows)]
        for student, rows in _histories(simulate(5, SMALL)).items()
    }
    model = learning.fit(histories)
    assert model is not None and (model.shift, model.scale) == (0.0, 1.0)


def test_the_prior_of_an_unchecked_concept_is_recalibrated_on_the_answers_of_first_sittings():
    # Learners who practise a concept until three right in a row: the fit learns the
    # first answer, but the rest of that first sitting runs well above it.
    setting = replace(SETTINGS["mastery"], students=120, concepts=8)
    histories = _histories(simulate(5, setting))
    model = learning.fit(histories)
    logits, outcomes, features = _sitting_forecasts(histories, model, "first_sitting_start")
    assert np.all(features[:, :2] == 0.0)  # no practice before a first answer
    assert len(outcomes) > 1000
    raw = 1.0 / (1.0 + np.exp(-logits))
    calibrated = 1.0 / (1.0 + np.exp(-(model.prior_shift + model.prior_scale * logits)))
    assert model.prior_shift > 0.2
    assert abs(raw.mean() - outcomes.mean()) > 0.05
    assert abs(calibrated.mean() - outcomes.mean()) < 0.002
    prior = _table_with(model).for_student(1, {})
    assert prior.mean == pytest.approx(learning.sigmoid(model.prior_logit(1, {})))


def test_the_belief_recalibration_moves_a_beliefs_p_right_but_not_the_prior_of_an_unchecked_concept():
    model = replace(MODEL, shift=0.4, scale=0.5)
    prior = _table_with(model).for_student(1, {})
    assert prior.mean == pytest.approx(learning.sigmoid(-1.2))
    derived = rules.derive([rules.CheckPoint(1, T0, "right")], prior)
    logit = learning.practice_logit(1, 0, -1.2, model.wins, model.fails)
    assert derived.p_right == round(learning.sigmoid(0.4 + 0.5 * logit), 2)
    assert derived.p_right != round(learning.sigmoid(logit), 2)


def test_the_prior_recalibration_moves_the_prior_but_not_a_beliefs_practice_term():
    model = replace(MODEL, prior_shift=0.4, prior_scale=0.5)
    prior = _table_with(model).for_student(1, {})
    assert prior.mean == pytest.approx(learning.sigmoid(0.4 + 0.5 * -1.2))
    derived = rules.derive([rules.CheckPoint(1, T0, "right")], prior)
    logit = learning.practice_logit(1, 0, -1.2, model.wins, model.fails)
    assert derived.p_right == round(learning.sigmoid(logit), 2)


def test_a_fit_stored_before_the_recalibrations_reads_as_uncalibrated():
    stored = MODEL.as_json()
    del stored["shift"], stored["scale"], stored["prior_shift"], stored["prior_scale"]
    read = learning.LearningModel.from_json(stored)
    assert (read.shift, read.scale) == (0.0, 1.0)
    assert (read.prior_shift, read.prior_scale) == (0.0, 1.0)
    assert read == MODEL


# --- Through the database ------------------------------------------------------------


def _class_that_learns(pair, derive, *, students: int = 24):
    """Classmates who answer Osmosis wrong at first and right after some practice, and
    Diffusion mostly right: practice visibly helps."""
    for name in ("Osmosis", "Diffusion"):
        make_concept(pair.subject, name)
    org = pair.subject.organization
    for i in range(students):
        mate = pair_get_or_create(
            student=student_get_or_create(organization=org, external_id=f"mate-{i}"),
            subject=pair.subject,
        )
        first_right = 1 + i % 4
        for k in range(6):
            verdict = "right" if k >= first_right else "wrong"
            derive(mate, topic="Osmosis", verdict=verdict, at=T0 + days(k))
        for k in range(4):
            derive(
                mate, topic="Diffusion", verdict="wrong" if k == i % 5 else "right", at=T0 + days(k)
            )


@pytest.mark.django_db
def test_the_nightly_fit_is_stored_and_the_next_derivation_uses_it(pair, derive):
    _class_that_learns(pair, derive)
    fit = beliefs_fit_learning(subject_id=pair.subject_id, now=T0 + days(10))
    assert fit is not None and fit.checks == 24 * 10 and fit.students == 24
    model = learning_model_latest(subject_id=pair.subject_id)
    assert model == learning.LearningModel.from_json(fit.coefficients)
    # Here a student right once is right from then on: what the last sittings show
    # (R) carries the practice, whatever the counts' own weights.
    assert model.recent > 0

    derive(pair, topic="Osmosis", verdict="right", at=T0 + days(20))
    derive(pair, topic="Osmosis", verdict="right", at=T0 + days(21))
    belief = beliefs_current(pair=pair)[0]
    prior = concept_priors(subject_id=pair.subject_id, exclude_pair_id=pair.pk).for_student(
        belief.concept_id, {}
    )
    # Derived by the model: no Beta strength, the model's prior before practice, and the
    # model's prediction after two right answers.
    assert belief.prior_strength is None
    assert belief.prior_right == pytest.approx(prior.mean)
    expected = learning.sigmoid(
        model.shift
        + model.scale
        * learning.practice_logit(
            2,
            0,
            prior.practice.base_logit,
            model.wins,
            model.fails,
            learning.recent_share([(1, 1), (1, 1)]),  # two sittings, a day apart
            model.recent,
        )
    )
    assert belief.p_right == pytest.approx(expected, abs=0.005)
    assert belief.p_right > belief.prior_right


@pytest.mark.django_db
def test_a_subject_with_too_little_data_gets_no_fit_and_keeps_the_beta_posterior(pair, derive):
    _class_that_learns(pair, derive, students=5)
    assert beliefs_fit_learning(subject_id=pair.subject_id) is None
    assert not BeliefLearningFit.objects.exists()
    derive(pair, topic="Osmosis", verdict="right", at=T0 + days(20))
    assert beliefs_current(pair=pair)[0].prior_strength is not None


@pytest.mark.django_db
def test_a_fit_row_is_never_changed(pair, derive):
    _class_that_learns(pair, derive)
    fit = beliefs_fit_learning(subject_id=pair.subject_id, now=T0 + days(10))
    fit.checks = 1
    with pytest.raises(ImmutableRecordError):
        fit.save()


@pytest.mark.django_db
def test_the_night_fits_every_subjects_learning_model_before_the_pairs_cycles(pair, derive):
    _class_that_learns(pair, derive)
    fan = cycle.night_run(day=(T0 + days(10)).date(), enqueue=lambda pair_id, day: None)
    assert fan.learning_fits == 1
    assert BeliefLearningFit.objects.filter(subject=pair.subject).count() == 1


@pytest.mark.django_db
def test_a_subjects_first_fit_rederives_the_beliefs_derived_before_it(pair, derive):
    # An imported history: every belief was derived live, before the subject had a fit.
    _class_that_learns(pair, derive)
    before = Belief.objects.current().filter(pair__subject=pair.subject)
    assert before.count() == 48 and all(b.prior_strength is not None for b in before)

    fan = cycle.night_run(day=(T0 + days(10)).date())

    assert fan.learning_fits == 1 and fan.rederived_pairs == 24
    assert BeliefLearningFit.objects.get(subject=pair.subject).rederives
    after = list(Belief.objects.current().filter(pair__subject=pair.subject))
    assert len(after) == 48
    # Derived by the model now: no Beta strength, a re-derivation the log says was nightly.
    assert all(b.prior_strength is None for b in after)
    assert all(b.reason == Belief.Reason.REDERIVATION for b in after)
    assert Rederivation.objects.filter(source=Rederivation.Source.NIGHTLY).count() == 24


@pytest.mark.django_db
def test_a_later_fit_rederives_only_once_the_subjects_checks_have_doubled(
    pair, derive, django_capture_on_commit_callbacks
):
    _class_that_learns(pair, derive)
    first = beliefs_fit_learning(subject_id=pair.subject_id, now=T0 + days(10))
    same = beliefs_fit_learning(subject_id=pair.subject_id, now=T0 + days(11))
    assert first.rederives and not same.rederives
    assert beliefs_rederive_after_fits(fits=[same], now=T0 + days(11)) == []
    org = pair.subject.organization
    for i in range(24):  # another 24 students' ten checks each: 240 more, 480 in all
        mate = pair_get_or_create(
            student=student_get_or_create(organization=org, external_id=f"late-{i}"),
            subject=pair.subject,
        )
        events = [
            EventSpec(
                kind="check",
                summary="check",
                topic="Osmosis" if k % 2 else "Diffusion",
                verdict="right" if k > 2 else "wrong",
                occurred_at=T0 + days(12 + k),
            )
            for k in range(10)
        ]
        with django_capture_on_commit_callbacks(execute=True):
            episode_append_batch(pair=mate, events=events, embed=False)
    doubled = beliefs_fit_learning(subject_id=pair.subject_id, now=T0 + days(30))
    assert doubled.checks == 2 * first.checks and doubled.rederives
    assert len(beliefs_rederive_after_fits(fits=[doubled], now=T0 + days(30))) == 48


@pytest.mark.django_db
def test_the_first_fit_under_new_rules_rederives_the_subject_once(pair, derive, monkeypatch):
    _class_that_learns(pair, derive)
    assert beliefs_fit_learning(subject_id=pair.subject_id, now=T0 + days(10)).rederives
    monkeypatch.setattr(rules, "RULES_VERSION", "an-upgrade")
    upgraded = beliefs_fit_learning(subject_id=pair.subject_id, now=T0 + days(11))
    again = beliefs_fit_learning(subject_id=pair.subject_id, now=T0 + days(12))
    assert upgraded.rederives and upgraded.rules_version == "an-upgrade"
    assert not again.rederives
    assert len(beliefs_rederive_after_fits(fits=[upgraded], now=T0 + days(11))) == 24


@pytest.mark.django_db
def test_with_the_celery_fan_out_the_nights_rederivation_is_queued_after_commit(
    pair, derive, django_capture_on_commit_callbacks
):
    _class_that_learns(pair, derive)
    with django_capture_on_commit_callbacks() as callbacks:
        fan = cycle.night_run(day=(T0 + days(10)).date(), enqueue=lambda pair_id, day: None)
    assert fan.rederived_pairs == 24
    queued = [c for c in callbacks if getattr(c, "keywords", {}).get("source") == "nightly"]
    assert sorted(i for c in queued for i in c.keywords["pair_ids"]) == sorted(
        Belief.objects.current()
        .filter(pair__subject=pair.subject)
        .values_list("pair_id", flat=True)
        .distinct()
    )
    # Nothing was re-derived in the night's own process.
    assert not Rederivation.objects.exists()


@pytest.mark.django_db
def test_a_rederived_and_decayed_belief_under_a_learning_model_keeps_its_claim(pair, derive):
    _class_that_learns(pair, derive)
    beliefs_fit_learning(subject_id=pair.subject_id, now=T0 + days(10))
    for k in range(5):
        derive(pair, topic="Osmosis", verdict="right", at=T0 + days(20 + k))
    beliefs_rederive(pair=pair, now=T0 + days(30))
    belief = beliefs_current(pair=pair)[0]
    assert belief.reason == Belief.Reason.REDERIVATION and belief.prior_strength is None
    decayed = belief_decay(belief=belief, now=T0 + days(90))
    assert decayed.claim == belief.claim
    low, high = sorted((belief.p_right, decayed.prior_right))
    assert low - 0.005 <= decayed.p_right <= high + 0.005


@pytest.mark.django_db
def test_the_timeline_says_a_prior_came_from_the_learning_model(client, admin_user, pair, derive):
    _class_that_learns(pair, derive)
    beliefs_fit_learning(subject_id=pair.subject_id, now=T0 + days(10))
    derive(pair, topic="Osmosis", verdict="right", at=T0 + days(20))
    belief = beliefs_current(pair=pair)[0]
    client.force_login(admin_user)
    page = client.get(reverse("admin:beliefs_belief_change", args=[belief.pk])).content.decode()
    assert f"p_right {belief.p_right:.2f} (prior {belief.prior_right:.2f}, before practice" in page


@pytest.mark.django_db
def test_staff_see_the_learning_fits_in_the_admin(client, admin_user, pair, derive):
    _class_that_learns(pair, derive)
    fit = beliefs_fit_learning(subject_id=pair.subject_id, now=T0 + days(10))
    client.force_login(admin_user)
    listing = client.get(reverse("admin:beliefs_belieflearningfit_changelist"))
    assert listing.status_code == 200 and str(fit.checks) in listing.content.decode()
    page = client.get(reverse("admin:beliefs_belieflearningfit_change", args=[fit.pk]))
    assert page.status_code == 200 and "&quot;wins&quot;" in page.content.decode()


@pytest.mark.django_db
def test_a_bulk_supersession_of_an_already_superseded_belief_writes_nothing(pair, derive):
    from beliefs.services import _set_successors

    make_concept(pair.subject, "Osmosis")
    derive(pair, topic="Osmosis", verdict="wrong", at=T0)
    derive(pair, topic="Osmosis", verdict="right", at=T0 + days(1))
    old, new = Belief.objects.filter(pair=pair).order_by("pk")[:2]
    assert old.superseded_by_id == new.pk and new.superseded_by_id is None
    other = Belief.objects.create(
        pair=pair,
        concept=make_concept(pair.subject, "Diffusion"),
        claim="struggles",
        confidence=0.5,
        reason=Belief.Reason.RETIREMENT,
        check_count=0,
        created_at=T0 + days(2),
    )
    with pytest.raises(RuntimeError, match="already superseded"):
        _set_successors([(new.pk, other.pk), (old.pk, other.pk)])
    new.refresh_from_db()
    assert new.superseded_by_id is None
