"""A Word document (.docx, Office Open XML) as the Markdown the extractor reads.

A teacher's handout or a student's notes mark key terms as a book does, in bold, and
their sections with heading styles. Read from `word/document.xml` (and the styles in
`word/styles.xml`) with the standard library:

* a paragraph in a heading style ("heading 1"-"heading 6", "Title", or any style with an
  outline level) -> a "#" line; the style's name is the built-in English one whatever
  the language Word runs in;
* bold runs -> **term**: bold set on the run, by its character style ("Strong"), or by
  the paragraph's style; runs Word split mid-word ("osmo" + "sis") are joined; a run
  bold by its style but set not bold (<w:b w:val="0"/>) is not. Right-to-left and other
  complex-script runs (Arabic, Hebrew) take their own bold, <w:bCs/>, as Word does;
* italic runs -> *term* (an italic term in a definition is a prerequisite it assumes);
* list paragraphs (numbered or bulleted) -> "- " items; tables -> "| a | b |" rows;
* pages: a page break, or where Word last laid a page out (<w:lastRenderedPageBreak/>),
  starts a new page, so a concept's pages are those the student sees;
* left out: deleted text of tracked changes, field codes, footnotes and comments.
"""

from __future__ import annotations

import re
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

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_HEADING_NAME = re.compile(r"^heading\s*([1-9])$")
_OFF = {"0", "false", "off", "none"}


def docx_pages(content: bytes) -> list[str]:
    """The document's pages, each as Markdown text."""
    document, styles = _parts(content)
    reader = _Reader(_styles(styles))
    body = document.find(f"{W}body")
    if body is None:
        raise OfficeFileError("the Word document has no body")
    reader.blocks_of(body)
    return reader.pages()


def _parts(content: bytes) -> tuple[ElementTree.Element, ElementTree.Element | None]:
    with open_package(content, "word/document.xml", ".docx", ".doc") as archive:
        document = package_xml(archive, "word/document.xml")
        styles = None
        if "word/styles.xml" in archive.namelist():
            styles = package_xml(archive, "word/styles.xml")
    return document, styles


def _val(element: ElementTree.Element | None) -> str | None:
    return None if element is None else element.get(f"{W}val")


def _is_on(toggle: ElementTree.Element | None) -> bool | None:
    """<w:b/> is on, <w:b w:val="0"/> off, no element says nothing."""
    if toggle is None:
        return None
    return (_val(toggle) or "true").lower() not in _OFF


# The run properties read: bold and italic, each also for complex scripts (Arabic).
TOGGLES = ("b", "bCs", "i", "iCs")
Marks = dict[str, bool]  # toggle -> on; what a style or a run sets


def _toggles(properties: ElementTree.Element | None) -> dict[str, bool]:
    """The toggles `properties` (a <w:rPr>) sets, on or off; those it leaves out are absent."""
    if properties is None:
        return {}
    found = {name: _is_on(properties.find(f"{W}{name}")) for name in TOGGLES}
    return {name: on for name, on in found.items() if on is not None}


class _Style:
    def __init__(self, based_on: str | None, marks: dict[str, bool], level: int | None):
        self.based_on, self.marks, self.level = based_on, marks, level


def _styles(root: ElementTree.Element | None) -> dict[str, tuple[Marks, int]]:
    """style id -> (its toggles, heading level or 0), with what each inherits (basedOn)."""
    if root is None:
        return {}
    raw: dict[str, _Style] = {}
    for style in root.iter(f"{W}style"):
        style_id = style.get(f"{W}styleId") or ""
        name = (_val(style.find(f"{W}name")) or "").strip().lower()
        level = None
        heading = _HEADING_NAME.match(name)
        if heading:
            level = int(heading.group(1))
        elif name in ("title", "titre"):
            level = 1
        outline = _val(style.find(f"{W}pPr/{W}outlineLvl"))
        if level is None and outline is not None and outline.isdigit() and int(outline) < 9:
            level = int(outline) + 1
        marks = _toggles(style.find(f"{W}rPr"))
        raw[style_id] = _Style(_val(style.find(f"{W}basedOn")), marks, level)

    def resolved(style_id: str, seen: frozenset[str] = frozenset()) -> tuple[Marks, int]:
        style = raw.get(style_id)
        if style is None or style_id in seen:
            return {}, 0
        marks, level = resolved(style.based_on, seen | {style_id}) if style.based_on else ({}, 0)
        return marks | style.marks, style.level if style.level is not None else level

    return {style_id: resolved(style_id) for style_id in raw}


class _Reader:
    def __init__(self, styles: dict[str, tuple[Marks, int]]):
        self.styles = styles
        self.page_blocks: list[list[tuple[str, str]]] = [[]]

    def blocks_of(self, container: ElementTree.Element) -> None:
        for child in container:
            if child.tag == f"{W}p":
                self._paragraph(child)
            elif child.tag == f"{W}tbl":
                self._table(child)
            elif child.tag == f"{W}sdt":  # a content control holding paragraphs
                content = child.find(f"{W}sdtContent")
                if content is not None:
                    self.blocks_of(content)

    def _paragraph(self, paragraph: ElementTree.Element) -> None:
        properties = paragraph.find(f"{W}pPr")
        style_id = _val(properties.find(f"{W}pStyle")) if properties is not None else None
        style_marks, level = self.styles.get(style_id or "", ({}, 0))
        if properties is not None:
            if _is_on(properties.find(f"{W}pageBreakBefore")):
                self._new_page()
            outline = _val(properties.find(f"{W}outlineLvl"))
            if outline is not None and outline.isdigit() and int(outline) < 9:
                level = int(outline) + 1
        listed = properties is not None and properties.find(f"{W}numPr") is not None
        pieces: list[tuple[str, str]] = []
        for run in _runs(paragraph):
            self._run(run, style_marks, pieces)
        text = marked(pieces, emphasis=not level)
        if not text:
            return
        if level:
            self.page_blocks[-1].append(("heading", "#" * min(level, 6) + " " + text))
        elif listed or (style_id or "").lower().startswith("list"):
            self.page_blocks[-1].append(("item", "- " + text.replace("\n", " ")))
        else:
            self.page_blocks[-1].append(("text", text))

    def _run(self, run: ElementTree.Element, style_marks: Marks, pieces: list) -> None:
        """Adds the run's (text, mark) pieces: mark "**" bold, "*" italic, "" neither."""
        properties = run.find(f"{W}rPr")
        marks = dict(style_marks)
        if properties is not None:
            character_style = _val(properties.find(f"{W}rStyle")) or ""
            marks |= {k: v for k, v in self.styles.get(character_style, ({}, 0))[0].items() if v}
            marks |= _toggles(properties)
        text = "".join(t.text or "" for t in run.iter(f"{W}t"))
        complex_script = COMPLEX_SCRIPT.search(text) is not None or (
            properties is not None
            and bool(_is_on(properties.find(f"{W}rtl")) or _is_on(properties.find(f"{W}cs")))
        )
        mark = run_mark(marks, complex_script=complex_script)
        for part in run:
            if part.tag == f"{W}t":
                pieces.append((part.text or "", mark))
            elif part.tag in (f"{W}tab", f"{W}ptab"):
                pieces.append((" ", ""))
            elif part.tag in (f"{W}br", f"{W}cr"):
                if part.get(f"{W}type") == "page":
                    self._break_page(pieces)
                else:
                    pieces.append(("\n", ""))
            elif part.tag == f"{W}lastRenderedPageBreak":
                self._break_page(pieces)
            elif part.tag == f"{W}noBreakHyphen":
                pieces.append(("-", mark))

    def _break_page(self, pieces: list) -> None:
        """A page ends inside a paragraph: what was read of it stays on this page."""
        text = marked(pieces, emphasis=True)
        if text:
            self.page_blocks[-1].append(("text", text))
        pieces.clear()
        self._new_page()

    def _new_page(self) -> None:
        if self.page_blocks[-1]:
            self.page_blocks.append([])

    def _table(self, table: ElementTree.Element) -> None:
        for row in table.iter(f"{W}tr"):
            cells = []
            for cell in row.iter(f"{W}tc"):
                texts = []
                for paragraph in cell.iter(f"{W}p"):
                    pieces: list[tuple[str, str]] = []
                    for run in _runs(paragraph):
                        self._run(run, {}, pieces)
                    texts.append(marked(pieces, emphasis=True))
                cells.append(" ".join(t for t in texts if t).replace("|", "/"))
            if any(cells):
                self.page_blocks[-1].append(("row", "| " + " | ".join(cells) + " |"))

    def pages(self) -> list[str]:
        pages = [joined(blocks) for blocks in self.page_blocks]
        return pages if any(p.strip() for p in pages) else [""]


def _runs(element: ElementTree.Element):
    """The runs of a paragraph in order, those of its text boxes included, but not twice:
    a text box is drawn two ways (<mc:Choice>, <mc:Fallback> for older Words) holding
    the same text, and only the first is read."""
    for child in element:
        if child.tag == f"{MC}Fallback":
            continue
        if child.tag == f"{W}r":
            yield child
        yield from _runs(child)
