"""The offline extractor: no model; it reads the author's signals first (R-2.1).

Two kinds of files, told apart by whether the author marks key terms:

- **Marked files** (at least MARKED_MIN_TERMS distinct bold spans in running text, as in a
  textbook or tidy notes; one is enough in a section laid out as a book's, with figure,
  table or exercise labels): the candidates are the terms the author marked — **bold** and
  __bold__ spans in running text, lines of a glossary section, definition-list lines whose
  term is bold. A plain "X is ..." sentence alone is no candidate there: the author chose
  what to mark, and in real textbooks the subject of such a sentence is almost never a
  term ("Is", "Smartphone companies"). The bold span's sentence is its definition.
  Bold is parsed with nesting (`***The **test statistic** is:***` marks "test statistic"),
  fill-in blanks (`___ and ___`) are no markup, and a line that is nothing but one bold
  span ("**Problem**", "**Figure 3 ...**", "**Note**") is a label, not a term. A capitalised
  bold name written nowhere in lower case in the file ("Aristotle", "United Nations",
  "Sierra Club") is a person, place or organisation named in passing, not a key term;
  a one-capital eponym ("Golgi apparatus") and an acronym ("ATP") stay.
- **Unmarked files** (plain notes, a PDF set without bold): the candidates need a
  definition pattern plus termhood evidence: "X is a/an/the ...", "X refers to ...", "...
  is called X", "Term: definition" and "Term - definition" lines, headings whose section
  names them; a bare "X is ..." counts only when X is a noun-phrase-shaped name that the
  file uses again, and a sentence's subject only when it is shaped like a name ("Cells in
  this layer are ..." is not).

In both, "Long form (ABBR)" gives one concept with the abbreviation as another of its
names ("interquartile range (IQR)"), every name goes through the validator, and a concept
builds on the concepts its definition uses (never on a function word: those are no
concepts). An *italic* term inside a definition, explained nowhere in the file, is an
assumed prerequisite (R-2.4).

What it cannot do: understand prose that never states a definition, tell a prerequisite
from a mere mention in the other direction ("the membrane controls osmosis" makes the
membrane build on osmosis), or find a concept only implied. The LLM extractor can.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache, lru_cache

from concepts.extractors.base import (
    DEFINITION_MAX_CHARS,
    SUMMARY_MAX_CHARS,
    ExtractedConcept,
    Extraction,
    concept_bound,
)
from concepts.lookup import word_variants
from concepts.naming import (
    concept_key,
    could_be_abbreviation,
    display_name,
    find_keys_in,
    is_abbreviation_of,
    key_tokens_text,
    same_but_number,
    tokens,
    written_as,
    written_words,
)
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
# A file with at least this many distinct bold terms in running text marks its terms;
# one or two bold words in notes are emphasis, not a system.
MARKED_MIN_TERMS = 3
# An unmarked "X is ..." subject must occur at least this often in the file (the
# definition included) to count as a term: a term is used again, a sentence subject not.
UNMARKED_MIN_USES = 2

# An assumed term has at least this many letters ("aq", "l" are symbols).
WORD_MIN_LETTERS = 3
# ... and at most this many words (a longer italic run is emphasis of a clause).
ASSUMED_MAX_WORDS = 3

# Strength of the evidence that a concept is explained; the strongest wins the text.
DEFINED = 3  # "X is ...", glossary line, a bold term in its defining sentence
HEADED = 2  # a heading with text under it
EMPHASISED = 1  # a bold term in running text

_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_UNDERLINE = re.compile(r"^\s*(=+|-+)\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+•·]|\d+[.)])\s+")
# Fill-in blanks are no markup.
_BLANKS = re.compile(r"_{3,}")
# Innermost **bold** (may hold *italics*: "**orbital *sp*^3**"); __bold__ likewise.
_BOLD = re.compile(
    r"\*\*(?=[^\s*])((?:[^*]|\*(?!\*)[^*\s][^*]*?\*(?:(?!\*)|(?=\*\*(?!\*))))+?)(?<!\s)\*\*"
    r"|(?<![_\w])__(?=[^\s_])([^_]+?)(?<!\s)__(?![_\w])"
)
# Bold that opens with italics ("***z*-score**", "***orbitales híbridos* sp**"), which
# _BOLD's innermost match does not see; an italic around the whole bold is no such span.
_BOLD_FROM_ITALIC = re.compile(r"(?<!\*)\*\*\*(?=[^\s*])([^*]+?)\*(?!\*)([^*]*?)(?<!\s)\*\*(?!\*)")
# A letter set as maths and joined to a word names a term ("**$z$-score**", "$p$-value";
# a converter may leave a space at the maths' edge: "**$y$ -intercept**", "**$n$ th root**").
_MATH_LETTER = re.compile(
    r"\$\s*([^\W\d_]{1,2})\s*\$ ?(?=-\w|th\b)|(?<=\w-) ?\$\s*([^\W\d_]{1,2})\s*\$"
)
# An italic run inside a name, even between letters ("orbitales híbridos *sp*^3*d*").
_ITALIC_IN_NAME = re.compile(r"\*([^\W\d_][^*\s]*)\*")
# ... or opening it: "**$t$ distribution**", "**$F$ ratio**".
_LEADING_MATH_LETTER = re.compile(r"^\s*\$\s*([^\W\d_]{1,2})\s*\$\s+(?=\w)")
# A symbol after a term's name: "entalpía estándar de formación $Δ H_f^°$".
_TRAILING_MATH = re.compile(r"\s*\$[^$]*\$\s*$")
_ITALIC = re.compile(r"(?<![*\w])\*(?!\*)(.+?)(?<!\*)\*(?![*\w])|(?<![_\w])_(?!_)(.+?)_(?![_\w])")
_GLOSSARY = re.compile(r"^(?P<term>[^:：.!?|]{2,80}?)\s*[:：]\s+(?P<text>\S.+)$")
# "Term - text", "Term — text", and "Term—This is …" (a dash, not a hyphen, may touch).
_DASH = re.compile(r"^(?P<term>[^—–.!?|]{2,80}?)(?:\s+[—–-]{1,2}\s+|\s*[—–]\s*)(?P<text>\S.+)$")
_LEADING_ASIDE = re.compile(r"^\s*\([^()]*\)")
_PARENTHESIS = re.compile(r"\s*\(([^()]*)\)")
# No sentence ends at a genus abbreviated before its species: "E. coli", "S. aureus".
_NOT_A_GENUS = r"(?!(?<=(?<!\w)[A-Z]\.)\s+[a-z])"
# Nor at a middle initial: "Donald J. **Trump** is …", "John F. Kennedy" (a given name of
# 2-12 letters, one lookbehind per length: Python's are of fixed width).
_NOT_AN_INITIAL = (
    "(?!(?:"
    + "|".join(rf"(?<=(?<!\w)[A-Z][a-z]{{{n}}} [A-Z]\.)" for n in range(1, 12))
    + r")\s+[*_]*[A-Z])"
)
_SENTENCE_SPLIT = re.compile(
    r"(?:(?<=[.!?؟])|(?<=[.!?؟][)\]”’\"]))" + _NOT_A_GENUS + _NOT_AN_INITIAL + r"\s+"
)
# Definitions are looked for per clause too: "the genotype is ...; the phenotype is ...".
_CLAUSE_SPLIT = re.compile(
    r"(?:(?<=[.!?؟;؛])|(?<=[.!?؟;؛][)\]”’\"]))" + _NOT_A_GENUS + _NOT_AN_INITIAL + r"\s+"
)
_MD_MARKUP = re.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)|`")
_ADDRESS = re.compile(r"\S*(?:://|www\.|\.(?:com|org|edu|gov|net)\b)\S*|\S+/\S+")
# What a bold term's name loses at its ends.
_NAME_TRIM = " :;,.-–—\"'“”‘’"


def _plain_name(term: str) -> str:
    """A marked term as plain text, its italics inside words too: "*sp*^3*d*" is sp^3d
    (_plain leaves a star that sits between two letters)."""
    return _plain(_ITALIC_IN_NAME.sub(r"\1", term))


def _plain(text: str) -> str:
    text = _MATH_LETTER.sub(lambda m: m.group(1) or m.group(2), text)
    return re.sub(r"\s+", " ", _MD_MARKUP.sub("", _BLANKS.sub(" ", text))).strip()


@cache
def _copulas() -> list[list[str]]:
    out = set()
    for code in language.languages():
        for phrase in language.data(code).get("definition_copulas", []):
            if tokens(phrase):
                out.add(tuple(tokens(phrase)))
    return [list(c) for c in sorted(out, key=len, reverse=True)]


@cache
def _words_of(key: str) -> frozenset[str]:
    out: set[str] = set()
    for code in language.languages():
        for phrase in language.data(code).get(key, []):
            out.update(tokens(phrase))
    return frozenset(out)


def _articles() -> frozenset[str]:
    return _words_of("leading_articles")


@cache
def _phrases_of(key: str) -> frozenset[str]:
    out: set[str] = set()
    for code in language.languages():
        for phrase in language.data(code).get(key, []):
            joined = " ".join(tokens(phrase))
            if joined:
                out.add(joined)
    return frozenset(out)


@dataclass
class _Candidate:
    name: str
    strength: int
    definition: str
    pages: set[int] = field(default_factory=set)
    italic_terms: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)


@dataclass
class _Line:
    page: int
    text: str
    heading_level: int = 0  # 0 = not a heading
    label: bool = False  # a line that is one bold span: "**Problem**", "**Figure ...**"


def _title(heading: str) -> str:
    """A heading's words without its number or markup, as the language data lists titles."""
    return " ".join(tokens(strip_heading_number(_plain(heading))))


def _names_front_matter(line: _Line) -> bool:
    """A heading naming a book's preface, foreword, acknowledgements… (language data
    `front_matter_titles`, any of the five languages)."""
    return _title(line.text) in _phrases_of("front_matter_titles")


def _without_front_matter(lines: list[_Line]) -> list[_Line]:
    """The lines outside a book's front matter. A preface names the publisher, the
    authors and the book's own features ("OpenStax", "Community Hubs", "Technology
    Partners" in every OpenStax preface), never a key term of the subject.

    A heading naming front matter opens it; the next heading of the same or a higher
    rank that names none closes it ("# Preface" … "## Community Hubs" … "# Chapter 1").
    Where the headings have one rank only (a PDF whose headings are all one size), rank
    tells nothing and a preface's own sections look like any heading; then the book's
    body begins at a section number ("1.1 Overview of Anatomy"; a preface's "Unit 1:
    Levels of Organization" is no start) or at a section that marks key terms in its
    text, which a preface does not, and at the latest FRONT_MATTER_MAX_CHARS in: a whole
    book uploaded as one file loses its preface and keeps its chapters."""
    one_rank = len({line.heading_level for line in lines if line.heading_level}) <= 1
    marking = _sections_marking_terms(lines) if one_rank else set()
    out: list[_Line] = []
    level = 0  # the open front matter's heading level; 0 when none is open
    length = 0  # characters of front matter read since it opened
    for index, line in enumerate(lines):
        if line.heading_level and (not level or line.heading_level <= level):
            if _names_front_matter(line):
                level, length = line.heading_level, (length if level else 0)
            elif (
                not level
                or not one_rank
                or _SECTION_NUMBER.match(_plain(line.text))
                or index in marking
                or length > FRONT_MATTER_MAX_CHARS
            ):
                level = 0
        if not level:
            out.append(line)
        length += len(line.text)
    return out


# "1.1 Overview", "2.3.4 Osmosis": a numbered section of a book's body.
_SECTION_NUMBER = re.compile(r"^\s*\d+\.\d+(?:\.\d+)*\.?\s")
# Front matter of headings of one rank runs at most this long (the dev books' prefaces:
# 15,000–19,000 characters), so a book whose body shows neither mark is still read.
FRONT_MATTER_MAX_CHARS = 40_000


def _sections_marking_terms(lines: list[_Line]) -> set[int]:
    """Indexes of the headings whose text, to the next heading, marks a term in bold."""
    marking: set[int] = set()
    heading: int | None = None
    for index, line in enumerate(lines):
        if line.heading_level:
            heading = index
        elif heading is not None and not line.label and _bold_terms(line.text):
            marking.add(heading)
    return marking


def _names_a_glossary(line: _Line) -> bool:
    """A heading naming a glossary ("Glossary", "Key Terms", "Glosario"; language data
    `glossary_headings`)."""
    return _title(line.text) in _phrases_of("glossary_headings")


def _is_label_line(line: str) -> bool:
    stripped = _BLANKS.sub(" ", line).strip()
    if not stripped.startswith("**"):
        return False
    spans = list(_BOLD.finditer(stripped))
    if len(spans) != 1:
        return False
    rest = (stripped[: spans[0].start()] + stripped[spans[0].end() :]).strip(" *_:.")
    return not rest


def _lines(pages: list[str]) -> list[_Line]:
    """Lines with page numbers; Markdown and underlined headings and bold labels marked.
    A file that writes its headings in Markdown has no plain headings: its short lines
    are a paragraph's soft breaks ("Diffusion\n is the movement of …")."""
    out: list[_Line] = []
    markdown = any(_MD_HEADING.match(line) for page in pages for line in page.splitlines())
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
            if _is_label_line(stripped) and _starts_a_block(raw, i):
                out.append(_Line(page_number, stripped, label=True))
                continue
            if not markdown and _looks_like_plain_heading(stripped, raw, i):
                out.append(_Line(page_number, stripped, 3))
                continue
            out.append(_Line(page_number, stripped))
    return out


def _starts_a_block(raw: list[str], i: int) -> bool:
    """Whether line i starts a block: first on its page, or after a blank line, a
    heading or a label. A bold line right under a line of text continues its paragraph
    (Markdown's soft break): "Human\n **anatomy**\n is the study of ..." is a term in a
    sentence, not a label like "**Figure 2**"."""
    if i == 0 or not raw[i - 1].strip():
        return True
    previous = raw[i - 1].strip()
    return bool(_MD_HEADING.match(previous) or _UNDERLINE.match(previous)) or _is_label_line(
        previous
    )


def _looks_like_plain_heading(line: str, raw: list[str], i: int) -> bool:
    """A short, unpunctuated, capitalised line that starts a block (headings in PDF text).

    PDF text comes without blank lines, so "starts a block" means: first on the page,
    after a blank line, or after a line that ends a sentence.
    """
    if not line or _BULLET.match(line) or line[-1] in ".,;:!?؟)" or "**" in line:
        return False
    if "|" in line or len(line.split()) > PLAIN_HEADING_MAX_WORDS:
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

    # "**Example** … **Solution** … El zinc es un miembro del grupo 12": a worked
    # example's sentences are about its own things (zinc, aspirin), not the course's
    # terms. It runs from its label (and the title right under it) to the next heading,
    # to a label of another kind after some of its text ("**Figure**", "**Note …**": the
    # section again), through the one paragraph after its answer label ("**Answer:**"),
    # or to a later paragraph that marks a term: the section's own text again, after a
    # solution or a "Try It" the file does not close with any label.
    example, example_text, later_paragraph = _NOT_IN_EXAMPLE, False, False
    glossary = False
    for line in lines:
        if line.heading_level:
            flush()
            heading = line
            example = _NOT_IN_EXAMPLE
            glossary = _names_a_glossary(line)
            blocks.append(([], heading))
            continue
        if line.label and glossary:
            # A book's "Key Terms": "**Frequency**" on its line, its meaning on the next
            # ("the number of times a value occurs"): one entry, read as "Term: text".
            flush()
            current = [_Line(line.page, f"{line.text.rstrip(' :')}:")]
            continue
        if line.label:
            flush()
            opened = _example_state(line.text)
            if not (opened == _NOT_IN_EXAMPLE and example == _IN_EXAMPLE and not example_text):
                example, example_text, later_paragraph = opened, False, False
            continue
        if example == _ANSWER_READ and not line.text:
            example = _NOT_IN_EXAMPLE
        if example != _NOT_IN_EXAMPLE and later_paragraph and _marks_a_term(line.text):
            example = _NOT_IN_EXAMPLE
        if example != _NOT_IN_EXAMPLE:
            later_paragraph = later_paragraph or (example_text and not line.text)
            example_text = example_text or bool(line.text)
            if line.text and example == _ANSWER_NEXT:
                example = _ANSWER_READ
            continue
        if not line.text or line.text.startswith("|"):
            # A table row ends a paragraph and is none itself.
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


_NOT_IN_EXAMPLE, _IN_EXAMPLE, _ANSWER_NEXT, _ANSWER_READ = range(4)


def _marks_a_term(text: str) -> bool:
    """A line of running text with a bold span that could name a concept (not a table
    row, not "**Step 1:**")."""
    if text.startswith("|"):
        return False
    return any(name_check(_plain_name(term)).ok for term, _, _ in _bold_terms(text))


def _example_state(label: str) -> int:
    """What a bold label line opens: a worked example or exercise ("**Example**",
    "**Solución**", "**Compruebe lo aprendido**": language data `example_labels`), its
    answer (`example_answer_labels`: one paragraph follows), or neither."""
    words = " ".join(tokens(_plain(label)))
    if words in _phrases_of("example_answer_labels"):
        return _ANSWER_NEXT
    return _IN_EXAMPLE if words in _phrases_of("example_labels") else _NOT_IN_EXAMPLE


def _is_glossary_line(text: str) -> bool:
    """ "Term: definition" or "Term - definition"; not a title like "GENETICS - UNIT 4 NOTES"."""
    match = _GLOSSARY.match(text) or _DASH.match(text)
    if match is None:
        return False
    term_words = _plain(match.group("term")).split()
    if len(term_words) > TERM_MAX_WORDS + 1 or not _could_be_term(term_words):
        return False
    definition = _plain(match.group("text"))
    if not definition[:1].isalpha():
        return False  # "Step 1: 2.5 x 3", "Mean: = 4.2": a calculation, not a definition
    return len(definition.split()) >= GLOSSARY_MIN_WORDS and name_check(
        strip_heading_number(definition)
    ).reason not in ("a numbered heading", "section furniture")


def _strip_elision(words: list[str]) -> list[str]:
    # French elision: "L'osmose est ..." -> "osmose est ...".
    if words and ("'" in words[0] or "’" in words[0]):
        article, _, rest = words[0].replace("’", "'").partition("'")
        if rest and " ".join(tokens(article)) in _articles():
            return [rest, *words[1:]]
    return words


def _term_before_copula(sentence: str) -> tuple[str, str, bool] | None:
    """("Osmosis", sentence, strong) if the sentence defines a short term.

    `strong`: the copula is followed by an article or is itself a naming phrase
    ("refers to", "is defined as"): a definition pattern, not just any "X is ...".
    """
    words = _strip_elision(_plain(sentence).split())
    if len(words) < 3:
        return None
    lowered = [" ".join(tokens(w)) for w in words]
    for end in range(1, min(TERM_MAX_WORDS + 2, len(words))):
        for copula in _copulas():
            if lowered[end : end + len(copula)] == copula and written_as(
                "definition_copulas",
                copula,
                [" ".join(written_words(w)) for w in words[end : end + len(copula)]],
            ):
                if copula in _introducing_phrases():
                    # "The hollow region is called the medullary cavity": the name
                    # comes after the phrase (`_terms_after_naming_phrase`), not before.
                    return None
                term_words = words[:end]
                if [t for t in lowered[:end] if t] and lowered[0] in _articles() and end > 1:
                    term_words = words[1:end]
                if not _could_be_term(term_words) or not _shaped_like_a_name(term_words):
                    return None
                term = " ".join(term_words).strip(_NAME_TRIM)
                after = lowered[end + len(copula) :]
                if not after:
                    return None
                # "X is ..." / "X es ..." alone is weak; "X is a ...", "X refers to ...",
                # and the Arabic "X هو ..." are definition patterns.
                weak = " ".join(copula) in _phrases_of("weak_copulas")
                strong = not weak or after[0] in _articles()
                return term, sentence, strong
    return None


def _terms_after_naming_phrase(sentence: str) -> list[tuple[list[str], bool]]:
    """ "... is called the medullary cavity, which ...", "se denomina presión parcial":
    the words a naming phrase introduces, up to a punctuation mark, an opening
    parenthesis, a one-letter word ("o", "y": "or", "and") or a function word that is no
    part of a name ("which", "in"), at most TERM_MAX_WORDS. Where the name ends is a
    guess ("called alternative splicing makes proteins"): the caller keeps the part the
    file uses again."""
    words_here = set(tokens(sentence))
    if not any(set(phrase) <= words_here for phrase in _introducing_phrases()):
        return []  # most sentences name nothing: a set test per phrase, not a scan
    words = _plain(sentence).split()
    lowered = [" ".join(tokens(w)) for w in words]
    # The sentence's tokens, each with the word it belongs to: "qu'on appelle" is three
    # tokens in two words.
    flat = [(t, i) for i, w in enumerate(lowered) for t in w.split()]
    joining = _joining()
    out = []
    for phrase in _introducing_phrases():
        n = len(phrase)
        for p in range(len(flat) - n):
            if [t for t, _ in flat[p : p + n]] != phrase:
                continue
            if p and flat[p - 1][1] == flat[p][1]:
                continue  # the phrase starts inside a word
            if flat[p + n - 1][1] == flat[p + n][1]:
                continue  # or ends inside one
            start = flat[p + n][1]
            first = _strip_elision([words[start]])[0]  # "l'osmose" -> "osmose"
            if first != words[start]:
                words[start], lowered[start] = first, " ".join(tokens(first))
            elif lowered[start] in _articles() and start + 1 < len(words):
                start += 1
            term: list[str] = []
            punctuated = False  # the name ends at a punctuation mark or an aside
            for word, low in zip(words[start:], lowered[start:], strict=False):
                opens_an_aside = word[:1] in "([{\"“‘'—–"
                one_letter = len(word) == 1 and word.islower()
                if not low or opens_an_aside or one_letter:
                    punctuated = opens_an_aside
                    break
                if low in _words_of("function_words") and low not in joining:
                    break
                # An article opens a name only after a joining word ("angle of the
                # mandible"); elsewhere it opens the next phrase ("removes the introns").
                after_joining = bool(term) and " ".join(tokens(term[-1])) in joining
                if term and low in _articles() and not after_joining:
                    break
                term.append(word.strip(_NAME_TRIM + "()"))
                if word[-1:] in _NAME_TRIM + "()":
                    punctuated = True
                    break
                if len(term) > TERM_MAX_WORDS:
                    break
            while term and " ".join(tokens(term[-1])) in joining:
                term.pop()
            if term and len(term) <= TERM_MAX_WORDS and _could_be_term(term):
                out.append((term, punctuated))
    return out


def _named_part(term_words: list[str], punctuated: bool, text: str) -> str:
    """The name a naming phrase gives: whole when a punctuation mark ends it ("called the
    medullary cavity, which"), else its longest start of two words or more that the file
    writes again ("called alternative splicing makes ..." -> "alternative splicing"; a
    first word alone is too often an adjective); a one-word name as it is."""
    if punctuated or len(term_words) == 1:
        return " ".join(term_words)
    for n in range(len(term_words), 1, -1):
        name = " ".join(term_words[:n])
        if _uses(name, text) >= UNMARKED_MIN_USES:
            return name
    return ""


@cache
def _introducing_phrases() -> list[list[str]]:
    # The naming phrases after which the name comes ("defined as" is followed by the
    # definition instead), longest first.
    phrases = {tuple(p.split()) for p in _phrases_of("naming_phrases") if p != "defined as"}
    return [list(p) for p in sorted(phrases, key=lambda p: (-len(p), p))]


def _could_be_term(term_words: list[str]) -> bool:
    if not term_words or len(term_words) > TERM_MAX_WORDS:
        return False
    toks = [t for w in term_words for t in tokens(w)]
    if not toks:
        return False
    stops = language.stop_words()
    # "This is", "It is", "There are": a pronoun is no term.
    return toks[0] not in stops and toks[-1] not in stops


def _shaped_like_a_name(term_words: list[str]) -> bool:
    """Whether an unmarked sentence's subject is shaped like a term's name: inside it no
    function word but an article or a joining word ("angle of the mandible", "ley de
    Boyle"), and no dash. "Cells in this layer", "Blood and lymph", "Carbon by
    definition" or "Carotid canal—The carotid canal" are phrases that happen to open a
    sentence; the authors' glossaries hold almost no name shaped so. Judged on what the
    name keeps: "Lordosis, or swayback," and "floating ribs (11–12)" are names."""
    name = _before_aside(" ".join(term_words))
    if any(dash in name for dash in "—–"):
        return False
    inner = tokens(name)[1:-1]
    return not any(t in _words_of("function_words") and t not in _joining() for t in inner)


def _before_aside(name: str) -> str:
    """What a name keeps of its text: "carga nuclear efectiva, o Z_eff", "óxido de zinc,
    ZnO", "presión (STP" -> the words before the aside; parentheses dropped."""
    return re.split(r"\s*[,(]", _PARENTHESIS.sub("", name), maxsplit=1)[0]


@cache
def _joining() -> frozenset[str]:
    """Words that may stand inside a name: articles and joining words ("of the")."""
    return _articles() | _words_of("name_joining_words")


def _bold_terms(text: str) -> list[tuple[str, int, int]]:
    """(term as written, start, end) of every innermost bold span of a text."""
    text = _BLANKS.sub(lambda m: " " * len(m.group(0)), text)
    spans = [(m.group(1) or m.group(2), m.start(), m.end()) for m in _BOLD.finditer(text)]
    if "***" in text:
        spans += [
            (f"*{m.group(1)}*{m.group(2)}", m.start(), m.end())
            for m in _BOLD_FROM_ITALIC.finditer(text)
            if not any(start < m.end() and m.start() < end for _, start, end in spans)
        ]
        spans.sort(key=lambda span: span[1])
    return spans


def _is_marked(lines: list[_Line]) -> bool:
    """At least MARKED_MIN_TERMS distinct bold spans in running text; or one, in a file
    laid out as a book's section (a "**Figure …**", "**Table**", "**Exercise**" label on
    its own line: language data `layout_labels`), where bold is the book's mark for a
    term even in a section that introduces only one or two."""
    seen: set[str] = set()
    for line in lines:
        if line.heading_level or line.label:
            continue
        for term, _, _ in _bold_terms(line.text):
            seen.add(concept_key(_plain_name(term)))
            if len(seen) >= MARKED_MIN_TERMS:
                return True
    return bool(seen) and any(_is_layout_label(line) for line in lines)


def _is_layout_label(line: _Line) -> bool:
    words = tokens(_plain(line.text))
    return line.label and bool(words) and words[0] in _words_of("layout_labels")


def _doctrine_suffixes() -> tuple[str, ...]:
    return tuple(sorted(_words_of("doctrine_suffixes")))


def _is_proper_name(name: str, text: str) -> bool:
    """ "Aristotle", "Sierra Club", "15th Amendment": every word capitalised, and never
    written in lower case in the file (`text`). An acronym ("ATP") and an eponym with a
    lower-case word ("Golgi apparatus", "Schwann cell") are terms; so is "Reality" when
    it only opens a sentence and the file writes "reality" elsewhere; so is a name with
    a word of `idea_kind_words` ("Hund's Rule", "Equal Protection Clause")."""
    function_words = _words_of("function_words")
    if concept_key(name).endswith(_doctrine_suffixes()):
        return False  # a doctrine ("Marxism", "Maoísmo"), capitalised for its founder
    if not _words_of("idea_kind_words").isdisjoint(tokens(name)):
        return False  # a law or idea ("Central Limit Theorem", "Duverger's Law")
    words = [w for w in name.split() if w.casefold() not in function_words]
    letters = [c for c in name if c.isalpha()]
    if not letters or all(c.isupper() for c in letters):
        return False
    alphabetic = [w for w in words if w[:1].isalpha()]
    if not alphabetic or not all(w[:1].isupper() for w in alphabetic):
        return False
    # A name capitalises every part of a joined word ("Gay-Lussac", "Coca-Cola"); a
    # term's joined word may not ("X-ray", "HIV-positive").
    if any(part[:1].islower() for w in alphabetic for part in w.split("-")[1:]):
        return False
    lowered = name[:1].lower() + name[1:] if len(name.split()) == 1 else name.lower()
    # Or its plural: "**Astrocyte** cells, named for …" where the file writes "astrocytes".
    # (Not a singular: "Wells" is a name however often the file writes "well".)
    head, _, last = lowered.rpartition(" ")
    plurals = [w for w in word_variants(last) if len(w) > len(last)]
    forms = {f"{head} {w}" if head else w for w in [last, *plurals]}
    return not any(_written(form, text) for form in forms)


def _written(words: str, text: str) -> bool:
    r"""Whether `text` writes `words` whole (not inside longer words): as the pattern
    (?<!\w)words(?!\w) would find them, but with str.find, which skips through a whole
    book in a fraction of the time (a book's 2,700 names: 7 s by pattern)."""
    start = text.find(words)
    while start != -1:
        end = start + len(words)
        if (start == 0 or not _is_word_char(text[start - 1])) and (
            end == len(text) or not _is_word_char(text[end])
        ):
            return True
        start = text.find(words, start + 1)
    return False


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"  # what \w matches


def _bolds_people(lines: list[_Line]) -> bool:
    """Whether the file sets people's names in bold: a bold span continues a capitalised
    name ("Hosni **Mubarak**"). Where it does, a bold proper name is as likely someone
    or something named in passing ("**Sierra Club**"); where it does not, a bold name
    of two words or more is the author's term ("the **Columbian Exchange**", "the
    **Treaty of Tordesillas**"). A single capitalised word stays a name either way
    ("**Pauling**"), unless it names a group (`_may_be_someone`)."""
    for line in lines:
        if line.heading_level or line.label:
            continue
        for sentence in _CLAUSE_SPLIT.split(line.text):
            for term, start, _ in _bold_terms(sentence):
                if _continues_a_name(sentence, start, _plain_name(term)):
                    return True
    return False


def _may_be_someone(name: str, text: str) -> bool:
    """In a file that bolds nobody's name: whether a capitalised name may still be a
    person's. One word may be a surname ("**Pauling**"), unless it is the plural of a
    capitalised word the file writes too: a group ("**Puritans**" where the file writes
    "a Puritan minister", "**Quakers**" and "Quaker"). Two words or more name an event,
    a treaty or a movement ("the **Columbian Exchange**")."""
    if len(name.split()) > 1:
        return _named_by_last_word(name, text)
    singulars = [w for w in word_variants(name) if len(w) < len(name) and w[:1].isupper()]
    return not any(_written(singular, text) for singular in singulars)


def _named_by_last_word(name: str, text: str) -> bool:
    """Whether a name of two or three capitalised words is someone's: the file also
    calls it by its last word alone, as a text calls a person by the surname ("Smith
    argued", "as economist Smith wrote"): opening a sentence or after a lower-case
    word that is no function word, and not followed by another capitalised word. An
    event or a body is called "the Reformation", "the Act", "League of Nations", "Civil
    Rights Act": after an article, a function word or another name. A name with a
    joining word ("Treaty of Tordesillas") or ending in an acronym is no one's."""
    words = name.split()
    if len(words) > 3 or not _joining().isdisjoint(w.casefold() for w in words):
        return False
    last = words[-1]
    if last.upper() == last:
        return False  # "Unidades SI": a surname is no acronym
    stop = language.stop_words()
    for match in re.finditer(rf"(?<!\w){re.escape(last)}(?!\w)", text):
        # The words on either side, from a window (not the whole file's text each time).
        previous = text[max(0, match.start() - 80) : match.start()].split()[-1:]
        following = text[match.end() : match.end() + 80].split()[:1]
        if following and following[0][:1].isupper():
            continue  # "Smith Act", another name
        if not previous or previous[0][-1:] in ".!?":
            return True
        # Every language's articles are among its stop words.
        if previous[0][:1].islower() and previous[0].casefold() not in stop:
            return True
    return False


def _continues_a_name(sentence: str, start: int, term: str) -> bool:
    """Whether a capitalised bold span continues a capitalised run mid-sentence:
    "Donald **Trump**", "Senator Barbara **Mikulski**", "Martin Luther **King** Jr." name
    someone. A lower-case span ("de Lewis **formas de resonancia**"), a word after a
    capitalised article ("The **Chromosome**") or an acronym ("DNA **Polymerase**") is no
    part of a name."""
    if not term[:1].isupper():
        return False
    words = _plain(sentence[:start]).split()
    if len(words) < 2 or not sentence[:start].endswith(" "):
        return False
    before = words[-1]
    if re.fullmatch(r"[A-Z]\.", before):
        before = words[-2]  # a middle initial: "Donald J. **Trump**", "John F. **Kennedy**"
    return (
        before[:1].isupper()
        and before.isalpha()
        and any(c.islower() for c in before)
        and before.casefold() not in language.stop_words()
    )


# How far before a bold span its key-press words are looked for (keys pressed in a row
# included: "Press **2nd** **DISTR**").
KEY_WINDOW_CHARS = 120
# Bold spans in a row before a span: "Press **2nd** **DISTR**" presses both keys.
_TRAILING_BOLD = re.compile(r"(?:\*\*[^*]+\*\*\s*)+$")


# A name written against an opening parenthesis of numbers or a list is a function
# called: "**normalcdf**(65,1E99,63,5)", "**AVERAGE**(A1:A10)".
_CALL = re.compile(r"^\((?=[^)]*[,\d])")


def _key_or_call(sentence: str, start: int, end: int) -> bool:
    """Whether the bold span at [start, end) is a key, a menu item or a function of a
    calculator or a program, as their steps write them: after one of the language
    data's `key_press_words` ("Press **STAT**", "Arrow down to **normalcdf**", "Pulse
    **2nd** **DISTR**"), or called ("**invNorm**(0.90,63,5)")."""
    if _CALL.match(sentence[end:]):
        return True
    # The words just before the span: a window, not the whole sentence for every span.
    before = _TRAILING_BOLD.sub("", sentence[max(0, start - KEY_WINDOW_CHARS) : start])
    last = " ".join(tokens(_plain(before))[-3:])
    return any(
        last == phrase or last.endswith(f" {phrase}") for phrase in _phrases_of("key_press_words")
    )


def _naming_context(sentence: str, start: int, end: int) -> bool:
    """Whether the bold span at [start, end) is defined by its sentence: a copula right
    after it ("**Osmosis** is ..."), or a naming phrase right before it ("... is called
    **osmosis**", "se denomina **ósmosis**")."""
    # "**Autophagy** (“self-eating”) is …": an aside in parentheses right after the term
    # is skipped whole.
    rest = _LEADING_ASIDE.sub("", sentence[end:], count=1).lstrip(" *_")
    if rest[:1] in ("=", ":", "：") and rest[1:2] != "=":
        return True  # a note's "**Proton** = positive charge", "**Enzyme**: a protein …"
    after = tokens(_plain(rest))[:4]
    written = written_words(_plain(rest))[:4]
    for copula in _copulas():
        for skip in range(0, 2):  # "**Osmosis**, or water diffusion, is": one aside word
            if after[skip : skip + len(copula)] == copula and written_as(
                "definition_copulas", copula, written[skip : skip + len(copula)]
            ):
                return True
    before = " ".join(tokens(_plain(sentence[:start]))[-4:])
    return any(
        before.endswith(phrase) or f" {phrase} " in f" {before} "
        for phrase in _phrases_of("naming_phrases")
    )


class OfflineExtractor:
    name = "offline"

    def extract(self, *, pages: list[str], language: str = "", file_name: str = "") -> Extraction:
        lines = _without_front_matter(_lines(pages))
        if not lines:
            return Extraction(extractor=self.name, concepts=[], rejected=[])
        candidates: dict[str, _Candidate] = {}
        held_by_length: dict[int, list[str]] = defaultdict(list)  # keys by spaces, held order
        rejected: list[str] = []
        order: list[str] = []
        marked = _is_marked(lines)
        # Read only when a proper name needs it (most files have none): a second pass.
        bolds_people = cache(lambda: _bolds_people(lines))
        plain_text = _plain("\n".join(line.text for line in lines if not line.label))
        # Addresses are no prose: "plato.stanford.edu/entries/aristotle" writes no term.
        prose = _ADDRESS.sub(" ", plain_text)

        def offer(
            name: str, strength: int, definition: str, page: int, block_text: str, alias: str = ""
        ) -> None:
            name = _plain_name(_TRAILING_MATH.sub("", _LEADING_MATH_LETTER.sub(r"\1 ", name)))
            definition = _without_dropped_references(definition)
            # "interquartile range (IQR)": one concept, the abbreviation another name of it;
            # "ATP (adenosine triphosphate)" likewise. Any other parenthesis is dropped.
            for inner in _PARENTHESIS.findall(name):
                outer = _PARENTHESIS.sub("", name).strip()
                if is_abbreviation_of(inner, outer) or is_abbreviation_of(outer, inner):
                    alias = alias or inner
            name = _before_aside(name)
            name = _without_article(name.strip(_NAME_TRIM))
            verdict = name_check(name)
            if not verdict.ok:
                if name and name not in rejected:
                    rejected.append(name)
                return
            key = concept_key(name)
            # "2.2 Genes" over "A gene is ...": one concept in the singular and plural.
            # (A key already held is its own first match: a later key differing from it
            # only by number would have joined it instead of being held.)
            if key not in candidates:
                # Only keys of as many words can differ by number alone.
                same_length = held_by_length[key.count(" ")]
                key = next((k for k in same_length if same_but_number(k, key)), key)
            # Italics outside bold: "**orbitales *s***" holds no italic term of its own.
            unbolded = _BOLD.sub(" ", _BLANKS.sub(" ", block_text))
            italic = [_plain(m.group(1) or m.group(2)) for m in _ITALIC.finditer(unbolded)]
            existing = candidates.get(key)
            if existing is None:
                existing = candidates[key] = _Candidate(name, strength, definition, {page}, italic)
                order.append(key)
                held_by_length[key.count(" ")].append(key)
            else:
                existing.pages.add(page)
                if strength > existing.strength:
                    existing.strength, existing.definition = strength, definition
                    existing.italic_terms = italic
                    if strength == DEFINED and not marked:
                        existing.name = name
            if alias and name_check(alias).ok and alias not in existing.aliases:
                existing.aliases.append(alias)

        blocks = _paragraphs(lines)
        glossary_section = False
        for index, (block, heading) in enumerate(blocks):
            if heading is not None:
                glossary_section = _names_a_glossary(heading)
            if block and heading is not None and _defines_nothing(heading.text):
                # "Common mistakes", "Exercises", "Ejercicios": their lines are no
                # definitions ("Saying that osmosis moves salt: it moves water").
                continue
            if not block and heading is not None:
                if not marked:
                    self._offer_heading(heading, blocks, index, offer, rejected)
                continue
            text = " ".join(line.text for line in block)
            page = block[0].page
            glossary = _GLOSSARY.match(text) or _DASH.match(text)
            if glossary and _is_glossary_line(text):
                term_text = glossary.group("term")
                # Where the file marks its terms, a "Term: text" line is an entry only
                # in a glossary section or when its term is marked ("- **ATP**: ...").
                if not marked or glossary_section or _bold_terms(term_text):
                    term = _plain(term_text)
                    offer(term, DEFINED, f"{term}: {_plain(glossary.group('text'))}", page, text)
            for sentence in _CLAUSE_SPLIT.split(text):
                if marked:
                    for term, start, end in _bold_terms(sentence):
                        name = _plain_name(term)
                        strength = DEFINED if _naming_context(sentence, start, end) else EMPHASISED
                        # At a sentence's start a capital says nothing: "**Osmosis** is the
                        # ..." defines a term, "**Locke** argued" names a person.
                        # Only punctuation before it: "(**Osmosis** …", "”) **Autophagy** …".
                        initial = not any(c.isalnum() for c in _plain(sentence[:start]))
                        # Where the file bolds no one's name, a proper name of two words
                        # or more, or a group's, is the author's term (_may_be_someone).
                        bare = _PARENTHESIS.sub("", name)
                        if (
                            not (initial and strength == DEFINED)
                            and _is_proper_name(bare, prose)
                            and (_may_be_someone(bare, prose) or bolds_people())
                        ):
                            continue
                        if _continues_a_name(sentence, start, name) or _key_or_call(
                            sentence, start, end
                        ):
                            continue
                        alias = _abbreviation_after(sentence[end:], name)
                        # A defining sentence's paragraph is the concept's explanation: an
                        # italic term in it is an assumed prerequisite.
                        context = text if strength == DEFINED else sentence
                        offer(name, strength, _plain(sentence), page, context, alias)
                    continue
                for term_words, punctuated in _terms_after_naming_phrase(sentence):
                    term = _named_part(term_words, punctuated, plain_text)
                    if term and not _is_proper_name(term, prose):
                        offer(term, DEFINED, _plain(sentence), page, text)
                found = _term_before_copula(sentence)
                if found and (
                    found[2]
                    or len(found[0].split()) == 1
                    or _uses(found[0], plain_text) >= UNMARKED_MIN_USES
                ):
                    offer(found[0], DEFINED, _plain(found[1]), page, text)
                for term, start, end in _bold_terms(sentence):
                    if not (
                        _continues_a_name(sentence, start, _plain_name(term))
                        or _key_or_call(sentence, start, end)
                    ):
                        offer(term, EMPHASISED, _plain(sentence), page, sentence)

        _join_abbreviations(candidates, order, plain_text)
        for key in [k for k in order if _is_passing_acronym(candidates[k])]:
            del candidates[key]
            order.remove(key)
        keys = order[: concept_bound(pages)]
        names = {key: display_name(candidates[key].name) for key in keys}
        concepts: list[ExtractedConcept] = []
        for key in keys:
            candidate = candidates[key]
            definition = candidate.definition[:DEFINITION_MAX_CHARS]
            # A bold term used in passing ("the **cell** divides") builds on nothing: only
            # a defining sentence, heading section or glossary line gives edges.
            defines = candidate.strength >= HEADED
            builds_on = [
                names[other]
                for other, _ in find_keys_in(definition if defines else "", {k: k for k in keys})
                if other != key and not same_but_number(other, key)
            ]
            assumes = []
            for term in candidate.italic_terms:
                term_key = concept_key(term)
                # "*átomos*" in the file that defines "átomo" is that concept, not an
                # assumed one.
                if (
                    term_key
                    and not any(same_but_number(term_key, k) for k in names)
                    and _could_be_assumed(term)
                ):
                    assumes.append(term)
            concepts.append(
                ExtractedConcept(
                    name=display_name(candidate.name),
                    summary=_first_sentence(definition),
                    definition=definition,
                    builds_on=list(dict.fromkeys(builds_on)),
                    assumes=list(dict.fromkeys(assumes)),
                    pages=sorted(candidate.pages),
                    aliases=candidate.aliases,
                    defines=defines,
                )
            )
        return Extraction(extractor=self.name, concepts=concepts, rejected=rejected)

    @staticmethod
    def _offer_heading(heading, blocks, index, offer, rejected) -> None:
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


def _is_passing_acronym(candidate: _Candidate) -> bool:
    """ "the **NRA**", "**AARP** has 38 million members": an acronym alone, bold in
    passing (not defined, no heading of its own) and never joined to a long form, names an
    organisation or a thing."""
    letters = [c for c in candidate.name if c.isalpha()]
    return (
        candidate.strength == EMPHASISED
        and not candidate.aliases
        and len(candidate.name.split()) == 1
        and len(letters) >= 2
        and all(c.isupper() for c in letters)
    )


def _without_article(name: str) -> str:
    """ "Los halógenos" -> "halógenos", "the cell" -> "cell": the article is no part of a name."""
    words = name.split()
    if len(words) > 1 and " ".join(tokens(words[0])) in _articles():
        return " ".join(words[1:])
    return name


def _could_be_assumed(term: str) -> bool:
    """An italic term that may be an assumed prerequisite: a concept name in lower case.

    Textbooks also italicise titles ("*The Wall Street Journal*"), emphasis ("*Despite*",
    "*puede*") and symbols ("(*aq*)", "*l* = 0"): none is a concept.
    """
    words = tokens(term)
    if not term[:1].islower() or "," in term or len(words) > ASSUMED_MAX_WORDS:
        return False
    if not name_check(term).ok:
        return False
    if sum(c.isalpha() for c in term) < WORD_MIN_LETTERS:
        return False
    return not (len(words) == 1 and words[0] in language.stop_words())


def _uses(term: str, text: str) -> int:
    """How often the file writes the term (any number form), the definition included."""
    key = concept_key(term)
    if not key:
        return 0
    haystack = _file_tokens(text)
    return sum(haystack.count(f" {form} ") for form in {key, f"{key}s", f"{key}es"})


@lru_cache(maxsize=2)
def _file_tokens(text: str) -> str:
    # The file's tokens, once per file: asked for every "X is ..." candidate of a file
    # that marks nothing, re-tokenising the whole file each time was candidates x size.
    return key_tokens_text(text)


def _abbreviation_after(rest: str, name: str) -> str:
    """ "**interquartile range** (IQR)" -> "IQR"."""
    match = re.match(r"\s*\((?:\*\*)?([^()*]{2,12}?)(?:\*\*)?\)", rest)
    if match and is_abbreviation_of(match.group(1).strip(), name):
        return match.group(1).strip()
    return ""


def _join_abbreviations(candidates: dict[str, _Candidate], order: list[str], text: str) -> None:
    """A candidate that is the defined abbreviation of another ("IQR" where the file writes
    "interquartile range (IQR)") becomes another name of it, not a concept of its own."""
    long_forms = {key: c for key, c in candidates.items()}
    # What the file writes in parentheses: a short form written nowhere so ("(IQR)")
    # needs no search of the whole file for "long form (IQR)".
    in_parentheses = {m.strip().casefold() for m in re.findall(r"\(([^()]{1,40})\)", text)}
    for key in list(order):
        short = candidates[key]
        if not could_be_abbreviation(short.name):
            continue  # most names: no pair to test
        written = short.name.strip().casefold() in in_parentheses
        for other_key, long in long_forms.items():
            if other_key == key or other_key not in candidates:
                continue
            # The letter test first: it is cheap and rejects nearly every pair, while the
            # search compiles a pattern and scans the whole file (candidates squared
            # times: 18 s on a 100-candidate section).
            if not is_abbreviation_of(short.name, long.name):
                continue
            if short.name in long.aliases or (
                written
                and re.search(
                    rf"{re.escape(long.name)}\s*\(\s*{re.escape(short.name)}\s*\)", text, re.I
                )
            ):
                if short.name not in long.aliases:
                    long.aliases.append(short.name)
                long.pages |= short.pages
                del candidates[key]
                order.remove(key)
                break


def _defines_nothing(heading: str) -> bool:
    return _title(heading) in _section_words()


@cache
def _section_words() -> frozenset[str]:
    return _phrases_of("non_definition_sections")


def _without_dropped_references(text: str) -> str:
    """ "… within the frontal bone (see )." -> "… within the frontal bone.": a parenthesis
    left empty, or with nothing but reference words ("see", "Figure": `reference_words`)
    and function words, where a converter dropped a link's text. "(see Figure 4.2)" and
    "(ATP)" stay."""
    references, stop = _words_of("reference_words"), language.stop_words()

    def kept(match: re.Match) -> str:
        words = tokens(match.group(1))
        dropped = not words or (
            not references.isdisjoint(words) and all(w in references or w in stop for w in words)
        )
        return "" if dropped else match.group(0)

    return _PARENTHESIS.sub(kept, text)


def _first_sentence(text: str) -> str:
    first = _SENTENCE_SPLIT.split(text.strip(), maxsplit=1)[0] if text.strip() else ""
    return first[:SUMMARY_MAX_CHARS]
