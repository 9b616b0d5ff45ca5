"""Replay a real history (JSON Lines, one event per line) into the episode log."""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memory.history import HistoryLineError, history_count_lines, history_import

EXIT_BAD_INPUT = 2


class Command(BaseCommand):
    help = (
        "Import FILE.jsonl (one event per line: the API's fields plus organization, student, "
        "subject) through the batch append service. Every line is checked first; a bad line "
        "stops the import with its line number before anything is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the history, JSON Lines (UTF-8)")
        parser.add_argument(
            "--no-embed",
            action="store_true",
            help="skip embeddings (run `manage.py reembed` afterwards)",
        )
        parser.add_argument("--batch-size", type=int, default=0, help="events per transaction")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args, **options):
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"no file {str(path)!r}", returncode=EXIT_BAD_INPUT)
        if options["batch_size"] < 0:
            raise CommandError("--batch-size must be positive", returncode=EXIT_BAD_INPUT)
        try:
            total = history_count_lines(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(
                f"cannot read {str(path)!r}: {exc}", returncode=EXIT_BAD_INPUT
            ) from exc
        bars = {
            name: tqdm(
                total=total,
                unit="event",
                desc=name,
                file=sys.stderr,
                disable=options["no_progress"],
                delay=0.5,
            )
            for name in ("checking", "importing")
        }
        try:
            result = history_import(
                path=path,
                embed=not options["no_embed"],
                batch_size=options["batch_size"] or None,
                progress=bars["importing"].update,
                check_progress=bars["checking"].update,
            )
        except HistoryLineError as exc:
            raise CommandError(f"{path}: {exc}", returncode=EXIT_BAD_INPUT) from exc
        finally:
            for bar in bars.values():
                bar.close()
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {result.lines} events into {len(result.chains)} chains: "
                f"{result.appended} appended, {result.replayed} already present (same "
                "idempotency key)."
            )
        )
