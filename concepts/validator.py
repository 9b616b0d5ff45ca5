"""The validator (R-2.2): what an extractor proposes is a concept only if its name is one.

Rejected: section furniture in any student language ("Introduction", "Resumen",
"Exercícios", "Résumé", "ملخص", "Common mistakes"), numbered headings ("Chapter 3",
"Capítulo 2", "Unit IV", "الفصل الثالث"), heading-like names ("Introduction to cells",
"How cells divide", "3.2") and whole sentences; exercise and layout labels in singular
and plural ("Note", "Problems", "Solución", "Try It", "Figure 3.2", "Tableau"); names made
only of function words ("Is", "The", "_ and") or opening/closing on one ("Arrow down to");
formula, markup and table fragments ("$σ^2 =//", "| Life Expectancy", "N ="); a leading
number or bullet ("1. Osmosis", "- cell"); instructions ("Calculate the mass"); clauses
("rules that govern"). The word lists are language data
(`tutorbrain/language/data/<code>.py`: section_furniture, block_labels, function_words,
emphasis_words, imperative_verbs, clause_words, numbered_heading_words, ordinal_words,
question_words, definition_copulas).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from concepts.naming import tokens, written_as, written_words
from tutorbrain import language

# A concept name is short: "Electron transport chain" has 3 words; 6 is generous.
NAME_MAX_WORDS = 6
# ... not counting function words, of which a long anatomical name has a few.
NAME_MAX_WORDS_WITH_FUNCTION_WORDS = 10
NAME_MAX_CHARS = 80
NAME_MIN_CHARS = 2

_ROMAN = re.compile(r"^[ivxlc]+$")
_SENTENCE_END = re.compile(r"[.!?؟。]\s*$")
# Characters no concept name carries: formulas, Markdown/HTML markup, table cells.
_FORMULA_OR_MARKUP = re.compile(r"[$|=\\{}<>~#@;→←↔⇌⇒⟶⟵⟷]|//|__|\*")
# Brackets a name opens it closes: "M)/" or "(aq" is a piece cut out of a formula.
_BRACKET_PAIRS = ("()", "[]")
# Sub/superscript marks are fine inside a real name ("G_1 phase", "orbital sp^3") only.
_SCRIPT_MARK = re.compile(r"[\^_]")
# A list bullet or an item number opening the name: "- cell", "• ATP", "1. Osmosis", "a) ...",
# "B. Cell structure". A capital and a dot before a lower-case word abbreviate a genus
# ("E. coli", "S. aureus"): a name.
_LEADING_NUMBER_OR_BULLET = re.compile(
    r"^\s*(?:[-–—*+•·▪●◦]|\d+(?:[.,:)]\d*)*[.,:)]?\s|\d+$|\(?[a-zA-Z]\)\s|[a-z]\.\s"
    r"|[A-Z]\.\s+(?=[A-Z0-9(]))"
)
# A colon inside a word that holds a letter: a calculator's key or menu item ("STAT
# 1:EDIT", "1:1-VarStats", "4:ClrList"), never a name ("3:1 ratio" opens with a number).
_KEYSTROKE = re.compile(r"(?=\S*[^\W\d_])\S*\S:\S")
# A word with at least this many letters makes a name more than a symbol ("Χ^2" is none).
WORD_MIN_LETTERS = 3


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str = ""


@cache
def _phrases(key: str) -> frozenset[str]:
    out: set[str] = set()
    for code in language.languages():
        for phrase in language.data(code).get(key, []):
            joined = " ".join(tokens(phrase))
            if joined:
                out.add(joined)
    return frozenset(out)


@cache
def _first_words(key: str) -> frozenset[str]:
    return frozenset(p.split(" ", 1)[0] for p in _phrases(key))


@cache
def _words(key: str) -> frozenset[str]:
    """Single words of a per-language list (every word of every phrase)."""
    return frozenset(w for p in _phrases(key) for w in p.split())


@cache
def _weekdays() -> frozenset[str]:
    """The days of the week in every student language (CLDR, shipped with babel): a
    note's "**viernes**" or "**Lundi**" is a deadline, never a concept. (A month alone is
    not refused as a month: "Mars" is a name in other languages; a month with a number
    is a date, `_is_date`.)"""
    from babel.dates import get_day_names

    return frozenset(
        " ".join(tokens(day))
        for code in language.languages()
        for day in get_day_names("wide", locale=code).values()
    )


@cache
def _months() -> frozenset[str]:
    """The months in every student language (CLDR, wide and abbreviated forms)."""
    from babel.dates import get_month_names

    return frozenset(
        " ".join(tokens(month))
        for code in language.languages()
        for width in ("wide", "abbreviated")
        for month in get_month_names(width, locale=code).values()
    )


def _is_date(words: list[str]) -> bool:
    """ "January 6", "6 de enero", "March 2020", "٦ يناير": a month with a day or a year
    (a month alone may be a name: "Mars")."""
    months = _months()
    return (
        any(w in months for w in words)
        and any(w.isdigit() for w in words)
        and all(w in months or w.isdigit() or w in _words("function_words") for w in words)
    )


def _is_label_word(word: str) -> bool:
    return _is_number_word(word) or (len(word) == 1 and word.isalpha()) or word.isdigit()


def _is_number_word(word: str) -> bool:
    return word.isdigit() or bool(_ROMAN.match(word)) or word in _phrases("ordinal_words")


def name_check(name: str) -> Verdict:
    """Whether `name` may be a concept's name, and why not."""
    raw = (name or "").strip()
    if len(raw) < NAME_MIN_CHARS:
        return Verdict(False, "too short")
    if len(raw) > NAME_MAX_CHARS:
        return Verdict(False, "too long for a name: a sentence or a heading")
    words = tokens(raw)
    if not words:
        return Verdict(False, "no words")
    joined = " ".join(words)
    if joined in _phrases("section_furniture"):
        return Verdict(False, "section furniture")
    if joined in _weekdays():
        return Verdict(False, "a day of the week, not a concept")
    if _is_date(words):
        return Verdict(False, "a date, not a concept")
    if all(_is_number_word(w) for w in words):
        return Verdict(False, "a number, not a name")
    # "Chapter 3", "Capítulo 2: La célula", "الفصل الثالث", "Unit IV - Cells". Alone, such
    # a word may be a concept ("a **section** is a surface that has been cut", "unit").
    if (
        words[0] in _phrases("numbered_heading_words")
        and len(words) > 1
        and _is_number_word(words[1])
    ):
        return Verdict(False, "a numbered heading")
    verdict = _fragment_check(raw, words)
    if not verdict.ok:
        return verdict
    # "ligament of the head of the femur" is a name: its function words do not count.
    content_words = [w for w in words if w not in _words("function_words")]
    if len(content_words) > NAME_MAX_WORDS or len(words) > NAME_MAX_WORDS_WITH_FUNCTION_WORDS:
        return Verdict(False, "a whole sentence, not a name")
    if _SENTENCE_END.search(raw) and not raw.endswith("."):
        return Verdict(False, "a question or exclamation, not a name")
    if raw.endswith(".") and len(words) > 2:
        return Verdict(False, "a whole sentence, not a name")
    # "Introduction to cells", "Summary of chapter 2": furniture opening a heading.
    if len(words) > 1 and " ".join(words[:2]) in _phrases("section_furniture"):
        return Verdict(False, "section furniture")
    if len(words) > 1 and words[0] in _phrases("section_furniture"):
        return Verdict(False, "a heading that opens with section furniture")
    # "How cells divide", "¿Qué es la ósmosis?", "What is osmosis".
    if words[0] in _phrases("question_words") and len(words) > 1:
        return Verdict(False, "a heading phrased as a question, not a name")
    if raw.lstrip().startswith("¿"):
        return Verdict(False, "a question, not a name")
    # "Osmosis is the movement of water": a copula inside means a statement.
    if len(words) > 2 and _holds_a_copula(words, written_words(raw)):
        return Verdict(False, "a whole sentence, not a name")
    return Verdict(True)


def _holds_a_copula(words: list[str], written: list[str]) -> bool:
    """A copula after the first word, written as one: Portuguese "é", not "e" ("and":
    "Ácidos e bases" is a name)."""
    inner = words[1:]
    for phrase in _phrases("definition_copulas"):
        copula = phrase.split()
        for i in range(len(inner) - len(copula) + 1):
            if inner[i : i + len(copula)] == copula and written_as(
                "definition_copulas", copula, written[1 + i : 1 + i + len(copula)]
            ):
                return True
    return False


def _fragment_check(raw: str, words: list[str]) -> Verdict:
    """Layout labels, function words, formulas, markup, bullets, instructions, clauses."""
    if _FORMULA_OR_MARKUP.search(raw):
        return Verdict(False, "a formula, markup or table fragment")
    if _SCRIPT_MARK.search(raw) and not any(
        sum(c.isalpha() for c in w) >= WORD_MIN_LETTERS and not _SCRIPT_MARK.search(w)
        for w in raw.split()
    ):
        return Verdict(False, "a formula, markup or table fragment")
    if any(raw.count(pair[0]) != raw.count(pair[1]) for pair in _BRACKET_PAIRS):
        return Verdict(False, "a formula, markup or table fragment")
    # "G+", "O/": a letter or two with symbols is a formula's piece ("pH", "LGBTQ+" are
    # names).
    symbols = [c for c in raw if not (c.isalnum() or c.isspace() or c in "-'’")]
    if symbols and sum(c.isalpha() for c in raw) < WORD_MIN_LETTERS:
        return Verdict(False, "a formula, markup or table fragment")
    if _LEADING_NUMBER_OR_BULLET.match(raw):
        return Verdict(False, "opens with a number or a bullet")
    if _KEYSTROKE.search(raw):
        return Verdict(False, "a calculator key or menu item, not a name")
    joined = " ".join(words)
    labels = _phrases("block_labels")
    single_labels = frozenset(p for p in labels if " " not in p)
    if joined in labels or all(w in single_labels for w in words):
        return Verdict(False, "exercise or layout furniture")
    # "Figure 3.2", "Table 2", "Example 1.4", "Problema 12", "Try It 3".
    for size in (1, 2, 3):
        if " ".join(words[:size]) in labels and all(_is_label_word(w) for w in words[size:]):
            return Verdict(False, "exercise or layout furniture")
    function_words = _words("function_words")
    if all(w in function_words or w.isdigit() for w in words):
        return Verdict(False, "only function words")
    # "AND event", "OR gate", "NOT gate": a function word in capitals beside a word in
    # lower case is a logical operator, which a name may open with.
    if any(c.islower() for c in raw):
        function_words = function_words - {
            w.casefold() for w in raw.split() if len(w) > 1 and w.isupper()
        }
    # "**always**", "**True**", "sin embargo": bold for emphasis, no name ("embargo" is).
    emphasis = _phrases("emphasis_words")
    if joined in emphasis or all(w in function_words or w in emphasis for w in words):
        return Verdict(False, "only emphasis or function words")
    if len(words) > 1 and all(len(w) == 1 for w in words):
        return Verdict(False, "an abbreviation of the writing (e.g., i.e.), not a name")
    content = words[1:] if len(words) > 1 and words[0] in _words("leading_articles") else words
    # A one-letter word is a label ("S phase", "vitamin D"), not an elided article.
    if any(w in function_words and len(w) > 1 for w in (content[0], content[-1])):
        return Verdict(False, "opens or closes on a function word: a fragment")
    if words[0] in _words("imperative_verbs"):
        return Verdict(False, "an instruction, not a concept")
    if any(w in _words("clause_words") for w in words[1:]):
        return Verdict(False, "a clause, not a name")
    return Verdict(True)


def strip_heading_number(text: str) -> str:
    """ "3.2 Osmosis" -> "Osmosis"; "Capítulo 2: La célula" -> "La célula" (else unchanged)."""
    stripped = re.sub(r"^\s*(?:\d+[.)]?)+(?:\s+|$)", "", text).strip()
    words = stripped.split()
    if len(words) >= 2:
        first = tokens(words[0])
        second = tokens(words[1])
        if (
            first
            and first[0] in _phrases("numbered_heading_words")
            and second
            and _is_number_word(second[0])
        ):
            rest = re.split(r"[:\-–—.]\s*", stripped, maxsplit=1)
            if len(rest) == 2 and rest[1].strip():
                return rest[1].strip()
    return stripped
