"""Tenancy (organizations, students, subjects, files, API keys) and the episode log.

Tenancy lives here because `memory` is the bottom of the dependency order
(memory <- concepts <- beliefs <- tutorbrain): every other app may refer to it.
"""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q
from pgvector.django import HnswIndex, VectorField

from memory.immutability import AppendOnlyModel, no_truncate

# --------------------------------------------------------------------------------------
# Tenancy
# --------------------------------------------------------------------------------------


class Organization(models.Model):
    """A school or a chat service: the unit of isolation of the API."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["slug"], name="organization_unique_slug")]

    def __str__(self) -> str:
        return self.name


class ApiKey(models.Model):
    """One chat service's credential. Only a hash is stored; the key is shown once."""

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="api_keys"
    )
    name = models.CharField(max_length=100)
    # The first characters of the key, kept in clear so staff can tell keys apart.
    prefix = models.CharField(max_length=12)
    key_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["key_hash"], name="apikey_unique_hash")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class Student(models.Model):
    """A learner, known by the chat service's own id, created on first use."""

    organization = models.ForeignKey(
        Organization, on_delete=models.PROTECT, related_name="students"
    )
    external_id = models.CharField(max_length=200)
    display_name = models.CharField(max_length=200, blank=True)
    # IANA zone name: "July" and "yesterday" are interpreted in the student's time.
    timezone = models.CharField(max_length=64, default="UTC")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "external_id"], name="student_unique_external_id_per_org"
            )
        ]

    def __str__(self) -> str:
        return self.display_name or self.external_id


class Subject(models.Model):
    """A subject the organization teaches; its files build one concept map."""

    organization = models.ForeignKey(
        Organization, on_delete=models.PROTECT, related_name="subjects"
    )
    external_id = models.CharField(max_length=200)
    name = models.CharField(max_length=200, blank=True)
    # The main language of the subject's material (en, es, pt, fr, ar, ...).
    language = models.CharField(max_length=8, default="en")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "external_id"], name="subject_unique_external_id_per_org"
            )
        ]

    def __str__(self) -> str:
        return self.name or self.external_id


class SubjectFile(models.Model):
    """The registry of a subject's files: what an answer's citation is checked against.

    A file is never deleted: a new version with the same name sets `replaced_at` and
    `replaced_by` on the old row, a removal sets `removed_at`. Each is written once.
    """

    subject = models.ForeignKey(Subject, on_delete=models.PROTECT, related_name="files")
    name = models.CharField(max_length=255)
    # sha256 of the bytes: the file's fingerprint at the moment it was uploaded.
    fingerprint = models.CharField(max_length=64)
    content_type = models.CharField(max_length=100, blank=True)
    size_bytes = models.PositiveBigIntegerField(default=0)
    page_count = models.PositiveIntegerField(default=0)
    content = models.BinaryField(editable=False, default=bytes)
    uploaded_by = models.ForeignKey(
        Student, null=True, blank=True, on_delete=models.PROTECT, related_name="uploaded_files"
    )
    uploaded_at = models.DateTimeField()
    replaced_at = models.DateTimeField(null=True, blank=True)
    replaced_by = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="replaces"
    )
    removed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # One current (neither replaced nor removed) file per name in a subject.
            models.UniqueConstraint(
                fields=["subject", "name"],
                condition=Q(replaced_at__isnull=True, removed_at__isnull=True),
                name="subjectfile_one_current_per_name",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_current(self) -> bool:
        return self.replaced_at is None and self.removed_at is None


class Pair(models.Model):
    """One student studying one subject: the owner of one episode chain.

    `head_seq`/`head_hash` mirror the chain's last episode so an append reads the head
    under a row lock (the lock that serialises appends, R-1.5) without scanning.
    `last_episode_at` makes "pairs active in the last day" (R-7) an index lookup.
    """

    student = models.ForeignKey(Student, on_delete=models.PROTECT, related_name="pairs")
    subject = models.ForeignKey(Subject, on_delete=models.PROTECT, related_name="pairs")
    head_seq = models.PositiveBigIntegerField(default=0)
    head_hash = models.CharField(max_length=64, default="")
    last_episode_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["student", "subject"], name="pair_unique_student_subject"
            )
        ]
        permissions = [("verify_chain", "Can verify episode chains and write checkpoints")]
        indexes = [
            # The nightly fan-out: pairs whose last episode is within the last day.
            models.Index(fields=["last_episode_at"], name="pair_last_episode_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.student} · {self.subject}"


# --------------------------------------------------------------------------------------
# The episode log
# --------------------------------------------------------------------------------------

GENESIS_HASH = "0" * 64
EPISODE_KINDS = ["question", "answer", "check", "quiz", "file", "taught", "consolidation"]


class Episode(AppendOnlyModel):
    """One event with a student, hash-chained per pair, never edited nor deleted."""

    class Kind(models.TextChoices):
        QUESTION = "question", "question"
        ANSWER = "answer", "answer"
        CHECK = "check", "check"
        QUIZ = "quiz", "quiz"
        FILE = "file", "file"
        TAUGHT = "taught", "taught"
        CONSOLIDATION = "consolidation", "consolidation"

    class Verdict(models.TextChoices):
        RIGHT = "right", "right"
        WRONG = "wrong", "wrong"
        PARTIAL = "partial", "partial"

    pair = models.ForeignKey(Pair, on_delete=models.PROTECT, related_name="episodes")
    seq = models.PositiveBigIntegerField()
    kind = models.CharField(max_length=16, choices=Kind.choices)
    summary = models.CharField(max_length=300)
    text = models.TextField(blank=True)
    # Names of the concepts the episode touched (strings: `memory` knows no concept model).
    concepts = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    salience = models.FloatField()
    occurred_at = models.DateTimeField()
    recorded_at = models.DateTimeField()
    # check: topic as sent, verdict, assessment, predicted mastery; quiz: verdict/score.
    topic = models.CharField(max_length=300, blank=True)
    verdict = models.CharField(max_length=8, choices=Verdict.choices, blank=True)
    predicted_mastery = models.FloatField(null=True, blank=True)
    # answer: citations [{file_id, name, fingerprint, pages}] and recalled_ids; check:
    # assessment; anything else the event carried. Canonically serialised into the hash.
    evidence = models.JSONField(default=dict, blank=True)
    idempotency_key = models.CharField(max_length=200, blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    # Not a column: the append service sets it on the episodes it returns (False for an
    # idempotent replay that appended nothing).
    was_appended = True

    class Meta:
        constraints = [
            # Backs the per-pair lock: a racing append fails loudly instead of forking.
            models.UniqueConstraint(fields=["pair", "seq"], name="episode_unique_pair_seq"),
            models.UniqueConstraint(
                fields=["pair", "idempotency_key"],
                condition=~Q(idempotency_key=""),
                name="episode_unique_pair_idempotency_key",
            ),
            models.CheckConstraint(condition=Q(seq__gte=1), name="episode_seq_positive"),
            models.CheckConstraint(
                condition=Q(salience__gte=0) & Q(salience__lte=1), name="episode_salience_0_1"
            ),
            models.CheckConstraint(
                condition=Q(predicted_mastery__isnull=True)
                | (Q(predicted_mastery__gte=0) & Q(predicted_mastery__lte=1)),
                name="episode_predicted_mastery_0_1",
            ),
            models.CheckConstraint(condition=Q(kind__in=EPISODE_KINDS), name="episode_kind_valid"),
            models.CheckConstraint(
                condition=Q(verdict__in=["", "right", "wrong", "partial"]),
                name="episode_verdict_valid",
            ),
            models.CheckConstraint(
                condition=~Q(kind="check") | ~Q(verdict=""), name="episode_check_has_verdict"
            ),
        ]
        indexes = [
            # The recent pool and time windows of the block build: newest first per pair.
            models.Index(fields=["pair", "-occurred_at"], name="episode_pair_occurred_idx"),
            # Beliefs replay checks in order; reports count checks and answers per pair.
            models.Index(fields=["pair", "kind", "occurred_at"], name="episode_pair_kind_idx"),
            # The concept pool: episodes that touch a routed concept.
            GinIndex(fields=["concepts"], name="episode_concepts_gin"),
            # Nightly: everything that happened in one day, across pairs.
            models.Index(fields=["occurred_at"], name="episode_occurred_idx"),
        ]
        triggers = [
            pgtrigger.Protect(
                name="episode_append_only", operation=pgtrigger.Update | pgtrigger.Delete
            ),
            no_truncate("episode_no_truncate"),
        ]

    def __str__(self) -> str:
        # The id, as in the admin's URL and the API; the seq is its place in its own chain.
        return f"episode {self.pk} (seq {self.seq}) {self.kind}: {self.summary[:60]}"


class EpisodeIndex(models.Model):
    """Derived, rebuildable search data beside an episode (never part of its hash).

    Denormalises pair, kind and time so each candidate pool of the block build is a
    single-table query.
    """

    episode = models.OneToOneField(
        Episode, primary_key=True, on_delete=models.PROTECT, related_name="index"
    )
    pair = models.ForeignKey(Pair, on_delete=models.PROTECT, related_name="+")
    occurred_at = models.DateTimeField()
    kind = models.CharField(max_length=16)
    embedding = VectorField(dimensions=settings.TUTORBRAIN_EMBEDDING_DIMENSIONS, null=True)
    embedding_model = models.CharField(max_length=100, blank=True)
    search = SearchVectorField(null=True)

    class Meta:
        indexes = [
            # The vector pool (cosine). Filtered by pair with pgvector's iterative scan.
            HnswIndex(
                name="episodeindex_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            # The full-text pool: distinctive words of the message.
            GinIndex(fields=["search"], name="episodeindex_search_gin"),
            models.Index(fields=["pair", "-occurred_at"], name="episodeindex_pair_time_idx"),
        ]

    def __str__(self) -> str:
        return f"index of episode {self.episode_id}"


class AnswerStance(AppendOnlyModel):
    """The grounding tracker's later verdict on an answer (R-1.7). Written once."""

    class Stance(models.TextChoices):
        ANSWERED = "answered", "answered"
        PARTIAL = "partial", "partial"
        CANNOT = "cannot", "cannot"

    episode = models.OneToOneField(
        Episode, primary_key=True, on_delete=models.PROTECT, related_name="stance"
    )
    stance = models.CharField(max_length=10, choices=Stance.choices)
    reported_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(stance__in=["answered", "partial", "cannot"]), name="answerstance_valid"
            )
        ]
        triggers = [
            pgtrigger.Protect(
                name="answerstance_write_once", operation=pgtrigger.Update | pgtrigger.Delete
            ),
            no_truncate("answerstance_no_truncate"),
        ]


class CitationCheck(AppendOnlyModel):
    """One verification of an episode's citations (R-6), stored append-only with its time."""

    class Result(models.TextChoices):
        HOLDS = "holds", "holds"
        CHANGED = "changed", "changed"
        UNVERIFIABLE = "unverifiable", "unverifiable"

    episode = models.ForeignKey(Episode, on_delete=models.PROTECT, related_name="citation_checks")
    result = models.CharField(max_length=14, choices=Result.choices)
    # For `changed`: [{file_id, name, change: "replaced"|"removed", by_file_id}]
    details = models.JSONField(default=dict, blank=True)
    checked_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(result__in=["holds", "changed", "unverifiable"]),
                name="citationcheck_result_valid",
            )
        ]
        indexes = [
            # "Latest check per episode" and "never-checked first".
            models.Index(fields=["episode", "-checked_at"], name="citationcheck_episode_time_idx"),
        ]
        triggers = [
            pgtrigger.Protect(
                name="citationcheck_append_only", operation=pgtrigger.Update | pgtrigger.Delete
            ),
            no_truncate("citationcheck_no_truncate"),
        ]


class ChainVerification(AppendOnlyModel):
    """The result of one recomputation of one chain (R-1.6)."""

    class Failure(models.TextChoices):
        CONTENT_CHANGED = "content_changed", "content changed"
        LINK_BROKEN = "link_broken", "link broken"
        GAP = "gap", "gap"
        REORDERED = "reordered", "reordered"
        # The chain ends before the seq its head (or a checkpoint) records.
        TRUNCATED = "truncated", "truncated"
        # The episode at a checkpoint's seq no longer has the checkpoint's hash.
        REWRITTEN = "rewritten", "rewritten since checkpoint"

    pair = models.ForeignKey(Pair, on_delete=models.PROTECT, related_name="verifications")
    intact = models.BooleanField()
    # Episodes recomputed (up to the first break).
    length = models.PositiveBigIntegerField()
    broken_seq = models.PositiveBigIntegerField(null=True, blank=True)
    failure = models.CharField(max_length=20, choices=Failure.choices, blank=True)
    # A readable sentence: what broke, where, and what was expected.
    reason = models.CharField(max_length=500, blank=True)
    # The chain was also compared with a signed checkpoint (which catches truncation
    # and whole-chain rewrites that a recomputation alone cannot see).
    checkpoint_created_at = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(intact=True, failure="", broken_seq__isnull=True)
                | (Q(intact=False) & ~Q(failure="")),
                name="chainverif_intact_xor_failure",
            ),
        ]
        indexes = [
            # The latest verification per pair (chain status API and admin).
            models.Index(fields=["pair", "-checked_at"], name="chainverif_pair_time_idx")
        ]
        triggers = [
            pgtrigger.Protect(
                name="chainverification_append_only", operation=pgtrigger.Update | pgtrigger.Delete
            ),
            no_truncate("chainverification_no_truncate"),
        ]


class ChainCheckpoint(AppendOnlyModel):
    """A signed export of every chain head (R-1.6), kept here and written to a file."""

    created_at = models.DateTimeField()
    heads = models.JSONField()
    signature = models.CharField(max_length=64)

    class Meta:
        triggers = [
            pgtrigger.Protect(
                name="chaincheckpoint_append_only", operation=pgtrigger.Update | pgtrigger.Delete
            ),
            no_truncate("chaincheckpoint_no_truncate"),
        ]
