"""The benchmark's pre-registered question file: its hash is checked before any grading."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from tutorbrain.evaluation.bench import (
    QuestionFileTampered,
    bench_run,
    hash_path,
    questions_file_write,
    questions_read_verified,
)

PAYLOAD = {
    "seed": 1,
    "now": "2026-11-20T12:00:00+00:00",
    "budget": 900,
    "designs": ["retrieval"],
    "questions": [
        {
            "id": 1,
            "pair_id": 999_999,
            "category": "empty_month",
            "message": "What did we see in July 2026?",
            "expected": {"year": 2026, "month": 7},
        }
    ],
}


def test_a_registered_question_file_reads_back_with_its_hash(tmp_path):
    path = tmp_path / "questions.json"
    digest = questions_file_write(payload=PAYLOAD, path=path)
    payload, checked = questions_read_verified(path)
    assert checked == digest
    assert payload["questions"][0]["expected"] == {"year": 2026, "month": 7}
    assert hash_path(path).read_text().startswith(digest)


def test_a_question_file_changed_after_registration_is_refused(tmp_path):
    path = tmp_path / "questions.json"
    questions_file_write(payload=PAYLOAD, path=path)
    changed = json.loads(path.read_text())
    changed["questions"][0]["expected"]["month"] = 8  # a quiet edit of one expectation
    path.write_text(json.dumps(changed, ensure_ascii=False, indent=1, sort_keys=True))
    with pytest.raises(QuestionFileTampered):
        questions_read_verified(path)


def test_grading_never_starts_on_a_tampered_file(tmp_path):
    path = tmp_path / "questions.json"
    questions_file_write(payload=PAYLOAD, path=path)
    path.write_bytes(path.read_bytes().replace(b"July", b"June"))
    # bench_run checks the hash before it touches the database or any design
    with pytest.raises(QuestionFileTampered):
        bench_run(questions_file=path)


def test_the_command_refuses_a_tampered_question_file(tmp_path):
    path = tmp_path / "questions.json"
    questions_file_write(payload=PAYLOAD, path=path)
    path.write_bytes(path.read_bytes() + b" ")
    with pytest.raises(CommandError, match="changed after it was registered"):
        call_command("bench_memory", questions=str(path), out=str(tmp_path / "out"))
