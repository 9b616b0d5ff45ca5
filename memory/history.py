"""Importing a real history (JSON Lines) into the episode log, through the batch service.

One event per line, with the API's fields plus where it belongs::

    {"organization": "school-a", "student": "s-1", "subject": "biology",
     "student_timezone": "Europe/Madrid", "kind": "check", "summary": "...",
     "verdict": "wrong", "occurred_at": "2026-07-12T10:04:00Z", ...}

`organization` is the organization's slug (or numeric id). Each chain's events are
appended in file order, in batches (one transaction each) through
`episode_append_external`, so seq, hashes, salience, fingerprints and the search index
are exactly what live appends would have produced.

The file is read twice. The first pass checks every line — JSON, fields, the
organization, cited files, recalled ids, repeated idempotency keys — and writes
nothing; a bad line stops the import there, with its line number, before any chain
changed. The second pass appends. Idempotency keys make a re-run append nothing twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from memory.errors import InvalidInput
from memory.models import Organization, Pair, Subject
from memory.services import (
    EventSpec,
    _check_recalled,
    _resolve_citations,
    _validate_external_id,
    _validate_timezone,
    episode_append_external,
    event_from_mapping,
)

LOCATION_FIELDS = ("organization", "student", "subject", "student_timezone")


class HistoryLineError(Exception):
    """A line of the history file that cannot be imported."""

    def __init__(self, lineno: int, field_name: str, message: str):
        super().__init__(f"line {lineno}: {field_name}: {message}")
        self.lineno = lineno
        self.field = field_name
        self.message = message


@dataclass
class HistoryImportResult:
    lines: int = 0
    appended: int = 0
    replayed: int = 0
    chains: set[tuple[int, str, str]] = field(default_factory=set)


@dataclass
class _Line:
    lineno: int
    chain: tuple[int, str, str]
    timezone: str
    spec: EventSpec


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open(encoding="utf-8") as handle:
        for lineno, raw in enumerate(handle, start=1):
            if raw.strip():
                yield lineno, raw


class _Reader:
    """Turns lines into located events, caching organizations, subjects and pairs."""

    def __init__(self) -> None:
        self.organizations: dict[str, Organization | None] = {}
        self.subjects: dict[tuple[int, str], Subject | None] = {}
        self.pairs: dict[tuple[int, str, str], Pair | None] = {}

    def organization(self, value: Any) -> Organization:
        key = str(value)
        if key not in self.organizations:
            qs = Organization.objects.all()
            found = qs.filter(slug=key).first()
            if found is None and key.isdigit():
                found = qs.filter(pk=int(key)).first()
            self.organizations[key] = found
        found = self.organizations[key]
        if found is None:
            raise InvalidInput("organization", f"no organization {key!r} (slug or id)")
        return found

    def parse(self, lineno: int, raw: str) -> _Line:
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise HistoryLineError(lineno, "line", f"is not valid JSON ({exc})") from exc
        try:
            if not isinstance(data, dict):
                raise InvalidInput("line", "must be a JSON object")
            for name in ("organization", "student", "subject"):
                if not data.get(name):
                    raise InvalidInput(name, "is required")
            organization = self.organization(data["organization"])
            student = _validate_external_id("student", str(data["student"]))
            subject = _validate_external_id("subject", str(data["subject"]))
            timezone_name = data.get("student_timezone") or ""
            if timezone_name:
                try:
                    _validate_timezone(str(timezone_name))
                except InvalidInput as exc:
                    raise InvalidInput("student_timezone", exc.message) from exc
            event = {k: v for k, v in data.items() if k not in LOCATION_FIELDS}
            spec = event_from_mapping(event)
        except InvalidInput as exc:
            raise HistoryLineError(lineno, exc.field, exc.message) from exc
        return _Line(lineno, (organization.pk, student, subject), str(timezone_name), spec)

    def check_references(self, line: _Line) -> None:
        """The database-dependent checks of an event, without writing (first pass)."""
        org_id, student, subject = line.chain
        spec = line.spec
        try:
            if spec.citations:
                key = (org_id, subject)
                if key not in self.subjects:
                    self.subjects[key] = Subject.objects.filter(
                        organization_id=org_id, external_id=subject
                    ).first()
                found = self.subjects[key]
                if found is None:
                    raise InvalidInput(
                        "citations", f"subject {subject!r} has no files yet (it does not exist)"
                    )
                _resolve_citations(spec, found, "citations")
            if spec.recalled_ids:
                if line.chain not in self.pairs:
                    self.pairs[line.chain] = Pair.objects.filter(
                        student__organization_id=org_id,
                        student__external_id=student,
                        subject__external_id=subject,
                    ).first()
                pair = self.pairs[line.chain]
                if pair is None:
                    raise InvalidInput(
                        "recalled_ids", "are not episodes of this student and subject"
                    )
                _check_recalled(pair, spec.recalled_ids, "recalled_ids")
        except InvalidInput as exc:
            raise HistoryLineError(line.lineno, exc.field, exc.message) from exc


def history_count_lines(path: Path) -> int:
    return sum(1 for _ in _lines(path))


def history_validate(*, path: Path, progress: Callable[[int], None] | None = None) -> int:
    """First pass: check every line, write nothing. Returns the number of events."""
    reader = _Reader()
    keys: dict[tuple[tuple[int, str, str], str], int] = {}
    count = 0
    for lineno, raw in _lines(path):
        line = reader.parse(lineno, raw)
        reader.check_references(line)
        key = line.spec.idempotency_key
        if key:
            first = keys.setdefault((line.chain, key), lineno)
            if first != lineno:
                raise HistoryLineError(
                    lineno, "idempotency_key", f"repeats the key of line {first} in the same chain"
                )
        count += 1
        if progress is not None:
            progress(1)
    return count


def history_import(
    *,
    path: Path,
    embed: bool = True,
    batch_size: int | None = None,
    progress: Callable[[int], None] | None = None,
    check_progress: Callable[[int], None] | None = None,
) -> HistoryImportResult:
    """Validate the whole file, then append it chain by chain in batches.

    Raises HistoryLineError naming the line; if the first pass finds it, nothing at all
    was written.
    """
    path = Path(path)
    history_validate(path=path, progress=check_progress)
    batch_size = min(
        batch_size or settings.TUTORBRAIN_MAX_BATCH_EVENTS, settings.TUTORBRAIN_MAX_BATCH_EVENTS
    )
    reader = _Reader()
    result = HistoryImportResult()
    buffers: dict[tuple[int, str, str], list[_Line]] = {}

    def flush(chain: tuple[int, str, str]) -> None:
        lines = buffers.pop(chain, [])
        if not lines:
            return
        org_id, student, subject = chain
        timezone_name = next((ln.timezone for ln in reversed(lines) if ln.timezone), None)
        try:
            _, episodes = episode_append_external(
                organization=reader.organization(org_id),
                student_external_id=student,
                subject_external_id=subject,
                student_timezone=timezone_name,
                events=[ln.spec for ln in lines],
                embed=embed,
            )
        except InvalidInput as exc:
            # A field like "events[3].citations[0]" points into this batch.
            lineno = lines[0].lineno
            if exc.field.startswith("events["):
                index = int(exc.field[len("events[") : exc.field.index("]")])
                lineno = lines[index].lineno
            raise HistoryLineError(lineno, exc.field, exc.message) from exc
        for episode in episodes:
            if episode.was_appended:
                result.appended += 1
            else:
                result.replayed += 1
        result.chains.add(chain)
        if progress is not None:
            progress(len(lines))

    for lineno, raw in _lines(path):
        line = reader.parse(lineno, raw)
        result.lines += 1
        buffer = buffers.setdefault(line.chain, [])
        buffer.append(line)
        if len(buffer) >= batch_size:
            flush(line.chain)
    for chain in list(buffers):
        flush(chain)
    return result
