from __future__ import annotations

from tutorbrain import language


def test_month_names_come_from_cldr_in_every_student_language():
    assert language.month_names("en")["july"] == 7
    assert language.month_names("es")["julio"] == 7
    assert language.month_names("pt")["julho"] == 7
    assert language.month_names("fr")["juillet"] == 7
    assert language.month_names("ar")[language.normalize("يوليو")] == 7


def test_relative_dates_come_from_cldr():
    phrases = {p: (unit, offset) for p, unit, offset in language.relative_phrases("es")}
    assert phrases["ayer"] == ("day", -1)
    assert phrases["la semana pasada"] == ("week", -1)
    assert phrases["el mes pasado"] == ("month", -1)
    fr = {p: (u, o) for p, u, o in language.relative_phrases("fr")}
    assert fr["hier"] == ("day", -1)


def test_normalisation_folds_accents_and_arabic_variants():
    assert language.normalize("Ósmosis") == "osmosis"
    assert language.normalize("أخطأت") == language.normalize("اخطات")


def test_search_terms_drop_stop_words_of_every_language():
    assert language.search_terms("What is the osmosis in a plant cell?") == [
        "osmosis",
        "plant",
        "cell",
    ]
    assert language.search_terms("¿Qué es la ósmosis?") == ["osmosis"]


def test_every_language_module_defines_every_cue_key():
    for code in language.languages():
        assert set(language.CUE_KEYS) - {"extra_stop_words"} <= set(language.data(code)), code
