"""Admin of the nightly cycle: last cycle per pair, calibration with its curve, self-model.

All read-only: these rows are written by the cycle only. Lists select their relations
in the one query and do not count huge tables.
"""

from __future__ import annotations

from django.contrib import admin
from django.core.paginator import Paginator
from django.db import connection
from django.utils.functional import cached_property
from django.utils.html import format_html

from tutorbrain.models import CalibrationSnapshot, NightlyRun, SelfModel
from tutorbrain.nightly.plot import reliability_data_uri
from tutorbrain.nightly.selectors import limits_sentence_for


class EstimatedCountPaginator(Paginator):
    """Counts an unfiltered list from the planner's estimate instead of a full scan."""

    @cached_property
    def count(self) -> int:
        query = getattr(self.object_list, "query", None)
        if query is not None and not query.where:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT reltuples::bigint FROM pg_class WHERE relname = %s",
                    [query.model._meta.db_table],
                )
                row = cursor.fetchone()
            if row and row[0] and row[0] > 0:
                return int(row[0])
        return super().count


class ReadOnlyAdmin(admin.ModelAdmin):
    paginator = EstimatedCountPaginator
    show_full_result_count = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def _curve(snapshot: CalibrationSnapshot | None) -> str:
    if snapshot is None or not snapshot.predicted_checks:
        return "no check with a predicted mastery yet"
    title = f"{snapshot.predicted_checks} predicted checks, ECE {snapshot.ece:.3f}"
    return format_html(
        '<img src="{}" alt="reliability curve" width="420" height="420">',
        reliability_data_uri(snapshot.bins, title=title),
    )


def _belief_curve(snapshot: CalibrationSnapshot | None) -> str:
    if snapshot is None or not snapshot.belief_predictions:
        return "no check has followed a belief with a p_right yet"
    title = f"p_right: {snapshot.belief_predictions} checks that followed, ECE {snapshot.belief_ece:.3f}"
    return format_html(
        '<img src="{}" alt="reliability curve of p_right" width="420" height="420">',
        reliability_data_uri(snapshot.belief_bins, title=title),
    )


@admin.register(NightlyRun)
class NightlyRunAdmin(ReadOnlyAdmin):
    list_display = ("pair", "day", "status", "attempts", "steps", "failure_count", "finished_at")
    list_filter = ("status", "day")
    list_select_related = ("pair__student", "pair__subject")
    search_fields = ("pair__student__external_id", "pair__subject__external_id")
    ordering = ("-day", "-pk")
    fields = (
        "pair",
        "day",
        "status",
        "attempts",
        "claimed_by",
        "created_at",
        "started_at",
        "finished_at",
        "duration_seconds",
        "steps_done",
        "wrote",
        "failures",
    )

    @admin.display(description="steps done")
    def steps(self, obj: NightlyRun) -> str:
        return ", ".join(obj.steps_done) or "-"

    @admin.display(description="failures")
    def failure_count(self, obj: NightlyRun) -> int:
        return len(obj.failures)


@admin.register(CalibrationSnapshot)
class CalibrationSnapshotAdmin(ReadOnlyAdmin):
    list_display = (
        "__str__",
        "day",
        "predicted_checks",
        "calibrated",
        "ece",
        "belief_predictions",
        "belief_ece",
    )
    list_filter = ("calibrated", "day")
    list_select_related = ("pair__student", "pair__subject")
    ordering = ("-day", "-pk")
    fields = (
        "pair",
        "day",
        "computed_at",
        "predicted_checks",
        "calibrated",
        "ece",
        "curve",
        "bins",
        "belief_predictions",
        "belief_ece",
        "belief_curve",
        "belief_bins",
    )
    readonly_fields = ("curve", "belief_curve")

    @admin.display(description="reliability curve")
    def curve(self, obj: CalibrationSnapshot) -> str:
        return _curve(obj)

    @admin.display(description="reliability curve of the beliefs' p_right")
    def belief_curve(self, obj: CalibrationSnapshot) -> str:
        return _belief_curve(obj)


@admin.register(SelfModel)
class SelfModelAdmin(ReadOnlyAdmin):
    """One row per pair: its last nightly cycle and what the memory knows of its reliability."""

    list_display = (
        "pair",
        "day",
        "last_run_status",
        "calibrated",
        "predicted_checks",
        "ece",
        "belief_predictions",
        "belief_ece",
        "citations_changed",
        "citations_unchecked",
        "unlinkable_checks",
        "unanswerable_questions",
    )
    list_filter = ("calibrated", "day")
    list_select_related = ("pair__student", "pair__subject", "last_run", "calibration")
    search_fields = ("pair__student__external_id", "pair__subject__external_id")
    ordering = ("-day", "pair")
    fields = (
        "pair",
        "day",
        "computed_at",
        "limits",
        "calibrated",
        "predicted_checks",
        "ece",
        "curve",
        "belief_predictions",
        "belief_ece",
        "belief_curve",
        "citations_holding",
        "citations_changed",
        "citations_unverifiable",
        "citations_unchecked",
        "unlinkable_checks",
        "unlinkable_examples",
        "unanswerable_questions",
        "unanswerable_examples",
        "last_run",
        "last_run_summary",
    )
    readonly_fields = ("limits", "curve", "belief_curve", "last_run_summary")

    @admin.display(description="last cycle")
    def last_run_status(self, obj: SelfModel) -> str:
        if obj.last_run is None:
            return "-"
        failed = f", {len(obj.last_run.failures)} failure(s)" if obj.last_run.failures else ""
        return f"{obj.last_run.status}{failed}"

    @admin.display(description="limits sentence (block HOW TO USE)")
    def limits(self, obj: SelfModel) -> str:
        return limits_sentence_for(
            calibrated=obj.calibrated,
            predicted_checks=obj.predicted_checks,
            ece=obj.ece,
            belief_predictions=obj.belief_predictions,
            belief_ece=obj.belief_ece,
        )

    @admin.display(description="reliability curve")
    def curve(self, obj: SelfModel) -> str:
        return _curve(obj.calibration)

    @admin.display(description="reliability curve of the beliefs' p_right")
    def belief_curve(self, obj: SelfModel) -> str:
        return _belief_curve(obj.calibration)

    @admin.display(description="what the last cycle wrote")
    def last_run_summary(self, obj: SelfModel) -> str:
        run = obj.last_run
        if run is None:
            return "-"
        return format_html(
            "{} on {} ({} attempt(s)); steps: {}; wrote: {}; failures: {}",
            run.status,
            run.finished_at or run.started_at,
            run.attempts,
            ", ".join(run.steps_done) or "-",
            run.wrote,
            run.failures or "none",
        )
