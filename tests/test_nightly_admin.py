from __future__ import annotations

import base64

import pytest
from django.urls import reverse

from tests.nightly_helpers import DAY, a_day_of_activity
from tutorbrain.models import CalibrationSnapshot, NightlyRun, SelfModel
from tutorbrain.nightly import cycle
from tutorbrain.nightly.plot import reliability_png

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client, django_user_model):
    user = django_user_model.objects.create_superuser("admin", "a@example.org", "pw")
    client.force_login(user)
    return client


def test_the_reliability_curve_is_a_png():
    png = reliability_png([{"count": 2, "mean_predicted": 0.65, "mean_outcome": 0.5}])

    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_the_self_model_page_shows_the_curve_the_limits_and_the_last_cycle(staff_client, pair):
    a_day_of_activity(pair)
    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)
    model = SelfModel.objects.get(pair=pair)

    page = staff_client.get(reverse("admin:tutorbrain_selfmodel_change", args=[model.pk]))

    html = page.content.decode()
    assert page.status_code == 200
    src = html.split('src="data:image/png;base64,')[1].split('"')[0]
    assert base64.b64decode(src).startswith(b"\x89PNG")
    assert "ranking, not a probability" in html
    assert "consolidate" in html


def test_the_lists_take_a_bounded_number_of_queries(
    staff_client, pair, organization, django_assert_max_num_queries
):
    from tests.factories import PairFactory

    for p in [pair] + [
        PairFactory(student__organization=organization, subject=pair.subject) for _ in range(4)
    ]:
        a_day_of_activity(p)
        cycle.pair_cycle_run(pair_id=p.pk, day=DAY, embed=False)
    assert NightlyRun.objects.count() == 5

    for name in ("selfmodel", "nightlyrun", "calibrationsnapshot"):
        with django_assert_max_num_queries(12):
            page = staff_client.get(reverse(f"admin:tutorbrain_{name}_changelist"))
        assert page.status_code == 200


def test_the_calibration_page_is_read_only(staff_client, pair):
    a_day_of_activity(pair)
    cycle.pair_cycle_run(pair_id=pair.pk, day=DAY, embed=False)
    snapshot = CalibrationSnapshot.objects.get(pair=pair)

    url = reverse("admin:tutorbrain_calibrationsnapshot_change", args=[snapshot.pk])
    assert staff_client.get(url).status_code == 200
    assert staff_client.post(url, {"ece": "0"}).status_code == 403


def test_memory_staff_may_view_the_nightly_records():
    from django.contrib.auth.models import Group

    group = Group.objects.get(name="memory staff")
    codenames = set(group.permissions.values_list("codename", flat=True))

    assert {"view_nightlyrun", "view_calibrationsnapshot", "view_selfmodel"} <= codenames
