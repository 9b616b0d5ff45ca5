"""Admin of the nightly cycle (last cycle per pair, calibration with its curve, self-model)
and the student-subject hub: one page with a pair's beliefs, recent episodes, chain status
and Verify button, nightly runs, calibration curve and a prefilled block preview.

Read-only but for the hub's Verify button, which calls the chain service. Lists select
their relations in the one query and do not count huge tables.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import connection
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.functional import cached_property
from django.utils.html import format_html, format_html_join

from memory.admin import OrganizationFilter, SubjectFilter, readable_value
from memory.selectors import pairs_with_last_verification
from memory.services import chain_verify
from tutorbrain.hub import student_subject_hub
from tutorbrain.models import CalibrationSnapshot, NightlyRun, SelfModel, StudentSubject
from tutorbrain.nightly.plot import reliability_data_uri, reliability_points
from tutorbrain.nightly.selectors import limits_sentence_for

VERIFY_PERMISSION = "memory.verify_chain"


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


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def hub_link(pair_id: int, label: str) -> str:
    url = reverse("admin:tutorbrain_studentsubject_change", args=[pair_id])
    return format_html('<a href="{}">{}</a>', url, label)


def _curve(snapshot: CalibrationSnapshot | None) -> str:
    if snapshot is None:
        return "no calibration yet — the nightly cycle computes one after a night with checks"
    if not snapshot.predicted_checks:
        return "no check with a predicted mastery yet: nothing to calibrate"
    title = f"{snapshot.predicted_checks} predicted checks, ECE {snapshot.ece:.3f}"
    return format_html(
        '<img src="{}" alt="reliability curve: {}" width="460" height="460">',
        reliability_data_uri(snapshot.bins, title=title),
        title,
    )


def _belief_curve(snapshot: CalibrationSnapshot | None) -> str:
    if snapshot is None or not snapshot.belief_predictions:
        return "no check has followed a belief with a p_right yet"
    title = f"p_right: {snapshot.belief_predictions} checks that followed, ECE {snapshot.belief_ece:.3f}"
    return format_html(
        '<img src="{}" alt="reliability curve of p_right" width="420" height="420">',
        reliability_data_uri(snapshot.belief_bins, title=title),
    )


def _bins_table(bins: list[dict]) -> str:
    points = reliability_points(bins)
    if not points:
        return "no filled bin"
    rows = format_html_join(
        "",
        "<tr><td>{}–{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}–{}</td></tr>",
        (
            (
                _number(p["lower"], 1),
                _number(p["upper"], 1),
                p["count"],
                _number(p["x"], 2),
                _number(p["y"], 2),
                _number(p["low"], 2),
                _number(p["high"], 2),
            )
            for p in points
        ),
    )
    return format_html(
        "<table><thead><tr><th>predicted in</th><th>checks</th><th>mean predicted</th>"
        "<th>mean observed</th><th>95% interval</th></tr></thead><tbody>{}</tbody></table>",
        rows,
    )


# Which admin page an id written by a nightly step opens.
_WROTE_LINKS = {
    "episode_id": "admin:memory_episode_change",
    "answer_id": "admin:memory_episode_change",
    "id": "admin:memory_episode_change",
    "snapshot_id": "admin:tutorbrain_calibrationsnapshot_change",
    "superseding_belief_ids": "admin:beliefs_belief_change",
}


# How a key written by a nightly step reads on the page.
_WROTE_LABELS = {
    "episode_id": "episode",
    "snapshot_id": "calibration snapshot",
    "superseding_belief_ids": "beliefs superseded by decay",
    "results": "citations verified",
    "ece": "ECE",
    "working_set": "working set",
    "self_model": "self-model",
}


def wrote_in_step_order(run: NightlyRun) -> dict:
    """What a run wrote, in the order its steps ran."""
    order = {step: i for i, step in enumerate(run.steps_done)}
    return dict(sorted(run.wrote.items(), key=lambda kv: order.get(kv[0], len(order))))


def linked_value(value, key: str = "") -> str:
    """A nightly record's JSON as a readable list, ids as links to what they name."""
    target = _WROTE_LINKS.get(key)
    if target and isinstance(value, int):
        label = f"episode {value}" if "episode" in target else f"snapshot {value}"
        return format_html('<a href="{}">{}</a>', reverse(target, args=[value]), label)
    if target and isinstance(value, list):
        if not value:
            return "none"
        return format_html_join(
            ", ",
            '<a href="{}">belief {}</a>',
            ((reverse(target, args=[v]), v) for v in value),
        )
    if isinstance(value, dict):
        if not value:
            return "none"
        return format_html(
            "<ul style='margin:0;padding-left:1.2em'>{}</ul>",
            format_html_join(
                "",
                "<li>{}: {}</li>",
                (
                    (_WROTE_LABELS.get(str(k), str(k).replace("_", " ")), linked_value(v, str(k)))
                    for k, v in value.items()
                ),
            ),
        )
    if isinstance(value, list) and any(isinstance(v, dict) for v in value):
        return format_html(
            "<ul style='margin:0;padding-left:1.2em'>{}</ul>",
            format_html_join("", "<li>{}</li>", ((linked_value(v),) for v in value)),
        )
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    return readable_value(value)


class PairOrganizationMixin:
    @admin.display(description="organization")
    def organization(self, obj):
        return obj.pair.subject.organization if obj.pair_id else "all"

    @admin.display(description="student-subject")
    def pair_hub(self, obj):
        return hub_link(obj.pair_id, str(obj.pair)) if obj.pair_id else "all pairs"


@admin.register(NightlyRun)
class NightlyRunAdmin(PairOrganizationMixin, ReadOnlyAdmin):
    list_display = (
        "pair_hub", "organization", "day", "status", "attempts", "steps", "failure_count",
        "finished_at",
    )  # fmt: skip
    list_display_links = ("day",)
    list_filter = ("status", ("pair__subject__organization", OrganizationFilter), "day")
    list_select_related = ("pair__student", "pair__subject__organization")
    search_fields = ("pair__student__external_id", "pair__subject__external_id")
    ordering = ("-day", "-pk")
    fields = (
        "pair_hub",
        "day",
        "status",
        "attempts",
        "claimed_by",
        "created_at",
        "started_at",
        "finished_at",
        "duration",
        "steps",
        "wrote_display",
        "failures_display",
    )
    readonly_fields = ("pair_hub", "duration", "steps", "wrote_display", "failures_display")

    @admin.display(description="steps done")
    def steps(self, obj: NightlyRun) -> str:
        return ", ".join(obj.steps_done) or "-"

    @admin.display(description="failures")
    def failure_count(self, obj: NightlyRun) -> int:
        return len(obj.failures)

    @admin.display(description="duration")
    def duration(self, obj: NightlyRun) -> str:
        return "—" if obj.duration_seconds is None else f"{obj.duration_seconds:.2f} s"

    @admin.display(description="wrote")
    def wrote_display(self, obj: NightlyRun) -> str:
        return linked_value(wrote_in_step_order(obj))

    @admin.display(description="failures")
    def failures_display(self, obj: NightlyRun) -> str:
        return linked_value(obj.failures) if obj.failures else "none"


@admin.register(CalibrationSnapshot)
class CalibrationSnapshotAdmin(PairOrganizationMixin, ReadOnlyAdmin):
    list_display = (
        "__str__", "organization", "day", "predicted_checks", "calibrated", "ece_display",
        "belief_predictions", "belief_ece_display",
    )  # fmt: skip
    list_filter = ("calibrated", ("pair__subject__organization", OrganizationFilter), "day")
    list_select_related = ("pair__student", "pair__subject__organization")
    ordering = ("-day", "-pk")
    fields = (
        "pair_hub",
        "day",
        "computed_at",
        "predicted_checks",
        "calibrated",
        "ece_display",
        "curve",
        "bins_display",
        "belief_predictions",
        "belief_ece_display",
        "belief_curve",
        "belief_bins_display",
    )
    readonly_fields = (
        "pair_hub", "ece_display", "curve", "bins_display", "belief_ece_display",
        "belief_curve", "belief_bins_display",
    )  # fmt: skip

    @admin.display(description="ECE", ordering="ece")
    def ece_display(self, obj: CalibrationSnapshot) -> str:
        return _number(obj.ece)

    @admin.display(description="p_right ECE", ordering="belief_ece")
    def belief_ece_display(self, obj: CalibrationSnapshot) -> str:
        return _number(obj.belief_ece)

    @admin.display(description="reliability curve")
    def curve(self, obj: CalibrationSnapshot) -> str:
        return _curve(obj)

    @admin.display(description="reliability curve of the beliefs' p_right")
    def belief_curve(self, obj: CalibrationSnapshot) -> str:
        return _belief_curve(obj)

    @admin.display(description="bins")
    def bins_display(self, obj: CalibrationSnapshot) -> str:
        return _bins_table(obj.bins)

    @admin.display(description="p_right bins")
    def belief_bins_display(self, obj: CalibrationSnapshot) -> str:
        return _bins_table(obj.belief_bins)


@admin.register(SelfModel)
class SelfModelAdmin(PairOrganizationMixin, ReadOnlyAdmin):
    """One row per pair: its last nightly cycle and what the memory knows of its reliability."""

    list_display = (
        "pair_hub",
        "organization",
        "day",
        "last_run_status",
        "calibrated",
        "predicted_checks",
        "ece_display",
        "belief_predictions",
        "belief_ece_display",
        "citations_changed",
        "citations_unchecked",
        "unlinkable_checks",
        "unanswerable_questions",
    )
    list_display_links = ("day",)
    list_filter = ("calibrated", ("pair__subject__organization", OrganizationFilter), "day")
    list_select_related = (
        "pair__student", "pair__subject__organization", "last_run", "calibration",
    )  # fmt: skip
    search_fields = ("pair__student__external_id", "pair__subject__external_id")
    ordering = ("-day", "pair")
    fields = (
        "pair_hub",
        "day",
        "computed_at",
        "limits",
        "calibrated",
        "predicted_checks",
        "ece_display",
        "curve",
        "belief_predictions",
        "belief_ece_display",
        "belief_curve",
        "citations_holding",
        "citations_changed",
        "citations_unverifiable",
        "citations_unchecked",
        "unlinkable_checks",
        "unlinkable_examples_display",
        "unanswerable_questions",
        "unanswerable_examples_display",
        "last_run_link",
        "last_run_summary",
    )
    readonly_fields = (
        "pair_hub",
        "ece_display",
        "limits",
        "curve",
        "belief_ece_display",
        "belief_curve",
        "unlinkable_examples_display",
        "unanswerable_examples_display",
        "last_run_link",
        "last_run_summary",
    )

    @admin.display(description="ECE", ordering="ece")
    def ece_display(self, obj: SelfModel) -> str:
        return _number(obj.ece)

    @admin.display(description="p_right ECE", ordering="belief_ece")
    def belief_ece_display(self, obj: SelfModel) -> str:
        return _number(obj.belief_ece)

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

    @admin.display(description="unlinkable examples")
    def unlinkable_examples_display(self, obj: SelfModel) -> str:
        return linked_value(obj.unlinkable_examples) if obj.unlinkable_examples else "none"

    @admin.display(description="unanswerable examples")
    def unanswerable_examples_display(self, obj: SelfModel) -> str:
        return linked_value(obj.unanswerable_examples) if obj.unanswerable_examples else "none"

    @admin.display(description="last cycle run")
    def last_run_link(self, obj: SelfModel) -> str:
        if obj.last_run_id is None:
            return "-"
        url = reverse("admin:tutorbrain_nightlyrun_change", args=[obj.last_run_id])
        return format_html('<a href="{}">{}</a>', url, obj.last_run)

    @admin.display(description="what the last cycle wrote")
    def last_run_summary(self, obj: SelfModel) -> str:
        run = obj.last_run
        if run is None:
            return "-"
        return format_html(
            "{} on {} ({} attempt(s)); steps: {}; failures: {}<br>wrote: {}",
            run.status,
            f"{run.finished_at or run.started_at:%Y-%m-%d %H:%M} UTC"
            if (run.finished_at or run.started_at)
            else "—",
            run.attempts,
            ", ".join(run.steps_done) or "-",
            len(run.failures) or "none",
            linked_value(wrote_in_step_order(run)),
        )


# --- the student-subject hub ----------------------------------------------------------------


@admin.register(StudentSubject)
class StudentSubjectAdmin(ReadOnlyAdmin):
    """Every student-subject; each row opens the hub page with its whole story."""

    list_display = ("student", "subject", "organization", "head_seq", "chain_status")
    list_select_related = ("student", "subject__organization")
    list_filter = (("subject__organization", OrganizationFilter), ("subject", SubjectFilter))
    search_fields = (
        "=student__external_id",
        "student__display_name",
        "=subject__external_id",
        "subject__name",
    )
    ordering = ("subject__organization__name", "student__external_id", "subject__external_id")

    def get_queryset(self, request):
        return pairs_with_last_verification(super().get_queryset(request))

    @admin.display(description="organization", ordering="subject__organization__name")
    def organization(self, obj):
        return obj.subject.organization

    @admin.display(description="chain")
    def chain_status(self, obj) -> str:
        intact = getattr(obj, "verified_intact", None)
        if intact is None:
            return "never verified"
        return "intact" if intact else f"broken at seq {obj.verified_broken_seq}"

    def get_urls(self):
        return [
            path(
                "<int:object_id>/verify/",
                self.admin_site.admin_view(self.verify_view),
                name="tutorbrain_studentsubject_verify",
            ),
            *super().get_urls(),
        ]

    def verify_view(self, request, object_id):
        if request.method != "POST" or not request.user.has_perm(VERIFY_PERMISSION):
            raise PermissionDenied
        pair = get_object_or_404(
            StudentSubject.objects.select_related("student", "subject"), pk=object_id
        )
        verification = chain_verify(pair=pair)
        if verification.intact:
            self.message_user(
                request,
                f"Chain verified: intact, {verification.length} episodes, every hash recomputed.",
                messages.SUCCESS,
            )
        else:
            self.message_user(
                request,
                f"Chain broken at seq {verification.broken_seq}: {verification.reason}",
                messages.ERROR,
            )
        return HttpResponseRedirect(
            reverse("admin:tutorbrain_studentsubject_change", args=[pair.pk])
        )

    def change_view(self, request, object_id, form_url="", extra_context=None):
        requested = get_object_or_404(StudentSubject, pk=object_id)
        if not self.has_view_permission(request, requested):
            raise PermissionDenied
        hub = student_subject_hub(pair=requested)
        pair = hub.pair
        preview_query = urlencode(
            {
                "organization": pair.subject.organization_id,
                "student": pair.student.external_id,
                "subject": pair.subject.external_id,
            }
        )
        user = request.user
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"{pair.student} · {pair.subject}",
            "hub": hub,
            "pair": pair,
            "organization": pair.subject.organization,
            "curve": _curve(hub.calibration) if hub.calibration else "",
            "limits": limits_sentence_for(
                calibrated=hub.self_model.calibrated,
                predicted_checks=hub.self_model.predicted_checks,
                ece=hub.self_model.ece,
                belief_predictions=hub.self_model.belief_predictions,
                belief_ece=hub.self_model.belief_ece,
            )
            if hub.self_model
            else "",
            "can_verify": user.has_perm(VERIFY_PERMISSION),
            "can_rederive": user.has_perm("beliefs.rederive_belief"),
            "verify_url": reverse("admin:tutorbrain_studentsubject_verify", args=[pair.pk]),
            "beliefs_url": reverse("admin:beliefs_pairbeliefs_change", args=[pair.pk]),
            "report_url": reverse("admin:beliefs_pairbeliefs_report", args=[pair.pk]),
            "rederive_url": reverse("admin:beliefs_pairbeliefs_changelist"),
            "episodes_url": reverse("admin:memory_episode_changelist")
            + f"?pair__id__exact={pair.pk}",
            "nights_url": reverse("admin:tutorbrain_nightlyrun_changelist")
            + f"?pair__id__exact={pair.pk}",
            "preview_url": reverse("block-preview"),
            "preview_query": preview_query,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/tutorbrain/student_subject.html", context)
