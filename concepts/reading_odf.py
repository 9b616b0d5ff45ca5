"""OpenDocument text (.odt) and presentations (.odp) as the Markdown the extractor reads.

LibreOffice saves these by default, so a teacher's or a student's files are often .odt
and .odp rather than .docx and .pptx. Read from `content.xml` and the named styles of
`styles.xml`, standard library only:

* text: headings (<text:h>, their outline level) -> "#" lines; bold and italic set by a
  span's or a paragraph's style (inherited through parent styles), Arabic and other
  complex scripts by their own "-complex" properties -> **term** / *term*; list items ->
  "- " items; tables -> rows; a page ends where LibreOffice last laid one out
  (<text:soft-page-break/>) or a paragraph's style breaks before it; footnotes, frames
  and tracked deletions are not read;
* presentations: a page per slide (<draw:page>), its title frame a "## " heading, the
  lists of its other frames "- " items (a paragraph outside a list has no bullet), the
  speaker notes after the slide's text.
"""

from __future__ import annotations

from xml.etree import ElementTree

from concepts.reading_office import (
    COMPLEX_SCRIPT,
    OfficeFileError,
    joined,
    marked,
    open_package,
    package_xml,
    run_mark,
)

OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
FO = "{urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0}"
PRESENTATION = "{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}"
_BOLD_WEIGHTS = {"bold", "600", "700", "800", "900"}
# Not read: notes (footnotes), frames (pictures, their captions), deletions, index marks.
_SKIPPED = {
    f"{TEXT}note", f"{DRAW}frame", f"{TEXT}tracked-changes", f"{TEXT}bookmark-ref",
    f"{TEXT}sequence-decls", f"{OFFICE}annotation",
}  # fmt: skip


class _Style:
    def __init__(self, parent: str, marks: dict[str, bool], page_break: bool):
        self.parent, self.marks, self.page_break = parent, marks, page_break


def _styles(*roots: ElementTree.Element | None) -> dict[str, _Style]:
    """Style name -> its own marks ("b", "bCs", "i", "iCs") and parent, from the named
    styles and the automatic ones (later roots win)."""
    styles: dict[str, _Style] = {}
    for root in roots:
        if root is None:
            continue
        for style in root.iter(f"{STYLE}style"):
            marks: dict[str, bool] = {}
            properties = style.find(f"{STYLE}text-properties")
            if properties is not None:
                for mark, attribute in (
                    ("b", f"{FO}font-weight"),
                    ("bCs", f"{STYLE}font-weight-complex"),
                ):
                    if properties.get(attribute):
                        marks[mark] = properties.get(attribute) in _BOLD_WEIGHTS
                for mark, attribute in (
                    ("i", f"{FO}font-style"),
                    ("iCs", f"{STYLE}font-style-complex"),
                ):
                    if properties.get(attribute):
                        marks[mark] = properties.get(attribute) in ("italic", "oblique")
            paragraph = style.find(f"{STYLE}paragraph-properties")
            page_break = paragraph is not None and paragraph.get(f"{FO}break-before") == "page"
            parent = style.get(f"{STYLE}parent-style-name") or ""
            styles[style.get(f"{STYLE}name") or ""] = _Style(parent, marks, page_break)
    return styles


class _Reader:
    def __init__(self, styles: dict[str, _Style]):
        self.styles = styles
        self.page_blocks: list[list[tuple[str, str]]] = [[]]

    def marks_of(self, name: str, seen: frozenset[str] = frozenset()) -> dict[str, bool]:
        style = self.styles.get(name)
        if style is None or name in seen:
            return {}
        return self.marks_of(style.parent, seen | {name}) | style.marks

    def new_page(self) -> None:
        if self.page_blocks[-1]:
            self.page_blocks.append([])

    def add(self, kind: str, text: str) -> None:
        if text:
            self.page_blocks[-1].append((kind, text))

    def blocks_of(self, container: ElementTree.Element, *, item: bool = False) -> None:
        """The paragraphs, headings, lists and tables of `container`, in order."""
        for child in container:
            if child.tag in _SKIPPED:
                continue
            if child.tag == f"{TEXT}soft-page-break":
                self.new_page()
            elif child.tag == f"{TEXT}h":
                level = int(child.get(f"{TEXT}outline-level") or "1")
                text = self.paragraph_text(child, emphasis=False).replace("\n", " ")
                self.add("heading", "#" * min(max(level, 1), 6) + " " + text if text else "")
            elif child.tag == f"{TEXT}p":
                if self._breaks_page(child.get(f"{TEXT}style-name") or ""):
                    self.new_page()
                text = self.paragraph_text(child, emphasis=True)
                self.add("item" if item else "text", f"- {text}" if item and text else text)
            elif child.tag == f"{TEXT}list":
                for list_item in child:
                    self.blocks_of(list_item, item=True)
            elif child.tag == f"{TABLE}table":
                for row in child.iter(f"{TABLE}table-row"):
                    cells = [
                        " ".join(
                            self.paragraph_text(p, emphasis=True).replace("\n", " ")
                            for p in cell.iter(f"{TEXT}p")
                        ).replace("|", "/")
                        for cell in row.iter(f"{TABLE}table-cell")
                    ]
                    if any(cells):
                        self.add("row", "| " + " | ".join(cells) + " |")
            else:  # sections, index bodies and other containers
                self.blocks_of(child, item=item)

    def _breaks_page(self, name: str, seen: frozenset[str] = frozenset()) -> bool:
        style = self.styles.get(name)
        if style is None or name in seen:
            return False
        return style.page_break or self._breaks_page(style.parent, seen | {name})

    def paragraph_text(self, paragraph: ElementTree.Element, *, emphasis: bool) -> str:
        pieces: list[tuple[str, str]] = []
        self._pieces(paragraph, self.marks_of(paragraph.get(f"{TEXT}style-name") or ""), pieces)
        return marked(pieces, emphasis=emphasis)

    def _pieces(self, element: ElementTree.Element, marks: dict, pieces: list) -> None:
        self._text(element.text, marks, pieces)
        for child in element:
            if child.tag not in _SKIPPED:
                if child.tag == f"{TEXT}s":
                    pieces.append((" " * int(child.get(f"{TEXT}c") or "1"), ""))
                elif child.tag == f"{TEXT}tab":
                    pieces.append((" ", ""))
                elif child.tag == f"{TEXT}line-break":
                    pieces.append(("\n", ""))
                elif child.tag == f"{TEXT}soft-page-break":
                    pass
                else:  # a span, a link, a field: its text in its own style
                    own = self.marks_of(child.get(f"{TEXT}style-name") or "")
                    self._pieces(child, marks | own, pieces)
            self._text(child.tail, marks, pieces)

    @staticmethod
    def _text(text: str | None, marks: dict, pieces: list) -> None:
        if text:
            complex_script = COMPLEX_SCRIPT.search(text) is not None
            pieces.append((text, run_mark(marks, complex_script=complex_script)))

    def pages(self) -> list[str]:
        pages = [joined(blocks) for blocks in self.page_blocks]
        return pages if any(p.strip() for p in pages) else [""]


def _document(content: bytes, what: str) -> tuple[ElementTree.Element, _Reader]:
    with open_package(content, "content.xml", what) as archive:
        document = package_xml(archive, "content.xml")
        named = package_xml(archive, "styles.xml") if "styles.xml" in archive.namelist() else None
    return document, _Reader(_styles(named, document))


def odt_pages(content: bytes) -> list[str]:
    """The text document's pages, each as Markdown."""
    document, reader = _document(content, ".odt")
    body = document.find(f"{OFFICE}body/{OFFICE}text")
    if body is None:
        raise OfficeFileError("not an OpenDocument text (.odt): content.xml has no text")
    reader.blocks_of(body)
    return reader.pages()


def odp_pages(content: bytes) -> list[str]:
    """One Markdown page per slide of the presentation."""
    document, reader = _document(content, ".odp")
    body = document.find(f"{OFFICE}body/{OFFICE}presentation")
    if body is None:
        raise OfficeFileError("not an OpenDocument presentation (.odp): content.xml has none")
    pages = []
    for slide in body.iter(f"{DRAW}page"):
        reader.page_blocks = [[]]
        _slide_frames(slide, reader)
        notes = slide.find(f"{PRESENTATION}notes")
        if notes is not None:
            _slide_frames(notes, reader, notes=True)
        pages.append(joined(reader.page_blocks[0]))
    return pages if any(p.strip() for p in pages) else [""]


def _slide_frames(slide: ElementTree.Element, reader: _Reader, notes: bool = False) -> None:
    """The text frames of a slide (or of its notes), groups included, in order; the
    notes are a child of the slide but read after it."""
    for child in slide:
        if child.tag == f"{DRAW}g":
            _slide_frames(child, reader, notes)
        elif child.tag == f"{DRAW}frame":
            kind = child.get(f"{PRESENTATION}class") or ""
            box = child.find(f"{DRAW}text-box")
            if box is None or kind in ("page-number", "footer", "date-time", "header"):
                continue
            if kind == "title" and not notes:
                for paragraph in box.iter(f"{TEXT}p"):
                    text = reader.paragraph_text(paragraph, emphasis=False).replace("\n", " ")
                    reader.add("heading", f"## {text}" if text else "")
            else:  # an outline's bulleted paragraphs are in lists; plain ones are not
                reader.blocks_of(box)
