"""Measure whether beliefs' p_right is calibrated and ranks well (issue #12).

    manage.py evaluate_beliefs FILE [--cuts FILE] [--history-share 0.7] [--json OUT] [--keep]
                               [--no-learning] [--live] [--skip-incomplete]
    manage.py evaluate_beliefs --simulate SEED [--setting default] [--write FILE]
    manage.py evaluate_beliefs --demo STUDENTS [--seed 1] [--write FILE]

FILE is a CSV (header: student, concept, verdict, time[, cut][, p_true]) or JSON lines
with the same keys (column names case-blind, or common aliases: user_id, skill_name,
correct, timestamp, …; a CSV may separate them by tabs, ";" or "|");
time is ISO 8601 (UTC when it names no zone) or Unix seconds or milliseconds; verdict
right, partial or wrong (also 1/0.5/0, correct/incorrect, true/false). A student's cut
comes from the `cut` column (the same on each of their rows) or from `--cuts FILE`
(student, cut; a student it names with no check in the log is left out, and said); a
student without one is cut at the check number ⌈share·n⌉. A row that
leaves a field empty stops the command naming its line, unless `--skip-incomplete`. `--simulate`
evaluates the seeded simulated population (beliefs/simulation.py), which carries the
generating model's own probabilities, and also scores that model's forecast from the
checks before each cut (the ceiling for a belief fixed at the cut; logistic settings
only, not `knowledge`/`knowledge-mastery`); `--demo` evaluates
checks of histories from the demo's own generator (tutorbrain/evaluation/generator.py,
the cell-biology template).

The beliefs are derived through the real services in a scratch organization inside one
transaction that is rolled back at the end (`--keep` commits it instead). Prints AUC, ECE
and a 10-bin reliability table for the beliefs beside the baselines of the same run.
`--live` derives them as an import would (each student's checks as they are appended,
then one night's learning fit and the re-derivation it triggers) instead of re-deriving
every pair twice.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from beliefs import evaluation
from beliefs.simulation import SETTINGS, Setting, forecast_at_cut, simulate


class _Rollback(Exception):
    pass


def _forecast(seed: int, setting: Setting, split: evaluation.Split) -> list[float]:
    return forecast_at_cut(
        seed, setting, history=split.history, targets=split.targets, cuts=split.cuts
    )


def demo_checks(*, students: int, seed: int) -> list[evaluation.LoggedCheck]:
    """Checks of `students` histories from the demo's generator (cell biology, English)."""
    from tutorbrain.evaluation.content import EN_CELLS
    from tutorbrain.evaluation.generator import history_plan

    rows = []
    for index in range(students):
        plan = history_plan(
            seed=seed,
            index=index,
            template=EN_CELLS,
            subject_external_id="cell-biology",
            student_external_id=f"demo-{index:04d}",
        )
        for event in plan.events:
            if event.kind == "check" and event.concepts:
                rows.append(
                    evaluation.LoggedCheck(
                        student=plan.student_external_id,
                        concept=event.concepts[0],
                        verdict=event.verdict,
                        time=event.occurred_at,
                    )
                )
    return rows


class Command(BaseCommand):
    help = "AUC, ECE and a reliability table of beliefs' p_right beside baselines (issue #12)."

    def add_arguments(self, parser):
        parser.add_argument(
            "file",
            nargs="?",
            help="CSV or JSONL log of checks: student, concept, verdict (right/partial/wrong "
            "or 1/0.5/0), time (ISO 8601, UTC if no zone, or Unix seconds or ms), optional cut",
        )
        parser.add_argument(
            "--cuts",
            metavar="FILE",
            help="CSV or JSONL of (student, cut): each named student's cut; the others "
            "are cut by --history-share",
        )
        parser.add_argument(
            "--skip-incomplete",
            action="store_true",
            help="leave out the rows of FILE that leave student, concept, verdict or time "
            "empty (an export's answers to items tagged with no skill), and say how many",
        )
        parser.add_argument("--simulate", type=int, metavar="SEED", help="simulated population")
        parser.add_argument("--setting", default="default", help=f"one of {', '.join(SETTINGS)}")
        parser.add_argument("--demo", type=int, metavar="STUDENTS", help="demo generator")
        parser.add_argument("--seed", type=int, default=1, help="seed of --demo")
        parser.add_argument("--write", help="also write the log used to this CSV file")
        parser.add_argument("--history-share", type=float, default=evaluation.DEFAULT_HISTORY_SHARE)
        parser.add_argument("--passes", type=int, default=2, help="re-derivation passes")
        parser.add_argument(
            "--no-learning",
            action="store_true",
            help="derive without fitting the learning model (the Beta posterior alone)",
        )
        parser.add_argument(
            "--live",
            action="store_true",
            help="import the histories student after student, each derived as it is appended, "
            "then one night's fit and the re-derivation it triggers (not --passes)",
        )
        parser.add_argument("--json", help="write the numbers to this JSON file")
        parser.add_argument("--keep", action="store_true", help="keep the scratch organization")

    def handle(self, *args, **options):
        sources = [options["file"], options["simulate"], options["demo"]]
        if sum(s is not None for s in sources) != 1:
            raise CommandError("give exactly one of FILE, --simulate SEED, --demo STUDENTS")
        if (options["cuts"] or options["skip_incomplete"]) and options["file"] is None:
            raise CommandError("--cuts and --skip-incomplete go with a FILE")
        if not 0.0 < options["history_share"] < 1.0:
            raise CommandError("--history-share must be between 0 and 1 (exclusive)")
        if options["passes"] < 1:
            raise CommandError("--passes must be at least 1")
        forecast = None
        try:
            if options["file"] is not None:
                cuts = Path(options["cuts"]) if options["cuts"] else None
                incomplete: list[str] | None = [] if options["skip_incomplete"] else None
                uncut: list[str] = []
                checks = evaluation.read_log(
                    Path(options["file"]), cuts, incomplete=incomplete, uncut=uncut
                )
                if uncut:
                    self.stderr.write(
                        f"left out {len(uncut)} cuts of students with no check in the log "
                        f"(the first: {uncut[0]})"
                    )
                if incomplete:
                    self.stderr.write(
                        f"left out {len(incomplete)} rows that miss a field "
                        f"(the first: {incomplete[0]})"
                    )
            elif options["simulate"] is not None:
                if options["setting"] not in SETTINGS:
                    raise CommandError(
                        f"--setting must be one of {', '.join(SETTINGS)}: {options['setting']!r}"
                    )
                setting = SETTINGS[options["setting"]]
                checks = [
                    evaluation.LoggedCheck(r.student, r.concept, r.verdict, r.time, r.p_true)
                    for r in simulate(options["simulate"], setting)
                ]
                if setting.model == "logistic":  # the knowledge model has no forecast
                    forecast = functools.partial(_forecast, options["simulate"], setting)
            else:
                if options["demo"] < 2:
                    raise CommandError("--demo needs at least 2 students")
                checks = demo_checks(students=options["demo"], seed=options["seed"])
        except evaluation.LogError as exc:
            raise CommandError(str(exc)) from exc
        if options["write"]:
            count = evaluation.write_log(Path(options["write"]), checks)
            self.stderr.write(f"wrote {count} checks to {options['write']}")

        def progress(step, done, total):
            if done % 50 == 0 or done == total:
                sys.stderr.write(f"\r  {step}: {done}/{total}")
                if done == total:
                    sys.stderr.write("\n")

        report = None
        try:
            with transaction.atomic():
                report = evaluation.evaluate(
                    checks,
                    history_share=options["history_share"],
                    passes=options["passes"],
                    learn=not options["no_learning"],
                    live=options["live"],
                    progress=progress,
                    forecast=forecast,
                )
                if not options["keep"]:
                    raise _Rollback
        except _Rollback:
            pass
        except evaluation.LogError as exc:
            raise CommandError(str(exc)) from exc
        assert report is not None
        self.stdout.write(evaluation.format_report(report))
        if options["json"]:
            Path(options["json"]).write_text(json.dumps(report.as_dict(), indent=2))
