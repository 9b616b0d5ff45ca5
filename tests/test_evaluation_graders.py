"""The benchmark's graders on hand-made blocks: id and string comparisons (R-8.2, R-8.3)."""

from __future__ import annotations

from datetime import UTC, datetime

from tutorbrain.evaluation.graders import Recalled, Shown, grade

JULY_15 = datetime(2026, 7, 15, 10, 0, tzinfo=UTC)
SEPT_18 = datetime(2026, 9, 18, 10, 0, tzinfo=UTC)

FRAME_TOP = "===== YOUR MEMORY OF THIS STUDENT AND SUBJECT ====="
FRAME_END = "===== END OF MEMORY ====="


def block(*lines: str) -> str:
    return "\n".join([FRAME_TOP, *lines, FRAME_END])


def test_a_block_that_lists_a_july_session_for_an_empty_july_fails():
    shown = Shown(
        text=block(
            "No record of work with this student in July 2026.",
            "EARLIER WORK WITH THIS STUDENT (oldest first):",
            "- 12 Jul · you were asked: Can we go over Eukaryotic Cells today?",
        )
    )
    result = grade("empty_month", shown, {"year": 2026, "month": 7})
    assert not result.passed
    assert "12 Jul" in result.held


def test_a_block_that_recalls_a_july_episode_for_an_empty_july_fails_even_without_a_dated_line():
    shown = Shown(
        text=block("No record of work with this student in July 2026."),
        recalled=(Recalled(id=41, occurred_at=JULY_15),),
    )
    assert not grade("empty_month", shown, {"year": 2026, "month": 7}).passed


def test_an_empty_july_passes_only_with_the_explicit_no_record_line_and_no_session():
    honest = Shown(
        text=block(
            "No record of work with this student in July 2026.",
            "EARLIER WORK WITH THIS STUDENT (oldest first):",
            "- 18 Sep · check: Check on cytoplasm: right",
        ),
        recalled=(Recalled(id=7, occurred_at=SEPT_18),),
    )
    silent = Shown(text=block("EARLIER WORK WITH THIS STUDENT (oldest first):"))
    assert grade("empty_month", honest, {"year": 2026, "month": 7}).passed
    assert not grade("empty_month", silent, {"year": 2026, "month": 7}).passed


def test_the_no_record_line_for_another_month_does_not_count():
    shown = Shown(text=block("No record of work with this student in August 2026."))
    assert not grade("empty_month", shown, {"year": 2026, "month": 7}).passed


def test_a_prerequisite_answer_with_the_edge_reversed_fails():
    reversed_edge = Shown(
        text=block(
            "SUBJECT MAP (3 concepts; …):",
            "- Cytoplasm: the fluid inside the cell (builds on: Mitochondria)",
            "- Mitochondria: organelles that release energy",
        )
    )
    right_way = Shown(
        text=block(
            "SUBJECT MAP (3 concepts; …):",
            "- Mitochondria: organelles that release energy (builds on: Cytoplasm, Respiration)",
        )
    )
    expected = {"concept": "Mitochondria", "prerequisites": ["Cytoplasm", "Respiration"]}
    assert not grade("prerequisites", reversed_edge, expected).passed
    assert grade("prerequisites", right_way, expected).passed


def test_a_prerequisite_answer_missing_one_prerequisite_fails():
    shown = Shown(
        text=block("- Mitochondria: organelles [taught: powerhouse] (builds on: Cytoplasm)")
    )
    expected = {"concept": "Mitochondria", "prerequisites": ["Cytoplasm", "Respiration"]}
    result = grade("prerequisites", shown, expected)
    assert not result.passed
    assert "cytoplasm" in result.held


def test_prerequisite_names_compare_without_accents_or_case():
    shown = Shown(text=block("- Molécula: um grupo (builds on: átomo, LIGAÇÃO QUÍMICA)"))
    expected = {"concept": "Molécula", "prerequisites": ["Átomo", "Ligação química"]}
    assert grade("prerequisites", shown, expected).passed


def test_what_the_student_got_wrong_passes_by_a_recalled_wrong_check_id():
    shown = Shown(
        text=block("- 3 Mar · check: Check on Osmosis: wrong"), recalled=(Recalled(9, JULY_15),)
    )
    assert grade("wrong", shown, {"concept": "Osmosis", "episode_ids": [9, 12]}).passed
    assert not grade("wrong", shown, {"concept": "Osmosis", "episode_ids": [12]}).passed


def test_what_the_student_got_wrong_passes_by_a_struggles_belief_line_on_that_exact_concept():
    shown = Shown(
        text=block("WHAT YOU CURRENTLY BELIEVE …:", "- struggles with Cell membrane (0.64)")
    )
    assert grade("wrong", shown, {"concept": "Cell membrane", "episode_ids": []}).passed
    # a longer name that starts with the concept's name is another concept
    assert not grade("wrong", shown, {"concept": "Cell", "episode_ids": []}).passed
    understands = Shown(text=block("- understands Cell membrane (0.64)"))
    assert not grade("wrong", understands, {"concept": "Cell membrane", "episode_ids": []}).passed


def test_explain_passes_only_when_a_definition_is_in_the_prompt():
    definition = "Osmosis is the Diffusion of water through the Cell membrane."
    shown = Shown(
        text=block("- Osmosis: osmosis is the diffusion of water through the cell membrane.")
    )
    assert grade("explain", shown, {"concept": "Osmosis", "definitions": [definition]}).passed
    other = Shown(text=block("- Osmosis: water moves"))
    assert not grade("explain", other, {"concept": "Osmosis", "definitions": [definition]}).passed


def test_an_active_month_fails_only_when_the_prompt_denies_it():
    denial = Shown(text=block("No record of work with this student in September 2026."))
    nothing = Shown(text="")
    assert not grade("active_month", denial, {"year": 2026, "month": 9}).passed
    assert grade("active_month", nothing, {"year": 2026, "month": 9}).passed


def test_recall_of_a_past_exchange_is_graded_on_ids_not_on_wording():
    worded = Shown(text=block("- 12 Jul · you were asked: What is osmosis?"))
    by_id = Shown(text="", recalled=(Recalled(31, JULY_15),))
    assert not grade("recall", worded, {"episode_ids": [30, 31]}).passed
    assert grade("recall", by_id, {"episode_ids": [30, 31]}).passed


def test_the_same_prompt_always_scores_the_same():
    shown = Shown(text=block("- struggles with Osmosis (0.7)"), recalled=(Recalled(3, JULY_15),))
    expected = {"concept": "Osmosis", "episode_ids": [3]}
    assert grade("wrong", shown, expected) == grade("wrong", shown, expected)
