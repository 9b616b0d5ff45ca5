"""Merging concepts across files (R-2.3): the key first, then embedding similarity.

Two names are one concept when

1. their canonical keys are equal ("Ósmosis" = "osmosis") or differ only by number, word
   by word ("Enzyme"/"Enzymes", "Study"/"Studies", "luz"/"luces"; `naming.same_but_number`), or
2. the cosine of their name embeddings reaches the embedder's calibrated threshold
   (`threshold`), or
3. they are spelling variants of each other (a character similarity of at least
   COGNATE_MIN_RATIO between the keys: "mitochondria"/"mitocondria") *and* their cosine
   reaches the embedder's lower, also calibrated, `cognate_threshold`.

Cosine scales differ between embedders, so both thresholds belong to one embedder and
are measured by `manage.py calibrate_merge_threshold` on the labelled pair set in
`concepts/data/merge_pairs.csv`; the result is kept in `concepts/data/merge_thresholds.json`
(see docs/concept-map.md for the measurement). With no calibration for the running
embedder, merging falls back to keys only: a missed merge duplicates a node, a wrong
merge destroys one, so the safe failure is chosen. For the same reason, names that differ
by a number, ordinal or letter ("One sigma rule"/"Two sigma rule", "G1 phase"/"G2 phase")
are never merged by their vectors, which barely see the difference (0.89-0.91 on the
multilingual USE); nor are names that share a word and differ otherwise ("goblet cell"/
"cell", "anterior cavity"/"posterior cavity"), nor (in `services`) two names of the same
language: on a real anatomy book the vectors merged 70 such pairs ("anaphase"/"prophase",
"osteoblast"/"osteoclast", "endocrine"/"exocrine gland") and cost 0.1 recall.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cache
from pathlib import Path

import numpy as np

from concepts.naming import differ_by_label, same_but_number, share_a_word

DATA_DIR = Path(__file__).resolve().parent / "data"
PAIRS_FILE = DATA_DIR / "merge_pairs.csv"
THRESHOLDS_FILE = DATA_DIR / "merge_thresholds.json"

# Keys this alike are spelling variants (cognates across Latin-script languages).
COGNATE_MIN_RATIO = 0.9
# Calibrated thresholds sit just above an observed cosine.
CALIBRATION_MARGIN = 0.001
# A wrong merge destroys a concept, a missed one only duplicates it: weigh it double.
FALSE_MERGE_COST = 2


@dataclass(frozen=True)
class Thresholds:
    threshold: float
    cognate_threshold: float


def spelling_ratio(key_a: str, key_b: str) -> float:
    return SequenceMatcher(None, key_a, key_b).ratio()


@cache
def _stored() -> dict[str, dict]:
    if not THRESHOLDS_FILE.exists():
        return {}
    return json.loads(THRESHOLDS_FILE.read_text(encoding="utf-8"))


def thresholds_for(model_name: str) -> Thresholds | None:
    """The calibrated thresholds of an embedder, or None (merge by key only)."""
    entry = _stored().get(model_name)
    if not entry:
        return None
    return Thresholds(float(entry["threshold"]), float(entry["cognate_threshold"]))


def same_concept(
    *, key_a: str, key_b: str, cosine: float | None, thresholds: Thresholds | None
) -> bool:
    if same_but_number(key_a, key_b):
        return True
    if cosine is None or thresholds is None or differ_by_label(key_a, key_b):
        return False
    if share_a_word(key_a, key_b):
        # "goblet cell"/"cell", "anterior cavity"/"posterior cavity", "true ribs"/"false
        # ribs": a name built on another's word is a kind or a sibling of it, not it.
        return False
    if cosine >= thresholds.threshold:
        return True
    return (
        cosine >= thresholds.cognate_threshold and spelling_ratio(key_a, key_b) >= COGNATE_MIN_RATIO
    )


def best_match(
    *,
    key: str,
    vector: np.ndarray | None,
    candidates: list[tuple[int, str, np.ndarray | None]],
    thresholds: Thresholds | None,
) -> int | None:
    """The id of the candidate (id, key, vector) that is the same concept, most similar first."""
    for candidate_id, candidate_key, _ in candidates:
        if candidate_key == key:
            return candidate_id
    for candidate_id, candidate_key, _ in candidates:
        if same_but_number(candidate_key, key):
            return candidate_id
    scored: list[tuple[float, int]] = []
    for candidate_id, candidate_key, candidate_vector in candidates:
        if vector is None or candidate_vector is None:
            continue
        cosine = float(np.dot(vector, candidate_vector))
        if same_concept(key_a=key, key_b=candidate_key, cosine=cosine, thresholds=thresholds):
            scored.append((cosine, candidate_id))
    return max(scored)[1] if scored else None


# ---- calibration ----------------------------------------------------------------------


@dataclass(frozen=True)
class LabelledPair:
    name_a: str
    name_b: str
    same: bool


def labelled_pairs(path: Path = PAIRS_FILE) -> list[LabelledPair]:
    with path.open(encoding="utf-8") as handle:
        rows = csv.DictReader(line for line in handle if not line.startswith("#"))
        return [
            LabelledPair(r["name_a"].strip(), r["name_b"].strip(), r["label"].strip() == "same")
            for r in rows
        ]


@dataclass(frozen=True)
class Calibration:
    model_name: str
    pairs: int
    same_pairs: int
    threshold: float
    cognate_threshold: float
    merged_same: int  # same pairs the rule merges (keys, embedding or cognate)
    merged_different: int  # different pairs the rule merges (false merges)
    highest_different: float
    scores: list[tuple[str, str, bool, float, float]]  # a, b, same, cosine, spelling ratio

    def as_json(self) -> dict:
        return {
            "threshold": round(self.threshold, 4),
            "cognate_threshold": round(self.cognate_threshold, 4),
            "cognate_min_ratio": COGNATE_MIN_RATIO,
            "pairs": self.pairs,
            "same_pairs": self.same_pairs,
            "merged_same": self.merged_same,
            "merged_different": self.merged_different,
            "highest_different_cosine": round(self.highest_different, 4),
        }


def calibrate(*, pairs: list[LabelledPair], embed, model_name: str) -> Calibration:
    """The thresholds that best separate the labelled pairs, a false merge costing double.

    Every pair of candidate values (each observed cosine + CALIBRATION_MARGIN) is tried
    for (threshold, cognate_threshold); the pair with the best score
    `merged same - FALSE_MERGE_COST x merged different` wins, ties going to the higher
    (safer) thresholds.
    """
    from concepts.naming import concept_key, vector_text

    vectors_a = embed([vector_text(p.name_a) for p in pairs])
    vectors_b = embed([vector_text(p.name_b) for p in pairs])
    scores = []
    keyed = []
    for pair, va, vb in zip(pairs, vectors_a, vectors_b, strict=True):
        key_a, key_b = concept_key(pair.name_a), concept_key(pair.name_b)
        ratio = spelling_ratio(key_a, key_b)
        cosine = float(np.dot(va, vb))
        scores.append((pair.name_a, pair.name_b, pair.same, cosine, ratio))
        keyed.append((key_a, key_b, pair.same, cosine))
    candidates = sorted({min(s[3] + CALIBRATION_MARGIN, 1.0) for s in scores} | {1.0})

    def outcome(thresholds: Thresholds) -> tuple[int, int]:
        same = different = 0
        for key_a, key_b, is_same, cosine in keyed:
            if same_concept(key_a=key_a, key_b=key_b, cosine=cosine, thresholds=thresholds):
                if is_same:
                    same += 1
                else:
                    different += 1
        return same, different

    best: tuple[tuple[int, float, float], Thresholds, tuple[int, int]] | None = None
    for threshold in candidates:
        for cognate in candidates:
            if cognate > threshold:
                break
            thresholds = Thresholds(threshold, cognate)
            merged_same, merged_different = outcome(thresholds)
            rank = (merged_same - FALSE_MERGE_COST * merged_different, threshold, cognate)
            if best is None or rank > best[0]:
                best = (rank, thresholds, (merged_same, merged_different))
    assert best is not None
    _, chosen, (merged_same, merged_different) = best
    return Calibration(
        model_name=model_name,
        pairs=len(scores),
        same_pairs=sum(1 for s in scores if s[2]),
        threshold=chosen.threshold,
        cognate_threshold=chosen.cognate_threshold,
        merged_same=merged_same,
        merged_different=merged_different,
        highest_different=max((s[3] for s in scores if not s[2]), default=0.0),
        scores=scores,
    )


def calibration_store(calibration: Calibration, path: Path = THRESHOLDS_FILE) -> None:
    stored = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    stored[calibration.model_name] = calibration.as_json()
    path.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    _stored.cache_clear()
