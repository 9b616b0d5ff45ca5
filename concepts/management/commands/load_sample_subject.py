"""Load the sample cell-biology subject through the same services as an upload."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from concepts.models import FileReading
from concepts.selectors import map_for_block
from concepts.services import file_read, file_upload
from memory.models import Organization
from memory.services import (
    organization_create,
    pair_get_or_create,
    student_get_or_create,
    subject_get_or_create,
)

SAMPLE_DIR = Path(settings.BASE_DIR) / "tests" / "data" / "cell-biology"
SAMPLE_FILES = ("cell-biology-notes.md", "capitulo-transporte.md", "energy-in-the-cell.pdf")


class Command(BaseCommand):
    help = (
        "Upload and read the sample cell-biology files (English notes, a Spanish chapter, a PDF)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--org", default="demo", help="organization slug (created if missing)")
        parser.add_argument("--student", default="demo-student")
        parser.add_argument("--subject", default="cell-biology")

    def handle(self, *args, **options):
        organization = Organization.objects.filter(slug=options["org"]).first()
        if organization is None:
            organization = organization_create(name=options["org"].title(), slug=options["org"])
        student = student_get_or_create(organization=organization, external_id=options["student"])
        subject = subject_get_or_create(
            organization=organization,
            external_id=options["subject"],
            name="Cell biology",
            language="en",
        )
        pair = pair_get_or_create(student=student, subject=subject)
        for name in SAMPLE_FILES:
            upload = file_upload(
                pair=pair, name=name, content=(SAMPLE_DIR / name).read_bytes(), queue=False
            )
            state = upload.reading.state
            if upload.reading.state == FileReading.State.QUEUED:
                state = file_read(subject_file=upload.file).state
            reading = FileReading.objects.get(pk=upload.file.pk)
            if reading.state == FileReading.State.FAILED:
                raise CommandError(f"{name}: reading failed: {reading.reason}")
            self.stdout.write(f"{name}: {state}, {reading.concepts_found} concepts")
        view = map_for_block(subject=subject)
        self.stdout.write(
            f"map of {subject.external_id}: {view.concept_count} concepts, "
            f"readiness of the material {round(view.readiness * 100)}%"
        )
