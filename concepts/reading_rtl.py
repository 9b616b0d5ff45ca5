"""Right-to-left PDF pages (Arabic) rebuilt from where each glyph stands on the page.

pypdf's text of an Arabic page comes out wrong in a different way for each program that
made the PDF: Chromium's gives the words of a line in reverse order and splits a word
around its lam-alef ligature; LibreOffice's drops the spaces between words (its word
gaps are glyph positions, not space characters). What every such PDF does set right is
where each glyph stands. So a page whose text is mostly right-to-left is read again
with pdfminer.six, glyph by glyph: glyphs on one baseline are a line; an Arabic line
reads from its right edge to its left, a space where two glyphs stand apart, and a
left-to-right run inside it ("DNA", "37 °C") keeps its own order. A ligature glyph
carries its letters in reading order ("ﻻ" is lam, alef), and presentation forms are
folded to letters (NFKC).

The result is pieces as `concepts.reading` makes them from pypdf (text, bold by the
font's name, size, baseline), so paragraphs, bold runs and headings are read the same.
A page set in two columns is read column by column (the right one first).
"""

from __future__ import annotations

import io
import logging
import unicodedata
from dataclasses import dataclass

from concepts.reading import TextPiece, is_bold_font_name

# Two glyphs this far apart (in font sizes) have a word space between them.
WORD_GAP = 0.2
# A gap narrower than this (in font sizes) is a word gap, never a gutter between columns.
WORD_GAP_MAX = 0.8
# A page has two columns when this many of its rows split at one place.
COLUMN_MIN_ROWS = 5
# Glyphs whose baselines differ by less than this (in font sizes) are on one line.
SAME_LINE = 0.4
# A page is read glyph by glyph when at least this share of its letters is right-to-left.
RTL_MIN_SHARE = 0.5


def is_mostly_rtl(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    rtl = sum(1 for c in letters if unicodedata.bidirectional(c) in ("R", "AL"))
    return bool(letters) and rtl >= RTL_MIN_SHARE * len(letters)


@dataclass(frozen=True)
class _Glyph:
    text: str
    x0: float
    x1: float
    y: float
    size: float
    bold: bool


def rtl_pages(content: bytes, numbers: list[int]) -> dict[int, list[TextPiece]]:
    """Page index (from 0) -> its pieces, for the pages `numbers` of the PDF `content`."""
    from pdfminer.high_level import extract_pages

    # pdfminer warns of every font it measures by guess ("Could not get FontBBox"): the
    # glyphs' positions it gives are still right.
    logging.getLogger("pdfminer").setLevel(logging.ERROR)

    out: dict[int, list[TextPiece]] = {}
    wanted = sorted(numbers)
    for index, page in zip(
        wanted, extract_pages(io.BytesIO(content), page_numbers=wanted), strict=False
    ):
        glyphs = [
            _Glyph(
                unicodedata.normalize("NFKC", char.get_text()),
                char.x0,
                char.x1,
                char.y0,
                char.size,
                is_bold_font_name(char.fontname),
            )
            for char in _chars(page)
        ]
        out[index] = _pieces(glyphs)
    return out


def _chars(item):
    from pdfminer.layout import LTChar

    if isinstance(item, LTChar):
        yield item
        return
    try:
        children = list(item)
    except TypeError:
        return
    for child in children:
        yield from _chars(child)


def _pieces(glyphs: list[_Glyph]) -> list[TextPiece]:
    """The page's lines as pieces: a piece per run of one boldness and size."""
    pieces: list[TextPiece] = []
    for line in _lines(glyphs):
        if pieces:
            pieces.append(TextPiece("\n"))
        run: list[str] = []
        key: tuple[bool, float] | None = None
        y = line[0].y
        for glyph in line:
            if key is not None and (glyph.bold, round(glyph.size, 1)) != key and glyph.text.strip():
                pieces.append(TextPiece("".join(run), key[0], key[1], y))
                run = []
            if glyph.text.strip() or key is None:
                key = (glyph.bold, round(glyph.size, 1))
            run.append(glyph.text)
        if run and key is not None:
            pieces.append(TextPiece("".join(run), key[0], key[1], y))
    return pieces


def _lines(glyphs: list[_Glyph]) -> list[list[_Glyph]]:
    """The page's lines in reading order, each in reading order with its spaces. On a
    page set in two columns, the first column's lines (the right one on a right-to-left
    page) come before the other's, down to a line that spans both (a title)."""
    rows: list[list[_Glyph]] = []
    for glyph in sorted(glyphs, key=lambda g: -g.y):
        if rows and abs(rows[-1][0].y - glyph.y) < SAME_LINE * max(glyph.size, 1.0):
            rows[-1].append(glyph)
        else:
            rows.append([glyph])
    rows = [sorted(row, key=lambda g: g.x0) for row in rows]
    left = min((g.x0 for g in glyphs), default=0.0)
    right = max((g.x1 for g in glyphs), default=0.0)
    gutter = _gutter(rows, left, right)  # the middle of the gap between two columns
    rtl_page = is_mostly_rtl("".join(g.text for g in glyphs))
    lines: list[list[_Glyph]] = []
    columns: tuple[list[list[_Glyph]], list[list[_Glyph]]] = ([], [])  # (left, right)

    def line(part: list[_Glyph], edges: tuple[float, float]) -> list[_Glyph]:
        return _in_reading_order(part, _reads_right_to_left(part, *edges))

    def flush() -> None:
        first, second = (columns[1], columns[0]) if rtl_page else columns
        lines.extend(first + second)
        columns[0].clear()
        columns[1].clear()

    for row in rows:
        if gutter is None:
            lines.append(line(row, (left, right)))
        elif _spans(row, gutter):
            flush()  # across the gutter: a title or a caption over both columns
            lines.append(line(row, (left, right)))
        else:
            halves = (
                ([g for g in row if g.x1 <= gutter], (left, gutter)),
                ([g for g in row if g.x1 > gutter], (gutter, right)),
            )
            for side, (part, edges) in enumerate(halves):
                if any(g.text.strip() for g in part):
                    columns[side].append(line(part, edges))
    flush()
    return lines


def _spans(row: list[_Glyph], middle: float) -> bool:
    """Whether a line runs across the gutter's middle: a glyph of it over the middle, or
    glyphs on both sides of it no further apart than a word gap (under WORD_GAP_MAX font
    sizes: a title's word gap can fall there; a gutter is 1 em or more)."""
    ink = [g for g in row if g.text.strip()]
    if any(g.x0 < middle < g.x1 for g in ink):
        return True
    before = [g for g in ink if g.x1 <= middle]
    after = [g for g in ink if g.x0 >= middle]
    if not (before and after):
        return False
    last, first = max(before, key=lambda g: g.x1), min(after, key=lambda g: g.x0)
    return first.x0 - last.x1 < WORD_GAP_MAX * max(last.size, first.size, 1.0)


def _gutter(rows: list[list[_Glyph]], left: float, right: float) -> float | None:
    """The x of the gap between two columns of text, when the page has them: a band in
    the middle of the page (30-70 % of its width), at least half a font size wide, that
    no glyph of 90 % of the page's lines reaches (a title may cross it); on each side,
    text in half the lines or more, as wide as a quarter of the page at the median (a
    table of short terms and their meanings is no two columns). Word gaps do not line
    up from line to line; a gutter does (a browser's is 1 em wide, a book's 1.5-3)."""
    counted = [[g for g in row if g.text.strip()] for row in rows]
    counted = [row for row in counted if len(row) >= 3]
    if len(counted) < COLUMN_MIN_ROWS or right - left < 1:
        return None
    width = int(right - left) + 1
    cover = [0] * width
    for row in counted:
        seen = bytearray(width)
        for g in row:
            lo, hi = max(0, int(g.x0 - left)), min(width, int(g.x1 - left) + 1)
            seen[lo:hi] = b"\x01" * max(0, hi - lo)
        for x in range(width):
            cover[x] += seen[x]
    empty = max(1.0, 0.1 * len(counted))
    best = (0, 0)  # the widest empty band (start, end), in points from `left`
    start = None
    for x in range(int(0.3 * width), int(0.7 * width) + 1):
        if cover[x] <= empty:
            start = x if start is None else start
            if x + 1 - start > best[1] - best[0]:
                best = (start, x + 1)
        else:
            start = None
    sizes = sorted(g.size for row in counted for g in row)
    if best[1] - best[0] < 0.5 * sizes[len(sizes) // 2]:
        return None
    # Its middle: among the bins the fewest lines reach (a long line may reach into the
    # band's edge), the middle one.
    least = min(cover[best[0] : best[1]])
    core = [x for x in range(best[0], best[1]) if cover[x] == least]
    middle = left + core[len(core) // 2] + 0.5
    for side in (0, 1):
        widths = sorted(
            part[-1].x1 - part[0].x0
            for part in ([g for g in row if (g.x1 <= middle) == (side == 0)] for row in counted)
            if part
        )
        if len(widths) < 0.5 * len(counted) or widths[len(widths) // 2] < 0.25 * width:
            return None
    return middle


def _reads_right_to_left(segment: list[_Glyph], left: float, right: float) -> bool:
    """Whether a line reads from its right edge: its letters are mostly right-to-left;
    or it has none (".H2O", an Arabic paragraph's last line) and stands against the
    page's right edge, away from its left one, as a right-to-left paragraph sets it."""
    text = "".join(g.text for g in segment)
    if is_mostly_rtl(text):
        return True
    if any(unicodedata.bidirectional(c) in ("R", "AL") for c in text):
        return False
    size = max(segment[0].size, 1.0)
    return right - segment[-1].x1 < 2 * size and segment[0].x0 - left > 2 * size


def _in_reading_order(segment: list[_Glyph], right_to_left: bool) -> list[_Glyph]:
    """The glyphs of one line (sorted left to right) in reading order, with a space
    where two stand a word apart; in a right-to-left line, a left-to-right run (Latin
    words, numbers) keeps its own order."""
    spaced: list[_Glyph] = []
    for glyph in segment:
        if spaced and glyph.text.strip() and spaced[-1].text.strip():
            gap = glyph.x0 - spaced[-1].x1
            if gap > WORD_GAP * max(glyph.size, 1.0):
                spaced.append(_Glyph(" ", spaced[-1].x1, glyph.x0, glyph.y, glyph.size, False))
        spaced.append(glyph)
    if not right_to_left:
        return spaced
    ordered = spaced[::-1]  # right to left: the reading order of the Arabic
    kinds = _bidi_kinds([g.text for g in ordered])
    out: list[_Glyph] = []
    rtl: list[int] = []  # where in `out` the right-to-left glyphs are
    i = 0
    while i < len(ordered):
        j = i + 1
        if kinds[i] in ("L", "EN"):
            while j < len(ordered) and kinds[j] == kinds[i]:
                j += 1
            out.extend(reversed(ordered[i:j]))  # a left-to-right run, set left to right
        else:
            rtl.append(len(out))
            out.append(ordered[i])
        i = j
    return _brackets_mirrored(out, rtl)


# Brackets in right-to-left text are drawn mirrored. Some programs' PDFs name the glyph
# drawn (Chromium: "(" for a logical ")"), others the character written (LibreOffice).
_MIRROR = str.maketrans("()[]{}<>«»", ")(][}{><»«")
_OPENING, _CLOSING = "([{<«", ")]}>»"


def _brackets_mirrored(glyphs: list[_Glyph], rtl: list[int]) -> list[_Glyph]:
    """The glyphs with the right-to-left brackets swapped when they read backwards (a
    closing one before any opening one): ")RNA(" is "(RNA)"."""
    depth = 0
    for index in rtl:
        text = glyphs[index].text
        depth += sum(text.count(c) for c in _OPENING) - sum(text.count(c) for c in _CLOSING)
        if depth < 0:
            break
    else:
        return glyphs
    out = list(glyphs)
    for index in rtl:
        g = out[index]
        out[index] = _Glyph(g.text.translate(_MIRROR), g.x0, g.x1, g.y, g.size, g.bold)
    return out


def _bidi_kinds(texts: list[str]) -> list[str]:
    """Each glyph's direction in a right-to-left line (glyphs in reading order, a
    left-to-right run still reversed): "L" (a left-to-right word: "DNA", "COVID-19"),
    "EN" (a number: "37", "3,5") or "R" (the rest), resolved as the Unicode bidirectional
    algorithm does for an Arabic line (its rules W2-W7 and N1, simplified). So "37 °C"
    is two runs, a number and a word, as a browser sets it; "50%" after Arabic is the
    number and then its sign. A number touching a Latin letter (no space between, or one
    of - . , /) is part of the word: "COVID-19", "H2O". A number after a Latin word and a
    space ("DNA polymerase 2") cannot be told from one before it and is read before."""
    raw = [unicodedata.bidirectional(t[0]) if t else "ON" for t in texts]
    n = len(raw)
    kinds = list(raw)
    # Numbers touching Latin letters are part of the word (W7 within a word).
    changed = True
    while changed:
        changed = False
        for i in range(n):
            if kinds[i] not in ("EN", "AN", "ES", "CS"):
                continue
            for step in (-1, 1):
                k = i + step
                if (
                    0 <= k < n
                    and kinds[k] == "L"
                    and (kinds[i] in ("EN", "AN") or _between_digits_and_letter(kinds, i))
                ):
                    kinds[i], changed = "L", True
                    break
    strong = "R"
    for i in range(n):  # W2: a number after Arabic letters is an Arabic number
        if kinds[i] in ("L", "R", "AL"):
            strong = kinds[i]
        elif kinds[i] == "EN" and strong == "AL":
            kinds[i] = "AN"
    kinds = ["R" if k == "AL" else k for k in kinds]  # W3
    for i in range(1, n - 1):  # W4: one separator between two digits of a kind
        number = kinds[i - 1] if kinds[i - 1] == kinds[i + 1] else ""
        if (number == "EN" and kinds[i] in ("CS", "ES")) or (number == "AN" and kinds[i] == "CS"):
            kinds[i] = number
    for i in range(n):  # W5: a terminator ("%") next to a European number is part of it
        if kinds[i] == "ET" and any(0 <= k < n and kinds[k] == "EN" for k in (i - 1, i + 1)):
            kinds[i] = "EN"
    kinds = ["EN" if k == "AN" else k for k in kinds]  # a number, either way
    i = 0
    while i < n:  # N1: neutrals between two left-to-right glyphs are left-to-right
        if kinds[i] in ("L", "R", "EN"):
            i += 1
            continue
        j = i
        while j < n and kinds[j] not in ("L", "R", "EN"):
            j += 1
        left_to_right = i > 0 and j < n and kinds[i - 1] == "L" and kinds[j] == "L"
        for k in range(i, j):
            kinds[k] = "L" if left_to_right else "R"
        i = j
    return kinds


def _between_digits_and_letter(kinds: list[str], i: int) -> bool:
    """Whether separator i joins a Latin letter and a digit ("COVID-19", "CO2/H2O")."""
    sides = [kinds[k] for k in (i - 1, i + 1) if 0 <= k < len(kinds)]
    return "L" in sides and any(k in ("EN", "AN") for k in sides)
