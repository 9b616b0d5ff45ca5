"""Word documents, slides, OpenDocument files, e-books and web pages are read as the
Markdown the extractor reads: their headings, bold terms, lists and tables kept
(concepts.reading_docx, _pptx, _odf, _epub, _html)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from concepts import reading_docx, reading_office
from concepts.devset import html_of_markdown
from concepts.extractors.offline import OfflineExtractor
from concepts.reading import ParsedFile, UnreadableFile, file_kind, parse

DATA = Path(__file__).parent / "data"
OFFICE = DATA / "office"
W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _names(pages: list[str], language: str) -> list[str]:
    return [c.name for c in OfflineExtractor().extract(pages=pages, language=language).concepts]


# The sections the fixtures in tests/data/office/ were made from: (stem, Markdown, language).
SAMPLES = [
    ("cell-biology-notes", "cell-biology/cell-biology-notes.md", "en"),
    ("cell-transport-ar", "arabic/cell-transport.md", "ar"),
]


def _read_like_its_markdown(fixture: str, source: str, language: str) -> ParsedFile:
    """The fixture read (its kind by its name), once checked to yield the concepts of
    the Markdown it was made from."""
    parsed = parse((OFFICE / fixture).read_bytes(), file_kind(fixture) or "")
    markdown = (DATA / source).read_text("utf-8")
    assert _names(parsed.pages, language) == _names([markdown], language)
    return parsed


@pytest.mark.parametrize("maker", ["pandoc", "libreoffice"])
@pytest.mark.parametrize(("document", "source", "language"), SAMPLES)
def test_a_word_document_made_by_a_real_program_yields_the_concepts_of_its_markdown(
    maker, document, source, language
):
    """The .docx files were made from the Markdown by pandoc 2.17 and by LibreOffice 7
    (from the section's web page); LibreOffice marks Arabic bold as complex-script bold
    (<w:bCs/>), which a reader of <w:b/> alone does not see."""
    parsed = _read_like_its_markdown(f"{document}.{maker}.docx", source, language)
    assert parsed.kind == "docx"
    assert len(_names(parsed.pages, language)) >= 8


def _docx(body: str, styles: str = "", *, prolog: str = '<?xml version="1.0"?>') -> bytes:
    """A Word document holding `body` (the XML inside <w:body>) and `styles`."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(
            "word/document.xml",
            f'{prolog}<w:document xmlns:w="{W_NS}"><w:body>{body}</w:body></w:document>',
        )
        if styles:
            archive.writestr("word/styles.xml", f'<w:styles xmlns:w="{W_NS}">{styles}</w:styles>')
    return out.getvalue()


def _zip_without_document() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("word/other.xml", "<x/>")
    return out.getvalue()


def _p(*runs: str, style: str = "", numbered: bool = False) -> str:
    properties = f'<w:pStyle w:val="{style}"/>' if style else ""
    if numbered:
        properties += '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>'
    return f"<w:p><w:pPr>{properties}</w:pPr>{''.join(runs)}</w:p>"


def _r(text: str, properties: str = "") -> str:
    return f'<w:r><w:rPr>{properties}</w:rPr><w:t xml:space="preserve">{text}</w:t></w:r>'


STYLES = (
    # A French Word names its heading style "Titre1"; its built-in name stays "heading 1".
    '<w:style w:type="paragraph" w:styleId="Titre1"><w:name w:val="heading 1"/>'
    "<w:rPr><w:b/></w:rPr></w:style>"
    '<w:style w:type="paragraph" w:styleId="Sous"><w:name w:val="Sous-section"/>'
    '<w:basedOn w:val="Titre1"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>'
    '<w:style w:type="character" w:styleId="Fort"><w:name w:val="Strong"/>'
    "<w:rPr><w:b/></w:rPr></w:style>"
    '<w:style w:type="paragraph" w:styleId="Gras"><w:name w:val="Bold body"/>'
    "<w:rPr><w:b/></w:rPr></w:style>"
)


def test_word_headings_bold_runs_lists_and_tables_become_markdown():
    body = (
        _p(_r("Cell transport"), style="Titre1")
        + _p(_r("Passive transport"), style="Sous")
        # Word splits a bold word into runs; a space between two bold runs joins them.
        + _p(
            _r("Osmo", "<w:b/>"),
            _r("sis ", '<w:b w:val="1"/>'),
            _r("is the diffusion of "),
            _r("water", "<w:i/>"),
            _r("; "),
            _r("active", '<w:rStyle w:val="Fort"/>'),
            _r(" ", "<w:b/>"),
            _r("transport", "<w:b/>"),
            _r(" uses ATP."),
        )
        # Bold by its paragraph style, one run set not bold.
        + _p(_r("Whole line "), _r("but this", '<w:b w:val="0"/>'), style="Gras")
        + _p(_r("first step"), numbered=True)
        + _p(_r("second step"), numbered=True)
        + "<w:tbl><w:tr><w:tc>"
        + _p(_r("ATP", "<w:b/>"))
        + "</w:tc><w:tc>"
        + _p(_r("energy | currency"))
        + "</w:tc></w:tr></w:tbl>"
        # Tracked changes: deleted text is not read, inserted text is.
        + '<w:p><w:del w:id="1"><w:r><w:delText>old words</w:delText></w:r></w:del>'
        + '<w:ins w:id="2"><w:r><w:t>new words</w:t></w:r></w:ins></w:p>'
    )
    (page,) = reading_docx.docx_pages(_docx(body, STYLES))
    assert page == (
        "# Cell transport\n\n"
        "## Passive transport\n\n"
        "**Osmosis** is the diffusion of *water*; **active transport** uses ATP.\n\n"
        "**Whole line** but this\n\n"
        "- first step\n- second step\n\n"
        "| **ATP** | energy / currency |\n\n"
        "new words"
    )


def test_a_text_box_drawn_two_ways_is_read_once():
    """Word draws a text box for itself (<mc:Choice>) and for older Words
    (<mc:Fallback>), each holding the same paragraphs."""
    mc = "http://schemas.openxmlformats.org/markup-compatibility/2006"
    box = _p(_r("Osmosis", "<w:b/>"), _r(" moves water"))
    body = _p(
        _r("Before the box. "),
        f"<w:r><mc:AlternateContent xmlns:mc='{mc}'><mc:Choice Requires='wps'><w:drawing>"
        f"<w:txbxContent>{box}</w:txbxContent></w:drawing></mc:Choice><mc:Fallback><w:pict>"
        f"<w:txbxContent>{box}</w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent>"
        "</w:r>",
    )
    assert reading_docx.docx_pages(_docx(body)) == ["Before the box. **Osmosis** moves water"]


def test_a_page_break_in_a_word_document_starts_a_new_page():
    body = (
        _p(_r("**Page one** text"))
        + _p(_r("before"), '<w:r><w:br w:type="page"/></w:r>', _r("after"))
        + "<w:p><w:pPr><w:pageBreakBefore/></w:pPr><w:r><w:t>third</w:t></w:r></w:p>"
        + _p("<w:r><w:lastRenderedPageBreak/><w:t>laid out on page four</w:t></w:r>")
    )
    pages = reading_docx.docx_pages(_docx(body))
    assert pages == ["**Page one** text\n\nbefore", "after", "third", "laid out on page four"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"PK\x03\x04 truncated", "it is no zip archive"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100, "older .doc"),
        (_zip_without_document(), "no word/document.xml"),
        (_docx(_p(_r("   "))), "holds no text"),
        (_docx("", prolog='<!DOCTYPE d [<!ENTITY a "aaaa">]>'), "declares XML entities"),
    ],
)
def test_a_file_that_is_no_readable_word_document_says_why(content, message):
    with pytest.raises(UnreadableFile, match=message):
        parse(content, "docx")


def test_a_damaged_word_document_says_so():
    content = bytearray(_docx(_p(_r("Osmosis is the diffusion of water. " * 40))))
    middle = content.index(b"Osmosis") + 200
    content[middle : middle + 4] = b"XXXX"
    with pytest.raises(UnreadableFile, match="the archive is damaged"):
        parse(bytes(content), "docx")


def test_a_word_document_too_big_unpacked_is_refused(monkeypatch):
    monkeypatch.setattr(reading_office, "MAX_PART_BYTES", 100)
    with pytest.raises(UnreadableFile, match="word/document.xml is .* bytes unpacked; too big"):
        parse(_docx(_p(_r("word " * 50))), "docx")


@pytest.mark.parametrize(("deck", "source", "language"), SAMPLES)
def test_slides_made_by_a_real_program_yield_the_concepts_of_their_markdown_by_slide(
    deck, source, language
):
    """pandoc 2.17 made the decks from the Markdown, a slide per section."""
    parsed = _read_like_its_markdown(f"{deck}.pandoc.pptx", source, language)
    assert parsed.kind == "pptx" and parsed.page_count > 3
    first = OfflineExtractor().extract(pages=parsed.pages, language=language).concepts[0]
    # Its page is the slide that marks it, not the first that names it.
    mark = f"**{first.name.casefold()}**"
    marked_on = [i for i, p in enumerate(parsed.pages, 1) if mark in p.casefold()]
    assert first.pages == marked_on[:1] and marked_on[0] > 1


P_NS = "http://schemas.openxmlformats.org/presentationml/2006/main"
A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"
R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
SLIDE_TYPE = R_NS + "/slide"
NOTES_TYPE = R_NS + "/notesSlide"


def _shape(placeholder: str | None, *paragraphs: str) -> str:
    ph = "" if placeholder is None else f"<p:ph {placeholder}/>"
    return (
        f"<p:sp><p:nvSpPr><p:cNvPr id='2' name='s'/><p:cNvSpPr/><p:nvPr>{ph}</p:nvPr>"
        f"</p:nvSpPr><p:txBody><a:bodyPr/>{''.join(paragraphs)}</p:txBody></p:sp>"
    )


def _a(*runs: tuple[str, str], bullet: str = "") -> str:
    text = "".join(f"<a:r><a:rPr {props}/><a:t>{t}</a:t></a:r>" for t, props in runs)
    return f"<a:p><a:pPr>{bullet}</a:pPr>{text}</a:p>"


def _slide(shapes: str, root: str = "p:sld", shown: str = "") -> str:
    return (
        f"<{root} xmlns:p='{P_NS}' xmlns:a='{A_NS}' xmlns:r='{R_NS}' {shown}><p:cSld><p:spTree>"
        f"{shapes}</p:spTree></p:cSld></{root}>"
    )


def _pptx(slides: list[str], order: list[int], notes: dict[int, str]) -> bytes:
    """A deck of `slides` (slide1.xml …), shown in `order`, with speaker `notes`."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        ids = "".join(f"<p:sldId id='{256 + n}' r:id='rId{n}'/>" for n in order)
        archive.writestr(
            "ppt/presentation.xml",
            f"<p:presentation xmlns:p='{P_NS}' xmlns:r='{R_NS}'><p:sldIdLst>{ids}"
            "</p:sldIdLst></p:presentation>",
        )
        rels = "".join(
            f"<Relationship Id='rId{n}' Type='{SLIDE_TYPE}' Target='slides/slide{n}.xml'/>"
            for n in range(1, len(slides) + 1)
        )
        archive.writestr(
            "ppt/_rels/presentation.xml.rels",
            f"<Relationships xmlns='{REL_NS}'>{rels}</Relationships>",
        )
        for n, slide in enumerate(slides, 1):
            archive.writestr(f"ppt/slides/slide{n}.xml", slide)
            if n in notes:
                archive.writestr(
                    f"ppt/slides/_rels/slide{n}.xml.rels",
                    f"<Relationships xmlns='{REL_NS}'><Relationship Id='rId9' "
                    f"Type='{NOTES_TYPE}' Target='../notesSlides/notesSlide{n}.xml'/>"
                    "</Relationships>",
                )
                archive.writestr(f"ppt/notesSlides/notesSlide{n}.xml", notes[n])
    return out.getvalue()


def test_slides_read_in_the_decks_order_with_titles_bullets_bold_tables_and_notes():
    number = _shape("type='sldNum'", _a(("7", "")))
    transport = _slide(
        _shape("type='title'", _a(("Passive transport", "b='1'")))
        + _shape("idx='1'", _a(("Osmosis", "b='1'"), (" moves water", "")), _a(("no energy", "")))
        + "<p:grpSp>"
        + _shape(None, _a(("A ", ""), ("solute", "i='1'"), (" dissolves", "")))
        + "</p:grpSp>"
        + "<p:graphicFrame><a:graphic><a:graphicData><a:tbl><a:tr><a:tc><a:txBody>"
        + _a(("ATP", "b='1'"))
        + "</a:txBody></a:tc><a:tc><a:txBody>"
        + _a(("energy", ""))
        + "</a:txBody></a:tc></a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>"
        + number
    )
    title = _slide(_shape("type='ctrTitle'", _a(("Cell biology", ""))) + number)
    hidden = _slide(_shape("type='title'", _a(("Hidden slide", ""))), shown="show='0'")
    notes = _slide(
        _shape("type='sldImg'", _a(("image", "")))
        + _shape("type='body' idx='1'", _a(("Stress that ", ""), ("tonicity", "b='1'"))),
        root="p:notes",
    )
    # slide2.xml is shown first, slide1.xml second; slide3.xml is hidden.
    deck = _pptx([transport, title, hidden], order=[2, 1, 3], notes={1: notes})
    assert parse(deck, "pptx").pages == [
        "# Cell biology",
        "## Passive transport\n\n"
        "- **Osmosis** moves water\n- no energy\n\n"
        "A *solute* dissolves\n\n"
        "| **ATP** | energy |\n\n"
        "Stress that **tonicity**",
        "",  # hidden: an empty page, so that the slides after it keep their numbers
    ]


def test_a_slide_drawn_two_ways_for_its_equation_is_read_with_the_equation():
    """PowerPoint (and pandoc) wrap a text box holding an equation in
    <mc:AlternateContent>: the equation's way (<mc:Choice>) is read, its text as $…$;
    before, the whole box was skipped (a dev book's slides lost 60 % of their terms)."""
    mc = "http://schemas.openxmlformats.org/markup-compatibility/2006"
    a14 = "http://schemas.microsoft.com/office/drawing/2010/main"
    omml = "http://schemas.openxmlformats.org/officeDocument/2006/math"
    equation = (
        f"<a:p><a:r><a:rPr b='1'/><a:t>Molarity</a:t></a:r><a:r><a:t> is </a:t></a:r>"
        f"<a14:m xmlns:a14='{a14}'><m:oMathPara xmlns:m='{omml}'><m:oMath><m:r><m:t>M=n/V"
        "</m:t></m:r></m:oMath></m:oMathPara></a14:m></a:p>"
    )
    shape = _shape("idx='1'", equation)
    fallback = _shape("idx='1'", _a(("picture of it", "")))
    slide = _slide(
        f"<mc:AlternateContent xmlns:mc='{mc}'><mc:Choice Requires='a14'>{shape}</mc:Choice>"
        f"<mc:Fallback>{fallback}</mc:Fallback></mc:AlternateContent>"
    )
    assert parse(_pptx([slide], order=[1], notes={}), "pptx").pages == ["- **Molarity** is $M=n/V$"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"PK\x03\x04 truncated", "not a .pptx file \\(it is no zip archive\\)"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100, "an older .ppt"),
        (_zip_without_document(), "it has no ppt/presentation.xml"),
        (_pptx([_slide("")], order=[1], notes={}), "holds no text"),
    ],
)
def test_a_file_that_is_no_readable_deck_of_slides_says_why(content, message):
    with pytest.raises(UnreadableFile, match=message):
        parse(content, "pptx")


@pytest.mark.parametrize(("book", "source", "language"), SAMPLES)
def test_an_e_book_made_by_a_real_program_yields_the_concepts_of_its_markdown(
    book, source, language
):
    """pandoc 2.17 made the EPUBs from the Markdown: a title page, then the chapter."""
    parsed = _read_like_its_markdown(f"{book}.pandoc.epub", source, language)
    assert parsed.kind == "epub" and parsed.page_count == 2


def _epub(chapters: dict[str, str], spine: list[str], extra: dict[str, str]) -> bytes:
    """An EPUB whose package lists `chapters` (name -> XHTML) and a style sheet, read in
    `spine` order; `extra` adds or replaces files."""
    files = {
        "mimetype": "application/epub+zip",
        "META-INF/container.xml": (
            "<container xmlns='urn:oasis:names:tc:opendocument:xmlns:container'><rootfiles>"
            "<rootfile full-path='OEBPS/book.opf'/></rootfiles></container>"
        ),
        "OEBPS/book.opf": (
            "<package xmlns='http://www.idpf.org/2007/opf'><manifest>"
            + "".join(
                f"<item id='{n}' href='text/{n}.xhtml' media-type='application/xhtml+xml'/>"
                for n in chapters
            )
            + "<item id='css' href='style/book.css' media-type='text/css'/></manifest><spine>"
            + "".join(f"<itemref idref='{n}'/>" for n in spine)
            + "</spine></package>"
        ),
        "OEBPS/style/book.css": "span.keyterm { font-weight: bold }",
        **{f"OEBPS/text/{n}.xhtml": html for n, html in chapters.items()},
        **extra,
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return out.getvalue()


CHAPTERS = {
    "one": "<html><body><h1>Transport</h1><p><span class='keyterm'>Osmosis</span> moves "
    "water.</p></body></html>",
    "two": "<html><body><h1>Cells</h1><p>A <b>cell</b> lives.</p></body></html>",
}


def test_an_e_book_is_read_chapter_by_chapter_in_reading_order_with_its_style_sheet():
    """The spine, not the file names, orders the pages; a class the book's CSS file sets
    bold marks a term."""
    # Obfuscated fonts (as many EPUBs have) are no DRM: the book still reads.
    fonts = {
        "META-INF/encryption.xml": "<encryption xmlns:enc='http://www.w3.org/2001/04/xmlenc#'>"
        "<enc:EncryptedData><enc:CipherData><enc:CipherReference URI='OEBPS/fonts/a.otf'/>"
        "</enc:CipherData></enc:EncryptedData></encryption>"
    }
    pages = parse(_epub(CHAPTERS, spine=["two", "one"], extra=fonts), "epub").pages
    assert pages == ["# Cells\n\nA **cell** lives.", "# Transport\n\n**Osmosis** moves water."]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"PK\x03\x04 truncated", "not a .epub file \\(it is no zip archive\\)"),
        (_zip_without_document(), "it has no META-INF/container.xml"),
        (
            _epub(CHAPTERS, ["one"], {"META-INF/container.xml": "<container/>"}),
            "names no package file",
        ),
        (
            _epub(
                CHAPTERS,
                ["one"],
                {
                    "META-INF/encryption.xml": "<encryption><EncryptedData><CipherData>"
                    "<CipherReference URI='OEBPS/text/one.xhtml'/></CipherData>"
                    "</EncryptedData></encryption>"
                },
            ),
            "encrypted \\(DRM\\)",
        ),
        (_epub(CHAPTERS, [], {}), "holds no text"),
    ],
)
def test_a_file_that_is_no_readable_e_book_says_why(content, message):
    with pytest.raises(UnreadableFile, match=message):
        parse(content, "epub")


@pytest.mark.parametrize("kind", ["odt", "odp"])
@pytest.mark.parametrize(("document", "source", "language"), SAMPLES)
def test_opendocument_files_made_by_libreoffice_yield_the_concepts_of_their_markdown(
    kind, document, source, language
):
    """LibreOffice 7.4 saved the .odt from the section's web page and the .odp from
    pandoc's slides; it marks Arabic bold as complex-script bold."""
    parsed = _read_like_its_markdown(f"{document}.libreoffice.{kind}", source, language)
    # The text is one page; the presentation has the slides of the deck it came from.
    slides = parse((OFFICE / f"{document}.pandoc.pptx").read_bytes(), "pptx").page_count
    assert parsed.page_count == (1 if kind == "odt" else slides)


ODF = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
}


def _odf(body: str, styles: str = "", named: str = "") -> bytes:
    spaces = " ".join(f"xmlns:{k}='{v}'" for k, v in ODF.items())
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(
            "content.xml",
            f"<office:document-content {spaces}><office:automatic-styles>{styles}"
            f"</office:automatic-styles><office:body>{body}</office:body>"
            "</office:document-content>",
        )
        archive.writestr(
            "styles.xml",
            f"<office:document-styles {spaces}><office:styles>{named}</office:styles>"
            "</office:document-styles>",
        )
    return out.getvalue()


ODT_STYLES = (
    "<style:style style:name='T1' style:family='text' style:parent-style-name='Strong'/>"
    "<style:style style:name='T2' style:family='text'><style:text-properties "
    "fo:font-style='italic'/></style:style>"
    "<style:style style:name='T3' style:family='text'><style:text-properties "
    "style:font-weight-complex='bold'/></style:style>"
    "<style:style style:name='P9' style:family='paragraph'><style:paragraph-properties "
    "fo:break-before='page'/></style:style>"
)
NAMED = (
    "<style:style style:name='Strong' style:family='text'><style:text-properties "
    "fo:font-weight='bold'/></style:style>"
)


def test_an_odt_text_keeps_headings_styled_bold_and_italic_lists_tables_and_pages():
    body = (
        "<office:text><text:h text:outline-level='2'>Passive transport</text:h>"
        "<text:p><text:span text:style-name='T1'>Osmosis</text:span> moves "
        "<text:span text:style-name='T2'>water</text:span>.<text:s text:c='2'/>"
        "A note<text:note><text:note-body><text:p>not read</text:p></text:note-body>"
        "</text:note> here.</text:p>"
        "<text:list><text:list-item><text:p>first</text:p></text:list-item>"
        "<text:list-item><text:p>second</text:p></text:list-item></text:list>"
        "<table:table><table:table-row><table:table-cell><text:p><text:span "
        "text:style-name='T1'>ATP</text:span></text:p></table:table-cell><table:table-cell>"
        "<text:p>energy</text:p></table:table-cell></table:table-row></table:table>"
        "<text:soft-page-break/><text:p>On page two, <text:span text:style-name='T3'>"
        "التناضح</text:span>.</text:p>"
        "<text:p text:style-name='P9'>Page three.</text:p></office:text>"
    )
    assert parse(_odf(body, ODT_STYLES, NAMED), "odt").pages == [
        "## Passive transport\n\n**Osmosis** moves *water*. A note here.\n\n"
        "- first\n- second\n\n| **ATP** | energy |",
        "On page two, **التناضح**.",
        "Page three.",
    ]


def test_an_odp_presentation_is_a_page_per_slide_with_its_notes():
    frame = "<draw:frame presentation:class='{}'><draw:text-box>{}</draw:text-box></draw:frame>"
    slide = (
        "<draw:page>"
        + frame.format("title", "<text:p>Transport</text:p>")
        + frame.format(
            "outline",
            "<text:p>Plain line.</text:p><text:list><text:list-item><text:p><text:span "
            "text:style-name='T1'>Osmosis</text:span> moves water</text:p></text:list-item>"
            "</text:list>",
        )
        + frame.format("page-number", "<text:p>7</text:p>")
        + "<presentation:notes>"
        + frame.format("notes", "<text:p>Say why.</text:p>")
        + "</presentation:notes></draw:page>"
    )
    second = "<draw:page>" + frame.format("title", "<text:p>Cells</text:p>") + "</draw:page>"
    content = _odf(f"<office:presentation>{slide}{second}</office:presentation>", ODT_STYLES, NAMED)
    assert parse(content, "odp").pages == [
        "## Transport\n\nPlain line.\n\n- **Osmosis** moves water\n\nSay why.",
        "## Cells",
    ]


@pytest.mark.parametrize(
    ("kind", "content", "message"),
    [
        ("odt", b"PK\x03\x04 truncated", "not a .odt file \\(it is no zip archive\\)"),
        ("odp", _zip_without_document(), "it has no content.xml"),
        ("odt", _odf("<office:presentation/>"), "content.xml has no text"),
        ("odp", _odf("<office:text/>"), "content.xml has none"),
    ],
)
def test_a_file_that_is_no_readable_opendocument_says_why(kind, content, message):
    with pytest.raises(UnreadableFile, match=message):
        parse(content, kind)


PAGE = b"""<!doctype html><html><head><title>Site</title><style>p { color: red }</style>
<script>var s = "<b>Script</b>";</script></head><body>
<nav><a href="/">Home</a> <b>Menu</b></nav>
<h1>Cell <strong>transport</strong></h1>
<p><strong>Osmosis </strong>is the movement of water across a <b>semi<b>permeable</b>
membrane</b>.<br>A <dfn>solute</dfn> &amp; a <em>solvent</em>.</p>
<div hidden><b>Hidden</b></div><p style="display: none">Also hidden</p>
<ul><li>One <b>active transport</b></li><li><p>Two</p></li></ul>
<ol><li>first</li><li>second</li></ol>
<dl><dt>Tonicity</dt><dd>the ability of a solution to change a cell's volume</dd></dl>
<table><tr><th>Term</th><th>Meaning</th></tr><tr><td><b>ATP</b></td><td>energy</td></tr></table>
</body></html>"""


def test_a_web_page_becomes_markdown_without_what_a_reader_does_not_see():
    (page,) = parse(PAGE, file_kind("page.html")).pages
    assert page == (
        "# Cell transport\n\n"
        "**Osmosis** is the movement of water across a **semipermeable membrane**.\n"
        "A **solute** & a *solvent*.\n\n"
        "- One **active transport**\n- Two\n\n"
        "1. first\n2. second\n\n"
        "- **Tonicity**: the ability of a solution to change a cell's volume\n\n"
        "| Term | Meaning |\n| **ATP** | energy |"
    )


def test_spans_of_one_kind_side_by_side_on_a_web_page_are_one_span():
    """Pages split a bold word ("<b>semi</b><b>permeable</b>") and set each letter of a
    formula's variable in its own italic (pandoc's "<em>v</em><em>e</em>"): as
    Markdown, "**semi****permeable**" or "*v**e*" would read as bold of something else."""
    page = (
        b"<p><b>semi</b><b>permeable</b> and <b>cell</b> <b>wall</b>: "
        b"<em>v</em><em>e</em><em>l</em> = (<em>d</em>)/(<em>t</em>)</p>"
    )
    assert parse(page, "html").pages == [
        "**semipermeable** and **cell** **wall**: *vel* = (*d*)/(*t*)"
    ]


def test_bold_and_italic_set_by_a_spans_style_class_or_term_markup_count():
    """Google Docs exports bold as a class its <style> defines (or an inline style);
    OpenStax's own HTML marks a key term as <span data-type="term">."""
    page = (
        b"<html><head><style>.c0{font-weight:400}.c3{color:#000;font-weight:700}"
        b".c5{font-style:italic}</style></head><body>"
        b'<h1><span class="c3">Cell transport</span></h1><p>'
        b'<span class="c3 c0">Osmosis</span><span class="c0"> moves </span>'
        b'<span class="c5">water</span>; a <span data-type="term" class="term">solute</span>'
        b' dissolves, <span style="font-weight: bold">ions</span> too, '
        b'<span style="font-weight:400">not this</span>.</p></body></html>'
    )
    assert parse(page, "html").pages == [
        "# Cell transport\n\n"
        "**Osmosis** moves *water*; a **solute** dissolves, **ions** too, not this."
    ]


def test_end_tags_html_lets_a_page_leave_out_are_implied():
    """</head>, </tr>, </td>, </li> and </p> are optional in HTML: a page without them
    reads whole (before, a missing </head> hid the body and a missing </tr> the rows)."""
    page = (
        b"<html><head><title>T</title><body><h2>Cells</h2><table><tr><td><b>ATP</b>"
        b"<td>energy<tr><td>ADP<td>spent</table><p>After it <b>osmosis</b>.<ul><li>one"
        b"<li>two</ul>"
    )
    assert parse(page, "html").pages == [
        "## Cells\n\n| **ATP** | energy |\n| ADP | spent |\n\nAfter it **osmosis**.\n\n- one\n- two"
    ]


def test_a_web_page_is_read_in_its_declared_charset_else_as_windows_saves_it():
    latin = '<meta charset="windows-1252"><p><b>Café</b> au lait</p>'.encode("cp1252")
    assert parse(latin, "html").pages == ["**Café** au lait"]
    assert parse("<p><b>Café</b> au lait</p>".encode("cp1252"), "html").pages == [
        "**Café** au lait"
    ]
    with pytest.raises(UnreadableFile, match="not in its declared charset"):
        parse(b'<meta charset="utf-8"><p>Caf\xe9</p>', "html")
    with pytest.raises(UnreadableFile, match="holds no text"):
        parse(b"<html><script>only code</script></html>", "html")


@pytest.mark.parametrize(
    ("source", "language", "code_page"),
    [
        ("cell-biology/capitulo-transporte.md", "es", "cp1252"),
        ("cell-biology/cell-biology-notes.md", "en", "cp1252"),
        ("arabic/cell-transport.md", "ar", "cp1256"),
    ],
)
def test_a_text_file_windows_saved_in_its_code_page_yields_the_concepts_of_its_utf8(
    source, language, code_page
):
    """Notepad and older Office save Spanish, French or Portuguese text in cp1252 and
    Arabic in cp1256. Before, UTF-16 was tried without its mark and such a file came
    out as Chinese characters (or was refused)."""
    text = (DATA / source).read_text("utf-8")
    (page,) = parse(text.encode(code_page), "markdown").pages
    assert page == text
    assert _names([page], language) == _names([text], language)


def test_utf16_with_its_mark_reads_and_binary_data_is_no_text():
    assert parse("**Ósmosis**: agua".encode("utf-16"), "text").pages == ["**Ósmosis**: agua"]
    with pytest.raises(UnreadableFile, match="binary data, not text"):
        parse(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "text")


@pytest.mark.parametrize(
    ("source", "language"),
    [
        ("cell-biology/cell-biology-notes.md", "en"),
        ("cell-biology/capitulo-transporte.md", "es"),
        ("arabic/cell-transport.md", "ar"),
    ],
)
def test_a_web_page_of_a_markdown_file_yields_its_concepts(source, language):
    markdown = (DATA / source).read_text("utf-8")
    page = html_of_markdown(markdown).encode("utf-8")
    assert _names(parse(page, "html").pages, language) == _names([markdown], language)


@pytest.mark.parametrize(
    ("name", "content_type", "kind"),
    [
        ("notes.docx", "", "docx"),
        ("page.HTM", "", "html"),
        ("page.xhtml", "", "html"),
        ("upload", "text/html; charset=utf-8", "html"),
        (
            "upload",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "docx",
        ),
        ("slides.pptx", "", "pptx"),
        ("book.EPUB", "", "epub"),
        ("notes.odt", "", "odt"),
        ("slides.odp", "", "odp"),
        ("upload", "application/epub+zip", "epub"),
        ("grades.xlsx", "text/html", None),
    ],
)
def test_word_documents_and_web_pages_are_known_by_extension_then_by_type(name, content_type, kind):
    assert file_kind(name, content_type) == kind
