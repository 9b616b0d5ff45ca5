"""Reads of the beliefs app: the block's current beliefs, chains, the per-pair overview and
the honest report (R-4.6)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from django.db import connections, router
from django.db.models import (
    Exists,
    Max,
    OuterRef,
    Prefetch,
    Q,
    Subquery,
)

from beliefs import learning, rules
from beliefs.models import Belief, BeliefEvidence, BeliefLearningFit, Rederivation
from beliefs.routing import reads_like_utterance
from concepts.models import Concept, SubjectMap
from memory.models import Episode, Pair
from memory.selectors import answers_unanswerable

# How many changes (rows that supersede another) the report lists, newest first.
REPORT_CHANGES_MAX = 50
# How many questions the files could not answer the report lists, newest first.
REPORT_UNANSWERED_MAX = 50


def beliefs_current(*, pair: Pair) -> list[Belief]:
    """Current beliefs of a pair for the block: struggles first, then most confident.

    What the tutor needs first is where the student struggles; within a claim the most
    confident belief is the most useful line. Uses belief_current_pair_idx.
    """
    return list(
        Belief.objects.current()
        .filter(pair=pair)
        .select_related("concept")
        # The concept's 512-d vector is never read from a belief; sent as text and
        # parsed in Python it cost more than the rest of the query (32 concepts: ~4 ms).
        .defer("concept__embedding")
        .order_by("claim", "-confidence", "concept__name")
    )


# belief_lines_current's statement: Belief.objects.current().filter(pair=...) as plain
# SQL (every block runs it; the ORM's compilation cost more CPU than the query).
_LINES_CURRENT_SQL = f"""
    SELECT b.claim, c.name, b.confidence, b.needs_confirmation, b.p_right
    FROM {Belief._meta.db_table} b
    JOIN {Concept._meta.db_table} c ON c.id = b.concept_id
    WHERE b.pair_id = %s AND b.superseded_by_id IS NULL AND b.reason <> %s
    ORDER BY b.claim, b.confidence DESC, c.name
"""


def belief_lines_current(*, pair: Pair) -> list[tuple[str, str, float, bool, float | None]]:
    """(claim, concept name, confidence, needs_confirmation, p_right) of the current
    beliefs: what the memory block shows, as plain rows. Building 32 full beliefs and
    their concepts as model instances cost ~6 ms a turn; these cost a query. Read
    where the router sends Belief reads (a replica inside a block build)."""
    with connections[router.db_for_read(Belief)].cursor() as cursor:
        cursor.execute(_LINES_CURRENT_SQL, [pair.pk, Belief.Reason.RETIREMENT.value])
        return [tuple(row) for row in cursor.fetchall()]


def concept_priors(*, subject_id: int, exclude_pair_id: int | None = None) -> rules.PriorTable:
    """The empirical-Bayes prior of concepts of a subject (beliefs.rules.priors_from_rows).

    From the current beliefs of the subject's students other than `exclude_pair_id` (a
    student's own checks are their evidence, not their prior): one query for the rows'
    counts, every concept of the subject (the prior strength, the subject's rate and the
    weight of a student's level are pooled over all of them). Rows written before
    `right_count` existed are not counted. With the subject's newest learning fit (one
    more query), the table carries it and the priors come from the fitted model.
    """
    qs = Belief.objects.current().filter(
        pair__subject_id=subject_id, right_count__isnull=False, check_count__gt=0
    )
    if exclude_pair_id is not None:
        qs = qs.exclude(pair_id=exclude_pair_id)
    rows = list(qs.values_list("pair_id", "concept_id", "right_count", "check_count"))
    table = rules.priors_from_rows(rows)
    model = learning_model_latest(subject_id=subject_id)
    return table if model is None else replace(table, learning=model)


def learning_model_latest(*, subject_id: int) -> learning.LearningModel | None:
    """The subject's newest fitted learning model (beliefs.learning), None before the
    first fit. One query (learning_fit_subject_idx)."""
    coefficients = (
        BeliefLearningFit.objects.filter(subject_id=subject_id)
        .order_by("-created_at", "-id")
        .values_list("coefficients", flat=True)
        .first()
    )
    return None if coefficients is None else learning.LearningModel.from_json(coefficients)


def learning_fit_latest(*, subject_id: int) -> BeliefLearningFit | None:
    return (
        BeliefLearningFit.objects.filter(subject_id=subject_id)
        .order_by("-created_at", "-id")
        .first()
    )


def subject_check_histories(*, subject_id: int) -> dict[int, list[learning.LoggedOutcome]]:
    """Every routed check of the subject's students, per pair: the training rows of the
    learning model. The current beliefs' evidence is exactly the checks routed to their
    concepts (a new row links all of them). One query."""
    rows = (
        BeliefEvidence.objects.filter(
            belief__pair__subject_id=subject_id,
            belief__superseded_by__isnull=True,
            episode__kind=Episode.Kind.CHECK,
        )
        .exclude(belief__reason=Belief.Reason.RETIREMENT)
        .values_list(
            "belief__pair_id",
            "belief__concept_id",
            "episode_id",
            "episode__occurred_at",
            "episode__verdict",
        )
    )
    return learning.histories_from_rows(rows)


def pairs_with_current_beliefs(*, subject_ids: Sequence[int]) -> list[int]:
    """The ids of the subjects' pairs that hold at least one current belief, sorted."""
    return sorted(
        set(
            Belief.objects.current()
            .filter(pair__subject_id__in=subject_ids)
            .values_list("pair_id", flat=True)
        )
    )


def checks_waiting_for_a_concept(*, map_changed_since: datetime) -> dict[int, list[tuple]]:
    """Checks no current belief cites (as `checks_unlinked` counts them), in the subjects
    whose map was recomputed since the given time (a map that did not change routes
    nothing new): subject id -> [(pair id, topic, assessment)]. Utterances are among
    them; the router tells them apart."""
    subject_ids = list(
        SubjectMap.objects.filter(computed_at__gte=map_changed_since).values_list(
            "subject_id", flat=True
        )
    )
    if not subject_ids:
        return {}  # most nights: no map changed, no check is read
    rows = (
        Episode.objects.filter(kind=Episode.Kind.CHECK, pair__subject_id__in=subject_ids)
        # As checks_unlinked counts them; an anti-join on the link's index.
        .exclude(_cited_by_a_current_belief())
        .order_by("pair__subject_id", "pair_id", "seq")
        .values_list("pair__subject_id", "pair_id", "topic", "evidence")
    )
    waiting: dict[int, list[tuple]] = {}
    for subject_id, pair_id, topic, evidence in rows:
        assessment = str((evidence or {}).get("assessment", ""))
        waiting.setdefault(subject_id, []).append((pair_id, topic, assessment))
    return waiting


def pair_own_counts(*, pair_id: int) -> dict[int, tuple[float, int]]:
    """(right, checks) per concept from the pair's current beliefs: the student's level on
    the subject (beliefs.rules.PriorTable.for_student). One query."""
    return {
        concept_id: (right, n)
        for concept_id, right, n in Belief.objects.current()
        .filter(pair_id=pair_id, right_count__isnull=False)
        .values_list("concept_id", "right_count", "check_count")
    }


def belief_chain(*, belief: Belief) -> list[Belief]:
    """The whole supersession chain `belief` belongs to, oldest to newest.

    All rows of one (pair, concept) form one chain: every new row supersedes the head.
    One query for the rows, one for their evidence (episodes in chain order).
    """
    rows = list(
        Belief.objects.filter(pair_id=belief.pair_id, concept_id=belief.concept_id)
        .select_related("concept", "pair__student", "pair__subject")
        .prefetch_related(
            Prefetch(
                "evidence_links",
                queryset=BeliefEvidence.objects.select_related("episode")
                .only(
                    "belief_id",
                    "episode__id",
                    "episode__seq",
                    "episode__kind",
                    "episode__summary",
                    "episode__topic",
                    "episode__verdict",
                    "episode__occurred_at",
                    "episode__pair_id",
                )
                .order_by("episode__seq"),
            )
        )
    )
    return _ordered_chain(rows)


def _ordered_chain(rows: list[Belief]) -> list[Belief]:
    predecessor = {r.superseded_by_id: r for r in rows if r.superseded_by_id is not None}
    firsts = [r for r in rows if r.pk not in predecessor]
    by_id = {r.pk: r for r in rows}
    ordered: list[Belief] = []
    for first in sorted(firsts, key=lambda r: (r.created_at, r.pk)):
        row: Belief | None = first
        while row is not None and row not in ordered:
            ordered.append(row)
            row = by_id.get(row.superseded_by_id) if row.superseded_by_id else None
    return ordered


def beliefs_due_for_decay(*, now: datetime, pair: Pair | None = None) -> list[Belief]:
    """Current beliefs not yet waiting for confirmation whose newest check is older than
    the decay age (R-7.2).

    The newest check is the newest *evidence* of the row: a check that confirmed a belief
    without changing it was linked to the row without a new row, so `last_evidence_at`
    alone can be older than the truth.
    """
    cutoff = now - timedelta(days=rules.BELIEF_DECAY_AFTER_DAYS)
    qs = Belief.objects.current().filter(needs_confirmation=False, last_evidence_at__lte=cutoff)
    if pair is not None:
        qs = qs.filter(pair=pair)
    newest = (
        BeliefEvidence.objects.filter(belief=OuterRef("pk"))
        .order_by("-episode__occurred_at")
        .values("episode__occurred_at")[:1]
    )
    qs = qs.annotate(newest_evidence_at=Subquery(newest)).filter(
        Q(newest_evidence_at__isnull=True) | Q(newest_evidence_at__lte=cutoff)
    )
    return list(qs.select_related("concept").order_by("pk"))


# --------------------------------------------------------------------------------------
# The per-pair overview (admin)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CurrentBeliefLine:
    belief: Belief
    chain_length: int


@dataclass(frozen=True)
class PairOverview:
    pair: Pair
    current: list[CurrentBeliefLine]
    retired_concepts: int  # chains ending in a retirement (no check routes there today)
    total_rows: int
    last_rederivation: Rederivation | None


def _chain_lengths(pair: Pair) -> tuple[dict[int, int], int]:
    """Chain length of every head row of the pair (one query over the pair's rows)."""
    rows = list(Belief.objects.filter(pair=pair).values_list("pk", "superseded_by_id"))
    previous = {succ: pk for pk, succ in rows if succ is not None}
    lengths: dict[int, int] = {}
    for pk, succ in rows:
        if succ is None:
            n, cursor = 1, pk
            while cursor in previous:
                cursor = previous[cursor]
                n += 1
            lengths[pk] = n
    return lengths, len(rows)


def pair_last_rederivation(*, pair: Pair) -> Rederivation | None:
    return (
        Rederivation.objects.filter(pair=pair)
        .select_related("requested_by")
        .order_by("-created_at", "-pk")
        .first()
    )


def pair_overview(*, pair: Pair) -> PairOverview:
    lengths, total = _chain_lengths(pair)
    current = beliefs_current(pair=pair)
    retired = Belief.objects.filter(
        pair=pair, superseded_by__isnull=True, reason=Belief.Reason.RETIREMENT
    ).count()
    return PairOverview(
        pair=pair,
        current=[CurrentBeliefLine(b, lengths.get(b.pk, 1)) for b in current],
        retired_concepts=retired,
        total_rows=total,
        last_rederivation=pair_last_rederivation(pair=pair),
    )


# --------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportBelief:
    concept: str
    claim: str
    claim_label: str
    confidence: float
    # The predicted probability of a right answer on the next check; None only
    # for a row written before it existed.
    p_right: float | None
    needs_confirmation: bool
    checks: int
    last_check_at: datetime | None
    since: datetime
    reason: str


@dataclass(frozen=True)
class ReportChange:
    belief_id: int
    concept: str
    at: datetime
    reason: str
    reason_label: str
    before_claim: str
    before_confidence: float
    before_p_right: float | None
    after_claim: str
    after_confidence: float
    after_p_right: float | None
    new_evidence_episode_ids: list[int]
    sentence: str


@dataclass(frozen=True)
class ReportQuestion:
    answer_episode_id: int
    question: str
    asked_at: datetime
    reported_at: datetime


@dataclass
class PairReport:
    student: str
    subject: str
    checks_total: int
    checks_linked: int
    checks_unlinked: int
    checks_unlinked_utterances: int
    checks_sentence: str
    beliefs: list[ReportBelief]
    beliefs_sentence: str
    changes: list[ReportChange]
    changes_sentence: str
    unanswered: list[ReportQuestion]
    unanswered_sentence: str
    last_rederivation_at: datetime | None
    notes: list[str] = field(default_factory=list)


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def checks_sentence(*, total: int, linked: int) -> str:
    """The honest sentence about checks (R-4.6): never "no checks yet" when there are."""
    if total == 0:
        return "No checks are on record yet."
    on_record = f"{_plural(total, 'check is', 'checks are')} on record"
    if linked == 0:
        return f"{on_record}, but none could be linked to a concept in the map yet."
    if linked == total:
        both = "it is" if total == 1 else "all are"
        return f"{on_record}; {both} linked to a concept in the map."
    unlinked = total - linked
    return (
        f"{on_record}; {linked} linked to a concept in the map, {unlinked} could not be linked yet."
    )


def _claim_text(claim: str) -> str:
    return Belief.Claim(claim).label


def _change_sentence(before: Belief, after: Belief) -> str:
    concept = after.concept.name
    old = f"{_claim_text(before.claim)} {concept} ({before.confidence:.2f})"
    new = f"{_claim_text(after.claim)} {concept} ({after.confidence:.2f})"
    if after.reason == Belief.Reason.RETIREMENT:
        return f"Retired “{old}” before a re-derivation."
    if after.reason == Belief.Reason.DECAY:
        towards = (
            f" (p_right moved towards the concept's prior {after.prior_right:.2f})"
            if after.prior_right is not None
            else ""
        )
        return (
            f"“{old}” decayed to {after.confidence:.2f}{towards}: no check for "
            f"{rules.BELIEF_DECAY_AFTER_DAYS} days; the next check confirms it."
        )
    if after.reason == Belief.Reason.REDERIVATION:
        waiting = (
            f", decayed: no check for {rules.BELIEF_DECAY_AFTER_DAYS} days; the next check "
            "confirms it"
            if after.needs_confirmation
            else ""
        )
        same = before.claim == after.claim and before.confidence == after.confidence
        unchanged = ", as before" if same and before.reason == Belief.Reason.RETIREMENT else ""
        return (
            f"Re-derived from {_plural(after.check_count, 'check', 'checks')}: "
            f"“{new}”{unchanged}{waiting}."
        )
    return f"New evidence changed “{old}” to “{new}”."


def _cited_by_a_current_belief() -> Exists:
    """For an episode query: some current belief (not a retirement) cites the episode."""
    return Exists(
        BeliefEvidence.objects.filter(
            episode=OuterRef("pk"), belief__superseded_by__isnull=True
        ).exclude(belief__reason=Belief.Reason.RETIREMENT)
    )


def checks_unlinked(*, pair: Pair, before: datetime | None = None):
    """The pair's checks no current belief cites (R-4.6, R-7.6): their topic routed to no
    concept, or only a retired belief cites them (its concept left the map)."""
    checks = Episode.objects.filter(pair=pair, kind=Episode.Kind.CHECK)
    if before is not None:
        checks = checks.filter(occurred_at__lt=before)
    return checks.exclude(_cited_by_a_current_belief())


def pair_report(*, pair: Pair) -> PairReport:
    """What the memory can honestly say about one student-subject (R-4.6).

    Counts come from the log (checks) and from the current rows' evidence (linked checks);
    beliefs only from current rows; nothing is estimated where there is no row.
    """
    pair = Pair.objects.select_related("student", "subject").get(pk=pair.pk)
    total = Episode.objects.filter(pair=pair, kind=Episode.Kind.CHECK).count()
    unlinked_topics = list(checks_unlinked(pair=pair).values_list("topic", flat=True))
    linked = total - len(unlinked_topics)
    utterances = sum(1 for topic in unlinked_topics if reads_like_utterance(topic))

    current = beliefs_current(pair=pair)
    beliefs = [
        ReportBelief(
            concept=b.concept.name,
            claim=b.claim,
            claim_label=_claim_text(b.claim),
            confidence=b.confidence,
            p_right=b.p_right,
            needs_confirmation=b.needs_confirmation,
            checks=b.check_count,
            last_check_at=b.last_evidence_at,
            since=b.created_at,
            reason=b.reason,
        )
        for b in current
    ]
    if beliefs:
        beliefs_sentence = f"{_plural(len(beliefs), 'current belief', 'current beliefs')}."
    elif total:
        beliefs_sentence = (
            "No current beliefs: no check on record is linked to a concept of the map, "
            "so nothing is claimed about this student's understanding."
        )
    else:
        beliefs_sentence = "No current beliefs: there are no checks to derive them from."

    changes = _report_changes(pair)
    changes_sentence = (
        f"{_plural(len(changes), 'change', 'changes')} to the beliefs, in time order "
        "(each row that superseded another, with the reason)."
        if changes
        else "No belief has changed since it was first formed."
        if current
        else "Nothing has changed: there are no beliefs."
    )

    unanswered = _report_unanswered(pair)
    unanswered_sentence = (
        f"{_plural(len(unanswered), 'question', 'questions')} the files could not answer."
        if unanswered
        else "No answer is on record as one the files could not give."
    )
    last = pair_last_rederivation(pair=pair)
    notes = []
    if total and linked < total and utterances:
        notes.append(
            f"{_plural(utterances, 'unlinked check reads', 'unlinked checks read')} like the "
            "student's own words rather than a topic; they stay on record as evidence."
        )
    return PairReport(
        student=pair.student.external_id,
        subject=pair.subject.external_id,
        checks_total=total,
        checks_linked=linked,
        checks_unlinked=total - linked,
        checks_unlinked_utterances=utterances,
        checks_sentence=checks_sentence(total=total, linked=linked),
        beliefs=beliefs,
        beliefs_sentence=beliefs_sentence,
        changes=changes,
        changes_sentence=changes_sentence,
        unanswered=unanswered,
        unanswered_sentence=unanswered_sentence,
        last_rederivation_at=last.created_at if last else None,
        notes=notes,
    )


def _report_changes(pair: Pair) -> list[ReportChange]:
    """The newest rows that supersede another, told in time order (two queries)."""
    rows = list(
        Belief.objects.filter(pair=pair, supersedes__isnull=False)
        .select_related("concept", "supersedes")
        .order_by("-created_at", "-pk")[:REPORT_CHANGES_MAX]
    )
    before_evidence: dict[int, set[int]] = {}
    after_evidence: dict[int, set[int]] = {}
    ids_before = [r.supersedes.pk for r in rows]
    ids_after = [r.pk for r in rows]
    for belief_id, episode_id in BeliefEvidence.objects.filter(
        belief_id__in=ids_before + ids_after
    ).values_list("belief_id", "episode_id"):
        if belief_id in ids_after:
            after_evidence.setdefault(belief_id, set()).add(episode_id)
        if belief_id in ids_before:
            before_evidence.setdefault(belief_id, set()).add(episode_id)
    out = []
    for row in rows:
        before = row.supersedes
        new_ids = sorted(after_evidence.get(row.pk, set()) - before_evidence.get(before.pk, set()))
        out.append(
            ReportChange(
                belief_id=row.pk,
                concept=row.concept.name,
                at=row.created_at,
                reason=row.reason,
                reason_label=row.get_reason_display(),
                before_claim=before.claim,
                before_confidence=before.confidence,
                before_p_right=before.p_right,
                after_claim=row.claim,
                after_confidence=row.confidence,
                after_p_right=row.p_right,
                new_evidence_episode_ids=new_ids,
                sentence=_change_sentence(before, row),
            )
        )
    # A history reads forwards: the newest REPORT_CHANGES_MAX changes, oldest first.
    out.reverse()
    return out


def _report_unanswered(pair: Pair) -> list[ReportQuestion]:
    """Answers the grounding tracker marked `cannot`, with the question that was asked."""
    answers = (
        answers_unanswerable(pair=pair)
        .select_related("stance")
        .order_by("-occurred_at", "-seq")[:REPORT_UNANSWERED_MAX]
    )
    return [
        ReportQuestion(
            answer_episode_id=a.pk,
            question=a.question,
            asked_at=a.occurred_at,
            reported_at=a.stance.reported_at,
        )
        for a in answers
    ]


def pairs_rederivation_preview(*, pair_ids: list[int]) -> tuple[int, int]:
    """(current beliefs that a re-derivation would retire, checks it would replay)."""
    beliefs = Belief.objects.current().filter(pair_id__in=pair_ids).count()
    checks = Episode.objects.filter(pair_id__in=pair_ids, kind=Episode.Kind.CHECK).count()
    return beliefs, checks


def pairs_with_last_rederivation(queryset):
    """Annotate a Pair queryset with the time of its last re-derivation (admin list)."""
    return queryset.annotate(last_rederived_at=Max("rederivations__created_at"))
