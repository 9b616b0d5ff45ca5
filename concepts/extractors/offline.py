"""The offline extractor: no model, a useful job on structured course notes (R-2.1).

What it reads, in every student language (en, es, pt, fr, ar; the words come from the
language data):

- definitions: "Osmosis is the ...", "**Osmosis** is ...", "La ósmosis es ...",
  "الانتشار هو ..." (a short term, then a definition copula);
- glossary lines: "Osmosis: the movement of ...", "- **ATP** — the cell's ...";
- emphasised terms: **bold** and __bold__ are key terms; a term set in *italics* inside
  another concept's definition and explained nowhere in the file is an assumed
  prerequisite of that concept (R-2.4);
- headings (Markdown `#`, underlined, or short stand-alone lines in PDF text), each
  checked by the validator, with the first sentences under them as the definition;
- builds-on: concept A builds on B when B's name occurs in A's definition;
- pages: where the file defines, heads or emphasises the concept.

What it cannot do: understand prose that never states a definition, tell a prerequisite
from a mere mention in the other direction ("the membrane controls osmosis" makes the
membrane build on osmosis), or find a concept only implied. The LLM extractor can.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from concepts.extractors.base import (
    DEFINITION_MAX_CHARS,
    MAX_CONCEPTS_PER_FILE,
    SUMMARY_MAX_CHARS,
    ExtractedConcept,
    Extraction,
)
from concepts.naming import concept_key, display_name, find_keys_in, same_but_number, tokens
from concepts.validator import name_check, strip_heading_number
from tutorbrain import language

# A term in "X is ..." has at most this many words (longer is a sentence subject).
TERM_MAX_WORDS = 5
# A glossary line's definition has at least this many words ("UNIT 4 NOTES" is none).
GLOSSARY_MIN_WORDS = 4
# How much text under a heading becomes the heading concept's definition.
HEADING_DEFINITION_SENTENCES = 2
# A stand-alone short line in PDF text is read as a heading when it has at most this
# many words and no sentence punctuation.
PLAIN_HEADING_MAX_WORDS = 6

# Strength of the evidence that a concept is explained; the strongest wins the text.
DEFINED = 3  # "X is ...", glossary line
HEADED = 2  # a heading with text under it
EMPHASISED = 1  # a bold term in running text

_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_UNDERLINE = re.compile(r"^\s*(=+|-+)\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+•·]|\d+[.)])\s+")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_ITALIC = re.compile(r"(?<![*\w])\*(?!\*)(.+?)(?<!\*)\*(?![*\w])|(?<![_\w])_(?!_)(.+?)_(?![_\w])")
_GLOSSARY = re.compile(r"^(?P<term>[^:：.!?]{2,80}?)\s*[:：]\s+(?P<text>\S.+)$")
_DASH = re.compile(r"^(?P<term>[^—–.!?]{2,80}?)\s+[—–-]{1,2}\s+(?P<text>\S.+)$")
_PARENTHESIS = re.compile(r"\s*\([^)]*\)")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?؟])\s+")
# Definitions are looked for per clause too: "the genotype is ...; the phenotype is ...".
_CLAUSE_SPLIT = re.compile(r"(?<=[.!?؟;؛])\s+")
_MD_MARKUP = re.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)|`")


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", _MD_MARKUP.sub("", text)).strip()


@cache
def _copulas() -> list[list[str]]:
    out = set()
    for code in language.languages():
        for phrase in language.data(code).get("definition_copulas", []):
            if tokens(phrase):
                out.add(tuple(tokens(phrase)))
    return [list(c) for c in sorted(out, key=len, reverse=True)]


@cache
def _articles() -> frozenset[str]:
    out: set[str] = set()
    for code in language.languages():
        for article in language.data(code).get("leading_articles", []):
            out.update(tokens(article))
    return frozenset(out)


@dataclass
class _Candidate:
    name: str
    strength: int
    definition: str
    pages: set[int] = field(default_factory=set)
    italic_terms: list[str] = field(default_factory=list)


@dataclass
class _Line:
    page: int
    text: str
    heading_level: int = 0  # 0 = not a heading


def _lines(pages: list[str]) -> list[_Line]:
    """Lines with page numbers; Markdown and underlined headings marked."""
    out: list[_Line] = []
    for page_number, page in enumerate(pages, start=1):
        raw = page.splitlines()
        for i, line in enumerate(raw):
            if _UNDERLINE.match(line) and out and out[-1].page == page_number and out[-1].text:
                out[-1].heading_level = 1 if "=" in line else 2
                continue
            match = _MD_HEADING.match(line)
            if match:
                out.append(_Line(page_number, match.group(2).strip(), len(match.group(1))))
                continue
            stripped = line.strip()
            if _looks_like_plain_heading(stripped, raw, i):
                out.append(_Line(page_number, stripped, 3))
                continue
            out.append(_Line(page_number, stripped))
    return out


def _looks_like_plain_heading(line: str, raw: list[str], i: int) -> bool:
    """A short, unpunctuated, capitalised line that starts a block (headings in PDF text).

    PDF text comes without blank lines, so "starts a block" means: first on the page,
    after a blank line, or after a line that ends a sentence.
    """
    if not line or _BULLET.match(line) or line[-1] in ".,;:!?؟)" or "**" in line:
        return False
    if len(line.split()) > PLAIN_HEADING_MAX_WORDS:
        return False
    first = line.lstrip("0123456789.) ")[:1]
    if not first or (first.isalpha() and first.islower()):
        return False
    before = raw[i - 1].strip() if i > 0 else ""
    after = raw[i + 1].strip() if i + 1 < len(raw) else ""
    if not after or _UNDERLINE.match(after):
        return False
    return before == "" or before[-1] in ".!?؟:)" or _looks_like_plain_heading(before, raw, i - 1)


def _paragraphs(lines: list[_Line]) -> list[tuple[list[_Line], _Line | None]]:
    """Blocks of text lines (a bullet item is its own block) with their heading."""
    blocks: list[tuple[list[_Line], _Line | None]] = []
    current: list[_Line] = []
    heading: _Line | None = None

    def flush() -> None:
        nonlocal current
        if current:
            blocks.append((current, heading))
        current = []

    for line in lines:
        if line.heading_level:
            flush()
            heading = line
            blocks.append(([], heading))
            continue
        if not line.text:
            flush()
            continue
        if _BULLET.match(line.text) or (not current and _is_glossary_line(line.text)):
            flush()
            current = [_Line(line.page, _BULLET.sub("", line.text))]
            flush()
            continue
        current.append(line)
    flush()
    return blocks


def _is_glossary_line(text: str) -> bool:
    """ "Term: definition" or "Term - definition"; not a title like "GENETICS - UNIT 4 NOTES"."""
    match = _GLOSSARY.match(text) or _DASH.match(text)
    if match is None:
        return False
    if len(_plain(match.group("term")).split()) > TERM_MAX_WORDS + 1:
        return False
    definition = _plain(match.group("text"))
    return len(definition.split()) >= GLOSSARY_MIN_WORDS and name_check(
        strip_heading_number(definition)
    ).reason not in ("a numbered heading", "section furniture")


def _term_before_copula(sentence: str) -> tuple[str, str] | None:
    """("Osmosis", "Osmosis is the diffusion...") if the sentence defines a short term."""
    bold = _BOLD.match(sentence.strip())
    words = _plain(sentence).split()
    if words and ("'" in words[0] or "’" in words[0]):
        # French elision: "L'osmose est ..." -> "osmose est ...".
        article, _, rest = words[0].replace("’", "'").partition("'")
        if rest and " ".join(tokens(article)) in _articles():
            words = [rest, *words[1:]]
    if len(words) < 3:
        return None
    lowered = [" ".join(tokens(w)) for w in words]
    for end in range(1, min(TERM_MAX_WORDS + 2, len(words))):
        for copula in _copulas():
            if lowered[end : end + len(copula)] == copula:
                term_words = words[:end]
                if [t for t in lowered[:end] if t] and lowered[0] in _articles() and end > 1:
                    term_words = words[1:end]
                term = " ".join(term_words).strip(" ,;:")
                if bold:
                    term = _plain(bold.group(1) or bold.group(2))
                elif not _could_be_term(term_words):
                    return None
                after = words[end + len(copula) :]
                return (term, sentence) if after else None
    return None


def _could_be_term(term_words: list[str]) -> bool:
    if not term_words or len(term_words) > TERM_MAX_WORDS:
        return False
    toks = [t for w in term_words for t in tokens(w)]
    if not toks:
        return False
    stops = language.stop_words()
    # "This is", "It is", "There are": a pronoun is no term.
    return toks[0] not in stops and toks[-1] not in stops


class OfflineExtractor:
    name = "offline"

    def extract(self, *, pages: list[str], language: str = "", file_name: str = "") -> Extraction:
        lines = _lines(pages)
        candidates: dict[str, _Candidate] = {}
        rejected: list[str] = []
        order: list[str] = []

        def offer(name: str, strength: int, definition: str, page: int, block_text: str) -> None:
            # "ATP (adenosine triphosphate)" is named "ATP".
            name = _PARENTHESIS.sub("", _plain(name)).strip(" :;,.-–—")
            verdict = name_check(name)
            if not verdict.ok:
                if name and name not in rejected:
                    rejected.append(name)
                return
            key = concept_key(name)
            # "2.2 Genes" over "A gene is ...": one concept in the singular and plural.
            key = next((k for k in candidates if same_but_number(k, key)), key)
            italic = [_plain(m.group(1) or m.group(2)) for m in _ITALIC.finditer(block_text)]
            existing = candidates.get(key)
            if existing is None:
                candidates[key] = _Candidate(name, strength, definition, {page}, italic)
                order.append(key)
                return
            existing.pages.add(page)
            if strength > existing.strength:
                existing.strength, existing.definition = strength, definition
                existing.italic_terms = italic
                if strength == DEFINED:
                    existing.name = name

        blocks = _paragraphs(lines)
        for index, (block, heading) in enumerate(blocks):
            if block and heading is not None and _defines_nothing(heading.text):
                # "Common mistakes", "Exercises", "Ejercicios": their lines are no
                # definitions ("Saying that osmosis moves salt: it moves water").
                continue
            if not block and heading is not None:
                title = strip_heading_number(_plain(heading.text))
                following = blocks[index + 1][0] if index + 1 < len(blocks) else []
                body = " ".join(line.text for line in following)
                sentences = _SENTENCE_SPLIT.split(_plain(body))[:HEADING_DEFINITION_SENTENCES]
                definition = " ".join(s for s in sentences if s)
                # A section explains its heading's concept only if it names it; a title
                # like "Energy in the cell" over "Course notes, part 2" is no concept.
                named = find_keys_in(definition, {concept_key(title): True})
                if definition and named:
                    offer(title, HEADED, definition, heading.page, body)
                else:
                    verdict = name_check(title)
                    if not verdict.ok and title not in rejected:
                        rejected.append(title)
                continue
            text = " ".join(line.text for line in block)
            page = block[0].page
            glossary = _GLOSSARY.match(text) or _DASH.match(text)
            if glossary and _is_glossary_line(text):
                term = _plain(glossary.group("term"))
                offer(term, DEFINED, f"{term}: {_plain(glossary.group('text'))}", page, text)
            for sentence in _CLAUSE_SPLIT.split(text):
                found = _term_before_copula(sentence)
                if found:
                    offer(found[0], DEFINED, _plain(found[1]), page, text)
                for match in _BOLD.finditer(sentence):
                    term = match.group(1) or match.group(2)
                    offer(term, EMPHASISED, _plain(sentence), page, sentence)

        keys = order[:MAX_CONCEPTS_PER_FILE]
        names = {key: display_name(candidates[key].name) for key in keys}
        concepts: list[ExtractedConcept] = []
        for key in keys:
            candidate = candidates[key]
            definition = candidate.definition[:DEFINITION_MAX_CHARS]
            builds_on = [
                names[other]
                for other, _ in find_keys_in(definition, {k: k for k in keys})
                if other != key
            ]
            assumes = []
            for term in candidate.italic_terms:
                term_key = concept_key(term)
                if term_key and term_key not in names and name_check(term).ok:
                    assumes.append(term)
            concepts.append(
                ExtractedConcept(
                    name=display_name(candidate.name),
                    summary=_first_sentence(definition),
                    definition=definition,
                    builds_on=list(dict.fromkeys(builds_on)),
                    assumes=list(dict.fromkeys(assumes)),
                    pages=sorted(candidate.pages),
                )
            )
        return Extraction(extractor=self.name, concepts=concepts, rejected=rejected)


def _defines_nothing(heading: str) -> bool:
    return " ".join(tokens(strip_heading_number(_plain(heading)))) in _section_words()


@cache
def _section_words() -> frozenset[str]:
    out: set[str] = set()
    for code in language.languages():
        for phrase in language.data(code).get("non_definition_sections", []):
            out.add(" ".join(tokens(phrase)))
    return frozenset(out)


def _first_sentence(text: str) -> str:
    first = _SENTENCE_SPLIT.split(text.strip(), maxsplit=1)[0] if text.strip() else ""
    return first[:SUMMARY_MAX_CHARS]
