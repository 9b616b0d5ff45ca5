"""import_history: a real history replayed through the batch service, line by line."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory.history import HistoryLineError, history_import
from memory.models import Episode, EpisodeIndex, Pair, Student
from memory.selectors import chain_report
from memory.services import subject_file_register
from tests.factories import OrganizationFactory, SubjectFactory

pytestmark = pytest.mark.django_db


def write(tmp_path, rows, name="history.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def event(org, student="s-1", subject="bio", i=0, **fields):
    return {
        "organization": org.slug,
        "student": student,
        "subject": subject,
        "kind": "question",
        "summary": f"question {i}",
        "occurred_at": f"2026-03-{1 + i % 28:02d}T10:00:00Z",
        **fields,
    }


def test_a_history_is_replayed_per_chain_in_file_order(tmp_path):
    org = OrganizationFactory()
    rows = []
    for i in range(30):
        rows.append(event(org, student=f"s-{i % 3}", i=i, idempotency_key=f"line-{i}"))
    rows.append(
        event(org, student="s-0", i=99, kind="check", verdict="wrong", summary="check", topic="t")
    )
    path = write(tmp_path, rows)
    out = StringIO()
    call_command("import_history", str(path), "--no-progress", "--batch-size", "4", stdout=out)
    assert "Imported 31 events into 3 chains: 31 appended" in out.getvalue()
    for pair in Pair.objects.all():
        assert chain_report(pair=pair).intact
    pair0 = Pair.objects.get(student__external_id="s-0")
    summaries = list(
        Episode.objects.filter(pair=pair0).order_by("seq").values_list("summary", flat=True)
    )
    assert summaries[:3] == ["question 0", "question 3", "question 6"]
    assert summaries[-1] == "check"
    assert EpisodeIndex.objects.filter(embedding__isnull=False).count() == 31


def test_a_rerun_appends_nothing_twice_thanks_to_idempotency_keys(tmp_path):
    org = OrganizationFactory()
    path = write(tmp_path, [event(org, i=i, idempotency_key=f"k{i}") for i in range(5)])
    history_import(path=path, embed=False)
    result = history_import(path=path, embed=False)
    assert (result.appended, result.replayed) == (0, 5)
    assert Episode.objects.count() == 5


def test_a_bad_line_stops_the_import_with_its_number_and_nothing_is_written(tmp_path):
    org = OrganizationFactory()
    rows = [event(org, i=i) for i in range(5)]
    rows.insert(3, event(org, i=50, kind="check"))  # a check without a verdict: line 4
    path = write(tmp_path, rows)
    with pytest.raises(CommandError) as caught:
        call_command("import_history", str(path), "--no-progress", "--batch-size", "2")
    assert caught.value.returncode == 2
    assert "line 4: verdict: is required for a check" in str(caught.value)
    assert Episode.objects.count() == 0 and Student.objects.count() == 0


def test_a_bad_line_leaves_an_existing_chain_as_it_was(tmp_path):
    org = OrganizationFactory()
    history_import(path=write(tmp_path, [event(org, i=0)], "first.jsonl"), embed=False)
    pair = Pair.objects.get()
    head = (pair.head_seq, pair.head_hash)
    rows = [event(org, i=1), event(org, i=2), "{not json"]
    with pytest.raises(HistoryLineError) as caught:
        history_import(path=write(tmp_path, rows, "second.jsonl"), embed=False)
    assert caught.value.lineno == 3 and "not valid JSON" in str(caught.value)
    pair.refresh_from_db()
    assert (pair.head_seq, pair.head_hash) == head


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"organization": "no-such-school"}, "organization: no organization"),
        ({"kind": "answer", "citations": [{"file": "absent.pdf"}]}, "citations"),
        ({"kind": "answer", "recalled_ids": [123456]}, "recalled_ids"),
        ({"verdit": "wrong"}, "verdit: is not a field of an event"),
        ({"predicted_mastery": 2}, "predicted_mastery"),
        ({"occurred_at": "yesterday"}, "occurred_at"),
    ],
)
def test_each_kind_of_bad_line_is_named_with_its_field(tmp_path, fields, message):
    org = OrganizationFactory()
    subject = SubjectFactory(organization=org, external_id="bio")
    subject_file_register(subject=subject, name="cells.pdf", content=b"x")
    path = write(tmp_path, [event(org, i=0), event(org, i=1, **fields)])
    with pytest.raises(HistoryLineError) as caught:
        history_import(path=path, embed=False)
    assert caught.value.lineno == 2
    assert message in str(caught.value)
    assert Episode.objects.count() == 0


def test_repeated_idempotency_keys_in_one_chain_are_refused(tmp_path):
    org = OrganizationFactory()
    path = write(
        tmp_path, [event(org, i=0, idempotency_key="k"), event(org, i=1, idempotency_key="k")]
    )
    with pytest.raises(
        HistoryLineError, match="line 2: idempotency_key: repeats the key of line 1"
    ):
        history_import(path=path, embed=False)


def test_a_missing_file_is_one_readable_line(tmp_path):
    with pytest.raises(CommandError, match="no file") as caught:
        call_command("import_history", str(tmp_path / "absent.jsonl"))
    assert caught.value.returncode == 2
