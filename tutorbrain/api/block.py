"""POST /api/v1/memory-block/ — the chat service's one call per turn (SPEC R-5)."""

from __future__ import annotations

import time

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.errors import InvalidInput
from memory.models import Episode
from tutorbrain.api.auth import DeadlinePassed, organization_of
from tutorbrain.api.fields import (
    AwareDateTimeField,
    StrictCharField,
    StrictIntegerField,
    StrictSerializer,
)
from tutorbrain.api.schema import error_responses
from tutorbrain.block.build import memory_block_build, message_embed
from tutorbrain.block.deadline import run_with_deadline
from tutorbrain.block.format import BudgetTooSmall

# The largest token budget a request may ask for: far above any prompt's share for
# memory, and a bound on the work one request can ask for.
MAX_TOKEN_BUDGET = 20_000

EXAMPLE_BLOCK = """===== YOUR MEMORY OF THIS STUDENT AND SUBJECT =====
SUBJECT MAP (16 concepts; readiness of the material 79%, from its files, checks and teaching; NOT the student's mastery):
- Osmosis: water crossing a membrane towards more solute (builds on: Cell membrane)
WHAT YOU CURRENTLY BELIEVE ABOUT THIS STUDENT (from their checks; confidence 0–1):
- struggles with Osmosis (0.64)
EARLIER WORK WITH THIS STUDENT (oldest first):
- 14 Mar · check: Check on osmosis: wrong
- 2 Sep · student: What is osmosis? (and 2 more times like it)
HOW TO USE THIS: it is your own memory of past work with this student, not their material. Cite an earlier episode by its date; never claim past work that is not listed here. Confidence figures are a ranking, not a probability: fewer than 5 checks with a predicted mastery are on record.
===== END OF MEMORY ====="""


@extend_schema_serializer(component_name="RecalledEpisode")
class RecalledSerializer(serializers.Serializer):
    id = serializers.IntegerField(
        help_text="The episode's id: send it back in the answer's `recalled_ids`."
    )
    occurred_at = serializers.DateTimeField(help_text="When it happened.")
    kind = serializers.ChoiceField(choices=Episode.Kind.values, help_text="What happened.")
    summary = serializers.CharField(help_text="Its one-line summary.")
    verification = serializers.ChoiceField(
        choices=["holds", "changed", "unverifiable"],
        help_text=(
            "For a cited answer: whether the cited pages still say it (holds), changed "
            "since, or cannot be checked (no citation, file gone)."
        ),
    )
    repeats = serializers.IntegerField(
        help_text="How many other episodes said the same (collapsed into this one)."
    )


@extend_schema_serializer(component_name="TimeWindow")
class WindowSerializer(serializers.Serializer):
    start = serializers.DateTimeField(help_text="Start of the window the message named (UTC).")
    end = serializers.DateTimeField(help_text="End of the window, exclusive (UTC).")
    label = serializers.CharField(help_text="The window in words, e.g. 'July 2026'.")
    phrase = serializers.CharField(help_text="The words of the message that named it.")


@extend_schema_serializer(component_name="PlacedPart")
class PlacedPartSerializer(serializers.Serializer):
    role = serializers.ChoiceField(
        choices=["memory_block", "bridge", "assessment"], help_text="What this part is."
    )
    text = serializers.CharField(help_text="Its text.")


@extend_schema_serializer(component_name="PlacedPrompt")
class PlacedSerializer(serializers.Serializer):
    parts = PlacedPartSerializer(many=True, help_text="The parts, in prompt order.")
    assessment_dropped = serializers.BooleanField(
        help_text="The legacy assessment said nothing is recorded, and was left out."
    )
    text = serializers.CharField(help_text="The parts joined: what goes into the prompt.")


class MemoryBlockView(APIView):
    """The memory block for one chat turn: ranked recall under a token budget and a deadline."""

    @extend_schema_serializer(component_name="MemoryBlockInput")
    class InputSerializer(StrictSerializer):
        student = StrictCharField(max_length=200, help_text="The student's id in the chat service.")
        subject = StrictCharField(max_length=200, help_text="The subject's id in the chat service.")
        message = StrictCharField(
            required=False,
            allow_blank=True,
            trim_whitespace=False,
            default="",
            help_text=(
                "The student's message of this turn; missing or empty: recency mode (the "
                "latest work). At most TUTORBRAIN_MAX_MESSAGE_CHARS characters (4,000)."
            ),
        )
        now = AwareDateTimeField(
            required=False,
            help_text=(
                "The turn's time, ISO 8601 with a zone (e.g. 2026-09-18T10:00:00Z); "
                "default: the server's clock. Nothing after it is recalled."
            ),
        )
        budget = StrictIntegerField(
            required=False,
            min_value=1,
            max_value=MAX_TOKEN_BUDGET,
            help_text=(
                f"Token budget of the block, 1-{MAX_TOKEN_BUDGET}; default "
                "TUTORBRAIN_DEFAULT_TOKEN_BUDGET (900). Too small for the block's frame: 400."
            ),
        )
        legacy_assessment = StrictCharField(
            required=False,
            allow_blank=True,
            trim_whitespace=False,
            help_text=(
                "The chat service's own assessment section, placed after the block with a "
                "bridge note (or dropped when it says that nothing is recorded)."
            ),
        )

    @extend_schema_serializer(component_name="MemoryBlockOutput")
    class OutputSerializer(serializers.Serializer):
        block = serializers.CharField(
            allow_null=True, help_text="The block to put into the prompt; null when dropped."
        )
        mode = serializers.ChoiceField(
            choices=["ordinary", "history"],
            allow_null=True,
            help_text="history: the message asks about past work; null when dropped.",
        )
        recalled = RecalledSerializer(
            many=True, help_text="The episodes the block shows, to be cited by id."
        )
        time_window = WindowSerializer(
            allow_null=True, help_text="The time window the message named, if any."
        )
        tokens = serializers.IntegerField(help_text="Tokens the block takes.")
        budget = serializers.IntegerField(help_text="The token budget it was built for.")
        build_ms = serializers.FloatField(
            help_text="Milliseconds from the request's arrival to the block (or the drop)."
        )
        embed_ms = serializers.FloatField(help_text="Of which: embedding the message.")
        dropped = serializers.BooleanField(
            help_text="true: the deadline passed; no block this turn (carry on without one)."
        )
        student_known = serializers.BooleanField(
            allow_null=True,
            help_text=(
                "Whether this organization has the student at all (false: an honest empty "
                "block); null when dropped."
            ),
        )
        subject_known = serializers.BooleanField(
            allow_null=True,
            help_text=(
                "Whether this organization has the subject at all (false: check the "
                "subject id for a typo); null when dropped."
            ),
        )
        placed = PlacedSerializer(
            allow_null=True,
            required=False,
            help_text="With `legacy_assessment`: the block and that section, placed.",
        )

    def deadline_seconds(self) -> float:
        """The hard limit of one turn, counted from the request's arrival (read by the
        API-key authentication, which runs first)."""
        return settings.TUTORBRAIN_BLOCK_DEADLINE_SECONDS

    def handle_exception(self, exc):
        if isinstance(exc, DeadlinePassed):
            # The key lookup itself was late (a locked or overloaded key table): the same
            # answer as a late build, so the chat service's turn is never held up.
            return Response(self._dropped_body(self.request, legacy=None, budget=None))
        return super().handle_exception(exc)

    def _dropped_body(self, request, *, legacy: str | None, budget: int | None) -> dict:
        arrived = getattr(request._request, "tutorbrain_arrived", None)
        elapsed = (time.monotonic() - arrived) * 1000 if arrived is not None else 0.0
        return self.OutputSerializer(
            {
                "block": None,
                "mode": None,
                "recalled": [],
                "time_window": None,
                "tokens": 0,
                "budget": budget or settings.TUTORBRAIN_DEFAULT_TOKEN_BUDGET,
                "build_ms": round(elapsed, 2),
                "embed_ms": 0.0,
                "dropped": True,
                "student_known": None,
                "subject_known": None,
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

    @extend_schema(
        request=InputSerializer,
        responses={200: OutputSerializer, **error_responses()},
        summary="Build the memory block for one chat turn",
        description=(
            "Ranked recall from the student's whole history (four candidate pools, "
            "relevance before recency, repeats collapsed, time windows as filters), "
            "current beliefs and the subject map, under a token budget and a hard "
            "deadline. No generative model is called; the only model call is one "
            "embedding of the message. Unknown student or subject: an honest empty block "
            "(nothing is created; `student_known` / `subject_known` say which is missing). "
            "Past the deadline, counted from the request's arrival: `dropped: true` and "
            "no block. Unknown fields are refused."
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
                    "student_known": True,
                    "subject_known": True,
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
                    "student_known": None,
                    "subject_known": None,
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
            outcome = run_with_deadline(
                build,
                deadline=self.deadline_seconds(),
                started=getattr(request._request, "tutorbrain_arrived", None),
            )
        except BudgetTooSmall as exc:
            raise InvalidInput("budget", str(exc)) from exc
        if outcome.dropped:
            return Response(self._dropped_body(request, legacy=legacy, budget=budget))
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
            "student_known": result.student_known,
            "subject_known": result.subject_known,
            "placed": result.placed,
        }
        return Response(self.OutputSerializer(body).data)
