"""The nightly cycle's product rules, as named constants (R-7)."""

from __future__ import annotations

# "calibrated" only from this many checks with a predicted mastery (5 yes, 4 no).
CALIBRATION_MIN_PREDICTIONS = 5
# ... and only while the expected calibration error is at most this: a figure that runs
# 0.26 off its outcomes is no probability, however many checks measured it.
CALIBRATION_MAX_ECE = 0.10
# Equal-width bins of predicted mastery over [0, 1]; the last bin includes 1.0.
CALIBRATION_BINS = 10
# A verdict as an outcome in [0, 1]: a partial answer counts as half right.
VERDICT_OUTCOME = {"right": 1.0, "partial": 0.5, "wrong": 0.0}

# the consolidation note lists this many of the day's most salient headlines.
CONSOLIDATION_HEADLINES = 5
# ... and at most this many topics, so the summary line stays readable.
CONSOLIDATION_TOPICS_MAX = 8

# How the note names the kinds it counts (singular, plural).
KIND_NOUNS = {
    "question": ("question", "questions"),
    "answer": ("answer", "answers"),
    "check": ("check", "checks"),
    "quiz": ("quiz", "quizzes"),
    "file": ("file", "files"),
    "taught": ("taught note", "taught notes"),
}

# how many examples of unlinkable checks / unanswerable questions the self-model keeps.
SELF_MODEL_EXAMPLES = 5

# The steps of one pair's cycle, in order. Each is recorded in NightlyRun.steps_done.
STEP_CONSOLIDATE = "consolidate"
STEP_DECAY = "decay"
STEP_CALIBRATE = "calibrate"
STEP_VERIFY = "verify"
STEP_WORKING_SET = "working_set"
STEP_SELF_MODEL = "self_model"
STEPS = (
    STEP_CONSOLIDATE,
    STEP_DECAY,
    STEP_CALIBRATE,
    STEP_VERIFY,
    STEP_WORKING_SET,
    STEP_SELF_MODEL,
)
