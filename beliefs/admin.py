"""Staff views of beliefs (R-4): the list, each belief's whole chain as a timeline, the
per-pair page with the re-derivation action, and the report (R-4.6).

Everything here is read-only; the one write (re-derivation) calls the services.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, path, reverse
from django.utils.functional import cached_property
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme

from beliefs.models import Belief, BeliefLearningFit, PairBeliefs, Rederivation
from beliefs.selectors import (
    belief_chain,
    pair_overview,
    pair_report,
    pairs_rederivation_preview,
)
from beliefs.services import (
    REDERIVE_INLINE_MAX_PAIRS,
    beliefs_rederive_many,
    beliefs_rederive_schedule,
)
from memory.admin import OrganizationFilter, SubjectFilter, hub_link
from memory.models import Episode

# The list never counts more rows than this: an exact count of a huge table is slow and
# tells staff nothing a "10,000+" would not.
ADMIN_COUNT_CAP = 10_000
# How many pair names the confirmation page lists before "and N more".
CONFIRMATION_PAIRS_LISTED = 30


class CappedCountPaginator(Paginator):
    @cached_property
    def count(self) -> int:
        rows = self.object_list.values("pk")  # type: ignore[attr-defined]  # a QuerySet here
        return len(rows[: ADMIN_COUNT_CAP + 1])


def _episode_url(episode_id: int) -> str | None:
    try:
        return reverse("admin:memory_episode_change", args=[episode_id])
    except NoReverseMatch:  # the episode admin is not installed
        return None


def _hub_url(pair_id: int) -> str | None:
    try:  # the student-subject hub is in tutorbrain, which beliefs does not import
        return reverse("admin:tutorbrain_studentsubject_change", args=[pair_id])
    except NoReverseMatch:
        return None


def _preview_url(pair) -> str | None:
    """The block preview, prefilled with this student-subject (ids, not display names)."""
    try:
        base = reverse("block-preview")
    except NoReverseMatch:
        return None
    query = urlencode(
        {
            "organization": pair.subject.organization_id,
            "student": pair.student.external_id,
            "subject": pair.subject.external_id,
        }
    )
    return f"{base}?{query}"


class _ReadOnly:
    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class BeliefStateFilter(admin.SimpleListFilter):
    """Current rows by default (what the block reads); superseded and retired on demand."""

    title = "state"
    parameter_name = "state"
    CURRENT, SUPERSEDED, RETIRED, ALL = "current", "superseded", "retired", "all"

    def lookups(self, request, model_admin):
        return [
            (self.CURRENT, "current"),
            (self.SUPERSEDED, "superseded"),
            (self.RETIRED, "retirement rows"),
            (self.ALL, "all rows"),
        ]

    def choices(self, changelist):
        selected = self.value() or self.CURRENT
        for lookup, title in self.lookup_choices:
            yield {
                "selected": selected == lookup,
                "query_string": changelist.get_query_string({self.parameter_name: lookup}),
                "display": title,
            }

    def queryset(self, request, queryset):
        value = self.value() or self.CURRENT
        if value == self.CURRENT:
            return queryset.current()
        if value == self.SUPERSEDED:
            return queryset.filter(superseded_by__isnull=False)
        if value == self.RETIRED:
            return queryset.filter(reason=Belief.Reason.RETIREMENT)
        return queryset


@admin.register(Belief)
class BeliefAdmin(_ReadOnly, admin.ModelAdmin):
    list_display = (
        "concept_name",
        "student",
        "subject",
        "organization",
        "claim",
        "confidence_display",
        "p_right_display",
        "reason",
        "needs_confirmation",
        "check_count",
        "created_at",
        "state",
    )
    list_display_links = ("concept_name",)
    list_select_related = ("concept", "pair__student", "pair__subject__organization")
    list_filter = (
        BeliefStateFilter,
        ("pair__subject__organization", OrganizationFilter),
        ("pair__subject", SubjectFilter),
        "claim",
        "reason",
        "needs_confirmation",
    )
    search_fields = ("concept__name", "pair__student__external_id", "pair__subject__external_id")
    ordering = ("-created_at", "-pk")
    paginator = CappedCountPaginator
    show_full_result_count = False
    list_per_page = 100

    @admin.display(description="concept", ordering="concept__name")
    def concept_name(self, obj: Belief) -> str:
        return obj.concept.name

    @admin.display(description="student", ordering="pair__student__external_id")
    def student(self, obj: Belief) -> str:
        return str(obj.pair.student)

    @admin.display(description="subject", ordering="pair__subject__external_id")
    def subject(self, obj: Belief) -> str:
        return str(obj.pair.subject)

    @admin.display(description="organization")
    def organization(self, obj: Belief):
        return obj.pair.subject.organization

    @admin.display(description="confidence", ordering="confidence")
    def confidence_display(self, obj: Belief) -> str:
        return f"{obj.confidence:.2f}"

    @admin.display(description="p_right", ordering="p_right")
    def p_right_display(self, obj: Belief) -> str:
        return "—" if obj.p_right is None else f"{obj.p_right:.2f}"

    @admin.display(description="state")
    def state(self, obj: Belief) -> str:
        if obj.reason == Belief.Reason.RETIREMENT:
            return "retirement"
        return "current" if obj.superseded_by_id is None else "superseded"

    @staticmethod
    def _chips(episodes) -> list[dict]:
        # In time order; the chip names the episode by its id, the one its link opens.
        ordered = sorted(episodes, key=lambda e: (e.occurred_at, e.seq))
        return [{"episode": e, "url": _episode_url(e.pk)} for e in ordered]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The belief's whole supersession chain as a timeline, oldest first."""
        belief = get_object_or_404(Belief.objects.select_related("pair"), pk=object_id)
        if not self.has_view_permission(request, belief):
            raise PermissionDenied
        chain = belief_chain(belief=belief)
        steps = []
        previous: dict[int, Episode] = {}
        for position, row in enumerate(chain, start=1):
            behind = {link.episode_id: link.episode for link in row.evidence_links.all()}
            steps.append(
                {
                    "position": position,
                    "row": row,
                    "is_selected": row.pk == belief.pk,
                    "state": self.state(row),
                    "confidence_percent": round(row.confidence * 100),
                    "evidence_count": len(behind),
                    "new": self._chips(e for i, e in behind.items() if i not in previous),
                    "carried": self._chips(e for i, e in behind.items() if i in previous),
                    # After a re-derivation under other rules, checks may stop counting.
                    "dropped": self._chips(e for i, e in previous.items() if i not in behind)
                    if behind and row.reason == Belief.Reason.REDERIVATION
                    else [],
                }
            )
            if behind:
                # A retirement row has no evidence of its own: "new" on the row after it
                # is measured against the last row that had some.
                previous = behind
        pair = chain[0].pair
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Belief chain: {pair.student} · {pair.subject} · {chain[0].concept.name}",
            "belief": belief,
            "pair": pair,
            "concept": chain[0].concept,
            "steps": steps,
            "pair_url": reverse("admin:beliefs_pairbeliefs_change", args=[pair.pk]),
            "hub_url": _hub_url(pair.pk),
        }
        return TemplateResponse(request, "admin/beliefs/belief/timeline.html", context)


def _count_subquery(queryset):
    return Coalesce(
        Subquery(
            queryset.order_by().values("pair_id").annotate(n=Count("pk")).values("n")[:1],
            output_field=IntegerField(),
        ),
        0,
    )


@admin.register(PairBeliefs)
class PairBeliefsAdmin(_ReadOnly, admin.ModelAdmin):
    list_display = (
        "student",
        "subject",
        "organization",
        "current_beliefs",
        "checks",
        "last_rederived_at",
        "report_link",
        "hub",
    )
    list_select_related = ("student", "subject__organization")
    search_fields = (
        "student__external_id",
        "student__display_name",
        "subject__external_id",
        "subject__name",
    )
    list_filter = (("subject__organization", OrganizationFilter), ("subject", SubjectFilter))
    actions = ["rederive_selected"]
    paginator = CappedCountPaginator
    show_full_result_count = False
    ordering = ("student__external_id", "subject__external_id")

    def get_queryset(self, request):
        # Per-row numbers as correlated subqueries on indexed columns: no per-row query,
        # and no join that multiplies beliefs by episodes.
        current = Belief.objects.current().filter(pair_id=OuterRef("pk"))
        checks = Episode.objects.filter(pair_id=OuterRef("pk"), kind=Episode.Kind.CHECK)
        last = (
            Rederivation.objects.filter(pair_id=OuterRef("pk"))
            .order_by("-created_at")
            .values("created_at")[:1]
        )
        return (
            super()
            .get_queryset(request)
            .annotate(
                current_belief_count=_count_subquery(current),
                check_count=_count_subquery(checks),
                last_rederivation_at=Subquery(last),
            )
        )

    @admin.display(description="organization", ordering="subject__organization__name")
    def organization(self, obj):
        return obj.subject.organization

    @admin.display(description="current beliefs", ordering="current_belief_count")
    def current_beliefs(self, obj) -> int:
        return obj.current_belief_count

    @admin.display(description="checks on record", ordering="check_count")
    def checks(self, obj) -> int:
        return obj.check_count

    @admin.display(description="last re-derivation", ordering="last_rederivation_at")
    def last_rederived_at(self, obj):
        return obj.last_rederivation_at or "never"

    @admin.display(description="report")
    def report_link(self, obj):
        return format_html(
            '<a href="{}">report</a>', reverse("admin:beliefs_pairbeliefs_report", args=[obj.pk])
        )

    @admin.display(description="whole story")
    def hub(self, obj):
        return hub_link(obj.pk)

    def has_rederive_permission(self, request) -> bool:
        return request.user.has_perm("beliefs.rederive_belief")

    def get_urls(self):
        own = [
            path(
                "<int:object_id>/report/",
                self.admin_site.admin_view(self.report_view),
                name="beliefs_pairbeliefs_report",
            )
        ]
        return own + super().get_urls()

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The per-pair page: current beliefs, chain lengths, last re-derivation."""
        pair = get_object_or_404(
            PairBeliefs.objects.select_related("student", "subject"), pk=object_id
        )
        if not self.has_view_permission(request, pair):
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Beliefs: {pair.student} · {pair.subject}",
            "pair": pair,
            "overview": pair_overview(pair=pair),
            "can_rederive": self.has_rederive_permission(request),
            "changelist_url": reverse("admin:beliefs_pairbeliefs_changelist"),
            "report_url": reverse("admin:beliefs_pairbeliefs_report", args=[pair.pk]),
            "hub_url": _hub_url(pair.pk),
            "preview_url": _preview_url(pair),
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/beliefs/pairbeliefs/overview.html", context)

    def report_view(self, request, object_id):
        pair = get_object_or_404(
            PairBeliefs.objects.select_related("student", "subject"), pk=object_id
        )
        if not self.has_view_permission(request, pair):
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Report: {pair.student} · {pair.subject}",
            "pair": pair,
            "report": pair_report(pair=pair),
            "pair_url": reverse("admin:beliefs_pairbeliefs_change", args=[pair.pk]),
        }
        return TemplateResponse(request, "admin/beliefs/pairbeliefs/report.html", context)

    @admin.action(
        description="Re-derive beliefs of the selected student-subjects",
        permissions=["rederive"],
    )
    def rederive_selected(self, request, queryset):
        """Confirm first (how much is retired and replayed), then call the services."""
        if not self.has_rederive_permission(request):
            raise PermissionDenied
        pair_ids = list(queryset.order_by("pk").values_list("pk", flat=True))
        # Started from a pair's own page: go back there afterwards, not to this list.
        next_url = request.POST.get("next", "")
        if not url_has_allowed_host_and_scheme(
            next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        ):
            next_url = ""
        if request.POST.get("confirm") != "yes":
            beliefs, checks = pairs_rederivation_preview(pair_ids=pair_ids)
            listed = list(queryset.select_related("student", "subject")[:CONFIRMATION_PAIRS_LISTED])
            context = {
                **self.admin_site.each_context(request),
                "opts": self.model._meta,
                "title": "Re-derive beliefs?",
                "pair_count": len(pair_ids),
                "belief_count": beliefs,
                "check_count": checks,
                "listed": listed,
                "unlisted": max(len(pair_ids) - len(listed), 0),
                "pair_ids": pair_ids,
                "inline": len(pair_ids) <= REDERIVE_INLINE_MAX_PAIRS,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                "select_across": request.POST.get("select_across", "0"),
                "next_url": next_url,
                "changelist_url": reverse("admin:beliefs_pairbeliefs_changelist"),
            }
            return TemplateResponse(
                request, "admin/beliefs/pairbeliefs/rederive_confirmation.html", context
            )
        if len(pair_ids) > REDERIVE_INLINE_MAX_PAIRS:
            tasks = beliefs_rederive_schedule(pair_ids=pair_ids, requested_by=request.user)
            self.message_user(
                request,
                f"Re-derivation of {len(pair_ids)} student-subjects queued in {tasks} "
                "background tasks; the per-pair pages show each last re-derivation.",
                messages.SUCCESS,
            )
            return None
        batch = beliefs_rederive_many(
            pair_ids=pair_ids, requested_by=request.user, source=Rederivation.Source.ADMIN
        )
        retired = sum(r.beliefs_retired for r in batch.done)
        replayed = sum(r.checks_replayed for r in batch.done)
        derived = sum(r.beliefs_derived for r in batch.done)
        if batch.done:
            self.message_user(
                request,
                f"Re-derived {len(batch.done)} student-subjects: {retired} beliefs retired, "
                f"{replayed} checks replayed, {derived} beliefs derived.",
                messages.SUCCESS,
            )
        for _pair_id, reason in batch.refused:
            self.message_user(request, f"Not re-derived: {reason}", messages.ERROR)
        return HttpResponseRedirect(next_url) if next_url else None


@admin.register(Rederivation)
class RederivationAdmin(_ReadOnly, admin.ModelAdmin):
    list_display = (
        "pair",
        "created_at",
        "source",
        "requested_by",
        "rules_version",
        "beliefs_retired",
        "checks_replayed",
        "checks_linked",
        "beliefs_derived",
    )
    list_select_related = ("pair__student", "pair__subject__organization", "requested_by")
    list_filter = ("source", "rules_version", ("pair__subject__organization", OrganizationFilter))
    ordering = ("-created_at", "-pk")
    paginator = CappedCountPaginator
    show_full_result_count = False


@admin.register(BeliefLearningFit)
class BeliefLearningFitAdmin(_ReadOnly, admin.ModelAdmin):
    """The nightly fits of the subjects' learning models (docs/beliefs.md): staff can see
    what the practice term was when a belief was written."""

    list_display = ("subject", "created_at", "rules_version", "checks", "students", "rederives")
    list_select_related = ("subject__organization",)
    list_filter = (("subject__organization", OrganizationFilter),)
    ordering = ("-created_at", "-pk")
    paginator = CappedCountPaginator
    show_full_result_count = False
