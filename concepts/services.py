"""Writes of the concept map: reading files into it, teaching it, deriving its numbers.

Every public service is one transaction that first locks the subject's `SubjectMap`
row: changes to one map are serialised, so two files read at once cannot race on the
same concept key. Slow work (parsing, the extractor, embeddings) happens before the
transaction opens; tasks are queued after it commits.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from concepts import graph
from concepts.models import (
    READINESS_CONFIRMED,
    READINESS_EXPLAINED,
    READINESS_NAMED,
    READINESS_TAUGHT,
    Concept,
    ConceptSource,
    Prerequisite,
    SubjectMap,
)
from concepts.naming import concept_key
from memory.models import Subject

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------
# Derived numbers
# --------------------------------------------------------------------------------------


def concept_readiness(*, concept: Concept, explained: bool) -> float:
    """The readiness band of one concept: what the material says about it."""
    if concept.taught:
        return READINESS_TAUGHT
    if concept.confirmed_by_check:
        return READINESS_CONFIRMED
    if explained:
        return READINESS_EXPLAINED
    return READINESS_NAMED


def _lock_map(subject: Subject) -> SubjectMap:
    SubjectMap.objects.get_or_create(subject=subject)
    return SubjectMap.objects.select_for_update().get(subject=subject)


def _explained_ids(subject: Subject) -> set[int]:
    """Concepts that a *current* file explains (a replaced or removed file no longer does)."""
    return set(
        ConceptSource.objects.filter(
            concept__subject=subject,
            file__replaced_at__isnull=True,
            file__removed_at__isnull=True,
        ).values_list("concept_id", flat=True)
    )


def _resolve_assumptions(subject: Subject, concepts: list[Concept]) -> list[Concept]:
    """R-2.4: an assumed prerequisite is a node only when two or more concepts assume it.

    A name in `Concept.assumes` that some concept now carries (a file explained it, or a
    second concept assumed it and it became a node) turns into an edge and leaves the
    list; a name only one concept assumes stays recorded there, drawn nowhere.
    """
    by_key: dict[str, Concept] = {}
    for concept in concepts:
        by_key.setdefault(concept.key, concept)
        for alias in concept.aliases:
            by_key.setdefault(alias, concept)
    holders: dict[str, list[tuple[Concept, str]]] = defaultdict(list)
    for concept in concepts:
        for name in concept.assumes:
            key = concept_key(name)
            if key and all(h is not concept for h, _ in holders[key]):
                holders[key].append((concept, name))
    changed: dict[int, Concept] = {}
    created: list[Concept] = []
    for key, assumed_by in holders.items():
        target = by_key.get(key)
        if target is None and len(assumed_by) >= 2:
            target = Concept.objects.create(
                subject=subject,
                name=assumed_by[0][1][:200],
                key=key,
                layer=Concept.Layer.ASSUMED,
                readiness=READINESS_NAMED,
            )
            by_key[key] = target
            created.append(target)
        if target is None:
            continue
        for holder, _name in assumed_by:
            holder.assumes = [n for n in holder.assumes if concept_key(n) != key]
            changed[holder.pk] = holder
            if holder.pk != target.pk:
                Prerequisite.objects.get_or_create(
                    subject=subject, concept=holder, prerequisite=target
                )
    if changed:
        Concept.objects.bulk_update(list(changed.values()), ["assumes"])
    return created


def _recompute_locked(subject_map: SubjectMap, now: datetime) -> SubjectMap:
    subject = subject_map.subject
    concepts = list(Concept.objects.filter(subject=subject).order_by("pk"))
    created = _resolve_assumptions(subject, concepts)
    concepts.extend(created)
    explained = _explained_ids(subject)
    for concept in concepts:
        concept.readiness = concept_readiness(concept=concept, explained=concept.pk in explained)
    edges = list(
        Prerequisite.objects.filter(subject=subject).values_list(
            "concept_id", "prerequisite_id", "weight"
        )
    )
    derived = graph.derive(
        nodes=[(c.pk, c.name, c.readiness) for c in concepts],
        edges=edges,
    )
    for concept in concepts:
        concept.centrality = derived.centrality.get(concept.pk, 0.0)
        concept.generation = derived.generation.get(concept.pk, 0)
        concept.teaching_rank = derived.teaching_rank.get(concept.pk, 0)
    Concept.objects.bulk_update(
        concepts, ["readiness", "centrality", "generation", "teaching_rank"], batch_size=500
    )
    names = {c.pk: c.name for c in concepts}
    subject_map.concept_count = len(concepts)
    subject_map.readiness = round(derived.readiness, 6)
    subject_map.cycle = [names[i][:200] for i in derived.cycle]
    subject_map.computed_at = now
    subject_map.save(update_fields=["concept_count", "readiness", "cycle", "computed_at"])
    if created:
        _embed_after_commit(subject)
    return subject_map


def _embed_after_commit(subject: Subject) -> None:
    from concepts.tasks import concepts_embed_missing

    subject_id = subject.pk
    transaction.on_commit(lambda: concepts_embed_missing.delay(subject_id))


@transaction.atomic
def map_recompute(*, subject: Subject, now: datetime | None = None) -> SubjectMap:
    """Recompute assumed nodes, readiness, centrality, teaching order and subject readiness."""
    return _recompute_locked(_lock_map(subject), now or timezone.now())


@transaction.atomic
def concept_confirm_by_check(*, concept: Concept, now: datetime | None = None) -> Concept:
    """A passed check confirmed the concept: readiness to the 0.85 band unless taught."""
    subject_map = _lock_map(concept.subject)
    locked = Concept.objects.select_for_update().get(pk=concept.pk)
    if not locked.confirmed_by_check:
        locked.confirmed_by_check = True
        locked.save(update_fields=["confirmed_by_check", "updated_at"])
        _recompute_locked(subject_map, now or timezone.now())
        locked.refresh_from_db()
    return locked


def concept_name_vectors(names: list[str]):
    """Vectors of concept names with the process's embedder (never inside a transaction)."""
    from memory import indexing

    return indexing.embed(names), indexing.embed_model_name()


def concepts_embed(*, subject: Subject) -> int:
    """Give every concept of the subject without a vector one (its name's embedding)."""
    missing = list(
        Concept.objects.filter(subject=subject, embedding__isnull=True).values_list("pk", "name")
    )
    if not missing:
        return 0
    vectors, model_name = concept_name_vectors([name for _, name in missing])
    with transaction.atomic():
        for (pk, _), vector in zip(missing, vectors, strict=True):
            Concept.objects.filter(pk=pk, embedding__isnull=True).update(
                embedding=vector, embedding_model=model_name
            )
    return len(missing)
