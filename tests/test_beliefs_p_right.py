"""R-4.1 / R-7.2: p_right is a predicted chance of a right answer that leans on the other
students (empirical Bayes), is order-insensitive within a session, and decays towards the
concept's prior without crossing it or flipping the claim."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from beliefs import rules
from beliefs.selectors import beliefs_current, concept_priors
from beliefs.services import belief_decay, beliefs_rederive
from memory.services import pair_get_or_create, student_get_or_create
from tests.beliefs_helpers import T0, days, make_concept
from tutorbrain.block.build import memory_block_build


def _classmates(pair, count: int):
    org = pair.subject.organization
    return [
        pair_get_or_create(
            student=student_get_or_create(organization=org, external_id=f"mate-{i}"),
            subject=pair.subject,
        )
        for i in range(count)
    ]


def _hard_concept_history(pair, derive, *, name="Osmosis", students=30):
    """Thirty classmates: each answers the concept 4 times, 1 right (and a few 2)."""
    make_concept(pair.subject, name)
    for i, mate in enumerate(_classmates(pair, students)):
        rights = 2 if i % 5 == 0 else 1
        for k in range(4):
            derive(mate, topic=name, verdict="right" if k < rights else "wrong", at=T0 + days(k))


def _mixed_concept_history(pair, derive, *, name, right_share):
    """Twenty classmates who differ: a share of them always right, the others never."""
    make_concept(pair.subject, name)
    mates = _classmates(pair, 20)
    for i, mate in enumerate(mates):
        verdict = "right" if i < right_share * len(mates) else "wrong"
        for k in range(4):
            derive(mate, topic=name, verdict=verdict, at=T0 + days(k))


def test_one_right_answer_gives_p_right_near_the_concepts_prior_not_one(pair, derive):
    _hard_concept_history(pair, derive)
    prior = concept_priors(subject_id=pair.subject_id, exclude_pair_id=pair.pk)
    osmosis = prior.for_concept(beliefs_current(pair=_classmates(pair, 1)[0])[0].concept_id)
    # The classmates get it right 30 % of the time.
    assert osmosis.mean == pytest.approx(0.30, abs=0.03)

    derive(pair, topic="Osmosis", verdict="right", at=T0 + days(10))

    [belief] = beliefs_current(pair=pair)
    assert belief.p_right < 0.5 and belief.p_right != 1.0
    assert abs(belief.p_right - osmosis.mean) < 0.2
    assert belief.prior_right == pytest.approx(osmosis.mean, abs=0.01)
    # One right answer on a concept most students miss is not "understands".
    assert (belief.claim, belief.confidence) == ("struggles", round(1 - belief.p_right, 2))


def test_the_prior_strength_is_estimated_from_how_much_students_differ(pair, derive):
    make_concept(pair.subject, "Same")
    make_concept(pair.subject, "Split")
    for mate in _classmates(pair, 24):
        for k in range(6):
            # "Same": everyone right half of the time. "Split": half always, half never.
            derive(mate, topic="Same", verdict="right" if k % 2 else "wrong", at=T0 + days(k))
    alike = concept_priors(subject_id=pair.subject_id).strength
    for i, mate in enumerate(_classmates(pair, 24)):
        for k in range(6):
            derive(mate, topic="Split", verdict="right" if i % 2 else "wrong", at=T0 + days(k))
    split = concept_priors(subject_id=pair.subject_id).strength
    # Identical students: the prior is worth a lot; very different students: little.
    assert alike == rules.PRIOR_STRENGTH_MAX
    assert split < 5


@pytest.mark.parametrize("first", ["right", "wrong"])
def test_two_checks_a_minute_apart_in_either_order_give_the_same_belief(pair, derive, first):
    make_concept(pair.subject, "Osmosis")
    second = "wrong" if first == "right" else "right"
    derive(pair, topic="Osmosis", verdict=first, at=T0)
    derive(pair, topic="Osmosis", verdict=second, at=T0 + days(1 / 1440))
    [belief] = beliefs_current(pair=pair)
    assert (belief.claim, belief.p_right, belief.confidence) == ("struggles", 0.5, 0.5)


def test_checks_minutes_apart_weigh_the_same_in_any_order():
    times = [T0, T0 + days(2 / 1440), T0 + days(9 / 1440), T0 + days(40)]
    verdicts = ["wrong", "right", "partial", "right"]
    forward = [
        rules.CheckPoint(i, t, v) for i, (t, v) in enumerate(zip(times, verdicts, strict=True))
    ]
    # The same session, its verdicts in another order.
    swapped = [
        rules.CheckPoint(i, t, v)
        for i, (t, v) in enumerate(zip(times, verdicts[2::-1] + verdicts[3:], strict=True))
    ]
    assert rules.derive(forward).p_right == rules.derive(swapped).p_right


@given(
    p_right=st.floats(0, 1),
    prior=st.floats(0, 1),
)
def test_decay_never_crosses_the_prior_nor_flips_the_claim(p_right, prior):
    p = rules.round_probability(p_right)
    claim = rules.claim_of(p)
    decayed = rules.decayed_p_right(p_right=p, prior_mean=prior, claim=claim)
    assert rules.claim_of(decayed) == claim
    # Between where it was and the prior (rounded to the stored precision), or held at
    # the claim's edge of the threshold when the prior is across it.
    low, high = sorted((p, rules.round_probability(prior)))
    assert low - 0.005 <= decayed <= high + 0.005
    assert abs(decayed - prior) <= abs(p - prior) + 0.005


def test_a_decayed_belief_moves_towards_the_classmates_prior_and_keeps_its_claim(pair, derive):
    _mixed_concept_history(pair, derive, name="Osmosis", right_share=0.3)
    for k in range(3):
        derive(pair, topic="Osmosis", verdict="right", at=T0 + days(10 + k))
    [belief] = beliefs_current(pair=pair)
    assert belief.claim == "understands"
    decayed = belief_decay(belief=belief, now=T0 + days(60))
    assert decayed.claim == "understands"
    assert decayed.prior_right < decayed.p_right < belief.p_right
    expected = belief.p_right + rules.DECAY_SHARE * (decayed.prior_right - belief.p_right)
    assert decayed.p_right == pytest.approx(max(expected, 0.51), abs=0.006)


def test_a_struggles_belief_decays_up_towards_an_easy_concepts_prior(pair, derive):
    _mixed_concept_history(pair, derive, name="Easy", right_share=0.8)
    for k in range(4):
        derive(pair, topic="Easy", verdict="wrong", at=T0 + days(10 + k))
    [belief] = beliefs_current(pair=pair)
    assert belief.claim == "struggles"
    decayed = belief_decay(belief=belief, now=T0 + days(60))
    # The implied chance of a right answer rises towards the prior; "struggles" less sure.
    assert decayed.claim == "struggles"
    assert decayed.p_right > belief.p_right and decayed.confidence < belief.confidence


def test_p_right_is_on_the_block_belief_line(pair, derive):
    make_concept(pair.subject, "Osmosis")
    derive(pair, topic="Osmosis", verdict="wrong", at=T0)
    block = memory_block_build(
        organization=pair.subject.organization,
        student_external_id=pair.student.external_id,
        subject_external_id=pair.subject.external_id,
        message="what is osmosis",
        now=T0 + days(1),
        budget=900,
    )
    assert "- struggles with Osmosis (0.60, p_right 0.40)" in block.text
    assert "p_right = chance they get the next check on it right" in block.text


def test_rederivation_gives_every_current_belief_a_p_right_and_touches_no_episode(pair, derive):
    _hard_concept_history(pair, derive, students=3)
    derive(pair, topic="Osmosis", verdict="right", at=T0)
    beliefs_rederive(pair=pair, now=T0 + days(1))
    [belief] = beliefs_current(pair=pair)
    assert belief.reason == "rederivation" and belief.p_right is not None
    assert belief.right_count == 1.0 and belief.check_count == 1


def test_each_check_is_paired_with_the_p_right_of_the_belief_that_stood_before_it(pair, derive):
    from beliefs.calibration import belief_predictions

    make_concept(pair.subject, "Osmosis")
    derive(pair, topic="Osmosis", verdict="wrong", at=T0)
    derive(pair, topic="Osmosis", verdict="right", at=T0 + days(1))
    [belief] = beliefs_current(pair=pair)
    decayed = belief_decay(belief=belief, now=T0 + days(50))
    derive(pair, topic="Osmosis", verdict="right", at=T0 + days(51))
    # The first check had nothing before it; the second followed "0.40", the third the
    # decayed row (what the block showed then).
    assert belief_predictions(pair=pair) == [(0.4, "right"), (decayed.p_right, "right")]
    assert belief_predictions(pair=pair, before=T0 + days(51)) == [(0.4, "right")]


def test_the_weight_of_a_students_level_is_estimated_from_how_much_levels_differ():
    concepts = range(1, 6)
    # Students whose levels really differ: half right on everything, half wrong.
    differ = [(pair, c, 4.0 if pair % 2 else 0.0, 4) for pair in range(40) for c in concepts]
    # Students alike: each concept's answers are a coin toss for everyone (2 of 4).
    alike = [(pair, c, 2.0, 4) for pair in range(40) for c in concepts]
    assert rules.priors_from_rows(alike).ability_checks is None
    strong = rules.priors_from_rows(differ).ability_checks
    assert strong == rules.ABILITY_PSEUDO_CHECKS_MIN
    # With no shift, a student's other concepts do not move the prior.
    table = rules.priors_from_rows(alike)
    assert table.for_student(1, {2: (4.0, 4), 3: (4.0, 4)}) == table.for_concept(1)
    # With few students, the default weight.
    assert rules.priors_from_rows(differ[:50]).ability_checks == rules.ABILITY_PSEUDO_CHECKS
