"""Widen first, then cut (R-5.2–R-5.4): four candidate pools, scored and filtered in one query.

The pools each reach the pair's whole history (or the whole time window, R-5.5):

1. **recent** — the `RECENT_POOL_SIZE` most recent episodes (index episodeindex_pair_time_idx);
2. **lexical** — every episode whose search document holds a distinctive word of the
   message (GIN episodeindex_search_gin, 'simple' configuration: the words were already
   normalised and stop-word filtered in Python, for all five languages);
3. **conceptual** — every episode that touches a concept the message was routed to
   (GIN episode_concepts_gin on Episode.concepts);
4. **semantic** — the nearest neighbours of the message's embedding (HNSW
   episodeindex_embedding_hnsw, filtered by pair with pgvector's iterative index scan).

Scoring, the match filter, the collapse of repeats and the cut to the best rows run in
the same SQL statement, so only a few hundred short rows ever reach Python, whatever
the size of the history. Every weight is a named constant below; the scores are
returned part by part (the admin preview shows why each episode was chosen).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from config.routers import block_connection
from tutorbrain.block.timewindow import TimeWindow

# ---- Pools -------------------------------------------------------------------------------
RECENT_POOL_SIZE = 500
# The lexical and concept pools take every match; these caps only bound a pathological
# message (a word present in every episode). Within a cap the newest matches are kept.
LEXICAL_POOL_MAX = 2_000
CONCEPT_POOL_MAX = 2_000
SEMANTIC_POOL_SIZE = 50
# With a working set, the vector pool first takes this many nearest binary signatures
# (Hamming distance), then re-ranks them by exact cosine on the real vectors.
SIGNATURE_PREFILTER = 200
# pgvector iterative HNSW scan: keep walking the graph until enough neighbours of *this
# pair* are found (a pair is a sliver of a large database), up to this many tuples.
HNSW_EF_SEARCH = 100
HNSW_MAX_SCAN_TUPLES = 20_000

# ---- Score (R-5.3) ------------------------------------------------------------------------
# Starting weights from the original design, hand-set, not tuned.
WEIGHT_RELEVANCE = 0.55
WEIGHT_RECENCY = 0.15
# Salience (fixed at write time by kind, memory.rules: 0.30 answer … 0.85 taught) gets
# 0.25: the spread between kinds (0.25 × 0.55 = 0.14) is about recency's whole range
# (0.15) — a failed check from March stands level with yesterday's small talk — and
# well below relevance (0.55), so the memory that matches the message better wins.
WEIGHT_SALIENCE = 0.25
# Recency halves every RECENCY_HALF_LIFE_DAYS: 0.5 ** (200 / 74.6) = 0.156, the
# original design's "a 200-day-old memory keeps ~0.156 of its recency".
RECENCY_REFERENCE_DAYS = 200
RECENCY_KEPT_AT_REFERENCE = 0.156
RECENCY_HALF_LIFE_DAYS = RECENCY_REFERENCE_DAYS * math.log(2) / -math.log(RECENCY_KEPT_AT_REFERENCE)
# 0.5 ** 1000 ~ 1e-301 is 0 for any score, and still a normal float8: a memory more than
# 1,000 half-lives (~200 years) old (a turn dated far in the future) does not underflow.
RECENCY_MAX_HALF_LIVES = 1000

# Relevance in [0, 1] from three signals. Words of the message found in the episode are
# the strongest evidence; the concept route and the embedding carry what words cannot
# (another language, a synonym).
RELEVANCE_LEXICAL = 0.50  # × the share of the message's distinctive words it contains
RELEVANCE_CONCEPT = 0.20  # touches a concept the message was routed to
RELEVANCE_SEMANTIC = 0.30  # × cosine similarity rescaled from [floor, ceiling] to [0, 1]
SEMANTIC_FLOOR = 0.30
SEMANTIC_CEILING = 0.90
# An episode "matches" the message (survives the match filter) when it contains one of
# its distinctive words, touches a routed concept, or is a near paraphrase of it.
# Measured with the multilingual USE model: "What is osmosis in plants?" scores 0.68
# against both "Explained osmosis in plants" and "What is diffusion in plants?" —
# shared wording dominates — so similarity alone matches only above 0.80; other
# languages and synonyms reach their episodes through concept routing instead.
SEMANTIC_MATCH_MIN = 0.80

# How many scored rows reach Python: the best of each kind group (history mode balances
# the groups), far more than any budget can show.
ROWS_PER_GROUP = 50
ROWS_MAX = 150

POOL_RECENT, POOL_LEXICAL, POOL_CONCEPT, POOL_SEMANTIC, POOL_MISSES = 1, 2, 4, 8, 16
POOL_NAMES = {
    POOL_RECENT: "recent",
    POOL_LEXICAL: "words",
    POOL_CONCEPT: "concept",
    POOL_SEMANTIC: "meaning",
    POOL_MISSES: "misses",
}
# "What did I get wrong?": the pair's wrong and partial checks and quizzes over the whole
# history (widen first: a miss from March is not among the 500 most recent episodes of a
# busy student). Uses episode_pair_kind_idx.
MISSES_POOL_MAX = 200
# Kind groups: history mode takes from each in turn, so the record it shows includes
# the conversation, not only checks and quizzes.
KIND_GROUPS = {
    "check": "assessment",
    "quiz": "assessment",
    "question": "conversation",
    "answer": "conversation",
    "taught": "other",
    "file": "other",
    "consolidation": "other",
}


@dataclass
class Candidate:
    id: int
    kind: str
    summary: str
    occurred_at: datetime
    salience: float
    verdict: str
    text_head: str
    recalled_ids: list[int]
    citations: list[dict[str, Any]]
    similarity: float
    term_hits: int
    concept_hit: bool
    matched: bool
    pools: int
    relevance: float
    recency: float
    score: float
    repeats: int  # how many other episodes say exactly the same
    parts: dict[str, float] = field(default_factory=dict)

    @property
    def group(self) -> str:
        return KIND_GROUPS.get(self.kind, "other")

    @property
    def pool_names(self) -> list[str]:
        return [name for bit, name in POOL_NAMES.items() if self.pools & bit]

    @property
    def evidence(self) -> dict[str, Any]:
        # The shape memory.selectors.citation_status_for reads.
        return {"citations": self.citations}

    @property
    def pk(self) -> int:
        return self.id


@dataclass(frozen=True)
class RetrievalQuery:
    pair_id: int
    pair_size: int  # episodes in the pair's chain (for word rarity)
    now: datetime
    vector: list[float] | None
    terms: tuple[str, ...]
    concept_names: tuple[str, ...]
    window: TimeWindow | None
    exclude_narrations: bool
    # Episodes with seq <= this are in the pair's working set (tutorbrain.block.models);
    # 0: no usable working set, every pool reads the episode tables directly.
    working_set_max_seq: int = 0
    # A history question about the student's misses: add the misses pool, and let
    # wrong then partial results lead the assessment group.
    misses: bool = False


def session_settings_sql() -> str:
    return (
        "SET hnsw.iterative_scan = 'relaxed_order'; "
        f"SET hnsw.ef_search = {HNSW_EF_SEARCH}; "
        f"SET hnsw.max_scan_tuples = {HNSW_MAX_SCAN_TUPLES}"
    )


def candidates_fetch(query: RetrievalQuery) -> list[Candidate]:
    """Score every candidate of the four pools; return the best rows, repeats collapsed.

    The match filter (R-5.3): when the message has a topic and any candidate matches
    it, only matching candidates survive. Exemptions: no topic (no message, or only
    cue words) and nothing matching — then the recent pool is the offer, ranked by
    salience and recency.
    """
    params: dict[str, Any] = {
        "pair": query.pair_id,
        "now": query.now,
        "recent": RECENT_POOL_SIZE,
        "lexcap": LEXICAL_POOL_MAX,
        "conceptcap": CONCEPT_POOL_MAX,
        "k": SEMANTIC_POOL_SIZE,
        "w_rel": WEIGHT_RELEVANCE,
        "w_sal": WEIGHT_SALIENCE,
        "w_rec": WEIGHT_RECENCY,
        "half_life": RECENCY_HALF_LIFE_DAYS,
        "max_half_lives": RECENCY_MAX_HALF_LIVES,
        "r_lex": RELEVANCE_LEXICAL,
        "r_con": RELEVANCE_CONCEPT,
        "r_sem": RELEVANCE_SEMANTIC,
        "sem_floor": SEMANTIC_FLOOR,
        "sem_span": SEMANTIC_CEILING - SEMANTIC_FLOOR,
        "sem_match": SEMANTIC_MATCH_MIN,
        "per_group": ROWS_PER_GROUP,
        "rows": ROWS_MAX,
        "names": list(query.concept_names),
        "n_pair": max(1, query.pair_size),
        "has_topic": bool(query.terms or query.concept_names),
        "vector": None,
        "ws_seq": query.working_set_max_seq,
        "prefilter": SIGNATURE_PREFILTER,
        "missescap": MISSES_POOL_MAX,
        "misses_first": query.misses,
    }
    # Nothing after `now`: a block built for a past moment (the scenario runner, the
    # benchmark of R-8) must not remember what had not happened yet.
    window_ix = "AND ix.occurred_at <= %(now)s"
    window_e = "AND e.occurred_at <= %(now)s"
    window_w = "AND w.occurred_at <= %(now)s"
    if query.window is not None:
        params["w_start"] = query.window.start
        params["w_end"] = query.window.end
        window_ix += " AND ix.occurred_at >= %(w_start)s AND ix.occurred_at < %(w_end)s"
        window_e += " AND e.occurred_at >= %(w_start)s AND e.occurred_at < %(w_end)s"
        window_w += " AND w.occurred_at >= %(w_start)s AND w.occurred_at < %(w_end)s"
    use_ws = query.working_set_max_seq > 0

    # Term expressions use positional-looking names to keep one parameter style.
    tsq_parts, hit_columns, df_columns, idf_parts = [], [], [], []
    for i, term in enumerate(query.terms):
        params[f"t{i}"] = term
        tsq_parts.append(f"plainto_tsquery('simple', %(t{i})s) AS q{i}")
        hit_columns.append(f"(ix.search @@ tq.q{i})::int AS h{i}")
        df_columns.append(f"sum(h{i}) OVER () AS df{i}")
        idf_parts.append((f"h{i}", f"ln(1 + %(n_pair)s::float8 / GREATEST(df{i}, 1))"))
    # The pool's filter names the query inline: written so, the planner weighs the
    # pair's index against the full-text index by the words' real frequency (through
    # a CTE it guessed, and scanned the GIN index for every episode of every pair
    # holding a common word). Per-candidate word hits use the CTE: parsed once.
    any_term_inline = " || ".join(
        f"plainto_tsquery('simple', %(t{i})s)" for i in range(len(query.terms))
    )
    tq_cte = ""
    if tsq_parts:
        any_term = " || ".join(f"q{i}" for i in range(len(tsq_parts)))
        tq_cte = (
            f"tq AS MATERIALIZED (SELECT *, {any_term} AS q_any FROM "
            f"(SELECT {', '.join(tsq_parts)}) t),"
        )
    term_hits = " + ".join(f"h{i}" for i in range(len(query.terms))) or "0"
    # Each word weighs by its rarity in this student's history (inverse document
    # frequency): "osmosis" says more than "plants" when plants come up every week.
    lexical_share = (
        "("
        + " + ".join(f"{idf} * {h}" for h, idf in idf_parts)
        + ") / ("
        + " + ".join(idf for _, idf in idf_parts)
        + ")"
        if idf_parts
        else "0"
    )
    hit_select = "".join(f", {c}" for c in hit_columns)
    df_select = "".join(f", {c}" for c in df_columns)

    pools = [
        f"""SELECT ix.episode_id, {POOL_RECENT} AS flag FROM (
              SELECT ix.episode_id FROM memory_episodeindex ix
              WHERE ix.pair_id = %(pair)s {window_ix}
              ORDER BY ix.occurred_at DESC LIMIT %(recent)s) ix"""
    ]
    if query.misses:
        pools.append(
            f"""SELECT e.id, {POOL_MISSES} FROM (
                  SELECT e.id FROM memory_episode e
                  WHERE e.pair_id = %(pair)s AND e.kind IN ('check', 'quiz')
                    AND e.verdict IN ('wrong', 'partial') {window_e}
                  ORDER BY e.occurred_at DESC LIMIT %(missescap)s) e"""
        )
    if query.terms:
        pools.append(
            f"""SELECT ix.episode_id, {POOL_LEXICAL} FROM (
                  SELECT ix.episode_id FROM memory_episodeindex ix
                  WHERE ix.pair_id = %(pair)s AND ix.search @@ ({any_term_inline}) {window_ix}
                  ORDER BY ix.occurred_at DESC LIMIT %(lexcap)s) ix"""
        )
    if query.concept_names and use_ws:
        pools.append(
            f"""SELECT c.episode_id, {POOL_CONCEPT} FROM (
                  SELECT episode_id, occurred_at FROM (
                    SELECT w.episode_id, w.occurred_at FROM tutorbrain_block_workingsetepisode w
                    WHERE w.pair_id = %(pair)s AND w.concepts && %(names)s::varchar[] {window_w}
                    UNION ALL
                    SELECT e.id, e.occurred_at FROM memory_episode e
                    WHERE e.pair_id = %(pair)s AND e.seq > %(ws_seq)s
                      AND e.concepts && %(names)s::varchar[] {window_e}) both_
                  ORDER BY occurred_at DESC LIMIT %(conceptcap)s) c"""
        )
    elif query.concept_names:
        pools.append(
            f"""SELECT e.id, {POOL_CONCEPT} FROM (
                  SELECT e.id FROM memory_episode e
                  WHERE e.pair_id = %(pair)s AND e.concepts && %(names)s::varchar[] {window_e}
                  ORDER BY e.occurred_at DESC LIMIT %(conceptcap)s) e"""
        )
    if query.vector is not None:
        params["vector"] = vector_literal(query.vector)
        if use_ws:
            # Episodes appended since the working set was built: few, exact cosine.
            # (pair, seq) is episode_unique_pair_seq's index: a short range scan.
            pools.append(
                f"""SELECT ix.episode_id, {POOL_SEMANTIC} FROM (
                      SELECT ix.episode_id FROM memory_episode e
                      JOIN memory_episodeindex ix ON ix.episode_id = e.id
                      WHERE e.pair_id = %(pair)s AND e.seq > %(ws_seq)s
                        AND ix.embedding IS NOT NULL {window_ix}
                      ORDER BY ix.embedding <=> %(vector)s::vector LIMIT %(k)s) ix"""
            )
        else:
            pools.append(
                f"""SELECT ix.episode_id, {POOL_SEMANTIC} FROM (
                      SELECT ix.episode_id FROM memory_episodeindex ix
                      WHERE ix.pair_id = %(pair)s AND ix.embedding IS NOT NULL {window_ix}
                      ORDER BY ix.embedding <=> %(vector)s::vector LIMIT %(k)s) ix"""
            )
        if use_ws:
            pools.append(
                f"""SELECT ix.episode_id, {POOL_SEMANTIC} FROM (
                      SELECT ix.episode_id FROM memory_episodeindex ix
                      JOIN (SELECT w.episode_id FROM tutorbrain_block_workingsetepisode w
                            WHERE w.pair_id = %(pair)s AND w.signature IS NOT NULL {window_w}
                            ORDER BY w.signature <~> binary_quantize(%(vector)s::vector)
                            LIMIT %(prefilter)s) near ON near.episode_id = ix.episode_id
                      ORDER BY ix.embedding <=> %(vector)s::vector LIMIT %(k)s) ix"""
            )
    narration_filter = ""
    if query.exclude_narrations:
        # an answer built from recalled memories retells the past; it is not a
        # memory of the period it describes. (Narration *wording* is checked in Python.)
        narration_filter = (
            "AND NOT (e.kind = 'answer' AND "
            "jsonb_array_length(COALESCE(e.evidence->'recalled_ids', '[]'::jsonb)) > 0)"
        )
    # Similarity is computed for candidates of the topic pools only. A candidate found
    # by recency alone contains no topic word and touches no routed concept, and is not
    # among the nearest neighbours: it is dropped when anything matches, and when
    # nothing does relevance is not used — its similarity can change nothing, and
    # skipping it saves up to 500 vector reads.
    topic_pools = POOL_LEXICAL | POOL_CONCEPT | POOL_SEMANTIC
    similarity = (
        f"CASE WHEN pool.pools & {topic_pools} > 0 "
        "THEN COALESCE(1 - (ix.embedding <=> %(vector)s::vector), 0) ELSE 0 END"
        if query.vector is not None
        else "0::float8"
    )
    sql = f"""
    WITH {tq_cte}
    pool AS (
        SELECT episode_id, bit_or(flag) AS pools FROM (
            {" UNION ALL ".join(pools)}
        ) u GROUP BY episode_id
    ),
    raw AS MATERIALIZED (
        SELECT e.id, e.kind, e.summary, e.occurred_at, e.salience, e.verdict,
               {similarity} AS similarity{hit_select},
               (e.concepts && %(names)s::varchar[]) AS concept_hit,
               pool.pools
        FROM pool
        JOIN memory_episode e ON e.id = pool.episode_id
        JOIN memory_episodeindex ix ON ix.episode_id = e.id
        {"CROSS JOIN tq" if tq_cte else ""}
        WHERE e.pair_id = %(pair)s {narration_filter}
    ),
    freq AS (
        SELECT raw.*, ({term_hits}) AS term_hits{df_select} FROM raw
    ),
    judged AS (
        SELECT freq.*,
               (term_hits > 0 OR concept_hit OR similarity >= %(sem_match)s) AS matched,
               %(r_lex)s * {lexical_share}
                 + %(r_con)s * concept_hit::int
                 + %(r_sem)s * GREATEST(0, LEAST(1, (similarity - %(sem_floor)s) / %(sem_span)s))
                 AS relevance,
               -- date_part is float8 (EXTRACT is numeric, and numeric power is slow).
               -- The exponent is capped (RECENCY_MAX_HALF_LIVES): past it the recency is
               -- 0 for the score, and power() would raise an underflow error instead.
               power(0.5::float8,
                     LEAST(%(max_half_lives)s::float8,
                           GREATEST(0, date_part('epoch', %(now)s::timestamptz - occurred_at))
                           / 86400.0::float8 / %(half_life)s::float8)) AS recency
        FROM freq
    ),
    filtered AS (
        SELECT judged.*, bool_or(matched) OVER () AS any_matched FROM judged
    ),
    kept AS (
        SELECT filtered.*,
               CASE WHEN %(has_topic)s AND any_matched THEN relevance ELSE 0 END AS rel_used
        FROM filtered
        WHERE CASE WHEN %(has_topic)s AND any_matched THEN matched
                   ELSE (pools & {POOL_RECENT | POOL_MISSES}) > 0 END
    ),
    scored AS (
        SELECT kept.*,
               %(w_rel)s * rel_used + %(w_sal)s * salience + %(w_rec)s * recency AS score
        FROM kept
    ),
    collapsed AS (
        SELECT scored.*,
               -- "What did I get wrong?": wrong, then partial results come first.
               CASE WHEN NOT %(misses_first)s THEN 0
                    WHEN verdict = 'wrong' THEN 0 WHEN verdict = 'partial' THEN 1
                    ELSE 2 END AS miss_rank,
               -- Byte order ("C") groups identical summaries as well as the locale's
               -- order would, without its cost.
               count(*) OVER same_text - 1 AS repeats,
               row_number() OVER (same_text ORDER BY score DESC, occurred_at DESC, id DESC)
                   AS copy_rank
        FROM scored
        WINDOW same_text AS (PARTITION BY kind, verdict, summary COLLATE "C")
    ),
    grouped AS (
        SELECT collapsed.*,
               row_number() OVER (
                   PARTITION BY CASE WHEN kind IN ('check', 'quiz') THEN 'assessment'
                                     WHEN kind IN ('question', 'answer') THEN 'conversation'
                                     ELSE 'other' END
                   ORDER BY miss_rank, score DESC, occurred_at DESC, id DESC) AS group_rank
        FROM collapsed WHERE copy_rank = 1
    )
    SELECT g.id, g.kind, g.summary, g.occurred_at, g.salience, g.verdict,
           CASE WHEN g.kind = 'answer' THEN left(e.text, 600) ELSE '' END,
           CASE WHEN g.kind = 'answer' THEN e.evidence->'recalled_ids' END,
           CASE WHEN g.kind = 'answer' THEN e.evidence->'citations' END,
           g.similarity, g.term_hits, g.concept_hit, g.matched, g.pools, g.rel_used,
           g.recency, g.score, g.repeats
    FROM (
        SELECT * FROM grouped WHERE group_rank <= %(per_group)s
        ORDER BY miss_rank, score DESC, occurred_at DESC, id DESC
        LIMIT %(rows)s
    ) g
    JOIN memory_episode e ON e.id = g.id
    ORDER BY g.miss_rank, g.score DESC, g.occurred_at DESC, g.id DESC
    """
    with block_connection().cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    out = []
    for row in rows:
        (
            pk,
            kind,
            summary,
            occurred_at,
            salience,
            verdict,
            text_head,
            recalled,
            citations,
            similarity,
            hits,
            concept_hit,
            matched,
            pool_bits,
            relevance,
            recency,
            score,
            repeats,
        ) = row
        candidate = Candidate(
            id=pk,
            kind=kind,
            summary=summary,
            occurred_at=occurred_at,
            salience=float(salience),
            verdict=verdict,
            text_head=text_head or "",
            recalled_ids=list(_json(recalled) or []),
            citations=[c for c in (_json(citations) or []) if isinstance(c, dict)],
            similarity=float(similarity),
            term_hits=int(hits),
            concept_hit=bool(concept_hit),
            matched=bool(matched),
            pools=int(pool_bits),
            relevance=float(relevance),
            recency=float(recency),
            score=float(score),
            repeats=int(repeats),
        )
        candidate.parts = {
            "relevance": round(WEIGHT_RELEVANCE * candidate.relevance, 4),
            "salience": round(WEIGHT_SALIENCE * candidate.salience, 4),
            "recency": round(WEIGHT_RECENCY * candidate.recency, 4),
            "similarity": round(candidate.similarity, 4),
            "words_matched": candidate.term_hits,
            "concept_match": candidate.concept_hit,
        }
        out.append(candidate)
    return out


def _json(value: Any) -> Any:
    # Django's psycopg setup hands jsonb to Python as text (JSONField decodes it itself).
    return json.loads(value) if isinstance(value, str) else value


def vector_literal(vector: Any) -> str:
    """pgvector's text form of a vector (a str is taken as already formatted)."""
    if isinstance(vector, str):
        return vector
    return "[" + ",".join(f"{float(x):.6f}" for x in vector) + "]"
