"""Recognising an explicit teaching form in a message (R-3.1 .. R-3.3).

Only a message that *starts* with a teaching cue teaches ("remember that ...",
"recuerda que ...", "lembre-se de que ...", "souviens-toi que ...", "تذكر أن ...",
"treat X as ..."); the cues are language data (`teaching_cues`). A question never
teaches: a message ending in a question mark, or holding an opening "¿", is a question
even when it starts like a teaching form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from concepts.naming import display_name, tokens, written_as, written_words
from concepts.validator import name_check
from tutorbrain import language

# A taught node's name is short: at most this many words.
SHORT_NAME_MAX_WORDS = 3

_RAW_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_QUESTION = re.compile(r"[?؟]\s*[\"'»”)]*\s*$")


@cache
def _cues() -> list[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()
    for code in language.languages():
        for phrase in language.data(code).get("teaching_cues", []):
            words = tuple(tokens(phrase))
            if words:
                out.add(words)
    return sorted(out, key=len, reverse=True)


@cache
def _words_of(key: str) -> frozenset[str]:
    out: set[str] = set()
    for code in language.languages():
        for phrase in language.data(code).get(key, []):
            out.update(tokens(phrase))
    return frozenset(out)


@dataclass(frozen=True)
class TeachingForm:
    note: str  # the whole message, as the person said it
    rest: list[str]  # normalised words after the teaching cues (what is being taught)
    raw_rest: list[str]  # the same words as written
    cue_words: list[str]  # the normalised words of the cues themselves


def is_question(text: str) -> bool:
    return bool(_QUESTION.search(text or "")) or "¿" in (text or "")


def teaching_form(text: str) -> TeachingForm | None:
    """The teaching form of a message, or None when it does not teach."""
    text = (text or "").strip()
    if not text or is_question(text):
        return None
    raw = _RAW_WORD.findall(text)
    normalised = [(w, tokens(w)) for w in raw]
    raw = [w for w, t in normalised if t]
    words = [t[0] for _, t in normalised if t]
    consumed = 0
    # "Remember that in our class we call ...": cues may follow one another.
    while True:
        for cue in _cues():
            if tuple(words[consumed : consumed + len(cue)]) == cue:
                consumed += len(cue)
                break
        else:
            break
    if consumed == 0 or consumed >= len(words):
        return None
    return TeachingForm(
        note=text, rest=words[consumed:], raw_rest=raw[consumed:], cue_words=words[:consumed]
    )


def defines_something(form: TeachingForm) -> bool:
    """Whether the sentence defines or names something ("X is Y", "we call X Y", "treat X as").

    Only such a sentence may create a new node: "remember that I hate Mondays" names no
    concept and defines nothing, so it teaches nothing.
    """
    if set(form.cue_words) & _words_of("naming_verbs"):
        return True
    return len(subject_words(form)) < len(form.rest)


def short_name(form: TeachingForm) -> str | None:
    """A short node name for what a teaching sentence is about (R-3.2), or None.

    The first content words after the cues, up to a copula, an article after the
    first word ("we call the ATP synthase the turbine"), a stop word, or
    SHORT_NAME_MAX_WORDS words. Never the whole sentence.
    """
    stops = language.stop_words()
    articles = _words_of("leading_articles")
    copulas = _words_of("definition_copulas")
    pairs = list(zip(form.rest, form.raw_rest, strict=True))
    while pairs and (pairs[0][0] in articles or pairs[0][0] in stops):
        pairs = pairs[1:]
    picked: list[str] = []
    for word, raw in pairs:
        if picked and (_is_copula(word, raw, copulas) or word in articles or word in stops):
            break
        if word.isdigit() and not picked:
            continue
        picked.append(raw)
        if len(picked) == SHORT_NAME_MAX_WORDS:
            break
    if not picked:
        return None
    name = display_name(" ".join(picked))
    return name if name_check(name).ok else None


def subject_words(form: TeachingForm) -> list[str]:
    """The words the teaching is about: up to the first copula ("X is Y" -> X).

    "we call the mitochondria the powerhouse of the cell" has no copula: all of it,
    and the first concept named in it (mitochondria) is the one taught.
    """
    copulas = _words_of("definition_copulas")
    for index, (word, raw) in enumerate(zip(form.rest, form.raw_rest, strict=True)):
        if index > 0 and _is_copula(word, raw, copulas):
            return form.rest[:index]
    return list(form.rest)


def _is_copula(word: str, raw: str, copulas: frozenset[str]) -> bool:
    """A copula's word, written as one: Portuguese "é", not "e" ("and")."""
    return word in copulas and written_as("definition_copulas", [word], written_words(raw)[:1])
