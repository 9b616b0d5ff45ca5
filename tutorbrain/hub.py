"""Reads for the student-subject hub page: one student's story in one place.

Selectors only: the page shows what the memory, beliefs and nightly records hold.
A fixed number of queries whatever the history's length.
"""

from __future__ import annotations

from dataclasses import dataclass

from beliefs.selectors import PairOverview, pair_overview
from memory.models import ChainVerification, Episode, Pair
from tutorbrain.models import CalibrationSnapshot, NightlyRun, SelfModel

HUB_RECENT_EPISODES = 12
HUB_RECENT_NIGHTS = 7


@dataclass(frozen=True)
class Hub:
    pair: Pair
    beliefs: PairOverview
    recent_episodes: list[Episode]
    last_verification: ChainVerification | None
    nights: list[NightlyRun]
    self_model: SelfModel | None
    calibration: CalibrationSnapshot | None


def student_subject_hub(*, pair: Pair) -> Hub:
    pair = Pair.objects.select_related("student", "subject__organization").get(pk=pair.pk)
    recent = list(
        Episode.objects.filter(pair=pair)
        .only("pk", "seq", "kind", "summary", "verdict", "occurred_at", "pair_id")
        .order_by("-occurred_at", "-seq")[:HUB_RECENT_EPISODES]
    )
    verification = (
        ChainVerification.objects.filter(pair=pair).order_by("-checked_at", "-pk").first()
    )
    nights = list(NightlyRun.objects.filter(pair=pair).order_by("-day", "-pk")[:HUB_RECENT_NIGHTS])
    self_model = SelfModel.objects.filter(pair=pair).select_related("calibration").first()
    calibration = (
        self_model.calibration
        if self_model is not None and self_model.calibration_id
        else CalibrationSnapshot.objects.filter(pair=pair).order_by("-day", "-pk").first()
    )
    return Hub(
        pair=pair,
        beliefs=pair_overview(pair=pair),
        recent_episodes=recent,
        last_verification=verification,
        nights=nights,
        self_model=self_model,
        calibration=calibration,
    )
