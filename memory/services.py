"""Writes of the memory app: tenancy, API keys, files and the episode log.

Every public service is one transaction. Work that may be slow or call out (the
embedding) happens before the transaction opens; signals to other apps go out after
it commits.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.contrib.postgres.search import SearchVector
from django.db import IntegrityError, connection, transaction
from django.db.models import Value
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.text import slugify

from memory import indexing
from memory.checkpoints import CheckpointHead, checkpoint_heads, checkpoint_sign
from memory.errors import InvalidInput
from memory.hashing import episode_hash, fields_of
from memory.models import (
    GENESIS_HASH,
    AnswerStance,
    ApiKey,
    ChainCheckpoint,
    ChainVerification,
    CitationCheck,
    Episode,
    EpisodeIndex,
    Organization,
    Pair,
    Student,
    Subject,
    SubjectFile,
)
from memory.rows import columns_of, instances_from_row
from memory.rules import (
    CITATIONS_MAX,
    CONCEPT_NAME_MAX_CHARS,
    CONCEPTS_MAX,
    IDEMPOTENCY_KEY_MAX_CHARS,
    OCCURRED_AT_MIN_YEAR,
    RECALLED_IDS_MAX,
    RESERVED_EVIDENCE_KEYS,
    SUMMARY_MAX_CHARS,
    TOPIC_MAX_CHARS,
    salience_for,
)
from memory.selectors import ChainReport, chain_report, citation_status_for
from memory.signals import episodes_appended

# --------------------------------------------------------------------------------------
# Tenancy and API keys
# --------------------------------------------------------------------------------------

API_KEY_PREFIX_CHARS = 8


def api_key_hash(raw_key: str) -> str:
    # Keys are 256-bit random strings, so a fast hash is enough (no dictionary to attack).
    return hashlib.sha256(raw_key.encode("utf-8")).hexdigest()


@transaction.atomic
def organization_create(*, name: str, slug: str = "") -> Organization:
    slug = slug or slugify(name)[:100]
    if not name.strip():
        raise InvalidInput("name", "must not be empty")
    if not slug:
        raise InvalidInput("slug", "must not be empty")
    if Organization.objects.filter(slug=slug).exists():
        raise InvalidInput("slug", f"an organization with slug {slug!r} already exists")
    return Organization.objects.create(name=name.strip(), slug=slug)


@transaction.atomic
def api_key_create(*, organization: Organization, name: str) -> tuple[ApiKey, str]:
    """Create a key; return the row and the raw key, which is never stored nor shown again."""
    raw = "tb_" + secrets.token_urlsafe(32)
    key = ApiKey.objects.create(
        organization=organization,
        name=name or "default",
        prefix=raw[:API_KEY_PREFIX_CHARS],
        key_hash=api_key_hash(raw),
    )
    return key, raw


@transaction.atomic
def api_key_revoke(*, api_key: ApiKey, now: datetime | None = None) -> ApiKey:
    if api_key.revoked_at is None:
        api_key.revoked_at = now or timezone.now()
        api_key.save(update_fields=["revoked_at"])
    return api_key


def _validate_external_id(field_name: str, external_id: str) -> str:
    value = (external_id or "").strip()
    if not value:
        raise InvalidInput(field_name, "must not be empty")
    if len(value) > 200:
        raise InvalidInput(field_name, "must be at most 200 characters")
    return value


def _validate_timezone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidInput("timezone", f"unknown time zone {name!r}") from exc
    return name


@transaction.atomic
def student_get_or_create(
    *, organization: Organization, external_id: str, timezone_name: str | None = None
) -> Student:
    """The student with this external id, created on first use."""
    external_id = _validate_external_id("student", external_id)
    defaults = {}
    if timezone_name:
        defaults["timezone"] = _validate_timezone(timezone_name)
    student, created = Student.objects.get_or_create(
        organization=organization, external_id=external_id, defaults=defaults
    )
    if not created and timezone_name and student.timezone != timezone_name:
        # The chat service knows the student's zone better than we do: keep it current.
        student.timezone = timezone_name
        student.save(update_fields=["timezone"])
    return student


@transaction.atomic
def subject_get_or_create(
    *, organization: Organization, external_id: str, name: str = "", language: str = ""
) -> Subject:
    """The subject with this external id, created on first use."""
    external_id = _validate_external_id("subject", external_id)
    defaults: dict[str, Any] = {"name": (name or external_id)[:200]}
    if language:
        defaults["language"] = language[:8]
    subject, _ = Subject.objects.get_or_create(
        organization=organization, external_id=external_id, defaults=defaults
    )
    return subject


@transaction.atomic
def pair_get_or_create(*, student: Student, subject: Subject) -> Pair:
    if student.organization_id != subject.organization_id:
        raise InvalidInput("subject", "belongs to another organization than the student")
    pair, _ = Pair.objects.get_or_create(student=student, subject=subject)
    return pair


# --------------------------------------------------------------------------------------
# The file registry
# --------------------------------------------------------------------------------------


def file_fingerprint(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


@transaction.atomic
def subject_file_register(
    *,
    subject: Subject,
    name: str,
    content: bytes,
    content_type: str = "",
    page_count: int = 0,
    uploaded_by: Student | None = None,
    now: datetime | None = None,
) -> SubjectFile:
    """Register a file; a current file with the same name becomes `replaced_by` it.

    Registering the very same bytes under the same name again is a no-op that returns the
    current row (a retried upload must not create a new version).
    """
    name = (name or "").strip()
    if not name:
        raise InvalidInput("name", "must not be empty")
    if len(name) > 255:
        raise InvalidInput("name", "must be at most 255 characters")
    if not content:
        raise InvalidInput("file", "is empty")
    now = now or timezone.now()
    fingerprint = file_fingerprint(content)
    current = (
        SubjectFile.objects.select_for_update()
        .filter(subject=subject, name=name, replaced_at__isnull=True, removed_at__isnull=True)
        .first()
    )
    if current is not None and current.fingerprint == fingerprint:
        return current
    if current is not None:
        # Free the "one current file per name" slot before the new row takes it.
        SubjectFile.objects.filter(pk=current.pk).update(replaced_at=now)
    new = SubjectFile.objects.create(
        subject=subject,
        name=name,
        fingerprint=fingerprint,
        content_type=content_type[:100],
        size_bytes=len(content),
        page_count=page_count,
        content=content,
        uploaded_by=uploaded_by,
        uploaded_at=now,
    )
    if current is not None:
        SubjectFile.objects.filter(pk=current.pk).update(replaced_by=new)
    return new


@transaction.atomic
def subject_file_remove(*, subject_file: SubjectFile, now: datetime | None = None) -> SubjectFile:
    """Record that a file was removed. The row and its bytes stay: citations need them."""
    locked = SubjectFile.objects.select_for_update().get(pk=subject_file.pk)
    if not locked.is_current:
        raise InvalidInput("file", f"{locked.name!r} is no longer current")
    locked.removed_at = now or timezone.now()
    locked.save(update_fields=["removed_at"])
    return locked


# --------------------------------------------------------------------------------------
# The episode log
# --------------------------------------------------------------------------------------


@dataclass
class EventSpec:
    """One event as the chat service describes it (the API's and the importer's input)."""

    kind: str
    summary: str
    text: str = ""
    concepts: list[str] = field(default_factory=list)
    occurred_at: datetime | None = None
    topic: str = ""
    verdict: str = ""
    assessment: str = ""
    predicted_mastery: float | None = None
    score: float | None = None
    # answer: [{"file_id": int} or {"file": name}, optional "pages": [int]]
    citations: list[dict[str, Any]] = field(default_factory=list)
    recalled_ids: list[int] = field(default_factory=list)
    idempotency_key: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


EVENT_FIELDS = frozenset(EventSpec.__dataclass_fields__)


def _check(condition: bool, field_name: str, message: str) -> None:
    if not condition:
        raise InvalidInput(field_name, message)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_text(value: Any, field_name: str, limit: int) -> str:
    _check(isinstance(value, str), field_name, "must be a string")
    _check(len(value) <= limit, field_name, f"must be at most {limit} characters")
    # PostgreSQL text and jsonb cannot hold NUL: refuse it here with a clear message.
    _check("\x00" not in value, field_name, "must not contain NUL characters")
    return value


def event_validate(spec: EventSpec, *, field_prefix: str = "") -> EventSpec:
    """Check one event's shape without touching the database. Returns it normalised."""
    p = field_prefix
    # None for an optional collection means "none", as an omitted field would.
    spec.concepts = [] if spec.concepts is None else spec.concepts
    spec.citations = [] if spec.citations is None else spec.citations
    spec.recalled_ids = [] if spec.recalled_ids is None else spec.recalled_ids
    spec.extra = {} if spec.extra is None else spec.extra
    kinds = {k.value for k in Episode.Kind}
    _check(
        isinstance(spec.kind, str) and spec.kind in kinds,
        f"{p}kind",
        f"must be one of {', '.join(sorted(kinds))}",
    )
    _check(isinstance(spec.summary, str), f"{p}summary", "must be a string")
    summary = spec.summary.strip()
    _check(bool(summary), f"{p}summary", "must not be empty")
    spec.summary = _check_text(summary, f"{p}summary", SUMMARY_MAX_CHARS)
    limit = settings.TUTORBRAIN_MAX_TEXT_CHARS
    spec.text = _check_text(spec.text or "", f"{p}text", limit)
    spec.assessment = _check_text(spec.assessment or "", f"{p}assessment", limit)
    spec.topic = _check_text(spec.topic or "", f"{p}topic", TOPIC_MAX_CHARS).strip()
    spec.idempotency_key = _check_text(
        spec.idempotency_key or "", f"{p}idempotency_key", IDEMPOTENCY_KEY_MAX_CHARS
    )
    if spec.occurred_at is not None:
        _check(
            isinstance(spec.occurred_at, datetime) and timezone.is_aware(spec.occurred_at),
            f"{p}occurred_at",
            "must be a date-time with a time zone (ISO 8601, e.g. 2026-07-12T10:00:00Z)",
        )
        _check(
            spec.occurred_at.year >= OCCURRED_AT_MIN_YEAR,
            f"{p}occurred_at",
            f"must be in {OCCURRED_AT_MIN_YEAR} or later",
        )
    verdicts = {v.value for v in Episode.Verdict}
    spec.verdict = spec.verdict or ""
    if spec.kind == Episode.Kind.CHECK:
        _check(bool(spec.verdict), f"{p}verdict", "is required for a check")
    if spec.verdict:
        _check(
            isinstance(spec.verdict, str) and spec.verdict in verdicts,
            f"{p}verdict",
            "must be one of right, wrong, partial",
        )
        _check(
            spec.kind in ("check", "quiz"), f"{p}verdict", "is only allowed on a check or a quiz"
        )
    if spec.predicted_mastery is not None:
        _check(
            _is_number(spec.predicted_mastery) and 0.0 <= float(spec.predicted_mastery) <= 1.0,
            f"{p}predicted_mastery",
            "must be a number between 0 and 1",
        )
        _check(spec.kind == "check", f"{p}predicted_mastery", "is only allowed on a check")
    if spec.score is not None:
        _check(
            _is_number(spec.score) and 0.0 <= float(spec.score) <= 1.0,
            f"{p}score",
            "must be a number between 0 and 1",
        )
    _check(isinstance(spec.concepts, list), f"{p}concepts", "must be a list of names")
    _check(
        len(spec.concepts) <= CONCEPTS_MAX,
        f"{p}concepts",
        f"must name at most {CONCEPTS_MAX} concepts",
    )
    cleaned: list[str] = []
    for name in spec.concepts:
        _check(
            isinstance(name, str) and name.strip() != "",
            f"{p}concepts",
            "names must be non-empty strings",
        )
        _check_text(name, f"{p}concepts", CONCEPT_NAME_MAX_CHARS)
        if name.strip() not in cleaned:
            cleaned.append(name.strip())
    spec.concepts = cleaned
    _check(isinstance(spec.citations, list), f"{p}citations", "must be a list")
    _check(isinstance(spec.recalled_ids, list), f"{p}recalled_ids", "must be a list of ids")
    if spec.citations:
        _check(spec.kind == "answer", f"{p}citations", "are only allowed on an answer")
        _check(
            len(spec.citations) <= CITATIONS_MAX,
            f"{p}citations",
            f"must name at most {CITATIONS_MAX} files",
        )
    if spec.recalled_ids:
        _check(spec.kind == "answer", f"{p}recalled_ids", "are only allowed on an answer")
        _check(
            len(spec.recalled_ids) <= RECALLED_IDS_MAX,
            f"{p}recalled_ids",
            f"must list at most {RECALLED_IDS_MAX} episodes",
        )
        _check(
            all(isinstance(i, int) and not isinstance(i, bool) for i in spec.recalled_ids),
            f"{p}recalled_ids",
            "must be episode ids (integers)",
        )
    _check(isinstance(spec.extra, dict), f"{p}extra", "must be an object")
    if spec.extra:
        try:
            encoded = json.dumps(spec.extra, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"{p}extra", "must be plain JSON (no NaN)") from exc
        _check(len(encoded) <= limit, f"{p}extra", f"must be at most {limit} characters as JSON")
        _check("\\u0000" not in encoded, f"{p}extra", "must not contain NUL characters")
        reserved = sorted(RESERVED_EVIDENCE_KEYS & set(spec.extra))
        _check(not reserved, f"{p}extra", f"must not use the reserved keys {reserved}")
    return spec


def event_from_mapping(data: Any, *, field_prefix: str = "") -> EventSpec:
    """An EventSpec from a JSON object (the importer's line), naming any bad field.

    `occurred_at` may be an ISO 8601 string. Unknown keys are refused: a misspelt
    `verdit` must not silently become a check without a verdict.
    """
    p = field_prefix
    _check(isinstance(data, dict), p.rstrip(".") or "event", "must be a JSON object")
    unknown = sorted(set(data) - EVENT_FIELDS)
    _check(not unknown, f"{p}{unknown[0] if unknown else ''}", "is not a field of an event")
    values = dict(data)
    for name in ("kind", "summary"):
        _check(name in values, f"{p}{name}", "is required")
    occurred = values.get("occurred_at")
    if isinstance(occurred, str):
        parsed = parse_datetime(occurred)
        _check(parsed is not None, f"{p}occurred_at", "must be an ISO 8601 date-time")
        values["occurred_at"] = parsed
    elif occurred is not None:
        raise InvalidInput(f"{p}occurred_at", "must be an ISO 8601 date-time")
    for name, empty in (("concepts", []), ("citations", []), ("recalled_ids", []), ("extra", {})):
        if values.get(name) is None:
            values[name] = empty
    for name in ("text", "topic", "verdict", "assessment", "idempotency_key"):
        if values.get(name) is None:
            values[name] = ""
    return event_validate(EventSpec(**values), field_prefix=p)


def _resolve_citations(spec: EventSpec, subject: Subject, field_name: str) -> list[dict[str, Any]]:
    """Each cited file with its fingerprint at this moment (R-1.2)."""
    resolved = []
    for i, citation in enumerate(spec.citations):
        where = f"{field_name}[{i}]"
        if not isinstance(citation, dict):
            raise InvalidInput(where, "must be an object with file_id or file")
        unknown = sorted(set(citation) - {"file_id", "file", "pages"})
        if unknown:
            raise InvalidInput(f"{where}.{unknown[0]}", "is not a field of a citation")
        qs = SubjectFile.objects.filter(subject=subject)
        if citation.get("file_id") is not None:
            file_id = citation["file_id"]
            if not isinstance(file_id, int) or isinstance(file_id, bool):
                raise InvalidInput(f"{where}.file_id", "must be an integer file id")
            file = qs.filter(pk=file_id).first()
            if file is None:
                raise InvalidInput(f"{where}.file_id", "names a file that is not in this subject")
        elif citation.get("file"):
            if not isinstance(citation["file"], str):
                raise InvalidInput(f"{where}.file", "must be a file name")
            file = qs.filter(
                name=citation["file"], replaced_at__isnull=True, removed_at__isnull=True
            ).first()
            if file is None:
                raise InvalidInput(
                    f"{where}.file", "names a file that is not (currently) in this subject"
                )
        else:
            raise InvalidInput(where, "must name file_id or file")
        pages = citation.get("pages") or []
        if not isinstance(pages, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in pages
        ):
            raise InvalidInput(f"{where}.pages", "must be a list of page numbers (1-based)")
        resolved.append(
            {"file_id": file.pk, "name": file.name, "fingerprint": file.fingerprint, "pages": pages}
        )
    return resolved


def _evidence_for(spec: EventSpec, citations: list[dict[str, Any]]) -> dict[str, Any]:
    evidence: dict[str, Any] = dict(spec.extra or {})
    if spec.kind == "answer":
        evidence["citations"] = citations
        evidence["recalled_ids"] = list(spec.recalled_ids)
    if spec.assessment:
        evidence["assessment"] = spec.assessment
    if spec.score is not None:
        evidence["score"] = float(spec.score)
    return evidence


def _lock_pair(pair_id: int) -> Pair:
    # The row lock on the pair is the chain's append lock: concurrent appends to one
    # chain queue here; appends to other chains never wait.
    return Pair.objects.select_related("subject").select_for_update(of=("self",)).get(pk=pair_id)


def _keys_already_in(chain: Any, events: Sequence[EventSpec]) -> set[str]:
    """The batch's idempotency keys already in the chain (`chain`: a Pair queryset).

    Read before embedding, so a retried batch is not embedded again: episodes are never
    deleted, so a key found here is still there when the append takes the lock.
    """
    keys = [s.idempotency_key for s in events if s.idempotency_key]
    if not keys:
        return set()
    return set(
        Episode.objects.filter(pair__in=chain, idempotency_key__in=keys).values_list(
            "idempotency_key", flat=True
        )
    )


def _events_prepare(events: Sequence[EventSpec], *, embed: bool, chain: Any = None) -> list[Any]:
    """Validate a batch (no database) and embed it (before any transaction opens).

    Events whose idempotency key is already in `chain` are replays: not embedded."""
    if not events:
        raise InvalidInput("events", "must hold at least one event")
    limit = settings.TUTORBRAIN_MAX_BATCH_EVENTS
    if len(events) > limit:
        raise InvalidInput("events", f"a batch holds at most {limit} events")
    many = len(events) > 1
    for i, spec in enumerate(events):
        event_validate(spec, field_prefix=f"events[{i}]." if many else "")
    keys = [s.idempotency_key for s in events if s.idempotency_key]
    if len(keys) != len(set(keys)):
        raise InvalidInput("idempotency_key", "is repeated within the batch")
    if not embed:
        return [None] * len(events)
    replayed = _keys_already_in(chain, events) if chain is not None else set()
    fresh = [i for i, s in enumerate(events) if s.idempotency_key not in replayed]
    vectors: list[Any] = [None] * len(events)
    if fresh:
        for i, vector in zip(fresh, _embed_events([events[i] for i in fresh]), strict=True):
            vectors[i] = vector
    return vectors


def _append_locked(
    *,
    pair_id: int,
    events: Sequence[EventSpec],
    vectors: list[Any],
    now: datetime,
    locked: Pair | None = None,
) -> list[Episode]:
    """The append proper; must run inside a transaction. Validated, embedded events.

    `locked`: the pair, already read with its row lock in this transaction (else it is
    locked here). Its head fields are brought up to date with the append.
    """
    many = len(events) > 1
    if locked is None:
        locked = _lock_pair(pair_id)
    keys = [s.idempotency_key for s in events if s.idempotency_key]
    existing: dict[str, Episode] = {}
    if keys:
        existing = {
            e.idempotency_key: e
            for e in Episode.objects.filter(pair=locked, idempotency_key__in=keys)
        }
    result: list[Episode] = []
    new_rows: list[tuple[Episode, Any]] = []
    seq, prev = locked.head_seq, locked.head_hash or GENESIS_HASH
    for i, spec in enumerate(events):
        if spec.idempotency_key and spec.idempotency_key in existing:
            replay = existing[spec.idempotency_key]
            replay.was_appended = False
            result.append(replay)
            continue
        p = f"events[{i}]." if many else ""
        citations = (
            _resolve_citations(spec, locked.subject, f"{p}citations") if spec.citations else []
        )
        if spec.recalled_ids:
            _check_recalled(locked, spec.recalled_ids, f"{p}recalled_ids")
        seq += 1
        episode = Episode(
            pair=locked,
            seq=seq,
            kind=spec.kind,
            summary=spec.summary,
            text=spec.text or "",
            concepts=spec.concepts,
            salience=salience_for(spec.kind, spec.verdict),
            occurred_at=spec.occurred_at or now,
            recorded_at=now,
            topic=spec.topic,
            verdict=spec.verdict or "",
            predicted_mastery=None
            if spec.predicted_mastery is None
            else float(spec.predicted_mastery),
            evidence=_evidence_for(spec, citations),
            idempotency_key=spec.idempotency_key or "",
            prev_hash=prev,
        )
        episode.hash = episode_hash(fields_of(episode), prev)
        episode.was_appended = True
        prev = episode.hash
        new_rows.append((episode, vectors[i]))
        result.append(episode)
    if new_rows:
        try:
            # No savepoint: on a violation the whole append is rolled back anyway.
            Episode.objects.bulk_create([e for e, _ in new_rows])
        except IntegrityError as exc:  # a race the lock should make impossible
            raise RuntimeError(f"episode chain of pair {locked.pk} would fork: {exc}") from exc
        EpisodeIndex.objects.bulk_create([_index_row(e, vector) for e, vector in new_rows])
        last = new_rows[-1][0]
        latest = max(e.occurred_at for e, _ in new_rows)
        locked.head_seq, locked.head_hash = last.seq, last.hash
        if locked.last_episode_at is None or latest > locked.last_episode_at:
            locked.last_episode_at = latest
        Pair.objects.filter(pk=locked.pk).update(
            head_seq=locked.head_seq,
            head_hash=locked.head_hash,
            last_episode_at=locked.last_episode_at,
        )
        new_ids = [e.pk for e, _ in new_rows]
        new_kinds = sorted({e.kind for e, _ in new_rows})
        transaction.on_commit(
            lambda: episodes_appended.send(
                sender=Episode,
                episode_ids=new_ids,
                pair_id=locked.pk,
                kinds=new_kinds,
                head_seq=last.seq,
            )
        )
    return result


def episode_append_batch(
    *,
    pair: Pair,
    events: Sequence[EventSpec],
    now: datetime | None = None,
    embed: bool = True,
) -> list[Episode]:
    """Append events to one chain in order, in one transaction: all or nothing.

    Events whose idempotency key is already in the chain are not appended again; their
    existing episodes are returned in their place (`was_appended` tells which is which).
    `embed=False` skips the embedding (bulk imports may re-embed later with
    `manage.py reembed`).
    """
    if not events:
        return []
    vectors = _events_prepare(events, embed=embed, chain=Pair.objects.filter(pk=pair.pk))
    now = now or timezone.now()
    with transaction.atomic():
        return _append_locked(pair_id=pair.pk, events=events, vectors=vectors, now=now)


def episode_append(
    *,
    pair: Pair,
    kind: str,
    summary: str,
    now: datetime | None = None,
    embed: bool = True,
    **fields: Any,
) -> Episode:
    """Append one event to a pair's chain (see EventSpec for the fields)."""
    spec = EventSpec(kind=kind, summary=summary, **fields)
    return episode_append_batch(pair=pair, events=[spec], now=now, embed=embed)[0]


def episode_append_external(
    *,
    organization: Organization,
    student_external_id: str,
    subject_external_id: str,
    events: Sequence[EventSpec],
    student_timezone: str | None = None,
    now: datetime | None = None,
    embed: bool = True,
) -> tuple[Pair, list[Episode]]:
    """The API's append: student, subject and pair created on first use, then the batch.

    Everything is validated first and written in one transaction, so a bad event leaves
    no trace, not even a new student.
    """
    _validate_external_id("student", student_external_id)
    _validate_external_id("subject", subject_external_id)
    if student_timezone:
        try:
            _validate_timezone(student_timezone)
        except InvalidInput as exc:
            raise InvalidInput("student_timezone", exc.message) from exc
    chain = Pair.objects.filter(
        student__organization=organization,
        student__external_id=student_external_id,
        subject__external_id=subject_external_id,
    )
    vectors = _events_prepare(events, embed=embed, chain=chain)
    now = now or timezone.now()
    with transaction.atomic():
        # Every turn after the first finds its pair, and takes the chain's append lock,
        # in one query (instead of three get-or-creates, nine statements with their
        # savepoints, then the lock).
        pair = _pair_locked(organization, student_external_id, subject_external_id)
        locked = pair
        if pair is None or (student_timezone and pair.student.timezone != student_timezone):
            locked = None
            student = student_get_or_create(
                organization=organization,
                external_id=student_external_id,
                timezone_name=student_timezone,
            )
            subject = subject_get_or_create(
                organization=organization, external_id=subject_external_id
            )
            pair = pair_get_or_create(student=student, subject=subject)
            pair.student, pair.subject = student, subject
        episodes = _append_locked(
            pair_id=pair.pk, events=events, vectors=vectors, now=now, locked=locked
        )
    if locked is None:
        pair.refresh_from_db(fields=["head_seq", "head_hash", "last_episode_at"])
    return pair, episodes


# The pair of an organization's student and subject, with both loaded, its row locked (the
# chain's append lock): what chain.select_related("student", "subject")
# .select_for_update(of=("self",)).first() reads, as one plain statement. Every append
# of every turn runs it, and the ORM spent longer compiling that query than the
# database took to run it.
_PAIR_LOCKED_SQL = (
    f"SELECT {columns_of(('p', Pair), ('st', Student), ('sj', Subject))}"
    f" FROM {Pair._meta.db_table} p"
    f" JOIN {Student._meta.db_table} st ON st.id = p.student_id"
    f" JOIN {Subject._meta.db_table} sj ON sj.id = p.subject_id"
    " WHERE st.organization_id = %s AND st.external_id = %s AND sj.external_id = %s"
    " ORDER BY p.id LIMIT 1 FOR UPDATE OF p"
)


def _pair_locked(
    organization: Organization, student_external_id: str, subject_external_id: str
) -> Pair | None:
    """The pair with its student and subject, row-locked; must run inside a transaction."""
    with connection.cursor() as cursor:
        cursor.execute(
            _PAIR_LOCKED_SQL, [organization.pk, student_external_id, subject_external_id]
        )
        row = cursor.fetchone()
    if row is None:
        return None
    pair, pair.student, pair.subject = instances_from_row(
        row, (Pair, Student, Subject), connection.alias
    )
    return pair


def _check_recalled(pair: Pair, ids: list[int], field_name: str) -> None:
    found = set(Episode.objects.filter(pair=pair, pk__in=ids).values_list("pk", flat=True))
    missing = [i for i in ids if i not in found]
    if missing:
        raise InvalidInput(field_name, f"are not episodes of this student and subject: {missing}")


def _embed_events(events: Sequence[EventSpec]) -> list[Any]:
    texts = [indexing.episode_embedding_text(s.summary, s.text or "") for s in events]
    vectors = indexing.embed(texts)
    return list(vectors)


def _index_row(episode: Episode, vector: Any) -> EpisodeIndex:
    assessment = str(episode.evidence.get("assessment", ""))
    document = indexing.search_document(
        episode.summary,
        f"{episode.text}\n{assessment}".strip(),
        episode.topic,
        episode.concepts,
        episode.pair.subject.language,
    )
    return EpisodeIndex(
        episode=episode,
        pair_id=episode.pair_id,
        occurred_at=episode.occurred_at,
        kind=episode.kind,
        embedding=vector,
        embedding_model=indexing.embed_model_name() if vector is not None else "",
        search=SearchVector(Value(document), config="simple"),
    )


def advisory_lock_key(*parts: int) -> int:
    """A 63-bit key for pg_advisory_xact_lock from small integers."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") & 0x7FFF_FFFF_FFFF_FFFF


def advisory_xact_lock(*parts: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [advisory_lock_key(*parts)])


# --------------------------------------------------------------------------------------
# Answer stance
# --------------------------------------------------------------------------------------


@transaction.atomic
def answer_stance_report(
    *, episode: Episode, stance: str, now: datetime | None = None
) -> AnswerStance:
    """Record the grounding tracker's stance on an answer. Written once, never changed."""
    stances = [s.value for s in AnswerStance.Stance]
    _check(stance in stances, "stance", f"must be one of {', '.join(stances)}")
    _check(
        episode.kind == Episode.Kind.ANSWER,
        "episode",
        f"is a {episode.kind}: a stance is reported on an answer only",
    )
    existing = AnswerStance.objects.filter(episode_id=episode.pk).first()
    if existing is not None:
        raise InvalidInput(
            "stance",
            f"was already reported as {existing.stance!r} at "
            f"{existing.reported_at.isoformat()}; a stance is written once",
        )
    try:
        with transaction.atomic():
            return AnswerStance.objects.create(
                episode=episode, stance=stance, reported_at=now or timezone.now()
            )
    except IntegrityError as exc:  # a concurrent report won the race
        raise InvalidInput("stance", "was already reported; a stance is written once") from exc


# --------------------------------------------------------------------------------------
# Verification: chains and citations
# --------------------------------------------------------------------------------------


def chain_verify(
    *,
    pair: Pair,
    checkpoint_head: CheckpointHead | None = None,
    checkpoint_created_at: datetime | None = None,
    now: datetime | None = None,
) -> ChainVerification:
    """Recompute a pair's chain (streamed), optionally against a checkpoint, and record it.

    The recomputation reads outside any transaction (it may take seconds on a long
    chain); only the result row is written, in its own short transaction.
    """
    report = chain_report(pair=pair, checkpoint_head=checkpoint_head)
    return _chain_verification_record(
        pair=pair,
        report=report,
        checkpoint_created_at=checkpoint_created_at if checkpoint_head else None,
        now=now or timezone.now(),
    )


@transaction.atomic
def _chain_verification_record(
    *, pair: Pair, report: ChainReport, checkpoint_created_at: datetime | None, now: datetime
) -> ChainVerification:
    return ChainVerification.objects.create(
        pair=pair,
        intact=report.intact,
        length=report.length,
        broken_seq=report.broken_seq,
        failure=report.failure,
        reason=report.reason[:500],
        checkpoint_created_at=checkpoint_created_at,
        checked_at=now,
    )


@transaction.atomic
def checkpoint_create(*, now: datetime | None = None) -> ChainCheckpoint:
    """Sign and store the head (seq + hash) of every non-empty chain.

    Write the returned checkpoint's document (`memory.checkpoints.checkpoint_document`)
    somewhere the database's owner cannot rewrite: that copy is what catches a
    truncation or a whole-chain rewrite later.
    """
    now = now or timezone.now()
    heads = checkpoint_heads()
    return ChainCheckpoint.objects.create(
        created_at=now, heads=heads, signature=checkpoint_sign(created_at=now, heads=heads)
    )


@transaction.atomic
def citation_verify(*, episode: Episode, now: datetime | None = None) -> CitationCheck:
    """Check an episode's cited files against the registry and store the result (R-6)."""
    status = citation_status_for(episodes=[episode])[episode.pk]
    return CitationCheck.objects.create(
        episode=episode,
        result=str(status),
        details={"files": [change.as_dict() for change in status.changes]},
        checked_at=now or timezone.now(),
    )


_REINDEX_PAGE_SQL = """
    SELECT e.id, e.summary, e.text, e.evidence->>'assessment', e.topic, e.concepts, sb.language
    FROM memory_episodeindex ix
    JOIN memory_episode e ON e.id = ix.episode_id
    JOIN memory_pair p ON p.id = e.pair_id
    JOIN memory_subject sb ON sb.id = p.subject_id
    WHERE ix.episode_id > %s
    ORDER BY ix.episode_id
    LIMIT %s
"""
_REINDEX_WRITE_SQL = """
    UPDATE memory_episodeindex ix SET search = to_tsvector('simple', d.document)
    FROM unnest(%s::bigint[], %s::text[]) AS d(id, document)
    WHERE ix.episode_id = d.id
"""


def episode_index_search_rebuild(
    *, batch_size: int = 2_000, progress: Callable[[int], None] | None = None
) -> int:
    """Recompute every episode's search document with the current language data.

    The search document is derived data (never part of an episode's hash), so this is
    the backfill after a change to how it is made (stemming, stop lists): keyset pages
    of `batch_size` rows, one transaction each, safe to interrupt and run again.
    Returns the number of rows rewritten.
    """
    written, last = 0, 0
    while True:
        with connection.cursor() as cursor:
            cursor.execute(_REINDEX_PAGE_SQL, [last, batch_size])
            rows = cursor.fetchall()
        if not rows:
            return written
        ids, documents = [], []
        for pk, summary, text, assessment, topic, concepts, language in rows:
            body = f"{text}\n{assessment or ''}".strip()
            ids.append(pk)
            documents.append(
                indexing.search_document(summary, body, topic, list(concepts or []), language)
            )
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_REINDEX_WRITE_SQL, [ids, documents])
        written += len(rows)
        last = ids[-1]
        if progress:
            progress(len(rows))
