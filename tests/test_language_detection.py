"""Which language a chat message is in (used for stop words, stemming and month names)."""

from __future__ import annotations

import pytest

from tutorbrain import language


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("What did we do yesterday?", "en"),
        ("What did we see in July?", "en"),
        ("what did i get wrong", "en"),
        ("I don't get osmosis", "en"),
        ("¿Qué vimos en julio?", "es"),
        ("¿En qué me equivoqué?", "es"),
        ("qué hicimos la semana pasada", "es"),
        ("o que vimos em março?", "pt"),
        ("O que estudamos no mês passado?", "pt"),
        ("não entendi a osmose", "pt"),
        ("qu'avons-nous vu ?", "fr"),
        ("Qu'est-ce que j'ai raté hier ?", "fr"),
        ("on a vu quoi en juillet", "fr"),
        ("ماذا درسنا في يوليو؟", "ar"),
        ("ما هو DNA؟", "ar"),
        ("Thanks!", "en"),
        ("Hola", "es"),
        ("Obrigado!", "pt"),
        ("Merci !", "fr"),
    ],
)
def test_a_short_chat_message_is_read_in_its_own_language(message, expected):
    # The fallback is a language the message is not in, so only evidence can decide.
    fallback = "ar" if expected != "ar" else "en"

    assert language.detect(message, fallback=fallback) == expected


@pytest.mark.parametrize(
    "message", ["", "   ", "ok", "Mitochondria?", "DNA", "no", "42", "photosynthesis!!"]
)
@pytest.mark.parametrize("fallback", ["en", "es", "pt", "fr", "ar"])
def test_a_message_without_clear_evidence_falls_back_to_the_students_language(message, fallback):
    assert language.detect(message, fallback=fallback) == fallback


def test_a_word_two_languages_share_does_not_decide_between_them():
    # "abril" is Spanish and Portuguese: the student's language decides.
    assert language.detect("abril", fallback="pt") == "pt"
    assert language.detect("abril", fallback="es") == "es"
    # ... unless the message says more.
    assert language.detect("¿y en abril?", fallback="pt") == "es"
    assert language.detect("e em abril?", fallback="es") == "pt"


def test_the_students_language_wins_a_close_contest_but_not_a_clear_one():
    # "que" is es/pt/fr and "ósmosis" no language's function word: too close to call.
    assert language.detect("que ósmosis", fallback="fr") == "fr"
    assert language.detect("What did we see in July?", fallback="es") == "en"


def test_detection_evidence_is_data_in_each_language_module():
    for code in ("en", "es", "pt", "fr"):
        assert language.data(code)["detection_words"], code
    assert language.data("ar")["detection_script_ranges"]
