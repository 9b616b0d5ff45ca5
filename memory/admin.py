"""Admin for tenancy and the episode log. Immutable tables are read-only; lists do a
fixed number of queries whatever their length and never count a huge table."""

from __future__ import annotations

from functools import cached_property

from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.core.paginator import Paginator
from django.db import OperationalError, connection, transaction
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from memory.hashing import episode_hash, fields_of
from memory.models import (
    AnswerStance,
    ApiKey,
    ChainCheckpoint,
    ChainVerification,
    CitationCheck,
    Episode,
    Organization,
    Pair,
    Student,
    Subject,
    SubjectFile,
)
from memory.selectors import citation_status_for, pairs_with_last_verification
from memory.services import chain_verify

# An exact count is tried for at most this long; past it the planner's estimate is shown.
ADMIN_COUNT_TIMEOUT_MS = 200


class LargeTablePaginator(Paginator):
    """Counts exactly when that is cheap, otherwise shows PostgreSQL's estimate.

    The admin counts every list it shows; on a table of millions of episodes that is a
    full scan per page view. The exact count runs under a short statement timeout
    (in a savepoint, so a cancelled count does not spoil the request's transaction);
    if it is cancelled the table's `reltuples` estimate stands in.
    """

    @cached_property
    def count(self) -> int:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(f"SET LOCAL statement_timeout = {int(ADMIN_COUNT_TIMEOUT_MS)}")
                return super().count
        except OperationalError:
            table = self.object_list.model._meta.db_table  # type: ignore[attr-defined]
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT GREATEST(reltuples, 0)::bigint FROM pg_class WHERE relname = %s",
                    [table],
                )
                row = cursor.fetchone()
            return int(row[0]) if row else 0


class OrganizationFilter(admin.RelatedFieldListFilter):
    """The organization list filter, in name order, for any `…organization` path."""

    def field_choices(self, field, request, model_admin):
        return [(o.pk, o.name) for o in Organization.objects.order_by("name")]


class SubjectFilter(admin.RelatedFieldListFilter):
    """Subjects named with their organization: several schools may each have "Cell biology"."""

    def field_choices(self, field, request, model_admin):
        subjects = Subject.objects.select_related("organization").order_by(
            "organization__name", "name", "external_id"
        )
        return [(s.pk, f"{s} ({s.organization.name})") for s in subjects]


def readable_value(value) -> str:
    """A JSON value as nested lists a person can read (no raw JSON on a page); "—" if empty."""
    if value in (None, "", [], {}):
        return "—"
    if isinstance(value, dict):
        return format_html(
            "<ul style='margin:0;padding-left:1.2em'>{}</ul>",
            format_html_join(
                "",
                "<li>{}: {}</li>",
                ((str(k).replace("_", " "), readable_value(v)) for k, v in value.items()),
            ),
        )
    if isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            return ", ".join(readable_value(v) for v in value)
        return format_html(
            "<ul style='margin:0;padding-left:1.2em'>{}</ul>",
            format_html_join("", "<li>{}</li>", ((readable_value(v),) for v in value)),
        )
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def hub_link(pair_id: int, *, label: str = "open") -> str:
    """A link to the student-subject hub page (beliefs, episodes, chain, nights)."""
    try:  # the hub lives in the top app (tutorbrain), which memory does not import
        url = reverse("admin:tutorbrain_studentsubject_change", args=[pair_id])
    except NoReverseMatch:
        return "—"
    return format_html('<a href="{}">{}</a>', url, label)


def episode_link(episode_id: int | None, *, label: str = "") -> str:
    """One identifier for an episode everywhere: its id, the one in its admin URL and the API."""
    if episode_id is None:
        return "—"
    url = reverse("admin:memory_episode_change", args=[episode_id])
    return format_html('<a href="{}">{}</a>', url, label or f"episode {episode_id}")


class ReadOnlyAdmin(admin.ModelAdmin):
    """For append-only and service-written tables: look, never touch."""

    paginator = LargeTablePaginator
    show_full_result_count = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


# --- tenancy --------------------------------------------------------------------------


@admin.register(Organization)
class OrganizationAdmin(ReadOnlyAdmin):
    list_display = ("name", "slug", "created_at")
    search_fields = ("name", "=slug")


@admin.register(ApiKey)
class ApiKeyAdmin(ReadOnlyAdmin):
    list_display = ("name", "prefix", "organization", "created_at", "revoked_at")
    list_select_related = ("organization",)
    list_filter = ("organization",)
    exclude = ("key_hash",)


@admin.register(Student)
class StudentAdmin(ReadOnlyAdmin):
    list_display = ("external_id", "display_name", "organization", "timezone", "created_at")
    list_select_related = ("organization",)
    list_filter = (("organization", OrganizationFilter),)
    search_fields = ("=external_id", "display_name")


@admin.register(Subject)
class SubjectAdmin(ReadOnlyAdmin):
    list_display = ("external_id", "name", "organization", "language", "created_at")
    list_select_related = ("organization",)
    list_filter = (("organization", OrganizationFilter), "language")
    search_fields = ("=external_id", "name")


@admin.register(SubjectFile)
class SubjectFileAdmin(ReadOnlyAdmin):
    list_display = (
        "name", "subject", "organization", "uploaded_at", "state", "short_fingerprint", "page_count",
    )  # fmt: skip
    list_select_related = ("subject__organization",)
    list_filter = (("subject__organization", OrganizationFilter),)
    search_fields = ("name", "=fingerprint")
    exclude = ("content",)

    def get_queryset(self, request):
        # The bytes stay in the database; the admin never loads them.
        return super().get_queryset(request).defer("content")

    @admin.display(description="organization", ordering="subject__organization__name")
    def organization(self, obj: SubjectFile):
        return obj.subject.organization

    @admin.display(description="state")
    def state(self, obj: SubjectFile) -> str:
        if obj.removed_at:
            return "removed"
        if obj.replaced_at:
            return "replaced"
        return "current"

    @admin.display(description="fingerprint")
    def short_fingerprint(self, obj: SubjectFile) -> str:
        return obj.fingerprint[:12]


# --- chains ---------------------------------------------------------------------------


@admin.register(Pair)
class PairAdmin(ReadOnlyAdmin):
    """One row per student-subject chain: its head and whether it last verified intact."""

    list_display = (
        "student",
        "subject",
        "organization",
        "head_seq",
        "last_episode_at",
        "chain_status",
        "verified_at_display",
        "episodes_link",
        "hub",
    )
    list_select_related = ("student", "subject__organization")
    list_filter = (("subject__organization", OrganizationFilter), ("subject", SubjectFilter))
    search_fields = ("=student__external_id", "=subject__external_id", "student__display_name")
    readonly_fields = ("chain_status", "verified_at_display", "episodes_link")
    actions = ["verify_chain"]

    def get_queryset(self, request):
        return pairs_with_last_verification(super().get_queryset(request))

    @admin.display(description="organization", ordering="subject__organization__name")
    def organization(self, obj: Pair):
        return obj.subject.organization

    @admin.display(description="chain")
    def chain_status(self, obj: Pair) -> str:
        intact = getattr(obj, "verified_intact", None)
        if intact is None:
            return "never verified"
        if intact:
            return "intact"
        # Annotated by pairs_with_last_verification.
        failure = ChainVerification.Failure(obj.verified_failure).label  # type: ignore[attr-defined]
        return f"broken at seq {obj.verified_broken_seq} ({failure})"  # type: ignore[attr-defined]

    @admin.display(description="last verified", ordering="verified_at")
    def verified_at_display(self, obj: Pair):
        return getattr(obj, "verified_at", None) or "—"

    @admin.display(description="whole story")
    def hub(self, obj: Pair) -> str:
        return hub_link(obj.pk)

    @admin.display(description="episodes")
    def episodes_link(self, obj: Pair) -> str:
        url = reverse("admin:memory_episode_changelist") + f"?pair__id__exact={obj.pk}"
        return format_html('<a href="{}">{} episodes</a>', url, obj.head_seq)

    def has_verify_chain_permission(self, request) -> bool:
        return request.user.has_perm("memory.verify_chain")

    @admin.action(description="Verify chain (recompute every hash)", permissions=["verify_chain"])
    def verify_chain(self, request, queryset):
        broken = 0
        for pair in queryset.select_related("student", "subject"):
            verification = chain_verify(pair=pair)
            if not verification.intact:
                broken += 1
                self.message_user(
                    request,
                    f"{pair}: broken at seq {verification.broken_seq} — {verification.reason}",
                    level=messages.ERROR,
                )
        total = queryset.count()
        self.message_user(
            request,
            f"Verified {total} chain(s): {total - broken} intact, {broken} broken.",
            level=messages.SUCCESS if not broken else messages.WARNING,
        )


class EpisodeChangeList(ChangeList):
    """Computes the page's citation status in one query, not one per row."""

    def get_results(self, request):
        super().get_results(request)
        statuses = citation_status_for(episodes=self.result_list)
        for episode in self.result_list:
            episode.citation_status = statuses[episode.pk]


@admin.register(Episode)
class EpisodeAdmin(ReadOnlyAdmin):
    list_display = (
        "episode_id_display",
        "seq_display",
        "kind",
        "pair",
        "organization",
        "occurred_at",
        "salience_display",
        "short_summary",
        "citation_status_display",
    )
    list_display_links = ("episode_id_display",)
    list_select_related = ("pair__student", "pair__subject__organization")
    list_filter = (
        "kind",
        "verdict",
        "occurred_at",
        ("pair__subject__organization", OrganizationFilter),
        ("pair__subject", SubjectFilter),
    )
    search_fields = (
        "summary",
        "topic",
        "=pair__student__external_id",
        "=pair__subject__external_id",
    )
    # episode_occurred_idx serves this order.
    ordering = ("-occurred_at",)
    date_hierarchy = None
    fieldsets = (
        (
            None,
            {
                "fields": (
                    "pair",
                    "pair_hub",
                    "seq",
                    "kind",
                    "summary",
                    "text",
                    "concepts",
                    "salience",
                )
            },
        ),
        ("When", {"fields": ("occurred_at", "recorded_at")}),
        ("Check", {"fields": ("topic", "verdict", "predicted_mastery")}),
        ("Evidence", {"fields": ("evidence_display", "citations_now", "stance_display")}),
        ("Chain", {"fields": ("neighbours", "prev_hash", "hash", "hash_check")}),
        ("Idempotency", {"fields": ("idempotency_key",)}),
    )
    readonly_fields = (
        "pair_hub",
        "evidence_display",
        "citations_now",
        "stance_display",
        "neighbours",
        "hash_check",
    )

    def get_changelist(self, request, **kwargs):
        return EpisodeChangeList

    @admin.display(description="episode", ordering="pk")
    def episode_id_display(self, obj: Episode) -> str:
        return f"episode {obj.pk}"

    @admin.display(description="seq in chain", ordering="seq")
    def seq_display(self, obj: Episode) -> int:
        return obj.seq

    @admin.display(description="organization")
    def organization(self, obj: Episode):
        return obj.pair.subject.organization

    @admin.display(description="summary")
    def short_summary(self, obj: Episode) -> str:
        return obj.summary[:80]

    @admin.display(description="citations")
    def citation_status_display(self, obj: Episode) -> str:
        status = getattr(obj, "citation_status", None)
        if status is None:
            return "—"
        return f"{status}: {status.note}" if status.note else str(status)

    @admin.display(description="student-subject page")
    def pair_hub(self, obj: Episode) -> str:
        return hub_link(obj.pair_id, label="the whole story of this student-subject")

    @admin.display(description="evidence")
    def evidence_display(self, obj: Episode) -> str:
        return readable_value(obj.evidence)

    @admin.display(description="salience", ordering="salience")
    def salience_display(self, obj: Episode) -> str:
        return f"{obj.salience:.2f}"

    @admin.display(description="cited files now")
    def citations_now(self, obj: Episode) -> str:
        if not (obj.evidence or {}).get("citations"):
            return "— (this episode cites no file)"
        status = citation_status_for(episodes=[obj])[obj.pk]
        checks = list(
            obj.citation_checks.order_by("-checked_at").values_list("result", "checked_at")[:5]
        )
        history = format_html_join(", ", "{} ({})", ((r, t.isoformat()) for r, t in checks))
        return format_html(
            "{}{}<br>last checks: {}",
            str(status),
            f" — {status.note}" if status.note else "",
            history or "never checked",
        )

    @admin.display(description="stance")
    def stance_display(self, obj: Episode) -> str:
        stance = AnswerStance.objects.filter(episode=obj).first()
        return f"{stance.stance} ({stance.reported_at.isoformat()})" if stance else "—"

    @admin.display(description="chain neighbours")
    def neighbours(self, obj: Episode) -> str:
        around = Episode.objects.filter(pair_id=obj.pair_id, seq__in=[obj.seq - 1, obj.seq + 1])
        links = []
        for other in around.only("pk", "seq", "kind", "summary", "hash").order_by("seq"):
            label = "previous" if other.seq < obj.seq else "next"
            url = reverse("admin:memory_episode_change", args=[other.pk])
            links.append(
                (label, url, other.pk, other.seq, other.kind, other.summary[:60], other.hash[:12])
            )
        if not links:
            return "— (the only episode of its chain)"
        return format_html_join(
            mark_safe("<br>"), '{}: <a href="{}">episode {}</a> (seq {}) {}: {} (hash {}…)', links
        )

    @admin.display(description="hash recomputed")
    def hash_check(self, obj: Episode) -> str:
        recomputed = episode_hash(fields_of(obj), obj.prev_hash)
        if recomputed == obj.hash:
            return "matches the stored hash"
        return f"DIFFERS: recomputed {recomputed} — this episode was changed after it was written"


@admin.register(AnswerStance)
class AnswerStanceAdmin(ReadOnlyAdmin):
    list_display = ("episode_display", "organization", "stance", "reported_at")
    list_select_related = ("episode__pair__subject__organization",)
    list_filter = ("stance", ("episode__pair__subject__organization", OrganizationFilter))

    @admin.display(description="episode", ordering="episode_id")
    def episode_display(self, obj: AnswerStance) -> str:
        return episode_link(obj.episode_id)

    @admin.display(description="organization")
    def organization(self, obj: AnswerStance):
        return obj.episode.pair.subject.organization


@admin.register(CitationCheck)
class CitationCheckAdmin(ReadOnlyAdmin):
    list_display = ("episode_display", "organization", "result", "checked_at")
    list_select_related = ("episode__pair__subject__organization",)
    list_filter = ("result", ("episode__pair__subject__organization", OrganizationFilter))

    @admin.display(description="episode", ordering="episode_id")
    def episode_display(self, obj: CitationCheck) -> str:
        return episode_link(obj.episode_id)

    @admin.display(description="organization")
    def organization(self, obj: CitationCheck):
        return obj.episode.pair.subject.organization


@admin.register(ChainVerification)
class ChainVerificationAdmin(ReadOnlyAdmin):
    list_display = (
        "pair",
        "organization",
        "intact",
        "length",
        "broken_seq",
        "failure",
        "reason",
        "checkpoint_created_at",
        "checked_at",
    )
    list_select_related = ("pair__student", "pair__subject__organization")
    list_filter = ("intact", "failure", ("pair__subject__organization", OrganizationFilter))
    ordering = ("-checked_at",)

    @admin.display(description="organization")
    def organization(self, obj: ChainVerification):
        return obj.pair.subject.organization


@admin.register(ChainCheckpoint)
class ChainCheckpointAdmin(ReadOnlyAdmin):
    list_display = ("pk", "created_at", "signature")
    exclude = ("heads",)

    def get_queryset(self, request):
        # A checkpoint's heads may be 100k entries: never load them for a list.
        return super().get_queryset(request).defer("heads")
