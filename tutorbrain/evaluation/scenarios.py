"""Repeatable scenarios, graded on stored memory ids and explicit lines (R-8.1).

Each scenario builds its own fresh student-subject pair(s) in whatever database is
configured, logs a small history through the product's services, asks the real block
builder one or two questions, and checks *ids* (which episodes were recalled) and the
block's *explicit lines* (the no-record line, the history first line, the section order,
the repeat count, the taught note, the stale-citation label) — never the wording of free
text. A scenario whose product part is missing fails, naming the part.

Every scenario runs in more than one language (`SCENARIO_LANGUAGES`).
"""

from __future__ import annotations

import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from tutorbrain.evaluation import integration
from tutorbrain.evaluation.content import (
    PHRASINGS,
    TEMPLATES,
    SubjectTemplate,
    month_name,
    notes_markdown,
)
from tutorbrain.evaluation.graders import grade_empty_month, no_record_months

SCENARIO_NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
SCENARIO_YEAR = 2026
SCENARIO_BUDGET = 900
HISTORY_FIRST_LINE = "THE STUDENT IS ASKING ABOUT THEIR OWN RECORD"
BELIEFS_HEADER = "WHAT YOU CURRENTLY BELIEVE"
EARLIER_HEADER = "EARLIER WORK WITH THIS STUDENT"
MAP_HEADER = "SUBJECT MAP"
TAUGHT_MARK = "[taught:"
STALE_LABEL = "[note: the file this cited has since been replaced or removed]"
REPEATS = 9
EMPTY_LEGACY = "NO QUIZ ATTEMPTS recorded."
REAL_LEGACY = "QUIZ ATTEMPTS: 3 (last score 70%)."

# Each scenario in English and one other language (two for the July scenario).
SCENARIO_LANGUAGES: dict[str, tuple[str, ...]] = {
    "july": ("en", "es", "ar"),
    "empty_month": ("en", "fr", "pt"),
    "history_ordering": ("en", "ar"),
    "no_remembering_remembering": ("en", "pt"),
    "repeats_collapse": ("en", "es"),
    "teaching": ("en", "fr"),
    "stale_citation": ("en", "es"),
    "legacy_assessment_dropped": ("en", "pt"),
}


@dataclass
class ScenarioResult:
    name: str
    language: str
    passed: bool
    detail: str


class ScenarioFailed(AssertionError):
    pass


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ScenarioFailed(message)


def _template(language: str) -> SubjectTemplate:
    return next(t for t in TEMPLATES if t.language == language)


def _at(month: int, day: int, hour: int = 10) -> datetime:
    return datetime(SCENARIO_YEAR, month, day, hour, 0, tzinfo=UTC)


class Stage:
    """A fresh pair in a fresh subject of the organization, and helpers to log to it."""

    def __init__(self, organization, language: str, name: str):
        from memory.services import pair_get_or_create, student_get_or_create, subject_get_or_create

        self.template = _template(language)
        self.phrasing = PHRASINGS[language]
        self.language = language
        suffix = uuid.uuid4().hex[:8]
        subject = subject_get_or_create(
            organization=organization,
            external_id=f"scenario-{name}-{language}-{suffix}",
            name=self.template.title,
            language=language,
        )
        student = student_get_or_create(
            organization=organization, external_id=f"scenario-student-{suffix}"
        )
        self.pair = pair_get_or_create(student=student, subject=subject)
        self.files: dict[str, object] = {}

    def files_read(
        self, at: datetime, *, names: tuple[str, ...] | None = None, revision: int = 0
    ) -> None:
        for file_name, _ in self.template.files:
            if names is not None and file_name not in names:
                continue
            content = notes_markdown(self.template, file_name, revision=revision).encode("utf-8")
            self.files[file_name] = integration.file_intake(
                pair=self.pair, name=file_name, content=content, now=at
            )

    def log(self, *events: dict) -> list[int]:
        from memory.services import EventSpec, episode_append_batch

        specs = [EventSpec(**e) for e in events]
        latest = max(s.occurred_at for s in specs if s.occurred_at is not None)
        return [e.pk for e in episode_append_batch(pair=self.pair, events=specs, now=latest)]

    def exchange(self, concept: str, at: datetime, *, citations: list | None = None) -> list[int]:
        ask = self.phrasing.ask[0].format(c=concept)
        definition = self.template.concept(concept).definition
        return self.log(
            {
                "kind": "question",
                "summary": ask,
                "text": ask,
                "concepts": [concept],
                "occurred_at": at,
            },
            {
                "kind": "answer",
                "summary": self.phrasing.answer.format(c=concept),
                "text": self.phrasing.answer_text.format(d=definition),
                "concepts": [concept],
                "occurred_at": at + timedelta(minutes=2),
                "citations": citations or [],
            },
        )

    def check(self, concept: str, verdict: str, at: datetime) -> int:
        return self.log(
            {
                "kind": "check",
                "summary": self.phrasing.check_summary[verdict].format(c=concept),
                "concepts": [concept],
                "topic": concept,
                "verdict": verdict,
                "assessment": self.phrasing.assessment[verdict].format(c=concept),
                "occurred_at": at,
            }
        )[0]

    def block(self, message: str, *, legacy_assessment: str | None = None):
        return integration.block_build(
            pair=self.pair,
            message=message,
            now=SCENARIO_NOW,
            budget=SCENARIO_BUDGET,
            legacy_assessment=legacy_assessment,
        )


def _ids(result) -> set[int]:
    return integration.shown_of_block(result).recalled_ids


def _header_index(text: str, header: str) -> int | None:
    for number, line in enumerate(text.splitlines()):
        if line.strip().upper().startswith(header):
            return number
    return None


# ---- the scenarios ------------------------------------------------------------------------


def scenario_july(organization, language: str) -> str:
    """R-8.1: a July conversation about X is found by "what did we see in July about X"."""
    stage = Stage(organization, language, "july")
    names = [c.name for c in stage.template.concepts]
    x, other = names[6], names[1]
    stage.exchange(other, _at(3, 10))
    july = stage.exchange(x, _at(7, 14))
    july.append(stage.check(x, "wrong", _at(7, 14, 11)))
    stage.exchange(x, _at(9, 22))
    stage.exchange(other, _at(10, 5))
    message = stage.phrasing.month_about.format(
        month=month_name(language, 7), year=SCENARIO_YEAR, c=x
    )
    recalled = _ids(stage.block(message))
    _require(
        set(july) <= recalled, f"July ids {july} not all recalled; recalled {sorted(recalled)}"
    )
    return f"July ids {july} all recalled"


def scenario_empty_month(organization, language: str) -> str:
    """R-8.1: a month with no activity gets the explicit no-record line and no session."""
    stage = Stage(organization, language, "empty")
    names = [c.name for c in stage.template.concepts]
    stage.exchange(names[0], _at(6, 20))
    stage.check(names[0], "right", _at(6, 20, 11))
    stage.exchange(names[2], _at(8, 3))
    message = stage.phrasing.month.format(month=month_name(language, 7), year=SCENARIO_YEAR)
    result = stage.block(message)
    verdict = grade_empty_month(integration.shown_of_block(result), year=SCENARIO_YEAR, month=7)
    _require(verdict.passed, f"{verdict.expected}; held {verdict.held}")
    return "no-record line for July 2026, no July session"


def scenario_history_ordering(organization, language: str) -> str:
    """R-5.7: a history question puts beliefs and earlier work first (with the explicit first
    line) and includes the conversation; an ordinary question puts the map first."""
    stage = Stage(organization, language, "history")
    stage.files_read(_at(3, 1))
    names = [c.name for c in stage.template.concepts]
    x = names[6]
    asked = stage.exchange(x, _at(4, 2))
    stage.check(x, "wrong", _at(4, 2, 11))
    stage.check(x, "wrong", _at(5, 6))
    stage.exchange(names[3], _at(6, 9))
    history = stage.block(stage.phrasing.wrong[0])
    text = history.text or ""
    lines = [line for line in text.splitlines() if line.strip()]
    _require(
        len(lines) > 1 and HISTORY_FIRST_LINE in lines[1].upper(), f"first line is {lines[1:2]}"
    )
    beliefs, earlier, map_at = (
        _header_index(text, h) for h in (BELIEFS_HEADER, EARLIER_HEADER, MAP_HEADER)
    )
    if beliefs is None or earlier is None:
        raise ScenarioFailed("beliefs or earlier work missing")
    _require(
        beliefs < earlier and (map_at is None or earlier < map_at),
        f"order {beliefs},{earlier},{map_at}",
    )
    _require(bool(set(asked) & _ids(history)), f"conversation {asked} not in the history block")
    ordinary = stage.block(stage.phrasing.ordinary.format(c=x))
    text = ordinary.text or ""
    lines = [line for line in text.splitlines() if line.strip()]
    _require(
        not any(HISTORY_FIRST_LINE in line.upper() for line in lines),
        "ordinary block in history mode",
    )
    map_at, earlier = _header_index(text, MAP_HEADER), _header_index(text, EARLIER_HEADER)
    if map_at is None:
        raise ScenarioFailed("ordinary block has no map")
    _require(earlier is None or map_at < earlier, f"ordinary order map {map_at}, earlier {earlier}")
    return "history: first line, beliefs < earlier work < map, Q/A included; ordinary: map first"


def scenario_no_remembering_remembering(organization, language: str) -> str:
    """R-5.6: a September narration of July is not recalled as a July memory."""
    stage = Stage(organization, language, "narration")
    names = [c.name for c in stage.template.concepts]
    x = names[6]
    july = stage.exchange(x, _at(7, 8))
    narration_text = stage.phrasing.narration.format(month=month_name(language, 7), c=x)
    narration = stage.log(
        {
            "kind": "answer",
            "summary": narration_text,
            "text": narration_text,
            "concepts": [x],
            "occurred_at": _at(9, 15),
            "recalled_ids": july,
        }
    )[0]
    message = stage.phrasing.month_about.format(
        month=month_name(language, 7), year=SCENARIO_YEAR, c=x
    )
    recalled = _ids(stage.block(message))
    _require(narration not in recalled, f"the narration {narration} was recalled as a July memory")
    _require(set(july) <= recalled, f"the July exchange {july} was not recalled")
    return f"narration {narration} not recalled; July {july} recalled"


def scenario_repeats_collapse(organization, language: str) -> str:
    """R-5.4: nine identical questions are one memory recalled with "(and 8 more times like it)"."""
    stage = Stage(organization, language, "repeats")
    question = stage.phrasing.repeat_question
    ids = []
    for n in range(REPEATS):
        at = _at(3 + n // 3, 2 + 7 * (n % 3))
        ids += stage.log(
            {"kind": "question", "summary": question, "text": question, "occurred_at": at}
        )
    stage.exchange(stage.template.concepts[4].name, _at(8, 1))
    result = stage.block(question)
    shown = _ids(result) & set(ids)
    _require(
        len(shown) == 1, f"{len(shown)} of the {REPEATS} identical questions shown: {sorted(shown)}"
    )
    marker = f"(and {REPEATS - 1} more times like it)"
    _require(marker in (result.text or ""), f"no {marker!r} in the block")
    return f"one of {REPEATS} shown, with {marker!r}"


def scenario_teaching(organization, language: str) -> str:
    """R-3: a teaching-form message teaches (taught note, readiness 1.0, taught episode,
    [taught: …] in the map line); a question naming the same concept does not."""
    from concepts.models import TaughtNote
    from concepts.selectors import concept_by_name
    from memory.models import Episode

    stage = Stage(organization, language, "teaching")
    stage.files_read(_at(3, 1))
    concept_name = sorted(stage.template.nicknames)[0]
    concept = concept_by_name(subject=stage.pair.subject, name=concept_name)
    if concept is None:
        raise ScenarioFailed(f"{concept_name!r} is not in the map read from the files")
    question = stage.phrasing.ask[1].format(c=concept_name)
    stage.log({"kind": "question", "summary": question, "text": question, "occurred_at": _at(4, 1)})
    _require(not TaughtNote.objects.filter(concept=concept).exists(), "a question taught the map")
    message = stage.phrasing.teach.format(c=concept_name, n=stage.template.nicknames[concept_name])
    stage.log({"kind": "question", "summary": message, "text": message, "occurred_at": _at(4, 2)})
    concept.refresh_from_db()
    taught = Episode.objects.filter(pair=stage.pair, kind="taught").values_list("pk", flat=True)
    _require(TaughtNote.objects.filter(concept=concept).exists(), "no taught note")
    _require(concept.readiness == 1.0, f"readiness {concept.readiness}")
    _require(len(taught) == 1, f"{len(taught)} taught episodes")
    text = stage.block(stage.phrasing.explain.format(c=concept_name)).text or ""
    line = next((s for s in text.splitlines() if s.strip().startswith(f"- {concept.name}:")), "")
    _require(TAUGHT_MARK in line, f"map line without the taught note: {line!r}")
    return f"taught episode {taught[0]}, readiness 1.0, map line carries [taught: …]"


def scenario_stale_citation(organization, language: str) -> str:
    """R-6: a recalled answer whose cited file was replaced (or removed) carries the label."""
    from memory.models import SubjectFile
    from memory.services import citation_verify

    stage = Stage(organization, language, "stale")
    stage.files_read(_at(3, 1))
    (first_file, first_names), (second_file, second_names) = stage.template.files[:2]
    a, b = first_names[2], second_names[1]
    replaced = stage.exchange(a, _at(4, 3), citations=[{"file": first_file, "pages": [3]}])
    removed = stage.exchange(b, _at(4, 5), citations=[{"file": second_file, "pages": [2]}])
    stage.files_read(_at(5, 1), names=(first_file,), revision=1)
    current = SubjectFile.objects.get(
        subject=stage.pair.subject,
        name=second_file,
        replaced_at__isnull=True,
        removed_at__isnull=True,
    )
    integration.file_remove(subject_file=current, now=_at(5, 2))
    from memory.models import Episode

    for answer_id in (replaced[1], removed[1]):
        check = citation_verify(episode=Episode.objects.get(pk=answer_id), now=_at(5, 3))
        _require(str(check.result) == "changed", f"citation of {answer_id} is {check.result}")
    question_check = citation_verify(episode=Episode.objects.get(pk=replaced[0]), now=_at(5, 3))
    _require(
        str(question_check.result) == "unverifiable",
        f"a question verifies as {question_check.result}",
    )
    for answer_id, concept in ((replaced[1], a), (removed[1], b)):
        result = stage.block(stage.phrasing.recall.format(c=concept))
        _require(answer_id in _ids(result), f"answer {answer_id} not recalled")
        _require(STALE_LABEL in (result.text or ""), f"no stale-citation label for {answer_id}")
    return f"answers {replaced[1]} (replaced) and {removed[1]} (removed) labelled; a question is unverifiable"


def scenario_legacy_assessment_dropped(organization, language: str) -> str:
    """R-5.9: an assessment section that only says "nothing recorded" is dropped when a memory
    block exists; a real one is kept, after the block."""
    stage = Stage(organization, language, "legacy")
    stage.files_read(_at(3, 1))
    x = stage.template.concepts[6].name
    stage.exchange(x, _at(4, 2))
    for day in (2, 9, 16):
        stage.check(x, "wrong", _at(5, day))
    empty = stage.block(stage.phrasing.wrong[0], legacy_assessment=EMPTY_LEGACY)
    parts = _prompt_parts(empty)
    _require(all("NO QUIZ ATTEMPTS" not in p for p in parts), f"empty legacy section kept: {parts}")
    _require(any(p.startswith("=====") for p in parts), "no block in the placed parts")
    real = stage.block(stage.phrasing.wrong[0], legacy_assessment=REAL_LEGACY)
    parts = _prompt_parts(real)
    joined = "\n".join(parts)
    _require(REAL_LEGACY in joined, "a real legacy section was dropped")
    _require(joined.index("=====") < joined.index(REAL_LEGACY), "the block does not precede it")
    return "'NO QUIZ ATTEMPTS' dropped; a real section kept after the block"


def _prompt_parts(result) -> list[str]:
    placed = getattr(result, "placed", None)
    if placed is None:
        raise integration.PartMissing("BlockResult.placed (R-5.9 prompt placement)")
    return [str(part["text"]) for part in placed["parts"] if part.get("text")]


SCENARIOS: dict[str, Callable[..., str]] = {
    "july": scenario_july,
    "empty_month": scenario_empty_month,
    "history_ordering": scenario_history_ordering,
    "no_remembering_remembering": scenario_no_remembering_remembering,
    "repeats_collapse": scenario_repeats_collapse,
    "teaching": scenario_teaching,
    "stale_citation": scenario_stale_citation,
    "legacy_assessment_dropped": scenario_legacy_assessment_dropped,
}


def scenarios_run(
    *, organization, only: list[str] | None = None, progress=None
) -> list[ScenarioResult]:
    results = []
    plan = [
        (n, lang)
        for n, langs in SCENARIO_LANGUAGES.items()
        if not only or n in only
        for lang in langs
    ]
    for name, language in plan:
        try:
            detail = SCENARIOS[name](organization, language)
            results.append(ScenarioResult(name, language, True, detail))
        except ScenarioFailed as exc:
            results.append(ScenarioResult(name, language, False, str(exc)))
        except integration.PartMissing as exc:
            results.append(ScenarioResult(name, language, False, f"part missing: {exc}"))
        except Exception as exc:  # a crash is a failure, reported with its cause
            last = traceback.extract_tb(exc.__traceback__)[-1]
            results.append(
                ScenarioResult(
                    name,
                    language,
                    False,
                    f"error: {type(exc).__name__}: {exc} ({last.filename}:{last.lineno})",
                )
            )
        if progress:
            progress(results[-1])
    return results


def scenarios_table(results: list[ScenarioResult]) -> str:
    width = max(len(r.name) for r in results) if results else 10
    lines = [f"{'scenario':<{width}}  lang  result  detail", f"{'-' * width}  ----  ------  ------"]
    for r in results:
        lines.append(
            f"{r.name:<{width}}  {r.language:<4}  {'PASS' if r.passed else 'FAIL':<6}  {r.detail}"
        )
    passed = sum(r.passed for r in results)
    lines.append(f"{passed}/{len(results)} passed")
    return "\n".join(lines)


__all__ = ["SCENARIOS", "ScenarioResult", "no_record_months", "scenarios_run", "scenarios_table"]
