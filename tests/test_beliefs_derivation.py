"""R-4.1/R-4.4: checks become beliefs after they commit, routed by exact name; utterances
stay evidence; supersession only when the claim or the rounded p_right changes."""

from __future__ import annotations

import pytest

from beliefs import rules
from beliefs.models import Belief, BeliefEvidence
from beliefs.routing import Route, reads_like_utterance, route_check, strip_frame
from beliefs.selectors import belief_chain, beliefs_current, beliefs_due_for_decay
from beliefs.services import belief_decay, beliefs_derive_from_checks
from concepts.models import READINESS_CONFIRMED, Concept
from memory.models import Episode
from tests.beliefs_helpers import T0, days, make_concept

UTTERANCES = [
    "ask me the questions",
    "bueno ahora explícame todos los pasos",
    "pode repetir a pergunta",
    "explique-moi encore",
    "اشرح لي مرة أخرى",
]


@pytest.mark.parametrize("utterance", UTTERANCES)
def test_an_utterance_topic_is_kept_as_evidence_and_never_becomes_a_belief(pair, derive, utterance):
    osmosis = make_concept(pair.subject, "Osmosis")
    make_concept(pair.subject, "Cell")
    # Even when the tutor's assessment names a concept of the map.
    episode = derive(
        pair,
        topic=utterance,
        verdict="wrong",
        assessment="The student could not describe osmosis across the cell membrane.",
    )
    assert Episode.objects.filter(pk=episode.pk, topic=utterance).exists()
    assert Belief.objects.filter(pair=pair).count() == 0
    assert not BeliefEvidence.objects.filter(episode=episode).exists()
    routing = route_check(subject=pair.subject, topic=utterance, assessment="osmosis")
    assert routing.route == Route.UTTERANCE and routing.concept is None
    osmosis.refresh_from_db()
    assert not osmosis.confirmed_by_check


def test_a_framed_topic_check_on_cytoplasm_becomes_a_belief_on_cytoplasm(pair, derive):
    cytoplasm = make_concept(pair.subject, "Cytoplasm")
    episode = derive(pair, topic="Check on cytoplasm", verdict="right")
    [belief] = beliefs_current(pair=pair)
    assert belief.concept == cytoplasm
    # One right answer with nobody else's data: the default prior (0.5, worth 4 checks).
    assert (belief.claim, belief.confidence, belief.reason) == ("understands", 0.6, "evidence")
    assert belief.p_right == 0.6
    assert list(belief.evidence.all()) == [episode]
    assert belief.check_count == 1 and belief.last_evidence_at == episode.occurred_at


@pytest.mark.parametrize(
    ("topic", "rest"),
    [
        ("Check on cytoplasm", "cytoplasm"),
        ("Quiz: Cell membrane", "Cell membrane"),
        ("Pregunta sobre la ósmosis", "la ósmosis"),
        ("Question sur l'osmose", "l'osmose"),
        ("سؤال عن الخلية", "الخلية"),
        ("Osmosis", None),
    ],
)
def test_check_topic_frames_of_each_language_are_stripped_in_the_original_spelling(topic, rest):
    assert strip_frame(topic) == rest


def test_a_phrase_topic_is_routed_by_the_assessment_that_names_osmosis(pair, derive):
    osmosis = make_concept(pair.subject, "Osmosis")
    make_concept(pair.subject, "Membrane potential")
    derive(
        pair,
        topic="water moving through a membrane",
        verdict="wrong",
        assessment="Mixed up the direction of Osmosis: thinks water moves to the dilute side.",
    )
    [belief] = beliefs_current(pair=pair)
    assert belief.concept == osmosis
    assert (belief.claim, belief.confidence, belief.p_right) == ("struggles", 0.6, 0.4)
    routing = route_check(
        subject=pair.subject,
        topic="water moving through a membrane",
        assessment="Mixed up the direction of Osmosis.",
    )
    assert routing.route == Route.ASSESSMENT


def test_a_topic_that_names_nothing_stays_unlinked(pair, derive):
    make_concept(pair.subject, "Osmosis")
    derive(pair, topic="Photosynthesis", verdict="right", assessment="Good work on light.")
    assert Belief.objects.count() == 0
    assert (
        route_check(subject=pair.subject, topic="Photosynthesis", assessment="").route
        == Route.UNLINKED
    )


def test_a_phrase_topic_is_routed_by_its_leading_name_never_by_a_name_further_in(pair):
    osmosis = make_concept(pair.subject, "Osmosis")
    osmose = make_concept(pair.subject, "Osmose")
    for generic in ["Power", "Cell", "Oxidación", "ATP"]:
        make_concept(pair.subject, generic)
    for topic, concept, used in [
        ("osmosis in plant cells", osmosis, "osmosis"),
        ("the osmosis of water", osmosis, "osmosis"),
        ("l'osmose dans les plantes", osmose, "l'osmose"),
    ]:
        routing = route_check(subject=pair.subject, topic=topic)
        assert (routing.route, routing.concept, routing.topic_used) == (
            Route.TOPIC_PHRASE, concept, used,
        ), topic  # fmt: skip
    # A map's generic names inside a phrase are not what the check was about.
    for topic in ["separation of powers", "cell division", "estado de oxidación", "role of ATP"]:
        routing = route_check(subject=pair.subject, topic=topic)
        assert routing.concept is None, topic


def test_utterance_detection_keeps_real_topics_as_topics():
    for topic in ["water moving through a membrane", "Ley de Ohm", "O ciclo da água", "الخلية"]:
        assert not reads_like_utterance(topic), topic
    for topic in [*UTTERANCES, "what is osmosis", "explain photosynthesis again"]:
        assert reads_like_utterance(topic), topic


def test_a_change_of_mind_supersedes_and_keeps_the_old_row_as_it_was(pair, derive):
    make_concept(pair.subject, "Osmosis")
    derive(pair, topic="Osmosis", verdict="wrong", at=T0)
    first = Belief.objects.get()
    derive(pair, topic="Osmosis", verdict="right", at=T0 + days(1))
    derive(pair, topic="Osmosis", verdict="right", at=T0 + days(2))
    chain = belief_chain(belief=first)
    assert [(b.claim, b.confidence, b.p_right) for b in chain] == [
        ("struggles", 0.6, 0.4),
        ("struggles", 0.5, 0.5),
        ("understands", 0.57, 0.57),
    ]
    assert [b.check_count for b in chain] == [1, 2, 3]
    assert chain[0].superseded_by_id == chain[1].pk and chain[1].superseded_by_id == chain[2].pk
    assert [b.pk for b in beliefs_current(pair=pair)] == [chain[2].pk]
    # The first row is exactly as written.
    assert Belief.objects.get(pk=first.pk).confidence == 0.6


def test_a_check_that_changes_nothing_rounded_is_linked_without_a_new_row(pair, derive):
    make_concept(pair.subject, "Osmosis")
    for _ in range(30):
        derive(pair, topic="Osmosis", verdict="right", at=T0)
    rows_before = Belief.objects.count()
    head = beliefs_current(pair=pair)[0]
    # (2 + 30) / (4 + 30) = 0.941; one more right: 33 / 35 = 0.943, the same rounded.
    assert head.p_right == 0.94
    next_one = derive(pair, topic="Osmosis", verdict="right", at=T0)
    assert Belief.objects.count() == rows_before
    assert BeliefEvidence.objects.filter(belief=head, episode=next_one).exists()


def test_derivation_is_idempotent_for_a_check_already_behind_the_belief(pair, derive):
    make_concept(pair.subject, "Osmosis")
    episode = derive(pair, topic="Osmosis", verdict="right")
    result = beliefs_derive_from_checks(pair=pair, episode_ids=[episode.pk], now=T0)
    assert result.already_counted == 1
    assert Belief.objects.count() == 1


def test_a_passed_check_lifts_the_concept_to_the_confirmed_readiness_band(pair, derive):
    concept = make_concept(pair.subject, "Cytoplasm")
    derive(pair, topic="Cytoplasm", verdict="wrong")
    concept.refresh_from_db()
    assert not concept.confirmed_by_check
    derive(pair, topic="Cytoplasm", verdict="right", at=T0 + days(1))
    concept = Concept.objects.get(pk=concept.pk)
    assert concept.confirmed_by_check
    assert concept.readiness == pytest.approx(READINESS_CONFIRMED)


def test_decay_moves_15_percent_towards_the_prior_and_the_next_check_clears_the_flag(pair, derive):
    make_concept(pair.subject, "Osmosis")
    derive(pair, topic="Osmosis", verdict="right", at=T0)
    derive(pair, topic="Osmosis", verdict="right", at=T0)
    head = beliefs_current(pair=pair)[0]
    assert head.p_right == 0.67
    now = T0 + days(rules.BELIEF_DECAY_AFTER_DAYS)
    assert [b.pk for b in beliefs_due_for_decay(now=now)] == [head.pk]
    assert beliefs_due_for_decay(now=now - days(1)) == []
    decayed = belief_decay(belief=head, now=now)
    # 0.67 + 0.15 × (0.5 − 0.67) = 0.6445: the prior is the default 0.5 (no other student).
    assert (decayed.reason, decayed.p_right, decayed.confidence, decayed.needs_confirmation) == (
        "decay",
        0.64,
        0.64,
        True,
    )
    assert decayed.prior_right == 0.5
    assert set(decayed.evidence.all()) == set(head.evidence.all())
    assert beliefs_due_for_decay(now=now + days(1)) == []
    # The next check confirms it: a new row without the flag, even though a check at the
    # same confidence would otherwise change nothing.
    derive(pair, topic="Osmosis", verdict="right", at=now)
    newest = beliefs_current(pair=pair)[0]
    assert newest.reason == "evidence" and not newest.needs_confirmation
    assert newest.check_count == 3
    assert [b.reason for b in belief_chain(belief=head)] == [
        "evidence",
        "evidence",
        "decay",
        "evidence",
    ]


def test_a_recent_check_weighs_more_than_an_old_one():
    old_wrong_new_right = rules.derive(
        [
            rules.CheckPoint(1, T0, "wrong"),
            rules.CheckPoint(2, T0 + days(90), "right"),
        ]
    )
    old_right_new_wrong = rules.derive(
        [
            rules.CheckPoint(1, T0, "right"),
            rules.CheckPoint(2, T0 + days(90), "wrong"),
        ]
    )
    assert old_wrong_new_right.claim == "understands"
    assert old_right_new_wrong.claim == "struggles"
    # The same two checks at one time balance out: the claim is "struggles", at 0.5.
    balanced = rules.derive([rules.CheckPoint(1, T0, "right"), rules.CheckPoint(2, T0, "wrong")])
    assert (balanced.claim, balanced.confidence) == ("struggles", 0.5)


def test_the_router_matches_names_as_the_concept_maps_own_selectors_do(pair):
    from beliefs.routing import ConceptRouter
    from concepts.selectors import concept_by_name, concept_find_named_in

    osmosis = make_concept(pair.subject, "Osmosis")
    Concept.objects.filter(pk=osmosis.pk).update(aliases=["osmose", "osmosis process"])
    make_concept(pair.subject, "Cell membrane")
    make_concept(pair.subject, "Cell")
    router = ConceptRouter(pair.subject)
    for name in ["Osmosis", "l'osmose", "OSMOSE", "the cell membrane", "cell", "Ribosome"]:
        assert router.by_name(name) == concept_by_name(subject=pair.subject, name=name), name
    for text in [
        "Water crossed the cell membrane by osmosis.",
        "La osmose explique tout.",
        "Nothing about it here.",
        "cells and more cells",
    ]:
        expected = concept_find_named_in(subject=pair.subject, text=text)
        assert router.named_in(text) == expected, text


def test_a_failing_derivation_is_logged_and_the_check_stays_stored(
    pair, derive, monkeypatch, caplog
):
    make_concept(pair.subject, "Osmosis")

    def broken(points, prior=None):
        raise RuntimeError("rule exploded")

    monkeypatch.setattr(rules, "derive", broken)
    episode = derive(pair, topic="Osmosis", verdict="right")
    assert Episode.objects.filter(pk=episode.pk).exists()
    assert Belief.objects.count() == 0
    assert "belief derivation failed" in caplog.text and "rule exploded" in caplog.text


def test_current_beliefs_list_struggles_first_then_the_most_confident(pair, derive):
    for name in ("Cell", "Osmosis", "Diffusion"):
        make_concept(pair.subject, name)
    derive(pair, topic="Cell", verdict="right", at=T0)
    derive(pair, topic="Osmosis", verdict="wrong", at=T0 + days(1))
    derive(pair, topic="Diffusion", verdict="right", at=T0 + days(2))
    derive(pair, topic="Diffusion", verdict="right", at=T0 + days(3))

    rows = beliefs_current(pair=pair)

    assert [b.claim for b in rows] == ["struggles", "understands", "understands"]
    assert rows[0].concept.name == "Osmosis"
    assert rows[1].confidence >= rows[2].confidence
