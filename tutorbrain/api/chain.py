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
from tutorbrain.api.schema import error_responses


@extend_schema_serializer(component_name="ChainVerification")
class ChainVerificationSerializer(serializers.Serializer):
    intact = serializers.BooleanField(help_text="Whether every hash recomputed matched.")
    length = serializers.IntegerField(help_text="Episodes verified.")
    broken_seq = serializers.IntegerField(
        allow_null=True, help_text="The first episode whose hash did not match, if any."
    )
    failure = serializers.CharField(help_text="The kind of break (empty when intact).")
    reason = serializers.CharField(help_text="The break in words (empty when intact).")
    checkpoint_created_at = serializers.DateTimeField(
        allow_null=True, help_text="The signed checkpoint it was checked against, if any."
    )
    checked_at = serializers.DateTimeField(help_text="When it was verified.")


class ChainStatusView(APIView):
    """The state of one student-subject episode chain: its head and last verification.

    `?verify=true` recomputes the chain now (streamed; seconds on a very long chain)
    and records the result before answering.
    """

    @extend_schema_serializer(component_name="ChainStatusQuery")
    class QuerySerializer(serializers.Serializer):
        verify = serializers.BooleanField(
            required=False, default=False, help_text="Recompute the chain now and record it."
        )

    VerificationSerializer = ChainVerificationSerializer

    @extend_schema_serializer(component_name="ChainStatusOutput")
    class OutputSerializer(serializers.Serializer):
        student = serializers.CharField(help_text="The student's id in the chat service.")
        subject = serializers.CharField(help_text="The subject's id in the chat service.")
        length = serializers.IntegerField(help_text="Episodes in the chain.")
        head_seq = serializers.IntegerField(help_text="The last episode's position.")
        head_hash = serializers.CharField(help_text="The last episode's hash.")
        last_episode_at = serializers.DateTimeField(
            allow_null=True, help_text="When the last episode happened."
        )
        status = serializers.ChoiceField(
            choices=["intact", "broken", "never verified"],
            help_text="The last verification's result.",
        )
        last_verification = ChainVerificationSerializer(
            allow_null=True, help_text="The last verification, if any."
        )

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "verify", OpenApiTypes.BOOL, description="recompute the chain now and record it"
            )
        ],
        responses={200: OutputSerializer, **error_responses()},
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
