"""The beliefs' own predictions, for calibration (issue #12, R-7.3).

Every check routed to a concept was preceded by a belief on that concept (unless it was
the first): the row that stood when the check was logged. Its `p_right` was a
prediction of that check's verdict. `belief_predictions` pairs them up from the stored
rows — the numbers that were actually shown — so the nightly cycle can measure whether
"0.8" meant right 80 % of the time.

The row that stood before a check E on (pair, concept) is the last row of the chain, in
chain order, whose newest evidence *as of its writing* (`last_evidence_at`) is older
than E: a row written after E counts E, so its newest evidence is E or later; a row that
E only confirmed (linked without a new row) was written before E and stood when E came.
Retirement rows are skipped (they are not beliefs); a decay row is a prediction like any
other (it is what the block showed). A row written before `p_right` existed predicts
nothing.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from beliefs.models import Belief, BeliefEvidence
from memory.models import Episode, Pair


def belief_predictions(*, pair: Pair, before: datetime | None = None) -> list[tuple[float, str]]:
    """(p_right of the belief that stood, verdict) for each of the pair's routed checks
    logged before `before` that followed a belief. Three queries."""
    rows = list(
        Belief.objects.filter(pair=pair)
        .exclude(reason=Belief.Reason.RETIREMENT)
        .values("pk", "concept_id", "p_right", "last_evidence_at", "reason", "created_at")
    )
    if not rows:
        return []
    links: dict[int, set[int]] = defaultdict(set)
    for belief_id, episode_id in BeliefEvidence.objects.filter(belief__pair=pair).values_list(
        "belief_id", "episode_id"
    ):
        links[belief_id].add(episode_id)
    checks = Episode.objects.filter(pair=pair, kind=Episode.Kind.CHECK, pk__in=_all(links))
    if before is not None:
        checks = checks.filter(occurred_at__lt=before)
    check_rows = {
        pk: (at, verdict) for pk, at, verdict in checks.values_list("pk", "occurred_at", "verdict")
    }

    # Chain order per concept: rows are written in id order (every new row supersedes
    # the head), so id order is chain order.
    by_concept: dict[int, list[Any]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: r["pk"]):
        by_concept[row["concept_id"]].append(row)
    out: list[tuple[float, str]] = []
    for chain in by_concept.values():
        evidence = set().union(*(links[r["pk"]] for r in chain))
        for episode_id in sorted(evidence & check_rows.keys(), key=lambda e: (check_rows[e][0], e)):
            at, verdict = check_rows[episode_id]
            stood: Any = None
            for row in chain:
                if row["last_evidence_at"] is None or row["last_evidence_at"] >= at:
                    continue
                # A decay keeps its predecessor's newest evidence; it stood only from
                # the night it was written (the nightly's time line is the log's).
                if row["reason"] == Belief.Reason.DECAY and row["created_at"] > at:
                    continue
                stood = row
            if stood is not None and stood["p_right"] is not None:
                out.append((stood["p_right"], verdict))
    return out


def _all(links: dict[int, set[int]]) -> set[int]:
    return set().union(*links.values()) if links else set()
