"""The admin for teachers (R-3.4): per subject the map, its teaching order, its picture;
teaching a concept or a new one; files and their reading state.

Concepts, edges and readings are written only by the services; the admin shows them and
calls services from its actions and forms. Teaching needs `concepts.teach_concept`
(granted to the "teachers" group).
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, Prefetch
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from concepts.models import (
    READINESS_BAND_LABELS,
    Concept,
    ConceptSource,
    FileReading,
    Prerequisite,
    SubjectMap,
    TaughtNote,
    readiness_label,
)
from concepts.picture import (
    BAND_COLOURS,
    BAND_LABELS,
    DEFAULT_DRAWN,
    MAX_DRAWN,
    band_colour,
    picture_svg,
)
from concepts.selectors import MapCycle, concept_by_name, map_cycles, map_picture
from concepts.services import concept_teach, file_reading_requeue, file_remove, file_upload
from memory.admin import LargeTablePaginator, OrganizationFilter, ReadOnlyAdmin, SubjectFilter
from memory.errors import InvalidInput
from memory.models import Subject

TEACH_PERMISSION = "concepts.teach_concept"
TEACHING_ORDER_PAGE_SIZE = 100


def _percent(value: float) -> str:
    return f"{round(value * 100)}%"


def _bounded_int(raw: str | None, default: int, low: int, high: int) -> int:
    """A page parameter as an int within [low, high]; anything else is the default."""
    try:
        return min(max(int(raw or default), low), high)
    except ValueError:
        return default


CYCLES_LISTED = 5
CYCLE_NAMES_SHOWN = 5


def _cycle_lines(cycles: list[MapCycle]) -> list[tuple[str, list[str] | None]]:
    """One line per cycle (the biggest first): its size and its most central names.

    A cycle of 220 concepts is one line, not 220 names; the full list is there to
    unfold.
    """
    lines: list[tuple[str, list[str] | None]] = []
    for cycle in cycles[:CYCLES_LISTED]:
        shown = ", ".join(cycle.names[:CYCLE_NAMES_SHOWN])
        if cycle.size > CYCLE_NAMES_SHOWN:
            more = cycle.size - CYCLE_NAMES_SHOWN
            lines.append(
                (f"{cycle.size:,} concepts, most central: {shown} and {more:,} more", cycle.names)
            )
        else:
            lines.append((f"{cycle.size} concepts: {shown}", None))
    if len(cycles) > CYCLES_LISTED:
        rest = cycles[CYCLES_LISTED:]
        size = sum(c.size for c in rest)
        lines.append((f"and {len(rest)} smaller cycles ({size:,} concepts)", None))
    return lines


# --- teaching forms --------------------------------------------------------------------


class TeachNoteForm(forms.Form):
    note = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        help_text='What the class calls it or how to treat it, e.g. "we call it the powerhouse '
        'of the cell".',
    )


class TeachNewConceptForm(forms.Form):
    name = forms.CharField(max_length=80, help_text="A short name, not a sentence.")
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 80}))


class UploadForm(forms.Form):
    subject = forms.ModelChoiceField(queryset=Subject.objects.select_related("organization"))
    file = forms.FileField(
        help_text="Text, Markdown, PDF, Word (.docx), slides (.pptx), OpenDocument "
        "(.odt, .odp), an e-book (.epub) or a web page (.html)."
    )


# --- the subject's map -----------------------------------------------------------------


@admin.register(SubjectMap)
class SubjectMapAdmin(ReadOnlyAdmin):
    """One row per subject; its page is the teacher's view of the map."""

    list_display = (
        "subject",
        "organization",
        "concept_count",
        "readiness_percent",
        "cycle_note",
        "computed_at",
    )
    list_select_related = ("subject__organization",)
    list_filter = (("subject__organization", OrganizationFilter),)
    search_fields = ("subject__external_id", "subject__name", "subject__organization__name")
    ordering = ("subject__organization__name", "subject__name")
    change_form_template = "admin/concepts/subjectmap/map.html"

    @admin.display(description="organization", ordering="subject__organization__name")
    def organization(self, obj: SubjectMap):
        return obj.subject.organization

    @admin.display(description="readiness of the material", ordering="readiness")
    def readiness_percent(self, obj: SubjectMap) -> str:
        return _percent(obj.readiness)

    @admin.display(description="cycle")
    def cycle_note(self, obj: SubjectMap) -> str:
        # A count, never the names: one cycle can hold hundreds (see the map page).
        return f"{len(obj.cycle):,} concepts on cycles" if obj.cycle else "—"

    def get_urls(self):
        return [
            path(
                "<path:object_id>/teach-new/",
                self.admin_site.admin_view(self.teach_new_view),
                name="concepts_subjectmap_teach_new",
            ),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        subject_map = get_object_or_404(
            SubjectMap.objects.select_related("subject__organization"), pk=object_id
        )
        if not self.has_view_permission(request, subject_map):
            raise PermissionDenied
        return self._map_page(request, subject_map, TeachNewConceptForm(), extra_context)

    def _map_page(self, request, subject_map, teach_form, extra_context=None):
        subject = subject_map.subject
        # The teaching order a page at a time: the page's cost stays that of one page
        # whatever the map's size (a 1,000-concept map is 10 pages).
        order = Paginator(
            Concept.objects.filter(subject=subject)
            .order_by("teaching_rank", "name", "pk")
            .values_list("pk", flat=True),
            TEACHING_ORDER_PAGE_SIZE,
        )
        page = order.get_page(request.GET.get("page"))
        # Only what the table shows: no name vectors, no file contents.
        concepts = list(
            Concept.objects.filter(pk__in=list(page.object_list))
            .defer("embedding", "definition")
            .order_by("teaching_rank", "name", "pk")
            .prefetch_related(
                Prefetch(
                    "sources",
                    queryset=ConceptSource.objects.select_related("file")
                    .only(
                        "concept_id",
                        "pages",
                        "file__name",
                        "file__replaced_at",
                        "file__removed_at",
                    )
                    .order_by("file__name"),
                ),  # fmt: skip
                Prefetch(
                    "taught_notes",
                    queryset=TaughtNote.objects.only("concept_id", "note").order_by(
                        "-created_at", "-pk"
                    ),
                ),
                Prefetch(
                    "builds_on",
                    queryset=Prerequisite.objects.select_related("prerequisite")
                    .only("concept_id", "prerequisite__name")
                    .order_by("prerequisite__name"),
                ),
            )
        )
        for concept in concepts:
            # The same colour as the concept's node in the picture.
            concept.band_colour = band_colour(concept.readiness)  # type: ignore[attr-defined]
        cycles = map_cycles(subject_map=subject_map)
        drawn = _bounded_int(request.GET.get("drawn"), DEFAULT_DRAWN, 1, MAX_DRAWN)
        picture = map_picture(subject=subject, limit=drawn)
        concept_url = reverse("admin:concepts_concept_change", args=[0]).replace("/0/", "/{}/")
        context = {
            **self.admin_site.each_context(request),
            "title": f"Concept map of {subject} ({subject.organization.name})",
            "opts": self.model._meta,
            "subject_map": subject_map,
            "subject": subject,
            "readiness_percent": _percent(subject_map.readiness),
            "concept_count": f"{order.count:,}",
            "cycles": cycles,
            "cycle_lines": _cycle_lines(cycles),
            "readiness_legend": [readiness_label(band) for band in READINESS_BAND_LABELS],
            "concepts": concepts,
            "page": page,
            "page_range": list(order.get_elided_page_range(page.number)),
            "picture": picture,
            "default_drawn": DEFAULT_DRAWN,
            "drawn_query": f"&drawn={drawn}" if drawn != DEFAULT_DRAWN else "",
            "draw_more": min(drawn * 2, MAX_DRAWN) if picture.not_drawn_concepts else None,
            "bands": [(BAND_COLOURS[b], BAND_LABELS[b]) for b in BAND_COLOURS],
            "svg": mark_safe(  # written by concepts.picture, every name escaped there
                picture_svg(picture, lambda pk: concept_url.format(pk))
            ),
            "can_teach": request.user.has_perm(TEACH_PERMISSION),
            "teach_form": teach_form,
            "teach_new_url": reverse("admin:concepts_subjectmap_teach_new", args=[subject_map.pk]),
            **(extra_context or {}),
        }
        return TemplateResponse(request, self.change_form_template, context)

    def teach_new_view(self, request, object_id):
        if not request.user.has_perm(TEACH_PERMISSION) or request.method != "POST":
            raise PermissionDenied
        subject_map = get_object_or_404(SubjectMap.objects.select_related("subject"), pk=object_id)
        form = TeachNewConceptForm(request.POST)
        if form.is_valid():
            existing = concept_by_name(subject=subject_map.subject, name=form.cleaned_data["name"])
            if existing is not None:
                # A new concept was asked for: adding the note to an old one silently would
                # surprise; say so and offer that concept's own Teach page.
                form.add_error(
                    "name",
                    format_html(
                        '“{}” already exists in this map. <a href="{}">Teach {}</a> to add '
                        "your note to it, or choose another name.",
                        form.cleaned_data["name"],
                        reverse("admin:concepts_concept_teach", args=[existing.pk]),
                        existing.name,
                    ),
                )
        if form.is_valid():
            try:
                taught = concept_teach(
                    subject=subject_map.subject,
                    name=form.cleaned_data["name"],
                    note=form.cleaned_data["note"],
                    teacher=request.user,
                )
            except InvalidInput as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
            else:
                messages.success(request, f"Taught a new concept: {taught.concept.name}.")
                return HttpResponseRedirect(
                    reverse("admin:concepts_subjectmap_change", args=[subject_map.pk])
                )
        # Show the map again with what was typed and the reason, never an emptied form.
        messages.error(request, "Not taught: see the form below.")
        return self._map_page(request, subject_map, form)


# --- concepts ----------------------------------------------------------------------------


class ConceptSourceInline(admin.TabularInline):
    model = ConceptSource
    fields = ("file", "pages", "name_in_file")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class TaughtNoteInline(admin.TabularInline):
    model = TaughtNote
    fields = ("created_at", "note", "student", "teacher")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("-created_at",)

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Concept)
class ConceptAdmin(ReadOnlyAdmin):
    list_display = (
        "name", "subject", "organization", "layer", "readiness_display", "centrality_display",
        "teaching_rank", "source_count", "assumes_display", "taught",
    )  # fmt: skip
    list_filter = (
        ("subject__organization", OrganizationFilter),
        ("subject", SubjectFilter),
        "layer",
        "taught",
    )
    list_select_related = ("subject__organization",)
    search_fields = ("name", "key", "aliases")
    ordering = ("subject__organization__name", "subject__name", "teaching_rank")
    readonly_fields = (
        "subject", "map_link", "name", "key", "aliases", "name_language", "summary", "definition",
        "layer", "assumes_display", "readiness_display", "centrality_display", "generation",
        "teaching_rank", "taught", "confirmed_by_check", "created_at", "updated_at",
    )  # fmt: skip
    fields = readonly_fields
    change_form_template = "admin/concepts/concept/change_form.html"
    exclude = ("embedding", "embedding_model")
    inlines = [ConceptSourceInline, TaughtNoteInline]
    actions = ["teach_action"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_sources=Count("sources"))

    @admin.display(description="centrality", ordering="centrality")
    def centrality_display(self, obj: Concept) -> str:
        return f"{obj.centrality:.3f}"

    @admin.display(description="readiness (colour in the picture)", ordering="readiness")
    def readiness_display(self, obj: Concept) -> str:
        return readiness_label(obj.readiness)

    @admin.display(description="organization", ordering="subject__organization__name")
    def organization(self, obj: Concept):
        return obj.subject.organization

    @admin.display(description="concept map")
    def map_link(self, obj: Concept) -> str:
        url = reverse("admin:concepts_subjectmap_change", args=[obj.subject_id])
        return format_html('<a href="{}">the map of {}</a>', url, obj.subject)

    def get_urls(self):
        return [
            path(
                "<path:object_id>/teach/",
                self.admin_site.admin_view(self.teach_view),
                name="concepts_concept_teach",
            ),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra = {"can_teach": request.user.has_perm(TEACH_PERMISSION), **(extra_context or {})}
        if extra["can_teach"]:
            extra["teach_url"] = reverse("admin:concepts_concept_teach", args=[object_id])
        return super().change_view(request, object_id, form_url, extra)

    def teach_view(self, request, object_id):
        """One concept's Teach page: the button on the concept page and on each map row."""
        if not request.user.has_perm(TEACH_PERMISSION):
            raise PermissionDenied
        concept = get_object_or_404(
            Concept.objects.select_related("subject__organization"), pk=object_id
        )
        form = TeachNoteForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                concept_teach(
                    subject=concept.subject,
                    concept=concept,
                    note=form.cleaned_data["note"],
                    teacher=request.user,
                )
            except InvalidInput as exc:
                form.add_error("note", exc.message)
            else:
                self.message_user(request, f"Taught {concept.name}: your note is on it now.")
                return HttpResponseRedirect(
                    reverse("admin:concepts_concept_change", args=[concept.pk])
                )
        return TemplateResponse(
            request,
            "admin/concepts/concept/teach_one.html",
            {
                **self.admin_site.each_context(request),
                "title": f"Teach {concept.name}",
                "opts": self.model._meta,
                "concept": concept,
                "form": form,
                "map_url": reverse("admin:concepts_subjectmap_change", args=[concept.subject_id]),
                "notes": concept.taught_notes.order_by("-created_at", "-pk")[:5],
            },
        )

    @admin.display(description="sources", ordering="_sources")
    def source_count(self, obj: Concept) -> int:
        return obj._sources  # type: ignore[attr-defined]

    @admin.display(description="assumes")
    def assumes_display(self, obj: Concept) -> str:
        return ", ".join(obj.assumes) if obj.assumes else "—"

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not request.user.has_perm(TEACH_PERMISSION):
            actions.pop("teach_action", None)
        return actions

    @admin.action(description="Teach the selected concepts (add a taught note)")
    def teach_action(self, request, queryset):
        if not request.user.has_perm(TEACH_PERMISSION):
            raise PermissionDenied
        if "apply" in request.POST:
            form = TeachNoteForm(request.POST)
            if form.is_valid():
                for concept in queryset.select_related("subject"):
                    concept_teach(
                        subject=concept.subject,
                        concept=concept,
                        note=form.cleaned_data["note"],
                        teacher=request.user,
                    )
                self.message_user(request, f"Taught {queryset.count()} concept(s).")
                return None
        else:
            form = TeachNoteForm()
        return TemplateResponse(
            request,
            "admin/concepts/concept/teach.html",
            {
                **self.admin_site.each_context(request),
                "title": "Teach",
                "opts": self.model._meta,
                "concepts": queryset,
                "form": form,
                "action_checkbox_name": ACTION_CHECKBOX_NAME,
            },
        )


@admin.register(TaughtNote)
class TaughtNoteAdmin(ReadOnlyAdmin):
    list_display = (
        "concept",
        "subject",
        "organization",
        "note",
        "student",
        "teacher",
        "created_at",
    )
    list_select_related = ("concept__subject__organization", "student", "teacher")
    list_filter = (("concept__subject__organization", OrganizationFilter),)
    search_fields = ("concept__name", "note")

    @admin.display(description="subject")
    def subject(self, obj: TaughtNote):
        return obj.concept.subject

    @admin.display(description="organization")
    def organization(self, obj: TaughtNote):
        return obj.concept.subject.organization


@admin.register(Prerequisite)
class PrerequisiteAdmin(ReadOnlyAdmin):
    list_display = ("concept", "prerequisite", "weight_display", "subject", "organization")
    list_select_related = ("concept", "prerequisite", "subject__organization")
    list_filter = (("subject__organization", OrganizationFilter), ("subject", SubjectFilter))

    @admin.display(description="weight", ordering="weight")
    def weight_display(self, obj: Prerequisite) -> str:
        return f"{obj.weight:.2f}"

    @admin.display(description="organization")
    def organization(self, obj: Prerequisite):
        return obj.subject.organization


# --- files and their reading ---------------------------------------------------------------


@admin.register(FileReading)
class FileReadingAdmin(ReadOnlyAdmin):
    list_display = (
        "file_name", "subject", "organization", "current", "state", "reason_short", "extractor",
        "concepts_found", "queued_at", "finished_at",
    )  # fmt: skip
    list_select_related = ("file__subject__organization",)
    list_filter = ("state", "extractor", ("file__subject__organization", OrganizationFilter))
    search_fields = ("file__name", "reason")
    readonly_fields = (
        "file", "state", "reason", "extractor", "concepts_found", "rejected_names",
        "queued_at", "started_at", "finished_at",
    )  # fmt: skip
    actions = ["read_again", "record_removal"]
    paginator = LargeTablePaginator
    change_list_template = "admin/concepts/filereading/change_list.html"

    @admin.display(description="file", ordering="file__name")
    def file_name(self, obj: FileReading) -> str:
        return obj.file.name

    @admin.display(description="subject")
    def subject(self, obj: FileReading):
        return obj.file.subject

    @admin.display(description="organization")
    def organization(self, obj: FileReading):
        return obj.file.subject.organization

    @admin.display(description="current", boolean=True)
    def current(self, obj: FileReading) -> bool:
        return obj.file.is_current

    @admin.display(description="reason")
    def reason_short(self, obj: FileReading) -> str:
        return (obj.reason[:80] + "…") if len(obj.reason) > 80 else obj.reason

    def get_urls(self):
        return [
            path(
                "upload/",
                self.admin_site.admin_view(self.upload_view),
                name="concepts_filereading_upload",
            ),
            *super().get_urls(),
        ]

    def _can_manage(self, request) -> bool:
        return request.user.has_perm(TEACH_PERMISSION)

    def upload_view(self, request):
        if not self._can_manage(request):
            raise PermissionDenied
        form = UploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            if upload.size > _max_bytes():
                form.add_error("file", f"over the size limit of {_max_bytes()} bytes")
            else:
                try:
                    result = file_upload(
                        subject=form.cleaned_data["subject"],
                        name=upload.name,
                        content=upload.read(),
                        content_type=upload.content_type or "",
                    )
                except InvalidInput as exc:
                    form.add_error("file", exc.message)
                else:
                    self.message_user(
                        request, f"{result.file.name}: {result.reading.state}", messages.SUCCESS
                    )
                    return HttpResponseRedirect(reverse("admin:concepts_filereading_changelist"))
        return TemplateResponse(
            request,
            "admin/concepts/filereading/upload.html",
            {
                **self.admin_site.each_context(request),
                "title": "Upload a file",
                "opts": self.model._meta,
                "form": form,
            },
        )

    @admin.action(description="Read the selected failed files again")
    def read_again(self, request, queryset):
        if not self._can_manage(request):
            raise PermissionDenied
        done = 0
        for reading in queryset.filter(state=FileReading.State.FAILED):
            file_reading_requeue(file_reading=reading)
            done += 1
        self.message_user(request, f"{done} file(s) queued again.")

    @admin.action(description="Record the removal of the selected files")
    def record_removal(self, request, queryset):
        if not self._can_manage(request):
            raise PermissionDenied
        done = 0
        for reading in queryset.select_related("file"):
            if reading.file.is_current:
                file_remove(subject_file=reading.file)
                done += 1
        self.message_user(request, f"{done} file(s) recorded as removed.")


def _max_bytes() -> int:
    from django.conf import settings

    return settings.TUTORBRAIN_MAX_FILE_BYTES
