"""`manage.py scenarios`: the repeatable scenarios of R-8.1, as a pass/fail table.

Each scenario builds its own fresh student-subject pair(s) in the configured database
(organization `scenarios`), so the command can run again and again. Exits non-zero when
any scenario fails.
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


class Command(BaseCommand):
    help = (
        "Run the memory scenarios (graded on ids and explicit lines); non-zero exit on a failure."
    )

    def add_arguments(self, parser):
        parser.add_argument("--only", nargs="*", choices=sorted(SCENARIOS), help="run these only")

    def handle(self, *args, **options):
        with tasks_inline():
            results = scenarios_run(organization=scenario_organization(), only=options["only"])
        self.stdout.write(scenarios_table(results))
        if not all(r.passed for r in results):
            self.stderr.write(f"{sum(not r.passed for r in results)} scenario run(s) failed")
            sys.exit(1)
