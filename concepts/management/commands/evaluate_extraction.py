"""Quality of a subject's concept map: against the sample gold list, or a textbook devset."""

from __future__ import annotations

import os
import statistics
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from concepts.devset import (
    DevsetError,
    bold_spans,
    copula_subjects,
    load_devset,
    pdf_of_markdown,
    pdfs_from_browser,
    score,
    without_bold,
)
from concepts.evaluation import evaluate, load_gold
from concepts.models import Concept, FileReading, Prerequisite
from concepts.naming import text_language
from concepts.services import file_read, file_upload
from concepts.validator import name_check
from memory.errors import InvalidInput
from memory.models import Organization, Subject
from memory.services import organization_create, subject_get_or_create
from tutorbrain import language

DEFAULT_GOLD = Path(settings.BASE_DIR) / "tests" / "data" / "cell-biology" / "gold.json"
# Validator verdicts that mean "furniture or function words", counted in the map.
FURNITURE_REASONS = (
    "only function words",
    "only emphasis or function words",
    "exercise or layout furniture",
    "section furniture",
    "a heading that opens with section furniture",
    "opens or closes on a function word: a fragment",
)


class Command(BaseCommand):
    help = (
        "Compare a subject's map with the hand-labelled sample gold (default), or read a "
        "textbook development set (--devset PATH: every section uploaded and read through "
        "the real services into a scratch subject) and score the map against the authors' "
        "glossary beside the bold-span baseline of the same files."
    )

    def add_arguments(self, parser):
        parser.add_argument("--org", default=None)
        parser.add_argument("--subject", default=None)
        parser.add_argument("--gold", default=str(DEFAULT_GOLD))
        parser.add_argument("--devset", action="append", default=[], metavar="PATH")
        parser.add_argument("--language", default="", help="subject language for --devset")
        parser.add_argument("--show", type=int, default=0, help="false positives/misses listed")
        parser.add_argument(
            "--unmarked",
            action="store_true",
            help="read each file with its bold marks removed, as a PDF's text would come; "
            "the baseline is then every 'X is a/an/the ...' sentence subject",
        )
        parser.add_argument(
            "--as-pdf",
            action="store_true",
            help="upload each file set as a PDF (concepts.devset.pdf_of_markdown: bold in a "
            "bold font, other marks dropped), as a student's PDF of the book would come; "
            "with --unmarked, a PDF without bold (its headings still larger and bold)",
        )
        parser.add_argument(
            "--one-file",
            action="store_true",
            help="upload the whole book as one file (its sections one after the other, in "
            "file order), as a teacher uploading the book would",
        )
        parser.add_argument(
            "--file-dir",
            default="",
            metavar="DIR",
            help="upload DIR/<section>.<ext> for each section (with --one-file, DIR/<book>.<ext>), "
            "a file of any type the product reads (PDF, Word, slides, e-book, web page, ...) "
            "made by any program: LibreOffice's PDFs, pandoc's .docx (docs/BENCHMARKS.md)",
        )
        parser.add_argument(
            "--pdf-maker",
            choices=["fpdf2", "chromium"],
            default="fpdf2",
            help="with --as-pdf, what sets the PDF: fpdf2 (default), or Chromium printing "
            "the section as a web page (concepts.devset.pdfs_from_browser; the executable "
            "from TUTORBRAIN_CHROMIUM, else /usr/bin/chromium)",
        )

    def handle(self, *args, **options):
        if options["devset"]:
            return self._devsets(options)
        subject = Subject.objects.filter(
            organization__slug=options["org"] or "demo",
            external_id=options["subject"] or "cell-biology",
        ).first()
        if subject is None:
            raise CommandError(
                f"no subject {options['subject']!r} in organization {options['org']!r}"
            )
        concepts = [
            (c.name, list(c.aliases))
            for c in Concept.objects.filter(subject=subject).order_by("pk")
        ]
        edges = list(
            Prerequisite.objects.filter(subject=subject).values_list(
                "concept__name", "prerequisite__name"
            )
        )
        result = evaluate(gold=load_gold(Path(options["gold"])), concepts=concepts, edges=edges)
        self.stdout.write(result.concepts.line("concepts"))
        self.stdout.write(result.edges.line("edges"))
        self.stdout.write(f"not in the gold list: {result.unmatched_predicted}")
        self.stdout.write(f"gold concepts missed: {result.missed_gold}")
        self.stdout.write(f"edges not in the gold list: {result.wrong_edges}")
        self.stdout.write(f"gold edges missed: {result.missed_edges}")

    def _devsets(self, options) -> None:
        try:
            devsets = [load_devset(Path(p)) for p in options["devset"]]
        except DevsetError as exc:
            raise CommandError(str(exc)) from exc
        # Every file made first: a missing PDF or a failing browser writes nothing.
        prepared = [_files(devset, options) for devset in devsets]
        slug = options["org"] or "devset-evaluation"
        organization = Organization.objects.filter(slug=slug).first() or organization_create(
            name="Devset evaluation", slug=slug
        )
        rows = []
        for devset, (paths, texts, files) in zip(devsets, prepared, strict=True):
            rows.append(self._one(devset, organization, options, paths, texts, files))
        self.stdout.write("")
        if options["unmarked"]:
            self.stdout.write("Bold marks removed; baseline: every 'X is a/an/the ...' subject.")
        if options.get("one_file"):
            self.stdout.write("Each book uploaded as one file.")
        if options.get("file_dir"):
            self.stdout.write(f"Each file as its file in {options['file_dir']}.")
        elif options["as_pdf"]:
            self.stdout.write(f"Each file set as a PDF ({options['pdf_maker']}).")
        self.stdout.write(
            "| book | files | concepts | P | R | F1 | furniture | baseline P / R / F1 "
            "| inline bold P / R / F1 | read s/file first 10 / last 10 |"
        )
        self.stdout.write("|---|---|---|---|---|---|---|---|---|---|")
        for row in rows:
            self.stdout.write(row)

    def _one(self, devset, organization, options, paths, texts, files) -> str:
        # A new subject per run, even for two runs started in the same second (they
        # would otherwise read their files into one map).
        stamp = f"{timezone.now():%Y%m%d%H%M%S}-{uuid.uuid4().hex[:6]}"
        external_id = f"{options['subject'] or devset.name}-{stamp}"
        try:
            subject = subject_get_or_create(
                organization=organization,
                external_id=external_id,
                name=devset.name,
                language=options["language"],
            )
        except InvalidInput as exc:
            raise CommandError(str(exc)) from exc
        seconds: list[float] = []
        for path, (name, content) in zip(paths, files, strict=True):
            started = time.perf_counter()
            upload = file_upload(subject=subject, name=name, content=content, queue=False)
            reading = file_read(subject_file=upload.file)
            seconds.append(time.perf_counter() - started)
            if reading.state != FileReading.State.DONE:
                raise CommandError(f"{path.name}: reading {reading.state}: {reading.reason}")
        names = list(Concept.objects.filter(subject=subject).values_list("name", flat=True))
        furniture = [n for n in names if name_check(n).reason in FURNITURE_REASONS]
        gold = devset.glossary_terms()
        result = score(gold, names)
        self.stdout.write(f"{devset.name}: subject {organization.slug}/{external_id}")
        self.stdout.write(f"  map:               {result.line()}")
        if options["unmarked"]:
            code = subject.language or text_language("\n".join(texts)) or ""
            every = score(gold, _copula_subjects(texts, code))
            inline_cell = "—"
            self.stdout.write(f"  'X is a ...' subjects: {every.line()}")
        else:
            every = score(gold, bold_spans(texts))
            inline = score(gold, bold_spans(texts, inline_only=True))
            inline_cell = f"{inline.precision:.3f} / {inline.recall:.3f} / {inline.f1:.3f}"
            self.stdout.write(f"  every bold span:   {every.line()}")
            self.stdout.write(f"  inline bold spans: {inline.line()}")
        self.stdout.write(f"  furniture or function-word concepts: {len(furniture)} {furniture}")
        if options["show"]:
            self.stdout.write(f"  false positives: {result.false_positives[: options['show']]}")
            self.stdout.write(f"  misses: {result.misses[: options['show']]}")
        first = statistics.median(seconds[:10])
        last = statistics.median(seconds[-10:])
        return (
            f"| {devset.name} | {len(texts)} | {len(names)} | {result.precision:.3f} "
            f"| {result.recall:.3f} | {result.f1:.3f} | {len(furniture)} "
            f"| {every.precision:.3f} / {every.recall:.3f} / {every.f1:.3f} "
            f"| {inline_cell} "
            f"| {first:.2f} / {last:.2f} |"
        )


def _files(devset, options) -> tuple[list[Path], list[str], list[tuple[str, bytes]]]:
    """The section files, their texts and what is uploaded for each (name, content): the
    Markdown, without its bold (--unmarked), as one file (--one-file), as PDFs, or the
    files of --file-dir."""
    paths = devset.files()
    texts = [path.read_bytes().decode("utf-8") for path in paths]
    if options["unmarked"]:
        texts = [without_bold(text) for text in texts]
    if options.get("one_file"):
        paths, texts = [devset.path / f"{devset.name}.md"], ["\n\n".join(texts)]
    files = [(path.name, text.encode("utf-8")) for path, text in zip(paths, texts, strict=True)]
    if options.get("file_dir"):
        return paths, texts, [_file_in(Path(options["file_dir"]), path) for path in paths]
    if not options["as_pdf"]:
        return paths, texts, files
    pdfs = (
        pdfs_from_browser(texts, os.environ.get("TUTORBRAIN_CHROMIUM", "/usr/bin/chromium"))
        if options.get("pdf_maker") == "chromium"
        else [pdf_of_markdown(text) for text in texts]
    )
    return paths, texts, [(f"{p.stem}.pdf", pdf) for p, pdf in zip(paths, pdfs, strict=True)]


def _file_in(folder: Path, section: Path) -> tuple[str, bytes]:
    """(name, content) of the one file of `folder` named as the section, any extension."""
    found = sorted(p for p in folder.glob(f"{section.stem}.*") if p.is_file())
    if len(found) != 1:
        what = "no file" if not found else f"{len(found)} files"
        raise CommandError(f"--file-dir: {what} for the section {section.stem} in {folder}")
    return found[0].name, found[0].read_bytes()


def _copula_subjects(texts: list[str], code: str) -> list[str]:
    """The unmarked baseline in the subject's language (its "is/are", "es/son", ...)."""
    data = language.data(code) if code in language.languages() else {}
    return copula_subjects(
        texts,
        copulas=set(data.get("weak_copulas", [])),
        articles=set(data.get("leading_articles", [])),
    )
