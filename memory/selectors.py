"""Reads of the memory app. Every API read is scoped to one organization."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db.models import Case, F, Max, OuterRef, QuerySet, Subquery, When
from django.db.models.expressions import RawSQL

from memory.errors import NotFound
from memory.hashing import HASHED_FIELDS, episode_hash
from memory.models import (
    GENESIS_HASH,
    AnswerStance,
    ChainVerification,
    Episode,
    Organization,
    Pair,
    Student,
    Subject,
    SubjectFile,
)

if TYPE_CHECKING:
    from memory.checkpoints import CheckpointHead

# Rows fetched per round trip while a chain is recomputed: the whole chain never sits
# in memory, and a round trip costs little next to 2,000 hash computations.
VERIFY_CHUNK_SIZE = 2_000


def student_get(*, organization: Organization, external_id: str) -> Student:
    student = Student.objects.filter(organization=organization, external_id=external_id).first()
    if student is None:
        raise NotFound(f"no student {external_id!r} in this organization")
    return student


def subject_get(*, organization: Organization, external_id: str) -> Subject:
    subject = Subject.objects.filter(organization=organization, external_id=external_id).first()
    if subject is None:
        raise NotFound(f"no subject {external_id!r} in this organization")
    return subject


def pair_get(
    *, organization: Organization, student_external_id: str, subject_external_id: str
) -> Pair:
    """The pair of this organization's student and subject, or NotFound (404)."""
    pair = (
        Pair.objects.select_related("student", "subject")
        .filter(
            student__organization=organization,
            student__external_id=student_external_id,
            subject__organization=organization,
            subject__external_id=subject_external_id,
        )
        .first()
    )
    if pair is None:
        raise NotFound(
            f"no record of student {student_external_id!r} in subject {subject_external_id!r} "
            "in this organization"
        )
    return pair


def pair_last_verification(*, pair: Pair) -> ChainVerification | None:
    return ChainVerification.objects.filter(pair=pair).order_by("-checked_at", "-pk").first()


def pairs_with_last_verification(queryset: QuerySet[Pair] | None = None) -> QuerySet[Pair]:
    """Pairs annotated with their latest verification (one query, for lists and admin)."""
    latest = ChainVerification.objects.filter(pair=OuterRef("pk")).order_by("-checked_at", "-pk")
    qs = queryset if queryset is not None else Pair.objects.all()
    return qs.annotate(
        verified_intact=Subquery(latest.values("intact")[:1]),
        verified_broken_seq=Subquery(latest.values("broken_seq")[:1]),
        verified_failure=Subquery(latest.values("failure")[:1]),
        verified_at=Subquery(latest.values("checked_at")[:1]),
    )


def episode_get(*, organization: Organization, episode_id: int) -> Episode:
    episode = (
        Episode.objects.select_related("pair__student", "pair__subject")
        .filter(pk=episode_id, pair__student__organization=organization)
        .first()
    )
    if episode is None:
        raise NotFound(f"no episode {episode_id} in this organization")
    return episode


@dataclass(frozen=True)
class EpisodePage:
    episodes: list[Episode]
    # The seq to continue after (keyset), or None on the last page.
    next_after_seq: int | None


def episodes_page(
    *,
    pair: Pair,
    kinds: Sequence[str] = (),
    since: datetime | None = None,
    until: datetime | None = None,
    after_seq: int | None = None,
    newest_first: bool = True,
    limit: int,
) -> EpisodePage:
    """One page of a pair's episodes in chain order, by keyset on seq (never a COUNT).

    Uses the (pair, seq) unique index for the order and the keyset; time and kind
    are filters on top.
    """
    qs = Episode.objects.filter(pair=pair).select_related("stance")
    if kinds:
        qs = qs.filter(kind__in=list(kinds))
    if since is not None:
        qs = qs.filter(occurred_at__gte=since)
    if until is not None:
        qs = qs.filter(occurred_at__lt=until)
    if after_seq is not None:
        qs = qs.filter(seq__lt=after_seq) if newest_first else qs.filter(seq__gt=after_seq)
    qs = qs.order_by("-seq" if newest_first else "seq")
    rows = list(qs[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    return EpisodePage(episodes=rows, next_after_seq=rows[-1].seq if more and rows else None)


def episodes_citations_to_verify(*, pair: Pair | None = None, limit: int) -> list[Episode]:
    """Answers with citations, never-checked first, then the longest unchecked (R-7.4)."""
    qs = Episode.objects.filter(kind=Episode.Kind.ANSWER, evidence__citations__0__isnull=False)
    if pair is not None:
        qs = qs.filter(pair=pair)
    qs = qs.annotate(last_checked=Max("citation_checks__checked_at")).order_by(
        F("last_checked").asc(nulls_first=True), "pk"
    )
    return list(qs[:limit])


# --------------------------------------------------------------------------------------
# Chain recomputation
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChainReport:
    intact: bool
    # Episodes recomputed and found sound (up to the first break).
    length: int
    broken_seq: int | None = None
    failure: str = ""
    reason: str = ""


# Datetimes are formatted by PostgreSQL exactly as memory.hashing writes them (UTC,
# microseconds, "Z"): parsing a timestamp into Python only to format it again was a
# third of the verification time.
_ISO_UTC = (
    'to_char("memory_episode"."{column}" AT TIME ZONE \'UTC\', \'YYYY-MM-DD"T"HH24:MI:SS.US"Z"\')'
)
_DATETIME_FIELDS = ("occurred_at", "recorded_at")
_VERIFY_FIELDS = ("id", "prev_hash", "hash", *HASHED_FIELDS)
_VERIFY_ANNOTATIONS = {
    f"{name}_iso": RawSQL(_ISO_UTC.format(column=name), []) for name in _DATETIME_FIELDS
}
_VERIFY_COLUMNS = tuple(
    f"{name}_iso" if name in _DATETIME_FIELDS else name for name in _VERIFY_FIELDS
)


def chain_report(
    *,
    pair: Pair,
    checkpoint_head: CheckpointHead | None = None,
    chunk_size: int = VERIFY_CHUNK_SIZE,
) -> ChainReport:
    """Recompute a chain: intact, or the first broken seq and why. Streams the rows.

    Checks, in chain order: the seq is the next one (else a gap, or a repeat), the row
    was written after its predecessor (else reordered), its prev_hash is its
    predecessor's hash (else reordered if the next row links there instead, or link
    broken), its recomputed hash is its stored hash (else content changed), and at a
    checkpoint's seq the hash is the checkpoint's (else rewritten). At the end the
    chain must reach the head the pair records and the checkpoint's seq (else
    truncated). The head is read first; appends racing the check are not looked at.
    """
    failure = ChainVerification.Failure
    head_seq, head_hash = Pair.objects.filter(pk=pair.pk).values_list("head_seq", "head_hash").get()
    rows = (
        Episode.objects.filter(pair_id=pair.pk, seq__lte=head_seq)
        .order_by("seq")
        .annotate(**_VERIFY_ANNOTATIONS)
        .values_list(*_VERIFY_COLUMNS)
        .iterator(chunk_size=chunk_size)
    )
    rows = (dict(zip(_VERIFY_FIELDS, values, strict=True)) for values in rows)

    def broken(seq: int, why: str, reason: str) -> ChainReport:
        return ChainReport(intact=False, length=checked, broken_seq=seq, failure=why, reason=reason)

    checked = 0
    expected, prev_hash, prev_id = 1, GENESIS_HASH, 0
    iterator = iter(rows)
    current: dict[str, Any] | None = next(iterator, None)
    while current is not None:
        following = next(iterator, None)
        seq = current["seq"]
        if seq > expected:
            missing = f"{expected}" if seq == expected + 1 else f"{expected}-{seq - 1}"
            return broken(
                expected,
                failure.GAP,
                f"gap: seq {missing} is missing (deleted); the chain jumps to seq {seq}",
            )
        if seq < expected:
            return broken(seq, failure.REORDERED, f"reordered: seq {seq} appears twice")
        if current["id"] < prev_id:
            return broken(
                seq,
                failure.REORDERED,
                f"reordered: seq {seq} was written before seq {seq - 1}",
            )
        if current["prev_hash"] != prev_hash:
            if following is not None and following["prev_hash"] == prev_hash:
                return broken(
                    seq,
                    failure.REORDERED,
                    f"reordered: seq {seq + 1} links to seq {seq - 1}, so the episodes at "
                    f"seq {seq} and after were moved",
                )
            return broken(
                seq,
                failure.LINK_BROKEN,
                f"link broken: seq {seq}'s previous hash is not the hash of seq {seq - 1} "
                f"(seq {seq - 1} was rewritten with a new hash, or this link was edited)",
            )
        if episode_hash(current, current["prev_hash"]) != current["hash"]:
            return broken(
                seq,
                failure.CONTENT_CHANGED,
                f"content changed: seq {seq} (episode {current['id']}) no longer matches "
                "the hash it was written with",
            )
        if (
            checkpoint_head is not None
            and seq == checkpoint_head.seq
            and current["hash"] != checkpoint_head.hash
        ):
            return broken(
                seq,
                failure.REWRITTEN,
                f"rewritten: seq {seq}'s hash differs from the checkpoint's; the chain was "
                "rewritten up to here since the checkpoint",
            )
        checked += 1
        prev_hash, prev_id = current["hash"], current["id"]
        expected += 1
        current = following
    last = expected - 1
    if last < head_seq:
        return broken(
            last + 1,
            failure.TRUNCATED,
            f"truncated: the chain ends at seq {last} but its head records seq {head_seq}",
        )
    if last and prev_hash != head_hash:
        return broken(
            last,
            failure.LINK_BROKEN,
            f"link broken: the head records another hash than seq {last}'s",
        )
    if checkpoint_head is not None and last < checkpoint_head.seq:
        return broken(
            last + 1,
            failure.TRUNCATED,
            f"truncated: the checkpoint recorded seq {checkpoint_head.seq} but the chain "
            f"now ends at seq {last}",
        )
    return ChainReport(intact=True, length=checked)


# --------------------------------------------------------------------------------------
# Citation status: a lookup, never a model call
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CitationChange:
    file_id: int
    name: str
    change: str  # "replaced" | "removed"
    by_file_id: int | None = None
    by_name: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "file_id": self.file_id,
            "name": self.name,
            "change": self.change,
            "by_file_id": self.by_file_id,
            "by_name": self.by_name,
        }

    def describe(self) -> str:
        if self.change == "removed":
            return f"{self.name!r} was removed"
        if self.by_name:
            if self.by_name == self.name:
                return f"{self.name!r} was replaced by a newer version"
            return f"{self.name!r} was replaced by {self.by_name!r}"
        return f"{self.name!r} was replaced (its content changed)"


class CitationStatus(str):
    """ "holds", "changed" or "unverifiable" — a str, carrying which files changed."""

    HOLDS = "holds"
    CHANGED = "changed"
    UNVERIFIABLE = "unverifiable"

    changes: tuple[CitationChange, ...]

    def __new__(cls, result: str, changes: Iterable[CitationChange] = ()) -> CitationStatus:
        obj = super().__new__(cls, result)
        obj.changes = tuple(changes)
        return obj

    @property
    def note(self) -> str:
        """What changed, in a sentence ("'cells.pdf' was replaced by a newer version")."""
        return "; ".join(change.describe() for change in self.changes)


def _episode_citations(episode: Any) -> list[dict[str, Any]]:
    if getattr(episode, "kind", None) != Episode.Kind.ANSWER:
        return []
    evidence = getattr(episode, "evidence", None) or {}
    citations = evidence.get("citations") or []
    return [c for c in citations if isinstance(c, dict) and c.get("file_id") is not None]


def citation_status_for(*, episodes: Iterable[Any]) -> dict[int, CitationStatus]:
    """Live citation status of each episode by id, in one query for all of them.

    An answer's citations recorded each file's fingerprint when it was written; the
    status compares them with the registry now: `holds` (every cited file is still
    current and unchanged), `changed` (one was replaced or removed; `.changes` names
    it and its replacement), `unverifiable` (the episode cites no file: a
    conversation, a check). Episodes need `kind` and `evidence` loaded.
    """
    episodes = list(episodes)
    cited = {episode.pk: _episode_citations(episode) for episode in episodes}
    file_ids = {int(c["file_id"]) for citations in cited.values() for c in citations}
    files: dict[int, Any] = {}
    if file_ids:
        files = {
            row["pk"]: row
            for row in SubjectFile.objects.filter(pk__in=file_ids).values(
                "pk",
                "name",
                "fingerprint",
                "replaced_at",
                "removed_at",
                "replaced_by_id",
                "replaced_by__name",
            )
        }
    result: dict[int, CitationStatus] = {}
    for pk, citations in cited.items():
        if not citations:
            result[pk] = CitationStatus(CitationStatus.UNVERIFIABLE)
            continue
        changes: list[CitationChange] = []
        for citation in citations:
            file_id = int(citation["file_id"])
            name = str(citation.get("name", ""))
            row = files.get(file_id)
            if row is None or row["removed_at"] is not None:
                changes.append(CitationChange(file_id=file_id, name=name, change="removed"))
            elif row["replaced_at"] is not None:
                changes.append(
                    CitationChange(
                        file_id=file_id,
                        name=name,
                        change="replaced",
                        by_file_id=row["replaced_by_id"],
                        by_name=row["replaced_by__name"] or "",
                    )
                )
            elif row["fingerprint"] != citation.get("fingerprint"):
                changes.append(CitationChange(file_id=file_id, name=name, change="replaced"))
        result[pk] = (
            CitationStatus(CitationStatus.CHANGED, changes)
            if changes
            else CitationStatus(CitationStatus.HOLDS)
        )
    return result


def answers_unanswerable(*, pair: Pair, before: datetime | None = None):
    """Answers the grounding tracker marked `cannot` (R-1.7), each annotated `question`.

    The question is the student's question the answer replied to: the nearest question
    or answer before it in the chain, when that is a question; otherwise (the question
    was not logged) the answer's own summary stands for it.
    """
    previous = Episode.objects.filter(
        pair=OuterRef("pair"),
        kind__in=[Episode.Kind.QUESTION, Episode.Kind.ANSWER],
        seq__lt=OuterRef("seq"),
    ).order_by("-seq")
    answers = Episode.objects.filter(
        pair=pair, kind=Episode.Kind.ANSWER, stance__stance=AnswerStance.Stance.CANNOT
    )
    if before is not None:
        answers = answers.filter(occurred_at__lt=before)
    return answers.annotate(
        previous_kind=Subquery(previous.values("kind")[:1]),
        previous_summary=Subquery(previous.values("summary")[:1]),
    ).annotate(
        question=Case(
            When(previous_kind=Episode.Kind.QUESTION, then=F("previous_summary")),
            default=F("summary"),
        )
    )
