from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.selectors import pair_get, pair_last_verification
from tutorbrain.api.auth import organization_of


class ChainStatusView(APIView):
    """The state of one student-subject episode chain: its head and last verification."""

    class VerificationSerializer(serializers.Serializer):
        intact = serializers.BooleanField()
        length = serializers.IntegerField()
        broken_seq = serializers.IntegerField(allow_null=True)
        reason = serializers.CharField()
        checked_at = serializers.DateTimeField()

    class OutputSerializer(serializers.Serializer):
        student = serializers.CharField()
        subject = serializers.CharField()
        length = serializers.IntegerField()
        head_hash = serializers.CharField()
        last_episode_at = serializers.DateTimeField(allow_null=True)
        last_verification = serializers.DictField(allow_null=True)

    @extend_schema(
        responses={200: OutputSerializer}, summary="Chain status of a student-subject pair"
    )
    def get(self, request, student: str, subject: str):
        pair = pair_get(
            organization=organization_of(request),
            student_external_id=student,
            subject_external_id=subject,
        )
        verification = pair_last_verification(pair=pair)
        body = {
            "student": pair.student.external_id,
            "subject": pair.subject.external_id,
            "length": pair.head_seq,
            "head_hash": pair.head_hash,
            "last_episode_at": pair.last_episode_at,
            "last_verification": (
                self.VerificationSerializer(verification).data if verification is not None else None
            ),
        }
        return Response(self.OutputSerializer(body).data)
