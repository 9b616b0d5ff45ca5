"""`manage.py scenarios`: the repeatable scenarios of R-8.1, as a pass/fail table.

Each scenario builds its own fresh student-subject pair(s) in the configured database
(organization `scenarios`), so the command can run again and again. With `--scratch`
they run in a throwaway database instead (created, migrated, dropped: nothing is left in
the configured one; `make demo` runs them so). Exits non-zero when any scenario fails.
"""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand

from memory.models import Organization
from memory.services import organization_create
from tutorbrain.evaluation.integration import tasks_inline
from tutorbrain.evaluation.scenarios import SCENARIOS, scenarios_run, scenarios_table

SCENARIO_ORG_SLUG = "scenarios"


def scenario_organization() -> Organization:
    found = Organization.objects.filter(slug=SCENARIO_ORG_SLUG).first()
    return found or organization_create(name="Scenario runs", slug=SCENARIO_ORG_SLUG)


def scenarios_in_scratch(*, only=None, out, err) -> int:
    """Migrate a scratch database, run the scenarios there, drop it; the exit status."""
    from tutorbrain.evaluation.scratch import manage_in, scratch_database

    with scratch_database() as database:
        migrated = manage_in(database, "migrate", "--no-input", "-v", "0")
        if migrated.returncode != 0:
            err.write(f"could not migrate the scratch database: {migrated.stderr.strip()}")
            return 1
        run = manage_in(database, "scenarios", *(["--only", *only] if only else []))
        out.write(run.stdout.rstrip("\n"))
        if run.returncode != 0:
            err.write(run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "failed")
        return run.returncode


class Command(BaseCommand):
    help = (
        "Run the memory scenarios (graded on ids and explicit lines); non-zero exit on a failure."
    )

    def add_arguments(self, parser):
        parser.add_argument("--only", nargs="*", choices=sorted(SCENARIOS), help="run these only")
        parser.add_argument(
            "--scratch",
            action="store_true",
            help="run in a throwaway database beside the configured one; leave nothing behind",
        )

    def handle(self, *args, **options):
        if options["scratch"]:
            sys.exit(scenarios_in_scratch(only=options["only"], out=self.stdout, err=self.stderr))
        with tasks_inline():
            results = scenarios_run(organization=scenario_organization(), only=options["only"])
        self.stdout.write(scenarios_table(results))
        if not all(r.passed for r in results):
            self.stderr.write(f"{sum(not r.passed for r in results)} scenario run(s) failed")
            sys.exit(1)
