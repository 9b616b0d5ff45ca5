"""Reading cost independent of map size (issue 13, item 7): a file's concepts are looked
up by index, and the lookups find everything the merge rules would have found by
comparing with the whole map."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from django.db import connection, transaction
from django.db.models.signals import post_init
from django.test.utils import CaptureQueriesContext
from hypothesis import given, settings
from hypothesis import strategies as st

from concepts.extractors import ExtractedConcept
from concepts.lookup import (
    NameIndex,
    definition_tokens,
    key_variants,
    names_in_text,
    text_key_candidates,
    word_variants,
)
from concepts.merge import Thresholds
from concepts.models import Concept, ConceptSource, Prerequisite
from concepts.naming import concept_key, find_keys_in, same_but_number
from concepts.services import _MapPool, _merge_into_map, _vector_literal, file_read, file_upload
from tests.factories import PairFactory

# Words in singular and plural, English, Romance and Latin/Greek forms.
WORDS = [
    "cell", "cells", "gas", "gases", "study", "studies", "nucleus", "nuclei", "datum",
    "data", "criterion", "criteria", "analysis", "analyses", "matrix", "matrices", "index",
    "indices", "formula", "formulae", "leaf", "leaves", "life", "lives", "luz", "luces",
    "animal", "animais", "journal", "journaux", "homem", "homens", "membrana", "membranas",
    "celular", "celulares", "estado", "estados", "policy", "policies", "party", "parties",
    "power", "powers", "theory", "theories", "right", "rights", "bus", "buses", "class",
    "classes", "woman", "women", "iqr", "atp", "range", "ranges",
]  # fmt: skip

keys = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)


def test_every_key_the_number_rule_equates_is_a_variant():
    for a, b in itertools.product(WORDS, repeat=2):
        if same_but_number(a, b):
            assert b in key_variants(a), (a, b)
    for a, b in itertools.product(["cell membrane", "membrana celular"], WORDS):
        for key in (f"{a} {b}", f"{b} {a}"):
            for other in itertools.chain(WORDS, [a]):
                candidate = f"{key.rsplit(' ', 1)[0]} {other}"
                if same_but_number(key, candidate):
                    assert candidate in key_variants(key), (key, candidate)
    # Any word of a longer name may be the one in the other number.
    three = ["membrana", "membranas", "celular", "celulares", "study", "studies", "cell"]
    for a, b in itertools.product(itertools.product(three, repeat=3), repeat=2):
        if same_but_number(" ".join(a), " ".join(b)):
            assert " ".join(b) in key_variants(" ".join(a)), (a, b)


@settings(max_examples=300, deadline=None)
@given(
    map_keys=st.lists(keys, min_size=1, max_size=12, unique=True),
    text=st.lists(st.sampled_from([*WORDS, "the", "of", "is"]), max_size=25).map(" ".join),
)
def test_looking_up_a_texts_word_runs_finds_what_the_whole_map_would(map_keys, text):
    whole_map = {key: key for key in map_keys}
    candidates = text_key_candidates(text, max(len(k.split()) for k in map_keys))
    looked_up = {key: key for key in map_keys if key in candidates}
    assert find_keys_in(text, looked_up) == find_keys_in(text, whole_map)


@settings(max_examples=300, deadline=None)
@given(
    map_keys=st.lists(keys, min_size=1, max_size=12, unique=True),
    text=st.lists(st.sampled_from([*WORDS, "the", "of", "is"]), max_size=25).map(" ".join),
)
def test_walking_a_text_against_the_names_finds_the_names_among_its_word_runs(map_keys, text):
    candidates = text_key_candidates(text, max(len(k.split()) for k in map_keys))
    assert names_in_text(text, NameIndex(map_keys)) == set(map_keys) & candidates


def test_a_name_is_found_in_a_text_in_either_number_and_only_as_whole_words():
    index = NameIndex(["cell membrane", "cell", "membrane protein", "study"])
    text = "Studies of cell membranes and their membrane-protein; cellular parts."
    assert names_in_text(text, index) == {"study", "cell membrane", "cell", "membrane protein"}
    assert names_in_text("cellular membranes", index) == set()


def test_word_variants_go_both_ways():
    assert {"study", "studies"} <= word_variants("study") & word_variants("studies")
    assert "nuclei" in word_variants("nucleus") and "nucleus" in word_variants("nuclei")


DATA = Path(__file__).resolve().parent / "data" / "cell-biology"


def _bulk_map(subject, size: int) -> None:
    concepts = Concept.objects.bulk_create(
        Concept(
            subject=subject,
            name=f"Filler notion {i}",
            key=concept_key(f"Filler notion {i}"),
            definition=f"Filler notion {i} is a notion of filler {i}.",
            definition_tokens=definition_tokens(f"Filler notion {i} is a notion of filler {i}."),
        )
        for i in range(size)
    )
    Prerequisite.objects.bulk_create(
        Prerequisite(subject=subject, concept=c, prerequisite=concepts[0]) for c in concepts[1:]
    )


def _reading_cost(pair, size: int) -> tuple[int, int, int]:
    """(queries, concept rows loaded as objects, concepts found) of reading one file."""
    _bulk_map(pair.subject, size)
    upload = file_upload(
        pair=pair,
        name="cell-biology-notes.md",
        content=(DATA / "cell-biology-notes.md").read_bytes(),
        queue=False,
    )
    loaded = []

    def count(sender, instance, **kwargs):
        loaded.append(instance.pk)

    post_init.connect(count, sender=Concept)
    try:
        with CaptureQueriesContext(connection) as queries:
            reading = file_read(subject_file=upload.file)
    finally:
        post_init.disconnect(count, sender=Concept)
    assert reading.state == "done"
    return len(queries), len(loaded), reading.concepts_found


@pytest.mark.django_db
def test_reading_a_file_into_a_big_map_costs_what_it_costs_into_a_small_one():
    small = _reading_cost(PairFactory(), 5)
    big = _reading_cost(PairFactory(), 600)
    assert small[2] == big[2] > 5  # the same concepts found
    # The same queries, and not one more concept object for the 595 more concepts: the
    # merge looks its candidates up; the map-wide numbers are read as plain tuples.
    assert big[0] == small[0], (small, big)
    assert big[1] == small[1] < 100, (small, big)


@pytest.mark.django_db
def test_a_files_new_concepts_and_their_sources_are_written_in_one_insert_each():
    pair = PairFactory()
    upload = file_upload(
        pair=pair,
        name="cell-biology-notes.md",
        content=(DATA / "cell-biology-notes.md").read_bytes(),
        queue=False,
    )
    with CaptureQueriesContext(connection) as queries:
        reading = file_read(subject_file=upload.file)
    assert reading.state == "done" and reading.concepts_found > 5
    inserts = [q["sql"].split(")")[0] for q in queries if q["sql"].startswith("INSERT")]
    # The file's concepts (their ids drawn up front); then one row per assumed node the
    # recomputation makes (two concepts assume it), as before.
    file_rows = [i for i in inserts if i.startswith('INSERT INTO "concepts_concept" ("id"')]
    other_rows = [i for i in inserts if i.startswith('INSERT INTO "concepts_concept" ("subj')]
    assert len(file_rows) == 1, inserts
    assumed = Concept.objects.filter(subject=pair.subject, layer=Concept.Layer.ASSUMED)
    assert len(other_rows) == assumed.count()
    assert sum(i.startswith('INSERT INTO "concepts_conceptsource"') for i in inserts) == 1
    sources = ConceptSource.objects.filter(file=upload.file)
    assert sources.count() == reading.concepts_found
    assert Concept.objects.filter(subject=pair.subject).count() == sources.count() + assumed.count()


def _merge(pair, items: list[ExtractedConcept]) -> None:
    """Merge extracted concepts as one file (no name vectors: only the name rules)."""
    upload = file_upload(pair=pair, name="notes.md", content=b"notes", queue=False)
    with transaction.atomic():
        _merge_into_map(upload.file, items, [], "", "en")


@pytest.mark.django_db
def test_a_name_joins_a_concept_the_same_file_created_a_moment_before_it_is_written():
    pair = PairFactory()
    _merge(
        pair,
        [
            ExtractedConcept("IQR", definition="IQR is the spread of the middle half."),
            ExtractedConcept("Mitochondrion", definition="A mitochondrion makes ATP."),
            # Found by its abbreviation among the concepts not yet written.
            ExtractedConcept("Interquartile range", aliases=["IQR"]),
            # Found by its number ending among them.
            ExtractedConcept("Mitochondria", definition="Mitochondria make ATP."),
        ],
    )
    concepts = {c.key: c for c in Concept.objects.filter(subject=pair.subject)}
    assert sorted(concepts) == ["iqr", "mitochondrion"]
    assert concepts["iqr"].aliases == ["interquartile range"]
    assert concepts["mitochondrion"].aliases == ["mitochondria"]
    # One provenance row per concept, however many of the file's names it took.
    assert sorted(
        ConceptSource.objects.filter(concept__subject=pair.subject).values_list(
            "concept__key", "name_in_file"
        )
    ) == [("iqr", "IQR"), ("mitochondrion", "Mitochondrion")]


@pytest.mark.django_db
def test_a_long_name_joins_a_concept_by_a_plural_in_its_middle_word_without_vectors():
    pair = PairFactory()
    _merge(pair, [ExtractedConcept("Sistemas nerviosos centrales")])
    _merge(pair, [ExtractedConcept("Sistema nervioso central")])
    (concept,) = Concept.objects.filter(subject=pair.subject)
    assert concept.aliases == ["sistema nervioso central"]


@pytest.mark.django_db
def test_the_nearest_names_are_looked_for_only_among_concepts_of_another_language():
    pair = PairFactory()
    vector = np.zeros(512, dtype=np.float32)
    vector[0] = 1.0
    english, spanish = Concept.objects.bulk_create(
        Concept(subject=pair.subject, name=name, key=concept_key(name), name_language=code)
        for name, code in [("Mitochondria", "en"), ("Mitocondria", "es")]
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE concepts_concept SET embedding = %s::vector WHERE id = ANY(%s)",
            [_vector_literal(vector), [english.pk, spanish.pk]],
        )
    pool = _MapPool(pair.subject)
    thresholds = Thresholds(threshold=0.9, cognate_threshold=0.8)
    # Within a language only keys merge, so an English file scans only the Spanish name.
    near = pool.nearest([vector], thresholds, "en")
    assert [c.pk for c in near[0]] == [spanish.pk]
    assert [c.pk for c in pool.nearest([vector], thresholds, "es")[0]] == [english.pk]
    assert [c.pk for c in pool.nearest([vector], thresholds, "fr")[0]] == [english.pk, spanish.pk]


@pytest.mark.django_db
def test_an_abbreviation_a_new_concept_defines_is_written_with_it():
    pair = PairFactory()
    _merge(pair, [ExtractedConcept("Interquartile range", aliases=["IQR"])])
    (concept,) = Concept.objects.filter(subject=pair.subject)
    assert concept.key == "interquartile range" and concept.aliases == ["iqr"]


@pytest.mark.django_db
def test_new_concepts_get_ids_after_every_older_concept_in_the_files_order():
    pair = PairFactory()
    _bulk_map(pair.subject, 3)
    oldest_new = Concept.objects.order_by("-pk").first().pk
    _merge(pair, [ExtractedConcept(name) for name in ["Zygote", "Allele", "Meiosis"]])
    new = Concept.objects.filter(subject=pair.subject, pk__gt=oldest_new).order_by("pk")
    assert [c.name for c in new] == ["Zygote", "Allele", "Meiosis"]


@pytest.mark.django_db
def test_an_older_definition_naming_a_new_concept_in_any_number_builds_on_it():
    pair = PairFactory()

    def read(name, items):
        upload = file_upload(pair=pair, name=name, content=name.encode(), queue=False)
        with transaction.atomic():
            _merge_into_map(upload.file, items, [], "", "en")

    read(
        "first.md",
        [
            ExtractedConcept(
                "Active transport", definition="Pumps spend ATP via plasma membranes."
            ),
            ExtractedConcept("Osmosis", definition="Water crosses a membrane."),
            ExtractedConcept(
                "Diffusion", definition="Spreading of plasma membranes.", defines=False
            ),
            ExtractedConcept("Exocytosis", definition="Vesicles fuse with the plasma."),
        ],
    )
    read(
        "second.md",
        [ExtractedConcept("Plasma membrane"), ExtractedConcept("ATP"), ExtractedConcept("Cell")],
    )
    edges = set(
        Prerequisite.objects.filter(subject=pair.subject).values_list(
            "concept__key", "prerequisite__key"
        )
    )
    # Every word of the name, its last in the plural; a text that defines nothing, or
    # holds only part of a name, gives no edge.
    assert edges == {("active transport", "plasma membrane"), ("active transport", "atp")}


@pytest.mark.django_db
def test_a_new_concepts_name_vector_is_stored_as_exactly_the_floats_the_embedder_gave():
    pair = PairFactory()
    upload = file_upload(pair=pair, name="notes.md", content=b"notes", queue=False)
    names = ["Zygote", "Allele", "Meiosis"]
    vectors = np.random.default_rng(7).standard_normal((3, 512)).astype(np.float32)
    vectors[1] = [np.float32(1) / 3, np.float32(2) ** -140, -0.1, 1e-7, *([0.5] * 508)]
    with transaction.atomic():
        _merge_into_map(upload.file, [ExtractedConcept(n) for n in names], vectors, "m", "en")
    stored = {c.name: c for c in Concept.objects.filter(subject=pair.subject, name__in=names)}
    for name, vector in zip(names, vectors, strict=True):
        assert np.asarray(stored[name].embedding, dtype=np.float32).tobytes() == vector.tobytes()
        assert stored[name].embedding_model == "m"


@pytest.mark.django_db
def test_reembedding_concepts_at_a_new_dimension_needs_no_vector_index():
    from tutorbrain.reembed import column_dimensions, resize_column, targets

    (target,) = [t for t in targets() if t.label == "concepts"]
    assert target.index_name == "" and target.index_sql == ""
    resize_column(target, 8)
    assert column_dimensions(target) == 8
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_indexes WHERE indexname = 'concept_embedding_hnsw'")
        assert cursor.fetchone()[0] == 0
