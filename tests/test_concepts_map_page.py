"""The teacher's map page at a thousand concepts (issue 13, item 6): fast, paginated, the
cycle summarised, and a picture that stays readable (the most central concepts, arrows,
a "not drawn" line, labels that never overlap, nodes as links)."""

from __future__ import annotations

import random
import re
import time

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.urls import reverse

from concepts.models import Concept, Prerequisite, SubjectMap
from concepts.naming import concept_key
from concepts.picture import MAX_DRAWN, PictureConcept, picture_layout
from concepts.selectors import map_cycles, map_picture
from concepts.services import map_recompute
from tests.factories import SubjectFactory

WORDS_A = (
    "cellular", "political", "federal", "electoral", "comparative", "judicial", "civil",
    "representative", "interquartile", "standard", "sampling", "membrane", "osmotic",
    "parliamentary", "constitutional", "executive", "legislative", "international",
)  # fmt: skip
WORDS_B = (
    "theory", "system", "rights", "power", "range", "deviation", "distribution", "transport",
    "potential", "democracy", "sovereignty", "legitimacy", "institution", "equilibrium",
    "party", "coalition", "review", "federalism", "bureaucracy", "ideology",
)  # fmt: skip


def generated_map(*, size: int = 1000, cycle: int = 220, isolated: int = 30, seed: int = 13):
    """A subject with `size` concepts: hubs, a prerequisite ring of `cycle` concepts and
    `isolated` concepts without edges; derived numbers by the real `map_recompute`."""
    rng = random.Random(seed)
    subject = SubjectFactory()
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < size:
        words = [rng.choice(WORDS_A), rng.choice(WORDS_B)]
        if rng.random() < 0.3:
            words.insert(0, rng.choice(WORDS_A))
        name = " ".join(words).capitalize() + f" {len(names)}"
        if rng.random() < 0.05:
            name = "The long and winding definition of " + name  # longer than a label
        if name not in seen:
            seen.add(name)
            names.append(name)
    concepts = Concept.objects.bulk_create(
        Concept(subject=subject, name=n, key=concept_key(n), summary="…") for n in names
    )
    edges: set[tuple[int, int]] = set()
    linked = concepts[: size - isolated]
    for i, concept in enumerate(linked[1:], start=1):
        for _ in range(rng.randint(1, 3)):
            j = min(int(rng.paretovariate(1.1)) - 1, i - 1)  # hubs among the first few
            edges.add((concept.pk, linked[j].pk))
    ring = linked[-cycle:]
    for a, b in zip(ring, ring[1:] + ring[:1], strict=True):
        edges.add((a.pk, b.pk))  # a ring: every one builds on the next, the last on the first
    edges = {(a, b) for a, b in edges if a != b}
    Prerequisite.objects.bulk_create(
        Prerequisite(subject=subject, concept_id=a, prerequisite_id=b) for a, b in edges
    )
    map_recompute(subject=subject)
    return subject


@pytest.fixture
def thousand(db):
    return generated_map()


@pytest.fixture
def viewer(client, db):
    user = get_user_model().objects.create_user("viewer", password="pw", is_staff=True)
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="concepts", codename__startswith="view_")
    )
    client.force_login(user)
    return client


def test_the_map_page_of_a_thousand_concepts_renders_fast_in_few_queries(
    viewer, thousand, django_assert_max_num_queries
):
    url = reverse("admin:concepts_subjectmap_change", args=[thousand.pk])
    viewer.get(url)  # warm: templates compiled, the font loaded once per process
    timings = []
    for _ in range(3):
        with django_assert_max_num_queries(20):
            start = time.perf_counter()
            response = viewer.get(url)
            timings.append(time.perf_counter() - start)
    assert response.status_code == 200
    # The bound: under a second. Best of three, so a busy CI machine's pause in one
    # run does not fail it; measured locally at about 0.1-0.2 s.
    assert min(timings) < 1.0, timings
    page = response.content.decode()
    assert len(page) < 250_000  # was 743 KB at 963 concepts: one page of 100 rows now
    rows = re.findall(r"<tr>\s*<td>\d+</td>", page)
    assert len(rows) == 100
    assert "Concepts 1–100 of 1,000." in page
    second = viewer.get(url + "?page=10").content.decode()
    assert "Concepts 901–1000 of 1,000." in second


def test_a_cycle_of_220_concepts_is_one_line_not_a_wall_of_names(viewer, thousand):
    subject_map = SubjectMap.objects.get(subject=thousand)
    assert len(subject_map.cycle) == 220
    cycles = map_cycles(subject_map=subject_map)
    assert [c.size for c in cycles] == [220]
    page = viewer.get(reverse("admin:concepts_subjectmap_change", args=[thousand.pk]))
    text = page.content.decode()
    assert "One prerequisite cycle" in text
    assert "220 concepts, most central: " in text and " and 215 more" in text
    # The names beyond the first five appear only inside the folded list.
    visible = re.sub(r"<details.*?</details>", "", text, flags=re.S)
    hidden = [n for n in cycles[0].names[5:] if n not in visible.split("<h2")[0]]
    assert len(hidden) >= 200
    assert "errornote" not in text.split('id="picture"')[0]


def test_the_picture_draws_the_most_central_and_says_how_many_are_not(viewer, thousand):
    picture = map_picture(subject=thousand, limit=40)
    assert len(picture.nodes) == 40
    top = list(
        Concept.objects.filter(subject=thousand)
        .order_by("-centrality")
        .values_list("pk", flat=True)[:5]
    )
    assert set(top) <= {n.concept.id for n in picture.nodes}
    drawn = {n.concept.id for n in picture.nodes}
    expected_edges = Prerequisite.objects.filter(concept_id__in=drawn, prerequisite_id__in=drawn)
    assert len(picture.edges) == expected_edges.count() > 0
    caption = picture.caption()
    assert "the 40 most central of 1,000 concepts" in caption
    assert f"Not drawn: 960 concepts and {picture.not_drawn_edges:,} edges" in caption
    assert picture.overlapping() == []

    page = viewer.get(reverse("admin:concepts_subjectmap_change", args=[thousand.pk]))
    text = page.content.decode()
    assert "Not drawn: 960 concepts" in text
    start = text.index('class="tb-map"')
    svg = text[start : text.index("</svg>", start)]
    assert svg.count('marker-end="url(#tb-arrow') == len(picture.edges)  # arrows
    links = re.findall(r'<a href="(/admin/concepts/concept/(\d+)/change/)">', svg)
    assert {int(pk) for _, pk in links} == drawn  # every node links to its concept page


@pytest.mark.parametrize("limit", [1, 40, 90, MAX_DRAWN])
def test_labels_never_overlap_whatever_is_drawn(thousand, limit):
    picture = map_picture(subject=thousand, limit=limit)
    assert len(picture.nodes) == limit
    assert picture.overlapping() == []
    for node in picture.nodes:  # inside the picture
        assert node.box.x >= 0 and node.box.right <= picture.width
        assert node.box.y >= 0 and node.box.bottom <= picture.height
        assert node.text_width < node.box.width  # the name fits its box


def test_arrows_point_from_prerequisite_to_what_builds_on_it():
    concepts = [
        PictureConcept(1, "Cell", 0.6, 0.5, True),
        PictureConcept(2, "Membrane", 0.6, 0.3, True),
        PictureConcept(3, "Osmosis", 0.6, 0.2, True),
    ]
    # Membrane builds on Cell, Osmosis builds on Membrane: (prerequisite, concept).
    picture = picture_layout(
        concepts=concepts, edges=[(1, 2), (2, 3)], concept_count=3, edge_count=2
    )
    box = {n.concept.id: n.box for n in picture.nodes}
    assert box[1].right < box[2].x and box[2].right < box[3].x
    for edge in picture.edges:
        start = re.match(r"M([\d.]+),", edge.path)
        end = re.search(r" ([\d.]+),[\d.]+$", edge.path)
        assert start and end
        assert float(start.group(1)) == pytest.approx(box[edge.prerequisite].right, abs=0.1)
        assert float(end.group(1)) == pytest.approx(box[edge.concept].x, abs=0.1)
    assert picture.caption().startswith("All 3 concepts and the 2 prerequisite edges")


def test_concepts_without_a_drawn_edge_stand_apart_and_the_caption_says_why():
    concepts = [
        PictureConcept(1, "Cell", 0.6, 0.5, True),
        PictureConcept(2, "Membrane", 0.6, 0.3, True),
        PictureConcept(3, "Photosynthesis", 0.6, 0.1, False),  # no edge in the whole map
        PictureConcept(4, "Ribosome", 0.6, 0.1, True),  # edges only to concepts not drawn
    ]
    picture = picture_layout(concepts=concepts, edges=[(1, 2)], concept_count=9, edge_count=5)
    apart = [n for n in picture.nodes if n.apart]
    assert {n.concept.id for n in apart} == {3, 4}
    linked_right = max(n.box.right for n in picture.nodes if not n.apart)
    assert all(n.box.x > linked_right for n in apart)
    assert "Not linked to a drawn concept:" in [text for _, text in picture.headings]
    caption = picture.caption()
    assert "2 drawn concepts stand apart on the right" in caption
    assert "1 has no prerequisite edge at all" in caption
    assert "1 is linked only to concepts not drawn" in caption
    assert picture.overlapping() == []


def test_a_long_or_hostile_name_is_shortened_and_escaped_in_the_picture():
    from concepts.picture import picture_svg

    name = "<script>alert(1)</script> " + "very long name " * 10
    picture = picture_layout(
        concepts=[PictureConcept(1, name, 0.35, 0.1, False)],
        edges=[],
        concept_count=1,
        edge_count=0,
    )
    svg = picture_svg(picture, lambda pk: f"/c/{pk}/")
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert picture.nodes[0].label.endswith("…") and len(picture.nodes[0].label) <= 34
