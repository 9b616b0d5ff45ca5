"""Routing a message to a concept by the words that describe it (docs/memory-block.md).

A message names a concept ("How does osmosis work?") or asks about what the concept
*describes* ("Why does a cell burst in pure water?" after a teacher taught Osmosis with
"water moves across the membrane toward the side with more dissolved particles, so a
cell in pure water takes in water until it bursts"). Name matching and the name's
embedding catch the first; this module catches the second, with words and no model:
each concept's description — its name, its definition (the summary when there is none)
and its latest taught note — is stemmed as the episodes' search documents are
(`language.document_terms`), and the message's topic terms are scored against those
descriptions with BM25. Rare words weigh: "water" in a cell-biology map is in three
descriptions and many times in Osmosis's, "cell" is in nearly every one and says little.

The descriptions of a subject are read once per map version (one query, only on a
miss) and kept per process; the version is read with the routing rows in the build's
lookup query, so a warm build pays no extra query.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from tutorbrain import language
from tutorbrain.block.versioned import ByMapVersion

# BM25's usual constants: term-frequency saturation and length normalisation.
BM25_K1 = 1.2
BM25_B = 0.75
# Calibrated on two maps (the sample cell-biology subject, 17 concepts, Osmosis taught;
# the first 14 sections of the anatomy dev set, 126 concepts) with 22 on-topic questions
# that do not name the concept they are about and 591 off-topic real messages (LoCoMo
# questions and turns, hand-written small talk): docs/memory-block.md, "Routing by what
# a concept's description says". Words alone route one off-topic message in six ("What
# do Melanie's kids like?" shares "like" with "jelly-like"), so a route needs all three:
# - the message is about this subject at all: its embedding is at least TOPICAL_MIN
#   from some concept's name (on-topic questions 0.23–0.53; off-topic: 99 % below 0.21
#   on the cell map, below 0.29 on the anatomy one);
# - the best concept's score is at least MIN_SHARE of what the message's words that
#   occur in some description could score at most;
# - it leads the runner-up by MARGIN (two concepts described alike are a guess).
TOPICAL_MIN = 0.25
MIN_SHARE = 0.30
MARGIN = 1.4
# Subjects whose descriptions a process keeps (least recently used dropped first).
CACHE_SUBJECTS = 64
# Description texts whose stems a process keeps across map versions (~1-2 KB each:
# twenty 1,000-concept maps in at most a few tens of MB).
DESCRIPTIONS_REMEMBERED = 20_000


@dataclass(frozen=True)
class DescriptionIndex:
    """BM25 statistics of one subject's concept descriptions, keyed by concept key."""

    postings: dict[str, list[tuple[str, int]]]  # stem -> [(concept key, term frequency)]
    lengths: dict[str, int]  # concept key -> description length in terms
    average_length: float

    @property
    def size(self) -> int:
        return len(self.lengths)

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, ()))
        return math.log(1 + (self.size - df + 0.5) / (df + 0.5))

    def scores(self, terms: Sequence[str]) -> dict[str, float]:
        out: dict[str, float] = {}
        for term in dict.fromkeys(terms):
            posting = self.postings.get(term)
            if not posting:
                continue
            weight = self.idf(term)
            for key, tf in posting:
                norm = 1 - BM25_B + BM25_B * self.lengths[key] / self.average_length
                out[key] = out.get(key, 0.0) + weight * tf * (BM25_K1 + 1) / (tf + BM25_K1 * norm)
        return out

    def ceiling(self, terms: Sequence[str]) -> float:
        """The most the message's words that occur in some description could score: each
        such word at a saturated frequency in an average-length description."""
        return sum(
            self.idf(term) * (BM25_K1 + 1) for term in dict.fromkeys(terms) if term in self.postings
        )


def description_index_build(
    descriptions: Sequence[tuple[str, str]], *, subject_language: str
) -> DescriptionIndex:
    """`descriptions`: (concept key, text). Each text is read in its own language."""
    postings: dict[str, list[tuple[str, int]]] = {}
    lengths: dict[str, int] = {}
    for key, text in descriptions:
        terms = _description_terms(text, subject_language)
        lengths[key] = len(terms)
        counts: dict[str, int] = {}
        for term in terms:
            counts[term] = counts.get(term, 0) + 1
        for term, tf in counts.items():
            postings.setdefault(term, []).append((key, tf))
    average = (sum(lengths.values()) / len(lengths)) if lengths else 0.0
    return DescriptionIndex(postings=postings, lengths=lengths, average_length=max(average, 1.0))


@functools.lru_cache(maxsize=DESCRIPTIONS_REMEMBERED)
def _description_terms(text: str, subject_language: str) -> tuple[str, ...]:
    # A map changes a few descriptions at a time (a file read, a note taught) and the
    # whole index is rebuilt for the new version: unchanged descriptions are not read
    # again (reading one, its language detection most of all, is the costly part).
    return tuple(language.document_terms(text, subject_language))


def best_described(
    index: DescriptionIndex,
    terms: Sequence[str],
    *,
    topicality: float | None,
    exclude: Sequence[str] = (),
) -> str | None:
    """The key of the one concept the message's words describe clearly enough, or None.

    `topicality`: the message's highest cosine to a concept name of the subject (None
    without an embedding: no route). Clearly enough: see TOPICAL_MIN, MIN_SHARE and
    MARGIN. `exclude`: keys already routed (they neither win nor count as runner-up).
    """
    if not terms or index.size == 0 or topicality is None or topicality < TOPICAL_MIN:
        return None
    scores = index.scores(terms)
    for key in exclude:
        scores.pop(key, None)
    if not scores:
        return None
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    best_key, best = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
    ceiling = index.ceiling(terms)
    if ceiling <= 0 or best / ceiling < MIN_SHARE or best < MARGIN * runner_up:
        return None
    return best_key


def words_beyond_names(terms: Sequence[str], names: Sequence[str], code: str) -> list[str]:
    """The message's terms without the words of the concepts it names (same stemmer)."""
    taken = {t for name in names for t in language.index_terms(name, code)}
    return [t for t in terms if t not in taken]


# ---- the per-process cache, by map version ---------------------------------------------

indexes = ByMapVersion(CACHE_SUBJECTS)


def cache_clear() -> None:
    indexes.clear()
    _description_terms.cache_clear()
