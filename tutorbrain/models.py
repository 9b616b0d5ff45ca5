"""The nightly cycle's own records (R-7): runs, calibration snapshots, the self-model.

Written only by `tutorbrain.nightly.services`. A `NightlyRun` is the claim and the log
of one pair's cycle for one day; a `CalibrationSnapshot` is append-only (what the
memory knew about its own calibration on a given night is history); a `SelfModel` is
one derived row per pair, recomposed each night and read by the block.
"""

from __future__ import annotations

import pgtrigger
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q

from memory.immutability import AppendOnlyModel, no_truncate
from memory.models import Pair


class NightlyRun(models.Model):
    """One pair's cycle for one day: the claim that makes it idempotent, and its log.

    Each step of the cycle records itself in `steps_done` inside the same transaction
    as its writes, so a worker killed mid-pair leaves either a whole step or none, and
    the rerun continues from the first step not done.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    pair = models.ForeignKey(Pair, on_delete=models.PROTECT, related_name="nightly_runs")
    # The calendar day (in the nightly time zone, settings.CELERY_TIMEZONE) it consolidates.
    day = models.DateField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    # Who holds or last held the claim: a Celery task id or "manual:<uuid>".
    claimed_by = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Wall-clock seconds of the last attempt, from claim to done (the benchmark reads it).
    duration_seconds = models.FloatField(null=True, blank=True)
    steps_done = ArrayField(models.CharField(max_length=20), default=list, blank=True)
    # What each step wrote, by step name: {"consolidation": {"episode_id": 12}, ...}.
    wrote = models.JSONField(default=dict, blank=True)
    # Failures of earlier attempts: [{"at": iso, "step": name, "error": "..."}].
    failures = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [
            # Idempotence of the fan-out: one run per pair and day, whatever is enqueued.
            models.UniqueConstraint(fields=["pair", "day"], name="nightlyrun_unique_pair_day"),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "running", "done", "failed"]),
                name="nightlyrun_status_valid",
            ),
        ]
        indexes = [
            # Admin and the benchmark: the runs of one day by status.
            models.Index(fields=["day", "status"], name="nightlyrun_day_status_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.pair} · {self.day} · {self.status}"


class CalibrationSnapshot(AppendOnlyModel):
    """Predicted mastery against verdicts up to the end of one day (R-7.3). Write-once.

    `pair` is null for the snapshot over all pairs. `bins` is the reliability curve:
    [{"lower", "upper", "count", "mean_predicted", "mean_outcome"}], one entry per bin.
    """

    pair = models.ForeignKey(
        Pair, null=True, blank=True, on_delete=models.PROTECT, related_name="calibrations"
    )
    day = models.DateField()
    computed_at = models.DateTimeField()
    predicted_checks = models.PositiveIntegerField()
    calibrated = models.BooleanField()
    # Null when there is no predicted check at all.
    ece = models.FloatField(null=True, blank=True)
    bins = models.JSONField(default=list)
    # The beliefs' own p_right against the verdicts that followed it (issue #12): how
    # many checks followed a belief, the error and the curve (same bins). Per pair only:
    # the all-pairs snapshot leaves them empty.
    belief_predictions = models.PositiveIntegerField(default=0)
    belief_ece = models.FloatField(null=True, blank=True)
    belief_bins = models.JSONField(default=list)

    class Meta:
        constraints = [
            # A second run of the same night writes no second snapshot.
            models.UniqueConstraint(
                fields=["pair", "day"],
                condition=Q(pair__isnull=False),
                name="calibration_unique_pair_day",
            ),
            models.UniqueConstraint(
                fields=["day"], condition=Q(pair__isnull=True), name="calibration_unique_all_day"
            ),
            models.CheckConstraint(
                condition=Q(ece__isnull=True) | (Q(ece__gte=0) & Q(ece__lte=1)),
                name="calibration_ece_0_1",
            ),
            models.CheckConstraint(
                condition=Q(belief_ece__isnull=True)
                | (Q(belief_ece__gte=0) & Q(belief_ece__lte=1)),
                name="calibration_belief_ece_0_1",
            ),
        ]
        indexes = [
            # The admin's history of one pair, newest first.
            models.Index(fields=["pair", "-day"], name="calibration_pair_day_idx"),
        ]
        triggers = [
            pgtrigger.Protect(
                name="calibrationsnapshot_append_only",
                operation=pgtrigger.Update | pgtrigger.Delete,
            ),
            no_truncate("calibrationsnapshot_no_truncate"),
        ]

    def __str__(self) -> str:
        who = self.pair if self.pair_id else "all pairs"
        return f"calibration of {who} on {self.day}"


class SelfModel(models.Model):
    """What the memory knows about its own reliability for one pair (R-7.6).

    Derived and rebuildable: recomposed by each nightly cycle of the pair. The block
    reads `calibrated`, `predicted_checks` and `ece` for its HOW TO USE line.
    """

    pair = models.OneToOneField(
        Pair, primary_key=True, on_delete=models.PROTECT, related_name="self_model"
    )
    day = models.DateField()
    computed_at = models.DateTimeField()
    calibrated = models.BooleanField(default=False)
    predicted_checks = models.PositiveIntegerField(default=0)
    ece = models.FloatField(null=True, blank=True)
    # The beliefs' p_right against the verdicts that followed it: "calibrated" needs
    # these too (issue #12).
    belief_predictions = models.PositiveIntegerField(default=0)
    belief_ece = models.FloatField(null=True, blank=True)
    calibration = models.ForeignKey(
        CalibrationSnapshot, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Cited answers by their latest verification result, and how many were never checked.
    citations_holding = models.PositiveIntegerField(default=0)
    citations_changed = models.PositiveIntegerField(default=0)
    citations_unverifiable = models.PositiveIntegerField(default=0)
    citations_unchecked = models.PositiveIntegerField(default=0)
    # Checks whose topic routed to no concept (no belief row cites them).
    unlinkable_checks = models.PositiveIntegerField(default=0)
    unlinkable_examples = models.JSONField(default=list, blank=True)
    # Questions the tutor reported it could not answer (AnswerStance "cannot").
    unanswerable_questions = models.PositiveIntegerField(default=0)
    unanswerable_examples = models.JSONField(default=list, blank=True)
    last_run = models.ForeignKey(
        NightlyRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"self-model of {self.pair}"


class StudentSubject(Pair):
    """A student-subject seen whole: the admin's hub page (beliefs, episodes, chain, nights)."""

    class Meta:
        proxy = True
        verbose_name = "student-subject"
        verbose_name_plural = "student-subjects"
