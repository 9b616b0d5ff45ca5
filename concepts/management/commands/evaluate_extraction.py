"""Precision and recall of the concept map of a subject against the sample gold list."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from concepts.evaluation import evaluate, load_gold
from concepts.models import Concept, Prerequisite
from memory.models import Subject

DEFAULT_GOLD = Path(settings.BASE_DIR) / "tests" / "data" / "cell-biology" / "gold.json"


class Command(BaseCommand):
    help = (
        "Compare a subject's map (after load_sample_subject) with the hand-labelled gold "
        "concepts and prerequisite edges; print precision and recall."
    )

    def add_arguments(self, parser):
        parser.add_argument("--org", default="demo")
        parser.add_argument("--subject", default="cell-biology")
        parser.add_argument("--gold", default=str(DEFAULT_GOLD))

    def handle(self, *args, **options):
        subject = Subject.objects.filter(
            organization__slug=options["org"], external_id=options["subject"]
        ).first()
        if subject is None:
            raise CommandError(
                f"no subject {options['subject']!r} in organization {options['org']!r}"
            )
        concepts = [
            (c.name, list(c.aliases))
            for c in Concept.objects.filter(subject=subject).order_by("pk")
        ]
        edges = list(
            Prerequisite.objects.filter(subject=subject).values_list(
                "concept__name", "prerequisite__name"
            )
        )
        result = evaluate(gold=load_gold(Path(options["gold"])), concepts=concepts, edges=edges)
        self.stdout.write(result.concepts.line("concepts"))
        self.stdout.write(result.edges.line("edges"))
        self.stdout.write(f"not in the gold list: {result.unmatched_predicted}")
        self.stdout.write(f"gold concepts missed: {result.missed_gold}")
        self.stdout.write(f"edges not in the gold list: {result.wrong_edges}")
        self.stdout.write(f"gold edges missed: {result.missed_edges}")
