"""R-1.5 / R-1.6: the hash chain, its verification, checkpoints and the commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from memory.checkpoints import CHECKPOINT_FORMAT, checkpoint_document, checkpoint_parse
from memory.errors import InvalidInput
from memory.hashing import episode_hash, fields_of
from memory.models import GENESIS_HASH, ChainCheckpoint, ChainVerification, Episode, Pair
from memory.rules import SALIENCE_CHECK_RIGHT, SALIENCE_CHECK_WRONG, SALIENCE_TAUGHT
from memory.selectors import chain_report
from memory.services import EventSpec, chain_verify, checkpoint_create, episode_append_batch
from tests.factories import PairFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)


def fill(pair, n: int, start: int = 0) -> list[Episode]:
    events = [
        EventSpec(
            kind="check" if i % 3 == 0 else "question",
            summary=f"event {start + i}",
            text=f"text of event {start + i}",
            verdict="wrong" if i % 3 == 0 else "",
            occurred_at=T0 + timedelta(minutes=start + i),
        )
        for i in range(n)
    ]
    return episode_append_batch(pair=pair, events=events, now=T0, embed=False)


def tamper(sql: str, params=()) -> None:
    """What a database owner can do: switch off the append-only trigger and rewrite."""
    with connection.cursor() as cursor:
        # Deferred foreign-key checks of this test's own inserts must run first.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("ALTER TABLE memory_episode DISABLE TRIGGER USER")
        cursor.execute(sql, params)
        cursor.execute("ALTER TABLE memory_episode ENABLE TRIGGER USER")


def delete_episode(pair, seq: int) -> None:
    episode = Episode.objects.get(pair=pair, seq=seq)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM memory_episodeindex WHERE episode_id = %s", [episode.pk])
    tamper("DELETE FROM memory_episode WHERE id = %s", [episode.pk])


def verify_command(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("verify_chains", *args, stdout=out)
    except CommandError as exc:
        return exc.returncode, out.getvalue() + str(exc)
    return 0, out.getvalue()


# --- the chain ------------------------------------------------------------------------


def test_appends_number_the_chain_and_link_each_hash_to_the_previous(pair):
    episodes = fill(pair, 4)
    assert [e.seq for e in episodes] == [1, 2, 3, 4]
    assert episodes[0].prev_hash == GENESIS_HASH
    for before, after in zip(episodes, episodes[1:], strict=False):
        assert after.prev_hash == before.hash
    stored = Episode.objects.get(pk=episodes[2].pk)
    assert episode_hash(fields_of(stored), stored.prev_hash) == stored.hash
    pair.refresh_from_db()
    assert (pair.head_seq, pair.head_hash) == (4, episodes[-1].hash)


def test_salience_is_fixed_by_kind_and_verdict_at_write_time(pair):
    wrong, right, taught = episode_append_batch(
        pair=pair,
        events=[
            EventSpec(kind="check", summary="c1", verdict="wrong"),
            EventSpec(kind="check", summary="c2", verdict="right"),
            EventSpec(kind="taught", summary="remember: mitochondria first"),
        ],
        embed=False,
    )
    assert (wrong.salience, right.salience, taught.salience) == (
        SALIENCE_CHECK_WRONG,
        SALIENCE_CHECK_RIGHT,
        SALIENCE_TAUGHT,
    )


def test_an_idempotency_key_makes_a_retry_append_nothing(pair):
    first = episode_append_batch(
        pair=pair, events=[EventSpec(kind="question", summary="q", idempotency_key="k1")]
    )[0]
    again = episode_append_batch(
        pair=pair, events=[EventSpec(kind="question", summary="q", idempotency_key="k1")]
    )[0]
    assert again.pk == first.pk and again.was_appended is False
    assert Episode.objects.filter(pair=pair).count() == 1


# --- verification ---------------------------------------------------------------------


def test_an_untouched_chain_verifies_intact_and_the_result_is_recorded(pair):
    fill(pair, 10)
    verification = chain_verify(pair=pair, now=T0)
    assert verification.intact and verification.length == 10
    assert ChainVerification.objects.get(pair=pair).pk == verification.pk


def test_an_empty_chain_is_intact(pair):
    assert chain_report(pair=pair).intact


def test_verification_streams_the_chain_in_chunks(pair):
    fill(pair, 25)
    report = chain_report(pair=pair, chunk_size=4)
    assert report.intact and report.length == 25


def test_rewriting_one_episodes_text_is_named_as_content_changed_at_that_seq(pair):
    episodes = fill(pair, 8)
    tamper("UPDATE memory_episode SET text = 'a kinder story' WHERE id = %s", [episodes[4].pk])
    verification = chain_verify(pair=pair, now=T0)
    assert not verification.intact
    assert (verification.broken_seq, verification.failure) == (5, "content_changed")
    assert "seq 5" in verification.reason
    code, output = verify_command()
    assert code == 1 and "seq 5" in output and "content changed" in output


def test_rewriting_an_episode_and_recomputing_its_hash_breaks_the_next_link(pair):
    episodes = fill(pair, 6)
    target = Episode.objects.get(pk=episodes[2].pk)
    target.text = "rewritten"
    forged = episode_hash(fields_of(target), target.prev_hash)
    tamper(
        "UPDATE memory_episode SET text = 'rewritten', hash = %s WHERE id = %s",
        [forged, target.pk],
    )
    report = chain_report(pair=pair)
    assert (report.broken_seq, report.failure) == (4, "link_broken")


def test_deleting_a_middle_episode_is_named_as_a_gap(pair):
    fill(pair, 7)
    delete_episode(pair, 4)
    verification = chain_verify(pair=pair, now=T0)
    assert (verification.broken_seq, verification.failure) == (4, "gap")
    assert "seq 4 is missing" in verification.reason
    code, output = verify_command()
    assert code == 1 and "gap" in output


def test_swapping_two_episodes_is_named_as_reordered(pair):
    episodes = fill(pair, 6)
    a, b = episodes[2].pk, episodes[3].pk
    tamper("UPDATE memory_episode SET seq = 1000 WHERE id = %s", [a])
    tamper("UPDATE memory_episode SET seq = 3 WHERE id = %s", [b])
    tamper("UPDATE memory_episode SET seq = 4 WHERE id = %s", [a])
    report = chain_report(pair=pair)
    assert (report.broken_seq, report.failure) == (3, "reordered")
    code, _ = verify_command()
    assert code == 1


def test_removing_the_tail_without_moving_the_head_is_named_as_truncated(pair):
    fill(pair, 5)
    delete_episode(pair, 5)
    report = chain_report(pair=pair)
    assert (report.broken_seq, report.failure) == (5, "truncated")
    code, output = verify_command()
    assert code == 1 and "truncated" in output


def _cut_tail_and_rewind_head(pair, keep: int) -> None:
    """The careful tamperer: cut the tail and move the pair's head back to match."""
    for seq in range(pair.head_seq, keep, -1):
        delete_episode(pair, seq)
    last = Episode.objects.get(pair=pair, seq=keep)
    Pair.objects.filter(pk=pair.pk).update(head_seq=keep, head_hash=last.hash)
    pair.refresh_from_db()


def test_a_cut_tail_with_a_rewound_head_is_caught_only_by_the_checkpoint(pair, tmp_path):
    fill(pair, 6)
    out = tmp_path / "heads.json"
    call_command("checkpoint_chains", "--out", str(out), stdout=StringIO())
    _cut_tail_and_rewind_head(pair, keep=4)

    assert chain_report(pair=pair).intact, "the chain alone looks whole"
    code, _ = verify_command()
    assert code == 0

    code, output = verify_command("--checkpoint", str(out))
    assert code == 1
    assert "truncated" in output and "seq 6" in output
    latest = ChainVerification.objects.filter(pair=pair).latest("pk")
    assert (latest.failure, latest.broken_seq) == ("truncated", 5)
    assert latest.checkpoint_created_at is not None


def test_a_whole_chain_rewrite_with_fresh_hashes_is_caught_by_the_checkpoint(pair, tmp_path):
    fill(pair, 4)
    out = tmp_path / "heads.json"
    call_command("checkpoint_chains", "--out", str(out), stdout=StringIO())
    # Rewrite every episode's text and recompute every hash: self-consistent again.
    prev = GENESIS_HASH
    for episode in Episode.objects.filter(pair=pair).order_by("seq"):
        episode.text = "a different history"
        episode.prev_hash = prev
        new_hash = episode_hash(fields_of(episode), prev)
        tamper(
            "UPDATE memory_episode SET text = %s, prev_hash = %s, hash = %s WHERE id = %s",
            [episode.text, prev, new_hash, episode.pk],
        )
        prev = new_hash
    Pair.objects.filter(pk=pair.pk).update(head_hash=prev)
    assert chain_report(pair=pair).intact
    code, output = verify_command("--checkpoint", str(out))
    assert code == 1 and "rewritten" in output


def test_a_checkpoint_is_signed_stored_and_round_trips(pair, tmp_path):
    episodes = fill(pair, 3)
    checkpoint = checkpoint_create(now=T0)
    document = checkpoint_document(checkpoint)
    assert document["format"] == CHECKPOINT_FORMAT
    assert ChainCheckpoint.objects.filter(pk=checkpoint.pk).exists()
    parsed = checkpoint_parse(json.dumps(document))
    head = parsed.by_pair()[pair.pk]
    assert (head.seq, head.hash) == (3, episodes[-1].hash)


def test_an_altered_checkpoint_file_is_refused_with_one_readable_line(pair, tmp_path):
    fill(pair, 3)
    out = tmp_path / "heads.json"
    call_command("checkpoint_chains", "--out", str(out), stdout=StringIO())
    document = json.loads(out.read_text())
    document["heads"][0]["seq"] = 2
    out.write_text(json.dumps(document))
    with pytest.raises(InvalidInput, match="signature does not match"):
        checkpoint_parse(out.read_text())
    code, output = verify_command("--checkpoint", str(out))
    assert code == 2 and "signature does not match" in output


def test_a_checkpoint_signed_with_another_key_is_named_as_such(pair, tmp_path, settings):
    fill(pair, 2)
    document = checkpoint_document(checkpoint_create(now=T0))
    settings.TUTORBRAIN_CHECKPOINT_KEY = "another key"
    with pytest.raises(InvalidInput, match="another key"):
        checkpoint_parse(json.dumps(document))


def test_verify_chains_filters_by_student_and_subject(pair):
    other = PairFactory(student__organization=pair.student.organization)
    fill(pair, 3)
    fill(other, 2)
    code, output = verify_command("--student", pair.student.external_id)
    assert code == 0 and "Verified 1 chain, 3 episodes" in output


def test_verify_chains_rejects_an_unknown_student_with_one_line(pair):
    code, output = verify_command("--student", "nobody")
    assert code == 2 and "no episode chain matches --student 'nobody'" in output


def test_verify_chains_rejects_a_missing_checkpoint_file(pair, tmp_path):
    code, output = verify_command("--checkpoint", str(tmp_path / "absent.json"))
    assert code == 2 and "cannot read checkpoint" in output


def test_checkpoint_chains_exits_non_zero_when_a_chain_is_broken(pair, tmp_path):
    episodes = fill(pair, 3)
    tamper("UPDATE memory_episode SET summary = 'x' WHERE id = %s", [episodes[1].pk])
    with pytest.raises(CommandError) as caught:
        call_command("checkpoint_chains", "--out", str(tmp_path / "h.json"), stdout=StringIO())
    assert caught.value.returncode == 1
    assert (tmp_path / "h.json").exists()


@pytest.mark.django_db(transaction=True)
def test_the_verify_command_process_exits_non_zero_on_a_break(tmp_path):
    pair = PairFactory()
    episodes = fill(pair, 3)
    tamper("UPDATE memory_episode SET text = 'x' WHERE id = %s", [episodes[0].pk])
    env = {"TUTORBRAIN_DB_NAME": connection.settings_dict["NAME"]}
    result = subprocess.run(
        [sys.executable, "manage.py", "verify_chains"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert "seq 1" in result.stdout and "content changed" in result.stdout
