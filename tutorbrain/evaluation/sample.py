"""Histories over a map that already exists (the demo's sample subject).

The concept-map helper's sample subject is read from its files by the product itself;
this module turns the resulting map into the generator's subject description (concept
names, summaries, the real prerequisite edges, which file explains what) so that the
demo's students talk about the concepts the map really has.
"""

from __future__ import annotations

from datetime import datetime

from tutorbrain.evaluation.content import ConceptSpec, SubjectTemplate
from tutorbrain.evaluation.generator import HistoryPlan, history_plan

# Nicknames a class might give, for the demo's teaching-form message, keyed by the
# normalised concept name; only those the map really has are used.
DEMO_NICKNAMES = {
    "en": {"mitochondria": "the powerhouse of the cell", "nucleus": "the control room"},
    "es": {"mitochondria": "la central de energía", "mitocondria": "la central de energía"},
}
DEMO_STUDENTS = (("demo-ana", "en"), ("demo-lucia", "es"))
DEMO_SEED = 7


def template_from_map(*, subject, language: str) -> SubjectTemplate:
    """The subject's current map as a SubjectTemplate (names, summaries, real edges, files)."""
    from concepts.models import Concept, ConceptSource, Prerequisite
    from tutorbrain.language import normalized_phrase

    concepts = list(Concept.objects.filter(subject=subject).order_by("teaching_rank", "name"))
    edges: dict[int, list[str]] = {}
    for concept_id, name in Prerequisite.objects.filter(subject=subject).values_list(
        "concept_id", "prerequisite__name"
    ):
        edges.setdefault(concept_id, []).append(name)
    files: dict[str, list[tuple[int, str]]] = {}
    for file_name, pages, name in (
        ConceptSource.objects.filter(
            concept__subject=subject, file__replaced_at__isnull=True, file__removed_at__isnull=True
        )
        .order_by("file__name", "concept__name")
        .values_list("file__name", "pages", "concept__name")
    ):
        files.setdefault(file_name, []).append(((pages or [1])[0], name))
    nicknames = {
        c.name: nick
        for c in concepts
        for key, nick in DEMO_NICKNAMES.get(language, {}).items()
        if normalized_phrase(c.name) == key
    }
    return SubjectTemplate(
        code=f"map-{subject.external_id}-{language}",
        language=language,
        title=subject.name,
        concepts=tuple(
            ConceptSpec(
                name=c.name,
                definition=c.summary or c.definition or c.name,
                builds_on=tuple(edges.get(c.pk, [])),
            )
            for c in concepts
        ),
        files=tuple(
            (name, tuple(n for _, n in sorted(pairs))) for name, pairs in sorted(files.items())
        ),
        nicknames=nicknames,
    )


def sample_plans(*, subject, now: datetime) -> list[HistoryPlan]:
    """Several months of history for the demo's two students (English and Spanish)."""
    plans = []
    for index, (student, language) in enumerate(DEMO_STUDENTS):
        template = template_from_map(subject=subject, language=language)
        if not template.concepts:
            continue
        plans.append(
            history_plan(
                seed=DEMO_SEED,
                index=index,
                template=template,
                subject_external_id=subject.external_id,
                student_external_id=student,
                now=now,
                files=template.files,
            )
        )
    return plans
