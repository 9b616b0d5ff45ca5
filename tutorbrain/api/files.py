"""The student's files over HTTP: upload (text, Markdown, PDF), reading state, removal.

An upload is registered (fingerprint, pages), logged as a `file` episode and read into
the subject's concept map by a Celery task after the request commits; poll the file to
see its reading state (queued, reading, done, or failed with the reason).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from concepts.models import FileReading
from concepts.services import file_remove, file_upload_external
from memory.errors import InvalidInput, NotFound
from memory.models import SubjectFile
from tutorbrain.api.auth import organization_of


@extend_schema_serializer(component_name="SubjectFile")
class FileOutputSerializer(serializers.Serializer):
    file_id = serializers.IntegerField()
    name = serializers.CharField()
    subject = serializers.CharField()
    fingerprint = serializers.CharField()
    content_type = serializers.CharField()
    size_bytes = serializers.IntegerField()
    page_count = serializers.IntegerField()
    uploaded_at = serializers.DateTimeField()
    current = serializers.BooleanField()
    replaced_at = serializers.DateTimeField(allow_null=True)
    replaced_by_file_id = serializers.IntegerField(allow_null=True)
    removed_at = serializers.DateTimeField(allow_null=True)
    replaces_file_id = serializers.IntegerField(allow_null=True)
    reading_state = serializers.ChoiceField(choices=FileReading.State.values, allow_null=True)
    reading_reason = serializers.CharField()
    concepts_found = serializers.IntegerField()


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
        student = serializers.CharField(max_length=200)
        subject = serializers.CharField(max_length=200)
        file = serializers.FileField(allow_empty_file=True)
        name = serializers.CharField(max_length=255, required=False, allow_blank=True)
        subject_name = serializers.CharField(max_length=200, required=False, allow_blank=True)
        subject_language = serializers.CharField(max_length=8, required=False, allow_blank=True)

    OutputSerializer = FileOutputSerializer

    @extend_schema(
        request={"multipart/form-data": InputSerializer},
        responses={201: OutputSerializer, 200: OutputSerializer},
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

    @extend_schema(responses={200: OutputSerializer}, summary="A file and its reading state")
    def get(self, request, file_id: int):
        return Response(self.OutputSerializer(_file_output(self._get(request, file_id))).data)

    @extend_schema(
        responses={200: OutputSerializer},
        summary="Record that a file was removed (it is kept for the citations that name it)",
    )
    def delete(self, request, file_id: int):
        removed = file_remove(subject_file=self._get(request, file_id))
        return Response(self.OutputSerializer(_file_output(removed)).data)
