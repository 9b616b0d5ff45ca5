"""POST /api/v1/memory-block/ — the chat service's one call per turn (R-5)."""

from __future__ import annotations

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.errors import InvalidInput
from tutorbrain.api.auth import organization_of
from tutorbrain.block.build import memory_block_build, message_embed
from tutorbrain.block.deadline import run_with_deadline
from tutorbrain.block.format import BudgetTooSmall

EXAMPLE_BLOCK = """===== YOUR MEMORY OF THIS STUDENT AND SUBJECT =====
SUBJECT MAP (16 concepts; the files explain 79% of it, this is about the material, NOT the student's mastery):
- Osmosis: water crossing a membrane towards more solute (builds on: Cell membrane)
WHAT YOU CURRENTLY BELIEVE ABOUT THIS STUDENT (from their checks; confidence 0–1):
- struggles with Osmosis (0.64)
EARLIER WORK WITH THIS STUDENT (oldest first):
- 14 Mar · check: Check on osmosis: wrong
- 2 Sep · you were asked: What is osmosis? (and 2 more times like it)
HOW TO USE THIS: it is your own memory of past work with this student, not their material. Cite an earlier episode by its date; never claim past work that is not listed here. Confidence figures are a ranking, not a probability: fewer than 5 checks with a predicted mastery are on record.
===== END OF MEMORY ====="""


class RecalledSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    occurred_at = serializers.DateTimeField()
    kind = serializers.CharField()
    summary = serializers.CharField()
    verification = serializers.ChoiceField(choices=["holds", "changed", "unverifiable"])
    repeats = serializers.IntegerField()


class WindowSerializer(serializers.Serializer):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    label = serializers.CharField()
    phrase = serializers.CharField()


class PlacedPartSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["memory_block", "bridge", "assessment"])
    text = serializers.CharField()


class PlacedSerializer(serializers.Serializer):
    parts = serializers.ListField(child=serializers.DictField())
    assessment_dropped = serializers.BooleanField()
    text = serializers.CharField()


class MemoryBlockView(APIView):
    """The memory block for one chat turn: ranked recall under a token budget and a deadline."""

    class InputSerializer(serializers.Serializer):
        student = serializers.CharField(max_length=200, help_text="the student's external id")
        subject = serializers.CharField(max_length=200, help_text="the subject's external id")
        message = serializers.CharField(
            required=False,
            allow_blank=True,
            trim_whitespace=False,
            default="",
            help_text="the student's message; missing or empty: recency mode",
        )
        now = serializers.DateTimeField(
            required=False, help_text="the turn's time (ISO 8601); default: server time"
        )
        budget = serializers.IntegerField(
            required=False, min_value=1, help_text="token budget of the block"
        )
        legacy_assessment = serializers.CharField(
            required=False,
            allow_blank=True,
            trim_whitespace=False,
            help_text="the chat service's legacy assessment section, to be placed (R-5.9)",
        )

    class OutputSerializer(serializers.Serializer):
        block = serializers.CharField(allow_null=True)
        mode = serializers.ChoiceField(choices=["ordinary", "history"], allow_null=True)
        recalled = RecalledSerializer(many=True)
        time_window = WindowSerializer(allow_null=True)
        tokens = serializers.IntegerField()
        budget = serializers.IntegerField()
        build_ms = serializers.FloatField()
        embed_ms = serializers.FloatField()
        dropped = serializers.BooleanField()
        placed = PlacedSerializer(allow_null=True, required=False)

    @extend_schema(
        request=InputSerializer,
        responses={200: OutputSerializer},
        summary="Build the memory block for one chat turn",
        description=(
            "Ranked recall from the student's whole history (four candidate pools, "
            "relevance before recency, repeats collapsed, time windows as filters), "
            "current beliefs and the subject map, under a token budget and a hard "
            "deadline. No generative model is called; the only model call is one "
            "embedding of the message. Unknown student or subject: an honest empty block "
            "(nothing is created). Past the deadline: `dropped: true` and no block."
        ),
        examples=[
            OpenApiExample(
                "A turn",
                request_only=True,
                value={
                    "student": "s-123",
                    "subject": "biology-101",
                    "message": "Why does my cell burst in pure water?",
                    "now": "2026-09-18T10:00:00Z",
                    "budget": 900,
                },
            ),
            OpenApiExample(
                "With the legacy assessment section",
                request_only=True,
                value={
                    "student": "s-123",
                    "subject": "biology-101",
                    "message": "What did I get wrong so far?",
                    "budget": 900,
                    "legacy_assessment": "ASSESSMENT:\nNO QUIZ ATTEMPTS recorded",
                },
            ),
            OpenApiExample(
                "The block",
                response_only=True,
                value={
                    "block": EXAMPLE_BLOCK,
                    "mode": "ordinary",
                    "recalled": [
                        {
                            "id": 812,
                            "occurred_at": "2026-03-14T09:12:00Z",
                            "kind": "check",
                            "summary": "Check on osmosis: wrong",
                            "verification": "unverifiable",
                            "repeats": 0,
                        }
                    ],
                    "time_window": None,
                    "tokens": 212,
                    "budget": 900,
                    "build_ms": 9.8,
                    "embed_ms": 2.1,
                    "dropped": False,
                    "placed": None,
                },
            ),
            OpenApiExample(
                "Past the deadline",
                response_only=True,
                value={
                    "block": None,
                    "mode": None,
                    "recalled": [],
                    "time_window": None,
                    "tokens": 0,
                    "budget": 900,
                    "build_ms": 2500.4,
                    "embed_ms": 0.0,
                    "dropped": True,
                    "placed": None,
                },
            ),
        ],
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        message = data.get("message") or ""
        limit = settings.TUTORBRAIN_MAX_MESSAGE_CHARS
        if len(message) > limit:
            raise InvalidInput("message", f"must be at most {limit} characters")
        budget = data.get("budget") or settings.TUTORBRAIN_DEFAULT_TOKEN_BUDGET
        now = data.get("now") or timezone.now()
        organization = organization_of(request)
        legacy = data.get("legacy_assessment")

        def build(cancelled):
            vector = None
            embed_ms = 0.0
            if message.strip():
                import time

                started = time.perf_counter()
                vector = message_embed(message)
                embed_ms = (time.perf_counter() - started) * 1000
            result = memory_block_build(
                organization=organization,
                student_external_id=data["student"],
                subject_external_id=data["subject"],
                message=message,
                now=now,
                budget=budget,
                legacy_assessment=legacy,
                vector=vector,
                cancelled=cancelled,
            )
            result.embed_ms = round(embed_ms, 2)
            return result

        try:
            outcome = run_with_deadline(build, deadline=settings.TUTORBRAIN_BLOCK_DEADLINE_SECONDS)
        except BudgetTooSmall as exc:
            raise InvalidInput("budget", str(exc)) from exc
        if outcome.dropped:
            return Response(
                self.OutputSerializer(
                    {
                        "block": None,
                        "mode": None,
                        "recalled": [],
                        "time_window": None,
                        "tokens": 0,
                        "budget": budget,
                        "build_ms": round(outcome.elapsed_ms, 2),
                        "embed_ms": 0.0,
                        "dropped": True,
                        "placed": (
                            {
                                "parts": [{"role": "assessment", "text": legacy}],
                                "assessment_dropped": False,
                                "text": legacy,
                            }
                            if legacy
                            else None
                        ),
                    }
                ).data
            )
        result = outcome.result
        body = {
            "block": result.text,
            "mode": result.mode,
            "recalled": [r.as_dict() for r in result.recalled],
            "time_window": result.window.as_dict() if result.window else None,
            "tokens": result.tokens,
            "budget": result.budget,
            "build_ms": result.build_ms,
            "embed_ms": result.embed_ms,
            "dropped": False,
            "placed": result.placed,
        }
        return Response(self.OutputSerializer(body).data)
