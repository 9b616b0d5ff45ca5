"""The admin as teachers and staff expect it (issue 16), page by page on the real database:
organizations told apart, teaching from a button, one episode identifier with links,
readable numbers, empty states that say what to do, histories in time order, the hub."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from beliefs.models import Belief
from concepts.models import Concept, TaughtNote
from concepts.services import concept_teach
from memory.models import ChainVerification
from memory.services import episode_append
from tests.factories import OrganizationFactory, PairFactory, StudentFactory, SubjectFactory
from tests.nightly_helpers import DAY, a_day_of_activity
from tutorbrain.models import NightlyRun
from tutorbrain.nightly import cycle
from tutorbrain.nightly.plot import reliability_points, wilson_interval

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def staff_client(client, django_user_model):
    user = django_user_model.objects.create_superuser("boss", "b@example.org", "pw")
    client.force_login(user)
    return client


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run a function with its on-commit work done, as in production (beliefs follow checks)."""

    def run(function, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return function(*args, **kwargs)

    return run


@pytest.fixture
def schools(committed):
    """Two organizations, each with a "Cell biology" subject, a student with a day of
    checks behind a belief, and a nightly run: a row in every list."""
    subjects = []
    for school in ("Demo school", "Other school"):
        organization = OrganizationFactory(name=school)
        subject = SubjectFactory(organization=organization, name="Cell biology")
        concept_teach(subject=subject, name="Osmosis", note=f"as taught at {school}")
        concept_teach(subject=subject, name="fractions", note="parts of a whole")
        pair = PairFactory(student=StudentFactory(organization=organization), subject=subject)
        committed(a_day_of_activity, pair)
        cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)
        subjects.append(subject)
    return subjects


# --- organizations -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "changelist",
    [
        "concepts_concept",
        "concepts_subjectmap",
        "concepts_taughtnote",
        "beliefs_belief",
        "beliefs_pairbeliefs",
        "memory_pair",
        "memory_episode",
        "tutorbrain_studentsubject",
        "tutorbrain_nightlyrun",
        "tutorbrain_selfmodel",
    ],
)
def test_every_list_has_an_organization_filter_and_column(staff_client, changelist, schools):

    html = staff_client.get(reverse(f"admin:{changelist}_changelist")).content.decode()

    assert 'id="changelist-filter"' in html
    assert "By organization" in html and "Other school" in html
    assert re.search(r'class="[^"]*column-organization', html)


def test_subjects_with_one_name_are_told_apart_by_their_organization(staff_client, schools):
    demo, other = schools

    html = staff_client.get(reverse("admin:concepts_concept_changelist")).content.decode()
    assert "Cell biology (Demo school)" in html and "Cell biology (Other school)" in html

    filtered = staff_client.get(
        reverse("admin:concepts_concept_changelist"),
        {"subject__organization__id__exact": other.organization_id},
    ).content.decode()
    rows = re.findall(r"<tr>.*?</tr>", filtered.split("<tbody>")[1], re.S)
    assert len(rows) == 2 and all("Other school" in r and "Demo school" not in r for r in rows)


# --- teaching ------------------------------------------------------------------------------


def test_a_concept_page_and_each_map_row_have_a_teach_button_that_teaches(staff_client, schools):
    subject, _ = schools
    osmosis = Concept.objects.get(subject=subject, name="Osmosis")
    teach_url = reverse("admin:concepts_concept_teach", args=[osmosis.pk])

    concept_page = staff_client.get(reverse("admin:concepts_concept_change", args=[osmosis.pk]))
    map_page = staff_client.get(reverse("admin:concepts_subjectmap_change", args=[subject.pk]))
    assert f'href="{teach_url}"' in concept_page.content.decode()
    assert f'href="{teach_url}"' in map_page.content.decode()

    form = staff_client.get(teach_url).content.decode()
    assert "Map of Cell biology" in form  # a breadcrumb back to the map, not "Home › Teach"
    response = staff_client.post(teach_url, {"note": "water follows the salt"})

    assert response.status_code == 302
    assert response.url == reverse("admin:concepts_concept_change", args=[osmosis.pk])
    assert osmosis.taught_notes.filter(note="water follows the salt").exists()


def test_teaching_a_new_concept_keeps_what_was_typed_when_it_is_refused(staff_client, schools):
    subject, _ = schools
    url = reverse("admin:concepts_subjectmap_teach_new", args=[subject.pk])

    missing_note = staff_client.post(url, {"name": "Turgor pressure", "note": ""})

    html = missing_note.content.decode()
    assert missing_note.status_code == 200
    assert 'value="Turgor pressure"' in html and "This field is required" in html
    assert not Concept.objects.filter(subject=subject, name="Turgor pressure").exists()


def test_teaching_a_new_concept_with_a_name_in_the_map_says_so_and_adds_nothing(
    staff_client, schools
):
    subject, _ = schools
    osmosis = Concept.objects.get(subject=subject, name="Osmosis")
    notes_before = TaughtNote.objects.count()

    response = staff_client.post(
        reverse("admin:concepts_subjectmap_teach_new", args=[subject.pk]),
        {"name": "osmosis", "note": "water crosses membranes"},
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert "already exists in this map" in html
    assert reverse("admin:concepts_concept_teach", args=[osmosis.pk]) in html
    assert "water crosses membranes" in html  # the note is kept in the form
    assert TaughtNote.objects.count() == notes_before


def test_teaching_a_new_concept_creates_it_and_says_so(staff_client, schools):
    subject, _ = schools

    response = staff_client.post(
        reverse("admin:concepts_subjectmap_teach_new", args=[subject.pk]),
        {"name": "Turgor pressure", "note": "the push of water on the cell wall"},
        follow=True,
    )

    assert "Taught a new concept: Turgor pressure." in response.content.decode()
    assert Concept.objects.get(subject=subject, name="Turgor pressure").layer == "taught"


def test_the_layer_column_and_the_picture_legend_use_different_words(staff_client, schools):
    subject, _ = schools

    html = staff_client.get(
        reverse("admin:concepts_subjectmap_change", args=[subject.pk])
    ).content.decode()
    table = html.split("Concepts in teaching order")[1]

    # "where it came from" (the layer) never repeats a readiness band's words.
    assert "added by a person teaching" in table
    assert "taught by a person (1.00)" in table  # the band, as in the legend
    assert "taught by a person (1.00)" in html.split("Concepts in teaching order")[0]
    assert "the files explain" not in html


# --- one episode identifier --------------------------------------------------------------


def test_an_episode_is_named_by_its_id_everywhere_and_its_link_opens_it(staff_client):
    pair = PairFactory()
    PairFactory(subject=pair.subject)  # another chain, so ids and seqs differ
    other = PairFactory()
    for i in range(3):
        episode_append(pair=other, kind="question", summary=f"q{i}", embed=False)
    episode = episode_append(pair=pair, kind="question", summary="Why?", embed=False)
    nxt = episode_append(pair=pair, kind="question", summary="And?", embed=False)
    assert episode.pk != episode.seq

    page = staff_client.get(reverse("admin:memory_episode_change", args=[nxt.pk]))
    html = page.content.decode()
    url = reverse("admin:memory_episode_change", args=[episode.pk])
    assert f'<a href="{url}">episode {episode.pk}</a> (seq {episode.seq})' in html
    assert str(nxt) == f"episode {nxt.pk} (seq {nxt.seq}) question: And?"


def test_the_nightly_run_shows_what_it_wrote_as_links_and_no_raw_numbers(staff_client, pair):
    a_day_of_activity(pair)
    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)
    run = NightlyRun.objects.get(pair=pair)
    consolidation = run.wrote["consolidate"]["episode_id"]

    html = staff_client.get(
        reverse("admin:tutorbrain_nightlyrun_change", args=[run.pk])
    ).content.decode()

    url = reverse("admin:memory_episode_change", args=[consolidation])
    assert f'<a href="{url}">episode {consolidation}</a>' in html
    assert '{"' not in html and "{&quot;" not in html and "{&#x27;" not in html
    assert not re.search(r"\d\.\d{6,}", html), "a raw float on the page"


# --- the reliability curve -----------------------------------------------------------------


def test_the_wilson_interval_is_wide_for_ten_checks_and_narrow_for_a_thousand():
    low, high = wilson_interval(0.7, 10)
    assert (round(low, 3), round(high, 3)) == (0.397, 0.892)
    low_k, high_k = wilson_interval(0.7, 1000)
    assert high_k - low_k < 0.06 < high - low
    assert wilson_interval(1.0, 5)[1] == pytest.approx(1.0)
    assert wilson_interval(0.0, 5)[0] == pytest.approx(0.0)


def test_the_curve_draws_one_point_per_filled_bin_with_its_count_and_interval():
    bins = [
        {"lower": 0.0, "upper": 0.1, "count": 0, "mean_predicted": None, "mean_outcome": None},
        {"lower": 0.9, "upper": 1.0, "count": 4, "mean_predicted": 0.97, "mean_outcome": 1.0},
    ]

    [point] = reliability_points(bins)

    assert point["count"] == 4 and point["y"] == 1.0 and point["high"] == pytest.approx(1.0)
    assert 0.4 < point["low"] < 0.55


# --- histories in time order ----------------------------------------------------------------


def test_a_back_filled_history_gives_beliefs_written_in_time_order(pair, committed):
    """A check logged with the importer's clock derives its belief as of that clock, so the
    nightly decay rows of the days between fall into place (the demo did the opposite)."""
    concept_teach(subject=pair.subject, name="Osmosis", note="water moves")
    for i, verdict in enumerate(["wrong", "right", "right"]):
        at = T0 + timedelta(days=30 * i)
        committed(
            episode_append,
            pair=pair,
            kind="check",
            summary=f"check {i}",
            topic="Osmosis",
            verdict=verdict,
            occurred_at=at,
            now=at,
            embed=False,
        )
    rows = list(Belief.objects.filter(pair=pair).order_by("pk"))
    assert len(rows) >= 2
    assert [r.created_at for r in rows] == sorted(r.created_at for r in rows)
    assert rows[-1].created_at <= T0 + timedelta(days=60)


def test_the_report_tells_what_changed_in_time_order_with_links(staff_client, pair, committed):
    concept_teach(subject=pair.subject, name="Osmosis", note="water moves")
    for i, verdict in enumerate(["wrong", "right", "right", "right"]):
        at = T0 + timedelta(days=i)
        committed(
            episode_append,
            pair=pair,
            kind="check",
            summary=f"check {i}",
            topic="Osmosis",
            verdict=verdict,
            occurred_at=at,
            now=at,
            embed=False,
        )
    html = staff_client.get(
        reverse("admin:beliefs_pairbeliefs_report", args=[pair.pk])
    ).content.decode()

    changes = html.split('id="report-changes"')[1].split("</ul>")[0]
    stamps = re.findall(r"(\d{4}-\d\d-\d\d \d\d:\d\d) UTC", changes)
    assert len(stamps) >= 2 and stamps == sorted(stamps)
    assert (
        reverse("admin:beliefs_belief_change", args=[Belief.objects.current().get().pk]) in changes
    )
    assert re.search(r'href="/admin/memory/episode/\d+/change/">episode \d+</a>', changes)


# --- the hub, the preview, the landing page --------------------------------------------------


def test_the_hub_shows_beliefs_episodes_chain_nights_and_a_prefilled_preview(
    staff_client, pair, committed
):
    concept_teach(subject=pair.subject, name="fractions", note="parts of a whole")
    committed(a_day_of_activity, pair)
    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)
    url = reverse("admin:tutorbrain_studentsubject_change", args=[pair.pk])

    html = staff_client.get(url).content.decode()

    for section in ("hub-beliefs", "hub-episodes", "hub-chain", "hub-preview", "hub-nights"):
        assert f'id="{section}"' in html
    beliefs = html.split('id="hub-beliefs"')[1].split("</section>")[0]
    assert "fractions" in beliefs.lower() and "timeline</a>" in beliefs
    [belief] = Belief.objects.current().filter(pair=pair)
    assert "p_right" in beliefs and f"<td>{belief.p_right:.2f}</td>" in beliefs
    assert "No verification yet — use <em>Verify chain</em>" in html
    assert f'name="student" value="{pair.student.external_id}"' in html
    assert 'src="data:image/png;base64,' in html


def test_verify_chain_on_the_hub_records_a_verification(staff_client, pair):
    a_day_of_activity(pair)
    url = reverse("admin:tutorbrain_studentsubject_verify", args=[pair.pk])

    response = staff_client.post(url, follow=True)

    assert ChainVerification.objects.get(pair=pair).intact
    assert "Chain verified: intact, 4 episodes" in response.content.decode()
    assert "Last verified" in response.content.decode()


def test_the_hub_says_what_to_do_when_nothing_happened_yet(staff_client):
    pair = PairFactory()

    html = staff_client.get(
        reverse("admin:tutorbrain_studentsubject_change", args=[pair.pk])
    ).content.decode()

    assert "No current beliefs yet" in html and "No episode yet" in html
    assert "No nightly run yet" in html and "No calibration yet" in html


def test_the_block_preview_takes_a_display_name_and_says_why_a_block_is_empty(staff_client):
    organization = OrganizationFactory()
    student = StudentFactory(organization=organization, display_name="Ana Souza")
    subject = SubjectFactory(organization=organization, name="Cell biology")
    pair = PairFactory(student=student, subject=subject)
    episode = episode_append(pair=pair, kind="question", summary="What is osmosis?", embed=False)
    url = reverse("block-preview")

    by_name = staff_client.get(
        url,
        {"organization": organization.pk, "student": "ana souza", "subject": "Cell biology",
         "message": "osmosis", "budget": 900},
    ).content.decode()  # fmt: skip
    typo = staff_client.get(
        url,
        {"organization": organization.pk, "student": student.external_id, "subject": "biologyy",
         "budget": 900},
    ).content.decode()  # fmt: skip

    assert "that id was used" in by_name and f">episode {episode.pk}</a>" in by_name
    assert "has no subject with the id “biologyy”" in typo


def test_the_pair_page_links_to_a_prefilled_block_preview(staff_client, pair):
    html = staff_client.get(
        reverse("admin:beliefs_pairbeliefs_change", args=[pair.pk])
    ).content.decode()

    link = re.search(r'href="([^"]+)" id="preview-block-link"', html).group(1)
    assert link.startswith(reverse("block-preview")) and pair.student.external_id in link


def test_view_site_opens_a_page_and_the_admin_index_points_to_the_tools(staff_client):
    home = staff_client.get("/")
    index = staff_client.get(reverse("admin:index")).content.decode()

    assert home.status_code == 200 and 'href="/admin/"' in home.content.decode()
    assert reverse("block-preview") in index
    assert reverse("admin:tutorbrain_studentsubject_changelist") in index


def test_a_rederivation_started_on_a_pair_page_returns_there_and_never_elsewhere(
    staff_client, pair
):
    hub = reverse("admin:tutorbrain_studentsubject_change", args=[pair.pk])
    post = {"action": "rederive_selected", "_selected_action": [pair.pk], "confirm": "yes"}
    changelist = reverse("admin:beliefs_pairbeliefs_changelist")

    back = staff_client.post(changelist, {**post, "next": hub})
    elsewhere = staff_client.post(changelist, {**post, "next": "https://evil.example/"})

    assert back.status_code == 302 and back.url == hub
    assert elsewhere.status_code == 302 and "evil" not in elsewhere.url
