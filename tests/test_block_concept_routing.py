"""Routing a message to the concept it describes, not only the one it names (issue 16).

On the real database, with the sample cell-biology notes read through the real reading
service and Osmosis taught through the real teaching service.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.conf import settings

from concepts.models import Concept, FileReading
from concepts.services import concept_teach, file_read, file_upload
from tests.factories import PairFactory
from tutorbrain.block import concept_words
from tutorbrain.block.build import memory_block_build
from tutorbrain.block.format import MAP_HEADER

NOW = datetime(2026, 9, 20, 12, 0, tzinfo=UTC)
NOTES = Path(settings.BASE_DIR) / "tests" / "data" / "cell-biology" / "cell-biology-notes.md"
OSMOSIS_NOTE = (
    "Water moves across membranes from where it is more dilute to where it is more concentrated."
)


def build(pair, message):
    return memory_block_build(
        organization=pair.subject.organization,
        student_external_id=pair.student.external_id,
        subject_external_id=pair.subject.external_id,
        message=message,
        now=NOW,
        budget=900,
    )


def map_section(text: str) -> list[str]:
    start = text.index("SUBJECT MAP (")
    lines = text[start:].splitlines()
    end = next(i for i, line in enumerate(lines[1:], 1) if not line.startswith("- "))
    return lines[:end]


@pytest.fixture
def pair(db):
    concept_words.cache_clear()
    pair = PairFactory(subject__language="en")
    upload = file_upload(pair=pair, name=NOTES.name, content=NOTES.read_bytes(), queue=False)
    if upload.reading.state == FileReading.State.QUEUED:
        file_read(subject_file=upload.file)
    assert FileReading.objects.get(pk=upload.file.pk).state == FileReading.State.DONE
    return pair


@pytest.fixture
def osmosis(pair):
    concept = Concept.objects.get(subject=pair.subject, key="osmosis")
    concept_teach(subject=pair.subject, concept=concept, note=OSMOSIS_NOTE, now=NOW)
    return concept


def test_after_teaching_osmosis_a_cell_bursting_in_pure_water_gets_osmosis_and_its_note(
    pair, osmosis
):
    result = build(pair, "Why does a cell burst in pure water?")

    assert "Osmosis" in result.routed_concepts
    section = map_section(result.text)
    osmosis_lines = [line for line in section if line.startswith("- Osmosis:")]
    assert osmosis_lines, section
    assert OSMOSIS_NOTE in osmosis_lines[0]


@pytest.mark.parametrize(
    "message",
    [
        "My cat knocked over my water glass",
        "What is the weather like?",
        "What do Melanie's kids like?",
        "Can you help me with my homework?",
    ],
)
def test_an_unrelated_message_is_not_routed_to_the_taught_concept(pair, osmosis, message):
    result = build(pair, message)

    assert "Osmosis" not in result.routed_concepts
    assert result.routed_concepts == []


@pytest.mark.parametrize(
    ("message", "named"),
    [
        ("How does diffusion work?", "Diffusion"),
        ("What is selective permeability?", "Selective permeability"),
    ],
)
def test_a_message_naming_a_concept_is_not_routed_elsewhere_by_that_name_alone(
    pair, osmosis, message, named
):
    # Osmosis's definition speaks of diffusion and of selective permeability; the named
    # concept's own words are taken out before the rest is read for a description.
    result = build(pair, message)

    assert "Osmosis" not in result.routed_concepts
    if named:
        assert result.routed_concepts[0] == named


def test_a_new_note_routes_at_once_without_a_restart(pair):
    concept = Concept.objects.get(subject=pair.subject, key="cytoplasm")
    message = "Why is the inside of a cell so wobbly, like gelatine dessert?"
    assert "Cytoplasm" not in build(pair, message).routed_concepts

    concept_teach(
        subject=pair.subject,
        concept=concept,
        note="It is wobbly like gelatine dessert: a jelly that fills the inside of the cell.",
        now=NOW,
    )

    assert "Cytoplasm" in build(pair, message).routed_concepts


def test_the_descriptions_are_read_once_per_map_version(pair, osmosis):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    message = "Why does a cell burst in pure water?"
    with CaptureQueriesContext(connection) as first:
        build(pair, message)
    with CaptureQueriesContext(connection) as second:
        build(pair, message)

    def reads_descriptions(ctx):
        return [
            q
            for q in ctx.captured_queries
            if "concepts_taughtnote" in q["sql"] and "latest_note" in q["sql"]
        ]

    assert len(reads_descriptions(first)) == 1
    assert reads_descriptions(second) == []
    # The map's four queries are cached per map version too (test below), and so are
    # the concepts' names, keys and aliases (routing reads only the nearest distances).
    assert len(second.captured_queries) == len(first.captured_queries) - 6


def test_the_map_is_read_once_per_map_version(pair, osmosis):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def reads_edges(ctx):
        return [q for q in ctx.captured_queries if "concepts_prerequisite" in q["sql"]]

    with CaptureQueriesContext(connection) as first:
        build(pair, "What is osmosis?")
    with CaptureQueriesContext(connection) as second:
        build(pair, "What is osmosis?")

    assert len(reads_edges(first)) == 1
    assert reads_edges(second) == []


def test_a_note_taught_after_a_block_is_in_the_next_block_at_the_same_moment(pair, osmosis):
    build(pair, "What is osmosis?")  # the map is now cached for this version
    second_note = "A raisin left in water swells: water goes where the sugar is."
    concept_teach(subject=pair.subject, concept=osmosis, note=second_note, now=NOW)

    section = map_section(build(pair, "What is osmosis?").text)

    assert any(second_note in line for line in section if line.startswith("- Osmosis:"))


def test_an_edge_added_and_recomputed_at_the_same_moment_reaches_the_next_block(pair, osmosis):
    from concepts.models import Prerequisite
    from concepts.services import map_recompute

    build(pair, "What is osmosis?")  # the map is now cached for this version
    ribosome = Concept.objects.filter(subject=pair.subject).exclude(pk=osmosis.pk).first()
    Prerequisite.objects.filter(concept=osmosis).delete()
    Prerequisite.objects.create(subject=pair.subject, concept=osmosis, prerequisite=ribosome)
    map_recompute(subject=pair.subject, now=NOW)  # same `now` as the map's last recompute

    section = map_section(build(pair, "What is osmosis?").text)

    osmosis_line = next(line for line in section if line.startswith("- Osmosis:"))
    assert f"(builds on: {ribosome.name})" in osmosis_line


# ---- the scoring itself, on plain data -------------------------------------------------


def index_of(*descriptions):
    return concept_words.description_index_build(list(descriptions), subject_language="en")


def test_a_new_map_version_reads_only_the_descriptions_that_changed(monkeypatch):
    from tutorbrain import language

    concept_words.cache_clear()
    read: list[str] = []
    real = language.document_terms

    def counting(text, code):
        read.append(text)
        return real(text, code)

    monkeypatch.setattr(language, "document_terms", counting)
    before = [("osmosis", "Osmosis\nWater crosses a membrane."), ("cell", "Cell\nA unit.")]
    index_of(*before)
    after = [before[0], ("cell", "Cell\nThe smallest unit of life.")]
    rebuilt = index_of(*after)

    assert read == [before[0][1], before[1][1], after[1][1]]
    assert rebuilt.lengths["cell"] == len(real(after[1][1], "en"))


def test_a_rare_shared_word_repeated_in_one_description_routes_to_it():
    index = index_of(
        ("osmosis", "Osmosis. Water crosses a membrane; water moves to where water is scarce."),
        ("cell", "Cell. The cell is the smallest unit of life."),
        ("enzymes", "Enzymes. Proteins that speed up reactions in the cell."),
        ("respiration", "Respiration. Breaks down glucose and gives carbon dioxide and water."),
    )

    assert concept_words.best_described(index, ["water"], topicality=0.3) == "osmosis"


def test_a_message_far_from_every_concept_name_is_never_routed_by_words():
    index = index_of(
        ("osmosis", "Osmosis. Water crosses a membrane; water moves to where water is scarce."),
        ("cell", "Cell. The cell is the smallest unit of life."),
    )

    assert concept_words.best_described(index, ["water"], topicality=0.1) is None
    assert concept_words.best_described(index, ["water"], topicality=None) is None


def test_two_concepts_described_alike_are_a_guess_and_route_nowhere():
    index = index_of(
        ("photosynthesis", "Photosynthesis uses light energy to make glucose."),
        ("chloroplasts", "Chloroplasts capture light energy in plant cells."),
        ("cell", "The cell is the smallest unit of life."),
    )

    assert concept_words.best_described(index, ["light", "energi"], topicality=0.4) is None


def test_the_map_header_calls_its_number_readiness_not_a_share_the_files_explain():
    header = MAP_HEADER.format(count=16, percent=74)

    assert "readiness of the material 74%" in header
    assert "checks and teaching" in header
    assert "explain" not in header


def test_a_long_file_summary_is_cut_before_the_teachers_note():
    from tutorbrain.block.format import LINE_MAX_TOKENS, MapLine
    from tutorbrain.block.tokens import count_tokens

    line = MapLine(
        name="Osmosis", summary="word " * 200, taught_note=OSMOSIS_NOTE, builds_on=["Diffusion"]
    ).render()

    assert f"[taught: {OSMOSIS_NOTE}]" in line
    assert line.endswith("(builds on: Diffusion)")
    assert count_tokens(line) <= LINE_MAX_TOKENS
