"""How time windows treat real questions: `manage.py bench_windows FILE [--language en]`.

FILE is a conversation file in the LoCoMo layout (sessions of turns with `dia_id`,
`session_<N>_date_time`, `qa` with `evidence`). For every question of categories 1–4
with evidence, the window `parse_time_window` opens (with `now` one day after the last
session, as the recall benchmark's protocol says; a window after `now` is ignored as in
the block) is compared with the dates of the evidence turns (each turn at its session's
time + k seconds for `D<N>:<k>`, the protocol's `occurred_at`). A window that leaves an
evidence turn outside is recall the block cannot have, whatever the ranking.

No database, no model: it reads the file and the parser only.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from tutorbrain.block.timewindow import parse_time_window
from tutorbrain.evaluation.recall import CATEGORIES, ConversationFileError, conversations_read


class Command(BaseCommand):
    help = "Count questions whose time window leaves their evidence outside (LoCoMo layout)."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--language", default="en", help="the fallback language")
        parser.add_argument("--show", action="store_true", help="print every window opened")

    def handle(self, *args, **options):
        try:
            conversations, _ = conversations_read(Path(options["file"]))
        except ConversationFileError as exc:
            raise CommandError(f"file: cannot read {options['file']}: {exc}") from exc
        rows: dict[int, Counter] = {c: Counter() for c in CATEGORIES}
        for conversation in conversations:
            # The recall benchmark's protocol: each turn at its session's time + k seconds,
            # `now` a day after the conversation.
            times = {turn.dia_id: turn.occurred_at for turn in conversation.turns}
            now = conversation.last_at + timedelta(days=1)
            for qa in conversation.questions:
                ids = qa.evidence
                row = rows[qa.category]
                row["questions"] += 1
                window = parse_time_window(
                    qa.question,
                    now=now,
                    timezone_name="UTC",
                    fallback_language=options["language"],
                )
                if window is None:
                    continue
                if window.after(now):
                    row["ignored"] += 1
                    outside = 0
                else:
                    row["windows"] += 1
                    outside = sum(
                        1 for i in ids if i in times and not window.start <= times[i] < window.end
                    )
                    row["evidence"] += len(ids)
                    row["outside"] += outside
                    row["lost"] += 1 if outside else 0
                if options["show"]:
                    state = "ignored (after now)" if window.after(now) else f"{outside} outside"
                    self.stdout.write(f"  {qa.question[:80]!r} -> {window.label}: {state}")
        self.stdout.write(
            "| category | questions | windows applied | questions with evidence outside "
            "| evidence turns outside | windows after now (ignored) |"
        )
        self.stdout.write("|---|---|---|---|---|---|")
        total: Counter = Counter()
        for category, name in CATEGORIES.items():
            total.update(rows[category])
            self.stdout.write(self._row(f"{category} {name}", rows[category]))
        self.stdout.write(self._row("all", total))

    @staticmethod
    def _row(name: str, row: Counter) -> str:
        return (
            f"| {name} | {row['questions']} | {row['windows']} | {row['lost']} "
            f"| {row['outside']} / {row['evidence']} | {row['ignored']} |"
        )
