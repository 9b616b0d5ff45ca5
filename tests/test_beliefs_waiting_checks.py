"""R-4.4 over time: a check whose concept the map did not hold yet becomes a belief the
night the map gains it (a file read or a concept taught), by a re-derivation."""

from __future__ import annotations

from beliefs.models import Belief, BeliefEvidence, Rederivation
from beliefs.selectors import beliefs_current
from concepts.services import map_recompute
from tests.beliefs_helpers import T0, days, make_concept
from tutorbrain.nightly import cycle


def _map_gains(subject, name, at):
    concept = make_concept(subject, name)
    map_recompute(subject=subject, now=at)
    return concept


def test_a_check_the_map_could_not_route_becomes_a_belief_the_night_it_gains_the_concept(
    pair, derive
):
    _map_gains(pair.subject, "Power", T0)
    check = derive(pair, topic="separation of powers", verdict="right", at=T0 + days(0.1))
    assert not Belief.objects.filter(pair=pair).exists()  # not "Power": no belief at all

    # The night of that day: the map changed, but still holds no such concept.
    fan = cycle.night_run(day=T0.date())
    assert fan.linked_pairs == 0 and not Rederivation.objects.exists()

    separation = _map_gains(pair.subject, "Separation of powers", T0 + days(1))
    fan = cycle.night_run(day=(T0 + days(1)).date())

    assert fan.linked_pairs == 1
    [belief] = beliefs_current(pair=pair)
    assert belief.concept == separation and belief.claim == "understands"
    assert BeliefEvidence.objects.filter(belief=belief, episode=check).exists()
    assert Rederivation.objects.get().source == Rederivation.Source.MAP

    # Linked now: the next night, with the map unchanged, re-derives nothing.
    fan = cycle.night_run(day=(T0 + days(2)).date())
    assert fan.linked_pairs == 0 and Rederivation.objects.count() == 1


def test_an_utterance_or_a_check_the_grown_map_still_cannot_route_stays_waiting(pair, derive):
    _map_gains(pair.subject, "Osmosis", T0)
    # An utterance stays evidence even when the assessment names a concept of the map.
    derive(pair, topic="ask me the questions", verdict="wrong", assessment="osmosis", at=T0)
    derive(pair, topic="photosynthesis", verdict="wrong", at=T0 + days(0.1))
    _map_gains(pair.subject, "Diffusion", T0 + days(0.2))

    fan = cycle.night_run(day=T0.date())

    assert fan.linked_pairs == 0
    assert not Rederivation.objects.exists()
    assert not Belief.objects.filter(pair=pair).exists()
