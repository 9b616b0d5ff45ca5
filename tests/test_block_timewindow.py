"""Time windows (SPEC R-5.5): months in the message's language, never inside a name;
an explicit month wins over "last week"; windows after `now` are ignored."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.services import episode_append
from tests.factories import PairFactory
from tutorbrain import language
from tutorbrain.block.build import memory_block_build
from tutorbrain.block.format import FUTURE_WINDOW_LINE
from tutorbrain.block.message import read_message
from tutorbrain.block.timewindow import parse_time_window

NOW = datetime(2026, 9, 20, 12, 0, tzinfo=UTC)


def window(message, *, now=NOW, fallback="en"):
    return parse_time_window(message, now=now, timezone_name="UTC", fallback_language=fallback)


def days(w):
    """The window as (first day, last day), both inclusive."""
    return w.start.date(), (w.end - timedelta(days=1)).date()


@pytest.mark.parametrize(
    ("message", "fallback"),
    [
        ("Quando fomos ao Rio de Janeiro?", "pt"),
        ("O que aprendemos no Rio de Janeiro", "pt"),
        ("On s'est retrouvés Avenue de Mai", "fr"),
        ("Rendez-vous place du Quatorze Juillet", "fr"),
        ("¿Qué dijo la Mayo Clinic sobre la diabetes?", "es"),
        ("¿Fuimos a la Plaza de Mayo?", "es"),
        ("Julio me explicó la ósmosis", "es"),
        ("Qu'est-ce qu'on a dit sur la planète Mars ?", "fr"),
        ("مارس الرياضة كل يوم", "ar"),
        ("What did Mayo Clinic say about it?", "en"),
        ("Tell me about the Fourth of July", "en"),
        ("May I ask a question about Marco Polo?", "en"),
    ],
)
def test_a_proper_name_containing_a_month_name_opens_no_window(message, fallback):
    assert window(message, fallback=fallback) is None


@pytest.mark.parametrize(
    ("message", "fallback"),
    [
        ("What did Mai say about osmosis?", "en"),  # French "mai" in an English message
        ("Did Marco explain the Krebs cycle?", "en"),  # Portuguese "março", folded
        ("What did Avril teach us?", "en"),
        ("Tell me about Juni and the cells", "en"),
    ],
)
def test_month_names_of_other_languages_open_no_window(message, fallback):
    assert window(message, fallback=fallback) is None


@pytest.mark.parametrize(
    ("message", "label"),
    [
        ("What did we see in July?", "July 2026"),
        ("In July we saw osmosis", "July 2026"),
        ("July was hard: what did we cover?", "July 2026"),
        ("In July Caroline went hiking, what did we see?", "July 2026"),
        ("¿Qué vimos en Julio?", "July 2026"),  # capitalised after "en": still the month
        ("En julio vimos la ósmosis", "July 2026"),
        ("Em julho estudamos a osmose", "July 2026"),
        ("En juillet, on a vu quoi ?", "July 2026"),
        ("QUE VIMOS EN JULIO", "July 2026"),
        ("ماذا مارسنا في مارس", "March 2026"),
        ("Qu'avons-nous vu en mars ?", "March 2026"),
    ],
)
def test_a_plain_or_sentence_initial_month_still_opens_its_window(message, label):
    w = window(message)

    assert w is not None and w.label == label


@pytest.mark.parametrize(
    "message",
    [
        "What did we do the last week of October 2023?",
        "¿Qué hicimos la última semana de octubre de 2023?",
        "O que fizemos na última semana de outubro de 2023?",
        "Qu'avons-nous fait la dernière semaine d'octobre 2023 ?",
        "ماذا فعلنا في الأسبوع الأخير من أكتوبر 2023",
    ],
)
def test_the_last_week_of_october_2023_is_octobers_last_week(message):
    w = window(message)

    assert days(w) == (date(2023, 10, 25), date(2023, 10, 31))
    assert w.label == "the last week of October 2023"


def test_an_explicit_month_wins_over_a_relative_phrase():
    assert window("last week, in May 2023, what did we see?").label == "May 2023"
    assert window("la semana pasada de marzo de 2024").label == "March 2024"


def test_a_month_with_a_year_is_that_year_and_without_one_the_latest_past_one():
    assert window("What did we do in May 2023?").label == "May 2023"
    assert window("What did we do in May?").label == "May 2026"
    assert window("What did we do in December?").label == "December 2025"
    assert window("qu'avons-nous vu en décembre 2024 ?").label == "December 2024"


def test_a_stated_day_opens_its_month():
    # The day someone mentions is often the day of the event, not of the conversation
    # that tells it: the month holds both, and the ranking orders inside it.
    assert window("What did Nate do on 25 May, 2022?").label == "May 2022"
    assert window("¿Qué hicimos el 9 de junio de 2023?").label == "June 2023"


def test_a_relative_phrase_is_anchored_on_the_day_the_message_states():
    week = window("Where was Tim in the week before 16 November 2023?")
    told = window("What was his writing issue last week, as mentioned on November 6, 2023?")
    day = window("What did we do the day before 9 June 2023?")

    # From the start of that period, counted from the stated day, to the end of the day.
    assert days(week) == (date(2023, 11, 6), date(2023, 11, 16))
    assert days(told) == (date(2023, 10, 30), date(2023, 11, 6))
    assert days(day) == (date(2023, 6, 8), date(2023, 6, 9))
    assert day.label == "8 June 2023 to 9 June 2023"
    assert window("¿qué vimos la semana anterior al 9 de junio de 2023?").start.date() == date(
        2023, 5, 29
    )


@pytest.mark.parametrize(
    ("message", "fallback", "first"),
    [
        ("What did we do the week before 9 June 2023?", "en", date(2023, 5, 29)),
        ("¿qué hicimos la semana anterior al 9 de junio de 2023?", "es", date(2023, 5, 29)),
        ("o que vimos na semana anterior a 9 de junho de 2023?", "pt", date(2023, 5, 29)),
        ("qu'avons-nous vu la semaine précédente, le 9 juin 2023 ?", "fr", date(2023, 5, 29)),
        ("ماذا فعلنا في الأسبوع السابق 9 يونيو 2023", "ar", date(2023, 5, 29)),
        ("¿qué hicimos el día anterior al 9 de junio de 2023?", "es", date(2023, 6, 8)),
        ("o que fizemos no dia anterior a 9 de junho de 2023", "pt", date(2023, 6, 8)),
        ("qu'a-t-on fait la veille du 9 juin 2023 ?", "fr", date(2023, 6, 8)),
    ],
)
def test_anchored_windows_in_five_languages_end_with_the_stated_day(message, fallback, first):
    assert days(window(message, fallback=fallback)) == (first, date(2023, 6, 9))


@given(
    message=st.text(
        alphabet=st.sampled_from(list("abcdeijlmnortuyJMO 0123456789,.'?¿ semainjuly")),
        max_size=60,
    )
    | st.sampled_from(["last month", "yesterday", "in December", "the week before 1 January 1"]),
    now=st.datetimes(
        min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(UTC)
    ),
    zone=st.sampled_from(["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Europe/Madrid"]),
)
@settings(max_examples=300, deadline=None)
def test_parsing_never_fails_whatever_the_message_and_now(message, now, zone):
    found = parse_time_window(message, now=now, timezone_name=zone)

    assert found is None or found.start < found.end


def test_an_impossible_day_falls_back_to_its_month():
    assert window("the day before 31 June 2023").label == "June 2023"


def test_relative_phrases_are_read_in_the_messages_language():
    assert window("what did we do yesterday").label == "19 September 2026"
    assert window("¿qué hicimos ayer?", fallback="en").label == "19 September 2026"
    assert window("o que fizemos na semana anterior?").label == "the week of 7 September 2026"


@pytest.mark.parametrize("message", ["last month", "last year", "yesterday", "last week"])
def test_a_relative_window_before_year_1_is_no_window_not_an_error(message):
    assert window(message, now=datetime(1, 1, 1, 12, tzinfo=UTC)) is None


def test_a_month_window_past_year_9999_is_no_window_not_an_error():
    assert window("what about December", now=datetime(9999, 12, 31, tzinfo=UTC)) is None


def test_time_words_are_not_topic_words_but_names_are():
    assert read_message("¿Qué vimos en julio sobre la ósmosis?").terms == ("osmosis",)
    assert "marco" in read_message("Did Marco explain osmosis?").terms
    janeiro = language.index_terms("Janeiro", "pt")[0]  # topic terms are stems
    assert janeiro in read_message("O que vimos no Rio de Janeiro?", fallback_language="pt").terms
    assert "week" not in read_message("what did we do last week about cells").terms
    # Found on the LoCoMo dev set: "week" as a topic word outranked the evidence.
    # (Topic terms are Snowball stems: "country" -> "countri", "visiting" -> "visit".)
    terms = set(
        read_message("Which country was Tim visiting in the second week of November?").terms
    )
    assert {"countri", "tim", "visit"} <= terms
    assert not terms & {"week", "novemb", "november"}


# ---- the block ------------------------------------------------------------------------------


def build(pair, message, *, now=NOW):
    return memory_block_build(
        organization=pair.subject.organization,
        student_external_id=pair.student.external_id,
        subject_external_id=pair.subject.external_id,
        message=message,
        now=now,
        budget=900,
    )


def test_a_window_after_now_is_ignored_and_the_block_says_so(db):
    pair = PairFactory()
    july = datetime(2026, 7, 14, 10, tzinfo=UTC)
    episode_append(
        pair=pair, kind="question", summary="What is osmosis?", occurred_at=july, now=july
    )

    result = build(pair, "What did we see about osmosis in December 2026?")

    assert result.window is None
    assert FUTURE_WINDOW_LINE.format(label="December 2026") in result.text
    assert "No record of work" not in result.text
    assert [r.summary for r in result.recalled] == ["What is osmosis?"]


def test_a_window_that_has_begun_is_still_applied(db):
    pair = PairFactory()
    episode_append(pair=pair, kind="question", summary="What is osmosis?", occurred_at=NOW, now=NOW)

    result = build(pair, "What did we see in September 2026?")

    assert result.window is not None and result.window.label == "September 2026"
    assert [r.summary for r in result.recalled] == ["What is osmosis?"]


def test_a_last_month_question_in_year_1_builds_a_block(db):
    pair = PairFactory()

    result = build(pair, "What did we do last month?", now=datetime(1, 1, 15, tzinfo=UTC))

    assert result.window is None
    assert result.text.startswith("===== YOUR MEMORY OF THIS STUDENT AND SUBJECT =====")


# ---- the window benchmark -------------------------------------------------------------------


def test_bench_windows_counts_evidence_a_window_leaves_outside(tmp_path):
    conversation = {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:00 pm on 3 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "We went camping last year."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice."},
        ],
        "session_2_date_time": "1:00 pm on 9 June, 2023",
        "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "I adopted a cat."}],
        "session_3_date_time": "1:00 pm on 9 July, 2023",  # no turns: not a session
    }
    qa = [
        {"question": "What did Ana adopt in June 2023?", "evidence": ["D2:1"], "category": 4},
        {"question": "Where did Ana go last year?", "evidence": ["D1:1"], "category": 2},
        {"question": "What did Ana do in December 2023?", "evidence": ["D2:1"], "category": 4},
        {"question": "What did Ana say?", "evidence": ["D1:1; D1:2"], "category": 1},
        {"question": "Unanswerable", "evidence": [], "category": 5},
    ]
    path = tmp_path / "conv.json"
    path.write_text(json.dumps([{"conversation": conversation, "qa": qa}]))
    out = StringIO()

    call_command("bench_windows", str(path), stdout=out)

    lines = out.getvalue().splitlines()
    assert "| 2 temporal | 1 | 1 | 1 | 1 / 1 | 0 |" in lines  # 2022 holds no 2023 turn
    assert "| 4 single-hop | 2 | 1 | 0 | 0 / 1 | 1 |" in lines  # December 2023 is after now
    assert "| all | 4 | 2 | 1 | 1 / 2 | 1 |" in lines


def test_bench_windows_refuses_an_unreadable_file_in_one_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json")

    with pytest.raises(CommandError, match="^file: cannot read"):
        call_command("bench_windows", str(path))
