from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from tutorbrain.health import health_report


class HealthView(APIView):
    """Database, pgvector, Redis and embedder status: 200 when all answer, else 503."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    class OutputSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=["ok", "failing"])
        failing = serializers.ListField(child=serializers.CharField())
        parts = serializers.DictField()

    @extend_schema(
        responses={200: OutputSerializer, 503: OutputSerializer},
        auth=[],
        summary="Health of database, pgvector, Redis and embedder",
    )
    def get(self, request):
        healthy, parts = health_report()
        failing = [name for name, part in parts.items() if not part["ok"]]
        body = {"status": "ok" if healthy else "failing", "failing": failing, "parts": parts}
        code = status.HTTP_200_OK if healthy else status.HTTP_503_SERVICE_UNAVAILABLE
        return Response(self.OutputSerializer(body).data, status=code)
