"""Language data for the students' languages, in one place (DESIGN.md §4).

Typed cue lists live in `tutorbrain/language/data/<code>.py`. What a well-kept source
already has is taken from it instead of being typed: month names and relative dates
from CLDR (Babel), stop words from the `stop-words` package, stemmers from Snowball.

Matching is done on normalised text (see `normalize`): case-folded, Latin accents
stripped, Arabic diacritics, tatweel and alef/yeh/teh-marbuta variants unified, so that
"Ósmosis" matches "osmosis" and "أخطأت" matches "اخطات".
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from tutorbrain.language.data import LANGUAGE_CODES

CUE_KEYS = (
    "history_cues",
    "mistake_cues",
    "teaching_cues",
    "utterance_cues",
    "question_words",
    "section_furniture",
    "numbered_heading_words",
    "narration_cues",
    "latest_cues",
    "extra_stop_words",
)

_ARABIC_DIACRITICS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")
_ARABIC_FOLD = str.maketrans(
    {"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي", "ة": "ه", "ؤ": "و", "ئ": "ي"}
)
_WORD = re.compile(r"[\w']+|[\u0600-\u06ff]+", re.UNICODE)
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "`": "'", "´": "'"})


def languages() -> tuple[str, ...]:
    return LANGUAGE_CODES


@cache
def data(code: str) -> dict[str, Any]:
    module = importlib.import_module(f"tutorbrain.language.data.{code}")
    return module.DATA


def normalize(text: str) -> str:
    """Case-fold and strip what students leave out when they type."""
    text = text.translate(_APOSTROPHES).casefold()
    text = _ARABIC_DIACRITICS.sub("", text).translate(_ARABIC_FOLD)
    decomposed = unicodedata.normalize("NFKD", text)
    # Combining marks are dropped for Latin script only; Arabic has been folded above.
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", stripped)


def words(text: str) -> list[str]:
    """Normalised word tokens (apostrophes kept inside words: qu'avons, let's)."""
    return [w.strip("'") for w in _WORD.findall(normalize(text)) if w.strip("'")]


def _phrase_pattern(phrases: list[str]) -> re.Pattern[str] | None:
    cleaned = sorted({" ".join(words(p)) for p in phrases if words(p)}, key=len, reverse=True)
    if not cleaned:
        return None
    alternatives = "|".join(re.escape(p) for p in cleaned)
    return re.compile(rf"(?<![\w]){alternatives}(?![\w])")


@cache
def cue_pattern(key: str, code: str | None = None) -> re.Pattern[str] | None:
    """A regex matching any cue phrase of `key` (all languages, or one) in normalised text."""
    codes = (code,) if code else LANGUAGE_CODES
    phrases: list[str] = []
    for c in codes:
        phrases.extend(data(c).get(key, []))
    return _phrase_pattern(phrases)


def normalized_phrase(text: str) -> str:
    """Text as cue patterns see it: normalised words joined by single spaces."""
    return " ".join(words(text))


def find_cue(text: str, key: str, code: str | None = None) -> re.Match[str] | None:
    pattern = cue_pattern(key, code)
    return pattern.search(normalized_phrase(text)) if pattern else None


@cache
def cue_set(key: str) -> frozenset[str]:
    """All cues of `key` across languages, normalised (for whole-word lookups)."""
    out: set[str] = set()
    for code in LANGUAGE_CODES:
        for phrase in data(code).get(key, []):
            out.add(normalized_phrase(phrase))
    return frozenset(out)


@cache
def stop_words() -> frozenset[str]:
    """Stop words of every student language (stop-words package + each module's extras)."""
    from stop_words import get_stop_words

    out: set[str] = set()
    for code in LANGUAGE_CODES:
        for word in get_stop_words(code):
            out.update(words(word))
        for word in data(code).get("extra_stop_words", []):
            out.update(words(word))
    return frozenset(out)


def search_terms(text: str) -> list[str]:
    """The distinctive words of a text: normalised, stop words and 1-letter tokens removed."""
    stops = stop_words()
    return [w for w in words(text) if len(w) > 1 and w not in stops and not w.isdigit()]


# ---- Index terms: one language's function words out, Snowball stems in -----------------

_STOP_LISTS = Path(__file__).parent / "data" / "stopwords"
# Apostrophes split words here (French "qu'avons" -> "qu", "avons"; English "Mel's" ->
# "mel", "s"): the stemmers and the stop lists take the pieces.
_INDEX_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@cache
def function_words(code: str) -> frozenset[str]:
    """The function words of ONE language, normalised (never a union of languages).

    Snowball's stop lists (en, es, pt, fr; data/stopwords/<code>.txt) plus the language
    module's `extra_stop_words`. Content words are not stop words: "research", "move",
    "work" or "car" stay searchable.
    """
    out: set[str] = set()
    path = _STOP_LISTS / f"{code}.txt"
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                out.update(_INDEX_WORD.findall(normalize(line)))
    if code in LANGUAGE_CODES:
        for word in data(code).get("extra_stop_words", []):
            out.update(_INDEX_WORD.findall(normalize(word)))
    return frozenset(out)


def index_terms(text: str, code: str, *, skip: frozenset[str] = frozenset()) -> list[str]:
    """The searchable terms of `text` read as language `code`: its content words, stemmed.

    Each word is normalised (case, accents, Arabic letter variants: students leave them
    out, so both sides drop them before stemming), dropped when it is one of the
    language's function words, in `skip`, a single letter or a number, and otherwise
    stemmed with the language's Snowball stemmer, so that "research" and "researching",
    "camped" and "camping" meet. Both the episodes' search documents and the message's
    words go through here, each in its own language.
    """
    stops = function_words(code)
    out = []
    for plain in _INDEX_WORD.findall(normalize(text)):
        if len(plain) <= 1 or plain.isdigit() or plain in stops or plain in skip:
            continue
        out.append(_index_stem(code, plain))
    return out


@lru_cache(maxsize=200_000)
def _index_stem(code: str, plain: str) -> str:
    # The Snowball stemmers are pure Python (~0.1 ms a word): a vocabulary repeats, so
    # each (language, word) is stemmed once per process — indexing a map's descriptions
    # or a history's episodes costs a dictionary look-up per repeated word.
    return normalize(_stemmer(code).stemWord(plain))


def document_terms(text: str, default_code: str) -> list[str]:
    """An episode's search terms (memory.indexing's hook), read in the text's own language
    (`detect`; the subject's language when it cannot be told)."""
    fallback = default_code if default_code in LANGUAGE_CODES else "en"
    return index_terms(text, detect(text, fallback=fallback))


# ---- Dates from CLDR -------------------------------------------------------------------


@cache
def month_names(code: str) -> dict[str, int]:
    """Normalised month name -> month number, wide and abbreviated, from CLDR."""
    from babel import Locale

    locale = Locale.parse(code)
    out: dict[str, int] = {}
    for context in ("format", "stand-alone"):
        for width in ("wide", "abbreviated"):
            for number, name in locale.months[context][width].items():
                key = normalized_phrase(name.rstrip("."))
                # Short abbreviations ("may", "mar", "jan") collide with ordinary words in
                # other languages; keep abbreviations of 4+ letters only.
                if width == "abbreviated" and len(key) < 4:
                    continue
                out.setdefault(key, number)
    return out


@cache
def all_month_names() -> dict[str, int]:
    merged: dict[str, int] = {}
    for code in LANGUAGE_CODES:
        for name, number in month_names(code).items():
            merged.setdefault(name, number)
    return merged


@cache
def relative_phrases(code: str) -> list[tuple[str, str, int]]:
    """(normalised phrase, unit, offset) for yesterday / last week / last month, etc.

    From CLDR's relative date fields, plus a language module's `extra_relative` for
    everyday variants CLDR does not list.
    """
    from babel import Locale

    locale = Locale.parse(code)
    out: list[tuple[str, str, int]] = []
    fields = locale._data["date_fields"]
    for unit in ("day", "week", "month", "year"):
        for offset, phrase in fields[unit]["relative"].items():
            if offset < 0 or (offset == 0 and unit != "day"):
                out.append((normalized_phrase(phrase), unit, int(offset)))
    for unit, by_offset in data(code).get("extra_relative", {}).items():
        for offset, phrases in by_offset.items():
            out.extend((normalized_phrase(p), unit, int(offset)) for p in phrases)
    # Longest first so "anteayer" wins over "ayer" and "la semana pasada" over "semana".
    return sorted({x for x in out if x[0]}, key=lambda x: len(x[0]), reverse=True)


# ---- Stemming (Snowball) -----------------------------------------------------------------

_SNOWBALL_NAMES = {
    "en": "english",
    "es": "spanish",
    "pt": "portuguese",
    "fr": "french",
    "ar": "arabic",
}


@cache
def _stemmer(code: str):
    import snowballstemmer

    return snowballstemmer.stemmer(_SNOWBALL_NAMES.get(code, "english"))


def stem(word: str, code: str) -> str:
    return _stemmer(code).stemWord(word)


# ---- Which language a message is in ---------------------------------------------------------


def detect(text: str, *, fallback: str) -> str:
    """en/es/pt/fr/ar for `text`, or `fallback` (the student's language) when unsure.

    See `tutorbrain.language.detection` for how; imported lazily because it reads this
    module's data.
    """
    from tutorbrain.language.detection import detect as _detect

    return _detect(text, fallback=fallback)
