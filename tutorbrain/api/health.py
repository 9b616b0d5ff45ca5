"""Health: a public liveness answer that tells nothing, and the detailed readiness
report (parts, versions) for a chat service's key or a logged-in staff member."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import permissions, serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.models import ApiKey
from tutorbrain.api.auth import ApiKeyAuthentication
from tutorbrain.api.schema import error_responses
from tutorbrain.health import health_report


@extend_schema_serializer(component_name="LivenessOutput")
class LivenessOutputSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["ok"], help_text="The process serves requests.")


@extend_schema_serializer(component_name="ReadinessOutput")
class ReadinessOutputSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["ok", "failing"], help_text="ok: every part answers.")
    failing = serializers.ListField(
        child=serializers.CharField(), help_text="Names of the parts that do not answer."
    )
    parts = serializers.DictField(
        help_text="Each part (database, pgvector, replica, redis, cache, embedder): ok, details."
    )


class HealthView(APIView):
    """Liveness: 200 while the process serves requests. No key, no detail, no query."""

    authentication_classes: list = []
    permission_classes = [permissions.AllowAny]
    throttle_classes: list = []

    @extend_schema(
        responses={200: LivenessOutputSerializer, **error_responses(authenticated=False)},
        auth=[],
        summary="Liveness: the server answers",
    )
    def get(self, request):
        return Response({"status": "ok"})


class IsKeyOrStaff(permissions.BasePermission):
    message = "an API key or a staff login is required"

    def has_permission(self, request, view) -> bool:
        if isinstance(request.auth, ApiKey):
            return True
        user = request.user
        return bool(user is not None and user.is_authenticated and user.is_staff)


class ReadinessView(APIView):
    """Database, pgvector, (replica), Redis, cache and embedder: 200 when all answer, else 503."""

    authentication_classes = [ApiKeyAuthentication, SessionAuthentication]
    permission_classes = [IsKeyOrStaff]

    @extend_schema(
        responses={
            200: ReadinessOutputSerializer,
            503: ReadinessOutputSerializer,
            **error_responses(),
        },
        summary="Readiness of every part, with versions (API key or staff login)",
    )
    def get(self, request):
        healthy, parts = health_report()
        failing = [name for name, part in parts.items() if not part["ok"]]
        body = {"status": "ok" if healthy else "failing", "failing": failing, "parts": parts}
        code = status.HTTP_200_OK if healthy else status.HTTP_503_SERVICE_UNAVAILABLE
        return Response(ReadinessOutputSerializer(body).data, status=code)
