"""Scoring a concept map against a textbook development set (R-2, issue 13).

A development set is a folder with `gold_concepts.json` (one entry per section file:
`file`, `glossary` [{"term", "meaning"}], `inline_terms`) and the section files under
`text/`. The names are compared exactly as the set's own `score_extraction.py` compares
them (its rules are reproduced here, since a user's clone has no devsets folder):
Unicode NFKC, casefold, accents removed, the Markdown marks * ^ _ and apostrophes
deleted, other punctuation made a space, a trailing plural removed from each word
(ies->y; a final s dropped unless the word ends in ss/us/is; then a final e dropped)
for words longer than 3 letters, and a parenthesised part optional on either side.
Duplicates count once.

The baseline is the set's own: every **bold** span of the same files (`bold_baseline.py`),
and the same without lines that are a single bold label (`--inline-only`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path


def _word(w: str) -> str:
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def norm(name: str) -> str:
    s = unicodedata.normalize("NFKC", str(name)).casefold()
    s = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))
    s = re.sub(r"[*^_'\u2019`]", "", s)
    s = re.sub(r"[\W_]+", " ", s).strip()
    return " ".join(_word(w) for w in s.split())


def keys_of(term: str) -> set[str]:
    """Every normalised form a name may match by (itself; without its parenthesised parts)."""
    keys = {norm(term)}
    stripped = re.sub(r"\([^)]*\)", " ", term)
    if stripped.strip() and stripped != term:
        keys.add(norm(stripped))
    return {k for k in keys if k}


@dataclass(frozen=True)
class DevsetScore:
    precision: float
    recall: float
    f1: float
    predicted: int
    gold: int
    correct_predicted: int
    gold_found: int
    false_positives: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"P={self.precision:.3f} R={self.recall:.3f} F1={self.f1:.3f} "
            f"(distinct pred {self.predicted}, gold {self.gold}, correct pred "
            f"{self.correct_predicted}, gold found {self.gold_found})"
        )


def score(gold_terms: list[str], predicted: list[str]) -> DevsetScore:
    gold: dict[str, tuple[str, set[str]]] = {}
    for term in gold_terms:
        k = norm(term)
        if not k:
            continue
        if k not in gold:
            gold[k] = (term, keys_of(term))
        else:
            gold[k][1].update(keys_of(term))
    by_key: dict[str, set[str]] = {}
    for k, (_, ks) in gold.items():
        for x in ks:
            by_key.setdefault(x, set()).add(k)
    preds: dict[str, tuple[str, set[str]]] = {}
    for p in predicted:
        k = norm(p)
        if k and k not in preds:
            preds[k] = (p, keys_of(p))
    correct, false_positives, hit = 0, [], set()
    for _k, (p, ks) in preds.items():
        matched = set().union(*(by_key.get(x, set()) for x in ks))
        if matched:
            correct += 1
            hit |= matched
        else:
            false_positives.append(p)
    precision = correct / len(preds) if preds else 0.0
    recall = len(hit) / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return DevsetScore(
        precision=precision,
        recall=recall,
        f1=f1,
        predicted=len(preds),
        gold=len(gold),
        correct_predicted=correct,
        gold_found=len(hit),
        false_positives=sorted(false_positives, key=str.casefold),
        misses=sorted((gold[k][0] for k in gold if k not in hit), key=str.casefold),
    )


@dataclass(frozen=True)
class Devset:
    path: Path
    entries: list[dict]

    @property
    def name(self) -> str:
        return self.path.name

    def files(self) -> list[Path]:
        return [self.path / entry["file"] for entry in self.entries]

    def glossary_terms(self) -> list[str]:
        return [g["term"] for entry in self.entries for g in entry.get("glossary", []) if g]


class DevsetError(Exception):
    pass


def load_devset(path: Path) -> Devset:
    gold = path / "gold_concepts.json"
    if not gold.is_file():
        raise DevsetError(f"{path} has no gold_concepts.json")
    try:
        entries = json.loads(gold.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DevsetError(f"{gold} is not JSON: {exc}") from exc
    if not isinstance(entries, list) or not all(
        isinstance(e, dict) and "file" in e for e in entries
    ):
        raise DevsetError(f"{gold}: expected a list of objects with a 'file'")
    missing = [e["file"] for e in entries if not (path / e["file"]).is_file()]
    if missing:
        raise DevsetError(f"{path}: missing section files, e.g. {missing[0]}")
    return Devset(path, entries)


# The set's bold_baseline.py, reproduced: ***x*** or **x**, and a label line is a line
# that is one bold span at column 0.
_BASELINE_BOLD = re.compile(r"(\*\*\*|\*\*)(?!\s)(.+?)(?<!\s)\1(?!\*)")
_BASELINE_LABEL = re.compile(r"\*\*[^*].*\*\*\s*")


def bold_spans(texts: list[str], *, inline_only: bool = False) -> list[str]:
    spans: list[str] = []
    for text in texts:
        for line in text.splitlines():
            if inline_only and _BASELINE_LABEL.fullmatch(line) and line.count("**") == 2:
                continue
            spans += [
                s
                for s in (m[1].strip().strip("*").strip() for m in _BASELINE_BOLD.findall(line))
                if s
            ]
    return spans


# Markdown a PDF would not show: images, link targets, emphasis other than bold.
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_HEADING = re.compile(r"^#{1,6}\s+")
_UNDERSCORE_ITALIC = re.compile(r"(?<!\w)_(\S[^_]*?)_(?!\w)")
PDF_FONT_SIZE = 10
PDF_HEADING_SIZE = 13


def _shown(line: str) -> str:
    """A Markdown line without what a page would not show: images, link targets, _italic_."""
    return _UNDERSCORE_ITALIC.sub(r"\1", _LINK.sub(r"\1", _IMAGE.sub("", line)))


def pdf_of_markdown(text: str) -> bytes:
    """The section set as a PDF, as a book's PDF would be: text that is **bold** in the
    Markdown in a bold font, headings bold and larger, other marks dropped; lines wrap
    to an A4 page and pages break as they fill. Uses the DejaVu fonts matplotlib ships."""
    from pathlib import Path as _Path

    import matplotlib
    from fpdf import FPDF

    fonts = _Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(True, margin=15)
    pdf.add_font("DejaVu", "", str(fonts / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(fonts / "DejaVuSans-Bold.ttf"))
    pdf.add_font("DejaVu", "I", str(fonts / "DejaVuSans-Oblique.ttf"))
    pdf.add_font("DejaVu", "BI", str(fonts / "DejaVuSans-BoldOblique.ttf"))
    pdf.add_page()
    height = PDF_FONT_SIZE * 0.5
    for line in text.splitlines():
        line = _shown(line).strip()
        if not line:
            pdf.ln(height)
            continue
        heading = bool(_HEADING.match(line))
        line = _HEADING.sub("", line)
        # fpdf2's own Markdown: ** for bold; its other marks (__, --, ~~) escaped away.
        parts = line.split("**")
        for mark in ("__", "--", "~~"):
            parts = [part.replace(mark, mark[0] + "\u200b" + mark[1]) for part in parts]
        parts = [part.replace("*", "") for part in parts]
        if heading:
            parts = ["", "".join(parts)]
        pdf.set_font("DejaVu", "", PDF_HEADING_SIZE if heading else PDF_FONT_SIZE)
        # One cell a paragraph: fpdf2 wraps it at spaces, whatever the bold.
        pdf.multi_cell(0, height, "**".join(parts), markdown=True, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


_BOLD_RUN = re.compile(r"\*\*(.+?)\*\*")
_STAR_ITALIC = re.compile(r"(?<![*\w])\*(\S[^*]*?)\*(?![*\w])")
_LIST_ITEM = re.compile(r"^(?:[-*+]|\d+\.)\s+")
BROWSER_PAGE_STYLE = (
    "body { font-family: serif; font-size: 11pt; } h1, h2, h3 { margin: 0.8em 0 0.4em; }"
)


def html_of_markdown(text: str) -> str:
    """The section as a web page, as a student's "print to PDF" of the book would start:
    headings as <h1>–<h6>, **bold** in <b>, *italic* in <i>, list items in <ul>, every
    other block of lines a paragraph (its lines apart by <br>); each block right to left
    when its first letter is (dir="auto": Arabic)."""
    from html import escape

    def inline(line: str) -> str:
        line = escape(_shown(line))
        line = _STAR_ITALIC.sub(r"<i>\1</i>", _BOLD_RUN.sub(r"<b>\1</b>", line))
        return line.replace("*", "")

    body: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        if len(lines) == 1 and _HEADING.match(lines[0]):
            level = min(len(lines[0]) - len(lines[0].lstrip("#")), 6)
            body.append(f'<h{level} dir="auto">{inline(_HEADING.sub("", lines[0]))}</h{level}>')
        elif all(_LIST_ITEM.match(line) for line in lines):
            items = "".join(f"<li>{inline(_LIST_ITEM.sub('', line))}</li>" for line in lines)
            body.append(f'<ul dir="auto">{items}</ul>')
        else:
            body.append('<p dir="auto">' + "<br>".join(inline(line) for line in lines) + "</p>")
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><style>{BROWSER_PAGE_STYLE}'
        f"</style></head><body>{''.join(body)}</body></html>"
    )


def pdfs_from_browser(texts: list[str], chromium: str) -> list[bytes]:
    """Each section printed to PDF by Chromium (Playwright driving the `chromium`
    executable given): A4, the browser's own fonts and layout, as "print to PDF" makes
    them. All at once, before the caller touches the database: Playwright's sync API runs
    an event loop in this thread while it is open."""
    from playwright.sync_api import sync_playwright

    pdfs = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page()
        for text in texts:
            page.set_content(html_of_markdown(text))
            pdfs.append(
                page.pdf(
                    format="A4",
                    margin={"top": "2cm", "bottom": "2cm", "left": "2cm", "right": "2cm"},
                )
            )
        browser.close()
    return pdfs


def without_bold(text: str) -> str:
    """The text as a PDF's text layer gives it: the bold marks gone, the words kept."""
    return text.replace("**", "")


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def copula_subjects(texts: list[str], *, copulas: set[str], articles: set[str]) -> list[str]:
    """The baseline for text without marks: the words that open a sentence before
    "is/are a/an/the" (`copulas`, then one of `articles`), at most five, a leading
    article dropped ("A cell is the ..." -> "cell")."""
    out: list[str] = []
    for text in texts:
        for sentence in _SENTENCE_END.split(text):
            words = sentence.strip().strip("#-*> ").split()
            for i in range(1, min(len(words) - 1, 6)):
                if words[i].lower() in copulas and words[i + 1].lower() in articles:
                    subject = words[1:i] if words[0].lower() in articles else words[:i]
                    name = " ".join(subject).strip(" ,;:()\"'")
                    if name:
                        out.append(name)
                    break
    return out
