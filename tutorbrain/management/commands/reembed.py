from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from tutorbrain import embedder
from tutorbrain.reembed import column_dimensions, reembed_target, resize_column, targets


class Command(BaseCommand):
    help = "Recompute derived vectors with the configured embedder (after a model change)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--all", action="store_true", help="re-embed every row, not only stale ones"
        )
        parser.add_argument("--batch-size", type=int, default=256)

    def handle(self, *args, **options):
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1")
        model = embedder.get_embedder()
        name = embedder.model_name()
        for target in targets():
            current = column_dimensions(target)
            if current != model.dimensions:
                self.stdout.write(
                    f"{target.label}: resizing vectors {current} -> {model.dimensions}"
                )
                resize_column(target, model.dimensions)
            total = target.model._default_manager.count()
            with tqdm(total=total, desc=target.label, unit="row", disable=not total) as bar:
                written = reembed_target(
                    target,
                    embed=model.embed,
                    model_name=name,
                    batch_size=options["batch_size"],
                    only_stale=not options["all"],
                    progress=bar.update,
                )
            self.stdout.write(f"{target.label}: {written} vectors written with {name}")
