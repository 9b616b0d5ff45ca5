"""The teacher's and staff's main flows in a real browser (issue 16).

Playwright drives Debian's Chromium (`/usr/bin/chromium`, or `TUTORBRAIN_CHROMIUM`;
`.ci/run` installs it; never a downloaded browser) against a live server on the test
database. Each flow saves a screenshot into `test-screenshots/` (git-ignored) so a person
can look at what the test saw.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from concepts.models import Concept, TaughtNote
from concepts.services import file_read, file_upload
from memory.models import ChainVerification
from memory.services import episode_append
from tests.factories import OrganizationFactory, PairFactory, StudentFactory, SubjectFactory
from tutorbrain.groups import TEACHERS

CHROMIUM = os.environ.get("TUTORBRAIN_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parent.parent / "test-screenshots"
DATA = Path(__file__).resolve().parent / "data" / "cell-biology"
PASSWORD = "a long browser password"
T0 = datetime(2026, 6, 2, 10, 0, tzinfo=UTC)
# A loaded CI machine renders slowly; nothing here waits on a timer, only on the page.
TIMEOUT_MS = 60_000

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"no Chromium at {CHROMIUM}: install Debian's (apt-get install -y chromium) "
            "or set TUTORBRAIN_CHROMIUM; .ci/run does it"
        )
    from playwright.sync_api import sync_playwright

    SCREENSHOTS.mkdir(exist_ok=True)
    # Playwright's sync API keeps an event loop running in this thread; the database work
    # the tests and their fixtures do between page actions is ordinary synchronous code.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield launched
            launched.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 1400, "height": 1000}
    )
    context.set_default_timeout(TIMEOUT_MS)
    opened = context.new_page()
    yield opened
    context.close()


def shot(page, name: str) -> None:
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def log_in(page, username: str) -> None:
    page.goto("/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#content")


@pytest.fixture
def school():
    """A school with the sample cell-biology map, another school with a subject of the
    same name, and a student whose checks on the map's concepts gave beliefs."""
    organization = OrganizationFactory(name="Demo school")
    subject = SubjectFactory(organization=organization, name="Cell biology", external_id="cells")
    student = StudentFactory(organization=organization, display_name="Ana Souza")
    pair = PairFactory(student=student, subject=subject)
    for name in ("cell-biology-notes.md",):
        upload = file_upload(pair=pair, name=name, content=(DATA / name).read_bytes(), queue=False)
        file_read(subject_file=upload.file)
    other = OrganizationFactory(name="Other school")
    SubjectFactory(organization=other, name="Cell biology", external_id="cells-2")
    concept = Concept.objects.filter(subject=subject, name__iexact="osmosis").first()
    assert concept is not None, "the sample notes explain osmosis"
    for i, verdict in enumerate(["wrong", "partial", "right"]):
        at = T0 + timedelta(days=7 * i)
        episode_append(
            pair=pair,
            kind="check",
            summary=f"Check {i + 1} on osmosis: {verdict}",
            topic="osmosis",
            verdict=verdict,
            predicted_mastery=0.5,
            occurred_at=at,
            now=at,
        )
    episode_append(
        pair=pair,
        kind="question",
        summary="Why does a cell burst in pure water?",
        occurred_at=T0 + timedelta(days=15),
        now=T0 + timedelta(days=15),
    )
    users = get_user_model().objects
    users.create_superuser("staff", "staff@example.org", PASSWORD)
    teacher = users.create_user("teacher", password=PASSWORD, is_staff=True)
    teacher.groups.add(Group.objects.get(name=TEACHERS))
    return {"subject": subject, "pair": pair, "osmosis": concept}


def test_a_teacher_finds_the_subjects_map_among_schools(page, school):
    log_in(page, "teacher")
    page.click("#tutorbrain-tools >> text=Concept maps")
    # Two maps are called "Cell biology": the organization column tells them apart.
    page.click("#changelist-filter >> text=Demo school")
    rows = page.locator("#result_list tbody tr")
    assert rows.count() == 1 and "Demo school" in rows.first.inner_text()
    rows.first.locator("a").first.click()
    page.wait_for_selector("text=Concepts in teaching order")
    assert "Concept map of Cell biology (Demo school)" in page.inner_text("#content")
    shot(page, "01-teacher-finds-the-map")


def test_a_teacher_teaches_an_existing_concept_from_its_row(page, school):
    log_in(page, "teacher")
    page.goto(f"/admin/concepts/subjectmap/{school['subject'].pk}/change/")
    row = page.locator("tr", has=page.locator(f"a:text-is('{school['osmosis'].name}')"))
    row.locator("a.tb-teach-button").click()
    page.wait_for_selector("#teach-form")
    page.fill("#id_note", "In our class: water follows the salt.")
    shot(page, "02-teach-existing-form")
    page.click("#teach-form input[type=submit]")
    page.wait_for_selector(".messagelist")
    assert "your note is on it now" in page.inner_text(".messagelist")
    assert TaughtNote.objects.filter(
        concept=school["osmosis"], note="In our class: water follows the salt."
    ).exists()
    shot(page, "03-teach-existing-done")


def test_a_teacher_teaches_a_new_concept_and_is_told_when_the_name_exists(page, school):
    log_in(page, "teacher")
    page.goto(f"/admin/concepts/subjectmap/{school['subject'].pk}/change/")
    page.fill("#teach-new-form #id_name", school["osmosis"].name.lower())
    page.fill("#teach-new-form #id_note", "Water crosses the membrane.")
    page.click("#teach-new-form input[type=submit]")
    page.wait_for_selector("#teach-new-form .errorlist")
    assert "already exists in this map" in page.inner_text("#teach-new-form")
    # What was typed is still there.
    assert page.input_value("#teach-new-form #id_note") == "Water crosses the membrane."
    shot(page, "04-teach-new-name-exists")

    page.fill("#teach-new-form #id_name", "Turgor pressure")
    page.fill("#teach-new-form #id_note", "The push of water on the cell wall.")
    page.click("#teach-new-form input[type=submit]")
    page.wait_for_selector(".messagelist")
    assert "Taught a new concept: Turgor pressure." in page.inner_text(".messagelist")
    assert "Turgor pressure" in page.inner_text("#content")
    shot(page, "05-teach-new-done")


def test_staff_follow_a_beliefs_evidence_to_the_right_episode(page, school):
    log_in(page, "staff")
    page.click("#tutorbrain-tools >> text=Student-subjects")
    page.click("#result_list >> text=Ana Souza")
    page.wait_for_selector("#hub-beliefs")
    shot(page, "06-student-subject-hub")
    page.click("#hub-beliefs >> text=timeline")
    page.wait_for_selector("#belief-timeline")
    shot(page, "07-belief-timeline")
    chip = page.locator(".bl-evidence a").first
    label = chip.inner_text()
    episode_id = int(re.fullmatch(r"episode (\d+)", label).group(1))
    chip.click()
    page.wait_for_url(re.compile(rf"/admin/memory/episode/{episode_id}/change/"))
    heading = page.inner_text("#content")
    assert f"episode {episode_id} " in heading and "on osmosis" in heading
    shot(page, "08-evidence-episode")


def test_staff_rederive_a_pair_from_its_page(page, school):
    log_in(page, "staff")
    page.goto(f"/admin/tutorbrain/studentsubject/{school['pair'].pk}/change/")
    page.click("text=Re-derive beliefs…")
    page.wait_for_selector("text=Yes, re-derive")
    shot(page, "09-rederive-confirmation")
    page.click("text=Yes, re-derive")
    page.wait_for_selector(".messagelist")
    assert "Re-derived 1 student-subjects" in page.inner_text(".messagelist")
    # Back on the page it started from.
    assert f"/admin/tutorbrain/studentsubject/{school['pair'].pk}/change/" in page.url
    shot(page, "10-rederive-done")


def test_staff_verify_a_chain_from_the_hub(page, school):
    log_in(page, "staff")
    page.goto(f"/admin/tutorbrain/studentsubject/{school['pair'].pk}/change/")
    assert "No verification yet" in page.inner_text("#hub-chain")
    page.click("#hub-chain input[value='Verify chain']")
    page.wait_for_selector(".messagelist")
    school["pair"].refresh_from_db()
    expected = f"Chain verified: intact, {school['pair'].head_seq} episodes"
    assert expected in page.inner_text(".messagelist")
    assert "intact" in page.inner_text("#hub-chain")
    assert ChainVerification.objects.get(pair=school["pair"]).intact
    shot(page, "11-chain-verified")


def test_staff_preview_a_block_from_the_pair_page(page, school):
    log_in(page, "staff")
    page.goto(f"/admin/beliefs/pairbeliefs/{school['pair'].pk}/change/")
    page.click("#preview-block-link")
    page.wait_for_selector("#id_message")
    assert page.input_value("#id_student") == school["pair"].student.external_id
    page.fill("#id_message", "Why does a cell burst in pure water?")
    page.click("input[value='Build the block']")
    page.wait_for_selector("pre")
    block = page.inner_text("pre")
    assert "YOUR MEMORY OF THIS STUDENT AND SUBJECT" in block
    assert page.locator("table a", has_text=re.compile(r"^episode \d+$")).count() >= 1
    shot(page, "12-block-preview")

    # Typing the display name instead of the id works, and says so.
    page.fill("#id_student", "Ana Souza")
    page.click("input[value='Build the block']")
    page.wait_for_selector("pre")
    assert "that id was used" in page.inner_text("#content")
    shot(page, "13-block-preview-by-name")


def test_staff_read_a_nights_record_the_calibration_curve_and_the_report(page, school):
    from tutorbrain.models import NightlyRun
    from tutorbrain.nightly import cycle

    for week in range(3):
        cycle.pair_cycle_run(pair_id=school["pair"].pk, day=(T0 + timedelta(days=7 * week)).date())
    log_in(page, "staff")
    page.goto(f"/admin/tutorbrain/studentsubject/{school['pair'].pk}/change/")
    assert page.locator("#hub-calibration img").count() == 1
    shot(page, "14-hub-with-nights-and-curve")

    run = NightlyRun.objects.filter(pair=school["pair"]).order_by("-day").first()
    page.click(f"#hub-nights >> text={run.day:%Y-%m-%d}")
    page.wait_for_selector("text=Wrote")
    consolidation = run.wrote["consolidate"]["episode_id"]
    link = page.locator(f"a:text-is('episode {consolidation}')")
    assert link.count() == 1
    shot(page, "15-nightly-run-wrote")
    link.click()
    page.wait_for_url(re.compile(rf"/admin/memory/episode/{consolidation}/change/"))

    page.goto(f"/admin/beliefs/pairbeliefs/{school['pair'].pk}/report/")
    changes = page.inner_text("#report-changes")
    stamps = re.findall(r"\d{4}-\d\d-\d\d \d\d:\d\d", changes)
    assert stamps == sorted(stamps) and len(stamps) >= 2
    shot(page, "16-report-what-changed")


def test_view_site_and_the_admin_home_lead_somewhere(page, school):
    log_in(page, "staff")
    page.goto("/admin/")
    shot(page, "17-admin-home")
    page.click("text=View site")
    page.wait_for_selector("h1")
    assert page.inner_text("h1") == "tutor brain"
    shot(page, "18-view-site")
