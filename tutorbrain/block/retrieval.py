"""Widen first, then cut (R-5.2–R-5.4): four candidate pools, scored and filtered in one query.

The pools each reach the pair's whole history (or the whole time window, R-5.5):

1. **recent** — the `RECENT_POOL_SIZE` most recent episodes (`RECENT_POOL_SIZE_WITH_TOPIC`
   when the message has a topic; index episodeindex_pair_time_idx);
2. **lexical** — every episode whose search document holds a distinctive word of the
   message ('simple' configuration: the words were already normalised, stemmed and
   stop-word filtered in Python, in the message's language); with a working set, found
   by the pair's word keys (GIN wsepisode_keys_gin), else by a scan of the pair's rows;
3. **conceptual** — every episode that touches a concept the message was routed to
   (the working set's concept keys, else GIN episode_concepts_gin on Episode.concepts);
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
from tutorbrain.block.models import concept_key, word_key
from tutorbrain.block.timewindow import TimeWindow

# ---- Pools -------------------------------------------------------------------------------
RECENT_POOL_SIZE = 500
# With a topic the recent pool only matters when nothing matches (then the recent past
# is the offer, ranked by salience and recency): ROWS_MAX rows are all that can reach
# Python, so more would only be joined and scored to be dropped.
RECENT_POOL_SIZE_WITH_TOPIC = 150
# The lexical and concept pools take every match; these caps only bound a pathological
# message (a word present in every episode). Within a cap the newest matches are kept.
LEXICAL_POOL_MAX = 2_000
# Of the lexical matches, only the best by BM25 go on to the costly stage (the episode
# row, the vector similarity, the windows): a match ranked past this contributes
# 1 / (RRF_K + rank) < 0.004 to its fusion. Every match still counts in the words'
# document frequencies.
LEXICAL_POOL_KEEP = 300
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
# Relevance is a real ranking: BM25 over the stemmed terms the message shares with each
# episode (idf over this pair's history), fused by reciprocal rank with the ranking by
# embedding similarity. Measured on real conversations (docs/BENCHMARKS.md, bench_recall):
# plain BM25 beats the old weighted share of words, and fusing in the vector ranking
# recalls answers that share no word with the question.
BM25_K1 = 1.2
BM25_B = 0.75
# Reciprocal-rank fusion: rank r in a list adds weight / (RRF_K + r). Tuned on the dev
# conversations (docs/BENCHMARKS.md): the lexical ranking is the stronger of the two
# there (BM25 alone beats vectors alone by 10 points), and a small k lets the top
# ranks count.
RRF_K = 20
RRF_LEXICAL = 1.0
RRF_SEMANTIC = 0.5
# Conversation neighbours: the NEIGHBOUR_SEEDS best matches lend WEIGHT_NEIGHBOUR of
# their relevance to the episodes just before and after them in the chain, when those
# happened within NEIGHBOUR_MAX_GAP_SECONDS (the same sitting). "What did Caroline
# research?" matches Melanie's "What are you researching?"; the answer is the next turn.
NEIGHBOUR_SEEDS = 60
WEIGHT_NEIGHBOUR = 0.5
NEIGHBOUR_MAX_GAP_SECONDS = 3600
# Boosts on the fused relevance (normalised to [0, 1]), and recency, which only breaks
# ties in ordinary mode: a match from March outranks yesterday's small talk.
WEIGHT_RELEVANCE = 0.70
WEIGHT_CONCEPT = 0.10  # touches a concept the message was routed to
# Salience (fixed at write time by kind, memory.rules: 0.30 answer … 0.85 taught): a
# failed check weighs more than small talk, but less than a better match.
WEIGHT_SALIENCE = 0.10
WEIGHT_RECENCY = 0.02
# ... except when the message asks for the latest ("what did we talk about X last
# time?", language data `latest_cues`): then the newest of the matches should win.
WEIGHT_RECENCY_LATEST = 0.30
# Without a topic (no message, or only cue words) or with nothing matching, relevance
# is not used and the recent past is ranked by salience and recency as before.
WEIGHT_RECENCY_NO_TOPIC = 0.15
# Recency halves every RECENCY_HALF_LIFE_DAYS: 0.5 ** (200 / 74.6) = 0.156, the
# original design's "a 200-day-old memory keeps ~0.156 of its recency".
RECENCY_REFERENCE_DAYS = 200
RECENCY_KEPT_AT_REFERENCE = 0.156
RECENCY_HALF_LIFE_DAYS = RECENCY_REFERENCE_DAYS * math.log(2) / -math.log(RECENCY_KEPT_AT_REFERENCE)
# 0.5 ** 1000 ~ 1e-301 is 0 for any score, and still a normal float8: a memory more than
# 1,000 half-lives (~200 years) old (a turn dated far in the future) does not underflow.
RECENCY_MAX_HALF_LIVES = 1000

# The match filter: an episode matches the message when it shares a stemmed term that
# weighs enough (BM25 idf; a word in more than ~a third of the pair's episodes, such as
# the student's own name, does not make a match on its own), touches a routed concept,
# or is among the nearest neighbours of the message's embedding above a similarity
# calibrated on question -> answer pairs (not paraphrases): see SEMANTIC_MATCH_MIN.
MATCH_MIN_IDF = 1.0
# USE places a question and the statement that answers it at cosine 0.1-0.5, so the
# old 0.80 (a near paraphrase) never fired. Measured on question -> answer pairs
# (docs/memory-block.md): the threshold keeps the nearest neighbours that answer.
SEMANTIC_MATCH_MIN = 0.30
SEMANTIC_MATCH_RANK = 10

# How many scored rows reach Python: the best of each kind group (history mode balances
# the groups), far more than any budget can show.
ROWS_PER_GROUP = 50
ROWS_MAX = 150

POOL_RECENT, POOL_LEXICAL, POOL_CONCEPT, POOL_SEMANTIC, POOL_MISSES = 1, 2, 4, 8, 16
POOL_NEIGHBOUR = 32
POOL_NAMES = {
    POOL_RECENT: "recent",
    POOL_LEXICAL: "words",
    POOL_CONCEPT: "concept",
    POOL_SEMANTIC: "meaning",
    POOL_MISSES: "misses",
    POOL_NEIGHBOUR: "neighbour",
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


# ts_rank(search, one term, normalisation 0) with every position unweighted (0.1) is
# 0.1 × (1 + 1/4 + … + 1/tf²) / ζ(2): PostgreSQL's saturating count of a term. Inverted
# here to the term frequency BM25 wants (ζ(2) − Σ ≈ 1 / (tf + 0.5)).
_TS_RANK_UNIT = 0.1 / (math.pi**2 / 6)
_ZETA2 = math.pi**2 / 6


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
    bm25: float
    lexical_rank: int | None
    vector_rank: int | None
    concept_hit: bool
    matched: bool
    pools: int
    relevance: float
    recency: float
    score: float
    repeats: int  # how many other episodes say exactly the same
    parts: dict[str, Any] = field(default_factory=dict)

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
    # History mode takes from each kind group in turn: cap the rows of each group.
    balance_groups: bool = False
    # The message asks for the latest matching memory ("last time").
    latest: bool = False


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
        "recent": RECENT_POOL_SIZE_WITH_TOPIC
        if (query.terms or query.concept_names)
        else RECENT_POOL_SIZE,
        "lexcap": LEXICAL_POOL_MAX,
        "conceptcap": CONCEPT_POOL_MAX,
        "k": SEMANTIC_POOL_SIZE,
        "w_rel": WEIGHT_RELEVANCE,
        "w_con": WEIGHT_CONCEPT,
        "w_sal": WEIGHT_SALIENCE,
        "w_rec": WEIGHT_RECENCY_LATEST if query.latest else WEIGHT_RECENCY,
        "w_rec_none": WEIGHT_RECENCY_NO_TOPIC,
        "half_life": RECENCY_HALF_LIFE_DAYS,
        "max_half_lives": RECENCY_MAX_HALF_LIVES,
        "k1": BM25_K1,
        "b": BM25_B,
        "rrf_k": RRF_K,
        "rrf_lex": RRF_LEXICAL,
        "rrf_sem": RRF_SEMANTIC,
        "rrf_max": (RRF_LEXICAL + RRF_SEMANTIC) / (RRF_K + 1),
        "ts_unit": _TS_RANK_UNIT,
        "zeta2": _ZETA2,
        "match_idf": MATCH_MIN_IDF,
        "sem_match": SEMANTIC_MATCH_MIN,
        "sem_match_rank": SEMANTIC_MATCH_RANK,
        "per_group": ROWS_PER_GROUP if query.balance_groups else ROWS_MAX,
        "seeds": NEIGHBOUR_SEEDS,
        "turn_gap": NEIGHBOUR_MAX_GAP_SECONDS,
        "w_nb": WEIGHT_NEIGHBOUR,
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
    window_n = "AND n.occurred_at <= %(now)s"
    if query.window is not None:
        params["w_start"] = query.window.start
        params["w_end"] = query.window.end
        window_ix += " AND ix.occurred_at >= %(w_start)s AND ix.occurred_at < %(w_end)s"
        window_e += " AND e.occurred_at >= %(w_start)s AND e.occurred_at < %(w_end)s"
        window_w += " AND w.occurred_at >= %(w_start)s AND w.occurred_at < %(w_end)s"
        window_n += " AND n.occurred_at >= %(w_start)s AND n.occurred_at < %(w_end)s"
    use_ws = query.working_set_max_seq > 0

    # Term expressions use positional-looking names to keep one parameter style.
    tsq_parts, hit_columns, df_columns, idf_columns = [], [], [], []
    bm25_parts, idf_match_parts, pool_bm25_parts = [], [], []
    for i, term in enumerate(query.terms):
        params[f"t{i}"] = term
        tsq_parts.append(f"plainto_tsquery('simple', %(t{i})s) AS q{i}")
        # tf{i}: the term's count in the episode, from ts_rank (see _TS_RANK_UNIT); 0
        # when the episode lacks the term (then ts_rank is not computed at all).
        hit_columns.append(
            f"CASE WHEN DOC @@ tq.q{i} THEN GREATEST(1, 1 / GREATEST(1e-3, %(zeta2)s "
            f"- ts_rank(DOC, tq.q{i}, 0) / %(ts_unit)s) - 0.5) ELSE 0 END AS tf{i}"
        )
        # float8: a bare count is bigint, and `df + 0.5` would then run in numeric.
        df_columns.append(f"(count(*) FILTER (WHERE tf{i} > 0))::float8 AS df{i}")
        # BM25's idf over this pair's history (Lucene's form, never negative): one value
        # per term, computed once in `lexdf` (per candidate it cost ~9,000 ln() calls).
        idf_columns.append(
            f"ln(1 + (%(n_pair)s::float8 - df{i} + 0.5::float8) / (df{i} + 0.5::float8)) AS idf{i}"
        )
        bm25_parts.append(f"idf{i} * tf{i} * (%(k1)s + 1) / (tf{i} + norm)")
        pool_bm25_parts.append(f"idf{i} * tf{i} * (%(k1)s + 1) / (tf{i} + pool_norm)")
        idf_match_parts.append(f"CASE WHEN tf{i} > 0 THEN idf{i} ELSE 0 END")
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
    term_hits = " + ".join(f"(tf{i} > 0)::int" for i in range(len(query.terms))) or "0"
    bm25 = " + ".join(bm25_parts) or "0"
    best_idf = f"GREATEST({', '.join(idf_match_parts)})" if idf_match_parts else "0"

    def hit_select(doc: str) -> str:
        # The document's length and the term counts (hit_columns) in document `doc`.
        return f", length({doc})::float8 AS dl" + "".join(
            f", {column.replace('DOC', doc)}" for column in hit_columns
        )

    # Every lexical match of the pair, with its term counts: the words' document
    # frequencies are counted over all of them; the best LEXICAL_POOL_KEEP by BM25 are
    # the lexical pool. A candidate's term counts come from these matches (counted once
    # here): a candidate of another pool that is not among them lacks every term — or,
    # past LEXICAL_POOL_MAX matches, is older than the newest matches kept, and is not
    # weighed by its words (as a lexical match that old is not).
    lexical_ctes = pooled_cte = raw_term_select = idf_select = ""
    norm = "1::float8"
    if query.terms:
        params["lexkeep"] = LEXICAL_POOL_KEEP
        # The working set's keys find the matches when every word has a key (word_key).
        word_keys = [word_key(query.pair_id, term) for term in query.terms]
        if use_ws and all(word_keys):
            params["word_keys"] = word_keys
            matches = f"""
        SELECT * FROM (
            SELECT w.episode_id, w.occurred_at{hit_select("w.search")}
            FROM tutorbrain_block_workingsetepisode w CROSS JOIN tq
            WHERE w.keys && %(word_keys)s::text[] AND w.pair_id = %(pair)s {window_w}
            UNION ALL
            SELECT ix.episode_id, ix.occurred_at{hit_select("ix.search")}
            FROM memory_episode e
            JOIN memory_episodeindex ix ON ix.episode_id = e.id CROSS JOIN tq
            WHERE e.pair_id = %(pair)s AND e.seq > %(ws_seq)s
              AND ix.search @@ ({any_term_inline}) {window_ix}
        ) matches"""
        else:
            matches = f"""
        SELECT ix.episode_id, ix.occurred_at{hit_select("ix.search")}
        FROM memory_episodeindex ix CROSS JOIN tq
        WHERE ix.pair_id = %(pair)s AND ix.search @@ ({any_term_inline}) {window_ix}"""
        lexical_ctes = f"""
    lexical AS MATERIALIZED ({matches}
        ORDER BY occurred_at DESC LIMIT %(lexcap)s
    ),
    lexdf AS MATERIALIZED (
        SELECT counts.*, {", ".join(idf_columns)} FROM (
            SELECT {", ".join(df_columns)}, avg(dl) AS lex_avgdl FROM lexical) counts
    ),
    lexbest AS MATERIALIZED (
        SELECT episode_id FROM (
            SELECT lexical.*, lexdf.*,
                   %(k1)s * (1 - %(b)s + %(b)s * dl / GREATEST(1, lex_avgdl)) AS pool_norm
            FROM lexical CROSS JOIN lexdf) l
        ORDER BY ({" + ".join(pool_bm25_parts)}) DESC, occurred_at DESC, episode_id DESC
        LIMIT %(lexkeep)s
    ),"""
        tf_names = [f"tf{i}" for i in range(len(query.terms))]
        # Joined before the episode rows, in a CTE of its own: the planner then hashes the
        # matches once (joined after, or inlined, it guessed two candidates and scanned
        # the matches once per candidate: 500 x 900 rows).
        pooled_cte = f"""
    pooled AS MATERIALIZED (
        SELECT pool.*{"".join(f", lx.{tf}" for tf in tf_names)}, lx.dl
        FROM pool LEFT JOIN lexical lx ON lx.episode_id = pool.episode_id
    ),"""
        raw_term_select = "".join(f", COALESCE(pool.{tf}, 0) AS {tf}" for tf in tf_names)
        raw_term_select += ", pool.dl"
        idf_select = "".join(f", lexdf.idf{i}" for i in range(len(query.terms)))
        # BM25's length normalisation (distinct terms of the document) against the
        # average over the lexical matches, as the lexical pool itself was ranked.
        norm = "%(k1)s * (1 - %(b)s + %(b)s * COALESCE(dl, lex_avgdl, 1) / GREATEST(1, lex_avgdl))"

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
        pools.append(f"SELECT episode_id, {POOL_LEXICAL} FROM lexbest")
    if query.concept_names and use_ws:
        params["concept_keys"] = [concept_key(query.pair_id, n) for n in query.concept_names]
        pools.append(
            f"""SELECT c.episode_id, {POOL_CONCEPT} FROM (
                  SELECT episode_id, occurred_at FROM (
                    SELECT w.episode_id, w.occurred_at FROM tutorbrain_block_workingsetepisode w
                    WHERE w.keys && %(concept_keys)s::text[] AND w.pair_id = %(pair)s {window_w}
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
            # The re-rank reads the real vectors by primary key, one lookup per
            # prefiltered row (LATERAL): left to choose, the planner merge-joined the
            # 200 ids against the whole million-row index.
            pools.append(
                f"""SELECT best.episode_id, {POOL_SEMANTIC} FROM (
                      SELECT near.episode_id FROM (
                        SELECT w.episode_id FROM tutorbrain_block_workingsetepisode w
                        WHERE w.pair_id = %(pair)s AND w.signature IS NOT NULL {window_w}
                        ORDER BY w.signature <~> binary_quantize(%(vector)s::vector)
                        LIMIT %(prefilter)s) near
                      CROSS JOIN LATERAL (
                        SELECT ix.embedding <=> %(vector)s::vector AS distance
                        FROM memory_episodeindex ix WHERE ix.episode_id = near.episode_id
                        LIMIT 1) exact
                      ORDER BY exact.distance LIMIT %(k)s) best"""
            )
    narration_filter = narration_n = ""
    if query.exclude_narrations:
        # an answer built from recalled memories retells the past; it is not a
        # memory of the period it describes. (Narration *wording* is checked in Python.)
        narration_filter, narration_n = (
            f"AND NOT ({a}.kind = 'answer' AND "
            f"jsonb_array_length(COALESCE({a}.evidence->'recalled_ids', '[]'::jsonb)) > 0)"
            for a in ("e", "n")
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
    # The vector ranking covers the candidates of the topic pools (their similarity is
    # computed; the recent pool's is not).
    vector_rank = (
        f"CASE WHEN pools & {topic_pools} > 0 THEN rank() OVER "
        f"(ORDER BY (pools & {topic_pools} > 0) DESC, similarity DESC) END"
        if query.vector is not None
        else "NULL::bigint"
    )
    sql = f"""
    WITH {tq_cte}{lexical_ctes}
    pool AS (
        SELECT episode_id, bit_or(flag) AS pools FROM (
            {" UNION ALL ".join(pools)}
        ) u GROUP BY episode_id
    ),{pooled_cte}
    raw AS MATERIALIZED (
        SELECT e.id, e.seq, e.kind, e.occurred_at, e.salience, e.verdict,
               -- Repeats are grouped by a 64-bit hash of the summary: the ranking
               -- carries numbers only, and the text is read for the rows shown.
               hashtextextended(e.summary, 0) AS text_key,
               {similarity} AS similarity{raw_term_select},
               (e.concepts && %(names)s::varchar[]) AS concept_hit,
               pool.pools
        FROM {"pooled AS pool" if query.terms else "pool"}
        -- Each candidate's row by primary key (LIMIT 1 keeps the lookup per row): left
        -- to choose, the planner guessed 2,000 candidates and hashed them against every
        -- episode of the pair (17,000 rows read for ~750).
        CROSS JOIN LATERAL (
            SELECT e.id, e.seq, e.kind, e.occurred_at, e.salience, e.verdict, e.summary,
                   e.concepts, e.evidence, e.pair_id
            FROM memory_episode e WHERE e.id = pool.episode_id LIMIT 1) e
        {"JOIN memory_episodeindex ix ON ix.episode_id = e.id" if query.vector is not None else ""}
        WHERE e.pair_id = %(pair)s {narration_filter}
    ),
    freq AS (
        SELECT raw.*, ({term_hits}) AS term_hits{idf_select}, {norm} AS norm
        FROM raw {"CROSS JOIN lexdf" if query.terms else ""}
    ),
    weighed AS (
        SELECT freq.*, ({bm25}) AS bm25, {best_idf} AS best_idf FROM freq
    ),
    ranked AS (
        SELECT weighed.*,
               CASE WHEN bm25 > 0 THEN rank() OVER (ORDER BY bm25 DESC) END AS lexical_rank,
               {vector_rank} AS vector_rank
        FROM weighed
    ),
    judged AS (
        SELECT ranked.*,
               (best_idf >= %(match_idf)s OR concept_hit
                OR COALESCE(vector_rank <= %(sem_match_rank)s AND similarity >= %(sem_match)s,
                            false)) AS matched,
               -- Reciprocal-rank fusion of the two rankings, scaled to [0, 1].
               (COALESCE(%(rrf_lex)s / (%(rrf_k)s + lexical_rank), 0)
                + COALESCE(%(rrf_sem)s / (%(rrf_k)s + vector_rank), 0)) / %(rrf_max)s
                 AS relevance,
               -- date_part is float8 (EXTRACT is numeric, and numeric power is slow).
               -- The exponent is capped (RECENCY_MAX_HALF_LIVES): past it the recency is
               -- 0 for the score, and power() would raise an underflow error instead.
               power(0.5::float8,
                     LEAST(%(max_half_lives)s::float8,
                           GREATEST(0, date_part('epoch', %(now)s::timestamptz - occurred_at))
                           / 86400.0::float8 / %(half_life)s::float8)) AS recency
        FROM ranked
    ),
    filtered AS (
        SELECT judged.*, bool_or(matched) OVER () AS any_matched FROM judged
    ),
    base AS (
        SELECT id, seq, kind, text_key, occurred_at, salience, verdict, pools, similarity,
               term_hits, concept_hit, matched, relevance, recency, bm25, lexical_rank,
               vector_rank, (%(has_topic)s AND any_matched) AS ranked_by_relevance
        FROM filtered
    ),
    -- A turn is read with the turns beside it: the answer to a question sits right
    -- after it, in the same sitting. The best matches lend part of their relevance to
    -- their neighbours in the chain (found by episode_unique_pair_seq).
    seeds AS MATERIALIZED (
        SELECT id, seq, occurred_at, relevance FROM base
        WHERE ranked_by_relevance AND matched
        ORDER BY relevance DESC, occurred_at DESC LIMIT %(seeds)s
    ),
    adjacent AS (
        SELECT n.id, max(s.relevance) AS neighbour
        FROM seeds s
        JOIN memory_episode n ON n.pair_id = %(pair)s AND n.seq IN (s.seq - 1, s.seq + 1)
        WHERE abs(date_part('epoch', n.occurred_at - s.occurred_at)) <= %(turn_gap)s
              {window_n}
        GROUP BY n.id
    ),
    everyone AS (
        SELECT b.id, b.seq, b.kind, b.text_key, b.occurred_at, b.salience, b.verdict,
               b.pools | CASE WHEN a.id IS NULL THEN 0 ELSE {POOL_NEIGHBOUR} END AS pools,
               b.similarity, b.term_hits, b.concept_hit, b.matched, b.relevance, b.recency,
               b.bm25, b.lexical_rank, b.vector_rank, b.ranked_by_relevance,
               COALESCE(a.neighbour, 0) AS neighbour
        FROM base b LEFT JOIN adjacent a ON a.id = b.id
        UNION ALL
        SELECT n.id, n.seq, n.kind, hashtextextended(n.summary, 0), n.occurred_at,
               n.salience, n.verdict,
               {POOL_NEIGHBOUR}, 0::float8, 0, false, false, 0::float8,
               power(0.5::float8,
                     LEAST(%(max_half_lives)s::float8,
                           GREATEST(0, date_part('epoch', %(now)s::timestamptz - n.occurred_at))
                           / 86400.0::float8 / %(half_life)s::float8)),
               0::float8, NULL::bigint, NULL::bigint, true, a.neighbour
        FROM adjacent a JOIN memory_episode n ON n.id = a.id
        WHERE NOT EXISTS (SELECT 1 FROM base WHERE base.id = a.id) {narration_n}
    ),
    kept AS (
        SELECT * FROM everyone
        WHERE CASE WHEN ranked_by_relevance THEN matched OR neighbour > 0
                   ELSE (pools & {POOL_RECENT | POOL_MISSES}) > 0 END
    ),
    scored AS (
        SELECT kept.*,
               CASE WHEN ranked_by_relevance THEN relevance + %(w_nb)s * neighbour
                    ELSE 0 END AS rel_used,
               CASE WHEN ranked_by_relevance
                    THEN %(w_rel)s * (relevance + %(w_nb)s * neighbour)
                         + %(w_con)s * concept_hit::int
                         + %(w_sal)s * salience + %(w_rec)s * recency
                    ELSE %(w_sal)s * salience + %(w_rec_none)s * recency END AS score
        FROM kept
    ),
    collapsed AS (
        SELECT scored.*,
               -- "What did I get wrong?": wrong, then partial results come first.
               CASE WHEN NOT %(misses_first)s THEN 0
                    WHEN verdict = 'wrong' THEN 0 WHEN verdict = 'partial' THEN 1
                    ELSE 2 END AS miss_rank,
               count(*) OVER same_text - 1 AS repeats,
               -- One memory recalled N times: shown at its latest occurrence, ranked
               -- by its best-scored copy (a neighbour boost may lift an older copy).
               row_number() OVER (same_text ORDER BY occurred_at DESC, id DESC) AS copy_rank,
               max(score) OVER same_text AS best_copy_score
        FROM scored
        WINDOW same_text AS (PARTITION BY kind, verdict, text_key)
    ),
    grouped AS (
        SELECT collapsed.*,
               row_number() OVER (
                   PARTITION BY CASE WHEN kind IN ('check', 'quiz') THEN 'assessment'
                                     WHEN kind IN ('question', 'answer') THEN 'conversation'
                                     ELSE 'other' END
                   ORDER BY miss_rank, best_copy_score DESC, occurred_at DESC, id DESC) AS group_rank
        FROM collapsed WHERE copy_rank = 1
    )
    SELECT g.id, g.kind, e.summary, g.occurred_at, g.salience, g.verdict,
           CASE WHEN g.kind = 'answer' THEN left(e.text, 600) ELSE '' END,
           CASE WHEN g.kind = 'answer' THEN e.evidence->'recalled_ids' END,
           CASE WHEN g.kind = 'answer' THEN e.evidence->'citations' END,
           g.similarity, g.term_hits, g.concept_hit, g.matched, g.pools, g.rel_used,
           g.recency, g.best_copy_score, g.repeats, g.bm25, g.lexical_rank, g.vector_rank, g.neighbour
    FROM (
        SELECT * FROM grouped WHERE group_rank <= %(per_group)s
        ORDER BY miss_rank, best_copy_score DESC, occurred_at DESC, id DESC
        LIMIT %(rows)s
    ) g
    JOIN memory_episode e ON e.id = g.id
    ORDER BY g.miss_rank, g.best_copy_score DESC, g.occurred_at DESC, g.id DESC
    """
    with block_connection().cursor() as cursor:
        cursor.execute(_float8_parameters(sql, params), params)
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
            bm25_score,
            lexical_rank,
            vector_rank,
            neighbour,
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
            bm25=float(bm25_score),
            lexical_rank=None if lexical_rank is None else int(lexical_rank),
            vector_rank=None if vector_rank is None else int(vector_rank),
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
            "bm25": round(candidate.bm25, 4),
            "lexical_rank": candidate.lexical_rank,
            "vector_rank": candidate.vector_rank,
            "neighbour": round(float(neighbour), 4),
            "salience": round(WEIGHT_SALIENCE * candidate.salience, 4),
            "recency": round(WEIGHT_RECENCY * candidate.recency, 4),
            "similarity": round(candidate.similarity, 4),
            "words_matched": candidate.term_hits,
            "concept_match": candidate.concept_hit,
        }
        out.append(candidate)
    return out


def _float8_parameters(sql: str, params: dict[str, Any]) -> str:
    """Type every float parameter as float8 where the statement uses it.

    Django binds parameters on the client: a Python float reaches PostgreSQL as a bare
    literal (1.2), which is `numeric`, and every score expression it touches then runs
    in arbitrary-precision arithmetic — ln(), divisions and window sums over ~1,400
    candidates cost tens of milliseconds more than in float8.
    """
    for name, value in params.items():
        if isinstance(value, float):
            sql = sql.replace(f"%({name})s", f"%({name})s::float8")
    return sql


def _json(value: Any) -> Any:
    # Django's psycopg setup hands jsonb to Python as text (JSONField decodes it itself).
    return json.loads(value) if isinstance(value, str) else value


def vector_literal(vector: Any) -> str:
    """pgvector's text form of a vector (a str is taken as already formatted)."""
    if isinstance(vector, str):
        return vector
    return "[" + ",".join(f"{float(x):.6f}" for x in vector) + "]"
