"""Relevance as a real ranking (issue #11, R-5.2–R-5.4): words, stems, vectors, neighbours."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command

from memory.models import EpisodeIndex
from memory.services import EventSpec
from tests.test_block_retrieval import BUDGET, NOW, add, add_many, build, filler
from tutorbrain import language
from tutorbrain.block import format as fmt
from tutorbrain.block.message import read_message
from tutorbrain.block.tokens import count_tokens

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


# ---- Words: one language's function words, Snowball stems ------------------------------


@pytest.mark.parametrize(
    ("code", "text", "expected"),
    [
        ("en", "She was researching adoption agencies; we camped", ["research", "adopt", "agenc", "camp"]),
        ("es", "Las células vegetales estaban creciendo", ["celul", "vegetal", "crec"]),
        ("pt", "As células vegetais estavam crescendo", ["celul", "veget", "cresc"]),
        ("fr", "Les cellules végétales grandissaient dans l'eau", ["cellul", "vegetal", "grand", "eau"]),
        # Arabic is folded (ة → ه, أ → ا) before stemming, as students type it.
        ("ar", "الخلايا النباتية في الماء", ["خلايا", "نباتيه", "ماء"]),
    ],
)  # fmt: skip
def test_index_terms_are_snowball_stems_without_that_languages_function_words(code, text, expected):
    assert language.index_terms(text, code) == expected


def test_stems_meet_across_word_forms():
    assert language.index_terms("research", "en") == language.index_terms("researching", "en")
    assert language.index_terms("camped", "en") == language.index_terms("camping", "en")
    assert language.index_terms("ósmosis", "es") == language.index_terms("osmosis", "es")


@pytest.mark.parametrize(
    ("code", "function_word", "content_word"),
    [("en", "the", "research"), ("es", "las", "ósmosis"), ("pt", "das", "célula"),
     ("fr", "nous", "photosynthèse"), ("ar", "في", "الخلية")],
)  # fmt: skip
def test_each_language_drops_its_own_function_words_and_keeps_content_words(
    code, function_word, content_word
):
    assert language.index_terms(function_word, code) == []
    assert language.index_terms(content_word, code) != []


def test_a_stop_word_of_another_language_stays_a_word_of_this_one():
    # French "son" ("his") and English "work", "move", "years" were stop words when the
    # five lists were merged; in English they are content words ("my son", "at work").
    for word in ("car", "son", "point", "work", "move", "years", "group"):
        assert language.index_terms(word, "en"), word
    assert language.index_terms("son", "fr") == []
    assert language.index_terms("the", "es") == ["the"]


def test_a_message_is_read_in_its_own_language():
    reading = read_message("What did Caroline research for her move?")
    assert reading.terms == ("carolin", "research", "move")
    reading = read_message("¿Qué vimos en julio sobre la ósmosis?", fallback_language="es")
    assert reading.terms == ("osmosis",)


# ---- The ranking on the real database -------------------------------------------------


def _history(pair, texts: list[tuple[str, str]], *, start=START, step=timedelta(minutes=1)):
    specs = [
        EventSpec(kind=kind, summary=text, text=text, occurred_at=start + i * step)
        for i, (kind, text) in enumerate(texts)
    ]
    return add_many(pair, specs, embed_it=True)


@pytest.mark.django_db
def test_a_question_whose_answer_shares_no_word_is_recalled_through_the_vector_neighbour(pair):
    # The answer shares no word (nor stem) with the question; the rest shares none either.
    add_many(pair, filler(300, start=START, step=timedelta(hours=3)), embed_it=True)
    answer = add(
        pair,
        "answer",
        "The mitochondrion produces ATP, the cell's energy currency.",
        START + timedelta(days=10, minutes=7),
    )
    message = "Which organelle is the powerhouse that makes energy?"
    assert not set(read_message(message).terms) & set(
        language.index_terms(answer.summary, "en")
    ) - {"energi"}
    result = build(pair, message)
    assert answer.id in [r.id for r in result.recalled]
    recalled = next(r for r in result.recalled if r.id == answer.id)
    assert "meaning" in recalled.pools


@pytest.mark.django_db
def test_a_rare_word_outranks_a_common_one_and_the_common_word_alone_is_no_match(pair):
    # "Caroline" is in every episode (her name); only one says "adoption".
    texts = [("question", f"Caroline talked about the weather, day {i}") for i in range(120)]
    texts.insert(40, ("question", "Caroline is researching adoption agencies"))
    episodes = _history(pair, texts, step=timedelta(days=1))
    result = build(pair, "What did Caroline say about adoption?", budget=200)
    ids = [r.id for r in result.recalled]
    assert episodes[40].id in ids
    # The name alone matches nothing: the block is not "the latest turns with the name".
    assert len(ids) <= 3


@pytest.mark.django_db
def test_the_reply_after_a_matching_turn_is_recalled_as_its_neighbour(pair):
    texts = [("question", f"Chat number {i} about the weather and lunch") for i in range(200)]
    texts[100] = ("question", "What are you researching these days?")
    texts[101] = ("answer", "Mostly adoption agencies, it has been my dream for years.")
    episodes = _history(pair, texts, step=timedelta(minutes=30))
    result = build(pair, "What is Mel researching?")
    recalled = {r.id: r for r in result.recalled}
    assert episodes[100].id in recalled and episodes[101].id in recalled
    assert "neighbour" in recalled[episodes[101].id].pools


@pytest.mark.django_db
def test_a_turn_from_another_sitting_is_not_a_neighbour(pair):
    texts = [("question", f"Chat number {i} about the weather and lunch") for i in range(200)]
    texts[100] = ("question", "What are you researching these days?")
    texts[101] = ("answer", "Mostly adoption agencies, it has been my dream for years.")
    episodes = _history(pair, texts, step=timedelta(days=2))
    result = build(pair, "What is Mel researching?")
    assert episodes[101].id not in [r.id for r in result.recalled]


@pytest.mark.django_db
def test_the_search_documents_are_stems_and_the_reindex_command_rewrites_them(pair):
    episode = add(pair, "question", "We were camping by the lakes", NOW - timedelta(days=1))
    document = EpisodeIndex.objects.values_list("search", flat=True).get(episode=episode)
    assert "'camp'" in document and "'lake'" in document and "were" not in document
    EpisodeIndex.objects.filter(episode=episode).update(search=None)
    call_command("reindex_search", batch_size=1)
    document = EpisodeIndex.objects.values_list("search", flat=True).get(episode=episode)
    assert "'camp'" in document


# ---- Denser block ---------------------------------------------------------------------


def test_a_long_episode_shows_the_part_around_the_matched_words():
    long = " ".join(
        ["We talked about many unrelated things first"] * 6
        + ["and then the osmosis experiment with potato slices went wrong"]
        + ["after that more unrelated chatter followed"] * 6
    )
    terms = fmt.Terms(stems=frozenset(read_message("osmosis potato").terms), code="en")
    line = fmt.EpisodeLine(1, "question", long, NOW).render(
        zone=UTC,
        now=NOW,
        terms=terms,  # type: ignore[arg-type]
    )
    assert "osmosis experiment with potato slices" in line
    assert line.count("…") == 2
    assert count_tokens(line) <= fmt.EPISODE_TEXT_MAX_TOKENS + 12


@pytest.mark.django_db
def test_a_block_without_beliefs_has_no_empty_beliefs_section(pair):
    add(pair, "question", "What is osmosis?", NOW - timedelta(days=2))
    result = build(pair, "osmosis", budget=BUDGET)
    assert "WHAT YOU CURRENTLY BELIEVE" not in result.text
    assert "student: What is osmosis?" in result.text


# ---- "Last time": the newest matching memory is wanted ----------------------------------


@pytest.mark.parametrize(
    ("message", "fallback"),
    [
        ("What did we talk about osmosis last time?", "en"),
        ("¿Qué vimos sobre la ósmosis la última vez?", "es"),
        ("O que vimos sobre osmose da última vez?", "pt"),
        ("Qu'est-ce qu'on a vu sur l'osmose la dernière fois ?", "fr"),
        ("ماذا درسنا عن الخاصية الأسموزية المرة الماضية؟", "ar"),
    ],
)
def test_a_last_time_question_asks_for_the_latest_and_the_cue_is_no_topic_word(message, fallback):
    reading = read_message(message, fallback_language=fallback)
    assert reading.latest
    assert not {"last", "time", "ultim", "vez", "derni", "fois"} & set(reading.terms)
    assert not read_message("What is osmosis?").latest


@pytest.mark.django_db
def test_last_time_recalls_the_newest_exchange_about_the_topic_before_older_better_matches(pair):
    texts = [("question", f"Chat number {i} about the weather and lunch") for i in range(60)]
    # Older exchanges match the topic twice over; the newest once.
    texts[5] = ("question", "Osmosis, osmosis in plant roots again: osmosis and water")
    texts[20] = ("question", "Osmosis and osmosis pressure in cells, more osmosis")
    texts[55] = ("question", "Can we look at osmosis in red blood cells?")
    episodes = _history(pair, texts, step=timedelta(days=2))
    osmosis_ids = {episodes[i].id for i in (5, 20, 55)}

    def first_shown(message):
        # The smallest budget that shows any osmosis exchange shows the best-ranked one.
        for budget in range(100, 400, 5):
            try:
                shown = [r.id for r in build(pair, message, budget=budget).recalled]
            except fmt.BudgetTooSmall:  # below the frame's own size
                continue
            if osmosis_ids & set(shown):
                return shown
        raise AssertionError("no osmosis exchange shown")

    assert first_shown("What did we talk about osmosis last time?") == [episodes[55].id]
    # Without the cue the better matches win: the cue, not the budget, made the difference.
    assert episodes[55].id not in first_shown("What did we talk about osmosis?")


@pytest.mark.django_db
def test_only_the_best_lexical_matches_go_on_and_a_rare_word_still_wins(pair, monkeypatch):
    from tutorbrain.block import retrieval

    texts = [("question", f"Caroline talked about the weather, day {i}") for i in range(60)]
    texts.insert(20, ("question", "Caroline is researching adoption agencies"))
    episodes = _history(pair, texts, step=timedelta(days=1))
    message = "What did Caroline say about the weather and adoption?"

    def by_words(result):
        return [r.id for r in result.recalled if "words" in r.pools]

    assert len(by_words(build(pair, message, budget=1500))) > 5
    monkeypatch.setattr(retrieval, "LEXICAL_POOL_KEEP", 5)
    result = build(pair, message, budget=1500)
    assert 0 < len(by_words(result)) <= 5
    # Ranked by BM25 before the cut (rarity counted over every match): the one episode
    # with the rare word is among the five.
    assert episodes[20].id in by_words(result)
