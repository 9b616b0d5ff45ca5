"""Synthetic episode histories for `manage.py bench_block`, written through a fast path.

A million episodes through `episode_append` would take hours (one embedding, one
transaction and one chain lock per event). The benchmark needs the *shape* of a large
database, not a million model calls, so this module:

- generates texts from templates over a subject's concept names (a few thousand
  distinct texts), embeds each distinct text ONCE with the real embedder, and gives every
  episode the vector of its text plus a small deterministic jitter (so the HNSW graph
  sees a million distinct points, as in production, not 500 copies of each);
- computes every chain exactly as `episode_append` does (sequence numbers, salience
  from `memory.rules`, `memory.hashing.episode_hash` over the same canonical content),
  so `verify` on a benchmark chain reports it intact;
- loads rows with COPY (text COPY for episodes, binary COPY for the vectors through a
  staging table), with the secondary indexes dropped during the load and rebuilt after
  (the HNSW index in one build, which is much faster than a million inserts).

Only for benchmark databases: it writes rows of the memory app without its services,
which is why it refuses to run unless the caller says the database is a benchmark one.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from memory import indexing
from memory.hashing import episode_hash, fields_of
from memory.models import GENESIS_HASH, Episode, Organization, Pair, Student, Subject
from memory.rules import salience_for

# The bench subject's concepts (names only matter: they are what messages mention).
BENCH_CONCEPTS = [
    "Cell membrane",
    "Osmosis",
    "Diffusion",
    "Mitochondria",
    "Cytoplasm",
    "Nucleus",
    "Ribosomes",
    "Photosynthesis",
    "Chloroplasts",
    "Cellular respiration",
    "ATP",
    "Enzymes",
    "DNA replication",
    "Transcription",
    "Translation",
    "Mitosis",
    "Meiosis",
    "Active transport",
    "Golgi apparatus",
    "Endoplasmic reticulum",
    "Lysosomes",
    "Cell wall",
    "Prokaryotic cells",
    "Eukaryotic cells",
    "Proteins",
    "Lipids",
    "Carbohydrates",
    "Genes",
    "Chromosomes",
    "Homeostasis",
    "Glycolysis",
    "Krebs cycle",
]
DETAILS = [
    "in plants",
    "in animal cells",
    "with an example",
    "step by step",
    "for the exam",
    "in simple words",
    "compared with the textbook",
    "from chapter two",
    "again please",
    "with a diagram",
    "in humans",
    "at high temperature",
    "under a microscope",
    "in bacteria",
    "in the lab",
    "and why it matters",
]
KIND_WEIGHTS = [
    ("question", 0.36),
    ("answer", 0.36),
    ("check", 0.18),
    ("quiz", 0.04),
    ("taught", 0.01),
    ("file", 0.01),
    ("consolidation", 0.04),
]
VERDICTS = ["right", "wrong", "partial"]
# Jitter added to each copy of a text's vector: cosine to the original stays ~0.99.
VECTOR_JITTER = 0.004
HISTORY_DAYS = 400
BENCH_ORG_SLUG = "bench"
COPY_BATCH = 20_000


@dataclass
class GeneratedScale:
    target_pair: Pair
    total_episodes: int
    pair_episodes: int
    pairs: int
    seconds: float


def _texts(kind: str, concept: str, detail: str, verdict: str) -> tuple[str, str]:
    lower = concept.lower()
    if kind == "question":
        return (f"What is {lower} {detail}?", f"Can you explain {lower} {detail}?")
    if kind == "answer":
        return (
            f"Explained {lower} {detail}",
            f"{concept} is a core idea of the cell; here it is explained {detail}.",
        )
    if kind == "check":
        return (f"Check on {lower}: {verdict}", f"The student was asked about {lower} {detail}.")
    if kind == "quiz":
        return (f"Quiz on {lower}: {verdict}", f"A short quiz on {lower}.")
    if kind == "taught":
        return (f"Taught: in our class {lower} is explained {detail}", "")
    if kind == "file":
        return (f"File about {lower} arrived", "")
    return (f"Day summary: worked on {lower} {detail}", "")


class TextPool:
    """Distinct (kind, concept, detail, verdict) texts with one real embedding each."""

    def __init__(self, *, rng: random.Random, size: int):
        self.items: list[tuple[str, str, str, str, str]] = []
        seen = set()
        kinds = [k for k, _ in KIND_WEIGHTS]
        weights = [w for _, w in KIND_WEIGHTS]
        attempts = 0
        while len(self.items) < size and attempts < size * 20:
            attempts += 1
            kind = rng.choices(kinds, weights)[0]
            concept = rng.choice(BENCH_CONCEPTS)
            detail = rng.choice(DETAILS)
            verdict = rng.choice(VERDICTS) if kind in ("check", "quiz") else ""
            key = (kind, concept, detail, verdict)
            if key in seen:
                continue
            seen.add(key)
            summary, text = _texts(kind, concept, detail, verdict)
            self.items.append((kind, concept, summary, text, verdict))
        texts = [indexing.episode_embedding_text(s, t) for _, _, s, t, _ in self.items]
        self.vectors = np.asarray(indexing.embed(texts), dtype=np.float32)
        self.documents = [
            indexing.search_document(s, t, c if k == "check" else "", [c], "en")
            for k, c, s, t, _ in self.items
        ]
        self.by_kind: dict[str, list[int]] = {}
        for i, item in enumerate(self.items):
            self.by_kind.setdefault(item[0], []).append(i)


def _reserve_ids(table: str, count: int) -> int:
    """Reserve `count` ids from the table's sequence; return the first."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
        sequence = cursor.fetchone()[0]
        cursor.execute("SELECT nextval(%s)", [sequence])
        first = cursor.fetchone()[0]
        cursor.execute("SELECT setval(%s, %s)", [sequence, first + count])
    return first


def _secondary_indexes(table: str) -> list[tuple[str, str]]:
    """Plain (non-constraint) indexes of a table, with their definitions."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT i.indexname, i.indexdef FROM pg_indexes i
            WHERE i.tablename = %s AND NOT EXISTS (
                SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)
            """,
            [table],
        )
        return list(cursor.fetchall())


def generate(
    *,
    total_episodes: int,
    pair_episodes: int,
    other_pair_size: int = 1000,
    text_pool_size: int = 4000,
    seed: int = 7,
    now: datetime | None = None,
    log=print,
) -> GeneratedScale:
    """Build a bench organization whose first pair holds `pair_episodes` episodes and
    whose other pairs bring the database's episode count up to `total_episodes`."""
    started = time.monotonic()
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    now = now or timezone.now()
    existing = Episode.objects.count()
    if Organization.objects.filter(slug=BENCH_ORG_SLUG).exists():
        raise RuntimeError("this database already holds a bench organization")
    org = Organization.objects.create(name="Bench school", slug=BENCH_ORG_SLUG)
    subject = Subject.objects.create(
        organization=org, external_id="bench-biology", name="Biology", language="en"
    )
    remaining = max(0, total_episodes - existing - pair_episodes)
    sizes = [pair_episodes]
    while remaining > 0:
        size = min(other_pair_size, remaining)
        sizes.append(size)
        remaining -= size
    students = Student.objects.bulk_create(
        [
            Student(organization=org, external_id=f"bench-student-{i}", timezone="UTC")
            for i in range(len(sizes))
        ]
    )
    pairs = Pair.objects.bulk_create([Pair(student=s, subject=subject) for s in students])
    log(f"{len(pairs)} pairs; embedding a pool of {text_pool_size} distinct texts …")
    pool = TextPool(rng=rng, size=text_pool_size)
    total_new = sum(sizes)
    first_id = _reserve_ids("memory_episode", total_new)
    dropped = _secondary_indexes("memory_episode") + _secondary_indexes("memory_episodeindex")
    with connection.cursor() as cursor:
        for name, _ in dropped:
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')
    log(f"dropped {len(dropped)} secondary indexes for the load")
    kinds = [k for k, _ in KIND_WEIGHTS]
    weights = [w for _, w in KIND_WEIGHTS]
    next_id = first_id
    loaded = 0
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE UNLOGGED TABLE IF NOT EXISTS bench_stage (episode_id bigint, pair_id bigint, "
            "occurred_at timestamptz, kind text, embedding vector, document text)"
        )
        cursor.execute("TRUNCATE bench_stage")
    raw = connection.connection
    from pgvector.psycopg import register_vector

    register_vector(raw)
    episode_columns = (
        "id, pair_id, seq, kind, summary, text, concepts, salience, occurred_at, recorded_at, "
        "topic, verdict, predicted_mastery, evidence, idempotency_key, prev_hash, hash"
    )
    pair_heads = []
    batch_e: list[tuple] = []
    batch_i: list[tuple] = []

    def flush():
        nonlocal batch_e, batch_i
        if not batch_e:
            return
        with raw.cursor() as cur:
            with cur.copy(f"COPY memory_episode ({episode_columns}) FROM STDIN") as copy:
                for row in batch_e:
                    copy.write_row(row)
            with cur.copy(
                "COPY bench_stage (episode_id, pair_id, occurred_at, kind, embedding, document) "
                "FROM STDIN WITH (FORMAT BINARY)"
            ) as copy:
                copy.set_types(["int8", "int8", "timestamptz", "text", "vector", "text"])
                for row in batch_i:
                    copy.write_row(row)
        batch_e, batch_i = [], []

    for pair, size in zip(pairs, sizes, strict=True):
        offsets = sorted(rng.uniform(0, HISTORY_DAYS * 86400) for _ in range(size))
        prev = GENESIS_HASH
        seq = 0
        for offset in reversed(offsets):
            occurred = now - timedelta(seconds=offset)
            kind = rng.choices(kinds, weights)[0]
            item_index = rng.choice(pool.by_kind[kind])
            _, concept, summary, text, verdict = pool.items[item_index]
            seq += 1
            evidence: dict = {}
            if kind == "answer":
                evidence = {"citations": [], "recalled_ids": []}
            if kind == "quiz" and verdict:
                evidence = {"score": {"right": 1.0, "wrong": 0.0, "partial": 0.5}[verdict]}
            episode = Episode(
                pk=next_id,
                pair_id=pair.pk,
                seq=seq,
                kind=kind,
                summary=summary,
                text=text,
                concepts=[concept],
                salience=salience_for(kind, verdict),
                occurred_at=occurred,
                recorded_at=occurred,
                topic=concept if kind == "check" else "",
                verdict=verdict,
                predicted_mastery=None,
                evidence=evidence,
                idempotency_key="",
            )
            episode.hash = episode_hash(fields_of(episode), prev)
            batch_e.append(
                (
                    next_id,
                    pair.pk,
                    seq,
                    kind,
                    summary,
                    text,
                    [concept],
                    episode.salience,
                    occurred,
                    occurred,
                    episode.topic,
                    verdict,
                    None,
                    json.dumps(evidence),
                    "",
                    prev,
                    episode.hash,
                )
            )
            vector = pool.vectors[item_index] + nprng.normal(0, VECTOR_JITTER, 512).astype(
                np.float32
            )
            vector /= np.linalg.norm(vector)
            batch_i.append((next_id, pair.pk, occurred, kind, vector, pool.documents[item_index]))
            prev = episode.hash
            next_id += 1
            loaded += 1
            if len(batch_e) >= COPY_BATCH:
                flush()
                log(f"  {loaded:,}/{total_new:,} episodes copied")
        pair_heads.append((pair.pk, seq, prev, now))
    flush()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE memory_pair SET head_seq=%s, head_hash=%s, last_episode_at=%s WHERE id=%s",
            [(s, h, t, p) for p, s, h, t in pair_heads],
        )
    log("moving vectors and search documents into the episode index …")
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_episodeindex (episode_id, pair_id, occurred_at, kind, embedding, "
            "embedding_model, search) SELECT episode_id, pair_id, occurred_at, kind, embedding, "
            "%s, to_tsvector('simple', document) FROM bench_stage",
            [indexing.embed_model_name()],
        )
        cursor.execute("DROP TABLE bench_stage")
        cursor.execute("SET maintenance_work_mem = '6GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 2")
        for name, definition in dropped:
            t = time.monotonic()
            cursor.execute(definition)
            log(f"  rebuilt {name} in {time.monotonic() - t:.0f} s")
        cursor.execute("ANALYZE memory_episode")
        cursor.execute("ANALYZE memory_episodeindex")
        cursor.execute("VACUUM memory_episodeindex") if not connection.in_atomic_block else None
    return GeneratedScale(
        target_pair=pairs[0],
        total_episodes=Episode.objects.count(),
        pair_episodes=pair_episodes,
        pairs=len(pairs),
        seconds=time.monotonic() - started,
    )


# Prerequisite edges of the bench map (concept builds on prerequisite).
BENCH_EDGES = [
    ("Osmosis", "Diffusion"),
    ("Osmosis", "Cell membrane"),
    ("Diffusion", "Cell membrane"),
    ("Active transport", "Cell membrane"),
    ("Active transport", "ATP"),
    ("Cellular respiration", "Mitochondria"),
    ("Cellular respiration", "Glycolysis"),
    ("Krebs cycle", "Mitochondria"),
    ("ATP", "Cellular respiration"),
    ("Photosynthesis", "Chloroplasts"),
    ("Translation", "Ribosomes"),
    ("Translation", "Transcription"),
    ("Transcription", "DNA replication"),
    ("DNA replication", "Nucleus"),
    ("Mitosis", "Chromosomes"),
    ("Meiosis", "Chromosomes"),
    ("Chromosomes", "Genes"),
    ("Enzymes", "Proteins"),
    ("Golgi apparatus", "Endoplasmic reticulum"),
    ("Lysosomes", "Golgi apparatus"),
    ("Eukaryotic cells", "Nucleus"),
    ("Homeostasis", "Cell membrane"),
]


def map_and_beliefs(*, subject: Subject, pair: Pair, log=print) -> None:
    """Give the bench subject its concept map and the measured pair its beliefs.

    The concept rows and edges are written directly (there is no file to read; the
    concept-map services then compute the derived numbers and the vectors), and the
    pair's beliefs come from the real re-derivation over its logged checks.
    """
    from beliefs.services import beliefs_rederive
    from concepts.models import Concept, Prerequisite
    from concepts.naming import concept_key
    from concepts.services import concepts_embed, map_recompute

    if Concept.objects.filter(subject=subject).exists():
        return
    by_name = {
        name: Concept.objects.create(
            subject=subject,
            name=name,
            key=concept_key(name),
            summary=f"{name}: what it is and how it works in the cell.",
            layer=Concept.Layer.FILE,
        )
        for name in BENCH_CONCEPTS
    }
    Prerequisite.objects.bulk_create(
        [
            Prerequisite(subject=subject, concept=by_name[a], prerequisite=by_name[b])
            for a, b in BENCH_EDGES
        ]
    )
    map_recompute(subject=subject)
    concepts_embed(subject=subject)
    started = time.monotonic()
    beliefs_rederive(pair=pair)
    log(f"map of {len(by_name)} concepts; beliefs re-derived in {time.monotonic() - started:.1f} s")
