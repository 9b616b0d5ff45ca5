"""A web page (HTML) as the Markdown the extractor reads.

A saved web page, an LMS export or a page of an online textbook marks what the extractor
looks for as Markdown does: headings (<h1>-<h6> -> "#" lines), key terms in bold
(<strong>, <b>, and <dfn>, HTML's own "the defining instance of a term" -> **term**; a
<span> whose style is bold, as Google Docs exports it, or that OpenStax's HTML marks as
a term, <span data-type="term">), italics (<em>, <i>, <cite>, a span in italic ->
*term*), lists ("- " items), definition lists (a glossary:
"- **term**: definition") and tables ("| a | b |" rows). What a reader does not see is
left out: scripts, styles, templates, the <head>, navigation menus and anything marked
hidden. Standard library only (html.parser); one page, as a web page has no pages.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from concepts.reading import decode_text
from concepts.reading_office import joined

# Read as nothing, children and all.
_SKIPPED = {"script", "style", "noscript", "template", "head", "nav", "svg", "math", "select"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}
# Each starts a block of its own (a paragraph break before and after).
_BLOCKS = {
    "address", "article", "aside", "blockquote", "body", "caption", "details", "div",
    "dl", "fieldset", "figcaption", "figure", "footer", "form", "header", "hr", "html",
    "li", "main", "ol", "p", "pre", "section", "summary", "table", "tr", "ul",
}  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BOLD = {"strong", "b", "dfn"}
_ITALIC = {"em", "i", "cite"}
_SPACES = re.compile(r"\s+")
# A <span> that marks a term: Google Docs sets bold and italic by a class its <style>
# defines (".c3{font-weight:700}") or in the span's own style, OpenStax's HTML its key
# terms as <span data-type="term">.
_STYLE_BOLD = re.compile(r"font-weight:(?:bold|bolder|[6-9]00)\b")
_STYLE_ITALIC = re.compile(r"font-style:(?:italic|oblique)\b")
_CLASS_RULE = re.compile(r"\.([\w-]+)\s*\{([^}]*)\}")
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def html_text(content: bytes, css: str = "") -> str:
    """The page's text as Markdown (UnreadableFile when its bytes are no text in the
    charset it declares). `css`: style sheets the page links to (an EPUB's), read as if
    in its <style>."""
    declared = _CHARSET.search(content[:4096])
    parser = _MarkdownOfHtml()
    parser.css.append(css)
    parser.feed(decode_text(content, declared.group(1).decode("ascii") if declared else ""))
    parser.close()
    return parser.markdown()


def _style_mark(style: str) -> str:
    """ "b" for a style that sets text bold, "i" for one in italic, else ""."""
    style = _SPACES.sub("", style.lower())
    if _STYLE_BOLD.search(style):
        return "b"
    return "i" if _STYLE_ITALIC.search(style) else ""


def _hidden(attrs: list[tuple[str, str | None]]) -> bool:
    values = dict(attrs)
    style = _SPACES.sub("", (values.get("style") or "").lower())
    return (
        "hidden" in values
        or values.get("aria-hidden") == "true"
        or "display:none" in style
        or "visibility:hidden" in style
    )


class _MarkdownOfHtml(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        # Finished blocks: (kind, text); list items and table rows run on line by line.
        self.blocks: list[tuple[str, str]] = []
        self.line: list[str] = []  # the block being written
        self.skip_depth = 0  # inside a skipped element (its tag, to close it)
        self.skip_tag = ""
        self.bold_starts: list[int] = []  # where each open bold span starts in `line`
        self.italic_starts: list[int] = []
        # Where the last span's closing mark stands in `line`, and the mark.
        self.closed: tuple[int, str] | None = None
        self.heading = 0
        self.pre = 0
        self.lists: list[list[int]] = []  # per open list: [item number] (0 for <ul>)
        self.cells: list[str] | None = None  # the cells of the table row being read
        self.term = ""  # a <dt> waiting for its <dd>
        self.item = ""  # the "- " or "3. " of the list item being read
        self.list_count = 0  # lists met so far: each list's items run on, not two lists'
        self.spans: list[str] = []  # per open <span>: the mark it opened ("b", "i" or "")
        self.css: list[str] = []  # the text of the page's <style> elements
        self.in_style = False
        self.class_marks: dict[str, str] | None = None  # class -> "b"/"i", from self.css

    # -- the parser's events -------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.in_style = self.in_style or tag == "style"
        if self.skip_depth and self.skip_tag == "head" and tag == "body":
            self.skip_depth = 0  # "</head>" may be left out: the body ends the head
        if self.skip_depth:
            self.skip_depth += tag == self.skip_tag and tag not in _VOID
            return
        if tag in _SKIPPED or _hidden(attrs):
            if tag not in _VOID:
                self.skip_tag, self.skip_depth = tag, 1
            return
        if tag == "br":
            self.line.append("\n")
        elif tag in _HEADINGS:
            self._end_block()
            self.heading = _HEADINGS[tag]
        elif tag in _BOLD:
            self.bold_starts.append(len(self.line))
        elif tag in _ITALIC:
            self.italic_starts.append(len(self.line))
        elif tag == "span":
            mark = self._span_mark(attrs)
            self.spans.append(mark)
            if mark:
                (self.bold_starts if mark == "b" else self.italic_starts).append(len(self.line))
        elif tag in ("ul", "ol"):
            self._end_block()
            self.lists.append([0 if tag == "ul" else 1])
            self.list_count += 1
        elif tag in ("td", "th") and self.cells is not None:
            self._end_cell()
        elif tag == "tr":
            self._end_row()  # "</tr>" may be left out
            self._end_block()
            self.cells = []
        elif tag in ("dt", "dd"):
            self._end_block()
        elif tag == "li":
            self._end_block()
            number = self.lists[-1][0] if self.lists else 0
            self.item = f"{number}. " if number else "- "
            if number:
                self.lists[-1][0] += 1
        elif tag in _BLOCKS:
            self._end_block()
            self.pre += tag == "pre"

    def handle_endtag(self, tag: str) -> None:
        self.in_style = self.in_style and tag != "style"
        if self.skip_depth:
            self.skip_depth -= tag == self.skip_tag
            return
        if tag in _HEADINGS and self.heading:
            text = self._text()
            if text:
                self.blocks.append(("heading", "#" * self.heading + " " + text))
            self.line, self.heading, self.closed = [], 0, None
            self.bold_starts, self.italic_starts = [], []
        elif tag == "span":
            mark = self.spans.pop() if self.spans else ""
            if mark == "b" and self.bold_starts:
                self._wrap(self.bold_starts.pop(), "**", nested=bool(self.bold_starts))
            elif mark == "i" and self.italic_starts:
                self._wrap(self.italic_starts.pop(), "*", nested=bool(self.italic_starts))
        elif tag in _BOLD and self.bold_starts:
            self._wrap(self.bold_starts.pop(), "**", nested=bool(self.bold_starts))
        elif tag in _ITALIC and self.italic_starts:
            self._wrap(self.italic_starts.pop(), "*", nested=bool(self.italic_starts))
        elif tag in ("td", "th") and self.cells is not None:
            self._end_cell()
        elif tag in ("tr", "table"):
            self._end_row()
            self._end_block()
        elif tag == "dt":
            self.term, self.line, self.closed = self._text(), [], None
        elif tag == "dd":
            text = self._text()
            entry = f"- **{self.term}**: {text.replace(chr(10), ' ')}" if self.term else text
            self.blocks.append(("entry" if self.term else "text", entry))
            self.term, self.line, self.closed = "", [], None
        elif tag in ("ul", "ol"):
            self._end_block()
            if self.lists:
                self.lists.pop()
        elif tag in _BLOCKS:
            self._end_block()
            self.pre = max(0, self.pre - (tag == "pre"))

    def handle_data(self, data: str) -> None:
        if self.in_style:
            self.css.append(data)
        if not self.skip_depth:
            self.line.append(data if self.pre else _SPACES.sub(" ", data))

    def _span_mark(self, attrs: list[tuple[str, str | None]]) -> str:
        """ "b" for a span that sets its text bold or marks a term, "i" for one in italic."""
        values = dict(attrs)
        if values.get("data-type") == "term":
            return "b"
        if self.class_marks is None:
            self.class_marks = {}
            for name, rule in _CLASS_RULE.findall("".join(self.css)):
                if _style_mark(rule):
                    self.class_marks[name] = _style_mark(rule)
        marks = [_style_mark(values.get("style") or "")]
        marks += [self.class_marks.get(name, "") for name in (values.get("class") or "").split()]
        return "b" if "b" in marks else "i" if "i" in marks else ""

    # -- building blocks -----------------------------------------------------------------
    def _text(self) -> str:
        text = "".join(self.line)
        if self.pre:
            return text.strip("\n")
        lines = (_SPACES.sub(" ", line).strip() for line in text.split("\n"))
        return "\n".join(line for line in lines if line)

    def _wrap(self, start: int, mark: str, *, nested: bool) -> None:
        """Put `mark` around what was written since `start`, its spaces outside the marks
        ("** osmosis **" is no Markdown bold). A span inside one of its kind is left
        bare: the outer one marks it. A span right after one of its kind continues it:
        "<b>semi</b><b>permeable</b>" is **semipermeable**, not **semi****permeable**
        (and a formula's italic letters, "<em>v</em><em>e</em>", one italic word)."""
        inner = "".join(self.line[start:])
        if nested or self.heading or not inner.strip() or "\n" in inner.strip():
            return
        lead = inner[: len(inner) - len(inner.lstrip())]
        trail = inner[len(inner.rstrip()) :]
        closed = self.closed
        if (
            not lead
            and closed is not None
            and closed[1] == mark
            and closed[0] < start
            and not "".join(self.line[closed[0] + 1 : start])
        ):
            self.line[closed[0]] = ""
            self.line[start:] = [inner.strip(), mark, trail]
            self.closed = (start + 1, mark)
            return
        self.line[start:] = [lead, mark, inner.strip(), mark, trail]
        self.closed = (start + 3, mark)

    def _end_row(self) -> None:
        if self.cells is not None:
            self._end_cell()
            cells, self.cells = self.cells, None
            if any(cells):
                self.blocks.append(("row", "| " + " | ".join(cells) + " |"))

    def _end_cell(self) -> None:
        if self.cells is not None:
            cell = self._text().replace("\n", " ").replace("|", "/")
            if self.line or cell:
                self.cells.append(cell)
            self.line, self.closed = [], None

    def _end_block(self) -> None:
        if self.cells is not None:
            return  # a <p> or <div> inside a table cell belongs to the cell
        text = self._text()
        self.line, self.bold_starts, self.italic_starts, self.closed = [], [], [], None
        if not text:
            return
        if self.item:
            self.blocks.append((f"item {self.list_count}", self.item + text.replace("\n", " ")))
            self.item = ""
        else:
            self.blocks.append(("text", text))

    def markdown(self) -> str:
        self._end_block()
        return joined(self.blocks)
