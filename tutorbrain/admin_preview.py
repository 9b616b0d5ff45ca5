"""Staff page: type a message for a student-subject and see the block it would get (R-5).

Each recalled episode is listed with its score parts (weighted relevance, salience and
recency; its BM25 score and similarity with their ranks, the relevance lent by a
matching neighbour turn, matched words, concept match) and the pools it came from,
so staff can see *why* it was chosen. Reads only: building a block writes nothing.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.utils import timezone

from memory.models import Organization, Pair, Student, Subject
from tutorbrain.block.build import memory_block_build
from tutorbrain.block.format import BudgetTooSmall

# Who may preview: staff who may read the episode log (the page shows its content).
PREVIEW_PERMISSION = "memory.view_episode"


class BlockPreviewForm(forms.Form):
    organization = forms.ModelChoiceField(queryset=Organization.objects.order_by("name"))
    student = forms.CharField(
        max_length=200, help_text="the chat service's id of the student, or their display name"
    )
    subject = forms.CharField(
        max_length=200, help_text="the chat service's id of the subject, or its name"
    )
    message = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        help_text="empty: recency mode",
    )
    budget = forms.IntegerField(
        min_value=1,
        required=False,
        initial=settings.TUTORBRAIN_DEFAULT_TOKEN_BUDGET,
        help_text=f"tokens; empty: {settings.TUTORBRAIN_DEFAULT_TOKEN_BUDGET}",
    )
    now = forms.DateTimeField(required=False, help_text="default: now (UTC)")

    def clean_message(self):
        message = self.cleaned_data["message"] or ""
        limit = settings.TUTORBRAIN_MAX_MESSAGE_CHARS
        if len(message) > limit:
            raise forms.ValidationError(f"must be at most {limit} characters")
        return message


def _resolve(model, organization, typed: str, name_field: str) -> tuple[str, str]:
    """The external id staff meant, and a note when it was found by its display name.

    The chat service names students and subjects by its own ids; staff see display names
    in the admin and may type those. An exact id wins; else one exact (case-insensitive)
    name match; else the text is used as typed and the page says why the block is empty.
    """
    typed = typed.strip()
    if model.objects.filter(organization=organization, external_id=typed).exists():
        return typed, ""
    matches = list(
        model.objects.filter(organization=organization, **{f"{name_field}__iexact": typed})
        .order_by("external_id")
        .values_list("external_id", flat=True)[:2]
    )
    what = model._meta.verbose_name
    if len(matches) == 1:
        return matches[0], f"“{typed}” is the name of {what} “{matches[0]}”: that id was used."
    if len(matches) > 1:
        return typed, f"Several of this organization's {what}s are called “{typed}”: type the id."
    return typed, ""


def why_empty(*, organization, student_id: str, subject_id: str) -> str:
    """Why a block has no record: which of student, subject, or their pair is unknown."""
    student = Student.objects.filter(organization=organization, external_id=student_id).first()
    subject = Subject.objects.filter(organization=organization, external_id=subject_id).first()
    if student is None and subject is None:
        return f"{organization.name} has no student “{student_id}” and no subject “{subject_id}”."
    if student is None:
        return f"{organization.name} has no student with the id “{student_id}”."
    if subject is None:
        return f"{organization.name} has no subject with the id “{subject_id}”."
    if not Pair.objects.filter(student=student, subject=subject).exists():
        return f"{student} has no record in {subject} yet."
    return ""


def block_preview(request):
    if not request.user.has_perm(PREVIEW_PERMISSION):
        raise PermissionDenied
    form = BlockPreviewForm(request.GET or None)
    result = None
    notes: list[str] = []
    empty_reason = ""
    if form.is_valid():
        data = form.cleaned_data
        organization = data["organization"]
        student_id, note = _resolve(Student, organization, data["student"], "display_name")
        notes += [note] if note else []
        subject_id, note = _resolve(Subject, organization, data["subject"], "name")
        notes += [note] if note else []
        try:
            result = memory_block_build(
                organization=organization,
                student_external_id=student_id,
                subject_external_id=subject_id,
                message=data["message"],
                now=data["now"] or timezone.now(),
                budget=data["budget"] or settings.TUTORBRAIN_DEFAULT_TOKEN_BUDGET,
            )
        except BudgetTooSmall as error:
            form.add_error("budget", str(error))
        else:
            if not result.known_pair:
                empty_reason = why_empty(
                    organization=organization, student_id=student_id, subject_id=subject_id
                )
    context = {
        **admin.site.each_context(request),
        "title": "Memory block preview",
        "form": form,
        "result": result,
        "notes": notes,
        "empty_reason": empty_reason,
    }
    return TemplateResponse(request, "admin/tutorbrain/block_preview.html", context)
