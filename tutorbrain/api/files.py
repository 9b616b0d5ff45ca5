"""The student's files over HTTP: upload (text, Markdown, PDF), reading state, removal.

An upload is registered (fingerprint, pages), logged as a `file` episode and read into
the subject's concept map by a Celery task after the request commits; poll the file to
see its reading state (queued, reading, done, or failed with the reason).
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from concepts.models import FileReading
from concepts.services import file_remove, file_upload_external
from memory.errors import InvalidInput, NotFound
from memory.models import SubjectFile
from tutorbrain.api.auth import organization_of
from tutorbrain.api.schema import error_responses


@extend_schema_serializer(component_name="SubjectFile")
class FileOutputSerializer(serializers.Serializer):
    file_id = serializers.IntegerField(help_text="The file's id (cite it as `file_id`).")
    name = serializers.CharField(help_text="Its name; a new upload of the same name replaces it.")
    subject = serializers.CharField(help_text="The subject's id in the chat service.")
    fingerprint = serializers.CharField(help_text="sha256 of the content.")
    content_type = serializers.CharField(help_text="The content type it was read as.")
    size_bytes = serializers.IntegerField(help_text="Size in bytes.")
    page_count = serializers.IntegerField(help_text="Pages (1 for text and Markdown).")
    uploaded_at = serializers.DateTimeField(help_text="When it was uploaded.")
    current = serializers.BooleanField(help_text="Neither replaced nor removed.")
    replaced_at = serializers.DateTimeField(allow_null=True, help_text="When it was replaced.")
    replaced_by_file_id = serializers.IntegerField(
        allow_null=True, help_text="The file that replaced it."
    )
    removed_at = serializers.DateTimeField(allow_null=True, help_text="When it was removed.")
    replaces_file_id = serializers.IntegerField(allow_null=True, help_text="The file it replaced.")
    reading_state = serializers.ChoiceField(
        choices=FileReading.State.values,
        allow_null=True,
        help_text="Reading into the concept map: queued, reading, done, or failed.",
    )
    reading_reason = serializers.CharField(help_text="Why a reading failed (or was re-queued).")
    concepts_found = serializers.IntegerField(help_text="Concepts the reading found.")


def _file_output(subject_file: SubjectFile, replaces_id: int | None = None) -> dict:
    reading = FileReading.objects.filter(pk=subject_file.pk).first()
    if replaces_id is None:
        replaces_id = (
            SubjectFile.objects.filter(replaced_by=subject_file)
            .values_list("pk", flat=True)
            .first()
        )
    return {
        "file_id": subject_file.pk,
        "name": subject_file.name,
        "subject": subject_file.subject.external_id,
        "fingerprint": subject_file.fingerprint,
        "content_type": subject_file.content_type,
        "size_bytes": subject_file.size_bytes,
        "page_count": subject_file.page_count,
        "uploaded_at": subject_file.uploaded_at,
        "current": subject_file.is_current,
        "replaced_at": subject_file.replaced_at,
        "replaced_by_file_id": subject_file.replaced_by_id,
        "removed_at": subject_file.removed_at,
        "replaces_file_id": replaces_id,
        "reading_state": reading.state if reading else None,
        "reading_reason": reading.reason if reading else "",
        "concepts_found": reading.concepts_found if reading else 0,
    }


class FileUploadView(APIView):
    """Upload a file of a subject (multipart). A file with the same name replaces the old."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema_serializer(component_name="FileUploadInput")
    class InputSerializer(serializers.Serializer):
        student = serializers.CharField(
            max_length=200, help_text="The student's id in the chat service (created on use)."
        )
        subject = serializers.CharField(
            max_length=200, help_text="The subject's id in the chat service (created on use)."
        )
        file = serializers.FileField(
            allow_empty_file=True,
            help_text="Text, Markdown or PDF; at most TUTORBRAIN_MAX_FILE_BYTES (20 MiB).",
        )
        name = serializers.CharField(
            max_length=255,
            required=False,
            allow_blank=True,
            help_text="The file's name; default: the uploaded file's name.",
        )
        subject_name = serializers.CharField(
            max_length=200,
            required=False,
            allow_blank=True,
            help_text="The subject's display name, when it is created.",
        )
        subject_language = serializers.CharField(
            max_length=8,
            required=False,
            allow_blank=True,
            help_text="The subject's language (en, es, pt, fr, ar), when it is created.",
        )

    OutputSerializer = FileOutputSerializer

    @extend_schema(
        request={"multipart/form-data": InputSerializer},
        responses={
            201: OpenApiResponse(OutputSerializer, description="Registered and queued."),
            200: OpenApiResponse(
                OutputSerializer, description="The same file was already registered: nothing new."
            ),
            **error_responses(),
        },
        summary="Upload a student's file (text, Markdown or PDF) to be read into the map",
    )
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        organization = organization_of(request)
        upload = values["file"]
        if upload.size is not None and upload.size > _max_bytes():
            raise InvalidInput("file", f"is {upload.size} bytes; the limit is {_max_bytes()} bytes")
        content = upload.read()
        name = (values.get("name") or upload.name or "").strip()
        result = file_upload_external(
            organization=organization,
            student_external_id=values["student"],
            subject_external_id=values["subject"],
            subject_name=values.get("subject_name", ""),
            subject_language=values.get("subject_language", ""),
            name=name,
            content=content,
            content_type=getattr(upload, "content_type", "") or "",
        )
        result.file.refresh_from_db()
        body = self.OutputSerializer(
            _file_output(result.file, result.replaced.pk if result.replaced else None)
        ).data
        return Response(
            body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        )


def _max_bytes() -> int:
    from django.conf import settings

    return settings.TUTORBRAIN_MAX_FILE_BYTES


class FileDetailView(APIView):
    """One file: its registry entry and reading state; DELETE records its removal."""

    OutputSerializer = FileOutputSerializer

    def _get(self, request, file_id: int) -> SubjectFile:
        subject_file = (
            SubjectFile.objects.select_related("subject")
            .filter(pk=file_id, subject__organization=organization_of(request))
            .first()
        )
        if subject_file is None:
            raise NotFound(f"no file {file_id} in this organization")
        return subject_file

    @extend_schema(
        responses={200: OutputSerializer, **error_responses()},
        summary="A file and its reading state",
    )
    def get(self, request, file_id: int):
        return Response(self.OutputSerializer(_file_output(self._get(request, file_id))).data)

    @extend_schema(
        responses={200: OutputSerializer, **error_responses()},
        summary="Record that a file was removed (it is kept for the citations that name it)",
    )
    def delete(self, request, file_id: int):
        removed = file_remove(subject_file=self._get(request, file_id))
        return Response(self.OutputSerializer(_file_output(removed)).data)
