"""`manage.py bench_routing`: routing a message to the concept its words describe (issue 16).

Run it in its own database (it writes an organization and two maps):

    TUTORBRAIN_DB_NAME=tutorbrain_routing .venv/bin/python manage.py bench_routing \\
        --anatomy ../shared/devsets/anatomy-physiology-2e \\
        --locomo ../shared/devsets/locomo-dev/locomo-dev5.json

Two maps are read through the real services: the sample cell-biology subject (Osmosis
then taught by a teacher) and the first sections of the anatomy dev set. For every
message the build's own routing (`_concept_rows`, `_route_concepts`) runs twice, without
and with routing by description, so the table shows what the description adds:
on-topic questions that do not name the concept they are about (hand-written, with the
concept expected), and off-topic real messages (LoCoMo questions and turns, small talk)
where any concept the description adds is a false route.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from concepts.models import Concept, FileReading
from concepts.services import concept_teach, file_read, file_upload
from memory.services import (
    organization_create,
    pair_get_or_create,
    student_get_or_create,
    subject_get_or_create,
)
from tutorbrain.block.build import _concept_rows, _description_index, _route_concepts
from tutorbrain.block.message import read_message
from tutorbrain.block.retrieval import vector_literal
from tutorbrain.embedder import embed
from tutorbrain.evaluation.integration import tasks_inline

SAMPLE_DIR = Path(settings.BASE_DIR) / "tests" / "data" / "cell-biology"
SAMPLE_FILES = ("cell-biology-notes.md", "capitulo-transporte.md", "energy-in-the-cell.pdf")
OSMOSIS_NOTE = (
    "Water moves across membranes from where it is more dilute to where it is more concentrated."
)
ANATOMY_SECTIONS = 14

# On-topic questions that do not name the concept they are about: (message, concept key).
ON_TOPIC = {
    "cell-biology": [
        ("Why does a cell burst in pure water?", "osmosis"),
        ("What happens to a red blood cell in salty water?", "osmosis"),
        ("How do plants make sugar from light?", "photosynthesis"),
        ("What molecule carries energy inside the cell?", "atp"),
        ("What speeds up chemical reactions without being used up?", "enzymes"),
        ("Why do particles spread out from a crowded region?", "diffusion"),
        ("What is the jelly-like fluid inside the cell?", "cytoplasm"),
        ("What separates the cell from its surroundings?", "cell membrane"),
        ("How does the cell break down sugar with oxygen?", "cellular respiration"),
        ("Which organelles capture light energy in plants?", "chloroplasts"),
        ("How does a substance move against its gradient using energy?", "active transport"),
        ("Where is the energy of glucose released?", "mitochondria"),
    ],
    "anatomy": [
        ("What holds atoms together in a molecule?", "bond"),
        ("Why does the body shiver when it gets too cold?", "negative feedback"),
        ("What is the smallest unit of an element?", "atom"),
        ("Which imaging uses strong magnets to see inside the body?", "magnetic resonance imaging"),
        ("How does a substance speed up a reaction without being changed?", "catalyst"),
        ("What is the energy of something that is moving?", "kinetic energy"),
        ("Why do divers get sick when they come up too fast?", "decompression sickness"),
        ("What does it mean when a patient lies face down?", "prone"),
        ("Which plane divides the body into left and right?", "sagittal plane"),
        ("What is the study of the body's structures called?", "human anatomy"),
    ],
}
SMALL_TALK = [
    "What is the weather like?",
    "Can you help me with my homework?",
    "I don't get it, can you explain again?",
    "Who won the football match yesterday?",
    "What is the capital of France?",
    "How does the heart pump blood?",
    "Can we go over eukaryotic cells?",
    "What did I get wrong so far?",
    "Thanks, that was helpful!",
    "Can we take a break?",
    "What should I study for the exam?",
    "How many pages is the essay?",
    "Is this going to be on the test?",
    "My cat knocked over my water glass",
    "I went swimming in the pool this morning",
]


def _locomo(path: Path) -> tuple[list[str], list[str]]:
    """The first 300 questions and every tenth turn (at most 300) of a LoCoMo file."""
    data = json.loads(path.read_text())
    questions = [qa["question"] for conversation in data for qa in conversation["qa"]][:300]
    turns: list[str] = []
    for conversation in data:
        for key, session in conversation["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                turns += [turn["text"] for turn in session]
    return questions, turns[::10][:300]


def _read_files(pair, files) -> None:
    for path in files:
        upload = file_upload(pair=pair, name=path.name, content=path.read_bytes(), queue=False)
        if upload.reading.state == FileReading.State.QUEUED:
            file_read(subject_file=upload.file)
        reading = FileReading.objects.get(pk=upload.file.pk)
        if reading.state == FileReading.State.FAILED:
            raise CommandError(f"{path.name}: reading failed: {reading.reason}")


def _routes(subject, messages: list[str]) -> list[tuple[set[str], set[str]]]:
    """(keys routed without description, keys routed with it) per message."""
    vectors = embed(messages)
    out = []
    for message, vector in zip(messages, vectors, strict=True):
        routing = _concept_rows(subject=subject, vector=vector_literal(vector))
        reading = read_message(message, fallback_language=subject.language)
        _, before = _route_concepts(rows=routing.rows, message=message)
        _, after = _route_concepts(
            rows=routing.rows,
            message=message,
            terms=reading.terms,
            language_code=reading.language,
            describe=lambda routing=routing: _description_index(subject, routing),
        )
        out.append((set(before), set(after)))
    return out


class Command(BaseCommand):
    help = "Routing by description: on-topic questions routed right, off-topic falsely."

    def add_arguments(self, parser):
        parser.add_argument("--anatomy", required=True, help="the anatomy dev set's folder")
        parser.add_argument("--locomo", required=True, help="a LoCoMo JSON file (off-topic)")

    def handle(self, *args, **options):
        anatomy = sorted((Path(options["anatomy"]) / "text").glob("*.md"))[:ANATOMY_SECTIONS]
        if not anatomy:
            raise CommandError(f"no text/*.md under {options['anatomy']}")
        questions, turns = _locomo(Path(options["locomo"]))
        with tasks_inline():
            slug = f"bench-routing-{uuid.uuid4().hex[:8]}"
            organization = organization_create(name="Routing benchmark", slug=slug)
            student = student_get_or_create(organization=organization, external_id="s")
            subjects = {}
            for external_id, name, files in (
                ("cell-biology", "Cell biology", [SAMPLE_DIR / f for f in SAMPLE_FILES]),
                ("anatomy", "Anatomy", anatomy),
            ):
                subject = subject_get_or_create(
                    organization=organization, external_id=external_id, name=name, language="en"
                )
                _read_files(pair_get_or_create(student=student, subject=subject), files)
                subjects[external_id] = subject
            cell = subjects["cell-biology"]
            osmosis = Concept.objects.get(subject=cell, key="osmosis")
            concept_teach(subject=cell, concept=osmosis, note=OSMOSIS_NOTE)
        lines = [
            "| map (concepts) | set | without description | with description |",
            "|---|---|---|---|",
        ]
        for external_id, subject in subjects.items():
            size = Concept.objects.filter(subject=subject).count()
            label = f"{external_id} ({size})"
            on_topic = ON_TOPIC[external_id]
            routes = _routes(subject, [m for m, _ in on_topic])
            right = [
                sum(key in r[i] for (_, key), r in zip(on_topic, routes, strict=True))
                for i in (0, 1)
            ]
            wrong = sum(
                bool(after - before - {key})
                for (_, key), (before, after) in zip(on_topic, routes, strict=True)
            )
            lines.append(
                f"| {label} | on-topic, routed to their concept | {right[0]}/{len(on_topic)} "
                f"| {right[1]}/{len(on_topic)} (+ {wrong} to another concept) |"
            )
            for set_name, messages in (
                ("small talk", SMALL_TALK),
                ("LoCoMo questions", questions),
                ("LoCoMo turns", turns),
            ):
                routes = _routes(subject, messages)
                routed = sum(bool(before) for before, _ in routes)
                added = [
                    m for m, (before, after) in zip(messages, routes, strict=True) if after - before
                ]
                lines.append(
                    f"| {label} | off-topic {set_name}: any route / added by description "
                    f"| {routed}/{len(messages)} | + {len(added)} |"
                )
                for message in added:
                    self.stderr.write(f"false route by description ({external_id}): {message}")
        self.stdout.write("\n".join(lines))
