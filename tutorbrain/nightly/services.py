"""The steps of the nightly cycle (R-7), one service each.

Deterministic, no model call. Each step is given the pair, the day and the cycle's
reference time `now` (the end of the day in the nightly time zone), so running the
cycle again for the same day computes the same thing. The orchestration (claim,
step bookkeeping, retries) is in `tutorbrain.nightly.cycle`.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import (
    Case,
    Count,
    F,
    FloatField,
    IntegerField,
    Max,
    OuterRef,
    Q,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Cast, Floor, Least

from beliefs.routing import reads_like_utterance
from beliefs.selectors import beliefs_due_for_decay, checks_unlinked
from memory.models import CitationCheck, Episode, Pair
from memory.rules import CONCEPTS_MAX, SUMMARY_MAX_CHARS
from memory.selectors import answers_unanswerable
from tutorbrain.block.timewindow import student_zone
from tutorbrain.models import CalibrationSnapshot, NightlyRun, SelfModel
from tutorbrain.nightly.calibration import (
    Calibration,
    calibration_compute,
    calibration_from_sums,
    within_error,
)
from tutorbrain.nightly.rules import (
    CALIBRATION_BINS,
    CALIBRATION_MIN_PREDICTIONS,
    CONSOLIDATION_HEADLINES,
    CONSOLIDATION_TOPICS_MAX,
    KIND_NOUNS,
    SELF_MODEL_EXAMPLES,
    VERDICT_OUTCOME,
)

# --------------------------------------------------------------------------------------
# Days
# --------------------------------------------------------------------------------------


def nightly_timezone() -> ZoneInfo:
    return ZoneInfo(settings.CELERY_TIMEZONE)


def day_bounds(day: dt.date) -> tuple[dt.datetime, dt.datetime]:
    """[start, end) of a calendar day in the nightly time zone, as aware datetimes."""
    tz = nightly_timezone()
    start = dt.datetime.combine(day, dt.time.min, tzinfo=tz)
    end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time.min, tzinfo=tz)
    return start, end


def day_before(now: dt.datetime) -> dt.date:
    """The day a cycle started at `now` consolidates: yesterday in the nightly zone."""
    return now.astimezone(nightly_timezone()).date() - dt.timedelta(days=1)


def student_day(*, timezone_name: str, day: dt.date) -> tuple[dt.date, dt.datetime, dt.datetime]:
    """The student's own calendar day that the cycle of `day` consolidates, and its bounds.

    The cycle of `day` runs once that day has ended in the nightly zone. Its student-local
    counterpart is the latest day of the student's zone that has ended by then: the same
    date east of the nightly zone (or in it), the day before west of it. Consecutive
    cycles so cover consecutive local days, each once, and a day summary is dated and
    labelled in the student's zone (a Madrid student's "Day 2026-10-15" shows on 15 Oct).
    """
    zone = student_zone(timezone_name)
    _, cycle_end = day_bounds(day)
    local = cycle_end.astimezone(zone).date() - dt.timedelta(days=1)
    start = dt.datetime.combine(local, dt.time.min, tzinfo=zone)
    end = dt.datetime.combine(local + dt.timedelta(days=1), dt.time.min, tzinfo=zone)
    return local, start, end


def day_episodes(*, pair: Pair, day: dt.date):
    """The pair's episodes of the student's local `day`, consolidation notes excluded."""
    zone = student_zone(pair.student.timezone)
    start = dt.datetime.combine(day, dt.time.min, tzinfo=zone)
    end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time.min, tzinfo=zone)
    return Episode.objects.filter(pair=pair, occurred_at__gte=start, occurred_at__lt=end).exclude(
        kind=Episode.Kind.CONSOLIDATION
    )


# --------------------------------------------------------------------------------------
# Consolidation
# --------------------------------------------------------------------------------------


def consolidation_key(day: dt.date) -> str:
    return f"consolidation:{day.isoformat()}"


@dataclass(frozen=True)
class ConsolidationNote:
    summary: str
    text: str
    concepts: list[str]
    extra: dict[str, Any]


def consolidation_compose(*, pair: Pair, day: dt.date) -> ConsolidationNote | None:
    """The note of the student's local `day`: counts by kind, check balance, topics, the
    most salient headlines.

    None on a quiet day. Consolidation episodes are never part of what is summarised.
    """
    rows = list(
        day_episodes(pair=pair, day=day)
        .order_by("occurred_at", "seq")
        .values("id", "kind", "summary", "salience", "topic", "verdict", "concepts", "seq")
    )
    if not rows:
        return None
    counts = Counter(r["kind"] for r in rows)
    checks = [r for r in rows if r["kind"] == Episode.Kind.CHECK]
    balance = {v: sum(1 for r in checks if r["verdict"] == v) for v in VERDICT_OUTCOME}
    topics: list[str] = []
    concepts: list[str] = []
    for r in rows:
        # An utterance-like topic ("ok now tell me again") names nothing worth a headline.
        topic = [r["topic"]] if r["topic"] and not reads_like_utterance(r["topic"]) else []
        for name in topic + list(r["concepts"]):
            if name and name not in topics:
                topics.append(name)
        for name in r["concepts"]:
            if name not in concepts:
                concepts.append(name)
    # The most salient first; among equals the earlier one (the day's order).
    headlines = sorted(rows, key=lambda r: (-r["salience"], r["seq"]))[:CONSOLIDATION_HEADLINES]

    kinds = [k.value for k in Episode.Kind if k != Episode.Kind.CONSOLIDATION]
    count_part = ", ".join(
        f"{counts[k]} {KIND_NOUNS[k][0] if counts[k] == 1 else KIND_NOUNS[k][1]}"
        for k in kinds
        if counts[k]
    )
    balance_part = ""
    if checks:
        partial = f", {balance['partial']} partial" if balance["partial"] else ""
        balance_part = f" ({balance['right']} right, {balance['wrong']} wrong{partial})"
    topic_part = f"; topics: {', '.join(topics[:CONSOLIDATION_TOPICS_MAX])}" if topics else ""
    summary = f"Day {day.isoformat()}: {count_part}{balance_part}{topic_part}"
    if len(summary) > SUMMARY_MAX_CHARS:
        summary = summary[: SUMMARY_MAX_CHARS - 1] + "…"
    text = "\n".join(
        [summary, "Most salient:"]
        + [f"- #{h['seq']} {h['kind']}: {h['summary']}" for h in headlines]
    )
    extra = {
        "day": day.isoformat(),
        "counts": {k: counts[k] for k in kinds if counts[k]},
        "check_balance": balance,
        "topics": topics,
        "headlines": [
            {"episode_id": h["id"], "seq": h["seq"], "summary": h["summary"]} for h in headlines
        ],
        "episodes": len(rows),
    }
    return ConsolidationNote(
        summary=summary, text=text, concepts=concepts[:CONCEPTS_MAX], extra=extra
    )


def consolidation_write(
    *, pair: Pair, day: dt.date, now: dt.datetime, embed: bool = True
) -> Episode | None:
    """Append the day's consolidation episode once (R-7.1); nothing on a quiet day.

    Idempotent by the chain's idempotency key: a second run returns the existing
    episode without writing. The note happens at the last moment of its day so it
    never makes the pair look active on the next one.
    """
    from memory.services import episode_append

    local_day, _, end = student_day(timezone_name=pair.student.timezone, day=day)
    key = consolidation_key(local_day)
    existing = Episode.objects.filter(pair=pair, idempotency_key=key).first()
    if existing is not None:
        return existing
    note = consolidation_compose(pair=pair, day=local_day)
    if note is None:
        return None
    return episode_append(
        pair=pair,
        kind=Episode.Kind.CONSOLIDATION,
        summary=note.summary,
        text=note.text,
        concepts=note.concepts,
        occurred_at=end - dt.timedelta(microseconds=1),
        idempotency_key=key,
        extra=note.extra,
        now=now,
        embed=embed,
    )


# --------------------------------------------------------------------------------------
# Decay
# --------------------------------------------------------------------------------------


@transaction.atomic
def decay_apply(*, pair: Pair, now: dt.datetime) -> list[int]:
    """Decay the pair's due beliefs by supersession (R-7.2). Returns the new rows' ids."""
    from beliefs.services import belief_decay

    return [
        belief_decay(belief=belief, now=now).pk
        for belief in beliefs_due_for_decay(now=now, pair=pair)
    ]


# --------------------------------------------------------------------------------------
# Calibration
# --------------------------------------------------------------------------------------


def _predicted_checks(*, end: dt.datetime):
    return Episode.objects.filter(
        kind=Episode.Kind.CHECK, predicted_mastery__isnull=False, occurred_at__lt=end
    )


def calibration_of_pair(*, pair: Pair, day: dt.date) -> Calibration:
    _, end = day_bounds(day)
    rows = _predicted_checks(end=end).filter(pair=pair).values_list("predicted_mastery", "verdict")
    return calibration_compute(rows)


def belief_calibration_of_pair(*, pair: Pair, day: dt.date) -> Calibration:
    """The beliefs' p_right against the verdicts of the checks that followed each belief,
    up to the day's end (beliefs.calibration.belief_predictions)."""
    from beliefs.calibration import belief_predictions

    _, end = day_bounds(day)
    return calibration_compute(belief_predictions(pair=pair, before=end))


def _snapshot_write(
    *,
    pair: Pair | None,
    day: dt.date,
    now: dt.datetime,
    calibration: Calibration,
    beliefs: Calibration | None = None,
) -> CalibrationSnapshot:
    same_night = CalibrationSnapshot.objects.filter(
        Q(pair__isnull=True) if pair is None else Q(pair=pair), day=day
    )
    existing = same_night.first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            return CalibrationSnapshot.objects.create(
                pair=pair,
                day=day,
                computed_at=now,
                predicted_checks=calibration.predicted_checks,
                calibrated=calibration.calibrated,
                ece=calibration.ece,
                bins=[b.as_dict() for b in calibration.bins],
                belief_predictions=beliefs.predicted_checks if beliefs else 0,
                belief_ece=beliefs.ece if beliefs else None,
                belief_bins=[b.as_dict() for b in beliefs.bins] if beliefs else [],
            )
    except IntegrityError:
        # Another run of the same night won the race: its snapshot is the snapshot.
        return same_night.get()


@transaction.atomic
def calibration_snapshot_write(
    *, pair: Pair, day: dt.date, now: dt.datetime
) -> CalibrationSnapshot:
    """The pair's reliability curve and ECE over all its predicted checks up to the day's end,
    and the same for its beliefs' p_right against the verdicts that followed."""
    return _snapshot_write(
        pair=pair,
        day=day,
        now=now,
        calibration=calibration_of_pair(pair=pair, day=day),
        beliefs=belief_calibration_of_pair(pair=pair, day=day),
    )


def calibration_of_all_pairs(*, day: dt.date) -> Calibration:
    """The same over every pair, aggregated per bin in SQL (one query)."""
    _, end = day_bounds(day)
    outcome = Case(
        *[When(verdict=v, then=Value(y)) for v, y in VERDICT_OUTCOME.items()],
        output_field=FloatField(),
    )
    rows = (
        _predicted_checks(end=end)
        .annotate(
            bin=Least(
                Cast(Floor(F("predicted_mastery") * CALIBRATION_BINS), IntegerField()),
                Value(CALIBRATION_BINS - 1),
            )
        )
        .values("bin")
        .annotate(n=Count("pk"), sum_p=Sum("predicted_mastery"), sum_y=Sum(outcome))
        .order_by()
    )
    sums_p = [0.0] * CALIBRATION_BINS
    sums_y = [0.0] * CALIBRATION_BINS
    counts = [0] * CALIBRATION_BINS
    for r in rows:
        sums_p[r["bin"]], sums_y[r["bin"]], counts[r["bin"]] = r["sum_p"], r["sum_y"], r["n"]
    return calibration_from_sums(sums_p, sums_y, counts)


@transaction.atomic
def calibration_all_pairs_write(*, day: dt.date, now: dt.datetime) -> CalibrationSnapshot:
    return _snapshot_write(
        pair=None, day=day, now=now, calibration=calibration_of_all_pairs(day=day)
    )


# --------------------------------------------------------------------------------------
# Citation verification
# --------------------------------------------------------------------------------------


def cited_answers(*, pair: Pair):
    """The pair's answers that cite at least one file."""
    return Episode.objects.filter(
        pair=pair, kind=Episode.Kind.ANSWER, evidence__has_key="citations"
    ).exclude(evidence__citations=[])


def verification_batch(*, pair: Pair, end: dt.datetime, size: int) -> list[Episode]:
    """Up to `size` cited answers: never-checked first, then the longest since checked."""
    return list(
        cited_answers(pair=pair)
        .filter(occurred_at__lt=end)
        .annotate(last_checked=Max("citation_checks__checked_at"))
        .order_by(F("last_checked").asc(nulls_first=True), "occurred_at", "pk")[:size]
    )


@transaction.atomic
def citations_verify_batch(
    *, pair: Pair, day: dt.date, now: dt.datetime, size: int | None = None
) -> dict[str, int]:
    """Verify a bounded batch of the pair's cited answers (R-7.4). Returns counts by result."""
    from memory.services import citation_verify

    size = settings.TUTORBRAIN_VERIFY_BATCH_SIZE if size is None else size
    _, end = day_bounds(day)
    results: Counter[str] = Counter()
    for episode in verification_batch(pair=pair, end=end, size=size):
        check = citation_verify(episode=episode, now=now)
        results[check.result] += 1
    return dict(results)


# --------------------------------------------------------------------------------------
# The self-model
# --------------------------------------------------------------------------------------


def _citation_counts(*, pair: Pair) -> dict[str, int]:
    latest = (
        CitationCheck.objects.filter(episode=OuterRef("pk"))
        .order_by("-checked_at", "-pk")
        .values("result")[:1]
    )
    counted = (
        cited_answers(pair=pair)
        .annotate(latest=Subquery(latest))
        .aggregate(
            holding=Count("pk", filter=Q(latest=CitationCheck.Result.HOLDS)),
            changed=Count("pk", filter=Q(latest=CitationCheck.Result.CHANGED)),
            unverifiable=Count("pk", filter=Q(latest=CitationCheck.Result.UNVERIFIABLE)),
            unchecked=Count("pk", filter=Q(latest__isnull=True)),
        )
    )
    return {k: v or 0 for k, v in counted.items()}


@transaction.atomic
def self_model_recompose(
    *, pair: Pair, day: dt.date, now: dt.datetime, run: NightlyRun | None = None
) -> SelfModel:
    """Recompose what the memory knows about its own reliability for this pair (R-7.6)."""
    _, end = day_bounds(day)
    snapshot = CalibrationSnapshot.objects.filter(pair=pair, day=day).first()
    if snapshot is None:
        snapshot = calibration_snapshot_write(pair=pair, day=day, now=now)
    citations = _citation_counts(pair=pair)
    unlinkable = checks_unlinked(pair=pair, before=end)
    unlinkable_examples = list(
        unlinkable.order_by("-occurred_at", "-pk").values("id", "topic", "summary")[
            :SELF_MODEL_EXAMPLES
        ]
    )
    unanswerable = answers_unanswerable(pair=pair, before=end)
    unanswerable_examples = [
        {"answer_id": r["id"], "question": r["question"] or "", "answer": r["summary"]}
        for r in unanswerable.order_by("-occurred_at", "-pk").values("id", "question", "summary")[
            :SELF_MODEL_EXAMPLES
        ]
    ]
    values = {
        "day": day,
        "computed_at": now,
        # Earned by the tutor's predictions and by the beliefs' own p_right (issue #12),
        # each from five checks and within CALIBRATION_MAX_ECE of its outcomes.
        "calibrated": snapshot.calibrated
        and snapshot.belief_predictions >= CALIBRATION_MIN_PREDICTIONS
        and within_error(snapshot.belief_ece),
        "predicted_checks": snapshot.predicted_checks,
        "ece": snapshot.ece,
        "belief_predictions": snapshot.belief_predictions,
        "belief_ece": snapshot.belief_ece,
        "calibration": snapshot,
        "citations_holding": citations["holding"],
        "citations_changed": citations["changed"],
        "citations_unverifiable": citations["unverifiable"],
        "citations_unchecked": citations["unchecked"],
        "unlinkable_checks": unlinkable.count(),
        "unlinkable_examples": unlinkable_examples,
        "unanswerable_questions": unanswerable.count(),
        "unanswerable_examples": unanswerable_examples,
    }
    if run is not None:
        values["last_run"] = run
    model, _ = SelfModel.objects.update_or_create(pair=pair, defaults=values)
    return model
