"""The episode log over HTTP: append (one event or a batch), list a pair's episodes,
report an answer's stance. Every write goes through memory.services."""

from __future__ import annotations

import base64
import binascii
from datetime import timedelta

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.errors import InvalidInput
from memory.models import AnswerStance, Episode
from memory.rules import CONCEPTS_MAX, OCCURRED_AT_MIN_YEAR, SUMMARY_MAX_CHARS
from memory.selectors import citation_status_for, episode_get, episodes_page, pair_get
from memory.services import EventSpec, answer_stance_report, episode_append_external
from tutorbrain.api.auth import organization_of
from tutorbrain.api.fields import (
    AwareDateTimeField,
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
    StrictSerializer,
)
from tutorbrain.api.schema import error_responses

# A page of the episode list: the default keeps a response small; the maximum bounds
# one request's work on a chain of 100k episodes.
EPISODES_PAGE_DEFAULT = 50
EPISODES_PAGE_MAX = 500
# A clock a little ahead is tolerated; a date far in the future is a client bug.
OCCURRED_AT_MAX_AHEAD = timedelta(days=1)


KINDS_TEXT = ", ".join(Episode.Kind.values)


class EventSerializer(StrictSerializer):
    """One event of a student-subject chain. Shape only; the service checks the rules
    (which fields go with which kind) and names the field it refuses."""

    kind = serializers.ChoiceField(
        choices=Episode.Kind.values,
        error_messages={"invalid_choice": f"must be one of {KINDS_TEXT}"},
        help_text=(
            "What happened: question (the student asked), answer (the tutor answered), "
            "check (a targeted check of understanding, with a verdict), quiz, file (a file "
            "arrived), taught (a teacher's note), consolidation (the nightly day summary)."
        ),
    )
    summary = StrictCharField(
        allow_blank=True, help_text=f"One line, at most {SUMMARY_MAX_CHARS} characters; required."
    )
    text = StrictCharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="The full text (at most TUTORBRAIN_MAX_TEXT_CHARS characters, 20,000).",
    )
    concepts = serializers.ListField(
        child=StrictCharField(allow_blank=True),
        required=False,
        default=list,
        help_text=f"Names of the concepts it touched (at most {CONCEPTS_MAX}).",
    )
    occurred_at = AwareDateTimeField(
        required=False,
        allow_null=True,
        default=None,
        min_year=OCCURRED_AT_MIN_YEAR,
        help_text=(
            "When it happened, ISO 8601 with a zone (e.g. 2026-07-12T10:00:00Z); default: "
            f"now. From {OCCURRED_AT_MIN_YEAR}, at most a day ahead of the server's clock."
        ),
    )
    topic = StrictCharField(
        required=False, allow_blank=True, default="", help_text="A short topic label."
    )
    verdict = serializers.ChoiceField(
        choices=[*Episode.Verdict.values, ""],
        error_messages={"invalid_choice": "must be one of right, wrong, partial"},
        required=False,
        allow_blank=True,
        default="",
        help_text="The result of a check (required) or a quiz: right, wrong or partial.",
    )
    assessment = StrictCharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="A check's or quiz's assessment text, as the chat service wrote it.",
    )
    predicted_mastery = StrictFloatField(
        required=False,
        allow_null=True,
        default=None,
        min_value=0.0,
        max_value=1.0,
        help_text=(
            "A check only: the chat service's predicted probability (0-1) that the "
            "student gets it right, for calibration."
        ),
    )
    score = StrictFloatField(
        required=False,
        allow_null=True,
        default=None,
        min_value=0.0,
        max_value=1.0,
        help_text="A check's or quiz's score, 0-1.",
    )
    citations = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        default=list,
        help_text=(
            'An answer only: the files it cites, [{"file_id": 3, "pages": [2]}] or '
            '[{"file": "cells.pdf"}] (the current file of that name in the subject).'
        ),
    )
    recalled_ids = serializers.ListField(
        child=StrictIntegerField(),
        required=False,
        default=list,
        help_text=(
            "An answer only: ids of the episodes of this chain that the memory block "
            "recalled for it (the `recalled[].id` of the block)."
        ),
    )
    idempotency_key = StrictCharField(
        required=False,
        allow_blank=True,
        default="",
        help_text=(
            "The sender's unique key of the event in this chain: sent again, nothing is "
            "appended and the existing episode comes back with `appended: false`."
        ),
    )
    extra = serializers.DictField(
        required=False,
        default=dict,
        help_text="Free-form JSON kept with the episode (at most 20,000 characters as JSON).",
    )

    def validate_occurred_at(self, value):
        if value is not None and value > timezone.now() + OCCURRED_AT_MAX_AHEAD:
            raise serializers.ValidationError(
                "must not be more than a day ahead of the server's clock"
            )
        return value


class PairFieldsSerializer(StrictSerializer):
    student = StrictCharField(
        help_text="The chat service's student id; the student is created on first use."
    )
    subject = StrictCharField(
        help_text="The chat service's subject id; the subject is created on first use."
    )
    student_timezone = StrictCharField(
        required=False,
        allow_blank=True,
        default="",
        help_text=(
            "The student's IANA time zone, e.g. Europe/Madrid: 'yesterday' and day "
            "summaries are read in it."
        ),
    )


@extend_schema_serializer(component_name="Episode")
class EpisodeOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The episode's id.")
    seq = serializers.IntegerField(help_text="Its position in the chain, from 1.")
    kind = serializers.ChoiceField(choices=Episode.Kind.values, help_text="What happened.")
    summary = serializers.CharField(help_text="One line.")
    text = serializers.CharField(help_text="The full text (may be empty).")
    concepts = serializers.ListField(
        child=serializers.CharField(), help_text="Concepts it touched."
    )
    salience = serializers.FloatField(help_text="Weight fixed by kind and verdict, 0-1.")
    occurred_at = serializers.DateTimeField(help_text="When it happened.")
    recorded_at = serializers.DateTimeField(help_text="When it was appended.")
    topic = serializers.CharField(help_text="Topic label (may be empty).")
    verdict = serializers.ChoiceField(
        choices=[*Episode.Verdict.values, ""], help_text="right, wrong, partial or empty."
    )
    predicted_mastery = serializers.FloatField(
        allow_null=True, help_text="A check's predicted probability of a right answer."
    )
    evidence = serializers.DictField(
        help_text="citations, recalled_ids, assessment, score and the event's extra."
    )
    prev_hash = serializers.CharField(help_text="The previous episode's hash (hex).")
    hash = serializers.CharField(help_text="This episode's chain hash (sha256, hex).")


@extend_schema_serializer(component_name="EpisodeAppended")
class AppendedEpisodeSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The episode's id.")
    seq = serializers.IntegerField(help_text="Its position in the chain.")
    hash = serializers.CharField(help_text="Its chain hash.")
    prev_hash = serializers.CharField(help_text="The previous episode's hash.")
    kind = serializers.ChoiceField(choices=Episode.Kind.values, help_text="What happened.")
    summary = serializers.CharField(help_text="One line.")
    salience = serializers.FloatField(help_text="Weight fixed by kind and verdict, 0-1.")
    occurred_at = serializers.DateTimeField(help_text="When it happened.")
    appended = serializers.BooleanField(
        source="was_appended", help_text="false: an idempotent replay, nothing appended"
    )


APPEND_EXAMPLES = [
    OpenApiExample(
        "A question",
        request_only=True,
        value={
            "student": "s-123",
            "subject": "biology-101",
            "student_timezone": "Europe/Madrid",
            "kind": "question",
            "summary": "Why does a cell burst in pure water?",
            "text": "Why does a red blood cell burst when I put it in pure water?",
            "occurred_at": "2026-09-18T10:00:00Z",
            "idempotency_key": "turn-8812-q",
        },
    ),
    OpenApiExample(
        "An answer citing a file and the recalled episodes",
        request_only=True,
        value={
            "student": "s-123",
            "subject": "biology-101",
            "kind": "answer",
            "summary": "Water enters by osmosis until the membrane bursts",
            "text": "In pure water there is more water outside the cell than inside ...",
            "occurred_at": "2026-09-18T10:00:05Z",
            "citations": [{"file_id": 3, "pages": [2]}, {"file": "cell-biology-notes.md"}],
            "recalled_ids": [812, 845],
            "idempotency_key": "turn-8812-a",
        },
    ),
    OpenApiExample(
        "A check with its verdict and predicted mastery",
        request_only=True,
        value={
            "student": "s-123",
            "subject": "biology-101",
            "kind": "check",
            "summary": "Check on osmosis",
            "topic": "osmosis",
            "concepts": ["Osmosis"],
            "verdict": "wrong",
            "predicted_mastery": 0.62,
            "assessment": "Said water moves towards less solute.",
            "occurred_at": "2026-09-18T10:03:00Z",
            "idempotency_key": "turn-8813-check",
        },
    ),
    OpenApiExample(
        "A batch (one chain, in order, all or nothing)",
        request_only=True,
        value={
            "student": "s-123",
            "subject": "biology-101",
            "events": [
                {"kind": "question", "summary": "What is diffusion?"},
                {"kind": "answer", "summary": "Movement down a concentration gradient"},
            ],
        },
    ),
]


class EpisodeAppendView(APIView):
    """Append one event, or a batch of one student-subject chain's events, in order."""

    @extend_schema_serializer(component_name="EpisodeAppendSingleInput")
    class SingleInputSerializer(PairFieldsSerializer, EventSerializer):
        pass

    @extend_schema_serializer(component_name="EpisodeAppendBatchInput")
    class BatchInputSerializer(PairFieldsSerializer):
        events = EventSerializer(
            many=True,
            allow_empty=False,
            help_text="The events, in order (at most TUTORBRAIN_MAX_BATCH_EVENTS, 1,000).",
        )

    AppendedSerializer = AppendedEpisodeSerializer

    @extend_schema_serializer(component_name="EpisodeAppendOutput")
    class OutputSerializer(serializers.Serializer):
        student = serializers.CharField(help_text="The student's id in the chat service.")
        subject = serializers.CharField(help_text="The subject's id in the chat service.")
        head_seq = serializers.IntegerField(help_text="The chain's last position now.")
        head_hash = serializers.CharField(help_text="The chain's last hash now.")
        episodes = AppendedEpisodeSerializer(many=True, help_text="One per event sent, in order.")

    @extend_schema(
        request=PolymorphicProxySerializer(
            component_name="EpisodeAppendInput",
            serializers=[SingleInputSerializer, BatchInputSerializer],
            resource_type_field_name=None,
        ),
        responses={
            201: OpenApiResponse(OutputSerializer, description="Something was appended."),
            200: OpenApiResponse(
                OutputSerializer, description="Every event was an idempotent replay."
            ),
            **error_responses(),
        },
        examples=APPEND_EXAMPLES,
        summary="Append an event (or a batch) to a student-subject chain",
        description=(
            "One event, or `{student, subject, events: [...]}` appended in order in one "
            "transaction (all or nothing). Student, subject and their chain are created on "
            "first use. An `idempotency_key` already in the chain appends nothing: the "
            "existing episode comes back with `appended: false` (200 if nothing was new). "
            "Keys are checked before anything is embedded, so a retried batch costs little. "
            "Unknown fields, strings where numbers belong (and the reverse), date-times "
            "without a zone and dates more than a day ahead are refused with a 400 naming "
            "the field; nothing is written."
        ),
    )
    def post(self, request):
        data = request.data
        if not isinstance(data, dict):
            raise InvalidInput("body", "must be a JSON object")
        batch = "events" in data
        serializer_class = self.BatchInputSerializer if batch else self.SingleInputSerializer
        serializer = serializer_class(data=data)
        serializer.is_valid(raise_exception=True)
        values = dict(serializer.validated_data)
        student = values.pop("student")
        subject = values.pop("subject")
        timezone_name = values.pop("student_timezone") or None
        events = values["events"] if batch else [values]
        pair, episodes = episode_append_external(
            organization=organization_of(request),
            student_external_id=student,
            subject_external_id=subject,
            student_timezone=timezone_name,
            events=[EventSpec(**event) for event in events],
        )
        body = {
            "student": pair.student.external_id,
            "subject": pair.subject.external_id,
            "head_seq": pair.head_seq,
            "head_hash": pair.head_hash,
            "episodes": episodes,
        }
        appended = any(e.was_appended for e in episodes)
        return Response(
            self.OutputSerializer(body).data,
            status=status.HTTP_201_CREATED if appended else status.HTTP_200_OK,
        )


def _cursor_encode(order: str, seq: int) -> str:
    return base64.urlsafe_b64encode(f"{order}:{seq}".encode()).decode().rstrip("=")


def _cursor_decode(cursor: str, order: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        cursor_order, _, seq = raw.partition(":")
        value = int(seq)
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise InvalidInput("cursor", "is not a cursor from a previous page") from exc
    if cursor_order != order or value < 1:
        raise InvalidInput("cursor", f"belongs to another order than {order!r}")
    return value


@extend_schema_serializer(component_name="EpisodeListed")
class ListedEpisodeSerializer(EpisodeOutputSerializer):
    stance = serializers.ChoiceField(
        choices=AnswerStance.Stance.values,
        allow_null=True,
        help_text="An answer's reported stance (answered, partial, cannot), if any.",
    )
    citation_status = serializers.CharField(
        help_text="An answer's citations now: whether the cited files still hold it."
    )
    citation_note = serializers.CharField(help_text="The citation status in words.")


class PairEpisodesView(APIView):
    """A pair's episodes in chain order, a page at a time (keyset cursor, no counting)."""

    @extend_schema_serializer(component_name="PairEpisodesQuery")
    class QuerySerializer(serializers.Serializer):
        kind = serializers.CharField(required=False, default="")
        since = AwareDateTimeField(required=False, allow_null=True, default=None)
        until = AwareDateTimeField(required=False, allow_null=True, default=None)
        order = serializers.ChoiceField(
            choices=["newest", "oldest"], required=False, default="newest"
        )
        limit = serializers.IntegerField(
            required=False, min_value=1, max_value=EPISODES_PAGE_MAX, default=EPISODES_PAGE_DEFAULT
        )
        cursor = serializers.CharField(required=False, default="")

    ListedSerializer = ListedEpisodeSerializer

    @extend_schema_serializer(component_name="PairEpisodesOutput")
    class OutputSerializer(serializers.Serializer):
        student = serializers.CharField(help_text="The student's id in the chat service.")
        subject = serializers.CharField(help_text="The subject's id in the chat service.")
        head_seq = serializers.IntegerField(help_text="The chain's last position.")
        episodes = ListedEpisodeSerializer(many=True, help_text="This page's episodes.")
        next_cursor = serializers.CharField(
            allow_null=True, help_text="Pass as `cursor` for the next page; null: the last."
        )

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "kind", OpenApiTypes.STR, description=f"kinds, comma-separated: {KINDS_TEXT}"
            ),
            OpenApiParameter(
                "since", OpenApiTypes.DATETIME, description="occurred_at >= since (with a zone)"
            ),
            OpenApiParameter(
                "until", OpenApiTypes.DATETIME, description="occurred_at < until (with a zone)"
            ),
            OpenApiParameter(
                "order", OpenApiTypes.STR, enum=["newest", "oldest"], description="default newest"
            ),
            OpenApiParameter("limit", OpenApiTypes.INT, description=f"1-{EPISODES_PAGE_MAX}"),
            OpenApiParameter("cursor", OpenApiTypes.STR, description="next_cursor of a page"),
        ],
        responses={200: OutputSerializer, **error_responses()},
        summary="List a student-subject pair's episodes",
    )
    def get(self, request, student: str, subject: str):
        query = self.QuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        kinds = [k.strip() for k in ",".join(request.query_params.getlist("kind")).split(",")]
        kinds = [k for k in kinds if k]
        unknown = [k for k in kinds if k not in Episode.Kind.values]
        if unknown:
            raise InvalidInput(
                "kind", f"{unknown[0]!r} is not one of {', '.join(Episode.Kind.values)}"
            )
        order = params["order"]
        after = _cursor_decode(params["cursor"], order) if params["cursor"] else None
        pair = pair_get(
            organization=organization_of(request),
            student_external_id=student,
            subject_external_id=subject,
        )
        page = episodes_page(
            pair=pair,
            kinds=kinds,
            since=params["since"],
            until=params["until"],
            after_seq=after,
            newest_first=order == "newest",
            limit=params["limit"],
        )
        statuses = citation_status_for(episodes=page.episodes)
        rows = []
        for episode in page.episodes:
            row = dict(EpisodeOutputSerializer(episode).data)
            # A missing reverse one-to-one raises an AttributeError subclass.
            stance = getattr(episode, "stance", None)
            row["stance"] = stance.stance if stance is not None else None
            row["citation_status"] = str(statuses[episode.pk])
            row["citation_note"] = statuses[episode.pk].note
            rows.append(row)
        body = {
            "student": pair.student.external_id,
            "subject": pair.subject.external_id,
            "head_seq": pair.head_seq,
            "episodes": rows,
            "next_cursor": (
                _cursor_encode(order, page.next_after_seq)
                if page.next_after_seq is not None
                else None
            ),
        }
        return Response(self.OutputSerializer(body).data)


class AnswerStanceView(APIView):
    """The grounding tracker's stance on an answer: written once."""

    @extend_schema_serializer(component_name="AnswerStanceInput")
    class InputSerializer(StrictSerializer):
        stance = serializers.ChoiceField(
            choices=AnswerStance.Stance.values,
            help_text="answered: the files answered it; partial; cannot: they could not.",
        )

    @extend_schema_serializer(component_name="AnswerStanceOutput")
    class OutputSerializer(serializers.Serializer):
        episode = serializers.IntegerField(source="episode_id", help_text="The answer's id.")
        stance = serializers.ChoiceField(
            choices=AnswerStance.Stance.values, help_text="The stance recorded."
        )
        reported_at = serializers.DateTimeField(help_text="When it was recorded.")

    @extend_schema(
        request=InputSerializer,
        responses={201: OutputSerializer, **error_responses()},
        summary="Report whether an answer was answered, partial or cannot",
        description="Write-once: a second report for the same answer is a 400 naming `stance`.",
    )
    def post(self, request, episode_id: int):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        episode = episode_get(organization=organization_of(request), episode_id=episode_id)
        stance = answer_stance_report(episode=episode, stance=serializer.validated_data["stance"])
        return Response(self.OutputSerializer(stance).data, status=status.HTTP_201_CREATED)
