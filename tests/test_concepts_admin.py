"""The admin for teachers: the map page with its picture and teaching order, teaching
from the admin (an action and a form), uploads and reading states."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from concepts.models import READINESS_TAUGHT, Concept, FileReading, SubjectMap, TaughtNote
from concepts.services import file_read, file_upload
from tutorbrain.groups import TEACHERS

CONCEPT_VIEW = [
    "concepts.view_concept",
    "concepts.view_conceptsource",
    "concepts.view_prerequisite",
    "concepts.view_taughtnote",
    "concepts.view_filereading",
    "concepts.view_subjectmap",
]

DATA = Path(__file__).resolve().parent / "data" / "cell-biology"


@pytest.fixture
def subject_with_map(pair):
    for name in ("cell-biology-notes.md", "energy-in-the-cell.pdf"):
        upload = file_upload(pair=pair, name=name, content=(DATA / name).read_bytes(), queue=False)
        file_read(subject_file=upload.file)
    return pair.subject


def _staff(username, teacher: bool):
    user = get_user_model().objects.create_user(username, password="pw", is_staff=True)
    if teacher:
        # The group comes from a data migration; a transactional test elsewhere may have
        # flushed it from a reused test database, so grant it again the same way.
        from django.apps import apps

        from tutorbrain.groups import grant

        grant(apps, TEACHERS, [*CONCEPT_VIEW, "concepts.teach_concept"])
        user.groups.add(Group.objects.get(name=TEACHERS))
    else:
        from django.contrib.auth.models import Permission

        user.user_permissions.add(
            *Permission.objects.filter(
                content_type__app_label="concepts", codename__startswith="view_"
            )
        )
    return user


@pytest.fixture
def teacher_client(client, db):
    client.force_login(_staff("teacher", teacher=True))
    return client


def test_a_teacher_sees_the_map_picture_teaching_order_and_readiness(
    teacher_client, subject_with_map, django_assert_max_num_queries
):
    url = reverse("admin:concepts_subjectmap_change", args=[subject_with_map.pk])
    with django_assert_max_num_queries(25):
        response = teacher_client.get(url)
    assert response.status_code == 200
    page = response.content.decode()
    assert "<svg" in page and "http://" not in page.split("<svg", 1)[1].split("</svg>")[0].replace(
        "http://www.w3.org", ""
    ).replace("http://purl.org", "").replace("http://creativecommons.org", "").replace(
        "http://matplotlib.org", ""
    )
    assert "Concepts in teaching order" in page
    assert "readiness of the material" in page and "confirmed by a check (0.85)" in page
    assert "energy-in-the-cell.pdf (p. 2)" in page  # provenance with pages
    order = [
        c.name for c in Concept.objects.filter(subject=subject_with_map).order_by("teaching_rank")
    ]
    assert page.index(order[0]) < page.index(order[-1])


def test_a_teacher_teaches_a_concept_with_the_admin_action(teacher_client, subject_with_map):
    atp = Concept.objects.get(subject=subject_with_map, key="atp")
    response = teacher_client.post(
        reverse("admin:concepts_concept_changelist"),
        {"action": "teach_action", "_selected_action": [atp.pk], "apply": "1",
         "note": "We call ATP the cell's battery."},
    )  # fmt: skip
    assert response.status_code == 302
    atp.refresh_from_db()
    assert atp.readiness == READINESS_TAUGHT
    assert TaughtNote.objects.get(concept=atp).note == "We call ATP the cell's battery."


def test_a_teacher_adds_a_new_concept_with_the_form(teacher_client, subject_with_map):
    url = reverse("admin:concepts_subjectmap_teach_new", args=[subject_with_map.pk])
    response = teacher_client.post(url, {"name": "Lysosome", "note": "The recycling centre."})
    assert response.status_code == 302
    node = Concept.objects.get(subject=subject_with_map, key="lysosome")
    assert node.layer == Concept.Layer.TAUGHT


def test_staff_without_the_teach_permission_cannot_teach(client, subject_with_map):
    client.force_login(_staff("viewer", teacher=False))
    url = reverse("admin:concepts_subjectmap_teach_new", args=[subject_with_map.pk])
    assert client.post(url, {"name": "Lysosome", "note": "x"}).status_code == 403
    assert (
        client.get(
            reverse("admin:concepts_subjectmap_change", args=[subject_with_map.pk])
        ).status_code
        == 200
    )
    assert not TaughtNote.objects.exists()


def test_a_teacher_uploads_a_file_and_sees_its_reading_state(
    teacher_client, pair, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = teacher_client.post(
            reverse("admin:concepts_filereading_upload"),
            {"subject": pair.subject.pk, "file": SimpleUploadedFile("n.md", b"Osmosis is water diffusion.")},
        )  # fmt: skip
    assert response.status_code == 302
    assert FileReading.objects.get().state == FileReading.State.DONE
    listing = teacher_client.get(reverse("admin:concepts_filereading_changelist"))
    assert listing.status_code == 200 and "n.md" in listing.content.decode()
    assert SubjectMap.objects.get(subject=pair.subject).concept_count == 1


def test_a_concept_name_with_markup_is_escaped_in_the_page_and_the_picture(
    teacher_client, subject_with_map
):
    from concepts.services import map_recompute

    # The validator refuses such a name now; a row written before it did is still escaped.
    Concept.objects.create(
        subject=subject_with_map, name="<script>alert(1)</script>", key="script alert 1 script"
    )
    map_recompute(subject=subject_with_map)
    url = reverse("admin:concepts_subjectmap_change", args=[subject_with_map.pk])
    page = teacher_client.get(url).content.decode()
    assert "<script>alert(1)</script>" not in page
