"""Recompute episode chains (optionally against a signed checkpoint file) and record it.

Exit status: 0 every chain intact, 1 a chain is broken, 2 bad input (one line).
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from memory.checkpoints import checkpoint_parse
from memory.errors import InvalidInput
from memory.models import Pair
from memory.services import chain_verify

EXIT_BROKEN = 1
EXIT_BAD_INPUT = 2


class Command(BaseCommand):
    help = (
        "Recompute every episode chain (or one student's, one subject's) and report intact "
        "or the first broken seq with the reason. With --checkpoint FILE also compare each "
        "chain with the signed heads in FILE (catches truncation and whole-chain rewrites). "
        "Exits 1 on a break."
    )

    def add_arguments(self, parser):
        parser.add_argument("--student", default="", help="the student's external id")
        parser.add_argument("--subject", default="", help="the subject's external id")
        parser.add_argument("--organization", default="", help="organization slug")
        parser.add_argument("--checkpoint", default="", metavar="FILE", help="checkpoint file")

    def handle(self, *args, **options):
        pairs = Pair.objects.select_related("student__organization", "subject").order_by("pk")
        if options["organization"]:
            pairs = pairs.filter(student__organization__slug=options["organization"])
        if options["student"]:
            pairs = pairs.filter(student__external_id=options["student"])
        if options["subject"]:
            pairs = pairs.filter(subject__external_id=options["subject"])
        filtered = any(options[k] for k in ("organization", "student", "subject"))
        if filtered and not pairs.exists():
            raise CommandError(
                "no episode chain matches "
                + " ".join(
                    f"--{k} {options[k]!r}"
                    for k in ("organization", "student", "subject")
                    if options[k]
                ),
                returncode=EXIT_BAD_INPUT,
            )

        heads, checkpoint_at = {}, None
        if options["checkpoint"]:
            path = Path(options["checkpoint"])
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(
                    f"cannot read checkpoint {str(path)!r}: {exc}", returncode=EXIT_BAD_INPUT
                ) from exc
            try:
                parsed = checkpoint_parse(text)
            except InvalidInput as exc:
                raise CommandError(
                    f"checkpoint {str(path)!r} {exc.message}", returncode=EXIT_BAD_INPUT
                ) from exc
            heads, checkpoint_at = parsed.by_pair(), parsed.created_at

        now = timezone.now()
        chains = episodes = intact = 0
        broken: list[str] = []
        seen: set[int] = set()
        for pair in pairs.iterator(chunk_size=500):
            seen.add(pair.pk)
            head = heads.get(pair.pk)
            verification = chain_verify(
                pair=pair, checkpoint_head=head, checkpoint_created_at=checkpoint_at, now=now
            )
            chains += 1
            episodes += verification.length
            intact += verification.intact
            if not verification.intact:
                broken.append(
                    f"BROKEN  {pair.student.external_id} · {pair.subject.external_id} "
                    f"({pair.student.organization.slug}, pair {pair.pk}) at seq "
                    f"{verification.broken_seq}: {verification.reason}"
                )
        if heads and not filtered:
            for pair_id in sorted(set(heads) - seen):
                head = heads[pair_id]
                broken.append(
                    f"BROKEN  {head.student} · {head.subject} ({head.organization}, pair "
                    f"{pair_id}): the checkpoint has this chain (seq {head.seq}) but it is gone"
                )

        for line in broken:
            self.stdout.write(self.style.ERROR(line))
        summary = (
            f"Verified {chains} chain{'s' if chains != 1 else ''}, {episodes} episodes: "
            f"{intact} intact, {len(broken)} broken."
        )
        if checkpoint_at is not None:
            summary += f" Compared with the checkpoint of {checkpoint_at.isoformat()} ({len(heads)} heads)."
        if broken:
            self.stdout.write(self.style.ERROR(summary))
            raise CommandError(
                f"{len(broken)} chain{'s' if len(broken) != 1 else ''} broken",
                returncode=EXIT_BROKEN,
            )
        self.stdout.write(self.style.SUCCESS(summary))
