from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.models import ChainVerification
from memory.selectors import pair_get, pair_last_verification
from memory.services import chain_verify
from tutorbrain.api.auth import organization_of


@extend_schema_serializer(component_name="ChainVerification")
class ChainVerificationSerializer(serializers.Serializer):
    intact = serializers.BooleanField()
    length = serializers.IntegerField()
    broken_seq = serializers.IntegerField(allow_null=True)
    failure = serializers.CharField()
    reason = serializers.CharField()
    checkpoint_created_at = serializers.DateTimeField(allow_null=True)
    checked_at = serializers.DateTimeField()


class ChainStatusView(APIView):
    """The state of one student-subject episode chain: its head and last verification.

    `?verify=true` recomputes the chain now (streamed; seconds on a very long chain)
    and records the result before answering.
    """

    @extend_schema_serializer(component_name="ChainStatusQuery")
    class QuerySerializer(serializers.Serializer):
        verify = serializers.BooleanField(required=False, default=False)

    VerificationSerializer = ChainVerificationSerializer

    @extend_schema_serializer(component_name="ChainStatusOutput")
    class OutputSerializer(serializers.Serializer):
        student = serializers.CharField()
        subject = serializers.CharField()
        length = serializers.IntegerField()
        head_seq = serializers.IntegerField()
        head_hash = serializers.CharField()
        last_episode_at = serializers.DateTimeField(allow_null=True)
        status = serializers.ChoiceField(choices=["intact", "broken", "never verified"])
        last_verification = ChainVerificationSerializer(allow_null=True)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "verify", OpenApiTypes.BOOL, description="recompute the chain now and record it"
            )
        ],
        responses={200: OutputSerializer},
        summary="Chain status of a student-subject pair",
    )
    def get(self, request, student: str, subject: str):
        query = self.QuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        pair = pair_get(
            organization=organization_of(request),
            student_external_id=student,
            subject_external_id=subject,
        )
        verification: ChainVerification | None
        if query.validated_data["verify"]:
            verification = chain_verify(pair=pair)
            pair.refresh_from_db(fields=["head_seq", "head_hash", "last_episode_at"])
        else:
            verification = pair_last_verification(pair=pair)
        if verification is None:
            state = "never verified"
        else:
            state = "intact" if verification.intact else "broken"
        body = {
            "student": pair.student.external_id,
            "subject": pair.subject.external_id,
            "length": pair.head_seq,
            "head_seq": pair.head_seq,
            "head_hash": pair.head_hash,
            "last_episode_at": pair.last_episode_at,
            "status": state,
            "last_verification": verification,
        }
        return Response(self.OutputSerializer(body).data)
