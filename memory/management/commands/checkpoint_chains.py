"""Write an HMAC-signed checkpoint of every chain head to a file (and keep it in the DB).

Every chain is verified first: a checkpoint is written even when one is broken (the
break is permanent in an append-only log; the checkpoint still guards every other
chain), but the command then exits 1 and names the break.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from memory.checkpoints import checkpoint_document, key_id
from memory.models import Pair
from memory.services import chain_verify, checkpoint_create

EXIT_BROKEN = 1
EXIT_BAD_INPUT = 2


class Command(BaseCommand):
    help = (
        "Sign the head (seq + hash) of every episode chain with TUTORBRAIN_CHECKPOINT_KEY and "
        "write it to --out FILE; store it elsewhere, then `verify_chains --checkpoint FILE`."
    )

    def add_arguments(self, parser):
        parser.add_argument("--out", required=True, metavar="FILE", help="where to write it")
        parser.add_argument(
            "--skip-verify",
            action="store_true",
            help="do not recompute the chains first (faster; the checkpoint may bless a break)",
        )

    def handle(self, *args, **options):
        out = Path(options["out"])
        if out.is_dir() or not out.parent.is_dir():
            raise CommandError(
                f"cannot write {str(out)!r}: not a file in an existing directory",
                returncode=EXIT_BAD_INPUT,
            )
        now = timezone.now()
        broken: list[str] = []
        if not options["skip_verify"]:
            pairs = Pair.objects.select_related("student", "subject").filter(head_seq__gt=0)
            for pair in pairs.order_by("pk").iterator(chunk_size=500):
                verification = chain_verify(pair=pair, now=now)
                if not verification.intact:
                    broken.append(
                        f"BROKEN  {pair.student.external_id} · {pair.subject.external_id} "
                        f"(pair {pair.pk}) at seq {verification.broken_seq}: {verification.reason}"
                    )
        checkpoint = checkpoint_create(now=now)
        document = checkpoint_document(checkpoint)
        # Write beside the target and rename: a crash never leaves half a checkpoint.
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(document, handle, ensure_ascii=False, indent=1)
                handle.write("\n")
            os.replace(tmp, out)
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)
            raise CommandError(
                f"cannot write {str(out)!r}: {exc}", returncode=EXIT_BAD_INPUT
            ) from exc
        heads = checkpoint.heads
        total = sum(h["seq"] for h in heads)
        for line in broken:
            self.stdout.write(self.style.ERROR(line))
        summary = (
            f"Wrote checkpoint {checkpoint.pk} of {len(heads)} chains ({total} episodes) to "
            f"{out}, signed with key id {key_id()}."
        )
        if broken:
            self.stdout.write(self.style.ERROR(summary))
            raise CommandError(
                f"{len(broken)} chain{'s' if len(broken) != 1 else ''} broken",
                returncode=EXIT_BROKEN,
            )
        self.stdout.write(self.style.SUCCESS(summary))
