"""Staff page: type a message for a student-subject and see the block it would get (R-5).

Each recalled episode is listed with its score parts (weighted relevance, salience and
recency, the raw similarity, matched words, concept match) and the pools it came from,
so staff can see *why* it was chosen. Reads only: building a block writes nothing.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.utils import timezone

from memory.models import Organization
from tutorbrain.block.build import memory_block_build
from tutorbrain.block.format import BudgetTooSmall

# Who may preview: staff who may read the episode log (the page shows its content).
PREVIEW_PERMISSION = "memory.view_episode"


class BlockPreviewForm(forms.Form):
    organization = forms.ModelChoiceField(queryset=Organization.objects.order_by("name"))
    student = forms.CharField(max_length=200, help_text="the student's external id")
    subject = forms.CharField(max_length=200, help_text="the subject's external id")
    message = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        help_text="empty: recency mode",
    )
    budget = forms.IntegerField(min_value=1, initial=settings.TUTORBRAIN_DEFAULT_TOKEN_BUDGET)
    now = forms.DateTimeField(required=False, help_text="default: now (UTC)")

    def clean_message(self):
        message = self.cleaned_data["message"] or ""
        limit = settings.TUTORBRAIN_MAX_MESSAGE_CHARS
        if len(message) > limit:
            raise forms.ValidationError(f"must be at most {limit} characters")
        return message


def block_preview(request):
    if not request.user.has_perm(PREVIEW_PERMISSION):
        raise PermissionDenied
    form = BlockPreviewForm(request.GET or None)
    result = None
    if form.is_valid():
        data = form.cleaned_data
        try:
            result = memory_block_build(
                organization=data["organization"],
                student_external_id=data["student"],
                subject_external_id=data["subject"],
                message=data["message"],
                now=data["now"] or timezone.now(),
                budget=data["budget"],
            )
        except BudgetTooSmall as error:
            form.add_error("budget", str(error))
    context = {
        **admin.site.each_context(request),
        "title": "Memory block preview",
        "form": form,
        "result": result,
    }
    return TemplateResponse(request, "admin/tutorbrain/block_preview.html", context)
