"""Concept names: the canonical, script-aware key and whole-word name finding.

The key is the first merge rule of the map (R-2.3): two names with the same key are the
same concept. It is built per script, because what a writer leaves out differs: Latin
accents ("Ósmosis" = "osmosis"), Arabic diacritics, tatweel and letter variants
("الخلية" = "الخليه"), while marks that carry meaning in other scripts (Devanagari vowel
signs, for instance) are kept.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from functools import cache, lru_cache
from typing import TypeVar

from tutorbrain import language

KEY_MAX_CHARS = 200
T = TypeVar("T")

_ARABIC_DIACRITICS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")
_ARABIC_FOLD = str.maketrans(
    {"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي", "ة": "ه", "ؤ": "و", "ئ": "ي"}
)
# Letters and digits of any script (combining marks are word characters too). An
# apostrophe splits: the French elided article "l'" becomes its own token "l".
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
# The Arabic definite article is written joined to its noun: "الخلية" is "the cell".
_ARABIC_ARTICLE = re.compile(r"^(?:وال|بال|فال|كال|لل|ال)(?=\w{3,})")


@lru_cache(maxsize=4096)
def _script_of(char: str) -> str:
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else ""


# Scripts whose combining marks are accents a writer may omit (safe to fold away).
_FOLDABLE_SCRIPTS = frozenset({"LATIN", "GREEK", "CYRILLIC"})
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def _fold_marks(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    if decomposed.isascii():
        return decomposed  # no marks, and already composed
    # A mark goes when the letter it sits on is of a foldable script; that letter's
    # script is looked up only then (by its Unicode name: ~2 us a character). Only the
    # runs of non-ASCII characters are walked (a mark is never ASCII; the character
    # before a run is its first base): an English page has few, and walking every
    # character of a file was most of tokenising it.
    pieces: list[str] = []
    done = 0
    for run in _NON_ASCII_RUN.finditer(decomposed):
        start = run.start()
        base = decomposed[start - 1] if start else ""
        kept: list[str] = []
        for char in run.group():
            if unicodedata.combining(char):
                if base and _script_of(base) in _FOLDABLE_SCRIPTS:
                    continue
            else:
                base = char
            kept.append(char)
        pieces += [decomposed[done:start], "".join(kept)]
        done = run.end()
    pieces.append(decomposed[done:])
    return unicodedata.normalize("NFC", "".join(pieces))


def normalize_text(text: str) -> str:
    """Case-folded, script-aware normalised text (no punctuation handling)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _ARABIC_DIACRITICS.sub("", text).translate(_ARABIC_FOLD)
    return _fold_marks(text)


def written_words(text: str) -> list[str]:
    """Words as written, case-folded but keeping their accents: "É definido" -> ["é",
    "definido"] (`tokens` folds them away)."""
    return re.findall(r"[^\W_]+", unicodedata.normalize("NFC", text).casefold())


def _without_accents(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


@cache
def _accented_words(key: str) -> dict[str, frozenset[str]]:
    """Words of the language data's `key` phrases that mean something else without their
    accent: folded, Portuguese "é" ("is") is "e" ("and"), "são" is "sao". Folded form ->
    the written forms; a word some phrase writes unaccented ("est", "es") is not here,
    nor Arabic letter folding (ى/ي), which is spelling, not meaning."""
    written: dict[str, set[str]] = {}
    unaccented: set[str] = set()
    for code in language.languages():
        for phrase in language.data(code).get(key, []):
            for word in written_words(phrase):
                folded = " ".join(tokens(word))
                if folded == word:
                    unaccented.add(folded)
                elif _without_accents(word) == folded:
                    written.setdefault(folded, set()).add(word)
    return {f: frozenset(w) for f, w in written.items() if f not in unaccented}


def written_as(key: str, folded: list[str], written: list[str]) -> bool:
    """Whether words that fold to the `key` phrase `folded` are written as it: "é", not
    "e" ("Pedro e Maria estudam", "Ácidos e bases", "Keith E. Whittington")."""
    accented = _accented_words(key)
    pairs = zip(folded, written, strict=False)  # the written words may run short
    return all(f not in accented or w in accented[f] for f, w in pairs)


def tokens(text: str) -> list[str]:
    """Normalised word tokens ("L'Osmose" -> ["l", "osmose"]), Arabic articles removed."""
    normalized = normalize_text(text)
    found = _TOKEN.findall(normalized)
    if "\u0644" not in normalized:
        return found  # every Arabic article holds a lam (ل): nothing to remove
    return [_ARABIC_ARTICLE.sub("", t) for t in found]


@cache
def _leading_articles() -> frozenset[str]:
    out: set[str] = set()
    for code in language.languages():
        for article in language.data(code).get("leading_articles", []):
            out.add(" ".join(tokens(article)))
    return frozenset(out)


def _strip_article(words: list[str]) -> list[str]:
    if len(words) > 1 and words[0] in _leading_articles():
        return words[1:]
    return words


def concept_key(name: str) -> str:
    """The canonical key of a concept name (R-2.3).

    Case-folded; Latin/Greek/Cyrillic accents removed; Arabic diacritics, tatweel and
    alef/yeh/teh-marbuta variants unified; punctuation dropped; one leading article
    ("the", "la", "l'") removed, and the Arabic article on each word. "The Cell Membrane" and "cell-membrane" share a key.
    """
    words = _strip_article(tokens(name or ""))
    return " ".join(words)[:KEY_MAX_CHARS]


def key_tokens_text(text: str) -> str:
    """A text as a space-joined token string, padded, for whole-word key search."""
    return " " + " ".join(tokens(text)) + " "


# Plural endings tolerated when finding a name in running text (Latin script), both
# ways: "proteins" names "Protein", "membranas" names "membrana", "allele" names "Alleles".
# Beyond these, each language's `plural_rules` (plural ending -> singular ending, on
# normalised text: "studies"/"study", "luces"/"luz", "animais"/"animal", "chevaux"/"cheval")
# and `irregular_plurals` ("teeth"/"tooth") are language data.
PLURAL_SUFFIXES = ("", "s", "es")
# Shorter than this, a word is not singularised ("gas" stays "gas").
SINGULAR_MIN_CHARS = 4
# A singular made by a rule keeps at least this many characters ("ies" -> "y" on "dies" is no word).
STEM_MIN_CHARS = 3


@cache
def _plural_rules() -> tuple[tuple[str, str], ...]:
    rules: set[tuple[str, str]] = set()
    for code in language.languages():
        for plural, singular in language.data(code).get("plural_rules", []):
            rules.add((normalize_text(plural), normalize_text(singular)))
    return tuple(sorted(rules, key=lambda r: (-len(r[0]), r)))


@cache
def _irregular_plurals() -> dict[str, frozenset[str]]:
    """Word -> its other number forms, both ways ("tooth" <-> "teeth")."""
    out: dict[str, set[str]] = {}
    for code in language.languages():
        for singular, plural in language.data(code).get("irregular_plurals", []):
            a, b = normalize_text(singular), normalize_text(plural)
            out.setdefault(a, set()).add(b)
            out.setdefault(b, set()).add(a)
    return {word: frozenset(forms) for word, forms in out.items()}


# Number forms are asked for every name of the map on every read: memoised (pure
# functions of a word; the rules are fixed data).
FORMS_CACHE_SIZE = 200_000


@lru_cache(maxsize=FORMS_CACHE_SIZE)
def singular_forms(word: str) -> frozenset[str]:
    """The words `word` may be the plural of (rules of every language; never itself)."""
    out = set(_irregular_plurals().get(word, ()))
    if len(word) < SINGULAR_MIN_CHARS:
        return frozenset(out)
    for plural, singular in _plural_rules():
        if word.endswith(plural):
            stem = word[: len(word) - len(plural)] + singular
            if len(stem) >= STEM_MIN_CHARS and stem != word:
                out.add(stem)
    return frozenset(out)


@lru_cache(maxsize=FORMS_CACHE_SIZE)
def plural_forms(word: str) -> frozenset[str]:
    """The words that may be the plural of `word` (the inverse of `singular_forms`)."""
    out = set(_irregular_plurals().get(word, ()))
    for plural, singular in _plural_rules():
        if word.endswith(singular):
            form = word[: len(word) - len(singular)] + plural
            if form != word and word in singular_forms(form):
                out.add(form)
    return frozenset(out)


def same_word_but_number(a: str, b: str) -> bool:
    return a == b or b in singular_forms(a) or a in singular_forms(b)


@lru_cache(maxsize=FORMS_CACHE_SIZE)
def _number_forms(key: str) -> tuple[str, ...]:
    """The key with its last word in every number form ("cell membrane(s)", "luz/luces")."""
    head, _, last = key.rpartition(" ")
    prefix = f"{head} " if head else ""
    forms = [key, *(f"{key}{suffix}" for suffix in PLURAL_SUFFIXES[1:])]
    forms += [prefix + w for w in sorted(singular_forms(last) | plural_forms(last))]
    return tuple(dict.fromkeys(forms))


@lru_cache(maxsize=FORMS_CACHE_SIZE)
def _last_words(key: str) -> frozenset[str]:
    """The last word of each of the key's number forms: one of them must be a word of a
    text that names the key."""
    return frozenset(form.rpartition(" ")[2] for form in _number_forms(key))


def same_but_number(key_a: str, key_b: str) -> bool:
    """ "gene"/"genes", "study"/"studies", "sistemas nerviosos"/"sistema nervioso": one
    concept in the singular and the plural (word by word, as Romance adjectives agree)."""
    if key_a == key_b:
        return True
    words_a, words_b = key_a.split(), key_b.split()
    if len(words_a) != len(words_b) or not words_a:
        return False
    return all(same_word_but_number(a, b) for a, b in zip(words_a, words_b, strict=True))


_ROMAN_LABEL = re.compile(r"^(?:i{2,3}|iv|vi{0,3}|ix|xi{0,3})$")


@cache
def _number_words() -> frozenset[str]:
    out: set[str] = set()
    for code in language.languages():
        for word in language.data(code).get("ordinal_words", []):
            out.update(tokens(word))
    return frozenset(out)


def label_tokens(key: str) -> list[str]:
    """The words of a key that number or letter a thing: "2", "g1", "second", "ii", "s".

    "One sigma rule"/"Two sigma rule", "G_1 phase"/"G_2 phase", "Type I"/"Type II" differ
    only by these: never the same concept, however alike their vectors.
    """
    out = []
    for word in key.split():
        if (
            any(c.isdigit() for c in word)
            or word in _number_words()
            or _ROMAN_LABEL.match(word)
            or (len(word) == 1 and word.isalpha())
        ):
            out.append(word)
    return sorted(out)


def differ_by_label(key_a: str, key_b: str) -> bool:
    return label_tokens(key_a) != label_tokens(key_b)


def share_a_word(key_a: str, key_b: str) -> bool:
    """Whether two different keys have a word in common (in any number form)."""
    if same_but_number(key_a, key_b):
        return False
    words_b = key_b.split()
    return any(same_word_but_number(a, b) for a in key_a.split() for b in words_b)


# An abbreviation is one word of at most this many characters.
ABBREVIATION_MAX_CHARS = 10


def could_be_abbreviation(name: str) -> bool:
    """One word of 2 to ABBREVIATION_MAX_CHARS characters with a capital: what
    `is_abbreviation_of` asks of the short form before comparing letters."""
    name = name.strip()
    return (
        " " not in name
        and 2 <= len(name) <= ABBREVIATION_MAX_CHARS
        and any(c.isupper() for c in name)
    )


def is_abbreviation_of(short: str, long: str) -> bool:
    """ "IQR" of "interquartile range", "DNA" of "deoxyribonucleic acid", "UDHR" of
    "Universal Declaration of Human Rights": one short word whose letters, first letter
    first, occur in order in the long form, with at least one capital."""
    short, long = short.strip(), long.strip()
    if not could_be_abbreviation(short) or len(long.split()) < 2:
        return False
    letters = [c for c in normalize_text(short) if c.isalnum()]
    text = normalize_text(long)
    if not letters or not text or letters[0] != text[0]:
        return False
    position = 0
    for letter in letters:
        position = text.find(letter, position)
        if position == -1:
            return False
        position += 1
    return True


def find_keys_in(text: str, keys: Mapping[str, T]) -> list[tuple[str, T]]:
    """Which of `keys` occur in `text` as whole words, longest first.

    `keys` maps a concept key to anything (a concept, a name). Tokens are those of
    `concept_key`, so "l'osmose" names "osmose" and "الميتوكوندريا" names "ميتوكوندريا".
    A longer name consumes its words: "cell membrane" in the text does not also name
    "cell".
    """
    haystack = key_tokens_text(text)
    # A key is found only as whole words, so the last word of one of its forms is a word
    # of the text: the other keys are skipped without searching (a reading asks this of
    # every definition with the hundreds of names it looked up).
    words = frozenset(haystack.split(" "))
    taken = [False] * len(haystack)
    found: list[tuple[str, T]] = []
    for key in sorted(keys, key=len, reverse=True):
        if not key or words.isdisjoint(_last_words(key)):
            continue
        hit = False
        for needle_key in _number_forms(key):
            needle = f" {needle_key} "
            start = haystack.find(needle)
            while start != -1:
                span = range(start + 1, start + len(needle) - 1)
                if not any(taken[i] for i in span):
                    for i in span:
                        taken[i] = True
                    hit = True
                start = haystack.find(needle, start + 1)
        if hit:
            found.append((key, keys[key]))
    return found


def vector_text(name: str) -> str:
    """What a concept name's vector is computed from: case-folded, accents kept.

    Case changes the multilingual USE vector ("Diffusion"/"Difusión" 0.77, lower-cased
    0.85); the merge thresholds are calibrated on this same form.
    """
    return " ".join((name or "").split()).casefold()


def display_name(name: str) -> str:
    """ "cell membrane" is shown as "Cell membrane"; "mRNA" and "ATP" stay as written."""
    name = " ".join((name or "").split())
    if name[:1].islower() and not any(c.isupper() for c in name[1:]):
        return name[:1].upper() + name[1:]
    return name


# A text is in a language when at least this share of its words are that language's
# stop words (ordinary prose has 30-50 %).
LANGUAGE_MIN_STOP_SHARE = 0.12


@cache
def _stop_words_of(code: str) -> frozenset[str]:
    from stop_words import get_stop_words

    out: set[str] = set()
    for word in get_stop_words(code):
        out.update(tokens(word))
    return frozenset(out)


# The words a text's language is told from: its first LANGUAGE_SAMPLE_WORDS, tokenised
# from at most LANGUAGE_SAMPLE_CHARS characters (not the whole of a 100-page file).
LANGUAGE_SAMPLE_WORDS = 5000
LANGUAGE_SAMPLE_CHARS = 60_000


def text_language(text: str) -> str | None:
    """The student language whose stop words cover most of the text, or None."""
    words = tokens(text[:LANGUAGE_SAMPLE_CHARS])[:LANGUAGE_SAMPLE_WORDS]
    if not words:
        return None
    best: tuple[float, str] | None = None
    for code in language.languages():
        stops = _stop_words_of(code)
        share = sum(1 for w in words if w in stops) / len(words)
        if best is None or share > best[0]:
            best = (share, code)
    return best[1] if best and best[0] >= LANGUAGE_MIN_STOP_SHARE else None
