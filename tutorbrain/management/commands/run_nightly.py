"""`manage.py run_nightly [--date D] [--student S --subject T] [--through-workers]`.

Runs the same nightly cycle as Celery beat, now: in this process by default, or by
sending the same tasks to the workers. Bad input exits non-zero with one line.
"""

from __future__ import annotations

import datetime as dt

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from memory.models import Pair
from tutorbrain.nightly import cycle, services


class Command(BaseCommand):
    help = "Run the nightly cycle (consolidation, decay, calibration, verification, self-model)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--date", help="the day to consolidate, YYYY-MM-DD (default: yesterday)"
        )
        parser.add_argument("--student", help="one student's external id (with --subject)")
        parser.add_argument("--subject", help="one subject's external id (with --student)")
        parser.add_argument(
            "--organization", help="organization slug, when the external ids are not unique"
        )
        parser.add_argument(
            "--through-workers",
            action="store_true",
            help="send the tasks to the Celery workers instead of running them here",
        )
        parser.add_argument(
            "--no-embed",
            action="store_true",
            help="write consolidation notes without a vector (re-embed later with reembed)",
        )

    def handle(self, *args, **options):
        day = self._day(options["date"])
        pair_ids = self._pair_ids(options)
        if options["through_workers"]:
            from tutorbrain import tasks

            if pair_ids is None:
                result = tasks.nightly_fan_out.apply_async(kwargs={"day": day.isoformat()})
                self.stdout.write(f"{day}: fan-out sent to the workers (task {result.id})")
                return
            for pair_id in cycle.fan_out_prepare(day=day, pair_ids=pair_ids):
                tasks.nightly_pair.apply_async(args=[pair_id, day.isoformat()])
            self.stdout.write(f"{day}: {len(pair_ids)} pair task(s) sent to the workers")
            return
        if pair_ids is None:
            fan = cycle.night_run(day=day, embed=not options["no_embed"])
            self.stdout.write(f"{day}: {len(fan.pair_ids)} pair(s) run")
            return
        for pair_id in pair_ids:
            outcome = cycle.pair_cycle_run(pair_id=pair_id, day=day, embed=not options["no_embed"])
            self.stdout.write(
                f"{day}: pair {pair_id} {outcome.status}; steps {', '.join(outcome.steps_run) or '-'}"
            )
            for failure in outcome.failures:
                self.stderr.write(f"  {failure['step']} failed: {failure['error']}")

    def _day(self, value: str | None) -> dt.date:
        if not value:
            return services.day_before(timezone.now())
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise CommandError(f"--date: {value!r} is not a date (YYYY-MM-DD)") from None

    def _pair_ids(self, options) -> list[int] | None:
        student, subject = options["student"], options["subject"]
        if not student and not subject:
            if options["organization"]:
                raise CommandError("--organization: only with --student and --subject")
            return None
        if not (student and subject):
            raise CommandError("--student and --subject go together: give both or neither")
        pairs = Pair.objects.filter(student__external_id=student, subject__external_id=subject)
        if options["organization"]:
            pairs = pairs.filter(student__organization__slug=options["organization"])
        found = list(pairs.values_list("pk", flat=True)[:2])
        if not found:
            raise CommandError(
                f"--student/--subject: no pair of student {student!r} and subject {subject!r}"
            )
        if len(found) > 1:
            raise CommandError(
                "--organization: that student and subject exist in several organizations"
            )
        return found
