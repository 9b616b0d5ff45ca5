"""Staff admin for beliefs: the list (current by default), a belief's whole chain as a
timeline, the per-pair page and the re-derivation action with its confirmation page."""

from __future__ import annotations

import re

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth.models import Group, Permission
from django.urls import reverse

from beliefs.models import Belief, Rederivation
from beliefs.selectors import belief_chain, beliefs_current
from tests.beliefs_helpers import T0, days, make_concept
from tutorbrain.groups import MEMORY_STAFF


@pytest.fixture
def staff(django_user_model, client):
    user = django_user_model.objects.create_user("ines", password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name=MEMORY_STAFF))
    client.force_login(user)
    return user


@pytest.fixture
def three_step_chain(pair, derive):
    make_concept(pair.subject, "Osmosis")
    derive(pair, topic="Osmosis", verdict="wrong", at=T0, summary="osmosis: water goes up?")
    derive(pair, topic="Osmosis", verdict="right", at=T0 + days(1), summary="osmosis right")
    derive(pair, topic="Osmosis", verdict="right", at=T0 + days(2), summary="osmosis again")
    chain = belief_chain(belief=beliefs_current(pair=pair)[0])
    assert len(chain) == 3
    return chain


def test_the_timeline_shows_every_row_of_a_three_step_chain_in_order(
    client, staff, three_step_chain
):
    first, middle, last = three_step_chain
    # Opened from the middle row, the page still shows the whole chain, oldest first.
    response = client.get(reverse("admin:beliefs_belief_change", args=[middle.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    shown = [int(i) for i in re.findall(r'data-belief-id="(\d+)"', html)]
    assert shown == [first.pk, middle.pk, last.pk]
    steps = html.split('<li class="bl-step')[1:]
    assert len(steps) == 3
    assert "struggles with Osmosis" in steps[0] and "0.60" in steps[0]
    assert "p_right 0.40" in steps[0]
    assert "struggles with Osmosis" in steps[1] and "p_right 0.50" in steps[1]
    assert "understands Osmosis" in steps[2] and "0.57" in steps[2]
    assert "p_right 0.57 (prior 0.50, worth 4.0 checks)" in steps[2]
    assert all("new evidence" in step for step in steps)
    # Each row lists the episodes behind it (1, 2, then 3 checks), the new one marked.
    assert [len(re.findall(r">episode \d+</a>", step)) for step in steps] == [1, 2, 3]
    assert "bl-selected" in steps[1] and "bl-selected" not in steps[0]
    # The episodes are links to the episode admin, named by the id the link opens.
    for episode in last.evidence.all():
        url = reverse("admin:memory_episode_change", args=[episode.pk])
        assert f'<a href="{url}">episode {episode.pk}</a>' in steps[2]
    assert html.index(f'id="belief-{first.pk}"') < html.index(f'id="belief-{last.pk}"')


def test_the_timeline_includes_retirement_and_rederivation_rows(client, staff, three_step_chain):
    from beliefs.services import beliefs_rederive

    beliefs_rederive(pair=three_step_chain[0].pair, now=T0 + days(3))
    response = client.get(reverse("admin:beliefs_belief_change", args=[three_step_chain[0].pk]))
    html = response.content.decode()
    assert len(re.findall(r'data-belief-id="', html)) == 5
    assert html.index("retirement") < html.index("re-derivation")
    assert "Retired before a re-derivation" in html


def test_the_belief_list_shows_current_rows_by_default_and_superseded_on_demand(
    client, staff, three_step_chain, django_assert_max_num_queries
):
    url = reverse("admin:beliefs_belief_changelist")
    with django_assert_max_num_queries(12):
        response = client.get(url)
    assert response.status_code == 200
    assert list(response.context["cl"].result_list) == [three_step_chain[-1]]
    superseded = client.get(url, {"state": "superseded"})
    assert {b.pk for b in superseded.context["cl"].result_list} == {
        b.pk for b in three_step_chain[:2]
    }
    everything = client.get(url, {"state": "all"})
    assert len(everything.context["cl"].result_list) == 3


def test_beliefs_cannot_be_added_changed_or_deleted_in_the_admin(client, staff, three_step_chain):
    assert client.get(reverse("admin:beliefs_belief_add")).status_code == 403
    response = client.post(
        reverse("admin:beliefs_belief_delete", args=[three_step_chain[0].pk]), {"post": "yes"}
    )
    assert response.status_code == 403
    assert Belief.objects.count() == 3


def test_the_per_pair_page_shows_current_beliefs_chain_lengths_and_last_rederivation(
    client, staff, three_step_chain
):
    pair = three_step_chain[0].pair
    url = reverse("admin:beliefs_pairbeliefs_change", args=[pair.pk])
    html = client.get(url).content.decode()
    assert "Never re-derived." in html
    row = re.search(r'<table id="current-beliefs">.*?</table>', html, flags=re.S).group(0)
    assert "Osmosis" in row and "<td>3</td>" in row  # three checks, chain of three
    from beliefs.services import beliefs_rederive

    beliefs_rederive(pair=pair, now=T0 + days(3))
    html = client.get(url).content.decode()
    assert "Last re-derivation: 2026-03-05" in html
    assert "<td>5</td>" in html  # the chain grew by a retirement and a re-derivation


def test_the_rederive_action_asks_for_confirmation_with_counts_then_runs(
    client, staff, three_step_chain, derive
):
    pair = three_step_chain[0].pair
    derive(pair, topic="explique-moi encore", verdict="wrong", at=T0 + days(2))
    url = reverse("admin:beliefs_pairbeliefs_changelist")
    data = {"action": "rederive_selected", ACTION_CHECKBOX_NAME: [pair.pk]}
    confirmation = client.post(url, data)
    assert confirmation.status_code == 200
    summary = confirmation.content.decode()
    assert "retire\n    <strong>1 current belief</strong>" in summary
    assert "<strong>4 logged checks</strong>" in summary
    assert not Rederivation.objects.exists()

    done = client.post(url, {**data, "confirm": "yes"}, follow=True)
    assert done.status_code == 200
    messages = [str(m) for m in done.context["messages"]]
    assert any("1 beliefs retired, 4 checks replayed, 1 beliefs derived" in m for m in messages)
    log = Rederivation.objects.get(pair=pair)
    assert (log.source, log.requested_by) == ("admin", staff)


def test_staff_without_the_rederive_permission_cannot_rederive(
    client, django_user_model, three_step_chain
):
    viewer = django_user_model.objects.create_user("tom", password="pw", is_staff=True)
    viewer.user_permissions.add(
        Permission.objects.get(codename="view_pairbeliefs"),
        Permission.objects.get(codename="view_belief"),
    )
    client.force_login(viewer)
    pair = three_step_chain[0].pair
    url = reverse("admin:beliefs_pairbeliefs_changelist")
    listing = client.get(url)
    assert listing.status_code == 200
    assert "rederive_selected" not in listing.content.decode()
    response = client.post(
        url,
        {"action": "rederive_selected", ACTION_CHECKBOX_NAME: [pair.pk], "confirm": "yes"},
        follow=True,
    )
    assert response.status_code == 200
    assert not Rederivation.objects.exists()
    assert not Belief.objects.filter(reason="retirement").exists()


def test_a_large_selection_is_queued_as_celery_tasks(
    client, staff, three_step_chain, monkeypatch, django_capture_on_commit_callbacks
):
    from beliefs import services, tasks

    sent = []
    monkeypatch.setattr(services, "REDERIVE_INLINE_MAX_PAIRS", 0)
    monkeypatch.setattr(tasks.rederive_pairs, "delay", lambda **kw: sent.append(kw))
    pair = three_step_chain[0].pair
    with django_capture_on_commit_callbacks(execute=True):
        beliefs_pairs = services.beliefs_rederive_schedule(pair_ids=[pair.pk], requested_by=staff)
    assert beliefs_pairs == 1
    assert sent == [{"pair_ids": [pair.pk], "requested_by_id": staff.pk, "source": "task"}]


def test_the_timeline_shows_checks_a_rederivation_no_longer_counts(
    client, staff, three_step_chain, derive, monkeypatch
):
    from beliefs import routing
    from beliefs.services import beliefs_rederive

    pair = three_step_chain[0].pair
    phrase = derive(
        pair,
        topic="water moving through a membrane",
        verdict="right",
        assessment="Described Osmosis well.",
        at=T0 + days(3),
    )
    # Today's rule: any cue word makes a topic read as speech ("a" is a Portuguese cue).
    monkeypatch.setattr(routing, "UTTERANCE_CUES_PER_CONTENT_WORD", 0.0)
    beliefs_rederive(pair=pair, now=T0 + days(4))
    head = beliefs_current(pair=pair)[0]
    assert phrase not in head.evidence.all() and head.check_count == 3
    html = client.get(reverse("admin:beliefs_belief_change", args=[head.pk])).content.decode()
    last_step = html.split('<li class="bl-step')[-1]
    assert "No longer counted under the rules of this re-derivation" in last_step
    dropped = last_step.split("No longer counted")[1]
    assert f">episode {phrase.pk}</a>" in dropped
