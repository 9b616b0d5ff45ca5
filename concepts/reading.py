"""Turning an uploaded file into pages of text: plain text, Markdown, PDF (pypdf), a web
page (HTML, `concepts.reading_html`), a Word document (.docx, `concepts.reading_docx`),
slides (.pptx, `concepts.reading_pptx`, a page per slide), an e-book (.epub,
`concepts.reading_epub`, a page per chapter file) or an OpenDocument text or
presentation (.odt, .odp, `concepts.reading_odf`); those come out as Markdown (headings,
**bold** terms, lists, tables).

A text or Markdown file is one page unless it contains form feeds (each starts a new
page). A PDF keeps its own pages, numbered from 1 as a reader sees them; their text
layer is read as words (`clean_pdf_text`: ligatures spelled out, words broken at a line
end joined) without running headers and footers (`drop_running_lines`). Text a PDF sets
in a bold font comes out as Markdown bold (`**osmosis**`): a textbook's or a student's
PDF marks its key terms that way, and the extractor reads the author's marks first;
headings are ranked by size over the whole PDF, and paragraphs set apart get a blank
line. A page mostly in a right-to-left script (Arabic) is read again from where its
glyphs stand (`concepts.reading_rtl`): pypdf's text of it is out of order.
"""

from __future__ import annotations

import io
import logging
import math
import re
from dataclasses import dataclass

logger = logging.getLogger(__name__)

KIND_TEXT = "text"
KIND_MARKDOWN = "markdown"
KIND_PDF = "pdf"
KIND_HTML = "html"
KIND_DOCX = "docx"
KIND_PPTX = "pptx"
KIND_EPUB = "epub"
KIND_ODT = "odt"
KIND_ODP = "odp"
# Kinds that are zip packages of XML (or XHTML), each read by its own module.
_PACKAGES = (KIND_DOCX, KIND_PPTX, KIND_EPUB, KIND_ODT, KIND_ODP)

_EXTENSIONS = {
    ".txt": KIND_TEXT,
    ".text": KIND_TEXT,
    ".md": KIND_MARKDOWN,
    ".markdown": KIND_MARKDOWN,
    ".pdf": KIND_PDF,
    ".html": KIND_HTML,
    ".htm": KIND_HTML,
    ".xhtml": KIND_HTML,
    ".docx": KIND_DOCX,
    ".pptx": KIND_PPTX,
    ".epub": KIND_EPUB,
    ".odt": KIND_ODT,
    ".odp": KIND_ODP,
}
DOCX_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
_CONTENT_TYPES = {
    "text/plain": KIND_TEXT,
    "text/markdown": KIND_MARKDOWN,
    "text/x-markdown": KIND_MARKDOWN,
    "application/pdf": KIND_PDF,
    "text/html": KIND_HTML,
    "application/xhtml+xml": KIND_HTML,
    DOCX_CONTENT_TYPE: KIND_DOCX,
    PPTX_CONTENT_TYPE: KIND_PPTX,
    "application/epub+zip": KIND_EPUB,
    "application/vnd.oasis.opendocument.text": KIND_ODT,
    "application/vnd.oasis.opendocument.presentation": KIND_ODP,
}
CONTENT_TYPE_OF = {
    KIND_TEXT: "text/plain",
    KIND_MARKDOWN: "text/markdown",
    KIND_PDF: "application/pdf",
    KIND_HTML: "text/html",
    KIND_DOCX: DOCX_CONTENT_TYPE,
    KIND_PPTX: PPTX_CONTENT_TYPE,
    KIND_EPUB: "application/epub+zip",
    KIND_ODT: "application/vnd.oasis.opendocument.text",
    KIND_ODP: "application/vnd.oasis.opendocument.presentation",
}
SUPPORTED = ", ".join(sorted(_EXTENSIONS))


class UnreadableFile(Exception):
    """The file cannot be turned into text; the message says why."""


@dataclass(frozen=True)
class ParsedFile:
    kind: str
    pages: list[str]

    @property
    def page_count(self) -> int:
        return len(self.pages)


def file_kind(name: str, content_type: str = "") -> str | None:
    """text, markdown, pdf, html, docx, pptx, epub, odt or odp by extension (then by
    declared type); None if unsupported."""
    lowered = (name or "").lower()
    for extension, kind in _EXTENSIONS.items():
        if lowered.endswith(extension):
            return kind
    if "." in lowered.rsplit("/", 1)[-1]:
        return None  # an extension we do not read ("slides.docx"), whatever the type says
    return _CONTENT_TYPES.get((content_type or "").split(";")[0].strip().lower())


def decode_text(content: bytes, declared: str = "") -> str:
    """A text file's or web page's characters: UTF-8, UTF-16 with its byte order mark,
    else the charset the file declares (a web page's <meta charset>), else the code page
    Windows saves text in (`windows_text`). Before, UTF-16 was tried without a mark too,
    and a Spanish file saved by Windows (cp1252) came out as Chinese characters."""
    if content.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return content.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise UnreadableFile(f"the text is not in the UTF-16 its mark says: {exc}") from exc
    if b"\x00" in content:
        raise UnreadableFile("the file holds binary data, not text")
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError:
        if not declared:
            return windows_text(content)
    try:
        return content.decode(declared)
    except (LookupError, UnicodeDecodeError) as exc:
        raise UnreadableFile(f"the page is not in its declared charset: {exc}") from None


# Windows' code pages for the product's languages: Western European (English, Spanish,
# Portuguese, French) and Arabic.
WESTERN, ARABIC = "cp1252", "cp1256"


def windows_text(content: bytes) -> str:
    """Text that is not UTF-8, as Windows saves it: in Arabic (cp1256) when most of its
    letters are bytes above 127, as Arabic letters are there, else Western European
    (cp1252: an accented letter in a hundred is Spanish, French or Portuguese)."""
    high = sum(1 for byte in content if byte >= 0x80)
    ascii_letters = sum(1 for byte in content if 0x41 <= byte <= 0x5A or 0x61 <= byte <= 0x7A)
    return content.decode(ARABIC if high > ascii_letters else WESTERN, errors="replace")


def parse(content: bytes, kind: str) -> ParsedFile:
    """Pages of text of a file of `kind`. Raises UnreadableFile with a readable reason."""
    if not content:
        raise UnreadableFile("the file is empty")
    if kind == KIND_PDF:
        return ParsedFile(kind, _pdf_pages(content))
    if kind in _PACKAGES:
        return _checked(kind, _office_pages(content, kind))
    if kind == KIND_HTML:
        from concepts.reading_html import html_text

        return _checked(kind, [html_text(content)])
    return _checked(kind, decode_text(content).split("\f"))


def _checked(kind: str, pages: list[str]) -> ParsedFile:
    if not any(page.strip() for page in pages):
        raise UnreadableFile("the file holds no text")
    return ParsedFile(kind, pages)


def _office_pages(content: bytes, kind: str) -> list[str]:
    from concepts.reading_docx import docx_pages
    from concepts.reading_epub import epub_pages
    from concepts.reading_odf import odp_pages, odt_pages
    from concepts.reading_office import OfficeFileError
    from concepts.reading_pptx import pptx_pages

    read = {
        KIND_DOCX: docx_pages,
        KIND_PPTX: pptx_pages,
        KIND_EPUB: epub_pages,
        KIND_ODT: odt_pages,
        KIND_ODP: odp_pages,
    }[kind]
    try:
        return read(content)
    except OfficeFileError as exc:
        raise UnreadableFile(str(exc)) from exc


def _pdf_reader(content: bytes):
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    if not content.lstrip()[:5].startswith(b"%PDF"):
        raise UnreadableFile("not a PDF (no %PDF header)")
    try:
        reader = PdfReader(io.BytesIO(content), strict=False)
        # Most "protected" PDFs open without a password (the owner's restricts printing
        # or copying, as a publisher's or a course pack's often does): read them as any
        # viewer does. Only a PDF that asks for a password to open is refused.
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableFile("the PDF asks for a password to open; upload it without one")
        _ = len(reader.pages)
    except UnreadableFile:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise UnreadableFile(f"the PDF cannot be parsed: {exc}") from exc
    return reader


def pdf_page_count(content: bytes) -> int:
    return len(_pdf_reader(content).pages)


def page_count(content: bytes, kind: str) -> int:
    """A file's pages as an upload checks it (UnreadableFile if it cannot be read): a
    PDF's from its page tree, any other file's by reading it (quick, and a broken or
    binary one is refused at once, before anything is written)."""
    if kind == KIND_PDF:
        return pdf_page_count(content)
    return parse(content, kind).page_count


# A word the PDF's typesetting broke at a line end: "mem-\nbrane", "Osmo-\nsis".
_LINE_END_HYPHEN = re.compile(r"(\w+)-[ \t]*\n[ \t]*(\w+)([^\w\s]*)")


def _dehyphenate(text: str) -> str:
    """Words broken at a line end joined again, the line break moved after them: without
    the hyphen, unless the text writes the hyphenated form elsewhere and never the joined
    one ("cell-\nbased" stays "cell-based" where "cell-based" occurs). A line whose next
    one starts with a capital or a digit is left alone ("Type-\nA" is no broken word)."""
    words = {w.casefold() for w in re.findall(r"\w+(?:-\w+)*", text)}

    def join(match: re.Match) -> str:
        head, tail, punctuation = match.groups()
        if not tail[:1].islower():
            return match.group(0)
        hyphenated, joined = f"{head}-{tail}", f"{head}{tail}"
        if hyphenated.casefold() in words and joined.casefold() not in words:
            return hyphenated + punctuation + "\n"
        return joined + punctuation + "\n"

    return _LINE_END_HYPHEN.sub(join, text)


# Typographic ligatures a PDF's text layer keeps as one character ("ﬁbrous").
_LIGATURES = str.maketrans(
    {"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"}
)


def clean_pdf_text(text: str) -> str:
    """A page's text layer as words: ligatures spelled out, broken words joined."""
    return _dehyphenate(text.translate(_LIGATURES))


# A running header or footer: a line among the first or last RUNNING_LINE_DEPTH of a
# page that recurs, digits aside ("Chapter 3 | Cell Transport", "45"), on at least
# RUNNING_LINE_MIN_SHARE of the pages, and on RUNNING_LINE_MIN_PAGES or more.
RUNNING_LINE_DEPTH = 2
RUNNING_LINE_MIN_SHARE = 0.5
RUNNING_LINE_MIN_PAGES = 3
_DIGITS = re.compile(r"\d+")


def _edge_lines(lines: list[str]) -> list[int]:
    """Indexes of a page's first and last RUNNING_LINE_DEPTH non-empty lines."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    return sorted(set(filled[:RUNNING_LINE_DEPTH] + filled[-RUNNING_LINE_DEPTH:]))


def drop_running_lines(pages: list[str]) -> list[str]:
    """The pages without their running headers and footers: a header glued to a page's
    first sentence ("Chapter 3 | Cell Transport Osmosis is …") hides its definition."""
    if len(pages) < RUNNING_LINE_MIN_PAGES:
        return pages

    def shape(line: str) -> str:
        return _DIGITS.sub("#", " ".join(line.split())).casefold()

    split = [page.splitlines() for page in pages]
    counts: dict[str, int] = {}
    for lines in split:
        for form in {shape(lines[i]) for i in _edge_lines(lines)}:
            counts[form] = counts.get(form, 0) + 1
    needed = max(RUNNING_LINE_MIN_PAGES, RUNNING_LINE_MIN_SHARE * len(pages))
    running = {form for form, n in counts.items() if n >= needed}
    if not running:
        return pages
    out = []
    for lines in split:
        edges = set(_edge_lines(lines))
        out.append(
            "\n".join(
                line for i, line in enumerate(lines) if i not in edges or shape(line) not in running
            )
        )
    return out


# A font whose name says it is bold: "Arial-BoldMT", "ABCDEF+DejaVuSans-Bold",
# "MinionPro-Semibold", "Helvetica-Black"; TeX's bold extended faces ("CMBX10",
# "CMSSBX10", "SFBX1200") and URW's "NimbusRomNo9L-Medi" (Times bold, as LaTeX sets it).
_BOLD_FONT = re.compile(r"bold|black|heavy|demi|^(?:cm|sf|lm)\w*bx|-medi(?:ital)?$", re.IGNORECASE)
# A font descriptor's weight from which a face is bold (400 is regular, 700 bold).
BOLD_FONT_WEIGHT = 600


def _font_weight(font) -> float:
    """The /FontWeight of the font's descriptor (a composite font's: its descendant's), or 0."""
    try:
        descriptor = _resolved(font.get("/FontDescriptor"))
        if descriptor is None and font.get("/DescendantFonts"):
            descriptor = _resolved(_resolved(font["/DescendantFonts"][0]).get("/FontDescriptor"))
        return float(descriptor.get("/FontWeight", 0)) if descriptor is not None else 0.0
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        return 0.0


def _resolved(value):
    """A PDF object behind its indirect reference (pypdf), or the value itself."""
    return value.get_object() if hasattr(value, "get_object") else value


# A whole bold line set this much larger than the page's body text is a heading.
HEADING_SIZE_RATIO = 1.15
# A heading this much larger than the next size down is a level above it.
HEADING_STEP_RATIO = 1.1
# A line break this many times the page's usual line spacing ends a paragraph. The PDFs
# of three programs set a paragraph 1.44× (LibreOffice), 1.8-1.9× (Chromium) and 2× (fpdf2)
# a line apart, and no line break of the dev books 1.15-1.28× (docs/BENCHMARKS.md).
PARAGRAPH_GAP_RATIO = 1.25
# A page with this share of its characters in bold sets its text in a bold face (a body
# font named "…Demi", a title page, a slide of headlines): its bold marks nothing.
BOLD_MAX_SHARE = 0.5


@dataclass(frozen=True)
class TextPiece:
    """A piece of a page's text layer as pypdf hands it over: its text, whether its
    font is bold, and the size it is set in (points)."""

    text: str
    bold: bool = False
    size: float = 0.0
    y: float = 0.0  # the baseline's height on the page


def _is_bold(font) -> bool:
    """By the font's name, or else by its descriptor's weight."""
    if not font:
        return False
    name = str(font.get("/BaseFont", "")).lstrip("/")
    return is_bold_font_name(name) or _font_weight(font) >= BOLD_FONT_WEIGHT


def is_bold_font_name(name: str) -> bool:
    """ "ABCDEF+Arial-BoldMT", "CMBX10": a bold face by its name (subset prefix aside)."""
    return bool(_BOLD_FONT.search(name.split("+", 1)[-1]))


def _bold_span(text: str) -> str:
    """ "**text**", the whitespace around it left outside the marks."""
    core = text.strip()
    start = text.index(core)
    return f"{text[:start]}**{core}**{text[start + len(core) :]}"


# A line that is one bold span and nothing else: a label ("Example", "Figure 3").
_BOLD_LINE = re.compile(r"^[ \t]*\*\*[^*\n]+\*\*[ \t]*$", re.MULTILINE)


def _at_line_start(out: list[str]) -> bool:
    """Whether the text so far ends a line (spaces and tabs aside), or is empty."""
    for piece in reversed(out):
        if piece.rstrip(" \t"):
            return piece.rstrip(" \t").endswith("\n")
    return True


def _body_size(pieces: list[TextPiece]) -> float:
    """The size most of the page's plain (else any) characters are set in."""
    for plain_only in (True, False):
        sizes: dict[float, int] = {}
        for piece in pieces:
            if piece.text.strip() and not (plain_only and piece.bold):
                size = round(piece.size, 1)
                sizes[size] = sizes.get(size, 0) + len(piece.text.strip())
        if sizes:
            return max(sizes, key=lambda size: (sizes[size], -size))
    return 0.0


def with_bold_marked(
    pieces: list[TextPiece],
    heading_levels: dict[float, int] | None = None,
    heading_sizes: list[float] | None = None,
) -> str:
    """The page's text from its pieces, each run of bold pieces in one font size marked
    as one span ("**osmosis**").

    A run that began inside a line goes on across the line break: a term the line
    breaks ("semipermeable" / "membrane") is one span. A run that began a line ends
    with it: two bold lines ("Example" / "Combustion analysis") are two labels. A PDF's
    text has no blank lines between paragraphs, so a line that is nothing but bold
    stands apart: as a Markdown heading ("## Solutions") when it is set larger than the
    page's body text, else as a bold label line. A heading's level is its size's in
    `heading_levels` (`heading_levels_of`; 2 for a size not in it); each heading's size
    is added to `heading_sizes` when that list is given."""
    body = _body_size(pieces)
    out: list[str] = []
    run: list[str] = []  # the bold run being read
    size = 0.0  # its size
    whole_line = False  # whether it began a line
    gap: list[str] = []  # whitespace after it: inside if the run goes on, else outside

    def close(at_line_end: bool) -> None:
        text = "".join(run)
        if whole_line and at_line_end and body and size >= HEADING_SIZE_RATIO * body:
            if heading_sizes is not None:
                heading_sizes.append(size)
            level = (heading_levels or {}).get(size, 2)
            out.append("\n" + "#" * level + " " + " ".join(text.split()) + "\n")
        else:
            out.append(_bold_span(text))

    for piece in pieces:
        if not piece.text.strip():
            (gap if run else out).append(piece.text)
            continue
        line_ended = "\n" in "".join(gap) or piece.text.startswith("\n")
        if run and (not piece.bold or round(piece.size, 1) != size or (whole_line and line_ended)):
            close(line_ended)
            out += gap
            run, gap = [], []
        if piece.bold:
            if not run:
                size, whole_line = round(piece.size, 1), _at_line_start(out)
            run += [*gap, piece.text]
        else:
            out += [*gap, piece.text]
        gap = []
    if run:
        close(True)
    return _BOLD_LINE.sub(lambda m: f"\n{m.group(0)}\n", "".join(out + gap))


def with_paragraph_breaks(pieces: list[TextPiece]) -> list[TextPiece]:
    """The pieces with a blank line where the text moves down further than its usual line
    spacing (PARAGRAPH_GAP_RATIO times the median step): a PDF's text has no blank lines,
    but its paragraphs, headings and captions stand apart on the page. A step is measured
    from a line's first piece to the next line's: a superscript ending a line ("10³")
    sits higher than its line."""
    breaks: list[tuple[int, float]] = []  # (index of the line break, how far down)
    line_start: TextPiece | None = None
    newline: int | None = None
    for index, piece in enumerate(pieces):
        if not piece.text.strip():
            if "\n" in piece.text and line_start is not None and newline is None:
                newline = index
            continue
        if line_start is None:
            line_start = piece
        elif newline is not None:
            breaks.append((newline, line_start.y - piece.y))
            line_start = piece
        newline = None
    steps = sorted(step for _, step in breaks if step > 0)
    if not steps:
        return pieces
    usual = steps[(len(steps) - 1) // 2]  # the lower median: two lines and a gap give the line
    wide = {index for index, step in breaks if step > PARAGRAPH_GAP_RATIO * usual}
    return [
        TextPiece(p.text.replace("\n", "\n\n", 1), p.bold, p.size, p.y) if i in wide else p
        for i, p in enumerate(pieces)
    ]


def heading_levels_of(sizes: list[float]) -> dict[float, int]:
    """Markdown levels for a document's heading sizes: the largest size level 2, each
    size more than HEADING_STEP_RATIO smaller one level down (at most 6); sizes closer
    than that share a level. A document whose headings are one size has one level."""
    levels: dict[float, int] = {}
    level, top = 2, 0.0  # the current level and the largest size in it
    for size in sorted(set(sizes), reverse=True):
        if top and size * HEADING_STEP_RATIO < top:
            level, top = min(level + 1, 6), size
        top = top or size
        levels[size] = level
    return levels


def _page_pieces(page) -> list[TextPiece] | str:
    """The page's text layer as pieces, paragraphs apart; where pypdf's pieces do not add
    up to the text it returns, that text."""
    pieces: list[TextPiece] = []

    def visit(text, matrix, text_matrix, font, size) -> None:
        if text:
            # The size as set: the font's size scaled by the text and page matrices.
            scale = math.hypot(text_matrix[2], text_matrix[3]) * math.hypot(matrix[2], matrix[3])
            y = text_matrix[4] * matrix[1] + text_matrix[5] * matrix[3] + matrix[5]
            pieces.append(TextPiece(text, _is_bold(font), float(size) * (scale or 1.0), y))

    text = page.extract_text(visitor_text=visit) or ""
    if "".join(p.text for p in pieces) != text:
        return text
    return with_paragraph_breaks(pieces)


def _page_texts(pages: list[list[TextPiece] | str]) -> list[str]:
    """Each page's text, bold runs marked where the page's bold marks something, its
    headings ranked by size over the whole document (a chapter's title above its
    sections'): one pass to collect the heading sizes, one to write the text."""
    # The pages whose bold marks something (None for the others).
    marked = [
        None if isinstance(page, str) or not _bold_marks_something(page) else page for page in pages
    ]
    sizes: list[float] = []
    for pieces in marked:
        if pieces is not None:
            with_bold_marked(pieces, heading_sizes=sizes)
    levels = heading_levels_of(sizes)
    return [
        page
        if isinstance(page, str)
        else with_bold_marked(pieces, levels)
        if pieces is not None
        else "".join(p.text for p in page)
        for page, pieces in zip(pages, marked, strict=True)
    ]


def _bold_marks_something(pieces: list[TextPiece]) -> bool:
    """Some of the page's text is bold, and less than BOLD_MAX_SHARE of it."""
    bold = sum(len(p.text.strip()) for p in pieces if p.bold)
    return 0 < bold < BOLD_MAX_SHARE * sum(len(p.text.strip()) for p in pieces)


def _rebuild_rtl_pages(content: bytes, read: list[list[TextPiece] | str]) -> None:
    """Pages mostly in a right-to-left script (Arabic) read again from their glyphs'
    positions (`concepts.reading_rtl`): pypdf's text of them is out of order."""
    from concepts.reading_rtl import is_mostly_rtl, rtl_pages

    texts = [page if isinstance(page, str) else "".join(p.text for p in page) for page in read]
    numbers = [i for i, text in enumerate(texts) if is_mostly_rtl(text)]
    if not numbers:
        return
    try:
        rebuilt = rtl_pages(content, numbers)
    except Exception:  # pdfminer raises many types on content it cannot follow
        logger.warning("right-to-left pages could not be rebuilt; pypdf's text kept")
        return
    for index, pieces in rebuilt.items():
        read[index] = with_paragraph_breaks(pieces)


def _pdf_pages(content: bytes) -> list[str]:
    reader = _pdf_reader(content)
    read: list[list[TextPiece] | str] = []
    for number, page in enumerate(reader.pages, start=1):
        try:
            read.append(_page_pieces(page))
        except Exception as exc:  # pypdf raises many types on broken content streams
            raise UnreadableFile(f"page {number} of the PDF cannot be read: {exc}") from exc
    _rebuild_rtl_pages(content, read)
    pages = drop_running_lines([clean_pdf_text(text) for text in _page_texts(read)])
    if not any(p.strip() for p in pages):
        raise UnreadableFile("the PDF has no text layer (a scan?); nothing to read")
    return pages
