"""Benchmark of the concept map: derived-number recomputation, the block's map read,
and reading the sample files. Prints median / p90 / p95 per measurement."""

from __future__ import annotations

import random
import statistics
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from concepts.models import Concept, Prerequisite
from concepts.naming import concept_key
from concepts.selectors import map_for_block
from concepts.services import file_read, file_upload, map_recompute
from memory.services import (
    organization_create,
    pair_get_or_create,
    student_get_or_create,
    subject_get_or_create,
)

SAMPLE_DIR = Path(settings.BASE_DIR) / "tests" / "data" / "cell-biology"
SAMPLE_FILES = ("cell-biology-notes.md", "capitulo-transporte.md", "energy-in-the-cell.pdf")


def _percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    return (
        f"median {statistics.median(ordered):.1f} ms, p90 {at(0.9):.1f} ms, "
        f"p95 {at(0.95):.1f} ms (n={len(ordered)})"
    )


def _timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


class Command(BaseCommand):
    help = "Time map_recompute and map_for_block on synthetic maps, and reading the sample files."

    def add_arguments(self, parser):
        parser.add_argument("--sizes", default="50,200,1000", help="concept counts")
        parser.add_argument("--repeat", type=int, default=20)
        parser.add_argument("--file-repeat", type=int, default=3)
        parser.add_argument("--seed", type=int, default=7)

    def handle(self, *args, **options):
        rng = random.Random(options["seed"])
        tag = uuid.uuid4().hex[:8]
        organization = organization_create(name=f"bench {tag}", slug=f"bench-concepts-{tag}")
        student = student_get_or_create(organization=organization, external_id="bench")
        for size in [int(s) for s in options["sizes"].split(",")]:
            subject = subject_get_or_create(organization=organization, external_id=f"map-{size}")
            concepts = Concept.objects.bulk_create(
                [
                    Concept(
                        subject=subject,
                        name=f"Concept {i:05d}",
                        key=concept_key(f"Concept {i:05d}"),
                    )
                    for i in range(size)
                ]
            )
            edges = []
            for i, concept in enumerate(concepts[1:], start=1):
                # Each builds on 1-3 earlier concepts, preferring the first few (hubs).
                for j in {
                    min(int(rng.paretovariate(1.2)) - 1, i - 1) for _ in range(rng.randint(1, 3))
                }:
                    edges.append(
                        Prerequisite(subject=subject, concept=concept, prerequisite=concepts[j])
                    )
            Prerequisite.objects.bulk_create(edges, ignore_conflicts=True)
            recompute = _timed(lambda s=subject: map_recompute(subject=s), options["repeat"])
            read = _timed(
                lambda s=subject: map_for_block(subject=s, limit=40), options["repeat"] * 5
            )
            self.stdout.write(
                f"{size} concepts, {len(edges)} edges: map_recompute {_percentiles(recompute)}; "
                f"map_for_block(limit=40) {_percentiles(read)}"
            )
        reads = []
        for run in range(options["file_repeat"]):
            subject = subject_get_or_create(organization=organization, external_id=f"sample-{run}")
            pair = pair_get_or_create(student=student, subject=subject)
            for name in SAMPLE_FILES:
                upload = file_upload(
                    pair=pair, name=name, content=(SAMPLE_DIR / name).read_bytes(), queue=False
                )
                start = time.perf_counter()
                file_read(subject_file=upload.file)
                reads.append((time.perf_counter() - start) * 1000)
        self.stdout.write(
            f"file_read of one sample file (offline extractor): {_percentiles(reads)}"
        )
