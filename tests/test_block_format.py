"""The block's format and budget (SPEC R-5.8), token counting and time windows (R-5.5)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tutorbrain import language
from tutorbrain.block import format as fmt
from tutorbrain.block.message import is_narration, read_message
from tutorbrain.block.placement import assessment_says_only_nothing
from tutorbrain.block.timewindow import parse_time_window
from tutorbrain.block.tokens import count_tokens, truncate_to_tokens

NOW = datetime(2026, 9, 20, 12, 0, tzinfo=UTC)
ZONE = ZoneInfo("Europe/Madrid")
LIMITS = "Confidence figures are a ranking, not a probability."

texts = st.text(
    alphabet=st.sampled_from(list("abcdefghij klmnop ÁéüñçØ مرحبا 0123 ,.;:!?-\n")),
    min_size=1,
    max_size=400,
)


def parts(*, mode="ordinary", beliefs=(), episodes=(), map_lines=(), window=None, empty=False):
    return fmt.BlockParts(
        mode=mode,
        limits_sentence=LIMITS,
        beliefs=list(beliefs),
        episodes=list(episodes),
        episode_groups=[list(episodes)] if episodes else [],
        map_count=len(map_lines),
        map_readiness=0.79,
        map_lines=list(map_lines),
        window_label=window,
        window_empty=empty,
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    budget=st.integers(min_value=0, max_value=2500),
    mode=st.sampled_from(["ordinary", "history"]),
    belief_confidences=st.lists(st.floats(min_value=0, max_value=1), max_size=30),
    summaries=st.lists(texts, max_size=60),
    repeats=st.integers(min_value=0, max_value=40),
    map_summaries=st.lists(texts, max_size=40),
    window=st.sampled_from([None, "July 2026"]),
)
def test_the_block_never_exceeds_its_budget(
    budget, mode, belief_confidences, summaries, repeats, map_summaries, window
):
    block_parts = parts(
        mode=mode,
        beliefs=[
            fmt.BeliefLine("struggles with", f"Concept {i}", c, p_right=1 - c)
            for i, c in enumerate(belief_confidences)
        ],
        episodes=[
            fmt.EpisodeLine(
                id=i,
                kind=["question", "answer", "check", "quiz", "taught"][i % 5],
                summary=s,
                occurred_at=NOW - timedelta(days=i * 7),
                verdict="wrong" if i % 5 == 2 else "",
                repeats=repeats if i % 3 == 0 else 0,
                stale_citation=i % 4 == 1,
            )
            for i, s in enumerate(summaries)
        ],
        map_lines=[
            fmt.MapLine(name=f"Concept {i}", summary=s, taught_note=None, builds_on=["Cell"])
            for i, s in enumerate(map_summaries)
        ],
        window=window,
    )
    minimum = fmt.frame_tokens(block_parts)
    if budget < minimum:
        with pytest.raises(fmt.BudgetTooSmall) as error:
            fmt.block_format(block_parts, budget=budget, zone=ZONE, now=NOW)
        assert error.value.minimum == minimum
        return
    block = fmt.block_format(block_parts, budget=budget, zone=ZONE, now=NOW)
    assert block.tokens == count_tokens(block.text) <= budget
    assert block.text.startswith(fmt.FRAME_TOP) and block.text.endswith(fmt.FRAME_END)
    assert LIMITS in block.text


def test_beliefs_come_before_episodes_in_the_budget():
    block_parts = parts(
        beliefs=[fmt.BeliefLine("understands", "Cytoplasm", 0.72, p_right=0.72)],
        episodes=[
            fmt.EpisodeLine(i, "question", "A long question " * 5, NOW - timedelta(days=i))
            for i in range(50)
        ],
    )
    budget = fmt.frame_tokens(block_parts) + 80

    block = fmt.block_format(block_parts, budget=budget, zone=ZONE, now=NOW)

    assert "- understands Cytoplasm (0.72, p_right 0.72)" in block.text
    assert "EARLIER WORK" not in block.text


def test_episodes_are_listed_oldest_first_whatever_their_rank():
    lines = [
        fmt.EpisodeLine(1, "question", "newest but best", NOW - timedelta(days=1)),
        fmt.EpisodeLine(2, "question", "oldest", NOW - timedelta(days=100)),
    ]

    block = fmt.block_format(parts(episodes=lines), budget=900, zone=ZONE, now=NOW)

    assert block.text.index("oldest") < block.text.index("newest but best")
    assert [e.id for e in block.episodes] == [2, 1]


def test_map_lines_fill_by_centrality_with_the_r26_header():
    lines = [fmt.MapLine(f"C{i}", "s", None, []) for i in range(100)]
    block_parts = parts(map_lines=lines)
    block_parts.map_count = 16

    block = fmt.block_format(block_parts, budget=300, zone=ZONE, now=NOW)

    assert (
        "SUBJECT MAP (16 concepts; readiness of the material 79%, from its files, checks and "
        "teaching; NOT the student's mastery):"
    ) in block.text
    shown = [li for li in block.text.splitlines() if li.startswith("- C")]
    assert shown == [f"- C{i}: s" for i in range(len(shown))]
    assert 0 < len(shown) < 100


def test_a_taught_note_and_prerequisites_are_on_the_map_line():
    line = fmt.MapLine("Mitochondria", "Makes ATP", "the powerhouse of the cell", ["Cytoplasm"])

    assert line.render() == (
        "- Mitochondria: Makes ATP [taught: the powerhouse of the cell] (builds on: Cytoplasm)"
    )


def test_a_too_long_map_line_is_cut_in_its_summary_and_note_never_in_its_prerequisites():
    line = fmt.MapLine(
        "Mitochondria",
        "Mitochondria: organelles that release the energy of glucose as ATP.",
        "remember that in our class we call the mitochondria the powerhouse " * 3,
        ["Organelles", "ATP", "Glucose", "Cellular respiration"],
    )

    text = line.render()

    assert count_tokens(text) <= fmt.LINE_MAX_TOKENS
    assert text.startswith("- Mitochondria: organelles")  # the repeated name is dropped
    assert "the powerhouse…] (builds on: Organelles, ATP, Glucose, Cellular respiration)" in text
    assert text.endswith("(builds on: Organelles, ATP, Glucose, Cellular respiration)")


def test_the_episode_line_shows_date_kind_repeats_and_stale_label():
    line = fmt.EpisodeLine(
        7,
        "check",
        "Check on cytoplasm",
        datetime(2026, 9, 18, 10, tzinfo=UTC),
        verdict="right",
        repeats=3,
        stale_citation=True,
    )

    assert line.render(zone=ZONE, now=NOW) == (
        "- 18 Sep · check: Check on cytoplasm: right (and 3 more times like it) "
        "[note: the file this cited has since been replaced or removed]"
    )


def test_an_empty_window_says_so_and_lists_no_session():
    block_parts = parts(
        episodes=[fmt.EpisodeLine(1, "question", "x", NOW)], window="July 2026", empty=True
    )

    block = fmt.block_format(block_parts, budget=900, zone=ZONE, now=NOW)

    assert "No record of work with this student in July 2026." in block.text
    assert "EARLIER WORK" not in block.text


# ---- token counting ------------------------------------------------------------------------


def test_token_counting_is_additive_over_lines_and_leans_high():
    assert count_tokens("") == 0
    assert count_tokens("cell") == 1
    assert count_tokens("mitochondria") == 3
    assert count_tokens("a\nb") == count_tokens("a") + 1 + count_tokens("b")
    assert count_tokens("ماذا أخطأت") == 5  # 4 + 5 letters, 2 per token


@given(text=texts, limit=st.integers(min_value=0, max_value=200))
def test_truncation_never_exceeds_its_limit(text, limit):
    cut = truncate_to_tokens(text, limit)
    assert count_tokens(cut) <= limit or cut == ""
    if count_tokens(text) <= limit:
        assert cut == text


# ---- time windows and message reading ------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "label"),
    [
        ("What did we see in July?", "July 2026"),
        ("¿Qué vimos en julio?", "July 2026"),
        ("o que vimos em julho?", "July 2026"),
        ("qu'avons-nous vu en juillet ?", "July 2026"),
        ("ماذا درسنا في يوليو", "July 2026"),
        ("What did we do in December?", "December 2025"),  # not in the future
        ("what about July 2025", "July 2025"),
        ("what did we do yesterday", "19 September 2026"),
        ("¿qué hicimos ayer?", "19 September 2026"),
        ("o que fizemos ontem?", "19 September 2026"),
        ("qu'avons-nous fait hier ?", "19 September 2026"),
        ("ماذا فعلنا أمس", "19 September 2026"),
        ("what did we do last week", "the week of 7 September 2026"),
        ("la semana pasada", "the week of 7 September 2026"),
        ("what did we do last month", "August 2026"),
        ("le mois dernier", "August 2026"),
        ("الشهر الماضي", "August 2026"),
    ],
)
def test_time_windows_are_parsed_in_five_languages(message, label):
    window = parse_time_window(message, now=NOW, timezone_name="Europe/Madrid")

    assert window is not None and window.label == label


def test_may_as_a_verb_is_not_a_month_but_in_may_is():
    assert parse_time_window("May I ask a question?", now=NOW, timezone_name="UTC") is None
    assert parse_time_window("what did we do in May", now=NOW, timezone_name="UTC").label == (
        "May 2026"
    )


def test_yesterday_is_the_students_yesterday():
    late = datetime(2026, 9, 20, 23, 30, tzinfo=UTC)  # already 21 Sep in Madrid

    window = parse_time_window("yesterday", now=late, timezone_name="Europe/Madrid")

    assert window.label == "20 September 2026"
    assert window.start == datetime(2026, 9, 19, 22, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "message",
    [
        "What did I get wrong so far?",
        "ماذا أخطأت",
        "¿En qué me equivoqué?",
        "o que eu errei?",
        "qu'est-ce que j'ai raté ?",
        "What have we studied?",
    ],
)
def test_history_questions_are_detected_in_five_languages(message):
    assert read_message(message).history is True


def test_an_ordinary_question_is_not_a_history_question_and_keeps_its_topic_words():
    reading = read_message("Can you explain the Krebs cycle again?")

    assert reading.history is False
    # Terms are Snowball stems, as the search documents hold them.
    assert reading.terms == tuple(language.index_terms("Krebs cycle", "en")) == ("kreb", "cycl")


def test_cue_and_month_words_are_not_topic_words():
    # Topic terms are Snowball stems ("osmosis" -> "osmosi"), as the documents hold them.
    assert read_message("What did we see in July about osmosis?").terms == ("osmosi",)
    assert read_message("¿Qué vimos en julio?").terms == ()


def test_narrations_are_recognised_by_their_cues():
    assert is_narration("In July we saw osmosis and the cell membrane.")
    assert is_narration("En julio vimos la ósmosis.")
    assert not is_narration("Osmosis is the movement of water across a membrane.")


def test_a_legacy_section_that_only_says_nothing_is_recorded_is_recognised():
    assert assessment_says_only_nothing("ASSESSMENT:\nNO QUIZ ATTEMPTS recorded")
    assert not assessment_says_only_nothing("ASSESSMENT:\nQuiz 1: 4/5\nNO QUIZ ATTEMPTS on unit 2")
    assert not assessment_says_only_nothing("")
