"""Writes of the concept map: reading files into it, teaching it, deriving its numbers.

Every public service is one transaction that first locks the subject's `SubjectMap`
row: changes to one map are serialised, so two files read at once cannot race on the
same concept key. Slow work (parsing, the extractor, embeddings) happens before the
transaction opens; tasks are queued after it commits.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import psycopg
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from pgvector.psycopg.vector import register_vector_info
from psycopg.types import TypeInfo

from concepts import graph, lookup, merge, reading, reading_lease
from concepts.extractors import (
    ExtractedConcept,
    Extraction,
    ExtractionFailed,
    concept_bound,
    extractor_get,
)
from concepts.models import (
    READINESS_CONFIRMED,
    READINESS_EXPLAINED,
    READINESS_NAMED,
    READINESS_TAUGHT,
    Concept,
    ConceptSource,
    FileReading,
    Prerequisite,
    SubjectMap,
    TaughtNote,
)
from concepts.naming import (
    concept_key,
    display_name,
    find_keys_in,
    text_language,
    vector_text,
)
from concepts.teaching import defines_something, short_name, subject_words, teaching_form
from concepts.validator import name_check
from memory.errors import InvalidInput
from memory.models import Episode, Organization, Pair, Subject, SubjectFile
from memory.services import (
    episode_append,
    pair_get_or_create,
    student_get_or_create,
    subject_file_register,
    subject_file_remove,
    subject_get_or_create,
)

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------
# Derived numbers
# --------------------------------------------------------------------------------------


def _readiness_band(*, taught: bool, confirmed: bool, explained: bool) -> float:
    """The readiness band of one concept: what the material says about it."""
    if taught:
        return READINESS_TAUGHT
    if confirmed:
        return READINESS_CONFIRMED
    if explained:
        return READINESS_EXPLAINED
    return READINESS_NAMED


def _lock_map(subject: Subject) -> SubjectMap:
    SubjectMap.objects.get_or_create(subject=subject)
    return SubjectMap.objects.select_for_update().get(subject=subject)


def _explained_ids(subject: Subject) -> set[int]:
    """Concepts that a *current* file explains (a replaced or removed file no longer does)."""
    return set(
        ConceptSource.objects.filter(
            concept__subject=subject,
            file__replaced_at__isnull=True,
            file__removed_at__isnull=True,
        ).values_list("concept_id", flat=True)
    )


def _resolve_assumptions(subject: Subject) -> list[Concept]:
    """R-2.4: an assumed prerequisite is a node only when two or more concepts assume it.

    A name in `Concept.assumes` that some concept now carries (a file explained it, or a
    second concept assumed it and it became a node) turns into an edge and leaves the
    list; a name only one concept assumes stays recorded there, drawn nowhere.
    Only the concepts that assume something are read, and the concepts carrying those
    names are looked up by key and alias: the rest of the map is not loaded.
    """
    assuming = list(
        Concept.objects.filter(subject=subject, assumes__len__gt=0)
        .only("pk", "assumes")
        .order_by("pk")
    )
    if not assuming:
        return []
    wanted = sorted({concept_key(n) for c in assuming for n in c.assumes} - {""})
    # Looked up in every number, matched as the merge matches names: the same key first,
    # then the same but for number ("átomos" is carried by "Átomo").
    variants = set().union(*(lookup.key_variants(key) for key in wanted))
    by_id: dict[int, Concept] = {}
    names: list[tuple[int, str, np.ndarray | None]] = []
    for concept in (
        Concept.objects.filter(pk__in=_ids_by_keys(subject, variants))
        .only("pk", "key", "aliases")
        .order_by("pk")
    ):
        by_id[concept.pk] = concept
        names += [(concept.pk, name, None) for name in (concept.key, *concept.aliases)]
    holders: dict[str, list[tuple[Concept, str]]] = defaultdict(list)
    for concept in assuming:
        for name in concept.assumes:
            key = concept_key(name)
            if key and all(h is not concept for h, _ in holders[key]):
                holders[key].append((concept, name))
    changed: dict[int, Concept] = {}
    created: list[Concept] = []
    for key, assumed_by in holders.items():
        match = merge.best_match(key=key, vector=None, candidates=names, thresholds=None)
        target = by_id.get(match) if match is not None else None
        if target is None and len(assumed_by) >= 2:
            target = Concept.objects.create(
                subject=subject,
                name=display_name(assumed_by[0][1])[:200],
                key=key,
                layer=Concept.Layer.ASSUMED,
                readiness=READINESS_NAMED,
            )
            by_id[target.pk] = target
            names.append((target.pk, key, None))
            created.append(target)
        if target is None:
            continue
        for holder, _name in assumed_by:
            holder.assumes = [n for n in holder.assumes if concept_key(n) != key]
            changed[holder.pk] = holder
            if holder.pk != target.pk:
                Prerequisite.objects.get_or_create(
                    subject=subject, concept=holder, prerequisite=target
                )
    if changed:
        Concept.objects.bulk_update(list(changed.values()), ["assumes"])
    return created


def _recompute_locked(subject_map: SubjectMap, now: datetime) -> SubjectMap:
    """Assumed nodes, then every derived number of the map, written where it changed.

    PageRank and the teaching order are global, so the whole map's ids and edges are
    read; as plain tuples (no model objects, no vectors, no definitions), which keeps
    this a small share of a reading at a thousand concepts (docs/concept-map.md).
    """
    subject = subject_map.subject
    created = _resolve_assumptions(subject)
    rows = list(
        Concept.objects.filter(subject=subject)
        .order_by("pk")
        .values_list(
            "pk", "name", "taught", "confirmed_by_check", "readiness", "centrality",
            "generation", "teaching_rank",
        )
    )  # fmt: skip
    explained = _explained_ids(subject)
    readiness = {
        pk: _readiness_band(taught=taught, confirmed=confirmed, explained=pk in explained)
        for pk, _, taught, confirmed, *_ in rows
    }
    edges = list(
        Prerequisite.objects.filter(subject=subject).values_list(
            "concept_id", "prerequisite_id", "weight"
        )
    )
    derived = graph.derive(
        nodes=[(pk, name, readiness[pk]) for pk, name, *_ in rows],
        edges=edges,
    )
    changed = []
    for pk, _, _, _, *stored in rows:
        new = (
            readiness[pk],
            derived.centrality.get(pk, 0.0),
            derived.generation.get(pk, 0),
            derived.teaching_rank.get(pk, 0),
        )
        if tuple(stored) != new:
            changed.append((pk, *new))
    _write_derived(changed)
    names = {pk: name for pk, name, *_ in rows}
    subject_map.concept_count = len(rows)
    subject_map.readiness = round(derived.readiness, 6)
    subject_map.cycle = [names[i][:200] for i in derived.cycle]
    subject_map.computed_at = now
    subject_map.save(update_fields=["concept_count", "readiness", "cycle", "computed_at"])
    if created:
        _embed_after_commit(subject)
    return subject_map


def _write_derived(rows: list[tuple[int, float, float, int, int]]) -> None:
    """One UPDATE for all changed rows (id, readiness, centrality, generation, rank);
    bulk_update's CASE per row is ~100x slower here."""
    if not rows:
        return
    table = connection.ops.quote_name(Concept._meta.db_table)
    columns = [list(column) for column in zip(*rows, strict=True)]
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} AS c SET readiness = v.r, centrality = v.c, generation = v.g, "
            "teaching_rank = v.t "
            "FROM unnest(%s::bigint[], %s::float8[], %s::float8[], %s::int[], %s::int[]) "
            "AS v(id, r, c, g, t) WHERE c.id = v.id",
            columns,
        )


def _embed_after_commit(subject: Subject) -> None:
    from concepts.tasks import concepts_embed_missing

    subject_id = subject.pk
    transaction.on_commit(lambda: concepts_embed_missing.delay(subject_id))


@transaction.atomic
def map_recompute(*, subject: Subject, now: datetime | None = None) -> SubjectMap:
    """Recompute assumed nodes, readiness, centrality, teaching order and subject readiness."""
    return _recompute_locked(_lock_map(subject), now or timezone.now())


@transaction.atomic
def concept_confirm_by_check(*, concept: Concept, now: datetime | None = None) -> Concept:
    """A passed check confirmed the concept: readiness to the 0.85 band unless taught."""
    subject_map = _lock_map(concept.subject)
    locked = Concept.objects.select_for_update().get(pk=concept.pk)
    if not locked.confirmed_by_check:
        locked.confirmed_by_check = True
        locked.save(update_fields=["confirmed_by_check", "updated_at"])
        _recompute_locked(subject_map, now or timezone.now())
        locked.refresh_from_db()
    return locked


def concept_name_vectors(names: list[str]):
    """Vectors of concept names with the process's embedder (never inside a transaction)."""
    from memory import indexing

    return indexing.embed([vector_text(n) for n in names]), indexing.embed_model_name()


def concepts_embed(*, subject: Subject) -> int:
    """Give every concept of the subject without a vector one (its name's embedding)."""
    missing = list(
        Concept.objects.filter(subject=subject, embedding__isnull=True).values_list("pk", "name")
    )
    if not missing:
        return 0
    vectors, model_name = concept_name_vectors([name for _, name in missing])
    with transaction.atomic():
        for (pk, _), vector in zip(missing, vectors, strict=True):
            Concept.objects.filter(pk=pk, embedding__isnull=True).update(
                embedding=vector, embedding_model=model_name
            )
    return len(missing)


# --------------------------------------------------------------------------------------
# File intake: register, log, queue the reading
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileUpload:
    file: SubjectFile
    reading: FileReading
    replaced: SubjectFile | None
    episode: Episode | None
    created: bool  # False when the very same bytes were already the current version


def _validated_upload(*, name: str, content: bytes, content_type: str) -> tuple[str, int, str]:
    """(kind, page count, content type) or InvalidInput naming the field."""
    name = (name or "").strip()
    if not name:
        raise InvalidInput("name", "must not be empty")
    kind = reading.file_kind(name, content_type)
    if kind is None:
        raise InvalidInput(
            "file", f"unsupported file type {name!r}: send one of {reading.SUPPORTED}"
        )
    if not content:
        raise InvalidInput("file", "is empty")
    limit = settings.TUTORBRAIN_MAX_FILE_BYTES
    if len(content) > limit:
        raise InvalidInput("file", f"is {len(content)} bytes; the limit is {limit} bytes")
    try:
        page_count = reading.page_count(content, kind)
    except reading.UnreadableFile as exc:
        raise InvalidInput("file", str(exc)) from exc
    return kind, page_count, reading.CONTENT_TYPE_OF[kind]


def file_upload(
    *,
    pair: Pair | None = None,
    subject: Subject | None = None,
    name: str,
    content: bytes,
    content_type: str = "",
    now: datetime | None = None,
    queue: bool = True,
) -> FileUpload:
    """Register a student's file for the pair's subject, log a `file` episode, queue reading.

    A staff upload from the admin passes `subject` instead of a pair: no student, so no
    episode (the registry row records it).

    Bad input (no name, unsupported type, empty, over TUTORBRAIN_MAX_FILE_BYTES, a PDF
    that cannot be opened) raises InvalidInput before anything is written. A new
    version under the same name replaces the old one (memory's registry records it).
    Registration, reading state and episode are one transaction; the reading is queued
    after it commits (`queue=False`: the caller reads it with `file_read`, as the sample
    loader does). The `file` episode is appended without an embedding (no vector
    is computed inside a transaction); `manage.py reembed` fills it in.
    """
    if pair is not None:
        subject = pair.subject
    if subject is None:
        raise InvalidInput("subject", "is required")
    _, page_count, content_type = _validated_upload(
        name=name, content=content, content_type=content_type
    )
    now = now or timezone.now()
    with transaction.atomic():
        previous = SubjectFile.objects.filter(
            subject=subject,
            name=name.strip(),
            replaced_at__isnull=True,
            removed_at__isnull=True,
        ).first()
        registered = subject_file_register(
            subject=subject,
            name=name.strip(),
            content=content,
            content_type=content_type,
            page_count=page_count,
            uploaded_by=pair.student if pair is not None else None,
            now=now,
        )
        existing = FileReading.objects.filter(file=registered).first()
        if existing is not None:
            return FileUpload(registered, existing, None, None, created=False)
        file_reading = FileReading.objects.create(
            file=registered, state=FileReading.State.QUEUED, queued_at=now
        )
        replaced = previous if previous is not None and previous.pk != registered.pk else None
        pages = "page" if page_count == 1 else "pages"
        summary = f"Uploaded {registered.name} ({page_count} {pages})"
        if replaced is not None:
            summary = f"Uploaded a new version of {registered.name} ({page_count} {pages})"
        episode = (
            None
            if pair is None
            else episode_append(
                pair=pair,
                kind="file",
                summary=summary[:300],
                now=now,
                embed=False,
                extra={
                    "file_id": registered.pk,
                    "name": registered.name,
                    "fingerprint": registered.fingerprint,
                    "page_count": page_count,
                    "replaces_file_id": replaced.pk if replaced is not None else None,
                },
            )
        )
        if queue:
            _queue_reading(registered.pk)
    return FileUpload(registered, file_reading, replaced, episode, created=True)


def file_upload_external(
    *,
    organization: Organization,
    student_external_id: str,
    subject_external_id: str,
    name: str,
    content: bytes,
    content_type: str = "",
    subject_name: str = "",
    subject_language: str = "",
    now: datetime | None = None,
) -> FileUpload:
    """The API's upload: student, subject and pair created on first use, then `file_upload`.

    One transaction, so a refused file leaves no trace, not even a new student.
    """
    with transaction.atomic():
        student = student_get_or_create(organization=organization, external_id=student_external_id)
        subject = subject_get_or_create(
            organization=organization,
            external_id=subject_external_id,
            name=subject_name,
            language=subject_language,
        )
        pair = pair_get_or_create(student=student, subject=subject)
        return file_upload(
            pair=pair, name=name, content=content, content_type=content_type, now=now
        )


def _queue_reading(file_id: int) -> None:
    from concepts.tasks import file_read_task

    transaction.on_commit(lambda: file_read_task.delay(file_id))


@transaction.atomic
def file_reading_requeue(*, file_reading: FileReading, now: datetime | None = None) -> FileReading:
    """Read a failed file again (after the extractor endpoint is back, say)."""
    locked = FileReading.objects.select_for_update().get(pk=file_reading.pk)
    if locked.state != FileReading.State.FAILED:
        raise InvalidInput("file", f"is {locked.state}; only a failed reading is retried")
    locked.state = FileReading.State.QUEUED
    locked.reason = ""
    locked.queued_at = now or timezone.now()
    locked.started_at = locked.finished_at = None
    locked.save()
    _queue_reading(locked.pk)
    return locked


def file_remove(*, subject_file: SubjectFile, now: datetime | None = None) -> SubjectFile:
    """Record the removal of a file and recompute the map (its pages explain nothing now)."""
    now = now or timezone.now()
    with transaction.atomic():
        removed = subject_file_remove(subject_file=subject_file, now=now)
        _recompute_locked(_lock_map(removed.subject), now)
    return removed


# --------------------------------------------------------------------------------------
# Reading a file into the map (R-2.1 ..)
# --------------------------------------------------------------------------------------


def _claim(file_id: int, now: datetime) -> bool:
    """queued (or a lost reading) -> reading by this process; False if someone else has it."""
    return bool(
        FileReading.objects.filter(reading_lease.claimable(now), pk=file_id).update(
            state=FileReading.State.READING,
            started_at=now,
            reason="",
            worker=reading_lease.worker_id(),
            heartbeat_at=now,
            attempts=F("attempts") + 1,
        )
    )


def _fail(file_id: int, reason: str, extractor: str = "") -> None:
    FileReading.objects.filter(pk=file_id).update(
        state=FileReading.State.FAILED,
        reason=reason[:2000],
        extractor=extractor,
        finished_at=timezone.now(),
    )


def file_read(*, subject_file: SubjectFile, now: datetime | None = None) -> FileReading:
    """Read one queued file into its subject's map; on any failure the map is unchanged.

    Claimed by a conditional update (queued -> reading), so a duplicate task does
    nothing. Parsing, extraction and embeddings run outside the transaction; the merge
    into the map and the recomputation are one transaction.
    """
    now = now or timezone.now()
    if not _claim(subject_file.pk, now):
        return FileReading.objects.get(pk=subject_file.pk)
    subject_file.refresh_from_db(fields=["replaced_at", "removed_at"])
    if not subject_file.is_current:
        # A newer version (or the removal) came before the reading: nothing to explain.
        FileReading.objects.filter(pk=subject_file.pk).update(
            state=FileReading.State.DONE,
            reason="skipped: the file was replaced or removed before it was read",
            finished_at=timezone.now(),
        )
        return FileReading.objects.get(pk=subject_file.pk)
    extractor_name = ""
    try:
        extractor = extractor_get()
        extractor_name = extractor.name
        parsed = reading.parse(
            bytes(subject_file.content),
            reading.file_kind(subject_file.name, subject_file.content_type) or "",
        )
        extraction = extractor.extract(
            pages=parsed.pages, language=subject_file.subject.language, file_name=subject_file.name
        )
        accepted, rejected = _validate(extraction, concept_bound(parsed.pages))
        vectors, model_name = (
            concept_name_vectors([c.name for c in accepted]) if accepted else ([], "")
        )
        file_language = text_language("\n".join(parsed.pages)) or subject_file.subject.language
        with transaction.atomic():
            subject_map = _lock_map(subject_file.subject)
            _merge_into_map(subject_file, accepted, vectors, model_name, file_language)
            _recompute_locked(subject_map, now)
            FileReading.objects.filter(pk=subject_file.pk).update(
                state=FileReading.State.DONE,
                extractor=extraction.extractor,
                concepts_found=len(accepted),
                rejected_names=[r[:300] for r in rejected][:200],
                finished_at=timezone.now(),
            )
    except (reading.UnreadableFile, ExtractionFailed) as exc:
        _fail(subject_file.pk, str(exc), extractor_name)
    except Exception as exc:
        logger.exception("reading file %s failed", subject_file.pk)
        _fail(subject_file.pk, f"unexpected error: {type(exc).__name__}: {exc}", extractor_name)
    return FileReading.objects.get(pk=subject_file.pk)


def _validate(extraction: Extraction, bound: int) -> tuple[list[ExtractedConcept], list[str]]:
    """Apply the validator to whatever the extractor proposed (the LLM's names too)."""
    accepted: list[ExtractedConcept] = []
    rejected = list(extraction.rejected)
    seen: set[str] = set()
    for concept in extraction.concepts[:bound]:
        verdict = name_check(concept.name)
        key = concept_key(concept.name)
        if not verdict.ok:
            rejected.append(concept.name)
            continue
        if key in seen:
            continue
        seen.add(key)
        accepted.append(concept)
    return accepted, rejected


def _add_edges(subject: Subject, pairs: list[tuple[int, int]]) -> None:
    """Write builds-on edges (concept id, prerequisite id) in one statement.

    Each time a file states an edge it adds one to its weight: a new edge stated twice
    by one file weighs 2, as if stated by two files.
    """
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for concept_id, prerequisite_id in pairs:
        if concept_id != prerequisite_id:
            counts[(concept_id, prerequisite_id)] += 1
    if not counts:
        return
    table = connection.ops.quote_name(Prerequisite._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} AS p (subject_id, concept_id, prerequisite_id, weight) "
            "SELECT %s, v.c, v.p, v.w FROM unnest(%s::bigint[], %s::bigint[], %s::float8[]) "
            "AS v(c, p, w) "
            "ON CONFLICT (concept_id, prerequisite_id) DO UPDATE SET weight = p.weight + EXCLUDED.weight",
            [
                subject.pk,
                [c for c, _ in counts],
                [p for _, p in counts],
                [float(w) for w in counts.values()],
            ],
        )


def _ids_by_keys(subject: Subject, keys: set[str] | list[str]) -> list[int]:
    """Ids of the subject's concepts whose key or an alias is one of `keys`.

    The keys go as one array joined by hash (a file's word runs are thousands of
    strings: `key = ANY(...)` or `aliases && ...` with such a constant compares every
    row with every string, seconds at a thousand concepts). The array is sent as one
    newline-joined text split by the server: a key never holds a newline, and psycopg
    quoting tens of thousands of array elements in Python took a second per file.
    """
    if not keys:
        return []
    table = connection.ops.quote_name(Concept._meta.db_table)
    wanted = "\n".join(sorted(keys))
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH k AS MATERIALIZED (SELECT unnest(string_to_array(%s, E'\\n')) AS key) "
            f"SELECT c.id FROM {table} AS c JOIN k ON c.key = k.key WHERE c.subject_id = %s "
            f"UNION SELECT c.id FROM {table} AS c CROSS JOIN LATERAL unnest(c.aliases) "
            "AS a(alias) JOIN k ON a.alias = k.key WHERE c.subject_id = %s",
            [wanted, subject.pk, subject.pk],
        )
        return sorted(row[0] for row in cursor.fetchall())


def _name_index(subject: Subject) -> tuple[lookup.NameIndex, dict[str, list[int]]]:
    """Every key and alias of the subject (one query, short strings only), and the ids
    of the concepts carrying each."""
    ids_of: dict[str, list[int]] = defaultdict(list)
    for pk, key, aliases in (
        Concept.objects.filter(subject=subject).order_by("pk").values_list("pk", "key", "aliases")
    ):
        for name in dict.fromkeys([key, *aliases]):
            ids_of[name].append(pk)
    return lookup.NameIndex(ids_of), ids_of


# How many nearest name vectors a new name is compared with (those within the
# calibrated distance only): enough for every plausible twin.
NEAREST_NAMES = 10


class _MapPool:
    """The concepts of one subject that a reading has looked up, one object per row.

    The merge and the edges see only these: concepts found by key, alias, nearest
    vector, or as named in a definition, plus those this file created. Loading the
    same row twice returns the object already held, so an update made earlier in the
    reading is never overwritten by a stale copy.
    """

    def __init__(self, subject: Subject):
        self.subject = subject
        self.by_id: dict[int, Concept] = {}
        # Concepts this reading created, not yet written: one INSERT for all of them
        # (`flush`) instead of one per concept. Their ids are drawn from the table's
        # sequence up front, so they sort after every older row exactly as before.
        self.pending: dict[int, Concept] = {}
        self._free_ids: list[int] = []

    def create(self, concept: Concept, *, reserve: int) -> Concept:
        """Hold a new concept with its id; `reserve` ids are drawn when none is left."""
        if not self._free_ids:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
                    [Concept._meta.db_table, max(reserve, 1)],
                )
                self._free_ids = sorted(row[0] for row in cursor.fetchall())
        concept.pk = self._free_ids.pop(0)
        self.pending[concept.pk] = concept
        self.by_id[concept.pk] = concept
        return concept

    def save(self, concept: Concept, fields: list[str]) -> None:
        """Write a change now, or with the concept's INSERT if it is still pending."""
        if concept.pk not in self.pending:
            concept.save(update_fields=fields)

    def flush(self) -> None:
        if not self.pending:
            return
        concepts = sorted(self.pending.values(), key=lambda c: c.pk)
        # The name vectors go in binary after the INSERT: pgvector's Django field writes
        # each as text, the repr of 512 floats, ~1.5 ms a vector (90 ms of a 60-concept
        # file's merge); the same float32 values in binary cost nothing to send.
        vectors = {c.pk: c.embedding for c in concepts if c.embedding is not None}
        for concept in concepts:
            concept.embedding = None
        try:
            Concept.objects.bulk_create(concepts)
        finally:
            for concept in concepts:
                concept.embedding = vectors.get(concept.pk)
        _write_name_vectors(vectors)
        self.pending.clear()

    def add(self, concepts) -> list[Concept]:
        out = []
        for concept in concepts:
            out.append(self.by_id.setdefault(concept.pk, concept))
        return out

    def by_ids(self, ids: list[int]) -> list[Concept]:
        """Concepts already written, by id (without their vectors)."""
        if not ids:
            return []
        return self.add(Concept.objects.filter(pk__in=ids).defer("embedding").order_by("pk"))

    def by_keys(self, keys: set[str], *, vectors: bool = False) -> list[Concept]:
        """Concepts whose key or an alias is one of `keys` (unique index, GIN on aliases)."""
        ids = _ids_by_keys(self.subject, keys)
        found = []
        if ids:
            query = Concept.objects.filter(pk__in=ids)
            if not vectors:
                query = query.defer("embedding")
            found = self.add(query.order_by("pk"))
        # Pending concepts are not in the table yet; their ids come after every row's.
        return found + [
            c
            for pk, c in sorted(self.pending.items())
            if c.key in keys or not keys.isdisjoint(c.aliases)
        ]

    def nearest(
        self, vectors, thresholds: merge.Thresholds | None, file_language: str
    ) -> dict[int, list[Concept]]:
        """Per new name (by index), the concepts named in another language than the
        file's whose name vector is within the loosest calibrated merge distance, nearest
        first (ties by id). Only those can merge by meaning (`_candidates`), so a book in
        one language scans no vector however big its map."""
        if thresholds is None or not len(vectors):
            return {}
        others = Concept.objects.filter(subject=self.subject, embedding__isnull=False).exclude(
            name_language=file_language[:8]
        )
        if not others.exists():
            return {}  # nor sends the file's vectors as text (~0.3 ms a name)
        loosest = min(thresholds.threshold, thresholds.cognate_threshold)
        table = connection.ops.quote_name(Concept._meta.db_table)
        with connection.cursor() as cursor:
            # An exact scan of the subject's vectors (no vector index: migration 0008;
            # exact, it cannot merge differently from run to run).
            # The vectors are stored out of line (TOAST): compared in place, each is
            # fetched again for every new name (50 ms a name at 500 concepts). Read once
            # into a materialised list, copied through real[] so the copy is held
            # inline (the same floats), a comparison costs about a microsecond.
            cursor.execute(
                f"WITH m AS MATERIALIZED (SELECT id, embedding::real[]::vector AS e FROM {table} "
                "WHERE subject_id = %s AND embedding IS NOT NULL AND name_language <> %s) "
                "SELECT q.i, c.id FROM unnest(%s::vector[]) WITH ORDINALITY AS q(v, i) "
                "CROSS JOIN LATERAL (SELECT id, e <=> q.v AS d FROM m "
                "ORDER BY e <=> q.v, id LIMIT %s) AS c WHERE c.d <= %s",
                [
                    self.subject.pk,
                    file_language[:8],
                    [_vector_literal(vector) for vector in vectors],
                    NEAREST_NAMES,
                    1.0 - loosest + 1e-6,
                ],
            )
            found = cursor.fetchall()
        ids = {concept_id for _, concept_id in found}
        missing = ids - {pk for pk, c in self.by_id.items() if c.embedding is not None}
        if missing:
            for concept in Concept.objects.filter(pk__in=missing):
                held = self.by_id.get(concept.pk)
                if held is None:
                    self.by_id[concept.pk] = concept
                else:
                    held.embedding = concept.embedding
        out: dict[int, list[Concept]] = defaultdict(list)
        for index, concept_id in found:
            out[int(index) - 1].append(self.by_id[concept_id])
        return out

    def keys(self, first: dict[str, Concept]) -> dict[str, Concept]:
        """Key and alias -> concept: `first` wins, then the pool in id order."""
        known = dict(first)
        for concept in sorted(self.by_id.values(), key=lambda c: c.pk):
            known.setdefault(concept.key, concept)
            for alias in concept.aliases:
                known.setdefault(alias, concept)
        return known


def _write_name_vectors(vectors: dict) -> None:
    """Set the name vectors of these concepts (id -> float32 vector), sent in binary in
    one UPDATE on the transaction's own connection. (Two statements, the type lookup
    and the UPDATE, that Django's query capture does not see.)"""
    if not vectors:
        return
    connection.ensure_connection()
    raw = connection.connection
    table = connection.ops.quote_name(Concept._meta.db_table)
    # Django's cursors bind parameters as text; a plain psycopg cursor on the same
    # connection (same transaction) sends them in binary once it knows the vector type.
    with psycopg.Cursor(raw) as cursor:
        # On the cursor, not the connection: Django's own cursors keep binding as text.
        # (pgvector's stub names a connection; psycopg takes any adapt context.)
        register_vector_info(cursor, TypeInfo.fetch(raw, "vector"))  # type: ignore[arg-type]
        cursor.execute(
            f"UPDATE {table} AS c SET embedding = v.e "
            "FROM unnest(%s::bigint[], %b) AS v(id, e) WHERE c.id = v.id",
            [list(vectors), [np.asarray(vectors[pk], dtype=np.float32) for pk in vectors]],
        )


def _definitions_naming(
    subject: Subject, keys: Iterable[str], exclude: set[int]
) -> list[tuple[int, str]]:
    """(id, definition) of the subject's concepts, but `exclude`, whose definition tokens
    hold every word of one of `keys`, its last word in any number.

    The database keeps the rows with a token among the keys' last-word forms (a hashed
    set: one probe a token); each key's own test runs here on those few rows. Asked as
    one array test per key (or one `&&` with all the forms, which compares every token
    with every form), it read and tested each concept of the subject: ~30-50 ms at 860
    concepts for a 60-concept file.
    """
    wanted = []
    for key in keys:
        *head, last = key.split(" ")
        wanted.append((frozenset(head), lookup.word_variants(last)))
    forms = sorted({form for _, variants in wanted for form in variants})
    table = connection.ops.quote_name(Concept._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.id, c.definition, c.definition_tokens FROM {table} AS c "
            "WHERE c.subject_id = %s AND NOT (c.id = ANY(%s::bigint[])) AND EXISTS ("
            "SELECT FROM unnest(c.definition_tokens) AS t(token) WHERE t.token = ANY(%s::text[]))",
            [subject.pk, sorted(exclude), forms],
        )
        rows = cursor.fetchall()
    out = []
    for concept_id, definition, definition_tokens in rows:
        tokens = frozenset(definition_tokens)
        if any(head <= tokens and not variants.isdisjoint(tokens) for head, variants in wanted):
            out.append((concept_id, definition))
    return out


def _vector_literal(vector) -> str:
    """pgvector's text form of a name vector, 7 significant digits (as always sent here);
    one %-format call per vector, not one format call per number."""
    values = [float(x) for x in vector]
    return "[" + ("%.7g," * len(values))[:-1] % tuple(values) + "]"


def _candidates(
    concepts: list[Concept], file_language: str
) -> list[tuple[int, str, np.ndarray | None]]:
    """(id, key, vector) rows for `merge.best_match`: the key with its vector, aliases
    without (as the merge has always compared them), in id order.

    Vectors merge names across languages ("Mitochondria"/"mitocondria"); in one language
    two different names are two concepts ("anaphase"/"prophase", "osteoblast"/
    "osteoclast" sit above the threshold), so a concept named in the file's language is
    offered without its vector: only keys merge it.
    """
    out: list[tuple[int, str, np.ndarray | None]] = []
    for concept in sorted({c.pk: c for c in concepts}.values(), key=lambda c: c.pk):
        same_language = concept.name_language == file_language[:8]
        vector = (
            None if concept.embedding is None or same_language else np.asarray(concept.embedding)
        )
        out.append((concept.pk, concept.key, vector))
        out += [(concept.pk, alias, None) for alias in concept.aliases]
    return out


def _edge_tokens(item: ExtractedConcept) -> list[str]:
    """The tokens later readings search for names in: none for a text that only uses the
    name in passing (a bold term's sentence that defines nothing gives no edges)."""
    return lookup.definition_tokens(item.definition) if item.defines else []


def _add_aliases(concept: Concept, alias_keys: list[str], pool: _MapPool) -> bool:
    """The abbreviation a file defines for a concept ("IQR") becomes one of its names,
    unless another concept already carries it. Whether the concept changed."""
    new = [k for k in alias_keys if k != concept.key and k not in concept.aliases]
    if not new:
        return False
    taken = {
        name
        for other in pool.by_keys(set(new))
        if other.pk != concept.pk
        for name in [other.key, *other.aliases]
    }
    new = [k for k in new if k not in taken]
    if new:
        concept.aliases = [*concept.aliases, *new]
        pool.save(concept, ["aliases", "updated_at"])
    return bool(new)


def _add_sources(subject_file: SubjectFile, sources: dict[int, tuple[str, set[int]]]) -> None:
    """Provenance of the file's concepts (concept id -> name in the file, pages): new
    rows in one INSERT, pages added to rows an earlier attempt left (one query each)."""
    if not sources:
        return
    existing = {
        source.concept_id: source
        for source in ConceptSource.objects.filter(file=subject_file, concept_id__in=sources)
    }
    for concept_id, source in existing.items():
        source.pages = sorted(set(source.pages) | sources[concept_id][1])
        source.save(update_fields=["pages"])
    ConceptSource.objects.bulk_create(
        ConceptSource(
            concept_id=concept_id, file=subject_file, pages=sorted(pages), name_in_file=name
        )
        for concept_id, (name, pages) in sources.items()
        if concept_id not in existing
    )


def _merge_into_map(
    subject_file: SubjectFile,
    extracted: list[ExtractedConcept],
    vectors,
    model_name: str,
    file_language: str,
) -> None:
    """Merge a file's concepts into the map: nodes, provenance, edges, assumptions.

    Every comparison is with candidates looked up by index (`concepts.lookup`), never
    with the whole map, so the cost follows the file's size, not the map's.
    """
    subject = subject_file.subject
    own_language = file_language == subject.language
    thresholds = merge.thresholds_for(model_name) if model_name else None
    pool = _MapPool(subject)
    keys = [concept_key(item.name) for item in extracted]
    # Same by key: every key differing by a number ending, one query for the file.
    variants = {key: lookup.key_variants(key) for key in keys}
    by_key = pool.by_keys(set().union(*variants.values()) if variants else set(), vectors=True)
    # Same by meaning (across languages): the nearest name vectors, one query for the file.
    near = pool.nearest(vectors, thresholds, file_language)
    touched: dict[int, Concept] = {}  # created or changed by this file
    created_ids: set[int] = set()
    # name key in this file -> concept
    resolved: dict[str, Concept] = {}
    # concept id -> (its name in this file, its pages): written in one go after the loop
    sources: dict[int, tuple[str, set[int]]] = {}
    page_limit = max(subject_file.page_count, 1)
    for index, item in enumerate(extracted):
        key = keys[index]
        vector = vectors[index] if len(vectors) else None
        names = variants[key]
        found = [c for c in by_key if c.key in names or names.intersection(c.aliases)]
        match_id = merge.best_match(
            key=key,
            vector=vector,
            candidates=_candidates(
                [*found, *near.get(index, []), *touched.values()], file_language
            ),
            thresholds=thresholds,
        )
        alias_keys = [k for k in (concept_key(a) for a in item.aliases) if k and k != key]
        if match_id is None and alias_keys:
            # "IQR" read before: "interquartile range (IQR)" joins it by its abbreviation.
            by_alias = pool.by_keys(set(alias_keys))
            match_id = by_alias[0].pk if by_alias else None
        if match_id is None:
            concept = pool.create(
                Concept(
                    subject=subject,
                    name=item.name[:200],
                    key=key,
                    name_language=file_language[:8],
                    summary=item.summary[:500],
                    definition=item.definition,
                    definition_tokens=_edge_tokens(item),
                    layer=Concept.Layer.FILE,
                    embedding=vector,
                    embedding_model=model_name if vector is not None else "",
                ),
                reserve=len(extracted) - index,
            )
            touched[concept.pk] = concept
            created_ids.add(concept.pk)
            _add_aliases(concept, alias_keys, pool)
        else:
            concept = pool.by_id[match_id]
            fields = []
            if key != concept.key and key not in concept.aliases:
                concept.aliases = [*concept.aliases, key]
                fields.append("aliases")
            if concept.layer == Concept.Layer.ASSUMED:
                concept.layer = Concept.Layer.FILE
                fields.append("layer")
            key_taken = any(
                c.key == key and c.pk != concept.pk for c in [*by_key, *touched.values()]
            )
            if own_language and concept.name_language != subject.language and not key_taken:
                # "Mitocondria" from the Spanish chapter came first; the English notes
                # of an English subject name it "Mitochondria". The old key stays an alias.
                aliases = [a for a in concept.aliases if a != key]
                if concept.key != key:
                    aliases.append(concept.key)
                concept.name, concept.key, concept.aliases = item.name[:200], key, aliases
                concept.name_language = subject.language
                fields += ["name", "key", "aliases", "name_language"]
                if item.summary:
                    concept.summary, concept.definition = item.summary[:500], item.definition
                    concept.definition_tokens = _edge_tokens(item)
                    fields += ["summary", "definition", "definition_tokens"]
            elif not concept.summary and item.summary:
                concept.summary, concept.definition = item.summary[:500], item.definition
                concept.definition_tokens = _edge_tokens(item)
                fields += ["summary", "definition", "definition_tokens"]
            if fields:
                pool.save(concept, [*dict.fromkeys(fields), "updated_at"])
                touched[concept.pk] = concept
            if _add_aliases(concept, alias_keys, pool):
                touched[concept.pk] = concept
        resolved[key] = concept
        pages = {p for p in item.pages if 1 <= p <= page_limit} or {1}
        if concept.pk in sources:
            sources[concept.pk][1].update(pages)
        else:
            sources[concept.pk] = (item.name[:200], pages)
    pool.flush()
    _add_sources(subject_file, sources)

    # Concepts the definitions (and the extractor's builds-on and assumed names) may
    # name: the runs of words that are keys or aliases of the map (this file's too).
    name_index, ids_of = _name_index(subject)
    named: set[str] = set()
    for item in extracted:
        named |= lookup.names_in_text(item.definition, name_index)
        named |= {concept_key(n) for n in [*item.builds_on, *item.assumes]}
    pool.by_ids(sorted({pk for name in named for pk in ids_of.get(name, ())}))
    known = pool.keys(resolved)
    edges: list[tuple[int, int]] = []
    for item in extracted:
        concept = resolved[concept_key(item.name)]
        prerequisites: dict[int, Concept] = {}
        for name in item.builds_on:
            target = known.get(concept_key(name))
            if target is not None:
                prerequisites[target.pk] = target
        # Concepts of the whole map (other files too) named in the definition; a name
        # used in passing is no definition and gives no edge.
        for _, target in find_keys_in(item.definition if item.defines else "", known):
            prerequisites[target.pk] = target
        edges += [(concept.pk, target) for target in prerequisites]
        assumed = [
            name
            for name in item.assumes
            if concept_key(name)
            and concept_key(name) not in known
            and all(concept_key(name) != concept_key(a) for a in concept.assumes)
        ]
        if assumed:
            concept.assumes = [*concept.assumes, *(a[:200] for a in assumed)]
            concept.save(update_fields=["assumes", "updated_at"])
    # Concepts explained earlier by other files may name what this file introduced
    # ("active transport ... energy from ATP" read before the file defining ATP): only
    # definitions holding every token of a new name (GIN) are read.
    this_file = {c.pk for c in resolved.values()}
    new_keys = {c.key: c for c in resolved.values() if c.pk in created_ids}
    if new_keys:
        for concept_id, definition in _definitions_naming(subject, new_keys, this_file):
            for _, target in find_keys_in(definition, new_keys):
                edges.append((concept_id, target.pk))
    _add_edges(subject, edges)


# --------------------------------------------------------------------------------------
# Teaching
# --------------------------------------------------------------------------------------


def _teach_locked(
    *,
    subject: Subject,
    concept: Concept | None,
    name: str,
    note: str,
    now: datetime,
    student=None,
    teacher=None,
    episode: Episode | None = None,
) -> TaughtNote:
    subject_map = _lock_map(subject)
    if concept is None:
        # A concept with that name may have appeared since the caller looked.
        concept = (
            Concept.objects.filter(subject=subject)
            .filter(Q(key=concept_key(name)) | Q(aliases__contains=[concept_key(name)]))
            .first()
        )
    created = concept is None
    if concept is None:
        concept = Concept.objects.create(
            subject=subject,
            name=name[:200],
            key=concept_key(name),
            name_language="",
            summary=note[:500],
            layer=Concept.Layer.TAUGHT,
            taught=True,
            readiness=READINESS_TAUGHT,
        )
    else:
        concept = Concept.objects.select_for_update().get(pk=concept.pk)
        # Saved even when already taught: the new note changes what the concept's
        # description says, and the block's routing reads a map version off updated_at.
        concept.taught = True
        concept.save(update_fields=["taught", "updated_at"])
    taught_note = TaughtNote.objects.create(
        concept=concept,
        note=note,
        student=student,
        teacher=teacher,
        episode=episode,
        created_at=now,
    )
    _recompute_locked(subject_map, now)
    if created:
        _embed_after_commit(subject)
    return taught_note


def _first_named(subject: Subject, words: list[str]) -> Concept | None:
    """The concept named first in the taught words (exact name or merged name)."""
    from concepts.selectors import concept_keys_of

    text = " ".join(words)
    found = find_keys_in(text, concept_keys_of(subject=subject))
    if not found:
        return None
    haystack = f" {text} "
    key, concept_id = min(found, key=lambda kv: (haystack.find(f" {kv[0]}"), -len(kv[0])))
    return Concept.objects.get(pk=concept_id)


def concept_teach_from_episode(
    *, episode: Episode, now: datetime | None = None
) -> TaughtNote | None:
    """Apply a student's message if it is an explicit teaching form (R-3.1 .. R-3.3).

    The note goes to the concept the message names (exact name match, the first named
    if several); when it names none, a taught-layer node with a short name is created.
    A `taught` episode is appended to the student's chain (idempotent per message), then
    the note, the readiness 1.0 and the recomputation happen in one transaction.
    Returns None when the message does not teach.
    """
    if episode.kind != Episode.Kind.QUESTION:
        return None
    form = teaching_form(episode.text or episode.summary)
    if form is None:
        return None
    pair = episode.pair
    idempotency_key = f"taught-from-episode:{episode.pk}"
    existing = (
        TaughtNote.objects.select_related("concept")
        .filter(episode__pair=pair, episode__idempotency_key=idempotency_key)
        .first()
    )
    if existing is not None:
        return existing
    concept = _first_named(pair.subject, subject_words(form))
    if concept is None and not defines_something(form):
        logger.info("teaching message %s names no concept and defines nothing", episode.pk)
        return None
    name = concept.name if concept is not None else short_name(form)
    if not name:
        logger.info("teaching message %s names nothing a node can be called", episode.pk)
        return None
    now = now or timezone.now()
    taught_episode = episode_append(
        pair=pair,
        kind="taught",
        summary=f"Taught {name}: {form.note}"[:300],
        text=form.note,
        concepts=[name],
        # The teaching happened when the student said it, not when the task ran.
        occurred_at=episode.occurred_at,
        now=now,
        idempotency_key=idempotency_key,
        extra={"source_episode_id": episode.pk},
    )
    with transaction.atomic():
        return _teach_locked(
            subject=pair.subject,
            concept=concept,
            name=name,
            note=form.note,
            now=now,
            student=pair.student,
            episode=taught_episode,
        )


@transaction.atomic
def concept_teach(
    *,
    subject: Subject,
    note: str,
    concept: Concept | None = None,
    name: str = "",
    teacher=None,
    now: datetime | None = None,
) -> TaughtNote:
    """A teacher teaches from the admin (R-3.4): a note on a concept, or a new concept.

    No episode is written: a teacher has no student chain; the note records the teacher.
    """
    note = (note or "").strip()
    if not note:
        raise InvalidInput("note", "must not be empty")
    if len(note) > settings.TUTORBRAIN_MAX_TEXT_CHARS:
        raise InvalidInput("note", "is too long")
    if concept is None:
        name = display_name(name or "")
        verdict = name_check(name)
        if not verdict.ok:
            raise InvalidInput("name", f"is not a concept name: {verdict.reason}")
    elif concept.subject_id != subject.pk:
        raise InvalidInput("concept", "belongs to another subject")
    return _teach_locked(
        subject=subject,
        concept=concept,
        name=concept.name if concept is not None else name,
        note=note,
        now=now or timezone.now(),
        teacher=teacher,
    )


# --------------------------------------------------------------------------------------
# Readings whose worker is gone
# --------------------------------------------------------------------------------------


def file_readings_requeue_lost(*, now: datetime | None = None) -> list[int]:
    """Re-queue every reading whose worker is gone; fail those lost too often.

    Run by Celery beat every TUTORBRAIN_READING_SWEEP_SECONDS and by every worker at
    start-up. A reading is lost when its lease (renewed every few seconds while it runs)
    has lapsed, or when the process that claimed it on this host no longer exists (a
    worker restarted after a kill sees its old readings at once). The Redis message of
    a killed worker may come back much later (visibility timeout): by then the reading
    is done or failed and the late task does nothing. Returns the re-queued file ids.
    """
    now = now or timezone.now()
    requeued: list[int] = []
    for lost in FileReading.objects.filter(state=FileReading.State.READING).only(
        "pk", "worker", "heartbeat_at", "attempts"
    ):
        if not reading_lease.is_lost(lost, now):
            continue
        gone = f"the worker reading it ({lost.worker or 'unknown'}) stopped"
        # Conditional on what was read: a reading that came back to life or was claimed
        # again in the meantime is left alone.
        same = FileReading.objects.filter(
            pk=lost.pk,
            state=FileReading.State.READING,
            worker=lost.worker,
            heartbeat_at=lost.heartbeat_at,
        )
        if lost.attempts >= reading_lease.MAX_READING_ATTEMPTS:
            same.update(
                state=FileReading.State.FAILED,
                reason=f"{gone} {lost.attempts} times; not retried again",
                finished_at=now,
            )
            continue
        with transaction.atomic():
            if same.update(state=FileReading.State.QUEUED, reason=f"re-queued: {gone}"):
                _queue_reading(lost.pk)
                requeued.append(lost.pk)
    if requeued:
        logger.warning("re-queued %d lost file reading(s): %s", len(requeued), requeued)
    return requeued
