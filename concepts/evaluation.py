"""Extraction quality against a hand-labelled gold map: precision and recall.

A map concept matches a gold concept when its key, or one of its merged names' keys,
equals the key of the gold name or of one of the gold aliases. An edge matches when
both ends match and the direction agrees. A gold concept matched by two map nodes
counts once (the second node is a duplicate: a precision loss).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from concepts.naming import concept_key


@dataclass(frozen=True)
class Score:
    precision: float
    recall: float
    true_positives: int
    predicted: int
    gold: int

    def line(self, label: str) -> str:
        return (
            f"{label}: precision {self.precision:.2f} ({self.true_positives}/{self.predicted}), "
            f"recall {self.recall:.2f} ({self.true_positives}/{self.gold})"
        )


@dataclass(frozen=True)
class Evaluation:
    concepts: Score
    edges: Score
    unmatched_predicted: list[str]
    missed_gold: list[str]
    wrong_edges: list[str]
    missed_edges: list[str]


def _score(tp: int, predicted: int, gold: int) -> Score:
    return Score(
        precision=tp / predicted if predicted else 0.0,
        recall=tp / gold if gold else 0.0,
        true_positives=tp,
        predicted=predicted,
        gold=gold,
    )


def load_gold(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def evaluate(
    *,
    gold: dict,
    concepts: list[tuple[str, list[str]]],
    edges: list[tuple[str, str]],
) -> Evaluation:
    """`concepts`: (name, alias keys) of the map; `edges`: (concept name, prerequisite name)."""
    gold_of_key: dict[str, str] = {}
    for entry in gold["concepts"]:
        for name in [entry["name"], *entry.get("aliases", [])]:
            gold_of_key[concept_key(name)] = entry["name"]
    matched: dict[str, str] = {}  # map name -> gold name
    used_gold: set[str] = set()
    unmatched: list[str] = []
    tp = 0
    for name, aliases in concepts:
        hit = next(
            (gold_of_key[k] for k in [concept_key(name), *aliases] if k in gold_of_key), None
        )
        if hit is None:
            unmatched.append(name)
            continue
        matched[name] = hit
        if hit not in used_gold:
            used_gold.add(hit)
            tp += 1
        else:
            unmatched.append(f"{name} (duplicate of {hit})")
    gold_names = [entry["name"] for entry in gold["concepts"]]
    concept_score = _score(tp, len(concepts), len(gold_names))

    gold_edges = {(a, b) for a, b in gold["edges"]}
    predicted_edges: set[tuple[str, str]] = set()
    wrong: list[str] = []
    for concept, prerequisite in edges:
        start, end = matched.get(concept), matched.get(prerequisite)
        if start is None or end is None:
            wrong.append(f"{concept} -> {prerequisite}")
            predicted_edges.add((f"?{concept}", f"?{prerequisite}"))
            continue
        pair = (start, end)
        predicted_edges.add(pair)
        if pair not in gold_edges:
            wrong.append(f"{concept} -> {prerequisite}")
    edge_tp = len(predicted_edges & gold_edges)
    edge_score = _score(edge_tp, len(predicted_edges), len(gold_edges))
    return Evaluation(
        concepts=concept_score,
        edges=edge_score,
        unmatched_predicted=unmatched,
        missed_gold=[g for g in gold_names if g not in used_gold],
        wrong_edges=sorted(wrong),
        missed_edges=sorted(f"{a} -> {b}" for a, b in gold_edges - predicted_edges),
    )
