"""R-4.5: re-derivation retires (never deletes), replays the logged checks under today's
rules, touches no episode, runs in one transaction and refuses to run twice at once."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, connections, transaction

from beliefs import rules
from beliefs.models import Belief, Rederivation
from beliefs.selectors import belief_chain, beliefs_current
from beliefs.services import (
    RederivationBusy,
    RederivationRefused,
    _lock_key,
    beliefs_rederive,
    beliefs_rederive_many,
)
from memory.hashing import episode_hash, fields_of
from memory.models import GENESIS_HASH, Episode, Pair
from tests.beliefs_helpers import T0, days, make_concept
from tests.conftest import ROOT


@pytest.fixture
def history(pair, derive):
    """Osmosis: right, partial, partial; Cytoplasm: wrong. Plus an utterance check."""
    make_concept(pair.subject, "Osmosis")
    make_concept(pair.subject, "Cytoplasm")
    derive(pair, topic="Osmosis", verdict="right", at=T0)
    derive(pair, topic="Osmosis", verdict="partial", at=T0)
    derive(pair, topic="Check on osmosis", verdict="partial", at=T0)
    derive(pair, topic="Cytoplasm", verdict="wrong", at=T0 + days(1))
    derive(pair, topic="ask me the questions", verdict="right", at=T0 + days(1))
    return pair


def _chain_snapshot(pair: Pair) -> list[tuple[int, str, str]]:
    return list(
        Episode.objects.filter(pair=pair).order_by("seq").values_list("seq", "hash", "prev_hash")
    )


def _assert_chain_verifies(pair: Pair) -> None:
    prev = GENESIS_HASH
    for episode in Episode.objects.filter(pair=pair).order_by("seq"):
        assert episode.prev_hash == prev
        assert episode_hash(fields_of(episode), prev) == episode.hash
        prev = episode.hash
    from memory import services as memory_services

    if hasattr(memory_services, "chain_verify"):
        assert memory_services.chain_verify(pair=pair).intact


def test_rederivation_after_a_rule_change_retires_old_beliefs_and_derives_new_ones(
    history, monkeypatch
):
    pair = history
    before = {b.concept.name: b for b in beliefs_current(pair=pair)}
    # Osmosis (2 + 2) / (4 + 3) = 0.57 under the default prior. Cytoplasm's prior is
    # lifted by the student's level on Osmosis (2 of 3 against 0.5: +0.5 / (3 + 20)).
    assert (before["Osmosis"].claim, before["Osmosis"].p_right) == ("understands", 0.57)
    cytoplasm = before["Cytoplasm"]
    assert cytoplasm.prior_right == pytest.approx(0.5 + 0.5 / 23)
    assert (cytoplasm.claim, cytoplasm.p_right) == (
        "struggles",
        round(4 * cytoplasm.prior_right / 5, 2),
    )
    assert cytoplasm.confidence == round(1 - cytoplasm.p_right, 2)
    episodes_before = Episode.objects.filter(pair=pair).count()
    chain_before = _chain_snapshot(pair)

    # Today's rule: a partial answer counts as a miss.
    monkeypatch.setitem(rules.VERDICT_OUTCOME, "partial", 0.0)
    monkeypatch.setattr(rules, "RULES_VERSION", "partial-is-a-miss")
    now = T0 + days(3)
    result = beliefs_rederive(pair=pair, now=now)

    assert (result.beliefs_retired, result.checks_replayed, result.checks_linked) == (2, 5, 4)
    assert result.beliefs_derived == 2
    after = {b.concept.name: b for b in beliefs_current(pair=pair)}
    # (4m + 1) / (4 + 3), m lowered by the wrong Cytoplasm answer: −0.5 / (1 + 20).
    osmosis = after["Osmosis"]
    assert osmosis.prior_right == pytest.approx(0.5 - 0.5 / 21)
    assert (osmosis.claim, osmosis.p_right) == (
        "struggles",
        round((4 * osmosis.prior_right + 1) / 7, 2),
    )
    assert osmosis.reason == "rederivation" and osmosis.check_count == 3
    assert after["Cytoplasm"].claim == "struggles"

    # The old rows are still there, unchanged and readable, in the same chain.
    old = Belief.objects.get(pk=before["Osmosis"].pk)
    assert (old.claim, old.confidence, old.reason) == ("understands", 0.57, "evidence")
    chain = belief_chain(belief=old)
    assert [b.reason for b in chain][-2:] == ["retirement", "rederivation"]
    assert chain[-2].claim == "understands" and chain[-2].created_at == now
    assert chain[-1].pk == after["Osmosis"].pk

    # No episode touched: same count, every hash and link identical, chain verifies.
    assert Episode.objects.filter(pair=pair).count() == episodes_before
    assert _chain_snapshot(pair) == chain_before
    _assert_chain_verifies(pair)

    log = Rederivation.objects.get(pair=pair)
    assert (log.rules_version, log.beliefs_retired, log.checks_replayed) == (
        "partial-is-a-miss",
        2,
        5,
    )


def test_a_concept_no_check_routes_to_any_more_stays_retired(history, monkeypatch):
    pair = history
    cytoplasm = Belief.objects.current().get(concept__name="Cytoplasm")
    # Today the map no longer has that name (e.g. merged away): its checks route nowhere.
    from concepts.models import Concept

    Concept.objects.filter(pk=cytoplasm.concept_id).update(key="cytoplasm-merged-away")
    beliefs_rederive(pair=pair, now=T0 + days(3))
    assert [b.concept.name for b in beliefs_current(pair=pair)] == ["Osmosis"]
    head = Belief.objects.get(concept=cytoplasm.concept_id, superseded_by__isnull=True)
    assert head.reason == "retirement" and not head.is_current


def test_rederiving_twice_keeps_one_current_belief_per_concept(history):
    beliefs_rederive(pair=history, now=T0 + days(3))
    beliefs_rederive(pair=history, now=T0 + days(4))
    current = beliefs_current(pair=history)
    assert sorted(b.concept.name for b in current) == ["Cytoplasm", "Osmosis"]
    osmosis_chain = belief_chain(belief=current[0])
    assert [b.reason for b in osmosis_chain][-4:] == [
        "retirement",
        "rederivation",
        "retirement",
        "rederivation",
    ]
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the one-current check holds


def test_a_concept_left_for_the_decay_age_while_the_student_went_on_is_rederived_decayed(
    history, derive
):
    # The student kept coming (Osmosis, 45 days after the Cytoplasm check); Cytoplasm was
    # left: on the history's own time line, Cytoplasm decayed, Osmosis did not.
    derive(
        history, topic="Osmosis", verdict="right", at=T0 + days(1 + rules.BELIEF_DECAY_AFTER_DAYS)
    )
    beliefs_rederive(pair=history, now=T0 + days(400))
    current = {b.concept.name: b for b in beliefs_current(pair=history)}
    cytoplasm = current["Cytoplasm"]
    assert cytoplasm.needs_confirmation
    undecayed = round(4 * cytoplasm.prior_right / 5, 2)
    assert cytoplasm.p_right == rules.decayed_p_right(
        p_right=undecayed, prior_mean=cytoplasm.prior_right, claim="struggles"
    )
    assert undecayed < cytoplasm.p_right <= cytoplasm.prior_right
    assert not current["Osmosis"].needs_confirmation


def test_rederiving_an_imported_year_old_history_does_not_mark_everything_decayed(history):
    # The whole history is a year old: re-derived as of its own end, not as of today.
    beliefs_rederive(pair=history, now=T0 + days(365))
    current = beliefs_current(pair=history)
    assert len(current) == 2
    assert not any(b.needs_confirmation for b in current)
    # Each p_right is its posterior, undecayed: (4m + right) / (4 + checks).
    expected = {"Osmosis": (2.0, 3), "Cytoplasm": (0.0, 1)}
    for b in current:
        right, n = expected[b.concept.name]
        assert b.p_right == round((4 * b.prior_right + right) / (4 + n), 2)


def test_a_failure_halfway_leaves_the_previous_beliefs_current(history, monkeypatch):
    pair = history
    before = sorted(b.pk for b in beliefs_current(pair=pair))
    rows_before = Belief.objects.count()
    calls = {"n": 0}
    real_derive = rules.derive

    def failing_derive(points, prior=rules.DEFAULT_PRIOR):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("the disk is full")
        return real_derive(points, prior)

    monkeypatch.setattr(rules, "derive", failing_derive)
    with pytest.raises(RuntimeError, match="disk is full"):
        beliefs_rederive(pair=pair, now=T0 + days(3))
    assert sorted(b.pk for b in beliefs_current(pair=pair)) == before
    assert Belief.objects.count() == rows_before
    assert not Rederivation.objects.exists()


def test_a_second_concurrent_rederivation_of_the_same_pair_is_refused(transactional_db, history):
    # transactional_db: each service commits, so the only lock holder is the other thread.
    pair = history
    holding, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def other_process():
        # Another connection holds the pair's belief lock, as a running re-derivation does.
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_lock_key(pair.pk)])
                holding.set()
                release.wait(timeout=20)
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=other_process)
    thread.start()
    try:
        assert holding.wait(timeout=20), errors
        rows_before = Belief.objects.count()
        with pytest.raises(RederivationBusy, match="nothing was retired"):
            beliefs_rederive(pair=pair, now=T0 + days(3))
        assert Belief.objects.count() == rows_before
        assert not Belief.objects.filter(reason="retirement").exists()
        batch = beliefs_rederive_many(pair_ids=[pair.pk], now=T0 + days(3))
        assert batch.busy == [pair.pk] and not batch.done
    finally:
        release.set()
        thread.join(timeout=30)
    # Once the other one is done, it runs.
    assert beliefs_rederive(pair=pair, now=T0 + days(3)).beliefs_retired == 2


def test_rederiving_a_pair_that_does_not_exist_is_refused(db):
    with pytest.raises(RederivationRefused, match="no student-subject"):
        beliefs_rederive(pair=Pair(pk=987654), now=T0)
    batch = beliefs_rederive_many(pair_ids=[987654], now=T0)
    assert batch.refused and not batch.done


def test_the_command_rederives_one_pair_by_its_external_ids(history, capsys):
    pair = history
    call_command(
        "rederive_beliefs",
        "--student",
        pair.student.external_id,
        "--subject",
        pair.subject.external_id,
    )
    out = capsys.readouterr().out
    assert "2 beliefs retired, 5 checks replayed (4 linked), 2 beliefs derived" in out
    assert Rederivation.objects.get(pair=pair).source == "command"


def test_the_command_with_all_rederives_every_pair(history, capsys):
    call_command("rederive_beliefs", "--all")
    assert "re-derived 1 of 1 student-subjects" in capsys.readouterr().out


def test_the_command_refuses_a_pair_that_does_not_exist(db):
    with pytest.raises(CommandError, match="no student 'nobody' with subject 'biology'"):
        call_command("rederive_beliefs", "--student", "nobody", "--subject", "biology")
    assert not Belief.objects.exists()


def test_the_command_exits_non_zero_with_one_readable_line_for_an_unknown_pair(db):
    env_db = connection.settings_dict["NAME"]
    process = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "rederive_beliefs",
            "--student",
            "nobody",
            "--subject",
            "biology",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "TUTORBRAIN_DB_NAME": env_db},
        timeout=120,
    )
    assert process.returncode != 0
    lines = [line for line in process.stderr.splitlines() if line.strip()]
    assert lines == ["CommandError: no student 'nobody' with subject 'biology': nothing re-derived"]


def test_two_real_rederivations_of_one_pair_never_both_run(transactional_db, history, monkeypatch):
    pair = history
    inside, release = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}
    real_derive = rules.derive

    def slow_derive(points, prior=rules.DEFAULT_PRIOR):
        # Only the first re-derivation (thread "first") pauses in the middle of its work.
        if threading.current_thread().name == "first":
            inside.set()
            release.wait(timeout=20)
        return real_derive(points, prior)

    monkeypatch.setattr(rules, "derive", slow_derive)

    def first():
        try:
            outcome["first"] = beliefs_rederive(pair=pair, now=T0 + days(3))
        except BaseException as exc:  # surfaced below
            outcome["first"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=first, name="first")
    thread.start()
    try:
        assert inside.wait(timeout=20), outcome
        with pytest.raises(RederivationBusy):
            beliefs_rederive(pair=pair, now=T0 + days(3))
    finally:
        release.set()
        thread.join(timeout=30)
    assert not isinstance(outcome["first"], BaseException), outcome["first"]
    assert Rederivation.objects.filter(pair=pair).count() == 1
    assert Belief.objects.filter(reason="retirement").count() == 2
    assert sorted(b.concept.name for b in beliefs_current(pair=pair)) == ["Cytoplasm", "Osmosis"]
