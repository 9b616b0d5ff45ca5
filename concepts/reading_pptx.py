"""Slides (.pptx, Office Open XML) as the Markdown the extractor reads, a page per slide.

A lecture's slides are among the files a student has most: each slide's title is its
heading ("## Osmosis"; the title slide's "# …"), bold and italic runs are marked
(**term**, *term*), bulleted paragraphs are "- " items, tables "| a | b |" rows, and the
speaker notes follow the slide's text (where a teacher writes the explanation). A slide
is a page, so a concept's pages are the slide numbers the student sees. Slides are read
in the deck's order (presentation.xml); a hidden one is an empty page (it keeps its
number). Standard library only.
"""

from __future__ import annotations

import posixpath
import re
from xml.etree import ElementTree

from concepts.reading_office import joined, marked, open_package, package_xml

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
A14 = "{http://schemas.microsoft.com/office/drawing/2010/main}"
OMML = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
_SLIDE_NUMBER = re.compile(r"slide(\d+)\.xml$")
_TITLES = {"title": "## ", "ctrTitle": "# "}
# Placeholders whose paragraphs the master bullets unless a paragraph says otherwise.
_BODIES = {"body", "obj", ""}
# Placeholders that repeat on every slide: not the slide's content.
_FURNITURE = {"sldNum", "dt", "ftr", "hdr"}


def pptx_pages(content: bytes) -> list[str]:
    """One Markdown page per slide, in the deck's order."""
    with open_package(content, "ppt/presentation.xml", ".pptx", ".ppt") as archive:
        pages = []
        for slide_path in _slide_paths(archive):
            slide = package_xml(archive, slide_path)
            if slide.get("show") in ("0", "false"):
                pages.append("")  # a hidden slide keeps its number: the next is still 5
                continue
            blocks = _shapes(slide.find(f"{P}cSld/{P}spTree"))
            notes = _notes_path(archive, slide_path)
            if notes:
                blocks += _shapes(package_xml(archive, notes).find(f"{P}cSld/{P}spTree"), True)
            pages.append(joined(blocks))
    if not any(page.strip() for page in pages):
        return [""]
    return pages


def _relations(archive, part: str) -> dict[str, tuple[str, str]]:
    """Relationship id -> (type, target path) of a package part."""
    folder, name = posixpath.split(part)
    rels = posixpath.join(folder, "_rels", f"{name}.rels")
    if rels not in archive.namelist():
        return {}
    out = {}
    for rel in package_xml(archive, rels).iter(f"{REL}Relationship"):
        target = posixpath.normpath(posixpath.join(folder, rel.get("Target") or ""))
        out[rel.get("Id") or ""] = (rel.get("Type") or "", target)
    return out


def _slide_paths(archive) -> list[str]:
    relations = _relations(archive, "ppt/presentation.xml")
    listed = package_xml(archive, "ppt/presentation.xml").find(f"{P}sldIdLst")
    ordered = [
        relations[sid.get(f"{R}id") or ""][1]
        for sid in (listed if listed is not None else [])
        if (sid.get(f"{R}id") or "") in relations
    ]
    if ordered:
        return [path for path in ordered if path in archive.namelist()]
    # No list: the slides by their number.
    numbered = {}
    for name in archive.namelist():
        found = _SLIDE_NUMBER.search(name)
        if found and name.startswith("ppt/slides/"):
            numbered[int(found.group(1))] = name
    return [numbered[number] for number in sorted(numbered)]


def _notes_path(archive, slide_path: str) -> str:
    for kind, target in _relations(archive, slide_path).values():
        if kind.endswith("/notesSlide") and target in archive.namelist():
            return target
    return ""


def _shapes(tree: ElementTree.Element | None, notes: bool = False) -> list[tuple[str, str]]:
    """(kind, text) blocks of the shapes of a slide (or its notes), in the slide's order."""
    blocks: list[tuple[str, str]] = []
    if tree is None:
        return blocks
    for shape in tree:
        if shape.tag == f"{MC}AlternateContent":
            # A shape that newer PowerPoints draw one way (an equation: <mc:Choice>) and
            # older ones another (<mc:Fallback>): the first way that has text.
            for way in (shape.find(f"{MC}Choice"), shape.find(f"{MC}Fallback")):
                found = _shapes(way, notes) if way is not None else []
                if found:
                    blocks += found
                    break
        elif shape.tag == f"{P}grpSp":
            blocks += _shapes(shape, notes)
        elif shape.tag == f"{P}sp":
            placeholder = shape.find(f"{P}nvSpPr/{P}nvPr/{P}ph")
            kind = "" if placeholder is None else placeholder.get("type", "")
            if placeholder is not None and (kind in _FURNITURE or (notes and kind == "sldImg")):
                continue
            body = shape.find(f"{P}txBody")
            if body is not None:
                blocks += _text_body(body, kind if placeholder is not None else None, notes)
        elif shape.tag == f"{P}graphicFrame":
            for row in shape.iter(f"{A}tr"):
                cells = [_paragraphs_text(cell) for cell in row.iter(f"{A}tc")]
                if any(cells):
                    blocks.append(
                        ("row", "| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
                    )
    return blocks


def _text_body(
    body: ElementTree.Element, placeholder: str | None, notes: bool
) -> list[tuple[str, str]]:
    blocks = []
    heading = "" if notes or placeholder is None else _TITLES.get(placeholder, "")
    for paragraph in body.iter(f"{A}p"):
        text = _paragraph_text(paragraph, emphasis=not heading)
        if not text:
            continue
        if heading:
            blocks.append(("heading", heading + text.replace("\n", " ")))
        elif _bulleted(paragraph, placeholder, notes):
            blocks.append(("item", "- " + text.replace("\n", " ")))
        else:
            blocks.append(("text", text))
    return blocks


def _bulleted(paragraph: ElementTree.Element, placeholder: str | None, notes: bool) -> bool:
    properties = paragraph.find(f"{A}pPr")
    if properties is not None:
        if properties.find(f"{A}buNone") is not None:
            return False
        if (
            properties.find(f"{A}buChar") is not None
            or properties.find(f"{A}buAutoNum") is not None
        ):
            return True
    return not notes and placeholder in _BODIES


def _paragraph_text(paragraph: ElementTree.Element, *, emphasis: bool) -> str:
    pieces: list[tuple[str, str]] = []
    for part in paragraph:
        if part.tag == f"{A}r":
            properties = part.find(f"{A}rPr")
            bold = properties is not None and _is_on_attribute(properties.get("b"))
            italic = properties is not None and _is_on_attribute(properties.get("i"))
            mark = "**" if bold else "*" if italic else ""
            pieces.append((part.findtext(f"{A}t") or "", mark))
        elif part.tag == f"{A}br":
            pieces.append(("\n", ""))
        elif part.tag == f"{A14}m":  # an equation: its text, as the Markdown writes one
            formula = "".join(t.text or "" for t in part.iter(f"{OMML}t")).strip()
            if formula:
                pieces.append((f" ${formula}$ ", ""))
    return marked(pieces, emphasis=emphasis)


def _paragraphs_text(element: ElementTree.Element) -> str:
    texts = (_paragraph_text(p, emphasis=True) for p in element.iter(f"{A}p"))
    return " ".join(t.replace("\n", " ") for t in texts if t)


def _is_on_attribute(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true", "on")
