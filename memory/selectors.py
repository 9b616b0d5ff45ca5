"""Reads of the memory app. Every API read is scoped to one organization."""

from __future__ import annotations

from memory.errors import NotFound
from memory.models import ChainVerification, Organization, Pair, Student, Subject


def student_get(*, organization: Organization, external_id: str) -> Student:
    student = Student.objects.filter(organization=organization, external_id=external_id).first()
    if student is None:
        raise NotFound(f"no student {external_id!r} in this organization")
    return student


def subject_get(*, organization: Organization, external_id: str) -> Subject:
    subject = Subject.objects.filter(organization=organization, external_id=external_id).first()
    if subject is None:
        raise NotFound(f"no subject {external_id!r} in this organization")
    return subject


def pair_get(
    *, organization: Organization, student_external_id: str, subject_external_id: str
) -> Pair:
    """The pair of this organization's student and subject, or NotFound (404)."""
    pair = (
        Pair.objects.select_related("student", "subject")
        .filter(
            student__organization=organization,
            student__external_id=student_external_id,
            subject__organization=organization,
            subject__external_id=subject_external_id,
        )
        .first()
    )
    if pair is None:
        raise NotFound(
            f"no record of student {student_external_id!r} in subject {subject_external_id!r} "
            "in this organization"
        )
    return pair


def pair_last_verification(*, pair: Pair) -> ChainVerification | None:
    return ChainVerification.objects.filter(pair=pair).order_by("-checked_at", "-pk").first()
