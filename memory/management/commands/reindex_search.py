"""`manage.py reindex_search`: rewrite every episode's search document (derived data).

Run it after a change to how search documents are made (stop lists, stemmers, the
language data): the memory block's full-text pool reads them.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memory.models import EpisodeIndex
from memory.services import episode_index_search_rebuild


class Command(BaseCommand):
    help = "Recompute every episode's full-text search document with the current language data."

    def add_arguments(self, parser):
        parser.add_argument("--batch-size", type=int, default=2_000)

    def handle(self, *args, **options):
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1")
        total = EpisodeIndex.objects.count()
        with tqdm(total=total, desc="search documents", unit="row", disable=not total) as bar:
            written = episode_index_search_rebuild(
                batch_size=options["batch_size"], progress=bar.update
            )
        self.stdout.write(f"{written} search documents rewritten")
