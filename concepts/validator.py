"""The validator (R-2.2): what an extractor proposes is a concept only if its name is one.

Rejected: section furniture in any student language ("Introduction", "Resumen",
"Exercícios", "Résumé", "ملخص", "Common mistakes"), numbered headings ("Chapter 3",
"Capítulo 2", "Unit IV", "الفصل الثالث"), heading-like names ("Introduction to cells",
"How cells divide", "3.2") and whole sentences. The word lists are language data
(`tutorbrain/language/data/<code>.py`: section_furniture, numbered_heading_words,
ordinal_words, question_words, definition_copulas).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from concepts.naming import tokens
from tutorbrain import language

# A concept name is short: "Electron transport chain" has 3 words; 6 is generous.
NAME_MAX_WORDS = 6
NAME_MAX_CHARS = 80
NAME_MIN_CHARS = 2

_ROMAN = re.compile(r"^[ivxlc]+$")
_SENTENCE_END = re.compile(r"[.!?؟。]\s*$")


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
    if all(_is_number_word(w) for w in words):
        return Verdict(False, "a number, not a name")
    # "Chapter 3", "Capítulo 2: La célula", "الفصل الثالث", "Unit IV - Cells".
    if words[0] in _phrases("numbered_heading_words") and (
        len(words) == 1 or _is_number_word(words[1])
    ):
        return Verdict(False, "a numbered heading")
    if len(words) > NAME_MAX_WORDS:
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
    if len(words) > 2 and any(
        f" {c} " in f" {' '.join(words[1:])} " for c in _phrases("definition_copulas")
    ):
        return Verdict(False, "a whole sentence, not a name")
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
