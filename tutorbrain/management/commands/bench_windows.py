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

import json
import re
from collections import Counter
from datetime import UTC, datetime, timedelta

from django.core.management.base import BaseCommand, CommandError

from tutorbrain.block.timewindow import parse_time_window

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_DIA = re.compile(r"^D(\d+):(\d+)$")


def turn_times(conversation: dict) -> tuple[dict[str, datetime], datetime]:
    """dia_id -> occurred_at, and the protocol's `now` (a day after the last session)."""
    times: dict[str, datetime] = {}
    sessions: list[datetime] = []
    for key, value in conversation.items():
        match = re.fullmatch(r"session_(\d+)_date_time", key)
        turns = conversation.get(f"session_{match.group(1)}") if match else None
        if not turns:
            continue  # some files carry dates past their last session
        started = datetime.strptime(value, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
        sessions.append(started)
        for turn in turns:
            k = int(_DIA.match(turn["dia_id"]).group(2))  # type: ignore[union-attr]
            times[turn["dia_id"]] = started + timedelta(seconds=k)
    return times, max(sessions) + timedelta(days=1)


def evidence_ids(qa: dict) -> list[str]:
    out: list[str] = []
    for item in qa.get("evidence", []):
        out.extend(p.strip() for p in re.split(r"[;,]", item) if _DIA.match(p.strip()))
    return out


class Command(BaseCommand):
    help = "Count questions whose time window leaves their evidence outside (LoCoMo layout)."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--language", default="en", help="the fallback language")
        parser.add_argument("--show", action="store_true", help="print every window opened")

    def handle(self, *args, **options):
        try:
            with open(options["file"], encoding="utf-8") as f:
                data = json.load(f)
            if not isinstance(data, list):
                raise ValueError("expected a list of conversations")
        except (OSError, ValueError) as exc:
            raise CommandError(f"file: cannot read {options['file']}: {exc}") from exc
        rows: dict[int, Counter] = {c: Counter() for c in CATEGORIES}
        for sample in data:
            times, now = turn_times(sample["conversation"])
            for qa in sample["qa"]:
                category, ids = qa.get("category"), evidence_ids(qa)
                if category not in CATEGORIES or not ids:
                    continue
                row = rows[category]
                row["questions"] += 1
                window = parse_time_window(
                    qa["question"],
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
                    self.stdout.write(f"  {qa['question'][:80]!r} -> {window.label}: {state}")
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
