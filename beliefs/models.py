"""Beliefs about what a student understands, kept with their whole history (R-4).

A belief row is never updated to another claim or confidence. When the tutor changes
its mind a new row is inserted and the old row's `superseded_by` is set: the single
permitted write on an old row, done once. Retiring a belief (before a re-derivation)
is also a new row, with reason `retirement`, that supersedes the old one; a retirement
row is never read as a current belief.
"""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.contrib.postgres.constraints import ExclusionConstraint
from django.contrib.postgres.fields import RangeOperators
from django.db import models
from django.db.models import Deferrable, F, Q

from concepts.models import Concept
from memory.immutability import AppendOnlyModel, ImmutableRecordError, no_truncate
from memory.models import Episode, Pair, Subject

# The one column an existing belief row may change (once, from NULL).
SUCCESSOR_FIELD = "superseded_by"


class BeliefQuerySet(models.QuerySet):
    def update(self, **kwargs):
        from memory.immutability import ImmutableRecordError

        raise ImmutableRecordError("beliefs are superseded, never updated: use beliefs.services")

    def delete(self):
        from memory.immutability import ImmutableRecordError

        raise ImmutableRecordError("beliefs are never deleted: retire them with beliefs.services")

    def bulk_update(self, objs, fields, batch_size=None):
        raise ImmutableRecordError("beliefs are superseded, never updated: use beliefs.services")

    def current(self):
        """Rows nothing supersedes, excluding retirements: what retrieval reads."""
        return self.filter(superseded_by__isnull=True).exclude(reason=Belief.Reason.RETIREMENT)


BeliefManager = models.Manager.from_queryset(BeliefQuerySet)


class Belief(models.Model):
    class Claim(models.TextChoices):
        UNDERSTANDS = "understands", "understands"
        STRUGGLES = "struggles", "struggles with"

    class Reason(models.TextChoices):
        EVIDENCE = "evidence", "new evidence"
        DECAY = "decay", "decay"
        REDERIVATION = "rederivation", "re-derivation"
        RETIREMENT = "retirement", "retirement"

    pair = models.ForeignKey(Pair, on_delete=models.PROTECT, related_name="beliefs")
    concept = models.ForeignKey(Concept, on_delete=models.PROTECT, related_name="beliefs")
    claim = models.CharField(max_length=12, choices=Claim.choices)
    # The number shown beside the claim: p_right for understands, 1 − p_right for struggles.
    confidence = models.FloatField()
    # The predicted probability of a right answer on the next check of this concept
    # . Null only on rows written before it existed (migration 0005 re-derived
    # every current belief, so current rows have it).
    p_right = models.FloatField(null=True, blank=True)
    # The prior it leaned on: the concept's accuracy over the subject's other students
    # (its mean) and how many checks that prior was worth (its strength).
    prior_right = models.FloatField(null=True, blank=True)
    prior_strength = models.FloatField(null=True, blank=True)
    # Checks behind the row counted right (a partial is half), unweighted: the other
    # students' priors are computed from these and `check_count`.
    right_count = models.FloatField(null=True, blank=True)
    reason = models.CharField(max_length=12, choices=Reason.choices)
    # A decayed belief waits for the next check to confirm it.
    needs_confirmation = models.BooleanField(default=False)
    # The checks behind this row (append-only through BeliefEvidence).
    evidence = models.ManyToManyField(Episode, through="BeliefEvidence", related_name="beliefs")
    # How many checks stood behind the row, and the last of them (cheap for reports).
    check_count = models.PositiveIntegerField(default=0)
    last_evidence_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    superseded_by = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="supersedes"
    )

    objects = BeliefManager()

    class Meta:
        constraints = [
            # At most one current row per student-subject and concept. An exclusion
            # constraint rather than a partial unique index because it can be checked at
            # commit: a supersession inserts the new row before it can point the old
            # row at it, so for a moment inside the transaction both are current.
            ExclusionConstraint(
                name="belief_one_current_per_pair_concept",
                expressions=[("pair", RangeOperators.EQUAL), ("concept", RangeOperators.EQUAL)],
                condition=Q(superseded_by__isnull=True),
                deferrable=Deferrable.DEFERRED,
            ),
            models.CheckConstraint(
                condition=Q(confidence__gte=0) & Q(confidence__lte=1), name="belief_confidence_0_1"
            ),
            models.CheckConstraint(
                condition=Q(p_right__isnull=True) | (Q(p_right__gte=0) & Q(p_right__lte=1)),
                name="belief_p_right_0_1",
            ),
            models.CheckConstraint(
                condition=Q(prior_right__isnull=True)
                | (Q(prior_right__gte=0) & Q(prior_right__lte=1)),
                name="belief_prior_right_0_1",
            ),
            models.CheckConstraint(
                condition=Q(right_count__isnull=True)
                | (Q(right_count__gte=0) & Q(right_count__lte=F("check_count"))),
                name="belief_right_count_within_checks",
            ),
            models.CheckConstraint(
                condition=Q(claim__in=["understands", "struggles"]), name="belief_claim_valid"
            ),
            models.CheckConstraint(
                condition=Q(reason__in=["evidence", "decay", "rederivation", "retirement"]),
                name="belief_reason_valid",
            ),
            models.CheckConstraint(
                condition=~Q(superseded_by=models.F("id")), name="belief_not_its_own_successor"
            ),
        ]
        indexes = [
            # The block's belief section: current beliefs of one pair.
            models.Index(
                fields=["pair", "concept"],
                condition=Q(superseded_by__isnull=True),
                name="belief_current_pair_idx",
            ),
            # The priors: current beliefs of a concept over the subject's students.
            models.Index(
                fields=["concept"],
                condition=Q(superseded_by__isnull=True),
                name="belief_current_concept_idx",
            ),
            # Nightly decay: current beliefs untouched for 45 days.
            models.Index(
                fields=["last_evidence_at"],
                condition=Q(superseded_by__isnull=True),
                name="belief_current_evidence_idx",
            ),
        ]
        permissions = [("rederive_belief", "Can re-derive beliefs of a student-subject")]
        triggers = [
            # The one permitted write on an existing row is setting superseded_by, once:
            # any other column changing is refused, and so is a second supersession.
            pgtrigger.Protect(
                name="belief_only_successor_changes",
                operation=pgtrigger.Update,
                condition=pgtrigger.AnyChange(exclude=["superseded_by"]),
            ),
            pgtrigger.Protect(
                name="belief_successor_set_once",
                operation=pgtrigger.Update,
                condition=pgtrigger.Q(old__superseded_by__isnull=False),
            ),
            pgtrigger.Protect(name="belief_never_deleted", operation=pgtrigger.Delete),
            no_truncate("belief_no_truncate"),
        ]

    def __str__(self) -> str:
        p = f", p_right {self.p_right:.2f}" if self.p_right is not None else ""
        return f"{self.get_claim_display()} {self.concept} ({self.confidence:.2f}{p})"

    def save(self, *args, **kwargs):
        """Insert a new row; on an existing row only set `superseded_by`, once."""
        if self._state.adding:
            super().save(*args, **kwargs)
            self._remember_stored()
            return
        stored = getattr(self, "_stored", {})
        successor = f"{SUCCESSOR_FIELD}_id"
        changed = [
            name
            for name, value in stored.items()
            if name != successor and getattr(self, name) != value
        ]
        if changed:
            raise ImmutableRecordError(
                f"belief {self.pk} cannot be changed ({', '.join(sorted(changed))}): "
                "beliefs are superseded, never updated (beliefs.services.belief_supersede)"
            )
        if stored.get(successor) is not None:
            raise ImmutableRecordError(
                f"belief {self.pk} is already superseded by {stored[successor]}: "
                "a successor is set once"
            )
        if self.superseded_by_id is None:
            raise ImmutableRecordError(f"belief {self.pk}: the only permitted write is a successor")
        super().save(update_fields=[SUCCESSOR_FIELD])
        self._remember_stored()

    def delete(self, *args, **kwargs):
        raise ImmutableRecordError(
            f"belief {self.pk} cannot be deleted: beliefs are retired (a retirement row)"
        )

    @property
    def is_current(self) -> bool:
        return self.superseded_by_id is None and self.reason != self.Reason.RETIREMENT

    # --- The model half of R-4.2 (the database half is the triggers above) -------------

    @classmethod
    def from_db(cls, db, field_names, values, **kwargs):
        instance = super().from_db(db, field_names, values, **kwargs)
        instance._remember_stored()
        return instance

    def _remember_stored(self) -> None:
        self._stored = {
            f.attname: getattr(self, f.attname)
            for f in self._meta.concrete_fields
            if f.attname in self.__dict__
        }

    def refresh_from_db(self, *args, **kwargs):
        super().refresh_from_db(*args, **kwargs)
        self._remember_stored()


class BeliefEvidence(AppendOnlyModel):
    """Links a belief row to an episode behind it. Never changed nor removed.

    Written with the row, and also later when a check confirms a belief without changing
    its claim or rounded confidence (no supersession then, R-4.2): the row gains a link.
    """

    belief = models.ForeignKey(Belief, on_delete=models.PROTECT, related_name="evidence_links")
    episode = models.ForeignKey(Episode, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["belief", "episode"], name="beliefevidence_unique_link")
        ]
        triggers = [
            pgtrigger.Protect(
                name="beliefevidence_append_only", operation=pgtrigger.Update | pgtrigger.Delete
            ),
            no_truncate("beliefevidence_no_truncate"),
        ]

    def __str__(self) -> str:
        return f"{self.belief_id} ← episode {self.episode_id}"


class Rederivation(AppendOnlyModel):
    """One re-derivation of a student-subject's beliefs (R-4.5): who, when, what it did."""

    class Source(models.TextChoices):
        ADMIN = "admin", "admin action"
        COMMAND = "command", "management command"
        TASK = "task", "Celery task"
        SERVICE = "service", "service call"
        NIGHTLY = "nightly", "nightly cycle, after a learning fit"
        MAP = "map", "nightly cycle, after the map gained a check's concept"

    pair = models.ForeignKey(Pair, on_delete=models.PROTECT, related_name="rederivations")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    source = models.CharField(max_length=8, choices=Source.choices)
    rules_version = models.CharField(max_length=40)
    beliefs_retired = models.PositiveIntegerField()
    checks_replayed = models.PositiveIntegerField()
    checks_linked = models.PositiveIntegerField()
    beliefs_derived = models.PositiveIntegerField()
    created_at = models.DateTimeField()

    class Meta:
        indexes = [
            # "Last re-derivation" of a pair on the per-pair admin page and the report.
            models.Index(fields=["pair", "-created_at"], name="rederivation_pair_time_idx"),
        ]
        triggers = [
            pgtrigger.Protect(
                name="rederivation_append_only", operation=pgtrigger.Update | pgtrigger.Delete
            ),
            no_truncate("rederivation_no_truncate"),
        ]

    def __str__(self) -> str:
        return f"re-derivation of {self.pair} at {self.created_at:%Y-%m-%d %H:%M}"


class BeliefLearningFit(AppendOnlyModel):
    """One nightly fit of a subject's learning model (beliefs.learning, issue #12).

    Append-only: the newest row of a subject is the one derivation uses; the older ones
    say what the model was when an older belief was written.
    """

    subject = models.ForeignKey(Subject, on_delete=models.PROTECT, related_name="+")
    rules_version = models.CharField(max_length=40)
    checks = models.PositiveIntegerField()
    students = models.PositiveIntegerField()
    # beliefs.learning.LearningModel.as_json(): coefficients, concept offsets and means.
    coefficients = models.JSONField()
    created_at = models.DateTimeField()
    # Whether this fit re-derived the subject's beliefs (its first fit, or one made from
    # learning.REDERIVE_WHEN_CHECKS_GROW times the checks of the last fit that did).
    rederives = models.BooleanField(default=False)

    class Meta:
        indexes = [
            # "The newest fit of a subject", read by every derivation.
            models.Index(fields=["subject", "-created_at", "-id"], name="learning_fit_subject_idx"),
        ]
        triggers = [
            pgtrigger.Protect(
                name="learning_fit_append_only", operation=pgtrigger.Update | pgtrigger.Delete
            ),
            no_truncate("learning_fit_no_truncate"),
        ]

    def __str__(self) -> str:
        return f"learning model of {self.subject} fitted {self.created_at:%Y-%m-%d %H:%M}"


class PairBeliefs(Pair):
    """A student-subject seen from its beliefs: the admin's per-pair page and action."""

    class Meta:
        proxy = True
        verbose_name = "student-subject beliefs"
        verbose_name_plural = "student-subject beliefs"
