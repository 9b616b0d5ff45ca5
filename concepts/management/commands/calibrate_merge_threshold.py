"""Measure the embedding merge thresholds of the running embedder (R-2.3)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from concepts import merge
from memory import indexing


class Command(BaseCommand):
    help = (
        "Embed the labelled same/different concept-name pairs (concepts/data/merge_pairs.csv) "
        "with the configured embedder, print every cosine, and store the calibrated "
        "thresholds in concepts/data/merge_thresholds.json."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="measure, do not store")

    def handle(self, *args, **options):
        model_name = indexing.embed_model_name()
        calibration = merge.calibrate(
            pairs=merge.labelled_pairs(), embed=indexing.embed, model_name=model_name
        )
        for a, b, same, cosine, ratio in sorted(calibration.scores, key=lambda s: -s[3]):
            label = "same     " if same else "different"
            self.stdout.write(f"{cosine:6.3f}  spelling {ratio:4.2f}  {label}  {a} / {b}")
        summary = calibration.as_json()
        self.stdout.write("")
        self.stdout.write(f"embedder: {model_name}")
        for key, value in summary.items():
            self.stdout.write(f"  {key}: {value}")
        if not options["dry_run"]:
            merge.calibration_store(calibration)
            self.stdout.write(f"stored in {merge.THRESHOLDS_FILE}")
