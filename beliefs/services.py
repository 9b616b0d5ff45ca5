"""Writes of the beliefs app: derivation from checks, supersession, decay, re-derivation.

Every write of a belief goes through `_write_successor`: insert the new row, then point
the old head at it (the single permitted write on an old row, R-4.2). Per student-subject,
belief writes are serialised by a transaction-scoped advisory lock: a live derivation
waits for it, a re-derivation refuses to run while anyone holds it (R-4.5).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial

from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from beliefs import learning, rules
from beliefs.models import Belief, BeliefEvidence, BeliefLearningFit, Rederivation
from beliefs.routing import ConceptRouter, Route
from beliefs.selectors import (
    checks_waiting_for_a_concept,
    concept_priors,
    pair_own_counts,
    pairs_with_current_beliefs,
    subject_check_histories,
)
from concepts.models import Concept
from concepts.services import concept_confirm_by_check
from memory.errors import InvalidInput
from memory.models import Episode, Pair, Subject
from memory.services import advisory_lock_key

logger = logging.getLogger(__name__)

# A selection larger than this is re-derived by Celery tasks, this many pairs per task;
# smaller ones run at once (the admin's request waits for them).
REDERIVE_INLINE_MAX_PAIRS = 20
REDERIVE_PAIRS_PER_TASK = 25

# First part of the advisory-lock key of a pair's beliefs (other apps use other numbers).
BELIEF_LOCK_NAMESPACE = 0xBE11EF


class RederivationRefused(Exception):
    """A re-derivation that cannot run now or here. Nothing was retired."""


class RederivationBusy(RederivationRefused):
    """Another belief write of the same pair holds its lock: try again later."""


# --------------------------------------------------------------------------------------
# Locks and the one write path
# --------------------------------------------------------------------------------------


def _lock_key(pair_id: int) -> int:
    return advisory_lock_key(BELIEF_LOCK_NAMESPACE, pair_id)


def _wait_for_pair_lock(pair_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_lock_key(pair_id)])


def _try_pair_lock(pair_id: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [_lock_key(pair_id)])
        return bool(cursor.fetchone()[0])


def _head(*, pair_id: int, concept_id: int) -> Belief | None:
    """The row of (pair, concept) nothing supersedes (current, or a retirement), locked."""
    return (
        Belief.objects.select_for_update()
        .filter(pair_id=pair_id, concept_id=concept_id, superseded_by__isnull=True)
        .first()
    )


def _write_successor(
    *,
    head: Belief | None,
    pair_id: int,
    concept_id: int,
    claim: str,
    confidence: float,
    reason: str,
    now: datetime,
    evidence_ids: Sequence[int],
    last_evidence_at: datetime | None,
    needs_confirmation: bool = False,
    p_right: float | None = None,
    prior: rules.Prior | None = None,
    right_count: float | None = None,
) -> Belief:
    if head is not None and head.superseded_by_id is not None:
        raise RuntimeError(f"belief {head.pk} is already superseded by {head.superseded_by_id}")
    row = Belief.objects.create(
        pair_id=pair_id,
        concept_id=concept_id,
        claim=claim,
        confidence=rules.round_probability(confidence),
        p_right=None if p_right is None else rules.round_probability(p_right),
        prior_right=None if prior is None else prior.mean,
        prior_strength=None if prior is None else prior.strength,
        right_count=right_count,
        reason=reason,
        needs_confirmation=needs_confirmation,
        check_count=len(evidence_ids),
        last_evidence_at=last_evidence_at,
        created_at=now,
    )
    if evidence_ids:
        BeliefEvidence.objects.bulk_create(
            [BeliefEvidence(belief=row, episode_id=episode_id) for episode_id in evidence_ids]
        )
    if head is not None:
        head.superseded_by = row
        head.save()
    return row


def _write_derived(
    *,
    head: Belief | None,
    pair_id: int,
    concept_id: int,
    derived: rules.Derived,
    reason: str,
    now: datetime,
    evidence_ids: Sequence[int],
    last_evidence_at: datetime,
    needs_confirmation: bool = False,
) -> Belief:
    return _write_successor(
        head=head,
        pair_id=pair_id,
        concept_id=concept_id,
        claim=derived.claim,
        confidence=derived.confidence,
        p_right=derived.p_right,
        prior=derived.prior,
        right_count=derived.right_count,
        reason=reason,
        now=now,
        evidence_ids=evidence_ids,
        last_evidence_at=last_evidence_at,
        needs_confirmation=needs_confirmation,
    )


def _derived_row(
    *,
    pair_id: int,
    concept_id: int,
    derived: rules.Derived,
    reason: str,
    now: datetime,
    check_count: int,
    last_evidence_at: datetime,
    needs_confirmation: bool = False,
) -> Belief:
    """The unsaved row _write_successor would insert (for a bulk insert)."""
    prior = derived.prior
    return Belief(
        pair_id=pair_id,
        concept_id=concept_id,
        claim=derived.claim,
        confidence=rules.round_probability(derived.confidence),
        p_right=rules.round_probability(derived.p_right),
        prior_right=prior.mean,
        prior_strength=prior.strength,
        right_count=derived.right_count,
        reason=reason,
        needs_confirmation=needs_confirmation,
        check_count=check_count,
        last_evidence_at=last_evidence_at,
        created_at=now,
    )


def _set_successors(links: Sequence[tuple[int, int]]) -> None:
    """Point each (old, new) row's `superseded_by` at new, in one UPDATE.

    The one permitted write on a belief row (the database triggers refuse any other
    column and a second supersession, so this cannot do more); every old row must still
    be unsuperseded, or nothing is written.
    """
    if not links:
        return
    values = ", ".join(["(%s::bigint, %s::bigint)"] * len(links))
    params = [i for link in links for i in link]
    table = connection.ops.quote_name(Belief._meta.db_table)
    # A savepoint: the refusal below undoes the rows this UPDATE did set.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} AS b SET superseded_by_id = v.new_id "  # noqa: S608 — no user text
            f"FROM (VALUES {values}) AS v(old_id, new_id) "
            "WHERE b.id = v.old_id AND b.superseded_by_id IS NULL",
            params,
        )
        if cursor.rowcount != len(links):
            raise RuntimeError(
                f"{len(links) - cursor.rowcount} of {len(links)} beliefs were already "
                "superseded: nothing is written"
            )


def _prior_of(head: Belief) -> rules.Prior | None:
    if head.prior_right is None:
        return None
    # A row derived with the learning model has a prior mean but no strength.
    return rules.Prior(mean=head.prior_right, strength=head.prior_strength)


def _evidence_ids(belief: Belief) -> list[int]:
    return list(
        BeliefEvidence.objects.filter(belief=belief)
        .order_by("episode__seq")
        .values_list("episode_id", flat=True)
    )


def _evidence_points(belief: Belief) -> list[rules.CheckPoint]:
    rows = (
        BeliefEvidence.objects.filter(belief=belief)
        .order_by("episode__seq")
        .values_list("episode_id", "episode__occurred_at", "episode__verdict")
    )
    return [rules.CheckPoint(episode_id=i, occurred_at=t, verdict=v) for i, t, v in rows]


# --------------------------------------------------------------------------------------
# Supersession and decay
# --------------------------------------------------------------------------------------


@transaction.atomic
def belief_supersede(
    *,
    belief: Belief,
    claim: str,
    confidence: float,
    reason: str,
    now: datetime,
    evidence_ids: Sequence[int] | None = None,
    needs_confirmation: bool = False,
    last_evidence_at: datetime | None = None,
    p_right: float | None = None,
    prior: rules.Prior | None = None,
) -> Belief:
    """Replace `belief` with a new row; the old row stays as it was and points to it.

    `evidence_ids` defaults to the old row's evidence (a decay or a correction keeps the
    episodes behind the belief). `p_right` defaults to what the claim and confidence
    say (confidence for understands, 1 − confidence for struggles); `prior` and the
    counts default to the old row's. Refused if `belief` is no longer the head of its chain.
    """
    if claim not in Belief.Claim.values:
        raise InvalidInput("claim", f"must be one of {', '.join(Belief.Claim.values)}")
    if reason not in Belief.Reason.values:
        raise InvalidInput("reason", f"must be one of {', '.join(Belief.Reason.values)}")
    if not 0.0 <= confidence <= 1.0:
        raise InvalidInput("confidence", "must be between 0 and 1")
    if p_right is None:
        p_right = rules.p_right_of(claim, confidence)
    elif not 0.0 <= p_right <= 1.0:
        raise InvalidInput("p_right", "must be between 0 and 1")
    _wait_for_pair_lock(belief.pair_id)
    head = Belief.objects.select_for_update().get(pk=belief.pk)
    if head.superseded_by_id is not None:
        raise InvalidInput(
            "belief", f"belief {head.pk} is already superseded by belief {head.superseded_by_id}"
        )
    if evidence_ids is None:
        evidence_ids = _evidence_ids(head)
    new = _write_successor(
        head=head,
        pair_id=head.pair_id,
        concept_id=head.concept_id,
        claim=claim,
        confidence=confidence,
        p_right=p_right,
        prior=prior if prior is not None else _prior_of(head),
        right_count=head.right_count if list(evidence_ids) == _evidence_ids(head) else None,
        reason=reason,
        now=now,
        evidence_ids=evidence_ids,
        last_evidence_at=last_evidence_at
        if last_evidence_at is not None
        else head.last_evidence_at,
        needs_confirmation=needs_confirmation,
    )
    belief.superseded_by = new
    belief._remember_stored()
    return new


@transaction.atomic
def belief_decay(*, belief: Belief, now: datetime) -> Belief:
    """R-7.2: p_right moves 15 % of the way back to the concept's prior; the belief waits
    for the next check.

    The prior is the concept's as of now (the other students' current beliefs), so a
    belief formed when few students had data decays towards what the subject shows
    today. Never past the prior, never a flipped claim (beliefs.rules.decayed_p_right).
    A new row with reason `decay`, the same claim and evidence, `needs_confirmation`
    set. Decaying a row that is not current is refused (the nightly cycle reads current
    rows).
    """
    if belief.reason == Belief.Reason.RETIREMENT:
        raise InvalidInput("belief", f"belief {belief.pk} is retired: nothing to decay")
    subject_id = Pair.objects.values_list("subject_id", flat=True).get(pk=belief.pair_id)
    prior = concept_priors(subject_id=subject_id, exclude_pair_id=belief.pair_id).for_student(
        belief.concept_id, pair_own_counts(pair_id=belief.pair_id)
    )
    p_right = (
        belief.p_right
        if belief.p_right is not None
        else rules.p_right_of(belief.claim, belief.confidence)
    )
    decayed = rules.decayed_p_right(p_right=p_right, prior_mean=prior.mean, claim=belief.claim)
    return belief_supersede(
        belief=belief,
        claim=belief.claim,
        confidence=rules.confidence_of(belief.claim, decayed),
        p_right=decayed,
        prior=prior,
        reason=Belief.Reason.DECAY,
        now=now,
        needs_confirmation=True,
    )


# --------------------------------------------------------------------------------------
# Derivation after checks are appended
# --------------------------------------------------------------------------------------


@dataclass
class DerivationResult:
    checks: int = 0
    linked: int = 0
    unlinked: int = 0
    utterances: int = 0
    beliefs_written: list[int] = field(default_factory=list)
    confirmed_without_change: int = 0
    already_counted: int = 0


def _confirm_concept(concept: Concept, now: datetime) -> None:
    # Readiness is about the material: one passed check is enough, and a
    # concept already confirmed or taught has nothing to lift.
    if not concept.confirmed_by_check and not concept.taught:
        concept_confirm_by_check(concept=concept, now=now)
        concept.confirmed_by_check = True


@transaction.atomic
def beliefs_derive_from_checks(
    *, pair: Pair, episode_ids: Iterable[int], now: datetime | None = None
) -> DerivationResult:
    """Derive beliefs from newly appended check episodes of `pair`, in chain order.

    Each check is routed (beliefs.routing). A routed check joins its concept's checks;
    the rule (beliefs.rules.derive) is applied to all of them, and a new row supersedes
    the current one when the claim or the rounded confidence changes, or when the
    current one waits for confirmation. Otherwise the check is linked to the current
    row as evidence. A check already behind the current row is skipped (idempotent).
    """
    now = now or timezone.now()
    result = DerivationResult()
    _wait_for_pair_lock(pair.pk)
    checks = list(
        Episode.objects.filter(pair=pair, pk__in=list(episode_ids), kind=Episode.Kind.CHECK)
        .select_related("pair__subject")
        .order_by("seq")
    )
    router = ConceptRouter(pair.subject)
    priors: rules.PriorTable | None = None
    own: dict[int, tuple[float, int]] = {}
    heads: dict[int, Belief | None] = {}
    points: dict[int, list[rules.CheckPoint]] = {}
    for episode in checks:
        result.checks += 1
        routing = router.route(
            topic=episode.topic, assessment=str(episode.evidence.get("assessment", ""))
        )
        if routing.concept is None:
            result.unlinked += 1
            result.utterances += routing.route == Route.UTTERANCE
            continue
        result.linked += 1
        concept = routing.concept
        if concept.pk not in heads:
            head = _head(pair_id=pair.pk, concept_id=concept.pk)
            heads[concept.pk] = head
            points[concept.pk] = (
                _evidence_points(head) if head is not None and head.is_current else []
            )
        head = heads[concept.pk]
        known = points[concept.pk]
        if any(p.episode_id == episode.pk for p in known):
            result.already_counted += 1
            continue
        known.append(
            rules.CheckPoint(
                episode_id=episode.pk, occurred_at=episode.occurred_at, verdict=episode.verdict
            )
        )
        if priors is None:
            priors = concept_priors(subject_id=pair.subject_id, exclude_pair_id=pair.pk)
            own = pair_own_counts(pair_id=pair.pk)
        derived = rules.derive(known, priors.for_student(concept.pk, own))
        own[concept.pk] = (derived.right_count, derived.check_count)
        unchanged = (
            head is not None
            and head.is_current
            and not head.needs_confirmation
            and head.claim == derived.claim
            and head.p_right == derived.p_right
        )
        if unchanged and head is not None:
            BeliefEvidence.objects.create(belief=head, episode=episode)
            result.confirmed_without_change += 1
        else:
            written = _write_derived(
                head=head,
                pair_id=pair.pk,
                concept_id=concept.pk,
                derived=derived,
                reason=Belief.Reason.EVIDENCE,
                now=now,
                evidence_ids=[p.episode_id for p in known],
                last_evidence_at=max(p.occurred_at for p in known),
            )
            heads[concept.pk] = written
            result.beliefs_written.append(written.pk)
        if episode.verdict == Episode.Verdict.RIGHT:
            _confirm_concept(concept, now)
    return result


def on_episodes_appended(sender, *, episode_ids, pair_id, kinds=None, **kwargs) -> None:
    """Receiver of memory.signals.episodes_appended (sent after the append commits).

    A failure here must not turn a stored episode into an error for the chat service:
    the check is in the log either way, and a re-derivation replays it. It is logged.
    """
    if kinds is not None and Episode.Kind.CHECK not in kinds:
        return  # a turn's question or answer: no query at all
    recorded = Episode.objects.filter(pk__in=episode_ids, kind=Episode.Kind.CHECK).aggregate(
        at=Max("recorded_at")
    )["at"]
    if recorded is None:
        return
    try:
        pair = Pair.objects.select_related("subject").get(pk=pair_id)
        # The rows are written as of when the checks were recorded (a moment ago, live; the
        # import's clock for a back-filled history), so a belief's chain stays in time order
        # with the nightly cycle's decay rows of the days in between.
        beliefs_derive_from_checks(pair=pair, episode_ids=episode_ids, now=recorded)
    except Exception:
        logger.exception("belief derivation failed for pair %s, episodes %s", pair_id, episode_ids)


# --------------------------------------------------------------------------------------
# Re-derivation
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RederivationResult:
    pair_id: int
    rederivation_id: int
    beliefs_retired: int
    checks_replayed: int
    checks_linked: int
    beliefs_derived: int

    def describe(self) -> str:
        return (
            f"pair {self.pair_id}: {self.beliefs_retired} beliefs retired, "
            f"{self.checks_replayed} checks replayed ({self.checks_linked} linked), "
            f"{self.beliefs_derived} beliefs derived"
        )


@transaction.atomic
def beliefs_rederive(
    *,
    pair: Pair,
    now: datetime | None = None,
    requested_by=None,
    source: str = Rederivation.Source.SERVICE,
) -> RederivationResult:
    """Retire every current belief of `pair` and derive them again from its logged checks.

    One transaction: a failure anywhere leaves the previous beliefs current. Refused
    (RederivationRefused, nothing retired) while another belief write of the same pair
    holds its lock. Every current row gets a `retirement` successor; then the checks are
    replayed in chain order under today's rules (routing against today's map), and each
    routed concept gets one row with reason `rederivation`, superseding its retirement
    row, with the concepts' priors as they are now.

    Decay is replayed on the history's own time line (R-7.2): a concept whose newest
    check is at least the decay age older than the pair's newest check (the student
    went on, this concept was left) is derived decayed, waiting for confirmation. A
    history that simply ends (an imported year-old log, a student who stopped coming) is
    not decayed as of today: from here on that is the nightly cycle's job, one decay per
    belief, as for any belief. Reads episodes, never writes one.
    """
    now = now or timezone.now()
    if not Pair.objects.filter(pk=pair.pk).exists():
        raise RederivationRefused(f"no student-subject with id {pair.pk}: nothing retired")
    if not _try_pair_lock(pair.pk):
        raise RederivationBusy(
            f"the beliefs of {pair} are being re-derived or updated by another process "
            "right now; nothing was retired, try again in a moment"
        )
    heads = list(
        Belief.objects.select_for_update()
        .filter(pair=pair, superseded_by__isnull=True)
        .order_by("concept_id")
    )
    head_by_concept: dict[int, Belief] = {}
    to_retire = [h for h in heads if h.reason != Belief.Reason.RETIREMENT]
    for head in heads:
        if head.reason == Belief.Reason.RETIREMENT:
            head_by_concept[head.concept_id] = head
    # One INSERT for the retirement rows and one UPDATE for their predecessors' successor
    # (not a write per belief: at 18 beliefs that was half of a re-derivation's time).
    retirements = Belief.objects.bulk_create(
        [
            Belief(
                pair_id=pair.pk,
                concept_id=head.concept_id,
                claim=head.claim,
                confidence=rules.round_probability(head.confidence),
                reason=Belief.Reason.RETIREMENT,
                check_count=0,
                last_evidence_at=head.last_evidence_at,
                created_at=now,
            )
            for head in to_retire
        ]
    )
    _set_successors([(h.pk, r.pk) for h, r in zip(to_retire, retirements, strict=True)])
    for row in retirements:
        head_by_concept[row.concept_id] = row
    retired = len(retirements)

    router = ConceptRouter(pair.subject)
    checks = Episode.objects.filter(pair=pair, kind=Episode.Kind.CHECK).order_by("seq")
    points: dict[int, list[rules.CheckPoint]] = {}
    concepts: dict[int, Concept] = {}
    replayed = linked = 0
    newest_check: datetime | None = None
    # Tuples, and only the assessment out of the evidence JSON: building 1,000 model
    # instances with their whole evidence was a third of a re-derivation's time.
    for episode_id, topic, verdict, occurred_at, assessment in checks.values_list(
        "pk", "topic", "verdict", "occurred_at", "evidence__assessment"
    ).iterator():
        replayed += 1
        if newest_check is None or occurred_at > newest_check:
            newest_check = occurred_at
        routing = router.route(
            topic=topic, assessment="" if assessment is None else str(assessment)
        )
        if routing.concept is None:
            continue
        linked += 1
        concepts.setdefault(routing.concept.pk, routing.concept)
        points.setdefault(routing.concept.pk, []).append(
            rules.CheckPoint(episode_id=episode_id, occurred_at=occurred_at, verdict=verdict)
        )
        if verdict == Episode.Verdict.RIGHT:
            _confirm_concept(concepts[routing.concept.pk], now)

    derived_count = 0
    priors = concept_priors(subject_id=pair.subject_id, exclude_pair_id=pair.pk)
    own = {
        concept_id: (sum(rules.VERDICT_OUTCOME[p.verdict] for p in ps), len(ps))
        for concept_id, ps in points.items()
    }
    # The end of the history's own time line: its newest check (never later than now).
    horizon = min(newest_check or now, now)
    rows: list[Belief] = []
    for concept_id, concept_points in points.items():
        prior = priors.for_student(concept_id, own)
        derived = rules.derive(concept_points, prior)
        last = max(p.occurred_at for p in concept_points)
        untouched = rules.is_untouched(last_evidence_at=last, now=horizon)
        if untouched:
            p_right = rules.decayed_p_right(
                p_right=derived.p_right, prior_mean=prior.mean, claim=derived.claim
            )
            derived = replace(
                derived, p_right=p_right, confidence=rules.confidence_of(derived.claim, p_right)
            )
        rows.append(
            _derived_row(
                pair_id=pair.pk,
                concept_id=concept_id,
                derived=derived,
                reason=Belief.Reason.REDERIVATION,
                now=now,
                check_count=len(concept_points),
                last_evidence_at=last,
                needs_confirmation=untouched,
            )
        )
    # As for the retirements: one INSERT for the rows, one for all their evidence, one
    # UPDATE pointing each retirement row at its re-derived successor.
    written = Belief.objects.bulk_create(rows)
    BeliefEvidence.objects.bulk_create(
        [
            BeliefEvidence(belief=row, episode_id=p.episode_id)
            for row in written
            for p in points[row.concept_id]
        ],
        batch_size=5000,
    )
    _set_successors(
        [
            (head_by_concept[row.concept_id].pk, row.pk)
            for row in written
            if row.concept_id in head_by_concept
        ]
    )
    derived_count = len(written)

    log = Rederivation.objects.create(
        pair=pair,
        requested_by=requested_by,
        source=source,
        rules_version=rules.RULES_VERSION,
        beliefs_retired=retired,
        checks_replayed=replayed,
        checks_linked=linked,
        beliefs_derived=derived_count,
        created_at=now,
    )
    return RederivationResult(
        pair_id=pair.pk,
        rederivation_id=log.pk,
        beliefs_retired=retired,
        checks_replayed=replayed,
        checks_linked=linked,
        beliefs_derived=derived_count,
    )


@dataclass
class RederivationBatch:
    done: list[RederivationResult] = field(default_factory=list)
    # (pair id, readable reason) of each pair that was refused; nothing retired there.
    refused: list[tuple[int, str]] = field(default_factory=list)
    # The refused pairs that were only busy (worth retrying).
    busy: list[int] = field(default_factory=list)


def beliefs_rederive_many(
    *,
    pair_ids: Sequence[int],
    now: datetime | None = None,
    requested_by=None,
    source: str = Rederivation.Source.SERVICE,
) -> RederivationBatch:
    """Re-derive several pairs, each in its own transaction (one refusal stops no other).

    Deliberately not one transaction: a large selection must not hold every pair's lock
    at once, and one busy pair must not undo the others.
    """
    now = now or timezone.now()
    batch = RederivationBatch()
    pairs = {
        p.pk: p for p in Pair.objects.select_related("student", "subject").filter(pk__in=pair_ids)
    }
    for pair_id in pair_ids:
        pair = pairs.get(pair_id)
        if pair is None:
            batch.refused.append((pair_id, f"no student-subject with id {pair_id}"))
            continue
        try:
            batch.done.append(
                beliefs_rederive(pair=pair, now=now, requested_by=requested_by, source=source)
            )
        except RederivationRefused as exc:
            batch.refused.append((pair_id, str(exc)))
            if isinstance(exc, RederivationBusy):
                batch.busy.append(pair_id)
    return batch


def beliefs_rederive_schedule(
    *, pair_ids: Sequence[int], requested_by=None, source: str = Rederivation.Source.TASK
) -> int:
    """Queue re-derivation of many pairs as Celery tasks (after the current commit).

    Returns the number of tasks queued. Each task re-derives its pairs one by one, each
    pair in its own transaction; a busy pair is retried by the task.
    """
    from beliefs.tasks import rederive_pairs

    ids = list(dict.fromkeys(int(i) for i in pair_ids))
    user_id = getattr(requested_by, "pk", None)
    chunks = [
        ids[i : i + REDERIVE_PAIRS_PER_TASK] for i in range(0, len(ids), REDERIVE_PAIRS_PER_TASK)
    ]
    for chunk in chunks:
        transaction.on_commit(
            partial(
                rederive_pairs.delay, pair_ids=chunk, requested_by_id=user_id, source=str(source)
            )
        )
    return len(chunks)


def beliefs_fit_learning(
    *, subject_id: int, now: datetime | None = None
) -> BeliefLearningFit | None:
    """Fit the subject's learning model (beliefs.learning) on every routed check of its
    students and store it; derivations from now on use it. None, nothing written, while
    the subject has too little data for a fit (they keep the Beta posterior).

    Beliefs already written keep their p_right until their next check, decay or
    re-derivation: a fit is not a reason to rewrite every student's beliefs at night.
    Except when it changes what the subject knows a lot: the fit is marked `rederives`
    when it is the subject's first, made under other rules than the last fit so marked
    (RULES_VERSION: an upgrade that changes how beliefs are derived), or made from
    REDERIVE_WHEN_CHECKS_GROW times the checks of that fit; the nightly cycle then
    re-derives the subject (beliefs_rederive_after_fits).
    """
    now = now or timezone.now()
    model = learning.fit(subject_check_histories(subject_id=subject_id))
    if model is None:
        return None
    last_checks, last_rules = (
        BeliefLearningFit.objects.filter(subject_id=subject_id, rederives=True)
        .order_by("-created_at", "-pk")
        .values_list("checks", "rules_version")
        .first()
    ) or (None, None)
    return BeliefLearningFit.objects.create(
        subject_id=subject_id,
        rules_version=rules.RULES_VERSION,
        checks=model.checks,
        students=model.students,
        coefficients=model.as_json(),
        created_at=now,
        rederives=last_checks is None
        or last_rules != rules.RULES_VERSION
        or model.checks >= learning.REDERIVE_WHEN_CHECKS_GROW * last_checks,
    )


def beliefs_rederive_after_fits(
    *, fits: Sequence[BeliefLearningFit], now: datetime | None = None, queue: bool = False
) -> list[int]:
    """Re-derive every pair with current beliefs in the subjects whose fit is marked
    `rederives` (a history imported before the subject had a fit was derived with the
    Beta posterior and would keep it until each belief's next check). One transaction per
    pair (beliefs_rederive_many), or Celery tasks with `queue`. Returns the pairs."""
    subject_ids = [f.subject_id for f in fits if f.rederives]
    if not subject_ids:
        return []
    pair_ids = pairs_with_current_beliefs(subject_ids=subject_ids)
    if queue:
        beliefs_rederive_schedule(pair_ids=pair_ids, source=Rederivation.Source.NIGHTLY)
    else:
        beliefs_rederive_many(pair_ids=pair_ids, now=now, source=Rederivation.Source.NIGHTLY)
    return pair_ids


def beliefs_link_waiting_checks(
    *,
    map_changed_since: datetime,
    now: datetime | None = None,
    queue: bool = False,
    rederived: Iterable[int] = (),
) -> list[int]:
    """Re-derive the pairs that hold a check the map could not route when it came and
    can now (R-4.4: a check on "separation of powers" before any file named it), in the
    subjects whose map changed since `map_changed_since`; the re-derivation links it.
    Pairs in `rederived` (already re-derived tonight) are left alone. One transaction per
    pair, or Celery tasks with `queue`. Returns the pairs."""
    waiting = checks_waiting_for_a_concept(map_changed_since=map_changed_since)
    subjects = Subject.objects.in_bulk(list(waiting))
    skip, found = set(rederived), set()
    for subject_id, checks in waiting.items():
        router = ConceptRouter(subjects[subject_id])
        for pair_id, topic, assessment in checks:
            if pair_id not in skip and router.route(topic=topic, assessment=assessment).linked:
                skip.add(pair_id)
                found.add(pair_id)
    ordered = sorted(found)
    if not ordered:
        return []
    if queue:
        beliefs_rederive_schedule(pair_ids=ordered, source=Rederivation.Source.MAP)
    else:
        beliefs_rederive_many(pair_ids=ordered, now=now, source=Rederivation.Source.MAP)
    return ordered


def beliefs_fit_learning_all(*, now: datetime | None = None) -> list[BeliefLearningFit]:
    """The nightly fit for every subject with current beliefs. A subject whose fit fails
    is logged and skipped: the others still get theirs, and its derivations keep the
    previous fit (or the Beta posterior)."""
    now = now or timezone.now()
    subject_ids = sorted(
        set(Belief.objects.current().values_list("pair__subject_id", flat=True).distinct())
    )
    fits = []
    for subject_id in subject_ids:
        try:
            with transaction.atomic():
                fit = beliefs_fit_learning(subject_id=subject_id, now=now)
        except Exception:
            logger.exception("learning model fit of subject %s failed", subject_id)
            continue
        if fit is not None:
            fits.append(fit)
    return fits
