"""Reads of the concept map. The block build reads `map_for_block` (a few queries)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db.models import Case, Exists, IntegerField, OuterRef, Q, Subquery, Value, When

from concepts.models import Concept, FileReading, Prerequisite, SubjectMap, TaughtNote
from concepts.naming import concept_key, find_keys_in
from concepts.picture import Picture, PictureConcept, picture_layout
from memory.models import Subject

__all__ = [
    "MapConcept",
    "MapCycle",
    "MapView",
    "concept_by_name",
    "concept_descriptions",
    "concept_find_named_in",
    "concept_key",
    "map_cycles",
    "map_for_block",
    "map_picture",
]


def concept_by_name(*, subject: Subject, name: str) -> Concept | None:
    """The concept of this subject whose key (or a merged name's key) equals the name's."""
    key = concept_key(name)
    if not key:
        return None
    return (
        Concept.objects.filter(subject=subject)
        .filter(Q(key=key) | Q(aliases__contains=[key]))
        .order_by("pk")
        .first()
    )


def concept_keys_of(*, subject: Subject) -> dict[str, int]:
    """Every key and alias of the subject's concepts -> concept id."""
    out: dict[str, int] = {}
    for concept_id, key, aliases in Concept.objects.filter(subject=subject).values_list(
        "pk", "key", "aliases"
    ):
        out.setdefault(key, concept_id)
        for alias in aliases:
            out.setdefault(alias, concept_id)
    return out


def concept_find_named_in(*, subject: Subject, text: str) -> Concept | None:
    """The concept whose name occurs in `text` as whole words (normalised); longest wins."""
    if not text or not text.strip():
        return None
    found = find_keys_in(text, concept_keys_of(subject=subject))
    if not found:
        return None
    return Concept.objects.get(pk=found[0][1])


@dataclass(frozen=True)
class MapConcept:
    id: int
    name: str
    summary: str
    taught_note: str | None
    builds_on: list[str]
    readiness: float
    centrality: float
    layer: str
    assumes: list[str] = field(default_factory=list)
    key: str = ""


@dataclass(frozen=True)
class MapView:
    """The subject's map as the memory block shows it (about the material, not the student)."""

    subject_id: int
    concept_count: int
    readiness: float
    concepts: list[MapConcept]
    cycle: list[str] = field(default_factory=list)


def map_for_block(
    *, subject: Subject, limit: int | None = None, first_keys: Sequence[str] = ()
) -> MapView:
    """Concepts by centrality (desc) with their latest taught note and builds-on names.

    `first_keys` (concept keys, e.g. the concepts a message was routed to) lead the list
    whatever their centrality: the concept a student asks about must not be cut for the
    hubs, since its line carries its prerequisites ("builds on: ...").
    Four queries whatever the map's size: the map row, the concepts, their edges, and
    the latest taught note per concept (DISTINCT ON).
    """
    subject_map = SubjectMap.objects.filter(subject=subject).first()
    ordering: list = ["-centrality", "teaching_rank", "name"]
    if first_keys:
        leading = Case(
            *[When(key=key, then=Value(i)) for i, key in enumerate(first_keys)],
            default=Value(len(first_keys)),
            output_field=IntegerField(),
        )
        ordering.insert(0, leading)
    concepts_qs = (
        Concept.objects.filter(subject=subject)
        .order_by(*ordering)
        .only("pk", "key", "name", "summary", "readiness", "centrality", "layer", "assumes")
    )
    if limit is not None:
        concepts_qs = concepts_qs[:limit]
    concepts = list(concepts_qs)
    ids = [c.pk for c in concepts]
    builds_on: dict[int, list[str]] = {i: [] for i in ids}
    for concept_id, prerequisite_name in (
        Prerequisite.objects.filter(concept_id__in=ids)
        .order_by("concept_id", "-prerequisite__centrality", "prerequisite__name")
        .values_list("concept_id", "prerequisite__name")
    ):
        builds_on[concept_id].append(prerequisite_name)
    notes = dict(
        TaughtNote.objects.filter(concept_id__in=ids)
        .order_by("concept_id", "-created_at", "-pk")
        .distinct("concept_id")
        .values_list("concept_id", "note")
    )
    count = (
        subject_map.concept_count
        if subject_map is not None
        else Concept.objects.filter(subject=subject).count()
    )
    return MapView(
        subject_id=subject.pk,
        concept_count=count,
        readiness=subject_map.readiness if subject_map is not None else 0.0,
        concepts=[
            MapConcept(
                id=c.pk,
                name=c.name,
                summary=c.summary,
                taught_note=notes.get(c.pk),
                builds_on=builds_on[c.pk],
                readiness=c.readiness,
                centrality=c.centrality,
                layer=c.layer,
                assumes=list(c.assumes),
                key=c.key,
            )
            for c in concepts
        ],
        cycle=list(subject_map.cycle) if subject_map is not None else [],
    )


def concept_descriptions(*, subject_id: int) -> list[tuple[str, str]]:
    """(key, description) of every concept of the subject, for routing by words.

    The description is what a person reads about the concept: its name, its definition
    (its summary when no file defined it) and its latest taught note. One query.
    """
    latest_note = (
        TaughtNote.objects.filter(concept_id=OuterRef("pk"))
        .order_by("-created_at", "-pk")
        .values("note")[:1]
    )
    rows = (
        Concept.objects.filter(subject_id=subject_id)
        .annotate(latest_note=Subquery(latest_note))
        .values_list("key", "name", "summary", "definition", "latest_note")
    )
    return [
        (key, "\n".join(part for part in (name, definition or summary, note) if part))
        for key, name, summary, definition, note in rows
    ]


def teaching_order(*, subject: Subject) -> list[Concept]:
    """Concepts in teaching order: prerequisites first, hubs first within a generation."""
    return list(Concept.objects.filter(subject=subject).order_by("teaching_rank", "name"))


def file_reading_get(*, file_id: int) -> FileReading | None:
    return FileReading.objects.select_related("file").filter(pk=file_id).first()


def map_picture(*, subject: Subject, limit: int) -> Picture:
    """The picture of the `limit` most central concepts (four queries, any map size).

    Ordered by the (subject, -centrality) index; edges among the drawn only; the whole
    map's counts for the "not drawn" line.
    """
    rows = list(
        Concept.objects.filter(subject=subject)
        .annotate(
            has_edge=Exists(Prerequisite.objects.filter(concept=OuterRef("pk")))
            | Exists(Prerequisite.objects.filter(prerequisite=OuterRef("pk")))
        )
        .order_by("-centrality", "teaching_rank", "pk")
        .values_list("pk", "name", "readiness", "centrality", "has_edge")[:limit]
    )
    ids = [row[0] for row in rows]
    edges = list(
        Prerequisite.objects.filter(concept_id__in=ids, prerequisite_id__in=ids).values_list(
            "prerequisite_id", "concept_id"
        )
    )
    return picture_layout(
        concepts=[PictureConcept(*row) for row in rows],
        edges=edges,
        concept_count=Concept.objects.filter(subject=subject).count(),
        edge_count=Prerequisite.objects.filter(subject=subject).count(),
    )


@dataclass(frozen=True)
class MapCycle:
    names: list[str]  # most central first

    @property
    def size(self) -> int:
        return len(self.names)


def map_cycles(*, subject_map: SubjectMap) -> list[MapCycle]:
    """The prerequisite cycles named in `SubjectMap.cycle`, one per strongly connected set.

    `cycle` lists every concept on some cycle; which cycle each belongs to comes from the
    edges among those concepts only (cost grows with the cycles, not the map). Biggest
    first.
    """
    import networkx as nx

    if not subject_map.cycle:
        return []
    members = dict(
        Concept.objects.filter(subject_id=subject_map.subject_id, name__in=subject_map.cycle)
        .order_by("-centrality", "name")
        .values_list("pk", "name")
    )
    graph = nx.DiGraph()
    graph.add_nodes_from(members)
    graph.add_edges_from(
        Prerequisite.objects.filter(
            concept_id__in=list(members), prerequisite_id__in=list(members)
        ).values_list("concept_id", "prerequisite_id")
    )
    rank = {pk: i for i, pk in enumerate(members)}
    cycles = [
        MapCycle([members[pk] for pk in sorted(component, key=rank.__getitem__)])
        for component in nx.strongly_connected_components(graph)
        if len(component) > 1
    ]
    return sorted(cycles, key=lambda c: (-c.size, c.names))
