"""`manage.py bench_memory`: the four-design memory benchmark (R-8.2, R-8.3).

Run it in its own database, never a test database:

    TUTORBRAIN_DB_NAME=tutorbrain_eval .venv/bin/python manage.py bench_memory

Steps: load the seeded histories (reused when already loaded), register the questions
(JSON + sha256, before any design runs), verify the hash, run every design, grade, and
write the Markdown table, the failures, and a bar chart to --out.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from tutorbrain.evaluation.bench import (
    QuestionFileTampered,
    bench_organization,
    bench_run,
    chart_png,
    corpus_load,
    failures_markdown,
    questions_register,
    report_markdown,
)
from tutorbrain.evaluation.designs import DESIGNS
from tutorbrain.evaluation.generator import REFERENCE_NOW
from tutorbrain.evaluation.integration import tasks_inline

DEFAULT_SUBJECTS = 48
DEFAULT_SEED = 2026
MIN_SUBJECTS = 1


class Command(BaseCommand):
    help = "Benchmark four memory designs on pre-registered questions (block-level grading)."

    def add_arguments(self, parser):
        parser.add_argument("--subjects", type=int, default=DEFAULT_SUBJECTS)
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
        parser.add_argument("--out", default=str(Path(settings.BASE_DIR) / "var" / "bench_memory"))
        parser.add_argument("--designs", nargs="*", choices=DESIGNS, default=list(DESIGNS))
        parser.add_argument(
            "--e2e",
            action="store_true",
            help="also ask every question through an OpenAI-compatible chat model (twice)",
        )
        parser.add_argument("--chat-base-url", default=settings.TUTORBRAIN_LLM_BASE_URL)
        parser.add_argument("--chat-model", default=settings.TUTORBRAIN_LLM_MODEL)
        parser.add_argument("--chat-api-key", default=settings.TUTORBRAIN_LLM_API_KEY)
        parser.add_argument(
            "--questions",
            help="grade an already registered question file (its sha256 is checked) instead of drawing one",
        )

    def handle(self, *args, **options):
        # Teaching and concept embeddings happen in this process, as the workers would.
        with tasks_inline():
            self.run(options)

    def run(self, options):
        if options["subjects"] < MIN_SUBJECTS:
            raise CommandError("--subjects must be at least 1")
        out = Path(options["out"])
        if options["questions"]:
            questions_file = Path(options["questions"])
        else:
            organization = bench_organization()
            with tqdm(total=options["subjects"], desc="histories", unit="pair") as bar:
                histories = corpus_load(
                    organization=organization,
                    seed=options["seed"],
                    subjects=options["subjects"],
                    progress=bar.update,
                )
            questions_file = out / f"questions-seed{options['seed']}.json"
            questions, digest = questions_register(
                histories=histories, seed=options["seed"], now=REFERENCE_NOW, path=questions_file
            )
            self.stdout.write(
                f"registered {len(questions)} questions: {questions_file} sha256 {digest}"
            )
        try:
            count = len(json.loads(questions_file.read_bytes())["questions"])
            with tqdm(total=count, desc="questions × designs", unit="q") as bar:
                result = bench_run(
                    questions_file=questions_file,
                    designs=tuple(options["designs"]),
                    progress=bar.update,
                    keep_prompts=options["e2e"],
                )
        except QuestionFileTampered as exc:
            raise CommandError(str(exc)) from exc
        command = "TUTORBRAIN_DB_NAME={} .venv/bin/python manage.py bench_memory {}".format(
            settings.DATABASES["default"]["NAME"], shlex.join(sys.argv[2:])
        ).strip()
        report = report_markdown(result, command=command, questions_file=questions_file)
        if options["e2e"]:
            report += "\n\n" + self.end_to_end(result, options)
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.md").write_text(report + "\n")
        (out / "failures.md").write_text(failures_markdown(result))
        chart_png(result, out / "chart.png")
        self.stdout.write(report)
        self.stdout.write(f"\nfailures: {out / 'failures.md'}\nchart:    {out / 'chart.png'}")

    def end_to_end(self, result, options) -> str:
        """The optional model-in-the-loop run; skipped (and said so) without an endpoint."""
        from tutorbrain.evaluation.e2e import RUNS, ChatEndpoint, e2e_markdown, e2e_run

        if not (options["chat_base_url"] and options["chat_model"]):
            return (
                "End-to-end mode skipped: no OpenAI-compatible chat endpoint configured "
                "(--chat-base-url/--chat-model or TUTORBRAIN_LLM_BASE_URL/TUTORBRAIN_LLM_MODEL)."
            )
        endpoint = ChatEndpoint(
            base_url=options["chat_base_url"],
            model=options["chat_model"],
            api_key=options["chat_api_key"],
            timeout=settings.TUTORBRAIN_LLM_TIMEOUT_SECONDS,
        )
        with tqdm(total=RUNS * len(result.prompts), desc="model answers", unit="q") as bar:
            e2e = e2e_run(endpoint=endpoint, prompts=result.prompts, progress=bar.update)
        return e2e_markdown(e2e, endpoint=endpoint, designs=list(options["designs"]))
