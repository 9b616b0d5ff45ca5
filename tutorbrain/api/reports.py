"""GET /api/v1/reports/<student>/<subject>/ — the honest report of one student-subject
(R-4.6): checks on record and how many could be linked, current beliefs, what changed and
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


@extend_schema_serializer(component_name="PairReportChecks")
class _ChecksSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    linked = serializers.IntegerField()
    unlinked = serializers.IntegerField()
    unlinked_reading_like_utterances = serializers.IntegerField()
    sentence = serializers.CharField(help_text="e.g. '32 checks are on record, but none …'")


@extend_schema_serializer(component_name="PairReportBelief")
class _BeliefSerializer(serializers.Serializer):
    concept = serializers.CharField()
    claim = serializers.ChoiceField(choices=["understands", "struggles"])
    confidence = serializers.FloatField(
        help_text="p_right for 'understands', 1 − p_right for 'struggles'"
    )
    p_right = serializers.FloatField(
        allow_null=True,
        help_text="predicted probability that the student answers the next check on this "
        "concept right (calibrated, R-4.1)",
    )
    needs_confirmation = serializers.BooleanField()
    checks = serializers.IntegerField()
    last_check_at = serializers.DateTimeField(allow_null=True)
    since = serializers.DateTimeField()
    reason = serializers.CharField()


@extend_schema_serializer(component_name="PairReportChange")
class _ChangeSerializer(serializers.Serializer):
    concept = serializers.CharField()
    at = serializers.DateTimeField()
    reason = serializers.ChoiceField(choices=["evidence", "decay", "rederivation", "retirement"])
    before_claim = serializers.CharField()
    before_confidence = serializers.FloatField()
    before_p_right = serializers.FloatField(allow_null=True)
    after_claim = serializers.CharField()
    after_confidence = serializers.FloatField()
    after_p_right = serializers.FloatField(allow_null=True)
    new_evidence_episode_ids = serializers.ListField(child=serializers.IntegerField())
    sentence = serializers.CharField()


@extend_schema_serializer(component_name="PairReportQuestion")
class _QuestionSerializer(serializers.Serializer):
    answer_episode_id = serializers.IntegerField()
    question = serializers.CharField()
    asked_at = serializers.DateTimeField()


class PairReportView(APIView):
    """The report of one student-subject of the key's organization (404 for any other)."""

    @extend_schema_serializer(component_name="PairReport")
    class OutputSerializer(serializers.Serializer):
        student = serializers.CharField()
        subject = serializers.CharField()
        checks = _ChecksSerializer()
        beliefs = _BeliefSerializer(many=True)
        beliefs_sentence = serializers.CharField()
        changes = _ChangeSerializer(many=True)
        changes_sentence = serializers.CharField()
        unanswered_questions = _QuestionSerializer(many=True)
        unanswered_sentence = serializers.CharField()
        notes = serializers.ListField(child=serializers.CharField())
        last_rederivation_at = serializers.DateTimeField(allow_null=True)

    @extend_schema(responses={200: OutputSerializer}, summary="Report of a student-subject (R-4.6)")
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
