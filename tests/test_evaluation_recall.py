"""`manage.py bench_recall`: evidence recall on a conversation file, beside baselines."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory.models import Episode
from tutorbrain.evaluation.recall import Bm25, bm25_tokens, conversations_read, fill_budget, rrf


def _conversation() -> list[dict]:
    topics = [
        "I adopted a puppy named Biscuit from the shelter last weekend.",
        "Work has been busy, we shipped the new billing system on Friday.",
        "My sister moved to Lisbon and opened a bakery near the river.",
        "I started learning the cello, the bow is harder than I thought.",
        "We camped by the lake and saw a family of otters at dawn.",
        "The marathon training is going well, I ran thirty kilometres.",
    ]
    session_1 = []
    for k, text in enumerate(topics, start=1):
        session_1.append({"speaker": "Ana", "dia_id": f"D1:{2 * k - 1}", "text": text})
        session_1.append({"speaker": "Ben", "dia_id": f"D1:{2 * k}", "text": "That sounds great!"})
    session_2 = [
        {"speaker": "Ana", "dia_id": "D2:1", "text": "Biscuit chewed my shoes again."},
        {"speaker": "Ben", "dia_id": "D2:2", "text": "Puppies do that.", "blip_caption": "a dog"},
    ]
    return [
        {
            "sample_id": "conv-test",
            "conversation": {
                "speaker_a": "Ana",
                "speaker_b": "Ben",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": session_1,
                "session_2_date_time": "10:37 am on 27 June, 2023",
                "session_2": session_2,
                "session_3_date_time": "9:00 am on 1 July, 2023",
            },
            "qa": [
                {"question": "Where did Ana's sister open a bakery?", "answer": "Lisbon",
                 "evidence": ["D1:5"], "category": 4},
                {"question": "What instrument is Ana learning?", "answer": "cello",
                 "evidence": ["D1:7"], "category": 4},
                {"question": "What did Ana's dog do?", "answer": "chewed shoes",
                 "evidence": ["D2:1; D1:1"], "category": 1},
                {"question": "Is Ana married?", "adversarial_answer": "no", "evidence": [],
                 "category": 5},
            ],
        }
    ]  # fmt: skip


@pytest.fixture
def conversation_file(tmp_path):
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(_conversation()))
    return path


def test_the_file_is_read_with_dates_photos_and_split_evidence(conversation_file):
    conversations, digest = conversations_read(conversation_file)
    (conv,) = conversations
    assert len(conv.turns) == 14 and len(digest) == 64
    assert conv.turns[0].first_speaker and not conv.turns[1].first_speaker
    assert conv.turns[-1].text.endswith("[shares a photo: a dog]")
    assert conv.turns[3].occurred_at.isoformat() == "2023-05-08T13:56:04+00:00"
    # Category 5 (no evidence) is not asked; "D2:1; D1:1" is two evidence turns.
    assert [q.evidence for q in conv.questions] == [("D1:5",), ("D1:7",), ("D2:1", "D1:1")]


def test_bm25_ranks_the_turn_with_the_rare_word_first_and_rrf_keeps_both_lists():
    docs = [bm25_tokens(t) for t in ("the cat sat", "the dog sat", "a cello lesson today")]
    scores = Bm25(docs).scores(bm25_tokens("who plays the cello"))
    assert int(scores.argmax()) == 2
    # In both lists beats first in one; first in one beats second in one.
    assert rrf([2, 0], [1, 2]) == [2, 1, 0]


def test_a_baseline_fills_the_budget_skipping_a_line_that_does_not_fit():
    assert fill_budget([0, 1, 2], [5, 50, 5], budget=12) == {0, 2}


@pytest.mark.django_db(transaction=True)
def test_the_command_appends_every_turn_and_prints_every_design_per_category(
    conversation_file, capsys
):
    call_command("bench_recall", str(conversation_file), budget=[400])
    out = capsys.readouterr().out
    assert "14 turns, 3 questions with evidence" in out
    for title in ("the memory block", "BM25", "vector only", "reciprocal-rank fusion"):
        assert title in out
    assert "multi-hop (1)" in out and "single-hop (2)" in out
    # Every turn went through the services once; a rerun on the same file reuses them.
    assert Episode.objects.filter(pair__student__external_id="conv-test").count() == 14
    call_command("bench_recall", str(conversation_file), budget=[400])
    assert Episode.objects.filter(pair__student__external_id="conv-test").count() == 14
    # The whole conversation fits in 400 tokens: the vector ranking (which ranks every
    # turn) shows it all; BM25 finds both single-hop answers by their rare words.
    rows = {ln.split("|")[1].strip(): ln.split("|") for ln in out.splitlines() if "|" in ln}
    assert rows["vector only (same embedding model)"][2].strip() == "100.0 %"
    assert rows["BM25 (Okapi, `\\w+` tokens)"][-2].strip() == "100.0 %"


@pytest.mark.django_db
def test_the_command_refuses_a_file_that_is_not_a_conversation(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"qa": []}')
    with pytest.raises(CommandError, match="no 'conversation' object"):
        call_command("bench_recall", str(path))
    with pytest.raises(CommandError, match="--budget"):
        call_command("bench_recall", str(path), budget=[0])
