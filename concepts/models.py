"""The concept map of a subject: concepts read from files, prerequisite edges, teaching.

Concepts and edges are the *current* map, recomputed when files are read or a person
teaches; what happened is in the episode log (file and taught episodes) and in the
append-only taught notes.
"""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import Q
from pgvector.django import VectorField

from memory.immutability import AppendOnlyModel, no_truncate
from memory.models import Episode, Student, Subject, SubjectFile

# Readiness bands: how well the *material* covers a concept.
READINESS_NAMED = 0.35  # only named (an assumed prerequisite)
READINESS_EXPLAINED = 0.60  # a file explains it
READINESS_CONFIRMED = 0.85  # a passed check confirmed it
READINESS_TAUGHT = 1.0  # a person taught it

# The one vocabulary of the bands: the picture's legend and colours, the admin's tables
# and the concept page all name a concept's readiness with these words.
READINESS_BAND_LABELS: dict[float, str] = {
    READINESS_NAMED: "only named",
    READINESS_EXPLAINED: "explained by a file",
    READINESS_CONFIRMED: "confirmed by a check",
    READINESS_TAUGHT: "taught by a person",
}


def readiness_band(readiness: float) -> float:
    """The band a readiness value sits in (the nearest one: values are band values)."""
    return min(READINESS_BAND_LABELS, key=lambda band: abs(band - readiness))


def readiness_label(readiness: float) -> str:
    return f"{READINESS_BAND_LABELS[readiness_band(readiness)]} ({readiness:.2f})"


class Concept(models.Model):
    """One node of a subject's map."""

    class Layer(models.TextChoices):
        # Where the node came from; how well it is covered is its readiness band
        # (READINESS_BAND_LABELS), so these words must not repeat the bands' words.
        FILE = "file", "read from a file"
        ASSUMED = "assumed", "assumed by several concepts, in no file"
        TAUGHT = "taught", "added by a person teaching"

    subject = models.ForeignKey(Subject, on_delete=models.PROTECT, related_name="concepts")
    name = models.CharField(max_length=200)
    # Canonical, script-aware normalised name: the first merge key.
    key = models.CharField(max_length=200)
    # Keys of the other names this concept was merged from ("mitocondria", "osmose"):
    # exact-name routing (teaching, topics) matches them as it matches `key`.
    aliases = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    # The language of the file the name (and summary) came from: a name from a file in
    # the subject's own language wins over one from a chapter in another language.
    name_language = models.CharField(max_length=8, blank=True)
    summary = models.CharField(max_length=500, blank=True)
    definition = models.TextField(blank=True)
    # The distinct tokens of the definition (`concepts.lookup.definition_tokens`): which
    # older definitions may name a new concept is a test on these short arrays (a hashed
    # probe per token), not a read of every definition.
    definition_tokens = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    layer = models.CharField(max_length=10, choices=Layer.choices, default=Layer.FILE)
    # Prerequisites a file assumes but no file explains and only this concept assumes
    # recorded here, drawn nowhere.
    assumes = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    confirmed_by_check = models.BooleanField(default=False)
    taught = models.BooleanField(default=False)
    # Derived numbers, recomputed after every change to the map.
    readiness = models.FloatField(default=READINESS_NAMED)
    centrality = models.FloatField(default=0.0)
    generation = models.PositiveIntegerField(default=0)
    teaching_rank = models.PositiveIntegerField(default=0)
    embedding = VectorField(dimensions=settings.TUTORBRAIN_EMBEDDING_DIMENSIONS, null=True)
    embedding_model = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        permissions = [("teach_concept", "Can teach the concept map")]
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "key"], name="concept_unique_key_per_subject"
            ),
            models.CheckConstraint(
                condition=Q(readiness__gte=0) & Q(readiness__lte=1), name="concept_readiness_0_1"
            ),
        ]
        indexes = [
            # No index on centrality (or readiness, generation, teaching_rank): every
            # reading rewrites them for most of the map, and with none of them indexed
            # (and the table's fillfactor at 60, migration 0004) those are HOT updates;
            # an index on one turned each into an insert into every index, the HNSW one
            # included: 30-50x slower at a thousand concepts (docs/concept-map.md). The
            # block's "top N by centrality" sorts the subject's rows (found by the
            # subject index) instead.
            # No vector index either: nothing searches concept vectors through one (the
            # merge compares a file's names with the subject's vectors by an exact scan,
            # the block's routing computes the distance of every concept of the
            # subject), and keeping an HNSW graph cost ~2 ms for every concept a reading
            # created (migration 0008).
            GinIndex(fields=["assumes"], name="concept_assumes_gin"),
            # concept_by_name: a name that was merged into a concept under another key.
            GinIndex(fields=["aliases"], name="concept_aliases_gin"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def readiness_label(self) -> str:
        return readiness_label(self.readiness)


class ConceptSource(models.Model):
    """Provenance: a file that explains a concept, and on which pages (R-2.3)."""

    concept = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="sources")
    file = models.ForeignKey(SubjectFile, on_delete=models.PROTECT, related_name="concept_sources")
    pages = ArrayField(models.PositiveIntegerField(), default=list, blank=True)
    # The name the file used for it (a Spanish chapter's "Ósmosis" merged into "Osmosis").
    name_in_file = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["concept", "file"], name="conceptsource_unique_concept_file"
            )
        ]

    def __str__(self) -> str:
        return f"{self.concept} ← {self.file}"


class Prerequisite(models.Model):
    """An edge of the map: `concept` builds on `prerequisite` (R-2.5).

    PageRank runs over these edges from concept to prerequisite, so a prerequisite that
    much builds on collects the rank: a hub.
    """

    subject = models.ForeignKey(Subject, on_delete=models.PROTECT, related_name="prerequisites")
    concept = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="builds_on")
    prerequisite = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="supports")
    # How many files state this edge: more files, more weight.
    weight = models.FloatField(default=1.0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["concept", "prerequisite"], name="prerequisite_unique_edge"
            ),
            models.CheckConstraint(
                condition=~Q(concept=models.F("prerequisite")), name="prerequisite_not_self"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.concept} builds on {self.prerequisite}"


class TaughtNote(AppendOnlyModel):
    """What a person taught about a concept (R-3). Never edited; the latest is shown."""

    concept = models.ForeignKey(Concept, on_delete=models.PROTECT, related_name="taught_notes")
    note = models.TextField()
    # Who taught it: a student in the chat, or a teacher in the admin.
    student = models.ForeignKey(
        Student, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    teacher = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    episode = models.ForeignKey(
        Episode, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["concept", "-created_at"], name="taughtnote_concept_time_idx")
        ]
        triggers = [
            pgtrigger.Protect(
                name="taughtnote_append_only", operation=pgtrigger.Update | pgtrigger.Delete
            ),
            no_truncate("taughtnote_no_truncate"),
        ]

    def __str__(self) -> str:
        return f"{self.concept}: {self.note[:60]}"


class FileReading(models.Model):
    """The reading state of one file: queued, reading, done, or failed with the reason."""

    class State(models.TextChoices):
        QUEUED = "queued", "queued"
        READING = "reading", "reading"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    file = models.OneToOneField(
        SubjectFile, primary_key=True, on_delete=models.PROTECT, related_name="reading"
    )
    state = models.CharField(max_length=8, choices=State.choices, default=State.QUEUED)
    reason = models.TextField(blank=True)
    extractor = models.CharField(max_length=100, blank=True)
    concepts_found = models.PositiveIntegerField(default=0)
    # Names the validator turned away (furniture, headings, sentences), for the admin.
    rejected_names = ArrayField(models.CharField(max_length=300), default=list, blank=True)
    queued_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Who is reading it ("host:pid") and when it last said it still is (a lease renewed
    # while the reading runs): a reading whose worker is gone is re-queued by the sweep
    # (concepts.services.file_readings_requeue_lost), not left "reading" forever.
    worker = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.file}: {self.state}"


class SubjectMap(models.Model):
    """Subject-level derived numbers, recomputed with the map (R-2.5)."""

    subject = models.OneToOneField(
        Subject, primary_key=True, on_delete=models.PROTECT, related_name="map"
    )
    concept_count = models.PositiveIntegerField(default=0)
    # Centrality-weighted mean of concept readiness: about the material, not the student.
    readiness = models.FloatField(default=0.0)
    # Names of concepts on a prerequisite cycle, if any (reported, never a crash).
    cycle = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"map of {self.subject}"
