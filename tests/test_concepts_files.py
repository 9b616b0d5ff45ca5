"""File intake (R-2.1): the files API, versions, removal, reading states, bad input."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from concepts.devset import html_of_markdown
from concepts.models import READINESS_EXPLAINED, READINESS_NAMED, Concept, FileReading
from memory.models import Episode, Pair, Student, Subject, SubjectFile

DATA = Path(__file__).resolve().parent / "data" / "cell-biology"
URL = "/api/v1/files/"
DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX_TYPE = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
NOTES = b"# Notes\n\nOsmosis is the diffusion of water across a membrane.\n"


def _post(api, name, content, capture=None, **extra):
    data = {
        "student": "ana",
        "subject": "biology",
        "file": SimpleUploadedFile(name, content),
        **extra,
    }
    if capture is None:
        return api.post(URL, data, format="multipart")
    with capture(execute=True):
        return api.post(URL, data, format="multipart")


def test_uploading_a_markdown_file_registers_logs_and_reads_it(
    api, django_capture_on_commit_callbacks
):
    response = _post(api, "notes.md", NOTES, django_capture_on_commit_callbacks)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["page_count"] == 1 and body["reading_state"] == "queued"
    assert len(body["fingerprint"]) == 64
    reading = FileReading.objects.get(pk=body["file_id"])
    assert reading.state == FileReading.State.DONE and reading.concepts_found == 1
    episode = Episode.objects.get(kind="file")
    assert episode.evidence["file_id"] == body["file_id"]
    assert Concept.objects.get(key="osmosis").readiness == READINESS_EXPLAINED
    assert api.get(f"{URL}{body['file_id']}/").json()["reading_state"] == "done"


def test_a_pdf_keeps_its_page_count_and_pages(api, django_capture_on_commit_callbacks):
    pdf = (DATA / "energy-in-the-cell.pdf").read_bytes()
    body = _post(api, "energy-in-the-cell.pdf", pdf, django_capture_on_commit_callbacks).json()
    assert body["page_count"] == 3 and body["content_type"] == "application/pdf"
    mitochondria = Concept.objects.get(key="mitochondria")
    assert mitochondria.sources.get().pages == [2]


@pytest.mark.parametrize(
    ("name", "content_type", "pages"),
    [
        ("cell-biology-notes.pandoc.docx", DOCX_TYPE, 1),
        ("cell-biology-notes.libreoffice.docx", DOCX_TYPE, 1),
        ("cell-biology-notes.pandoc.pptx", PPTX_TYPE, 7),
        ("cell-biology-notes.pandoc.epub", "application/epub+zip", 2),
        ("cell-biology-notes.libreoffice.odt", "application/vnd.oasis.opendocument.text", 1),
        ("cell-biology-notes.html", "text/html", 1),
    ],
)
def test_documents_slides_e_books_and_web_pages_are_read_into_the_map_as_their_markdown(
    api, django_capture_on_commit_callbacks, name, content_type, pages
):
    if name.endswith(".html"):
        content = html_of_markdown((DATA / "cell-biology-notes.md").read_text("utf-8")).encode()
    else:
        content = (DATA.parent / "office" / name).read_bytes()
    body = _post(api, name, content, django_capture_on_commit_callbacks).json()
    assert body["content_type"] == content_type and body["page_count"] == pages
    reading = FileReading.objects.get(pk=body["file_id"])
    assert reading.state == FileReading.State.DONE, reading.reason
    assert set(Concept.objects.values_list("key", flat=True)) == {
        "cell", "cytoplasm", "organelles", "cell membrane", "selective permeability",
        "diffusion", "osmosis", "active transport", "concentration gradient",
    }  # fmt: skip


def test_a_new_version_with_the_same_name_replaces_the_old(api, django_capture_on_commit_callbacks):
    first = _post(api, "notes.md", NOTES, django_capture_on_commit_callbacks).json()
    second = _post(api, "notes.md", NOTES + b"\nDiffusion is the spreading of particles.\n",
                   django_capture_on_commit_callbacks).json()  # fmt: skip
    assert second["replaces_file_id"] == first["file_id"]
    old = api.get(f"{URL}{first['file_id']}/").json()
    assert old["current"] is False and old["replaced_by_file_id"] == second["file_id"]
    assert Episode.objects.filter(kind="file").count() == 2
    # The same bytes again are not a new version.
    again = _post(api, "notes.md", NOTES + b"\nDiffusion is the spreading of particles.\n")
    assert again.status_code == 200 and again.json()["file_id"] == second["file_id"]
    assert Episode.objects.filter(kind="file").count() == 2


def test_removing_a_file_is_recorded_and_its_concepts_are_no_longer_explained(
    api, django_capture_on_commit_callbacks
):
    body = _post(api, "notes.md", NOTES, django_capture_on_commit_callbacks).json()
    response = api.delete(f"{URL}{body['file_id']}/")
    assert response.status_code == 200 and response.json()["removed_at"]
    assert SubjectFile.objects.filter(pk=body["file_id"]).exists()
    assert Concept.objects.get(key="osmosis").readiness == READINESS_NAMED
    assert api.delete(f"{URL}{body['file_id']}/").status_code == 400


def _locked_pdf() -> bytes:
    """A PDF that asks for a password to open."""
    import io

    from pypdf import PdfReader, PdfWriter

    from concepts.devset import pdf_of_markdown

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_of_markdown("**Osmosis** is …"))))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("empty.md", b"", "empty"),
        ("locked.pdf", _locked_pdf(), "asks for a password to open"),
        ("grades.xlsx", b"PK\x03\x04 not supported", "unsupported file type"),
        ("notes.docx", b"PK\x03\x04 not a zip", "not a .docx file"),
        ("page.html", b'<meta charset="utf-8"><p>Caf\xe9</p>', "not in its declared charset"),
        ("notes.txt", b"Osmosis\x00\x01\x02 moves water", "binary data, not text"),
        ("broken.pdf", b"%PDF-1.4\n this is not a real PDF body", "PDF"),
        ("fake.pdf", b"hello, I am text", "not a PDF"),
    ],
)
def test_bad_files_are_a_400_naming_the_field_and_nothing_is_written(api, name, content, message):
    response = _post(api, name, content)
    assert response.status_code == 400, response.json()
    assert response.json()["field"] == "file"
    assert message in response.json()["error"]
    assert not SubjectFile.objects.exists()
    assert not Episode.objects.exists()
    # No orphan rows: the student, subject and pair named by a refused upload are not kept.
    assert not Student.objects.exists()
    assert not Subject.objects.exists()
    assert not Pair.objects.exists()


def test_a_file_over_the_size_limit_is_refused(api, settings):
    settings.TUTORBRAIN_MAX_FILE_BYTES = 1024
    response = _post(api, "big.md", b"x" * 2048)
    assert response.status_code == 400 and "limit" in response.json()["error"]
    assert not SubjectFile.objects.exists()


def test_another_organizations_file_is_not_found(api, django_capture_on_commit_callbacks):
    from rest_framework.test import APIClient

    from memory.services import api_key_create
    from tests.factories import OrganizationFactory

    body = _post(api, "notes.md", NOTES, django_capture_on_commit_callbacks).json()
    _, other_key = api_key_create(organization=OrganizationFactory(), name="other")
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Api-Key {other_key}")
    assert other.get(f"{URL}{body['file_id']}/").status_code == 404
    assert other.delete(f"{URL}{body['file_id']}/").status_code == 404


def test_text_windows_saved_in_its_code_page_is_read_into_the_map(
    api, django_capture_on_commit_callbacks
):
    """A Spanish file saved by Notepad is cp1252, not UTF-8: read as such (before, it
    failed the reading, or came out as Chinese characters when its length was even)."""
    content = (DATA / "capitulo-transporte.md").read_text("utf-8").encode("cp1252")
    body = _post(api, "capitulo.md", content, django_capture_on_commit_callbacks).json()
    reading = FileReading.objects.get(pk=body["file_id"])
    assert reading.state == FileReading.State.DONE, reading.reason
    assert Concept.objects.filter(key="osmosis", name="Ósmosis").exists()


@pytest.mark.celery_worker
def test_the_reading_runs_in_a_real_celery_worker_after_the_upload_commits(celery_worker, pair):
    from concepts.services import file_upload

    upload = file_upload(pair=pair, name="notes.md", content=NOTES)
    deadline = time.monotonic() + 90
    state = FileReading.State.QUEUED
    while time.monotonic() < deadline and state in ("queued", "reading"):
        time.sleep(0.5)
        state = FileReading.objects.get(pk=upload.file.pk).state
    assert state == FileReading.State.DONE
    assert Concept.objects.filter(subject=pair.subject, key="osmosis").exists()


@pytest.mark.django_db(transaction=True)
def test_two_files_read_at_the_same_time_merge_into_one_node(pair):
    """The subject's map row is locked while a file merges: no duplicate key, no lost source."""
    import threading

    from django.db import connection

    from concepts.services import file_read, file_upload

    uploads = [
        file_upload(pair=pair, name=f"notes-{i}.md", content=NOTES + f"\n<!-- {i} -->\n".encode(),
                    queue=False).file
        for i in range(2)
    ]  # fmt: skip
    barrier = threading.Barrier(2)
    states: list[str] = []

    def read(subject_file):
        try:
            barrier.wait()
            states.append(file_read(subject_file=subject_file).state)
        finally:
            connection.close()

    threads = [threading.Thread(target=read, args=(f,)) for f in uploads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert states == ["done", "done"]
    osmosis = Concept.objects.get(subject=pair.subject, key="osmosis")
    assert osmosis.sources.count() == 2


def test_a_version_replaced_before_it_was_read_is_skipped(pair):
    from concepts.services import file_read, file_upload

    old = file_upload(pair=pair, name="notes.md", content=NOTES, queue=False).file
    new = file_upload(pair=pair, name="notes.md", content=NOTES + b"\nMore.\n", queue=False).file
    skipped = file_read(subject_file=old)
    assert skipped.state == FileReading.State.DONE and "replaced or removed" in skipped.reason
    assert not Concept.objects.exists()
    assert file_read(subject_file=new).state == FileReading.State.DONE
    assert Concept.objects.get(key="osmosis").sources.get().file == new


def test_a_failed_reading_is_read_again_on_request(pair, settings):
    from concepts.services import file_read, file_reading_requeue, file_upload

    settings.TUTORBRAIN_EXTRACTOR = "llm"
    settings.TUTORBRAIN_LLM_BASE_URL = ""
    upload = file_upload(pair=pair, name="notes.md", content=NOTES, queue=False).file
    failed = file_read(subject_file=upload)
    assert failed.state == FileReading.State.FAILED
    settings.TUTORBRAIN_EXTRACTOR = "offline"
    requeued = file_reading_requeue(file_reading=failed)  # eager task: read at once on commit
    assert requeued.state == FileReading.State.QUEUED and requeued.reason == ""
    assert file_read(subject_file=upload).state == FileReading.State.DONE
    assert Concept.objects.filter(key="osmosis").exists()
