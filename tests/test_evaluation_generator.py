"""The history generator: deterministic for a seed, realistic in the ways the evaluation needs."""

from __future__ import annotations

from tutorbrain.evaluation.generator import REFERENCE_NOW, history_plan


def test_the_same_seed_and_index_give_the_same_history():
    assert (
        history_plan(seed=11, index=3).fingerprint() == history_plan(seed=11, index=3).fingerprint()
    )


def test_another_seed_gives_another_history():
    assert (
        history_plan(seed=11, index=3).fingerprint() != history_plan(seed=12, index=3).fingerprint()
    )


def test_a_history_has_empty_months_inside_it_and_nothing_in_them():
    plan = history_plan(seed=5, index=0)
    assert len(plan.empty_months) >= 2
    first, last = plan.active_months[0], plan.active_months[-1]
    months = {(e.occurred_at.year, e.occurred_at.month) for e in plan.events}
    for month in plan.empty_months:
        assert first < month < last
        assert month not in months


def test_no_event_is_in_the_future_of_the_reference_now():
    for index in range(16):
        assert all(e.occurred_at < REFERENCE_NOW for e in history_plan(seed=2, index=index).events)


def test_histories_hold_repeats_checks_of_three_topic_kinds_and_file_changes():
    plans = [history_plan(seed=9, index=i) for i in range(16)]
    roles = {e.role for p in plans for e in p.events}
    assert {"repeat", "exchange", "check-name", "check-phrase", "check-utterance"} <= roles
    assert "teaching" in roles and "narration" in roles
    assert any(e.predicted_mastery is not None for p in plans for e in p.events)
    assert all(any(s.action == "file" and s.revision for s in p.steps) for p in plans)
    assert all(any(s.action == "remove" for s in p.steps) for p in plans)
    assert {p.language for p in plans} == {"en", "es", "pt", "fr", "ar"}


def test_a_repeated_question_is_word_for_word_the_same():
    plan = history_plan(seed=4, index=0)
    repeats = [
        e
        for p in [history_plan(seed=4, index=i) for i in range(8)]
        for e in p.events
        if e.role == "repeat"
    ]
    assert plan is not None and len(repeats) >= 2
    assert len({(e.summary, e.text) for e in repeats if e.summary == repeats[0].summary}) == 1


def test_recalled_refs_point_to_earlier_events():
    for index in range(8):
        plan = history_plan(seed=3, index=index)
        seen: set[int] = set()
        for event in plan.events:
            assert set(event.recall_refs) <= seen
            seen.add(event.ref)


# ---- loading through the product's services (real database) ---------------------------------

import pytest  # noqa: E402


@pytest.mark.django_db(transaction=True)
def test_a_loaded_history_keeps_an_intact_chain_and_feeds_the_map_and_beliefs(organization):
    from beliefs.models import Belief
    from concepts.models import Concept
    from memory.models import Episode, SubjectFile
    from memory.services import chain_verify
    from tutorbrain.evaluation.generator import history_load

    plan = history_plan(seed=21, index=0)
    loaded = history_load(plan=plan, organization=organization)
    pair = loaded.pair

    verification = chain_verify(pair=pair)
    assert verification.intact, verification.reason
    assert verification.length == pair.head_seq
    # every planned event is in the chain, at the time it was planned
    episodes = {e.pk: e for e in Episode.objects.filter(pair=pair)}
    for event in plan.events:
        assert episodes[loaded.ids[event.ref]].occurred_at == event.occurred_at
    # the files were read into the map; one was replaced, the worksheet removed
    assert Concept.objects.filter(subject=pair.subject).count() >= 8
    files = SubjectFile.objects.filter(subject=pair.subject)
    assert files.filter(replaced_at__isnull=False).count() == 1
    assert files.filter(removed_at__isnull=False).count() == 1
    # checks named by concept became beliefs through the real signal handler
    assert Belief.objects.current().filter(pair=pair).exists()


@pytest.mark.django_db(transaction=True)
def test_loading_the_same_plan_twice_appends_nothing_the_second_time(organization):
    from tutorbrain.evaluation.generator import history_load

    plan = history_plan(seed=22, index=1)
    first = history_load(plan=plan, organization=organization)
    head = first.pair.head_seq
    again = history_load(plan=plan, organization=organization)
    assert again.pair.head_seq == head
    assert again.ids == first.ids
