"""The map's derived numbers (R-2.5), assumed prerequisites (R-2.4) and the contracts
other apps call (concept_key, concept_by_name, concept_find_named_in, map_for_block,
concept_confirm_by_check)."""

from __future__ import annotations

import pytest

from concepts import graph
from concepts.models import (
    READINESS_CONFIRMED,
    READINESS_EXPLAINED,
    READINESS_NAMED,
    READINESS_TAUGHT,
    Concept,
    Prerequisite,
    SubjectMap,
)
from concepts.naming import normalize_text
from concepts.selectors import (
    concept_by_name,
    concept_find_named_in,
    concept_key,
    map_for_block,
)
from concepts.services import concept_confirm_by_check, map_recompute
from tests.factories import SubjectFactory


def _concept(subject, name, **fields):
    return Concept.objects.create(subject=subject, name=name, key=concept_key(name), **fields)


def _edge(subject, concept, prerequisite):
    return Prerequisite.objects.create(subject=subject, concept=concept, prerequisite=prerequisite)


# ---- concept_key ---------------------------------------------------------------------


def test_the_key_folds_case_accents_articles_and_punctuation():
    assert concept_key("Ósmosis") == concept_key("osmosis") == "osmosis"
    assert concept_key("The Cell-Membrane") == "cell membrane"
    assert concept_key("L'osmose") == "osmose"


def test_the_key_folds_arabic_diacritics_variants_and_the_article():
    assert concept_key("الخَلِيَّة") == concept_key("خليه")
    # Presentation forms (as some PDFs give Arabic) carry the article too: its lam
    # appears only once the text is normalised.
    assert concept_key("\ufe8d\ufedf\ufea8\ufee0\ufef4\ufe94") == concept_key("خليه")


def test_the_key_keeps_marks_that_carry_meaning_outside_latin_script():
    # Devanagari vowel signs are combining marks but change the word.
    assert concept_key("कोशिका") != concept_key("कशक")


def test_a_mark_is_folded_by_the_script_of_the_letter_it_sits_on():
    # Greek and Cyrillic accents go like Latin ones; a mark with no letter before it,
    # or on a letter of another script (Han), stays; plain ASCII comes back as it was.
    assert normalize_text("Ελληνικά ёж") == "ελληνικα еж"
    assert normalize_text("\u0301a") == "\u0301a"
    assert normalize_text("中\u0301") == "中\u0301"
    assert normalize_text("Cell membrane") == "cell membrane"
    # Inside running text: the mark after a Han letter stays, the others go.
    assert normalize_text("a中\u0301 é ё Ώ") == "a中\u0301 e е ω"


# ---- graph ---------------------------------------------------------------------------


def test_the_prerequisite_everything_builds_on_has_the_highest_centrality():
    nodes = [(1, "Cell", 0.6), (2, "Osmosis", 0.6), (3, "Mitosis", 0.6), (4, "Diffusion", 0.6)]
    edges = [(2, 1, 1.0), (3, 1, 1.0), (4, 1, 1.0), (2, 4, 1.0)]
    derived = graph.derive(nodes=nodes, edges=edges)
    assert max(derived.centrality, key=derived.centrality.get) == 1
    # Prerequisites come first in the teaching order.
    assert derived.teaching_rank[1] == 1
    assert derived.teaching_rank[4] < derived.teaching_rank[2]


def test_an_unexplained_hub_lowers_subject_readiness_more_than_an_unexplained_leaf():
    edges = [(2, 1, 1.0), (3, 1, 1.0), (4, 1, 1.0)]
    hub_unexplained = graph.derive(
        nodes=[(1, "Hub", 0.35), (2, "A", 0.6), (3, "B", 0.6), (4, "C", 0.6)], edges=edges
    )
    leaf_unexplained = graph.derive(
        nodes=[(1, "Hub", 0.6), (2, "A", 0.35), (3, "B", 0.6), (4, "C", 0.6)], edges=edges
    )
    assert hub_unexplained.readiness < leaf_unexplained.readiness


def test_a_cycle_does_not_crash_the_teaching_order_and_is_reported():
    nodes = [(1, "A", 0.6), (2, "B", 0.6), (3, "C", 0.6), (4, "D", 0.6)]
    edges = [(1, 2, 1.0), (2, 3, 1.0), (3, 1, 1.0), (4, 1, 1.0)]
    derived = graph.derive(nodes=nodes, edges=edges)
    assert sorted(derived.teaching_rank.values()) == [1, 2, 3, 4]
    assert sorted(derived.cycle) == [1, 2, 3]
    assert derived.teaching_rank[4] == 4  # D builds on the cycle: it comes after it


# ---- services and selectors on the database -------------------------------------------


@pytest.fixture
def subject(db):
    return SubjectFactory()


def test_a_cycle_in_the_database_is_reported_on_the_subject_map(subject):
    a, b = _concept(subject, "Alpha"), _concept(subject, "Beta")
    _edge(subject, a, b)
    _edge(subject, b, a)
    subject_map = map_recompute(subject=subject)
    assert sorted(subject_map.cycle) == ["Alpha", "Beta"]


def test_one_concept_assuming_x_records_it_and_draws_no_node(subject):
    _concept(subject, "Osmosis", assumes=["Semipermeable membrane"])
    map_recompute(subject=subject)
    assert not Concept.objects.filter(subject=subject, key="semipermeable membrane").exists()
    assert Concept.objects.get(subject=subject, key="osmosis").assumes == ["Semipermeable membrane"]


def test_two_concepts_assuming_x_make_x_a_node_both_build_on(subject):
    _concept(subject, "Osmosis", assumes=["Semipermeable membrane"])
    _concept(subject, "Diffusion", assumes=["semipermeable membrane"])
    map_recompute(subject=subject)
    node = Concept.objects.get(subject=subject, key="semipermeable membrane")
    assert node.layer == Concept.Layer.ASSUMED
    assert node.readiness == READINESS_NAMED
    assert set(node.supports.values_list("concept__name", flat=True)) == {"Osmosis", "Diffusion"}
    assert Concept.objects.get(subject=subject, key="osmosis").assumes == []


def test_an_assumed_plural_of_a_concept_is_that_concept_not_a_new_node(subject):
    atom = _concept(subject, "Átomo", assumes=["átomos"])
    molecule = _concept(subject, "Molécula", assumes=["átomos"])
    ion = _concept(subject, "Ion", assumes=["Átomos"])
    map_recompute(subject=subject)
    assert not Concept.objects.filter(subject=subject, key="atomos").exists()
    assert set(atom.supports.values_list("concept__name", flat=True)) == {"Molécula", "Ion"}
    # The concept "assuming" its own plural builds on nothing for it.
    assert not atom.builds_on.exists()
    for concept in (atom, molecule, ion):
        concept.refresh_from_db()
        assert concept.assumes == []


def test_confirming_by_check_lifts_readiness_to_the_confirmed_band(subject):
    concept = _concept(subject, "Osmosis")
    map_recompute(subject=subject)
    confirmed = concept_confirm_by_check(concept=concept)
    assert confirmed.readiness == READINESS_CONFIRMED
    assert SubjectMap.objects.get(subject=subject).readiness == pytest.approx(READINESS_CONFIRMED)


def test_confirming_a_taught_concept_keeps_it_taught(subject):
    concept = _concept(subject, "Osmosis", taught=True)
    assert concept_confirm_by_check(concept=concept).readiness == READINESS_TAUGHT


def test_concept_by_name_matches_key_and_merged_names_exactly(subject):
    concept = _concept(subject, "Mitochondria", aliases=["mitocondria"])
    assert concept_by_name(subject=subject, name="MITOCHONDRIA") == concept
    assert concept_by_name(subject=subject, name="Mitocondria") == concept
    assert concept_by_name(subject=subject, name="Mitochondrion") is None


def test_the_longest_name_in_a_text_wins(subject):
    _concept(subject, "Membrane")
    long = _concept(subject, "Cell membrane")
    found = concept_find_named_in(subject=subject, text="Why is the cell membrane selective?")
    assert found == long
    assert concept_find_named_in(subject=subject, text="membranes everywhere").name == "Membrane"
    assert concept_find_named_in(subject=subject, text="nothing here") is None


def test_map_for_block_orders_by_centrality_with_notes_and_builds_on(
    subject, django_assert_max_num_queries
):
    cell = _concept(subject, "Cell", summary="The unit of life.")
    osmosis = _concept(subject, "Osmosis")
    mito = _concept(subject, "Mitochondria")
    _edge(subject, osmosis, cell)
    _edge(subject, mito, cell)
    map_recompute(subject=subject)
    with django_assert_max_num_queries(4):
        view = map_for_block(subject=subject)
    assert view.concept_count == 3
    assert view.concepts[0].name == "Cell"
    assert view.concepts[0].summary == "The unit of life."
    by_name = {c.name: c for c in view.concepts}
    assert by_name["Osmosis"].builds_on == ["Cell"]
    assert by_name["Osmosis"].readiness == READINESS_NAMED
    assert by_name["Cell"].taught_note is None
    assert READINESS_EXPLAINED > view.readiness > 0


def test_centrality_and_generations_are_networkxs_pagerank_and_topological_generations():
    import random

    import networkx as nx

    rng = random.Random(3)
    for _ in range(40):
        ids = sorted(rng.sample(range(1, 500), rng.randint(2, 40)))
        # Zero weights, dangling nodes, two-concept cycles, an edge to no node.
        edges = [(rng.choice(ids), rng.choice(ids), rng.choice([0.0, 1.0, 2.5])) for _ in ids]
        edges.append((999, ids[0], 1.0))
        derived = graph.derive(nodes=[(i, f"c{i}", 0.5) for i in ids], edges=edges)
        reference = nx.DiGraph()
        reference.add_nodes_from(ids)
        for concept, prerequisite, weight in edges:
            if concept in reference and concept != prerequisite:
                reference.add_edge(concept, prerequisite, weight=weight)
        rank = nx.pagerank(reference, weight="weight", tol=graph.PAGERANK_TOL, max_iter=200)
        assert derived.centrality == pytest.approx(rank, abs=1e-12)
        if max(derived.cycle_sizes, default=0) > graph.CYCLE_KEEP_MAX:
            continue  # broken first: the next test
        condensed = nx.condensation(reference.reverse())
        for layer, components in enumerate(nx.topological_generations(condensed)):
            for component in components:
                for node in condensed.nodes[component]["members"]:
                    assert derived.generation[node] == layer


def test_a_big_cycle_is_reported_with_its_size_and_broken_at_its_weakest_edge():
    from concepts.graph import CYCLE_KEEP_MAX, derive

    size = CYCLE_KEEP_MAX + 2
    nodes = [(i, f"c{i}", 0.5) for i in range(size)]
    # A ring i -> i+1 (concept builds on prerequisite); the edge 2 -> 3 is the weakest.
    edges = [(i, (i + 1) % size, 1.0 if i == 2 else 3.0) for i in range(size)]
    derived = derive(nodes=nodes, edges=edges)
    assert derived.cycle_sizes == [size]
    assert derived.broken_edges == [(2, 3)]
    assert sorted(derived.cycle) == list(range(size))  # reported, though broken
    # With "2 builds on 3" gone, 2 builds on nothing: it is taught first, 3 last.
    assert derived.teaching_rank[2] == 1 and derived.teaching_rank[3] == size
