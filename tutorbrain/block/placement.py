"""Prompt placement with the chat service's legacy assessment section (R-5.9).

The block goes first (the prompt's memory slot, before the material's passages); a
bridge note joins it to the legacy section; a legacy section that only says nothing is
recorded ("NO QUIZ ATTEMPTS recorded") is dropped when a memory block exists — a model
reads the first authoritative statement about a record and stops there, which is how
a student with 28 checks was told they had never tried a quiz.
"""

from __future__ import annotations

from typing import Any

from tutorbrain import language

BRIDGE_NOTE = (
    "The memory above is the record of this student's past work. The assessment section "
    "below comes from the quiz system only; where the two differ about what the student "
    "has done, the memory above is the record."
)


def assessment_says_only_nothing(section: str) -> bool:
    """True when every statement of the section says nothing is recorded.

    Header lines (ending with ':' and holding no statement) are skipped; the cue
    phrases are data (`nothing_recorded_cues` in tutorbrain/language/data).
    """
    statements = 0
    for raw in section.splitlines():
        line = raw.strip().strip("-*•#=").strip()
        if not line:
            continue
        if line.endswith(":") and language.find_cue(line, "nothing_recorded_cues") is None:
            continue
        statements += 1
        if language.find_cue(line, "nothing_recorded_cues") is None:
            return False
    return statements > 0


def prompt_place(*, block: str, legacy_assessment: str) -> dict[str, Any]:
    """The memory slot's parts in order, and whether the legacy section was dropped."""
    legacy = (legacy_assessment or "").strip()
    parts: list[dict[str, str]] = [{"role": "memory_block", "text": block}]
    dropped = bool(block) and (not legacy or assessment_says_only_nothing(legacy))
    if legacy and not dropped:
        parts.append({"role": "bridge", "text": BRIDGE_NOTE})
        parts.append({"role": "assessment", "text": legacy})
    return {
        "parts": parts,
        "assessment_dropped": dropped and bool(legacy),
        "text": "\n\n".join(p["text"] for p in parts),
    }
