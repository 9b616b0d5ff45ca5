"""`manage.py bench_recall FILE`: evidence recall on real conversations (issue #11, R-5.3).

Run it in its own database, never a test database:

    TUTORBRAIN_DB_NAME=tutorbrain_recall .venv/bin/python manage.py bench_recall \\
        ../shared/devsets/locomo-dev/locomo-dev5.json --budget 1500 --budget 900

Every turn is appended through the episode services (reused on a rerun of the same
file), every question with evidence is asked of the block and of the BM25, vector and
fused baselines over the same turns, budget and token counter; the table is printed
(see tutorbrain.evaluation.recall).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from tutorbrain.evaluation.integration import tasks_inline
from tutorbrain.evaluation.recall import (
    ConversationFileError,
    conversations_read,
    recall_run,
    report_markdown,
)

DEFAULT_BUDGETS = (1500, 900)


class Command(BaseCommand):
    help = "Evidence recall of the memory block beside BM25, vector and fused baselines."

    def add_arguments(self, parser):
        parser.add_argument("file", help="conversations in the LoCoMo / REALTALK JSON layout")
        parser.add_argument("--budget", type=int, action="append", help="token budget (repeat)")
        parser.add_argument(
            "--now", help="ISO time of the questions (default: a day after each conversation)"
        )
        parser.add_argument("--conversations", nargs="*", help="only these sample ids")
        parser.add_argument(
            "--limit", type=int, help="at most this many questions per conversation"
        )
        parser.add_argument(
            "--details", help="write every question's recalled ids to this JSON file"
        )

    def handle(self, *args, **options):
        budgets = options["budget"] or list(DEFAULT_BUDGETS)
        if any(b <= 0 for b in budgets):
            raise CommandError("--budget must be a positive number of tokens")
        if options["limit"] is not None and options["limit"] <= 0:
            raise CommandError("--limit must be positive")
        now = None
        if options["now"]:
            try:
                now = datetime.fromisoformat(options["now"])
            except ValueError as exc:
                raise CommandError(f"--now: not an ISO date-time: {options['now']!r}") from exc
            if now.tzinfo is None:
                raise CommandError("--now: give a time zone (e.g. 2023-11-01T00:00:00+00:00)")
        try:
            conversations, digest = conversations_read(Path(options["file"]))
        except ConversationFileError as exc:
            raise CommandError(str(exc)) from exc
        if options["conversations"]:
            wanted = set(options["conversations"])
            unknown = wanted - {c.sample_id for c in conversations}
            if unknown:
                raise CommandError(
                    f"--conversations: not in the file: {', '.join(sorted(unknown))}"
                )
            conversations = [c for c in conversations if c.sample_id in wanted]
        from tutorbrain.block.format import BudgetTooSmall

        with tasks_inline():
            try:
                report = recall_run(
                    conversations=conversations,
                    digest=digest,
                    budgets=budgets,
                    now=now,
                    limit=options["limit"],
                    progress=lambda line: self.stderr.write(line),
                    keep_details=bool(options["details"]),
                )
            except BudgetTooSmall as exc:
                raise CommandError(f"--budget: {exc}") from exc
        self.stdout.write(
            f"{len(conversations)} conversation(s), {report.turns:,} turns, "
            f"{report.questions:,} questions with evidence\n"
        )
        self.stdout.write(report_markdown(report))
        if options["details"]:
            Path(options["details"]).write_text(json.dumps(report.details, indent=1))
