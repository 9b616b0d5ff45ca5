"""The episode log over HTTP: append (one event or a batch), list a pair's episodes,
report an answer's stance. Every write goes through memory.services."""

from __future__ import annotations

import base64
import binascii

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.errors import InvalidInput
from memory.models import AnswerStance, Episode
from memory.selectors import citation_status_for, episode_get, episodes_page, pair_get
from memory.services import EventSpec, answer_stance_report, episode_append_external
from tutorbrain.api.auth import organization_of

# A page of the episode list: the default keeps a response small; the maximum bounds
# one request's work on a chain of 100k episodes.
EPISODES_PAGE_DEFAULT = 50
EPISODES_PAGE_MAX = 500


class StrictSerializer(serializers.Serializer):
    """Refuses keys it does not know: a misspelt `verdit` must not pass silently."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({unknown[0]: ["is not a known field"]})
        return super().to_internal_value(data)


class EventSerializer(StrictSerializer):
    """One event (R-1.2). Shape only; the service checks the rules and names the field."""

    kind = serializers.CharField(help_text=", ".join(Episode.Kind.values))
    summary = serializers.CharField(allow_blank=True, help_text="One line, at most 300 chars.")
    text = serializers.CharField(required=False, allow_blank=True, default="")
    concepts = serializers.ListField(
        child=serializers.CharField(allow_blank=True), required=False, default=list
    )
    occurred_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    topic = serializers.CharField(required=False, allow_blank=True, default="")
    verdict = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="check/quiz: right, wrong, partial"
    )
    assessment = serializers.CharField(required=False, allow_blank=True, default="")
    predicted_mastery = serializers.FloatField(required=False, allow_null=True, default=None)
    score = serializers.FloatField(required=False, allow_null=True, default=None)
    citations = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        default=list,
        help_text='answer: [{"file_id": 3, "pages": [2]}] or [{"file": "cells.pdf"}]',
    )
    recalled_ids = serializers.ListField(
        child=serializers.IntegerField(), required=False, default=list
    )
    idempotency_key = serializers.CharField(required=False, allow_blank=True, default="")
    extra = serializers.DictField(required=False, default=dict)


class PairFieldsSerializer(StrictSerializer):
    student = serializers.CharField(help_text="The chat service's student id (created on use).")
    subject = serializers.CharField(help_text="The chat service's subject id (created on use).")
    student_timezone = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="IANA zone, e.g. Europe/Madrid"
    )


@extend_schema_serializer(component_name="Episode")
class EpisodeOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    seq = serializers.IntegerField()
    kind = serializers.CharField()
    summary = serializers.CharField()
    text = serializers.CharField()
    concepts = serializers.ListField(child=serializers.CharField())
    salience = serializers.FloatField()
    occurred_at = serializers.DateTimeField()
    recorded_at = serializers.DateTimeField()
    topic = serializers.CharField()
    verdict = serializers.CharField()
    predicted_mastery = serializers.FloatField(allow_null=True)
    evidence = serializers.DictField()
    prev_hash = serializers.CharField()
    hash = serializers.CharField()


@extend_schema_serializer(component_name="EpisodeAppended")
class AppendedEpisodeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    seq = serializers.IntegerField()
    hash = serializers.CharField()
    prev_hash = serializers.CharField()
    kind = serializers.CharField()
    summary = serializers.CharField()
    salience = serializers.FloatField()
    occurred_at = serializers.DateTimeField()
    appended = serializers.BooleanField(
        source="was_appended", help_text="false: an idempotent replay, nothing appended"
    )


class EpisodeAppendView(APIView):
    """Append one event, or a batch of one student-subject chain's events, in order."""

    @extend_schema_serializer(component_name="EpisodeAppendSingleInput")
    class SingleInputSerializer(PairFieldsSerializer, EventSerializer):
        pass

    @extend_schema_serializer(component_name="EpisodeAppendBatchInput")
    class BatchInputSerializer(PairFieldsSerializer):
        events = EventSerializer(many=True, allow_empty=False)

    AppendedSerializer = AppendedEpisodeSerializer

    @extend_schema_serializer(component_name="EpisodeAppendOutput")
    class OutputSerializer(serializers.Serializer):
        student = serializers.CharField()
        subject = serializers.CharField()
        head_seq = serializers.IntegerField()
        head_hash = serializers.CharField()
        episodes = AppendedEpisodeSerializer(many=True)

    @extend_schema(
        request=PolymorphicProxySerializer(
            component_name="EpisodeAppendInput",
            serializers=[SingleInputSerializer, BatchInputSerializer],
            resource_type_field_name=None,
        ),
        responses={201: OutputSerializer, 200: OutputSerializer},
        summary="Append an event (or a batch) to a student-subject chain",
        description=(
            "One event, or `{student, subject, events: [...]}` appended in order in one "
            "transaction (all or nothing). Student, subject and their chain are created on "
            "first use. An `idempotency_key` already in the chain appends nothing: the "
            "existing episode comes back with `appended: false` (200 if nothing was new)."
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
    stance = serializers.CharField(allow_null=True)
    citation_status = serializers.CharField()
    citation_note = serializers.CharField()


class PairEpisodesView(APIView):
    """A pair's episodes in chain order, a page at a time (keyset cursor, no counting)."""

    @extend_schema_serializer(component_name="PairEpisodesQuery")
    class QuerySerializer(serializers.Serializer):
        kind = serializers.CharField(required=False, default="")
        since = serializers.DateTimeField(required=False, allow_null=True, default=None)
        until = serializers.DateTimeField(required=False, allow_null=True, default=None)
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
        student = serializers.CharField()
        subject = serializers.CharField()
        head_seq = serializers.IntegerField()
        episodes = ListedEpisodeSerializer(many=True)
        next_cursor = serializers.CharField(allow_null=True)

    @extend_schema(
        parameters=[
            OpenApiParameter("kind", OpenApiTypes.STR, description="kinds, comma-separated"),
            OpenApiParameter("since", OpenApiTypes.DATETIME, description="occurred_at >= since"),
            OpenApiParameter("until", OpenApiTypes.DATETIME, description="occurred_at < until"),
            OpenApiParameter("order", OpenApiTypes.STR, enum=["newest", "oldest"]),
            OpenApiParameter("limit", OpenApiTypes.INT, description=f"1-{EPISODES_PAGE_MAX}"),
            OpenApiParameter("cursor", OpenApiTypes.STR, description="next_cursor of a page"),
        ],
        responses={200: OutputSerializer},
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
    """The grounding tracker's stance on an answer (R-1.7): written once."""

    @extend_schema_serializer(component_name="AnswerStanceInput")
    class InputSerializer(StrictSerializer):
        stance = serializers.ChoiceField(choices=AnswerStance.Stance.values)

    @extend_schema_serializer(component_name="AnswerStanceOutput")
    class OutputSerializer(serializers.Serializer):
        episode = serializers.IntegerField(source="episode_id")
        stance = serializers.CharField()
        reported_at = serializers.DateTimeField()

    @extend_schema(
        request=InputSerializer,
        responses={201: OutputSerializer},
        summary="Report whether an answer was answered, partial or cannot",
        description="Write-once: a second report for the same answer is a 400 naming `stance`.",
    )
    def post(self, request, episode_id: int):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        episode = episode_get(organization=organization_of(request), episode_id=episode_id)
        stance = answer_stance_report(episode=episode, stance=serializer.validated_data["stance"])
        return Response(self.OutputSerializer(stance).data, status=status.HTTP_201_CREATED)
