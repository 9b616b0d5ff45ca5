"""The four-design memory benchmark (R-8.2, R-8.3).

1. `corpus_load`: generated histories (seeded) written through the product's services.
2. `questions_register`: questions generated from each pair's *logged* data and map,
   written to a JSON file together with its sha256 *before any design runs*.
3. `questions_read_verified`: the file is read back only if its hash still matches.
4. `bench_run`: every question under every design, graded by `graders.grade`.
5. `report_markdown` / `chart_png`: the per-category × design table, and every failed
   question with what was expected and what the prompt held.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import textwrap
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from tutorbrain.evaluation.content import PHRASINGS, TEMPLATES, month_name
from tutorbrain.evaluation.designs import (
    CONVERSATION_KINDS,
    DESIGN_BUILDERS,
    DESIGNS,
    WINDOW_TURNS,
    Asked,
    file_passages,
)
from tutorbrain.evaluation.generator import REFERENCE_NOW, LoadedHistory, history_load, history_plan
from tutorbrain.evaluation.graders import CATEGORIES, Grade, grade

BENCH_ORG_SLUG = "memory-bench"
BENCH_BUDGET = 900  # the block's default budget (TUTORBRAIN_DEFAULT_TOKEN_BUDGET)
# Questions per pair and category (at most); the question file lists what was drawn.
PER_PAIR = {
    "wrong": 2,
    "prerequisites": 2,
    "explain": 2,
    "active_month": 1,
    "empty_month": 2,
    "recall": 2,
}
CATEGORY_TITLES = {
    "wrong": "what the student got wrong",
    "prerequisites": "what to review before a topic",
    "explain": "explain a concept",
    "active_month": "a month the student was active",
    "empty_month": "an empty month",
    "recall": "recall of a past exchange",
}
DESIGN_TITLES = {
    "retrieval": "retrieval only",
    "window": "window (last 20)",
    "episodes": "episodes",
    "full": "full memory",
}


class QuestionFileTampered(RuntimeError):
    pass


# ---- 1. the corpus ---------------------------------------------------------------------------


def bench_organization():
    from memory.models import Organization
    from memory.services import organization_create

    found = Organization.objects.filter(slug=BENCH_ORG_SLUG).first()
    return found or organization_create(name="Memory benchmark", slug=BENCH_ORG_SLUG)


def corpus_load(
    *, organization, seed: int, subjects: int, progress: Callable[[int], None] | None = None
) -> list[LoadedHistory]:
    """Load `subjects` generated histories (one pair per subject); reuse those already there."""
    loaded = []
    for index in range(subjects):
        plan = history_plan(seed=seed, index=index)
        # history_load finds a plan loaded before by its idempotency keys and reuses it.
        loaded.append(history_load(plan=plan, organization=organization))
        if progress:
            progress(1)
    return loaded


# ---- 2. questions from each pair's logged data ------------------------------------------------


def _day_label(moment: datetime) -> str:
    """A date as the block and the designs write it ("15 Oct")."""
    return moment.strftime("%d %b").lstrip("0")


def _month_key(moment: datetime) -> tuple[int, int]:
    return (moment.year, moment.month)


def _route(subject, episode):
    from concepts.selectors import concept_by_name, concept_find_named_in

    if episode.topic:
        found = concept_by_name(subject=subject, name=episode.topic)
        if found is not None:
            return found
    assessment = str(episode.evidence.get("assessment", ""))
    return concept_find_named_in(subject=subject, text=assessment) if assessment else None


def pair_questions(
    history: LoadedHistory, *, now: datetime, rng: random.Random
) -> list[dict[str, Any]]:
    """The questions of one pair, with their expectations, from its log and its map."""
    from concepts.models import Concept, Prerequisite
    from memory.models import Episode

    pair = history.pair
    subject = pair.subject
    language = subject.language
    phrasing = PHRASINGS[language]
    template = next((t for t in TEMPLATES if t.code == history.plan.template_code), None)
    episodes = list(Episode.objects.filter(pair=pair, occurred_at__lt=now).order_by("seq"))
    by_id = {e.pk: e for e in episodes}
    out: list[dict[str, Any]] = []

    def add(category: str, message: str, expected: dict[str, Any]) -> None:
        out.append(
            {
                "pair_id": pair.pk,
                "student": pair.student.external_id,
                "subject": subject.external_id,
                "language": language,
                "category": category,
                "message": message,
                "expected": expected,
            }
        )

    # what the student got wrong: concepts whose latest routed check is wrong first
    wrong_ids: dict[str, list[int]] = defaultdict(list)
    latest: dict[str, str] = {}
    for episode in episodes:
        if episode.kind != "check":
            continue
        concept = _route(subject, episode)
        if concept is None:
            continue
        latest[concept.name] = episode.verdict
        if episode.verdict == "wrong":
            wrong_ids[concept.name].append(episode.pk)
    ranked = sorted(wrong_ids, key=lambda n: (latest[n] != "wrong", n))
    for k, name in enumerate(ranked[: PER_PAIR["wrong"]]):
        add(
            "wrong",
            phrasing.wrong[k % len(phrasing.wrong)],
            {"concept": name, "episode_ids": wrong_ids[name]},
        )

    # what to review before X: X's real prerequisite edges in the map (X builds on P)
    edges: dict[str, list[str]] = defaultdict(list)
    for concept_name, prerequisite_name in Prerequisite.objects.filter(subject=subject).values_list(
        "concept__name", "prerequisite__name"
    ):
        edges[concept_name].append(prerequisite_name)
    for name in rng.sample(sorted(edges), k=min(len(edges), PER_PAIR["prerequisites"])):
        add(
            "prerequisites",
            phrasing.review_before.format(c=name),
            {"concept": name, "prerequisites": sorted(edges[name])},
        )

    # explain X: the definitions the map and the file hold for X
    concepts = list(Concept.objects.filter(subject=subject).exclude(summary="").order_by("name"))
    for concept in rng.sample(concepts, k=min(len(concepts), PER_PAIR["explain"])):
        definitions = [concept.summary, concept.definition]
        if template is not None:
            with contextlib.suppress(KeyError):
                definitions.append(template.concept(concept.name).definition)
        add(
            "explain",
            phrasing.explain.format(c=concept.name),
            {"concept": concept.name, "definitions": definitions},
        )

    # months: active ones from the log, empty ones inside the history's span
    active = sorted({_month_key(e.occurred_at) for e in episodes})
    if active:
        span = []
        year, month = active[0]
        while (year, month) <= active[-1]:
            span.append((year, month))
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
        empty = [m for m in span if m not in set(active)]
        for year, month in rng.sample(active, k=min(len(active), PER_PAIR["active_month"])):
            worked = sorted(
                {
                    c
                    for e in episodes
                    if _month_key(e.occurred_at) == (year, month)
                    for c in e.concepts
                }
            )
            add(
                "active_month",
                phrasing.month.format(month=month_name(language, month), year=year),
                {"year": year, "month": month, "concepts": worked},
            )
        for year, month in rng.sample(empty, k=min(len(empty), PER_PAIR["empty_month"])):
            add(
                "empty_month",
                phrasing.month.format(month=month_name(language, month), year=year),
                {"year": year, "month": month},
            )

    # recall of a past exchange about X: the latest question + answer about X
    last_exchange: dict[str, list[int]] = {}
    for i, episode in enumerate(episodes[:-1]):
        following = episodes[i + 1]
        if (
            episode.kind == "question"
            and following.kind == "answer"
            and episode.concepts
            and episode.concepts == following.concepts
        ):
            last_exchange[episode.concepts[0]] = [episode.pk, following.pk]
    # A past exchange is one the last turns no longer hold (an exchange inside the window is
    # what the window design holds by construction); pairs with none fall back to any.
    window = {e.pk for e in [e for e in episodes if e.kind in CONVERSATION_KINDS][-WINDOW_TURNS:]}
    past = sorted(n for n, ids in last_exchange.items() if not set(ids) & window)
    pool = past or sorted(last_exchange)
    for name in rng.sample(pool, k=min(len(pool), PER_PAIR["recall"])):
        add(
            "recall",
            phrasing.recall.format(c=name),
            {
                "concept": name,
                "episode_ids": last_exchange[name],
                # for end-to-end grading of a model's answer: the exchange's date as cited
                "dates": sorted({_day_label(by_id[i].occurred_at) for i in last_exchange[name]}),
            },
        )
    return out


def questions_register(
    *, histories: list[LoadedHistory], seed: int, now: datetime, path: Path
) -> tuple[list[dict[str, Any]], str]:
    """Draw the questions and write them, with their sha256, before any design runs."""
    rng = random.Random(f"tutorbrain-questions:{seed}")
    questions = []
    for history in histories:
        questions += pair_questions(history, now=now, rng=rng)
    for number, question in enumerate(questions, start=1):
        question["id"] = number
    payload = {
        "seed": seed,
        "now": now.isoformat(),
        "budget": BENCH_BUDGET,
        "designs": list(DESIGNS),
        "questions": questions,
    }
    return questions, questions_file_write(payload=payload, path=path)


def questions_file_write(*, payload: dict[str, Any], path: Path) -> str:
    """Write the question file and, beside it, its sha256 (`<file>.sha256`)."""
    data = json.dumps(payload, ensure_ascii=False, indent=1, sort_keys=True).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    hash_path(path).write_text(f"{digest}  {path.name}\n")
    return digest


def hash_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def questions_read_verified(path: Path) -> tuple[dict[str, Any], str]:
    """The registered questions, only if the file still has the hash written with it."""
    data = path.read_bytes()
    recorded = hash_path(path).read_text().split()[0]
    actual = hashlib.sha256(data).hexdigest()
    if actual != recorded:
        raise QuestionFileTampered(
            f"{path} changed after it was registered (sha256 {actual}, registered {recorded})"
        )
    return json.loads(data), actual


# ---- 4. running and grading ------------------------------------------------------------------


@dataclass
class Outcome:
    question: dict[str, Any]
    design: str
    grade: Grade


@dataclass
class BenchResult:
    outcomes: list[Outcome] = field(default_factory=list)
    digest: str = ""
    subjects: int = 0
    # (question, design, prompt text), kept for the end-to-end mode
    prompts: list[tuple[dict[str, Any], str, str]] = field(default_factory=list)

    def table(self) -> dict[str, dict[str, tuple[int, int]]]:
        counts: dict[str, dict[str, list[int]]] = {
            c: {d: [0, 0] for d in DESIGNS} for c in (*CATEGORIES, "overall")
        }
        for o in self.outcomes:
            for key in (o.question["category"], "overall"):
                counts[key][o.design][0] += o.grade.passed
                counts[key][o.design][1] += 1
        return {c: {d: (v[0], v[1]) for d, v in row.items()} for c, row in counts.items()}


def bench_run(
    *,
    questions_file: Path,
    designs: tuple[str, ...] = DESIGNS,
    progress: Callable[[int], None] | None = None,
    keep_prompts: bool = False,
) -> BenchResult:
    from memory.models import Pair

    payload, digest = questions_read_verified(questions_file)
    now = datetime.fromisoformat(payload["now"])
    pairs = {
        p.pk: p
        for p in Pair.objects.select_related("student", "subject", "subject__organization").filter(
            pk__in={q["pair_id"] for q in payload["questions"]}
        )
    }
    result = BenchResult(digest=digest, subjects=len(pairs))
    for question in payload["questions"]:
        pair = pairs[question["pair_id"]]
        asked = Asked(pair=pair, message=question["message"], now=now, budget=payload["budget"])
        passages = file_passages(subject=pair.subject, message=question["message"])
        for design in designs:
            shown = DESIGN_BUILDERS[design](asked, passages)
            if keep_prompts:
                result.prompts.append((question, design, shown.text))
            result.outcomes.append(
                Outcome(question, design, grade(question["category"], shown, question["expected"]))
            )
        if progress:
            progress(1)
    return result


# ---- 5. reports -------------------------------------------------------------------------------


def _cell(passed: int, total: int) -> str:
    return f"{100 * passed / total:.0f} % ({passed}/{total})" if total else "—"


def report_markdown(result: BenchResult, *, command: str, questions_file: Path) -> str:
    table = result.table()
    designs = [d for d in DESIGNS if any(o.design == d for o in result.outcomes)]
    questions = len({o.question["id"] for o in result.outcomes})
    lines = [
        f"Command: `{command}`",
        "",
        f"Scale: {result.subjects} student-subject pairs, {questions} pre-registered questions "
        f"(`{questions_file}`, sha256 `{result.digest}`), block budget {BENCH_BUDGET} tokens.",
        "",
        "| category | " + " | ".join(DESIGN_TITLES[d] for d in designs) + " |",
        "|---|" + "---|" * len(designs),
    ]
    for category in (*CATEGORIES, "overall"):
        title = CATEGORY_TITLES.get(category, "**overall**")
        lines.append(
            f"| {title} | " + " | ".join(_cell(*table[category][d]) for d in designs) + " |"
        )
    listed = [o for o in result.outcomes if o.question["category"] == "active_month"]
    if listed:
        lines += [
            "",
            "Active month, episodes of that month actually in the prompt (information, not graded): ",
        ]
        for d in designs:
            mine = [o for o in listed if o.design == d]
            shown = sum(bool(o.grade.details.get("listed")) for o in mine)
            lines.append(f"- {DESIGN_TITLES[d]}: {shown}/{len(mine)}")
    return "\n".join(lines)


def failures_markdown(result: BenchResult) -> str:
    lines = ["# Failed questions", ""]
    for design in DESIGNS:
        failed = [o for o in result.outcomes if o.design == design and not o.grade.passed]
        lines += [f"## {DESIGN_TITLES[design]}: {len(failed)} failed", ""]
        for o in failed:
            q = o.question
            lines += [
                f"- q{q['id']} [{q['category']}, {q['language']}, pair {q['pair_id']}] {q['message']}",
                f"  - expected: {o.grade.expected}",
                f"  - held: {o.grade.held}",
            ]
        lines.append("")
    return "\n".join(lines)


def chart_png(result: BenchResult, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = result.table()
    categories = [*CATEGORIES, "overall"]
    designs = [d for d in DESIGNS if any(o.design == d for o in result.outcomes)]
    width = 0.8 / len(designs)
    figure, axes = plt.subplots(figsize=(11, 5))
    for i, design in enumerate(designs):
        values = [100 * p / t if t else 0 for p, t in (table[c][design] for c in categories)]
        axes.bar(
            [x + i * width for x in range(len(categories))],
            values,
            width,
            label=DESIGN_TITLES[design],
        )
    axes.set_xticks([x + width * (len(designs) - 1) / 2 for x in range(len(categories))])
    axes.set_xticklabels(
        [textwrap.fill(CATEGORY_TITLES.get(c, "overall"), 18) for c in categories], fontsize=8
    )
    axes.set_ylabel("questions passed (%)")
    axes.set_ylim(0, 105)
    axes.set_title("Memory benchmark: block-level grading by id and string comparison")
    axes.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=len(designs))
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


__all__ = [
    "REFERENCE_NOW",
    "QuestionFileTampered",
    "bench_run",
    "corpus_load",
    "questions_read_verified",
    "questions_register",
]
