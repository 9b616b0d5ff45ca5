"""Scoring a map against a textbook development set (issue 13): the devset's own name
matching, and `evaluate_extraction --devset` reading a set through the real services."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from concepts.devset import bold_spans, copula_subjects, html_of_markdown, load_devset, norm, score
from concepts.models import Concept, FileReading
from memory.models import Subject, SubjectFile

MINI = Path(__file__).resolve().parent / "data" / "devset-mini"


def test_names_are_compared_as_the_devset_scorer_compares_them():
    assert norm("Iones") == norm("ion")
    assert norm("Studies") == norm("study")
    assert norm("orbital *sp*^3") == "orbital sp3"
    result = score(["número atómico (Z)", "caloría (cal)", "ion"], ["Número atómico", "iones", "x"])
    assert (result.correct_predicted, result.predicted, result.gold_found) == (2, 3, 2)
    assert result.misses == ["caloría (cal)"] and result.false_positives == ["x"]


def test_the_bold_baseline_is_every_bold_span_or_only_those_in_running_text():
    texts = [path.read_text(encoding="utf-8") for path in load_devset(MINI).files()]
    every, inline = bold_spans(texts), bold_spans(texts, inline_only=True)
    assert "Problem" in every and "Problem" not in inline
    assert "active transport" in inline


@pytest.mark.django_db
def test_evaluate_extraction_reads_a_devset_through_the_services_and_scores_the_map():
    out = StringIO()
    call_command("evaluate_extraction", devset=[str(MINI)], stdout=out)
    text = out.getvalue()
    assert FileReading.objects.filter(state=FileReading.State.DONE).count() == 2
    names = {c.name for c in Concept.objects.all()}
    # Marked terms are read, furniture and a person named in passing are not.
    assert {"Cell", "Plasma membrane", "Diffusion", "Osmosis", "Active transport"} <= names
    assert not names & {"Figure", "Problem", "Solution", "Note", "Exercise", "Schleiden"}
    # The abbreviation joined its long form: one concept, two names.
    assert Concept.objects.get(key="interquartile range").aliases == ["iqr"]
    # Gold: 6 terms, one never in the text; the other 5 are found.
    assert "gold 6" in text and "gold found 5" in text
    assert "furniture or function-word concepts: 0" in text
    assert "| devset-mini | 2 |" in text


@pytest.mark.django_db
def test_evaluate_extraction_one_file_uploads_the_whole_book_as_one_pdf():
    out = StringIO()
    call_command("evaluate_extraction", devset=[str(MINI)], one_file=True, as_pdf=True, stdout=out)
    text = out.getvalue()
    assert [f.name for f in SubjectFile.objects.all()] == ["devset-mini.pdf"]
    names = {c.name for c in Concept.objects.all()}
    assert {"Cell", "Plasma membrane", "Diffusion", "Osmosis", "Active transport"} <= names
    assert "gold 6" in text and "gold found 5" in text
    assert "Each book uploaded as one file." in text and "| devset-mini | 1 |" in text


@pytest.mark.django_db
def test_evaluate_extraction_uploads_files_made_elsewhere_from_a_folder(tmp_path):
    from concepts.devset import pdf_of_markdown

    for path in load_devset(MINI).files():
        (tmp_path / f"{path.stem}.pdf").write_bytes(pdf_of_markdown(path.read_text("utf-8")))
    out = StringIO()
    call_command("evaluate_extraction", devset=[str(MINI)], file_dir=str(tmp_path), stdout=out)
    assert [f.name for f in SubjectFile.objects.order_by("name")] == [
        "ch01_01_m1.pdf",
        "ch01_02_m2.pdf",
    ]
    assert "gold 6" in out.getvalue() and "gold found 5" in out.getvalue()

    (tmp_path / "ch01_02_m2.pdf").unlink()
    subjects = Subject.objects.count()
    with pytest.raises(CommandError, match="--file-dir: no file for the section ch01_02_m2"):
        call_command("evaluate_extraction", devset=[str(MINI)], file_dir=str(tmp_path))
    assert Subject.objects.count() == subjects  # nothing written


def test_evaluate_extraction_refuses_a_folder_that_is_no_devset(tmp_path):
    with pytest.raises(CommandError, match="gold_concepts.json"):
        call_command("evaluate_extraction", devset=[str(tmp_path)])


@pytest.mark.django_db
def test_evaluate_extraction_unmarked_reads_the_files_without_their_bold_beside_its_baseline():
    out = StringIO()
    call_command("evaluate_extraction", devset=[str(MINI)], unmarked=True, stdout=out)
    text = out.getvalue()
    # The stored files are the text a PDF would give: no bold mark left.
    assert SubjectFile.objects.count() == 2
    assert all(b"**" not in bytes(f.content) for f in SubjectFile.objects.all())
    assert "every bold span" not in text
    # The baseline in the language the files are written in (no --language given).
    assert "'X is a ...' subjects: P=0.800 R=0.667" in text
    assert "Bold marks removed; baseline: every 'X is a/an/the ...' subject." in text


@pytest.mark.django_db
@pytest.mark.parametrize("maker", ["fpdf2", "chromium"])
def test_evaluate_extraction_as_pdf_reads_each_file_set_as_a_pdf_with_its_bold_in_a_bold_font(
    maker,
):
    out = StringIO()
    call_command(
        "evaluate_extraction", devset=[str(MINI)], as_pdf=True, pdf_maker=maker, stdout=out
    )
    text = out.getvalue()
    files = list(SubjectFile.objects.order_by("name"))
    assert [f.name for f in files] == ["ch01_01_m1.pdf", "ch01_02_m2.pdf"]
    assert all(bytes(f.content).startswith(b"%PDF") for f in files)
    # The bold of the PDF (fpdf2's or the browser's) is read as the Markdown's was: the
    # same concepts, no furniture.
    names = {c.name for c in Concept.objects.all()}
    assert {"Cell", "Plasma membrane", "Diffusion", "Osmosis", "Active transport"} <= names
    assert not names & {"Figure", "Problem", "Solution", "Note", "Exercise", "Schleiden"}
    assert "gold 6" in text and "gold found 5" in text
    assert f"Each file set as a PDF ({maker})." in text and "every bold span:" in text


def test_a_section_becomes_a_web_page_with_its_headings_bold_lists_and_paragraphs():
    page = html_of_markdown(
        "# Cells\n\nA **cell** is *small* & [alive](x.md).\nSecond line.\n\n- one\n- **two**\n"
    )
    assert '<h1 dir="auto">Cells</h1>' in page
    assert '<p dir="auto">A <b>cell</b> is <i>small</i> &amp; alive.<br>Second line.</p>' in page
    assert '<ul dir="auto"><li>one</li><li><b>two</b></li></ul>' in page


def test_the_unmarked_baseline_is_each_sentence_subject_before_is_a():
    texts = ["A cell is the unit of life. Cells in this layer are the oldest. It is red."]
    assert copula_subjects(texts, copulas={"is", "are"}, articles={"a", "an", "the"}) == [
        "cell",
        "Cells in this layer",
    ]
