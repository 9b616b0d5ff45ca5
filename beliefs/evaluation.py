"""Are beliefs calibrated? The measurement behind `manage.py evaluate_beliefs` (issue #12).

A log of checks (student, concept, verdict, time; optionally the student's `cut` and the
generating model's own probability `p_true`, which the simulated population carries) is
split per student at a cut time, the one the log gives (a `cut` column, or a file of
cuts) or else the time of the student's check number ⌈0.7·n⌉: the checks before it are
derived into beliefs **through the real services**
(episode_append_batch into a scratch organization, then beliefs_rederive as of the cut);
every check at or after it is a verdict to predict. Predictions are scored beside simple
baselines computed from the same pre-cut checks in the same run:

* `concept mean` — the concept's accuracy over all students, the same for everyone;
* `Laplace` — (right + 1) / (n + 2) per student-concept;
* `Beta(4) on concept mean` — (4·m + right) / (4 + n), the issue's strongest baseline;
* `truth` — the generating model's own probability, when the log carries it.

Scores: AUC over right/wrong verdicts (a partial is neither, so it is left out of the
ranking), and the expected calibration error and a 10-bin reliability table over all
verdicts with right = 1, partial = ½, wrong = 0 (the nightly cycle's own calibration
maths, tutorbrain.nightly.calibration).

A student-concept with no check before the cut is predicted by each method's own answer
for "nothing known": the beliefs' concept prior, the concept mean, ½ for Laplace.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from concepts.naming import concept_key
from concepts.reading import UnreadableFile, decode_text
from tutorbrain.nightly.calibration import Calibration, calibration_compute

OUTCOME = {"right": 1.0, "partial": 0.5, "wrong": 0.0}
# How real logs write a verdict: a correctness column of 1/0 or true/false is common. A
# transaction export's outcome HINT (the student asked for a hint instead of answering)
# or BUG (an answer the tutor recognised as a known error) is a wrong first attempt, as
# knowledge-tracing data sets count it.
VERDICT_SPELLINGS = {
    **{word: "right" for word in ("right", "correct", "1", "1.0", "true", "yes")},
    **{word: "wrong" for word in ("wrong", "incorrect", "0", "0.0", "false", "no", "hint", "bug")},
    **{word: "partial" for word in ("partial", "0.5")},
}
REQUIRED = ("student", "concept", "verdict", "time")
# The names learner logs and tutoring-system exports give these columns, in order of
# preference: a log without a column of ours reads the first of them it has.
COLUMN_ALIASES = {
    "student": (
        "student_id",
        "user_id",
        "user",
        "userid",
        "studentid",
        "anon student id",
        "learner_id",
        "learner",
        "username",
    ),
    "concept": (
        "skill_name",
        "skill",
        "kc(default)",
        "knowledge_component",
        "kc",
        "concept_name",
        "topic",
        "skill_id",
        "concept_id",
    ),
    "verdict": ("correct", "is_correct", "correctness", "outcome", "correct first attempt"),
    "time": (
        "timestamp",
        "start_time",
        "datetime",
        "date",
        "created_at",
        "time_stamp",
        "step start time",
        "submitted_at",
        "end_time",
        "first transaction time",
    ),
    # The student's cut, in a log's own column or in a file of cuts.
    "cut": ("cut_time", "cutoff", "cut_off", "cutoff_time", "cut_at", "split_time"),
}
# The share of each student's checks (in time order) before their cut.
DEFAULT_HISTORY_SHARE = 0.7
BETA_BASELINE_STRENGTH = 4.0


class LogError(ValueError):
    """A log that cannot be read: the message names the line and the field."""


@dataclass(frozen=True)
class LoggedCheck:
    student: str
    concept: str
    verdict: str
    time: datetime
    p_true: float | None = None
    # The student's cut, when the log gives one (the same on each of their rows).
    cut: datetime | None = None


# A Unix time this large is in milliseconds (as seconds it would be past the year 5000).
UNIX_MILLISECONDS_FROM = 1e11


_YEAR_FIRST_SLASHES = re.compile(r"^(\d{4})/(\d{1,2})/(\d{1,2})(?=$|[ T])")
_UTC_SUFFIX = re.compile(r"\s*\b(?:UTC|GMT)$", re.IGNORECASE)


def _dashed(match: re.Match) -> str:
    year, month, day = match.groups()
    return f"{year}-{int(month):02d}-{int(day):02d}"


def _parse_time(value: str, where: str, name: str = "time") -> datetime:
    """ISO 8601 (a time without a zone is UTC), Unix seconds or Unix milliseconds."""
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        number = None
    if number is not None:
        if abs(number) >= UNIX_MILLISECONDS_FROM:
            number /= 1000.0
        try:
            return datetime.fromtimestamp(number, tz=UTC)
        except (ValueError, OverflowError, OSError):
            pass
    # Exports write "2010/09/21 15:47:00" and "2010-09-21 15:47:00 UTC"; a day-first or
    # month-first date ("09/21/2010") is ambiguous and stays an error.
    text = _UTC_SUFFIX.sub("+00:00", _YEAR_FIRST_SLASHES.sub(_dashed, text))
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise LogError(
            f"{where}: field '{name}' is not an ISO 8601 time or a Unix time: {value!r}"
        ) from exc
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _verdict(value) -> str | None:
    """right / partial / wrong from the log's spelling, or None. Partial credit between
    0 and 1 (0.25, 0.8: an answer graded in parts) is partial, as the product has it."""
    text = str(value).strip().lower()
    if text in VERDICT_SPELLINGS:
        return VERDICT_SPELLINGS[text]
    try:
        number = float(text)
    except ValueError:
        return None
    if number == 1.0:
        return "right"
    if number == 0.0:
        return "wrong"
    return "partial" if 0.0 < number < 1.0 else None


def _missing(raw: dict) -> str | None:
    """The first required field the record leaves empty, or None."""
    for name in REQUIRED:
        value = raw.get(name)
        if value is None or str(value).strip() == "":
            return name
    return None


def _row(raw: dict, where: str) -> LoggedCheck:
    missing = _missing(raw)
    if missing is not None:
        raise LogError(
            f"{where}: field '{missing}' is missing "
            "(--skip-incomplete leaves out the rows that miss a field)"
        )
    verdict = _verdict(raw["verdict"])
    if verdict is None:
        raise LogError(
            f"{where}: field 'verdict' must be right, partial or wrong (or a number from 0 to 1): "
            f"{raw['verdict']!r}"
        )
    p_true = raw.get("p_true")
    if p_true not in (None, ""):
        try:
            p_true = float(p_true)
        except (TypeError, ValueError) as exc:
            raise LogError(f"{where}: field 'p_true' is not a number: {p_true!r}") from exc
        if not 0.0 <= p_true <= 1.0:
            raise LogError(f"{where}: field 'p_true' must be between 0 and 1")
    else:
        p_true = None
    if not concept_key(str(raw["concept"])):
        raise LogError(f"{where}: field 'concept' holds no letter or digit: {raw['concept']!r}")
    cut = raw.get("cut")
    return LoggedCheck(
        student=str(raw["student"]).strip(),
        concept=str(raw["concept"]).strip(),
        verdict=verdict,
        time=_parse_time(str(raw["time"]), where),
        p_true=p_true,
        cut=None if cut in (None, "") else _parse_time(str(cut), where, "cut"),
    )


# The separators a spreadsheet or a database export writes between columns.
CSV_DELIMITERS = (",", "\t", ";", "|")


def _column(name) -> str:
    return str(name).strip().lower()


def _aliased(columns) -> dict[str, str]:
    """Each column of ours the record lacks -> the first of its aliases the record has."""
    taken: dict[str, str] = {}
    for name, aliases in COLUMN_ALIASES.items():
        present = [alias for alias in aliases if alias in columns]
        if name not in columns and present:
            taken[name] = present[0]
    return taken


def _text(path: Path) -> io.StringIO:
    """The log's characters, read as the product reads an uploaded text file
    (`concepts.reading.decode_text`): UTF-8 or UTF-16 with its mark, else the code page
    Windows saves text in (some public learner logs are not UTF-8)."""
    try:
        return io.StringIO(decode_text(path.read_bytes()), newline="")
    except UnreadableFile as exc:
        raise LogError(f"{path}: {exc}") from exc


def _records(path: Path):
    """(where, raw dict) of each record of a CSV (with a header) or JSONL file. Column
    names are read case-blind ("Student", " time") and a column of ours may come by an
    alias (COLUMN_ALIASES: "user_id", "skill_name", "correct", "timestamp"); a CSV's
    separator is the one of CSV_DELIMITERS that splits its header most (a tab-separated
    export reads too); a byte order mark (as spreadsheets save UTF-8) is skipped."""
    if not path.is_file():
        raise LogError(f"{path}: no such file")
    with _text(path) as handle:
        if path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    raw = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise LogError(f"{path} line {number}: not JSON ({exc.msg})") from exc
                if not isinstance(raw, dict):
                    raise LogError(f"{path} line {number}: not a JSON object")
                where = f"{path} line {number}"
                raw = {_column(k): v for k, v in raw.items()}
                yield where, raw | {n: raw[c] for n, c in _aliased(raw).items()}
        else:
            header = handle.readline()
            handle.seek(0)
            delimiter = max(CSV_DELIMITERS, key=header.count)
            reader = csv.DictReader(handle, delimiter=delimiter)
            reader.fieldnames = [_column(name) for name in reader.fieldnames or []]
            aliased = _aliased(reader.fieldnames)
            yield "header", {name: "" for name in [*reader.fieldnames, *aliased]}
            for number, raw in enumerate(reader, start=2):
                yield f"{path} line {number}", raw | {n: raw[c] for n, c in aliased.items()}


def read_log(
    path: Path,
    cuts_path: Path | None = None,
    *,
    incomplete: list[str] | None = None,
    uncut: list[str] | None = None,
) -> list[LoggedCheck]:
    """A CSV (with a header) or JSONL log; `.jsonl`/`.json` is JSON lines, else CSV.
    `cuts_path`: a file of (student, cut) rows, the cut of each student it names (it
    replaces a `cut` column); a student it names who has no check in the log is left
    out and their line appended to `uncut` (when given), unless no student it names has
    one (the wrong file). A row that leaves a required field empty is an error,
    unless `incomplete` is a list: then the row is left out and its place appended to
    it (real exports hold answers to items tagged with no skill)."""
    rows: list[LoggedCheck] = []
    for where, raw in _records(path):
        if where == "header":
            missing = [n for n in REQUIRED if n not in raw]
            if missing:
                raise LogError(f"{path}: the header has no column {', '.join(missing)}")
            continue
        if incomplete is not None and _missing(raw) is not None:
            incomplete.append(where)
            continue
        rows.append(_row(raw, where))
    if not rows:
        raise LogError(f"{path}: no checks in the log")
    rows = [replace(row, concept=_fitting_name(row.concept)) for row in rows]
    # Names that fold to one key ("Fraction", "fraction") are one concept, as the map
    # routes them: every method sees them under the name met first.
    names: dict[str, str] = {}
    for row in rows:
        names.setdefault(concept_key(row.concept), row.concept)
    rows = [replace(row, concept=names[concept_key(row.concept)]) for row in rows]
    column: dict[str, datetime] = {}
    for row in rows:
        if row.cut is not None and column.setdefault(row.student, row.cut) != row.cut:
            raise LogError(f"{path}: field 'cut' differs between the rows of {row.student!r}")
    if cuts_path is not None:
        cuts = read_cuts(cuts_path, {row.student for row in rows}, uncut=uncut)
        rows = [replace(row, cut=cuts.get(row.student)) for row in rows]
    return rows


def _fitting_name(name: str) -> str:
    """The name, or one longer than a concept's name can be (a tutoring system's skill
    rule) cut to it, ending in a digest of the whole so that two long names stay two."""
    from concepts.models import Concept

    longest = Concept._meta.get_field("name").max_length or len(name)
    if len(name) <= longest:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{name[: longest - len(digest) - 2].rstrip()} #{digest}"


def read_cuts(
    path: Path, students: set[str], *, uncut: list[str] | None = None
) -> dict[str, datetime]:
    """Student -> cut from a CSV or JSONL file with the fields student and cut. A
    student not in `students` (the log's) is left out, their line appended to `uncut`:
    a file of cuts made for a whole class reads against a log of part of it, or against
    one whose rows without a skill were left out. A file none of whose students is in
    the log is refused."""
    cuts: dict[str, datetime] = {}
    elsewhere: list[str] = []
    for where, raw in _records(path):
        if where == "header":
            missing = [n for n in ("student", "cut") if n not in raw]
            if missing:
                raise LogError(f"{path}: the header has no column {', '.join(missing)}")
            continue
        student = str(raw.get("student") or "").strip()
        if not student:
            raise LogError(f"{where}: field 'student' is missing")
        if str(raw.get("cut") or "").strip() == "":
            raise LogError(f"{where}: field 'cut' is missing")
        cut = _parse_time(str(raw["cut"]), where, "cut")
        if student not in students:
            elsewhere.append(f"{where} ({student!r})")
            continue
        if cuts.setdefault(student, cut) != cut:
            raise LogError(f"{where}: field 'cut': a second, different cut for {student!r}")
    if not cuts:
        if elsewhere:
            raise LogError(
                f"{path}: field 'student': no student of the file has a check in the log "
                f"(the first: {elsewhere[0]})"
            )
        raise LogError(f"{path}: no cuts in the file")
    if uncut is not None:
        uncut.extend(elsewhere)
    return cuts


def write_log(path: Path, checks: Iterable) -> int:
    """Write checks (anything with student, concept, verdict, time[, p_true]) as CSV."""
    count = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "concept", "verdict", "time", "p_true"])
        for c in checks:
            p_true = getattr(c, "p_true", None)
            writer.writerow(
                [
                    c.student,
                    c.concept,
                    c.verdict,
                    c.time.isoformat(),
                    "" if p_true is None else f"{p_true:.6f}",
                ]
            )
            count += 1
    return count


@dataclass
class Split:
    cuts: dict[str, datetime]
    history: list[LoggedCheck]
    targets: list[LoggedCheck]


def split_at_cuts(checks: Sequence[LoggedCheck], *, history_share: float) -> Split:
    """Per student: the cut the log gives, or else the time of their check number
    ceil(share · n) (time order); checks before it are history, checks at or after it
    are to predict. A student with one check and no given cut has no cut (history only)."""
    by_student: dict[str, list[LoggedCheck]] = defaultdict(list)
    for check in checks:
        by_student[check.student].append(check)
    cuts: dict[str, datetime] = {}
    history: list[LoggedCheck] = []
    targets: list[LoggedCheck] = []
    for student, rows in by_student.items():
        rows.sort(key=lambda c: c.time)
        k = math.ceil(history_share * len(rows))
        cut = getattr(rows[0], "cut", None)  # a simulated check has none
        if cut is None:
            if k <= 0 or k >= len(rows):
                history.extend(rows)
                continue
            cut = rows[k].time
        cuts[student] = cut
        for row in rows:
            (history if row.time < cut else targets).append(row)
    return Split(cuts=cuts, history=history, targets=targets)


# --------------------------------------------------------------------------------------
# Scores
# --------------------------------------------------------------------------------------


def auc(predictions: Sequence[float], verdicts: Sequence[str]) -> float | None:
    """Probability that a right answer was predicted higher than a wrong one (ties ½).
    Partial verdicts are left out. None without both classes."""
    scored = [
        (p, v == "right") for p, v in zip(predictions, verdicts, strict=True) if v != "partial"
    ]
    positives = sum(1 for _, y in scored if y)
    negatives = len(scored) - positives
    if not positives or not negatives:
        return None
    scored.sort(key=lambda item: item[0])
    rank_sum = 0.0
    i = 0
    while i < len(scored):
        j = i
        while j < len(scored) and scored[j][0] == scored[i][0]:
            j += 1
        average_rank = (i + 1 + j) / 2  # ranks i+1 .. j
        rank_sum += average_rank * sum(1 for _, y in scored[i:j] if y)
        i = j
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


@dataclass
class Score:
    name: str
    auc: float | None
    calibration: Calibration
    # Mean outcome − mean prediction (partial ½): below 0, the predictor runs high.
    mean_error: float | None = None

    @property
    def ece(self) -> float | None:
        return self.calibration.ece


def score(name: str, predictions: Sequence[float], verdicts: Sequence[str]) -> Score:
    errors = [OUTCOME[v] - p for p, v in zip(predictions, verdicts, strict=True)]
    return Score(
        name=name,
        auc=auc(predictions, verdicts),
        calibration=calibration_compute(zip(predictions, verdicts, strict=True)),
        mean_error=sum(errors) / len(errors) if errors else None,
    )


# --------------------------------------------------------------------------------------
# Baselines (pure, from the same pre-cut checks)
# --------------------------------------------------------------------------------------


def baselines(
    history: Sequence[LoggedCheck], targets: Sequence[LoggedCheck]
) -> dict[str, list[float]]:
    per_concept: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    per_pair: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    total = [0.0, 0.0]
    for c in history:
        y = OUTCOME[c.verdict]
        for bucket in (per_concept[c.concept], per_pair[(c.student, c.concept)], total):
            bucket[0] += y
            bucket[1] += 1
    overall = total[0] / total[1] if total[1] else 0.5

    def concept_mean(concept: str) -> float:
        right, n = per_concept.get(concept, (0.0, 0.0))
        return right / n if n else overall

    out: dict[str, list[float]] = {"concept mean": [], "Laplace": [], "Beta(4) on concept mean": []}
    for t in targets:
        m = concept_mean(t.concept)
        right, n = per_pair.get((t.student, t.concept), (0.0, 0.0))
        out["concept mean"].append(m)
        out["Laplace"].append((right + 1.0) / (n + 2.0))
        out["Beta(4) on concept mean"].append(
            (BETA_BASELINE_STRENGTH * m + right) / (BETA_BASELINE_STRENGTH + n)
        )
    return out


# --------------------------------------------------------------------------------------
# The beliefs, through the real services
# --------------------------------------------------------------------------------------


@dataclass
class BeliefPredictions:
    p_right: list[float]
    from_belief: int  # targets predicted by a belief (the rest by the concept prior)
    by_belief: list[bool]  # per target: whether a belief predicted it
    pairs: int
    checks_appended: int
    organization_slug: str


def belief_predictions(
    split: Split, *, passes: int = 2, learn: bool = True, live: bool = False, progress=None
) -> BeliefPredictions:
    """Derive the pre-cut checks into beliefs in a scratch organization and read p_right.

    Each student's checks are appended as `check` episodes (topic = the concept's name,
    routed by exact name as in production). Two protocols:

    * re-derivation (default): the after-commit derivation is off; every pair is
      re-derived as of its cut (R-4.5), `passes` times, so that every pair's prior leans
      on every other pair's beliefs. With `learn`, the subject's learning model is fitted
      after the first pass, as the nightly cycle would (beliefs.learning), so `passes`
      ≥ 2 derive with it;
    * `live`: an import as a chat service would send it, student after student, each
      batch derived as it is appended (the after-commit receiver's own call), so the
      first students lean on nobody's beliefs; then one night's learning step as of the
      last cut (with `learn`): the subject's fit and, as it is the subject's first, the
      re-derivation it triggers (beliefs_rederive_after_fits). `passes` is not used.

    Call inside a transaction that the caller rolls back to leave nothing behind.
    """
    from beliefs.apps import DERIVE_DISPATCH_UID
    from beliefs.models import Belief
    from beliefs.selectors import concept_priors, pair_own_counts
    from beliefs.services import (
        beliefs_derive_from_checks,
        beliefs_fit_learning,
        beliefs_rederive,
        beliefs_rederive_after_fits,
        on_episodes_appended,
    )
    from concepts.models import Concept
    from memory.services import (
        EventSpec,
        episode_append_batch,
        organization_create,
        pair_get_or_create,
        student_get_or_create,
        subject_get_or_create,
    )
    from memory.signals import episodes_appended

    tag = uuid.uuid4().hex[:8]
    slug = f"evaluate-beliefs-{tag}"
    org = organization_create(name=f"evaluate beliefs {tag}", slug=slug)
    subject = subject_get_or_create(organization=org, external_id="evaluation")
    names = sorted({c.concept for c in split.history} | {c.concept for c in split.targets})
    Concept.objects.bulk_create(
        [Concept(subject=subject, name=n, key=concept_key(n)) for n in names]
    )
    concept_ids = dict(Concept.objects.filter(subject=subject).values_list("name", "id"))
    by_student: dict[str, list[LoggedCheck]] = defaultdict(list)
    for c in split.history:
        by_student[c.student].append(c)
    students = sorted(set(by_student) | {t.student for t in split.targets})
    pairs = {}
    appended = 0
    # The after-commit receiver never runs here (the caller's transaction is rolled
    # back): the live protocol calls its derivation itself, batch by batch.
    episodes_appended.disconnect(dispatch_uid=DERIVE_DISPATCH_UID)
    try:
        for i, student in enumerate(students):
            pair = pair_get_or_create(
                student=student_get_or_create(organization=org, external_id=student[:200]),
                subject=subject,
            )
            pairs[student] = pair
            rows = sorted(by_student.get(student, []), key=lambda c: c.time)
            for start in range(0, len(rows), 1000):
                batch = rows[start : start + 1000]
                events = [
                    EventSpec(
                        kind="check",
                        summary=f"{c.verdict} on {c.concept}"[:300],
                        topic=c.concept,
                        verdict=c.verdict,
                        occurred_at=c.time,
                    )
                    for c in batch
                ]
                # Recorded as of the batch's last check: a back-filled history.
                episodes = episode_append_batch(
                    pair=pair, events=events, now=batch[-1].time, embed=False
                )
                if live:
                    beliefs_derive_from_checks(
                        pair=pair, episode_ids=[e.pk for e in episodes], now=batch[-1].time
                    )
            appended += len(rows)
            if live and progress:
                progress("import, derived live", i + 1, len(students))
    finally:
        episodes_appended.connect(on_episodes_appended, dispatch_uid=DERIVE_DISPATCH_UID)
    last_cut = max(split.cuts.values(), default=None)
    if live:
        if learn:
            fit = beliefs_fit_learning(subject_id=subject.pk, now=last_cut)
            beliefs_rederive_after_fits(fits=[fit] if fit else [], now=last_cut)
    else:
        with_history = [s for s in students if by_student.get(s)]
        for round_number in range(passes):
            for i, student in enumerate(with_history):
                last = max(c.time for c in by_student[student])
                beliefs_rederive(pair=pairs[student], now=split.cuts.get(student, last))
                if progress:
                    progress(f"re-derivation pass {round_number + 1}", i + 1, len(with_history))
            if round_number == 0 and learn:
                # The nightly fit of the learning model, on the pre-cut checks only (the
                # first pass routed them); the next pass derives with it.
                beliefs_fit_learning(subject_id=subject.pk, now=last_cut)

    current: dict[tuple[int, int], float] = {}
    for pair_id, concept_id, p_right in (
        Belief.objects.current()
        .filter(pair__subject=subject)
        .values_list("pair_id", "concept_id", "p_right")
    ):
        current[(pair_id, concept_id)] = p_right
    # What a belief would start from, per pair: the concept's prior over the other
    # students, shifted by the student's level on their other concepts.
    priors: dict[int, tuple] = {}
    predictions: list[float] = []
    by_belief: list[bool] = []
    for t in split.targets:
        pair = pairs[t.student]
        concept_id = concept_ids[t.concept]
        p = current.get((pair.pk, concept_id))
        if p is None:
            if pair.pk not in priors:
                priors[pair.pk] = (
                    concept_priors(subject_id=subject.pk, exclude_pair_id=pair.pk),
                    pair_own_counts(pair_id=pair.pk),
                )
            table, own = priors[pair.pk]
            p = table.for_student(concept_id, own).mean
        by_belief.append((pair.pk, concept_id) in current)
        predictions.append(p)
    return BeliefPredictions(
        p_right=predictions,
        from_belief=sum(by_belief),
        by_belief=by_belief,
        pairs=len(pairs),
        checks_appended=appended,
        organization_slug=slug,
    )


# --------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------


@dataclass
class EvaluationReport:
    checks: int
    students: int
    concepts: int
    history: int
    targets: int
    from_belief: int
    # Students whose cut the log gave (the others: the share rule).
    given_cuts: int = 0
    scores: list[Score] = field(default_factory=list)
    # The same predictors on the first check after the cut of each student-concept only:
    # what p_right claims to predict ("the next check"). The later checks also carry
    # the practice the student did after the cut, which no prediction made at the cut
    # can know of.
    next_check: int = 0
    next_scores: list[Score] = field(default_factory=list)
    # Of those, the student-concepts that had a belief at the cut: what the belief's
    # own p_right said of the check that came next (the others had only the prior).
    believed_next_check: int = 0
    believed_next_scores: list[Score] = field(default_factory=list)
    # Every later check, split by whether its student-concept had a belief at the cut:
    # a belief's own forecast, and the concept prior of a concept never checked (each
    # baseline's answer for "nothing known" there). Where the two parts disagree
    # tells which half of p_right a miscalibration comes from.
    believed_scores: list[Score] = field(default_factory=list)
    unbelieved_scores: list[Score] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "checks": self.checks,
            "students": self.students,
            "concepts": self.concepts,
            "history_checks": self.history,
            "predicted_checks": self.targets,
            "predicted_by_a_belief": self.from_belief,
            "students_with_a_given_cut": self.given_cuts,
            "scores": [
                {
                    "name": s.name,
                    "auc": s.auc,
                    "ece": s.ece,
                    "mean_error": s.mean_error,
                    "bins": [b.as_dict() for b in s.calibration.bins],
                }
                for s in self.scores
            ],
            "next_checks": self.next_check,
            "next_check_scores": _brief(self.next_scores),
            "believed_next_checks": self.believed_next_check,
            "believed_next_check_scores": _brief(self.believed_next_scores),
            "believed_scores": _brief(self.believed_scores),
            "unbelieved_scores": _brief(self.unbelieved_scores),
        }


def _brief(scores: Sequence[Score]) -> list[dict]:
    return [
        {"name": s.name, "auc": s.auc, "ece": s.ece, "mean_error": s.mean_error} for s in scores
    ]


BELIEFS_NAME = "beliefs (p_right)"
FORECAST_NAME = "generating model, from the checks before the cut"


def evaluate(
    checks: Sequence[LoggedCheck],
    *,
    history_share: float = DEFAULT_HISTORY_SHARE,
    passes: int = 2,
    learn: bool = True,
    live: bool = False,
    progress=None,
    forecast: Callable[[Split], list[float]] | None = None,
) -> EvaluationReport:
    """Beliefs and baselines scored on the checks after the cuts. `forecast`, for a
    simulated population, is its generating model's own forecast from the same pre-cut
    checks (`simulation.forecast_at_cut`): the best a belief fixed at the cut can do."""
    split = split_at_cuts(checks, history_share=history_share)
    if not split.targets:
        raise LogError("no check falls after a student's cut: nothing to predict")
    verdicts = [t.verdict for t in split.targets]
    beliefs = belief_predictions(split, passes=passes, learn=learn, live=live, progress=progress)
    report = EvaluationReport(
        checks=len(checks),
        students=len({c.student for c in checks}),
        concepts=len({c.concept for c in checks}),
        history=len(split.history),
        targets=len(split.targets),
        from_belief=beliefs.from_belief,
        given_cuts=len({c.student for c in checks if getattr(c, "cut", None) is not None}),
    )
    predictors = {BELIEFS_NAME: beliefs.p_right, **baselines(split.history, split.targets)}
    truth = [t.p_true for t in split.targets if t.p_true is not None]
    if forecast is not None:
        predictors[FORECAST_NAME] = forecast(split)
    if len(truth) == len(split.targets):
        predictors["truth (generating model)"] = truth
    report.scores = [score(name, p, verdicts) for name, p in predictors.items()]
    first = next_check_indices(split.targets)
    report.next_check = len(first)
    report.next_scores = _scores_of(predictors, verdicts, first)
    believed = [i for i in first if beliefs.by_belief[i]]
    report.believed_next_check = len(believed)
    report.believed_next_scores = _scores_of(predictors, verdicts, believed)
    every = range(len(split.targets))
    report.believed_scores = _scores_of(
        predictors, verdicts, [i for i in every if beliefs.by_belief[i]]
    )
    report.unbelieved_scores = _scores_of(
        predictors, verdicts, [i for i in every if not beliefs.by_belief[i]]
    )
    return report


def _scores_of(predictors: dict, verdicts: Sequence[str], indices: list[int]) -> list[Score]:
    return [
        score(name, [p[i] for i in indices], [verdicts[i] for i in indices])
        for name, p in predictors.items()
    ]


def next_check_indices(targets: Sequence[LoggedCheck]) -> list[int]:
    """The index of each student-concept's first target (in time order)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for i in sorted(range(len(targets)), key=lambda i: targets[i].time):
        key = (targets[i].student, targets[i].concept)
        if key not in seen:
            seen.add(key)
            out.append(i)
    return sorted(out)


def format_report(report: EvaluationReport) -> str:
    lines = [
        f"{report.checks} checks, {report.students} students, {report.concepts} concepts; "
        f"{report.history} before the cuts derived into beliefs, {report.targets} after "
        f"them predicted ({report.from_belief} by a belief, the rest by the concept prior).",
        f"Cuts: {report.given_cuts} given by the log, "
        f"{report.students - report.given_cuts} by the share of each student's checks.",
        "",
        *_score_table(report.scores),
    ]
    if report.next_scores:
        lines += [
            "",
            f"The next check only (the first after the cut of each student-concept, "
            f"{report.next_check} checks):",
            "",
            *_score_table(report.next_scores),
        ]
    if report.believed_next_check:
        lines += [
            "",
            f"The next check of the student-concepts that had a belief at the cut "
            f"({report.believed_next_check} checks):",
            "",
            *_score_table(report.believed_next_scores),
        ]
    believed = report.from_belief
    for count, scores, what in (
        (believed, report.believed_scores, "that had a belief at the cut"),
        (
            report.targets - believed,
            report.unbelieved_scores,
            "that had none (the beliefs' concept prior, each baseline's answer for nothing known)",
        ),
    ):
        if count:
            lines += [
                "",
                f"Every later check of the student-concepts {what} ({count} checks):",
                "",
                *_score_table(scores),
            ]
    lines += ["", "Reliability (10 bins; mean predicted → mean outcome, count):", ""]
    header = "| bin | " + " | ".join(s.name for s in report.scores) + " |"
    lines += [header, "|---" * (len(report.scores) + 1) + "|"]
    for i in range(len(report.scores[0].calibration.bins)):
        cells = []
        for s in report.scores:
            b = s.calibration.bins[i]
            cells.append(
                "" if not b.count else f"{b.mean_predicted:.2f} → {b.mean_outcome:.2f} ({b.count})"
            )
        b0 = report.scores[0].calibration.bins[i]
        lines.append(f"| {b0.lower:.1f}–{b0.upper:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _score_table(scores: Sequence[Score]) -> list[str]:
    """AUC, ECE and the mean error (outcome − prediction) of each predictor."""
    lines = ["| predictor | AUC | ECE | mean outcome − predicted |", "|---|---|---|---|"]
    for s in scores:
        cells = [
            "—" if value is None else f"{value:{form}}"
            for value, form in ((s.auc, ".3f"), (s.ece, ".3f"), (s.mean_error, "+.3f"))
        ]
        lines.append(f"| {s.name} | " + " | ".join(cells) + " |")
    return lines
