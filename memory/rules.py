"""The episode log's product rules, as named constants (R-1.3)."""

from __future__ import annotations

# Salience is fixed at write time by what happened, never by the mood of the text.
# The spec fixes four points; the rest follow the same idea: what the student did or
# asked to keep outranks what the tutor said, and a miss outranks a success.
SALIENCE_TAUGHT = 0.85  # the only memory a person explicitly asked to keep
SALIENCE_CHECK_WRONG = 0.70
SALIENCE_CHECK_PARTIAL = 0.65
SALIENCE_CHECK_RIGHT = 0.60
SALIENCE_QUIZ_WRONG = 0.65  # a quiz is a weaker signal than a targeted check
SALIENCE_QUIZ_PARTIAL = 0.58
SALIENCE_QUIZ_RIGHT = 0.55
SALIENCE_CONSOLIDATION = 0.50  # a day's summary: useful context, never a primary memory
SALIENCE_FILE = 0.40  # the material arrived; the map carries its content
SALIENCE_QUESTION = 0.35
SALIENCE_ANSWER = 0.30  # the tutor's own words rank below the student's

SALIENCE_BY_VERDICT = {
    "check": {
        "right": SALIENCE_CHECK_RIGHT,
        "partial": SALIENCE_CHECK_PARTIAL,
        "wrong": SALIENCE_CHECK_WRONG,
    },
    "quiz": {
        "right": SALIENCE_QUIZ_RIGHT,
        "partial": SALIENCE_QUIZ_PARTIAL,
        "wrong": SALIENCE_QUIZ_WRONG,
    },
}
SALIENCE_BY_KIND = {
    "question": SALIENCE_QUESTION,
    "answer": SALIENCE_ANSWER,
    "file": SALIENCE_FILE,
    "taught": SALIENCE_TAUGHT,
    "consolidation": SALIENCE_CONSOLIDATION,
    # A quiz reported without a verdict (e.g. only a score) is weighed as partial.
    "quiz": SALIENCE_QUIZ_PARTIAL,
}

SUMMARY_MAX_CHARS = 300
CONCEPTS_MAX = 50
CONCEPT_NAME_MAX_CHARS = 200
TOPIC_MAX_CHARS = 300


def salience_for(kind: str, verdict: str) -> float:
    by_verdict = SALIENCE_BY_VERDICT.get(kind)
    if by_verdict and verdict in by_verdict:
        return by_verdict[verdict]
    return SALIENCE_BY_KIND[kind]


IDEMPOTENCY_KEY_MAX_CHARS = 200
# A chat history starts after this year; it also keeps every timestamp a 4-digit year,
# which the canonical serialisation (and its PostgreSQL twin in verification) assume.
OCCURRED_AT_MIN_YEAR = 1970
CITATIONS_MAX = 50
RECALLED_IDS_MAX = 200
# Evidence keys the service writes itself; an event's `extra` may not shadow them.
RESERVED_EVIDENCE_KEYS = frozenset({"citations", "recalled_ids", "assessment", "score"})
