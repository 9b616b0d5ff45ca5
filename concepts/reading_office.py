"""What the readers of packaged files share (Word, PowerPoint, OpenDocument, EPUB: zips
of XML), and the web-page reader too: opening a package and its parts safely, and
writing runs and blocks as the Markdown the extractor reads."""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from xml.etree import ElementTree

# A part larger than this unpacked is refused (a zip bomb, not a handout).
MAX_PART_BYTES = 200 * 1024 * 1024
_OLE_HEADER = b"\xd0\xcf\x11\xe0"
_DAMAGED = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError)


class OfficeFileError(ValueError):
    """The bytes are no Office file that can be read; the message says why."""


def open_package(content: bytes, main_part: str, what: str, older: str = "") -> zipfile.ZipFile:
    """The package's archive, checked to hold `main_part` ("word/document.xml"); `what`
    and `older` name the format and its predecessor in messages (".docx", ".doc")."""
    if older and content.startswith(_OLE_HEADER):
        # An OLE file: the older format renamed, or a file saved with a password to open.
        raise OfficeFileError(
            f"not a {what} file (an older {older}, or a file protected by a password to "
            f"open): save it as {what} without a password"
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
    except _DAMAGED as exc:
        raise OfficeFileError(f"not a {what} file (it is no zip archive)") from exc
    if main_part not in archive.namelist():
        archive.close()
        raise OfficeFileError(f"not a {what} file: it has no {main_part}")
    return archive


def package_bytes(archive: zipfile.ZipFile, name: str) -> bytes:
    """A part of the package; refused when too big unpacked or damaged."""
    try:
        info = archive.getinfo(name)
    except KeyError as exc:
        raise OfficeFileError(f"the archive has no {name}") from exc
    if info.file_size > MAX_PART_BYTES:
        raise OfficeFileError(f"{name} is {info.file_size} bytes unpacked; too big")
    try:
        return archive.read(info)
    except _DAMAGED as exc:
        raise OfficeFileError(f"the archive is damaged: {exc}") from exc


def package_xml(archive: zipfile.ZipFile, name: str) -> ElementTree.Element:
    """A part of the package, parsed; refused when too big, damaged or declaring entities."""
    data = package_bytes(archive, name)
    # An Office part declares no document type: one that does is refused rather than
    # expanded (entity expansion is the XML parser's known hole).
    if b"<!DOCTYPE" in data[:4096] or b"<!ENTITY" in data:
        raise OfficeFileError(f"{name} declares XML entities; it is not read")
    try:
        return ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise OfficeFileError(f"{name} cannot be parsed: {exc}") from exc


# Letters of the scripts Office sets as "complex script" (Arabic, Hebrew): their bold and
# italic are properties of their own (Word's <w:bCs/>, OpenDocument's "-complex").
COMPLEX_SCRIPT = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")


def run_mark(marks: dict[str, bool], *, complex_script: bool) -> str:
    """A run's mark from the toggles set on it ("b", "bCs", "i", "iCs"): "**" bold, "*"
    italic, "" neither; a complex-script run reads the "Cs" ones."""
    suffix = "Cs" if complex_script else ""
    return "**" if marks.get("b" + suffix) else "*" if marks.get("i" + suffix) else ""


def marked(pieces: list[tuple[str, str]], *, emphasis: bool) -> str:
    """A paragraph's (text, mark) runs as text, bold runs as **…** and italic ones as *…*
    (mark "**" or "*"): runs of one kind joined, the spaces at a run's ends put outside
    its marks; a paragraph bold throughout is one bold line, as a label is. `emphasis`
    False: no marks (a heading)."""
    spans: list[list[str]] = []
    for text, mark in pieces:
        if not text:
            continue
        # A space between two bold runs is part of the span ("**active transport**").
        if spans and (spans[-1][1] == mark or (not text.strip() and "\n" not in text)):
            spans[-1][0] += text
        else:
            spans.append([text, mark])
    out = []
    for text, mark in spans:
        core = text.strip()
        if mark and emphasis and core and "\n" not in core:
            out.append(text[: len(text) - len(text.lstrip())] + f"{mark}{core}{mark}")
            out.append(text[len(text.rstrip()) :])
        else:
            out.append(text)
    lines = (re.sub(r"[ \t]+", " ", line).strip() for line in "".join(out).split("\n"))
    return "\n".join(line for line in lines if line)


def joined(blocks: list[tuple[str, str]]) -> str:
    """(kind, text) blocks as Markdown: a blank line between blocks, but list items and
    table rows of one kind run on line by line ("text" and "heading" blocks never do)."""
    parts = []
    for index, (kind, text) in enumerate(blocks):
        runs_on = index and kind not in ("text", "heading") and blocks[index - 1][0] == kind
        parts.append(("\n" if runs_on else "\n\n") + text if index else text)
    return "".join(parts)
