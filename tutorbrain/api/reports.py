"""GET /api/v1/reports/<student>/<subject>/ — the honest report of one student-subject
(SPEC R-4.6): checks on record and how many could be linked, current beliefs, what changed and
why, and the questions the files could not answer. Empty states are stated, not invented."""

from __future__ import annotations

from dataclasses import asdict

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from beliefs.selectors import pair_report
from memory.selectors import pair_get
from tutorbrain.api.auth import organization_of
from tutorbrain.api.schema import error_responses


@extend_schema_serializer(component_name="PairReportChecks")
class _ChecksSerializer(serializers.Serializer):
    total = serializers.IntegerField(help_text="Checks on record.")
    linked = serializers.IntegerField(help_text="Checks linked to a concept of the map.")
    unlinked = serializers.IntegerField(help_text="Checks no concept could be linked to.")
    unlinked_reading_like_utterances = serializers.IntegerField(
        help_text="Of the unlinked: those whose topic reads like a chat utterance."
    )
    sentence = serializers.CharField(help_text="e.g. '32 checks are on record, but none …'")


@extend_schema_serializer(component_name="PairReportBelief")
class _BeliefSerializer(serializers.Serializer):
    concept = serializers.CharField(help_text="The concept's name.")
    claim = serializers.ChoiceField(
        choices=["understands", "struggles"], help_text="What is believed."
    )
    confidence = serializers.FloatField(
        help_text="p_right for 'understands', 1 − p_right for 'struggles'."
    )
    p_right = serializers.FloatField(
        allow_null=True,
        help_text="Predicted probability that the student answers the next check on this "
        "concept right (calibrated).",
    )
    needs_confirmation = serializers.BooleanField(
        help_text="Too little or too old evidence: confirm with a check."
    )
    checks = serializers.IntegerField(help_text="Checks behind it.")
    last_check_at = serializers.DateTimeField(
        allow_null=True, help_text="When the latest of them happened."
    )
    since = serializers.DateTimeField(help_text="When this belief was formed.")
    reason = serializers.CharField(help_text="Why, in words.")


@extend_schema_serializer(component_name="PairReportChange")
class _ChangeSerializer(serializers.Serializer):
    concept = serializers.CharField(help_text="The concept's name.")
    at = serializers.DateTimeField(help_text="When the belief changed.")
    reason = serializers.ChoiceField(
        choices=["evidence", "decay", "rederivation", "retirement"],
        help_text="What changed it: new checks, time, a re-derivation, or retirement.",
    )
    before_claim = serializers.CharField(help_text="The claim before.")
    before_confidence = serializers.FloatField(help_text="Its confidence before.")
    before_p_right = serializers.FloatField(
        allow_null=True, help_text="Its predicted chance of a right answer before."
    )
    after_claim = serializers.CharField(help_text="The claim after.")
    after_confidence = serializers.FloatField(help_text="Its confidence after.")
    after_p_right = serializers.FloatField(
        allow_null=True, help_text="Its predicted chance of a right answer after."
    )
    new_evidence_episode_ids = serializers.ListField(
        child=serializers.IntegerField(), help_text="The checks that changed it."
    )
    sentence = serializers.CharField(help_text="The change in words.")


@extend_schema_serializer(component_name="PairReportQuestion")
class _QuestionSerializer(serializers.Serializer):
    answer_episode_id = serializers.IntegerField(help_text="The answer that could not cite.")
    question = serializers.CharField(help_text="The question it answered.")
    asked_at = serializers.DateTimeField(help_text="When it was asked.")


class PairReportView(APIView):
    """The report of one student-subject of the key's organization (404 for any other)."""

    @extend_schema_serializer(component_name="PairReport")
    class OutputSerializer(serializers.Serializer):
        student = serializers.CharField(help_text="The student's id in the chat service.")
        subject = serializers.CharField(help_text="The subject's id in the chat service.")
        checks = _ChecksSerializer(help_text="The checks on record.")
        beliefs = _BeliefSerializer(many=True, help_text="Current beliefs.")
        beliefs_sentence = serializers.CharField(help_text="The beliefs in words.")
        changes = _ChangeSerializer(many=True, help_text="What changed, and why.")
        changes_sentence = serializers.CharField(help_text="The changes in words.")
        unanswered_questions = _QuestionSerializer(
            many=True, help_text="Questions the files could not answer."
        )
        unanswered_sentence = serializers.CharField(help_text="Those in words.")
        notes = serializers.ListField(
            child=serializers.CharField(), help_text="What the report cannot say, and why."
        )
        last_rederivation_at = serializers.DateTimeField(
            allow_null=True, help_text="When the beliefs were last re-derived."
        )

    @extend_schema(
        responses={200: OutputSerializer, **error_responses()},
        summary="Report of a student-subject",
    )
    def get(self, request, student: str, subject: str):
        pair = pair_get(
            organization=organization_of(request),
            student_external_id=student,
            subject_external_id=subject,
        )
        report = pair_report(pair=pair)
        body = {
            "student": report.student,
            "subject": report.subject,
            "checks": {
                "total": report.checks_total,
                "linked": report.checks_linked,
                "unlinked": report.checks_unlinked,
                "unlinked_reading_like_utterances": report.checks_unlinked_utterances,
                "sentence": report.checks_sentence,
            },
            "beliefs": [asdict(b) for b in report.beliefs],
            "beliefs_sentence": report.beliefs_sentence,
            "changes": [asdict(c) for c in report.changes],
            "changes_sentence": report.changes_sentence,
            "unanswered_questions": [asdict(q) for q in report.unanswered],
            "unanswered_sentence": report.unanswered_sentence,
            "notes": report.notes,
            "last_rederivation_at": report.last_rederivation_at,
        }
        return Response(self.OutputSerializer(body).data)
