"""Re-derive beliefs from the logged checks (R-4.5).

manage.py rederive_beliefs --student S --subject T [--organization SLUG]
manage.py rederive_beliefs --all [--queue]
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from beliefs.models import Rederivation
from beliefs.services import (
    RederivationRefused,
    beliefs_rederive,
    beliefs_rederive_many,
    beliefs_rederive_schedule,
)
from memory.models import Pair


class Command(BaseCommand):
    help = "Retire the current beliefs and replay the logged checks under today's rules."

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--student", help="the student's external id (with --subject)")
        target.add_argument("--all", action="store_true", help="every student-subject")
        parser.add_argument("--subject", help="the subject's external id (with --student)")
        parser.add_argument(
            "--organization", help="organization slug, when the ids exist in several"
        )
        parser.add_argument(
            "--queue", action="store_true", help="with --all: queue Celery tasks instead"
        )

    def handle(self, *args, **options):
        if options["all"]:
            return self._all(queue=options["queue"])
        if not options["subject"]:
            raise CommandError("--student needs --subject")
        pair = self._pair(options["student"], options["subject"], options["organization"])
        try:
            result = beliefs_rederive(pair=pair, source=Rederivation.Source.COMMAND)
        except RederivationRefused as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{pair}: {result.describe()}")
        return None

    def _pair(self, student: str, subject: str, organization: str | None) -> Pair:
        pairs = Pair.objects.select_related("student__organization", "subject").filter(
            student__external_id=student, subject__external_id=subject
        )
        if organization:
            pairs = pairs.filter(student__organization__slug=organization)
        found = list(pairs[:10])
        where = f" in organization {organization!r}" if organization else ""
        if not found:
            raise CommandError(
                f"no student {student!r} with subject {subject!r}{where}: nothing re-derived"
            )
        if len(found) > 1:
            slugs = ", ".join(sorted(p.student.organization.slug for p in found))
            raise CommandError(
                f"student {student!r} with subject {subject!r} exists in several "
                f"organizations ({slugs}): add --organization"
            )
        return found[0]

    def _all(self, *, queue: bool):
        pair_ids = list(Pair.objects.order_by("pk").values_list("pk", flat=True))
        if queue:
            tasks = beliefs_rederive_schedule(pair_ids=pair_ids)
            self.stdout.write(f"queued {len(pair_ids)} student-subjects in {tasks} tasks")
            return
        batch = beliefs_rederive_many(pair_ids=pair_ids, source=Rederivation.Source.COMMAND)
        for result in batch.done:
            self.stdout.write(result.describe())
        for pair_id, reason in batch.refused:
            self.stderr.write(f"pair {pair_id} not re-derived: {reason}")
        self.stdout.write(f"re-derived {len(batch.done)} of {len(pair_ids)} student-subjects")
        if batch.refused:
            raise CommandError(f"{len(batch.refused)} student-subjects were not re-derived")
