"""Seeded, realistic student-subject histories (R-8).

`history_plan(seed=…, index=…)` is pure: the same seed and index always give the same plan
(files, their replacements and removals, and every event with its time). `history_load`
writes a plan through the same services the API uses — the file registry, the concept
map's intake, and `episode_append_batch` with explicit `occurred_at` — so the chains
verify afterwards and beliefs and teaching are derived by the real signal handlers.

What a history contains, and why each part is there:
- months of activity with gaps, so some months inside the history are empty (R-5.5);
- questions and answers, answers citing the file and page that explain the concept, some
  with recalled ids (R-1.2, R-5.10);
- one question asked again and again, word for word (R-5.4);
- checks whose topic is the concept's name, a phrase whose assessment names the concept,
  or an utterance that names nothing (R-4.4); a predicted mastery on some of them (R-7.3);
- a teaching-form message (R-3) and a tutor's narration of an earlier month (R-5.6);
- a file replaced by a new version and a worksheet removed after answers cited it (R-6).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tutorbrain.evaluation.content import (
    PHRASINGS,
    TEMPLATES,
    SubjectTemplate,
    month_name,
    notes_markdown,
)

# The fixed "today" of generated histories: results never depend on the wall clock.
REFERENCE_NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
# A history spans this many months (inclusive) and ends in the month of `now`; with
# REFERENCE_NOW it starts between February and April 2026.
SPAN_MONTHS = (8, 10)
MIN_DAY_FOR_CURRENT_MONTH = 5
EMPTY_MONTHS_MIN = 2  # months with no activity inside the history
SESSIONS_PER_MONTH = (1, 3)
FOCUS_CONCEPTS_PER_SESSION = (1, 2)
CHECK_SHARE = 0.75  # share of explained concepts followed by a check
TOPIC_KIND_WEIGHTS = {"name": 0.6, "phrase": 0.25, "utterance": 0.15}
PREDICTION_SHARE = 0.5  # share of checks carrying the tutor's predicted mastery
REPEAT_SHARE = 0.35  # share of sessions opening with the habitual question
TEACHING_SHARE = 0.5  # share of histories with a teaching-form message
NARRATION_SHARE = 0.6  # share of histories where the tutor narrates an earlier month
RECALLED_SHARE = 0.4  # share of answers recalling an earlier exchange
MASTERY_START = (0.25, 0.6)
MASTERY_STEP = 0.1  # each check teaches the student a little
# Which languages the generated subjects are in: half English, half the other four.
LANGUAGE_ROTATION = ("en", "es", "en", "pt", "en", "fr", "en", "ar")
WORKSHEET_CONCEPTS = 3  # the worksheet re-explains the first concepts of the subject


@dataclass
class PlannedEvent:
    ref: int  # position in the plan; recall_refs point at earlier refs
    kind: str
    summary: str
    occurred_at: datetime
    text: str = ""
    concepts: list[str] = field(default_factory=list)
    topic: str = ""
    verdict: str = ""
    assessment: str = ""
    predicted_mastery: float | None = None
    citations: list[dict[str, Any]] = field(default_factory=list)  # {"file": name, "pages": [...]}
    recall_refs: list[int] = field(default_factory=list)
    role: str = ""  # what the event is for in the evaluation: repeat, teaching, narration, …


@dataclass
class PlannedStep:
    """One thing that happens, in time order: a file arrives, is replaced or removed, or a
    session of conversation takes place."""

    at: datetime
    action: str  # "file", "remove", "session"
    file_name: str = ""
    revision: int = 0
    concepts: tuple[str, ...] = ()
    events: list[PlannedEvent] = field(default_factory=list)


@dataclass
class HistoryPlan:
    seed: int
    index: int
    template_code: str
    language: str
    subject_external_id: str
    subject_name: str
    student_external_id: str
    now: datetime
    steps: list[PlannedStep]
    active_months: list[tuple[int, int]]
    empty_months: list[tuple[int, int]]

    @property
    def events(self) -> list[PlannedEvent]:
        return [e for s in self.steps if s.action == "session" for e in s.events]

    def fingerprint(self) -> str:
        """A stable digest of the whole plan (what the determinism test compares)."""
        import hashlib
        import json

        payload = json.dumps(plan_as_data(self), sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def plan_as_data(plan: HistoryPlan) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(plan)


def template_for(index: int) -> SubjectTemplate:
    language = LANGUAGE_ROTATION[index % len(LANGUAGE_ROTATION)]
    of_language = [t for t in TEMPLATES if t.language == language]
    return of_language[(index // len(LANGUAGE_ROTATION)) % len(of_language)]


def _months_until(now: datetime, count: int) -> list[tuple[int, int]]:
    """The `count` calendar months ending with now's month, oldest first."""
    out = []
    year, month = now.year, now.month
    for _ in range(count):
        out.append((year, month))
        year, month = (year - 1, 12) if month == 1 else (year, month - 1)
    return out[::-1]


def _at(rng: random.Random, year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, rng.randint(9, 18), rng.choice((0, 15, 30, 45)), tzinfo=UTC)


def history_plan(
    *,
    seed: int,
    index: int,
    template: SubjectTemplate | None = None,
    subject_external_id: str = "",
    student_external_id: str = "",
    now: datetime = REFERENCE_NOW,
    files: Iterable[tuple[str, tuple[str, ...]]] | None = None,
) -> HistoryPlan:
    """The history of one student in one subject, determined by (seed, index).

    `template` defaults to the index's subject; `files` (name -> concepts explained) lets
    the caller plan a history over files that exist already (the demo's sample subject).
    """
    rng = random.Random(f"tutorbrain-history:{seed}:{index}")
    template = template or template_for(index)
    phrasing = PHRASINGS[template.language]
    names = [c.name for c in template.concepts]
    file_specs = list(files if files is not None else template.files)
    worksheet = f"{template.code}-worksheet.md"
    file_of: dict[str, tuple[str, int]] = {}
    for file_name, explained in file_specs:
        for page, name in enumerate(explained, start=1):
            file_of.setdefault(name, (file_name, page))

    # Early in a month there are too few past days for sessions: end with the last month.
    anchor = now if now.day >= MIN_DAY_FOR_CURRENT_MONTH else now - timedelta(days=now.day)
    months = _months_until(anchor, rng.randint(*SPAN_MONTHS))
    interior = months[1:-1]
    empty = sorted(rng.sample(interior, k=min(len(interior), EMPTY_MONTHS_MIN + rng.randint(0, 1))))
    active = [m for m in months if m not in empty]

    steps: list[PlannedStep] = []
    first_day = _at(rng, *active[0], 1)
    # Files given by the caller exist already (read into the map before the history).
    with_worksheet = files is None
    for file_name, explained in file_specs if files is None else ():
        steps.append(
            PlannedStep(at=first_day, action="file", file_name=file_name, concepts=tuple(explained))
        )
    if with_worksheet:
        steps.append(
            PlannedStep(
                at=first_day + timedelta(minutes=5),
                action="file",
                file_name=worksheet,
                concepts=tuple(names[:WORKSHEET_CONCEPTS]),
            )
        )

    mastery = {name: rng.uniform(*MASTERY_START) for name in names}
    refs = iter(range(1, 1_000_000))
    events_by_month: dict[tuple[int, int], list[PlannedEvent]] = {}
    exchanges: dict[str, list[int]] = {}  # concept -> refs of its earlier answers
    taught_done = False
    teach_in = rng.random() < TEACHING_SHARE
    narrate_in = rng.random() < NARRATION_SHARE
    replace_month = active[len(active) // 2]
    remove_month = active[(2 * len(active)) // 3]
    replaced_file = file_specs[0][0]

    for position, (year, month) in enumerate(active):
        # Progress through the subject: later months focus on later concepts.
        frontier = max(2, round(len(names) * (position + 1) / len(active)))
        # Never in the future: in the month of `now`, sessions end the day before.
        last_day = now.day - 1 if (year, month) == (now.year, now.month) else 27
        days = sorted(rng.sample(range(2, last_day + 1), k=rng.randint(*SESSIONS_PER_MONTH)))
        for day_number, day in enumerate(days):
            when = _at(rng, year, month, day)
            if (year, month) == replace_month and day_number == 0 and files is None:
                steps.append(
                    PlannedStep(
                        at=when - timedelta(hours=1),
                        action="file",
                        file_name=replaced_file,
                        revision=1,
                        concepts=tuple(dict(file_specs)[replaced_file]),
                    )
                )
            if (year, month) == remove_month and day_number == 0 and with_worksheet:
                steps.append(
                    PlannedStep(
                        at=when - timedelta(minutes=30), action="remove", file_name=worksheet
                    )
                )
            worksheet_current = with_worksheet and ((year, month) < remove_month)
            clock = iter(when + timedelta(minutes=3 * i) for i in range(1000))
            session: list[PlannedEvent] = []
            if rng.random() < REPEAT_SHARE:
                session.append(
                    PlannedEvent(
                        ref=next(refs),
                        kind="question",
                        summary=phrasing.repeat_question,
                        text=phrasing.repeat_question,
                        occurred_at=next(clock),
                        role="repeat",
                    )
                )
            focus = rng.sample(
                names[:frontier], k=min(frontier, rng.randint(*FOCUS_CONCEPTS_PER_SESSION))
            )
            for concept in focus:
                spec = template.concept(concept)
                ask = rng.choice(phrasing.ask).format(c=concept)
                question = PlannedEvent(
                    ref=next(refs),
                    kind="question",
                    summary=ask,
                    text=ask,
                    concepts=[concept],
                    occurred_at=next(clock),
                    role="exchange",
                )
                cited = file_of.get(concept)
                citations = []
                if cited:
                    use_worksheet = worksheet_current and concept in names[:WORKSHEET_CONCEPTS]
                    if use_worksheet and rng.random() < 0.5:
                        citations = [{"file": worksheet, "pages": [names.index(concept) + 1]}]
                    else:
                        citations = [{"file": cited[0], "pages": [cited[1]]}]
                recall = []
                if exchanges.get(concept) and rng.random() < RECALLED_SHARE:
                    recall = [exchanges[concept][-1]]
                answer = PlannedEvent(
                    ref=next(refs),
                    kind="answer",
                    summary=phrasing.answer.format(c=concept),
                    text=phrasing.answer_text.format(d=spec.definition),
                    concepts=[concept],
                    occurred_at=next(clock),
                    citations=citations,
                    recall_refs=recall,
                    role="exchange",
                )
                session += [question, answer]
                exchanges.setdefault(concept, []).append(answer.ref)
                if rng.random() < CHECK_SHARE:
                    session.append(_check(rng, phrasing, concept, mastery, next(refs), next(clock)))
            if teach_in and not taught_done and position >= 1 and template.nicknames:
                concept = sorted(template.nicknames)[rng.randrange(len(template.nicknames))]
                message = phrasing.teach.format(c=concept, n=template.nicknames[concept])
                session.append(
                    PlannedEvent(
                        ref=next(refs),
                        kind="question",
                        summary=message[:300],
                        text=message,
                        concepts=[],
                        occurred_at=next(clock),
                        role="teaching",
                    )
                )
                taught_done = True
            if narrate_in and position >= 3 and day_number == 0:
                earlier = [m for m in active[: position - 1] if events_by_month.get(m)]
                if earlier:
                    told = earlier[rng.randrange(len(earlier))]
                    told_events = [
                        e for e in events_by_month[told] if e.kind in ("question", "answer")
                    ]
                    told_concepts = [c for e in told_events for c in e.concepts]
                    if told_concepts:
                        concept = told_concepts[0]
                        narration = phrasing.narration.format(
                            month=month_name(template.language, told[1]), c=concept
                        )
                        session.append(
                            PlannedEvent(
                                ref=next(refs),
                                kind="answer",
                                summary=narration[:300],
                                text=narration,
                                concepts=[concept],
                                occurred_at=next(clock),
                                recall_refs=[e.ref for e in told_events][:10],
                                role="narration",
                            )
                        )
                        narrate_in = False
            steps.append(PlannedStep(at=when, action="session", events=session))
            events_by_month.setdefault((year, month), []).extend(session)

    steps.sort(key=lambda s: (s.at, {"file": 0, "remove": 1, "session": 2}[s.action]))
    return HistoryPlan(
        seed=seed,
        index=index,
        template_code=template.code,
        language=template.language,
        subject_external_id=subject_external_id or f"{template.code}-{seed}-{index:03d}",
        subject_name=template.title,
        student_external_id=student_external_id or f"student-{seed}-{index:03d}",
        now=now,
        steps=steps,
        active_months=active,
        empty_months=empty,
    )


def _check(
    rng: random.Random,
    phrasing,
    concept: str,
    mastery: dict[str, float],
    ref: int,
    when: datetime,
) -> PlannedEvent:
    roll = rng.random()
    level = mastery[concept]
    verdict = "right" if roll < level else ("partial" if roll < level + 0.12 else "wrong")
    mastery[concept] = min(0.95, level + MASTERY_STEP)
    kind = rng.choices(list(TOPIC_KIND_WEIGHTS), weights=list(TOPIC_KIND_WEIGHTS.values()))[0]
    predicted = None
    if rng.random() < PREDICTION_SHARE:
        predicted = round(min(1.0, max(0.0, level + rng.uniform(-0.15, 0.15))), 2)
    if kind == "utterance":
        topic = rng.choice(phrasing.utterance_topics)
        return PlannedEvent(
            ref=ref,
            kind="check",
            summary=f"{topic}: {verdict}"[:300],
            occurred_at=when,
            topic=topic,
            verdict=verdict,
            assessment=phrasing.utterance_assessment,
            predicted_mastery=predicted,
            role="check-utterance",
        )
    topic = concept if kind == "name" else rng.choice(phrasing.phrase_topics)
    return PlannedEvent(
        ref=ref,
        kind="check",
        summary=phrasing.check_summary[verdict].format(c=concept),
        occurred_at=when,
        concepts=[concept],
        topic=topic,
        verdict=verdict,
        assessment=phrasing.assessment[verdict].format(c=concept),
        predicted_mastery=predicted,
        role=f"check-{kind}",
    )


# ----------------------------------------------------------------------------------------
# Loading a plan through the product's own services
# ----------------------------------------------------------------------------------------


@dataclass
class LoadedHistory:
    plan: HistoryPlan
    pair: Any
    ids: dict[int, int]  # plan ref -> episode id
    files: dict[str, int]  # file name -> id of its current (or last) version

    def episode_id(self, ref: int) -> int:
        return self.ids[ref]


def _file_content(template: SubjectTemplate | None, step: PlannedStep, plan: HistoryPlan) -> bytes:
    if template is None or step.file_name not in dict(template.files):
        # A worksheet, or a file of another subject's template: notes over its concepts.
        from tutorbrain.evaluation.content import TEMPLATES as ALL

        owner = next(t for t in ALL if t.code == plan.template_code)
        lines = [f"# {owner.title} — worksheet", ""]
        for name in step.concepts:
            spec = owner.concept(name)
            lines += [f"## {spec.name}", "", f"**{spec.name}**: {spec.definition}", ""]
        return "\n".join(lines).encode("utf-8")
    return notes_markdown(template, step.file_name, revision=step.revision).encode("utf-8")


def history_load(
    *,
    plan: HistoryPlan,
    organization,
    file_content: Callable[[PlannedStep], bytes] | None = None,
    embed: bool = True,
) -> LoadedHistory:
    """Write a plan: files through the concept map's intake, events through the episode log.

    The files are read into the map as they arrive (before the sessions that follow them),
    so checks route to concepts the way they do in production.
    """
    from memory.models import SubjectFile
    from memory.services import (
        EventSpec,
        episode_append_batch,
        pair_get_or_create,
        student_get_or_create,
        subject_get_or_create,
    )
    from tutorbrain.evaluation import integration

    template = next((t for t in TEMPLATES if t.code == plan.template_code), None)
    subject = subject_get_or_create(
        organization=organization,
        external_id=plan.subject_external_id,
        name=plan.subject_name,
        language=plan.language,
    )
    student = student_get_or_create(organization=organization, external_id=plan.student_external_id)
    pair = pair_get_or_create(student=student, subject=subject)
    if history_loaded(plan=plan, pair=pair):
        # Loaded before: replaying the files would upload old versions again.
        return loaded_from_db(plan=plan, pair=pair)
    ids: dict[int, int] = {}
    files: dict[str, int] = {}
    for step in plan.steps:
        if step.action == "file":
            content = file_content(step) if file_content else _file_content(template, step, plan)
            files[step.file_name] = integration.file_intake(
                pair=pair, name=step.file_name, content=content, now=step.at
            ).pk
        elif step.action == "remove":
            current = SubjectFile.objects.get(
                subject=subject,
                name=step.file_name,
                replaced_at__isnull=True,
                removed_at__isnull=True,
            )
            integration.file_remove(subject_file=current, now=step.at)
        else:
            specs = [
                EventSpec(
                    kind=e.kind,
                    summary=e.summary,
                    text=e.text,
                    concepts=list(e.concepts),
                    occurred_at=e.occurred_at,
                    topic=e.topic,
                    verdict=e.verdict,
                    assessment=e.assessment,
                    predicted_mastery=e.predicted_mastery,
                    citations=[dict(c) for c in e.citations],
                    recalled_ids=[ids[r] for r in e.recall_refs if r in ids],
                    idempotency_key=f"{_key_prefix(plan)}{e.ref}",
                    extra={"generated": e.role} if e.role else {},
                )
                for e in step.events
            ]
            if not specs:
                continue
            episodes = episode_append_batch(
                pair=pair, events=specs, now=step.events[-1].occurred_at, embed=embed
            )
            for event, episode in zip(step.events, episodes, strict=True):
                ids[event.ref] = episode.pk
    pair.refresh_from_db()
    return LoadedHistory(plan=plan, pair=pair, ids=ids, files=files)


def _key_prefix(plan: HistoryPlan) -> str:
    return f"gen:{plan.seed}:{plan.index}:"


def history_loaded(*, plan: HistoryPlan, pair) -> bool:
    from memory.models import Episode

    return Episode.objects.filter(pair=pair, idempotency_key__startswith=_key_prefix(plan)).exists()


def loaded_from_db(*, plan: HistoryPlan, pair) -> LoadedHistory:
    """A plan loaded earlier: its episode ids found again by their idempotency keys."""
    from memory.models import Episode

    prefix = _key_prefix(plan)
    ids = {
        int(key[len(prefix) :]): pk
        for pk, key in Episode.objects.filter(
            pair=pair, idempotency_key__startswith=prefix
        ).values_list("pk", "idempotency_key")
    }
    pair.refresh_from_db()
    return LoadedHistory(plan=plan, pair=pair, ids=ids, files={})
