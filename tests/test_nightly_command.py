from __future__ import annotations

import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from memory.models import Episode
from tests.conftest import ROOT
from tests.nightly_helpers import DAY, a_day_of_activity

pytestmark = pytest.mark.django_db


def test_run_nightly_runs_one_pair_now(pair):
    a_day_of_activity(pair)

    call_command(
        "run_nightly",
        "--date",
        DAY.isoformat(),
        "--student",
        pair.student.external_id,
        "--subject",
        pair.subject.external_id,
        "--no-embed",
    )

    assert Episode.objects.filter(pair=pair, kind="consolidation").count() == 1


def test_run_nightly_runs_the_whole_night_in_process(pair):
    a_day_of_activity(pair)

    call_command("run_nightly", "--date", DAY.isoformat(), "--no-embed")
    call_command("run_nightly", "--date", DAY.isoformat(), "--no-embed")

    assert Episode.objects.filter(pair=pair, kind="consolidation").count() == 1


def test_a_bad_date_is_refused_naming_the_option():
    with pytest.raises(CommandError, match="--date"):
        call_command("run_nightly", "--date", "2026-02-30")


def test_an_unknown_pair_is_refused_and_nothing_is_written(pair):
    with pytest.raises(CommandError, match="no pair"):
        call_command("run_nightly", "--student", "nobody", "--subject", "nothing")

    assert not Episode.objects.exists()


def test_a_student_without_a_subject_is_refused():
    with pytest.raises(CommandError, match="go together"):
        call_command("run_nightly", "--student", "someone")


def test_bad_input_exits_non_zero_with_one_readable_line():
    done = subprocess.run(
        [sys.executable, "manage.py", "run_nightly", "--date", "yesterday-ish"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "CommandError: --date: 'yesterday-ish' is not a date (YYYY-MM-DD)"
    ]


def test_run_nightly_through_workers_sends_the_same_tasks(pair, settings):
    # The test settings run tasks eagerly; the real-worker path is in test_nightly_worker.
    a_day_of_activity(pair)

    call_command("run_nightly", "--date", DAY.isoformat(), "--through-workers")
    call_command(
        "run_nightly",
        "--date",
        DAY.isoformat(),
        "--student",
        pair.student.external_id,
        "--subject",
        pair.subject.external_id,
        "--through-workers",
    )

    assert Episode.objects.filter(pair=pair, kind="consolidation").count() == 1
