"""Build one memory block: the product's one call per chat turn (R-5).

`memory_block_build` is the only entry point (the API, the admin preview, the scenario
runner and the benchmark call it). It calls no generative model: the one model call is
`message_embed` — one embedding of the message, shared by concept routing and the
vector pool — and it is timed apart from the build.

Queries per build (pinned by a test): the lookup (student, subject, pair, working-set
coverage, the self-model's figures and the concepts for routing, one statement), the
candidates (one statement, tutorbrain.block.retrieval), beliefs, the map (four,
concepts.selectors.map_for_block, once per process and map version), citation status
when a recalled answer cites files, and once per database connection the session
settings of the vector index; once per process and map version, the concepts'
descriptions for routing by words (tutorbrain.block.concept_words).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.conf import settings

from config.routers import block_connection, block_reads
from memory.models import Organization, Pair, Student, Subject
from tutorbrain.block import concept_words
from tutorbrain.block import format as fmt
from tutorbrain.block.message import (
    MessageReading,
    asks_about_mistakes,
    is_narration,
    read_message,
)
from tutorbrain.block.retrieval import (
    Candidate,
    RetrievalQuery,
    candidates_fetch,
    session_settings_sql,
    vector_literal,
)
from tutorbrain.block.timewindow import TimeWindow, parse_time_window, student_zone
from tutorbrain.block.versioned import ByMapVersion
from tutorbrain.nightly.selectors import (
    SELF_MODEL_FIGURES,
    UNCALIBRATED_SENTENCE,
    limits_sentence_of,
)

# Concept routing: the message's embedding against the subject's concept
# embeddings. Measured with the multilingual USE model: a question names its concept
# at 0.46–0.67 ("¿Qué es la mitocondria?" → Mitochondria 0.57), other concepts of the
# same subject stay at or below 0.41.
CONCEPT_ROUTE_MIN_SIMILARITY = 0.45
CONCEPT_ROUTE_MAX = 2
# The map lines the block may show (by centrality); the budget usually shows fewer.
MAP_LINES_MAX = 24

BELIEF_CLAIM_LABELS = {"understands": "understands", "struggles": "struggles with"}


class BuildAbandoned(Exception):
    """The deadline passed: the build stops at its next step (tutorbrain.block.deadline)."""


@dataclass
class RecalledEpisode:
    id: int
    occurred_at: datetime
    kind: str
    summary: str
    verification: str  # holds | changed | unverifiable
    repeats: int
    score: float
    parts: dict[str, Any]
    pools: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "occurred_at": self.occurred_at,
            "kind": self.kind,
            "summary": self.summary,
            "verification": self.verification,
            "repeats": self.repeats,
        }


@dataclass
class BlockResult:
    text: str
    mode: str
    recalled: list[RecalledEpisode]
    window: TimeWindow | None
    tokens: int
    budget: int
    build_ms: float
    embed_ms: float
    dropped: bool = False
    placed: dict[str, Any] | None = None
    known_pair: bool = True
    # Whether the organization has this student / subject at all: a typo'd subject id
    # gets an honest empty block, and the chat service can see why.
    student_known: bool = True
    subject_known: bool = True
    routed_concepts: list[str] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)


@dataclass
class BuildRequest:
    organization: Organization
    student_external_id: str
    subject_external_id: str
    message: str
    now: datetime
    budget: int
    legacy_assessment: str | None = None


def message_embed(message: str):
    """The one model call of a turn: the message's embedding (None for no message)."""
    if not message or not message.strip():
        return None
    from tutorbrain import embedder

    return embedder.embed([message])[0]


def _ensure_session_settings() -> None:
    # Once per database connection, not per build: the HNSW scan settings.
    wrapper = block_connection()
    wrapper.ensure_connection()
    raw = wrapper.connection
    if getattr(raw, "_tutorbrain_block_session", False):
        return
    with wrapper.cursor() as cursor:
        cursor.execute(session_settings_sql())
    raw._tutorbrain_block_session = True


# Routing by embedding reads, each build, the distances of the ROUTE_NEAREST concepts
# nearest the message (enough for the CONCEPT_ROUTE_MAX nearest it may add past the
# concepts the message names); the subject's names, keys and aliases are read once per
# process and map version (_concept_names). At a textbook's 860 concepts, every row with
# its distance cost ~10 ms a build to send and parse.
ROUTE_NEAREST = 12


def _routing_sql(subject: str) -> str:
    """The nearest concepts' (key, distance) and the map's version, as one JSON array, for
    the subject whose id is the SQL expression `subject`."""
    return f"""
        SELECT json_build_array(
               (SELECT json_agg(json_build_array(n.key, n.distance)) FROM (
                   SELECT near.key, near.embedding <=> %(vector)s::vector AS distance
                   FROM concepts_concept near
                   WHERE near.subject_id = {subject} AND near.embedding IS NOT NULL
                     AND %(vector)s::vector IS NOT NULL
                   ORDER BY distance LIMIT %(nearest)s) n),
               -- The map's version: the cached names, descriptions and map are still
               -- this map's. Every recompute rewrites the map row (a new xmin), even
               -- one replayed at the same `now`.
               count(*), max(c.id), max(c.updated_at),
               (SELECT json_build_array(m.computed_at, m.xmin::text)
                FROM concepts_subjectmap m WHERE m.subject_id = {subject}))
        FROM concepts_concept c
        WHERE c.subject_id = {subject}"""


_LOOKUP_SQL = f"""
    SELECT p.id, p.student_id, p.subject_id, p.head_seq,
           st.organization_id, st.external_id, st.timezone,
           sb.organization_id, sb.external_id, sb.name, sb.language,
           ws.max_seq, ws.embedding_model,
           -- The self-model's figures for the HOW TO USE line (R-7.6).
           sm.pair_id IS NOT NULL, {", ".join(f"sm.{f}" for f in SELF_MODEL_FIGURES)},
           -- The subject's concepts for routing, in the same round trip.
           ({_routing_sql("sb.id")} AND %(route)s) AS concepts
    FROM memory_pair p
    JOIN memory_student st ON st.id = p.student_id
    JOIN memory_subject sb ON sb.id = p.subject_id
    LEFT JOIN tutorbrain_block_workingset ws ON ws.pair_id = p.id
    LEFT JOIN tutorbrain_selfmodel sm ON sm.pair_id = p.id
    WHERE st.organization_id = %(org)s AND st.external_id = %(student)s
      AND sb.organization_id = %(org)s AND sb.external_id = %(subject)s
"""


Coverage = tuple[int, str] | None  # (max_seq, embedding model) of the pair's working set
ConceptRow = tuple[str, str, list[str], float | None]  # name, key, aliases, cosine distance
_NOT_READ = object()


@dataclass(frozen=True)
class ConceptRouting:
    """The subject's concepts as routing reads them, and the map's version."""

    rows: list[ConceptRow]
    # (count, max id, max updated_at, [map computed at, map row's xmin]): changes with
    # every change to the concepts, their notes (teaching touches the concept) or the
    # map's recompute.
    version: tuple


# Per subject and map version: the concepts' names, keys and aliases for routing, the
# whole map as the block reads it (the four map queries run once per process and map
# change, not on every turn).
MAP_CACHE_SUBJECTS = 64
_concept_names = ByMapVersion(MAP_CACHE_SUBJECTS)
_maps = ByMapVersion(MAP_CACHE_SUBJECTS)


def _routing_from_json(value, subject_id: int) -> ConceptRouting:
    if isinstance(value, str):  # Django's psycopg setup hands json over as text
        value = json.loads(value)
    nearest, *version_parts = value
    version = tuple(tuple(v) if isinstance(v, list) else v for v in version_parts)
    distances = {key: distance for key, distance in nearest or []}
    names = _concept_names.get(subject_id, version, lambda: _concept_names_read(subject_id))
    rows = [(name, key, aliases, distances.get(key)) for name, key, aliases in names]
    return ConceptRouting(rows=rows, version=version)


def _concept_names_read(subject_id: int) -> list[tuple[str, str, list[str]]]:
    with block_connection().cursor() as cursor:
        cursor.execute(
            "SELECT name, key, aliases FROM concepts_concept WHERE subject_id = %s ORDER BY id",
            [subject_id],
        )
        return [(name, key, list(aliases or [])) for name, key, aliases in cursor.fetchall()]


def _lookup(
    request: BuildRequest, *, vector: str | None, route: bool
) -> tuple[Pair | None, Student | None, Subject | None, Coverage, ConceptRouting | None, str]:
    """The pair, student and subject of *this* organization, by external ids, and the
    self-model's sentence on confidence.

    External ids are per organization: an id another organization uses is simply
    unknown here, and nothing of theirs can be read (every later query is keyed by the
    pair or subject found here). Nothing is created: the chat service may ask before
    it has logged anything. One query — with the pair's working-set coverage, its
    self-model and, when `route`, the subject's concepts for routing — in SQL: the
    ORM's compilation of this join cost more than running it, and every round trip
    counts on a busy machine.
    """
    with block_connection().cursor() as cursor:
        cursor.execute(
            _LOOKUP_SQL,
            {
                "org": request.organization.pk,
                "student": request.student_external_id,
                "subject": request.subject_external_id,
                "vector": vector,
                "route": route,
                "nearest": ROUTE_NEAREST,
            },
        )
        row = cursor.fetchone()
    if row is not None:
        (pk, student_id, subject_id, head_seq, st_org, st_ext, tz, sb_org, sb_ext, name, lang,
         ws_seq, ws_model, has_self_model, *figures, concepts) = row  # fmt: skip
        db = block_connection().alias
        student = Student.from_db(
            db,
            ["id", "organization_id", "external_id", "timezone"],
            [student_id, st_org, st_ext, tz],
        )
        subject = Subject.from_db(
            db,
            ["id", "organization_id", "external_id", "name", "language"],
            [subject_id, sb_org, sb_ext, name, lang],
        )
        pair = Pair.from_db(
            db,
            ["id", "student_id", "subject_id", "head_seq"],
            [pk, student_id, subject_id, head_seq],
        )
        pair.student, pair.subject = student, subject
        coverage = (ws_seq, ws_model) if ws_seq is not None else None
        routing = _routing_from_json(concepts, subject_id) if route else None
        limits = limits_sentence_of(tuple(figures) if has_self_model else None)
        return pair, student, subject, coverage, routing, limits
    known_student = Student.objects.filter(
        organization=request.organization, external_id=request.student_external_id
    ).first()
    known_subject = Subject.objects.filter(
        organization=request.organization, external_id=request.subject_external_id
    ).first()
    return None, known_student, known_subject, None, None, UNCALIBRATED_SENTENCE


def _concept_rows(*, subject: Subject, vector: str | None) -> ConceptRouting:
    with block_connection().cursor() as cursor:
        cursor.execute(
            _routing_sql("%(subject)s"),
            {"vector": vector, "subject": subject.pk, "nearest": ROUTE_NEAREST},
        )
        return _routing_from_json(cursor.fetchone()[0], subject.pk)


def _description_index(subject: Subject, routing: ConceptRouting):
    """The subject's concept descriptions for routing by words: cached per map version,
    read (one query) only when the map changed since this process last read them."""
    from concepts.selectors import concept_descriptions

    return concept_words.indexes.get(
        subject.pk,
        routing.version,
        lambda: concept_words.description_index_build(
            concept_descriptions(subject_id=subject.pk), subject_language=subject.language
        ),
    )


def _route_concepts(
    *,
    rows: list[ConceptRow],
    message: str,
    terms: tuple[str, ...] = (),
    language_code: str = "en",
    describe=None,
) -> tuple[list[str], list[str]]:
    """Concepts the message is about: named in it (exact key), nearest by embedding, and
    at most one more that its other words describe (`concept_words`).

    `describe` returns the subject's description index (called only when the message
    is near enough to the subject to be routed by its words at all).
    Returns (names, keys): the names an episode's `concepts` array may hold for them
    (name and its case variants, and merged aliases), for the concept pool; and the
    concepts' keys, whose map lines lead the map section.
    """
    from concepts.naming import find_keys_in

    if not rows:
        return [], []
    by_key: dict[str, int] = {}
    for i, row in enumerate(rows):
        by_key.setdefault(row[1], i)
        for alias in row[2] or []:
            by_key.setdefault(alias, i)
    named: list[int] = list(dict.fromkeys(i for _, i in find_keys_in(message, by_key)))
    chosen: list[int] = list(named)
    if any(row[3] is not None for row in rows):
        nearest = sorted(
            (float(row[3]), i)
            for i, row in enumerate(rows)
            if row[3] is not None and i not in chosen
        )
        for distance, i in nearest[:CONCEPT_ROUTE_MAX]:
            if 1 - distance >= CONCEPT_ROUTE_MIN_SIMILARITY:
                chosen.append(i)
    if terms and describe is not None:
        # What the message says beyond the names it holds may describe one more concept:
        # "Why does a cell burst in pure water?" names Cell, and "burst", "pure", "water"
        # describe Osmosis. The named concepts' own words are taken out first, so that
        # "How does osmosis work?" is not also routed to whatever else mentions osmosis.
        distances = [float(row[3]) for row in rows if row[3] is not None]
        topicality = 1 - min(distances) if distances else None
        if topicality is not None and topicality >= concept_words.TOPICAL_MIN:
            key = concept_words.best_described(
                describe(),
                concept_words.words_beyond_names(terms, [rows[i][0] for i in named], language_code),
                topicality=topicality,
                exclude=[rows[i][1] for i in named],
            )
            described = next((i for i, row in enumerate(rows) if row[1] == key), None)
            if described is not None and described not in chosen:
                chosen.append(described)
    names: list[str] = []
    keys: list[str] = []
    for i in chosen[: CONCEPT_ROUTE_MAX + 2]:
        name, key = rows[i][0], rows[i][1]
        keys.append(key)
        for variant in (name, name.lower(), name.capitalize(), name.title(), key):
            if variant and variant not in names:
                names.append(variant)
    return names, keys


def _working_set_max_seq(pair: Pair, coverage: Coverage | object) -> int:
    """The last chain position the pair's working set covers (0: none usable)."""
    from memory import indexing
    from tutorbrain.block.models import WorkingSet

    if coverage is _NOT_READ:
        coverage = (
            WorkingSet.objects.filter(pair_id=pair.pk)
            .values_list("max_seq", "embedding_model")
            .first()
        )
    if not isinstance(coverage, tuple) or coverage[1] != indexing.embed_model_name():
        return 0
    return int(coverage[0])


def _beliefs(pair: Pair) -> list[fmt.BeliefLine]:
    from beliefs.selectors import belief_lines_current

    rows = belief_lines_current(pair=pair)
    # Struggles first (what the tutor must know first), then most confident.
    rows.sort(key=lambda r: (r[0] != "struggles", -r[2], r[1]))
    return [
        fmt.BeliefLine(
            claim_label=BELIEF_CLAIM_LABELS.get(claim, claim),
            concept=concept,
            confidence=confidence,
            needs_confirmation=needs_confirmation,
            p_right=p_right,
        )
        for claim, concept, confidence, needs_confirmation, p_right in rows
    ]


def _map_view(subject: Subject, routed_keys: list[str], version: tuple | None):
    from concepts.selectors import map_for_block

    if version is None:  # no message, so no routing and no version read: ask the database
        return map_for_block(subject=subject, limit=MAP_LINES_MAX, first_keys=routed_keys)
    view = _maps.get(subject.pk, version, lambda: map_for_block(subject=subject))
    # map_for_block's order: the routed concepts lead, then by centrality.
    by_key = {c.key: c for c in view.concepts}
    routed = set(routed_keys)
    leading = [by_key[k] for k in dict.fromkeys(routed_keys) if k in by_key]
    rest = [c for c in view.concepts if c.key not in routed]
    return replace(view, concepts=(leading + rest)[:MAP_LINES_MAX])


def _map(subject: Subject, routed: list[str], routed_keys: list[str], version: tuple | None):
    """(concept count, readiness, lines, pinned): the routed concepts' lines lead."""
    view = _map_view(subject, routed_keys, version)
    lines = [
        fmt.MapLine(
            name=c.name, summary=c.summary, taught_note=c.taught_note, builds_on=c.builds_on
        )
        for c in view.concepts
    ]
    names = set(routed)
    pinned = 0
    while pinned < len(lines) and lines[pinned].name in names:
        pinned += 1
    return view.concept_count, view.readiness, lines, pinned


def _limits_sentence(pair: Pair | None) -> str:
    from tutorbrain.nightly.selectors import self_model_limits_sentence

    return self_model_limits_sentence(pair=pair)


def _citation_status(candidates: list[Candidate]) -> dict[int, str]:
    cited = [c for c in candidates if c.kind == "answer" and c.citations]
    if not cited:
        return {}
    from memory.selectors import citation_status_for

    return {pk: str(status) for pk, status in citation_status_for(episodes=cited).items()}


def _check(cancelled: threading.Event | None) -> None:
    if cancelled is not None and cancelled.is_set():
        raise BuildAbandoned()


def _test_delay(cancelled: threading.Event | None) -> None:
    """Test hook (settings.TUTORBRAIN_BLOCK_TEST_DELAY_SECONDS): a slow build.

    The delay runs *in the database* (pg_sleep), so a test sees that the deadline
    cancels the late build's query rather than leaving it running.
    """
    delay = float(getattr(settings, "TUTORBRAIN_BLOCK_TEST_DELAY_SECONDS", 0.0) or 0.0)
    if delay > 0:
        with block_connection().cursor() as cursor:
            cursor.execute("SELECT pg_sleep(%s)", [delay])
        _check(cancelled)


def memory_block_build(
    *,
    organization: Organization,
    student_external_id: str,
    subject_external_id: str,
    message: str,
    now: datetime,
    budget: int,
    legacy_assessment: str | None = None,
    pair_or_none: Pair | None = None,
    vector=None,
    cancelled: threading.Event | None = None,
) -> BlockResult:
    """The memory block for one turn (R-5). Reads only; writes nothing.

    `pair_or_none` skips the lookup when the caller already holds the pair (it must
    belong to `organization`, else it is ignored). `vector` is the message's embedding
    (see `message_embed`); None has it computed here, timed in `embed_ms`, not in
    `build_ms`. `cancelled` is set by the deadline runner: the build stops at its next
    step. Raises format.BudgetTooSmall when the budget cannot hold the block's frame.
    """
    request = BuildRequest(
        organization=organization,
        student_external_id=student_external_id,
        subject_external_id=subject_external_id,
        message=message or "",
        now=now,
        budget=budget,
        legacy_assessment=legacy_assessment,
    )
    if pair_or_none is not None and pair_or_none.subject.organization_id != organization.pk:
        pair_or_none = None
    # Every read of the build goes to the block-read alias (a replica when configured).
    with block_reads():
        return _build(request, pair=pair_or_none, vector=vector, cancelled=cancelled)


def _build(request: BuildRequest, *, pair: Pair | None, vector, cancelled) -> BlockResult:
    embed_ms = 0.0
    message = request.message or ""
    if vector is None and message.strip():
        started = time.perf_counter()
        vector = message_embed(message)
        embed_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    if vector is not None:
        vector = vector_literal(vector)  # formatted once for both queries that use it
    _ensure_session_settings()
    _test_delay(cancelled)
    student: Student | None
    subject: Subject | None
    coverage: Coverage | object = _NOT_READ
    route = bool(message.strip())
    routing: ConceptRouting | None = None
    limits: str | None = None
    if pair is not None:
        student, subject = pair.student, pair.subject
    else:
        pair, student, subject, coverage, routing, limits = _lookup(
            request, vector=vector, route=route
        )
    _check(cancelled)
    # The message is read in its own language (one stop list, one stemmer, its month
    # names); the subject's language reads a message whose own is unclear ("ok", "DNA").
    fallback_language = subject.language if subject else "en"
    reading: MessageReading = read_message(message, fallback_language=fallback_language)
    zone = student_zone(student.timezone if student else "UTC")
    window = parse_time_window(
        message,
        now=request.now,
        timezone_name=student.timezone if student else "UTC",
        fallback_language=fallback_language,
    )
    future_window: TimeWindow | None = None
    if window is not None and window.after(request.now):
        # Nothing can have happened in it yet: filtering by it could only empty the
        # block. It is ignored, and the block says so.
        future_window, window = window, None
    mode = "history" if reading.history else "ordinary"

    routed: list[str] = []
    routed_keys: list[str] = []
    if subject is not None and route:
        if routing is None:
            routing = _concept_rows(subject=subject, vector=vector)
        routed_subject, routed_routing = subject, routing
        routed, routed_keys = _route_concepts(
            rows=routing.rows,
            message=message,
            terms=reading.terms,
            language_code=reading.language,
            describe=lambda: _description_index(routed_subject, routed_routing),
        )
    _check(cancelled)

    candidates: list[Candidate] = []
    if pair is not None:
        has_topic = bool(reading.terms or routed)
        candidates = candidates_fetch(
            RetrievalQuery(
                pair_id=pair.pk,
                pair_size=pair.head_seq,
                now=request.now,
                vector=vector if has_topic else None,
                terms=reading.terms,
                concept_names=tuple(routed),
                window=window,
                exclude_narrations=window is not None or reading.history,
                working_set_max_seq=_working_set_max_seq(pair, coverage),
                misses=reading.history and asks_about_mistakes(message),
                balance_groups=reading.history,
                latest=reading.latest,
            )
        )
        if window is not None or reading.history:
            # by wording: the tutor retelling the past is not a memory of it.
            candidates = [
                c
                for c in candidates
                if not (c.kind == "answer" and is_narration(f"{c.summary}\n{c.text_head}"))
            ]
    _check(cancelled)

    beliefs = _beliefs(pair) if pair is not None else []
    map_count, map_readiness, map_lines, map_pinned = (
        _map(subject, routed, routed_keys, routing.version if routing is not None else None)
        if subject is not None
        else (0, 0.0, [], 0)
    )
    if limits is None:
        limits = _limits_sentence(pair)
    _check(cancelled)

    lines_by_id: dict[int, fmt.EpisodeLine] = {}
    for c in candidates:
        lines_by_id[c.id] = fmt.EpisodeLine(
            id=c.id,
            kind=c.kind,
            summary=c.summary,
            occurred_at=c.occurred_at,
            verdict=c.verdict,
            repeats=c.repeats,
        )
    groups: dict[str, list[fmt.EpisodeLine]] = {}
    for c in candidates:
        groups.setdefault(c.group, []).append(lines_by_id[c.id])
    has_history = pair is not None and pair.head_seq > 0
    parts = fmt.BlockParts(
        mode=mode,
        limits_sentence=limits,
        beliefs=beliefs,
        episodes=[lines_by_id[c.id] for c in candidates],
        episode_groups=[groups[g] for g in ("assessment", "conversation", "other") if g in groups],
        map_count=map_count,
        map_readiness=map_readiness,
        map_lines=map_lines,
        map_pinned=map_pinned,
        window_label=window.label if window else None,
        window_preposition=window.preposition if window else "in",
        window_empty=window is not None and not candidates,
        future_window_label=future_window.label if future_window else None,
        has_history=has_history,
        terms=fmt.Terms(stems=frozenset(reading.terms), code=reading.language),
    )
    # Stale-citation labels only for answers that may be shown: one query for all.
    statuses = _citation_status(candidates)
    for pk, status in statuses.items():
        lines_by_id[pk].stale_citation = status == "changed"
    formatted = fmt.block_format(parts, budget=request.budget, zone=zone, now=request.now)

    by_id = {c.id: c for c in candidates}
    recalled = [
        RecalledEpisode(
            id=line.id,
            occurred_at=line.occurred_at,
            kind=line.kind,
            summary=line.summary,
            verification=statuses.get(line.id, "unverifiable"),
            repeats=line.repeats,
            score=round(by_id[line.id].score, 4),
            parts=by_id[line.id].parts,
            pools=by_id[line.id].pool_names,
        )
        for line in formatted.episodes
    ]
    build_ms = (time.perf_counter() - started) * 1000
    result = BlockResult(
        text=formatted.text,
        mode=mode,
        recalled=recalled,
        window=window,
        tokens=formatted.tokens,
        budget=request.budget,
        build_ms=round(build_ms, 2),
        embed_ms=round(embed_ms, 2),
        known_pair=pair is not None,
        student_known=student is not None,
        subject_known=subject is not None,
        routed_concepts=routed,
        terms=list(reading.terms),
    )
    if request.legacy_assessment is not None:
        from tutorbrain.block.placement import prompt_place

        result.placed = prompt_place(block=result.text, legacy_assessment=request.legacy_assessment)
    return result
