"""Evidence recall on real conversations: the memory block beside the simplest baselines.

A conversation file in the LoCoMo / REALTALK layout (a list of samples, each with
`conversation` — `speaker_a`, `speaker_b`, `session_<N>_date_time`, `session_<N>` turns
with `dia_id` and `text` — and `qa` with `question`, `evidence` and `category`) is
appended turn by turn through the episode services into one organization: one student
per conversation, subject `locomo`, speaker A's turns as `question`, speaker B's as
`answer`. Then, for every question with evidence, the block is built at each budget and
the share of the question's evidence turns that reached it is counted, beside three
baselines computed in the same run over the same turns, the same budget and the same
token counter (`tutorbrain.block.tokens.count_tokens`):

- `bm25`: Okapi BM25 (k1 1.5, b 0.75) over lower-cased `\\w+` tokens of each turn;
- `vector`: cosine between the question's and the turns' stored embeddings (the model
  the block uses);
- `rrf`: the two rankings fused by reciprocal rank (k = 60).

A baseline fills the budget with its best-ranked turns, each written as one line
`- <date> · <turn>` — the plainest memory that carries the date — and skips a line
that does not fit. It pays no frame: the block must beat them with its frame paid.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

SUBJECT = "locomo"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DESIGNS = ("block", "bm25", "vector", "rrf")
SUMMARY_CHARS = 300  # the held-out measure's summary: the turn cut to 300 characters
BATCH = 500
BM25_K1 = 1.5
BM25_B = 0.75
RRF_K = 60
DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y")
_DIA_ID = re.compile(r"D\d+:\d+")
_BM25_TOKEN = re.compile(r"\w+")


class ConversationFileError(ValueError):
    """The file is not in the LoCoMo layout (one readable line for the command)."""


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str  # with the photo suffix, as the baselines of the dev set's README
    occurred_at: datetime
    first_speaker: bool


@dataclass(frozen=True)
class Question:
    sample_id: str
    number: int
    question: str
    evidence: tuple[str, ...]
    category: int


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]

    @property
    def last_at(self) -> datetime:
        return max(t.occurred_at for t in self.turns)


@dataclass
class RecallReport:
    budgets: list[int]
    # scores[budget][design][category] -> list of per-question recalls
    scores: dict[int, dict[str, dict[int, list[float]]]] = field(default_factory=dict)
    questions: int = 0
    turns: int = 0
    details: list[dict[str, Any]] = field(default_factory=list)

    def add(self, budget: int, design: str, category: int, recall: float) -> None:
        per_design = self.scores.setdefault(budget, {}).setdefault(design, {})
        per_design.setdefault(category, []).append(recall)

    def mean(self, budget: int, design: str, category: int | None = None) -> float:
        by_category = self.scores.get(budget, {}).get(design, {})
        values = (
            [v for vs in by_category.values() for v in vs]
            if category is None
            else by_category.get(category, [])
        )
        return 100.0 * sum(values) / len(values) if values else 0.0

    def count(self, budget: int, category: int | None = None) -> int:
        by_category = self.scores.get(budget, {}).get("block", {})
        if category is None:
            return sum(len(v) for v in by_category.values())
        return len(by_category.get(category, []))


# ---- Reading the file -------------------------------------------------------------------


def _parse_when(value: str) -> datetime:
    for pattern in DATE_FORMATS:
        try:
            return datetime.strptime(value.strip(), pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ConversationFileError(f"unreadable session date {value!r}")


def _evidence(raw: Any) -> tuple[str, ...]:
    found: list[str] = []
    for item in raw or []:
        for dia_id in _DIA_ID.findall(str(item)):
            if dia_id not in found:
                found.append(dia_id)
    return tuple(found)


def conversations_read(path: Path) -> tuple[list[Conversation], str]:
    """The file's conversations and its sha256; ConversationFileError when malformed."""
    try:
        raw_bytes = path.read_bytes()
    except OSError as exc:
        raise ConversationFileError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        data = json.loads(raw_bytes)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConversationFileError(f"{path} is not JSON: {exc}") from exc
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not data:
        raise ConversationFileError(f"{path} holds no conversation (expected a list of samples)")
    out = []
    for index, sample in enumerate(data):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise ConversationFileError(f"sample {index} has no 'conversation' object")
        out.append(_conversation_read(sample, index))
    return out, hashlib.sha256(raw_bytes).hexdigest()


def _conversation_read(sample: dict[str, Any], index: int) -> Conversation:
    conv = sample["conversation"]
    sample_id = str(sample.get("sample_id") or f"sample-{index}")
    speaker_a = conv.get("speaker_a")
    numbers = sorted(
        int(k.split("_")[1])
        for k in conv
        if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list) and conv[k]
    )
    turns: list[Turn] = []
    for number in numbers:
        when_raw = conv.get(f"session_{number}_date_time")
        if not isinstance(when_raw, str):
            raise ConversationFileError(f"{sample_id}: session {number} has no date_time")
        started = _parse_when(when_raw)
        for k, turn in enumerate(conv[f"session_{number}"], start=1):
            if not isinstance(turn, dict) or not turn.get("dia_id") or "text" not in turn:
                raise ConversationFileError(f"{sample_id}: session {number} turn {k} malformed")
            text = str(turn["text"]).strip()
            if turn.get("blip_caption"):
                text = f"{text} [shares a photo: {turn['blip_caption']}]"
            match = re.fullmatch(r"D\d+:(\d+)", str(turn["dia_id"]))
            offset = int(match.group(1)) if match else k
            turns.append(
                Turn(
                    dia_id=str(turn["dia_id"]),
                    speaker=str(turn.get("speaker", "")),
                    text=text or ".",
                    occurred_at=started + timedelta(seconds=offset),
                    first_speaker=turn.get("speaker") == speaker_a,
                )
            )
    if not turns:
        raise ConversationFileError(f"{sample_id}: no turns")
    questions = []
    for number, qa in enumerate(sample.get("qa") or []):
        evidence = _evidence(qa.get("evidence"))
        category = qa.get("category")
        if not evidence or category not in CATEGORIES or not str(qa.get("question", "")).strip():
            continue  # unanswerable (category 5) or without marked evidence: nothing to recall
        questions.append(
            Question(
                sample_id=sample_id,
                number=number,
                question=str(qa["question"]).strip(),
                evidence=evidence,
                category=int(category),
            )
        )
    return Conversation(sample_id=sample_id, turns=turns, questions=questions)


# ---- Loading through the services -------------------------------------------------------


def recall_organization(digest: str):
    """One organization per file content: a rerun on the same file reuses what it loaded."""
    from memory.models import Organization
    from memory.services import organization_create

    slug = f"recall-{digest[:12]}"
    found = Organization.objects.filter(slug=slug).first()
    return found or organization_create(name=f"Recall benchmark {digest[:12]}", slug=slug)


def conversation_load(*, organization, conversation: Conversation) -> dict[str, int]:
    """Append every turn through the services (idempotent); dia_id -> episode id."""
    from memory.models import Episode
    from memory.services import EventSpec, episode_append_external

    prefix = f"{conversation.sample_id}:"
    known = dict(
        Episode.objects.filter(
            pair__student__organization=organization,
            pair__student__external_id=conversation.sample_id,
            idempotency_key__startswith=prefix,
        ).values_list("idempotency_key", "id")
    )
    missing = [t for t in conversation.turns if prefix + t.dia_id not in known]
    for start in range(0, len(missing), BATCH):
        events = [
            EventSpec(
                kind="question" if t.first_speaker else "answer",
                summary=t.text[:SUMMARY_CHARS],
                text=f"{t.speaker}: {t.text}",
                occurred_at=t.occurred_at,
                idempotency_key=prefix + t.dia_id,
            )
            for t in missing[start : start + BATCH]
        ]
        _, episodes = episode_append_external(
            organization=organization,
            student_external_id=conversation.sample_id,
            subject_external_id=SUBJECT,
            events=events,
            student_timezone="UTC",
        )
        known.update({e.idempotency_key: e.pk for e in episodes})
    return {key[len(prefix) :]: pk for key, pk in known.items()}


# ---- Baselines ------------------------------------------------------------------------


def bm25_tokens(text: str) -> list[str]:
    return _BM25_TOKEN.findall(text.lower())


class Bm25:
    """Okapi BM25 as rank-bm25 computes it (idf floored at eps × mean idf)."""

    def __init__(self, documents: list[list[str]], *, k1: float = BM25_K1, b: float = BM25_B):
        self.k1, self.b = k1, b
        self.tfs = [Counter(d) for d in documents]
        self.lengths = np.array([len(d) for d in documents], dtype=float)
        self.avg = float(self.lengths.mean()) if len(documents) else 1.0
        df: Counter[str] = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(documents)
        idf = {w: math.log(n - f + 0.5) - math.log(f + 0.5) for w, f in df.items()}
        floor = 0.25 * (sum(idf.values()) / len(idf)) if idf else 0.0
        self.idf = {w: (v if v >= 0 else floor) for w, v in idf.items()}

    def scores(self, query: list[str]) -> np.ndarray:
        out = np.zeros(len(self.tfs))
        norm = self.k1 * (1 - self.b + self.b * self.lengths / self.avg)
        for word in query:
            idf = self.idf.get(word)
            if idf is None:
                continue
            tf = np.array([t.get(word, 0) for t in self.tfs], dtype=float)
            out += idf * tf * (self.k1 + 1) / (tf + norm)
        return out


def rrf(*rankings: list[int], k: int = RRF_K) -> list[int]:
    score: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, index in enumerate(ranking, start=1):
            score[index] += 1.0 / (k + rank)
    return sorted(score, key=lambda i: -score[i])


def baseline_line(turn: Turn, *, now: datetime) -> str:
    when = turn.occurred_at.strftime("%d %b").lstrip("0")
    if turn.occurred_at.year != now.year:
        when += f" {turn.occurred_at.year}"
    return f"- {when} · {turn.text[:SUMMARY_CHARS]}"


def fill_budget(order: Iterable[int], costs: list[int], budget: int) -> set[int]:
    """The turns a baseline shows: best first while they fit, a too-long one skipped."""
    chosen, spent = set(), 0
    for index in order:
        if spent + costs[index] <= budget:
            chosen.add(index)
            spent += costs[index]
    return chosen


# ---- The run ----------------------------------------------------------------------------


def recall_of(evidence: tuple[str, ...], shown: set[str]) -> float:
    return sum(1 for e in evidence if e in shown) / len(evidence)


def recall_run(
    *,
    conversations: list[Conversation],
    digest: str,
    budgets: list[int],
    now: datetime | None = None,
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
    keep_details: bool = False,
) -> RecallReport:
    """Load every conversation, then ask every question under every design and budget."""
    from memory.models import EpisodeIndex
    from tutorbrain import embedder
    from tutorbrain.block.build import memory_block_build
    from tutorbrain.block.tokens import count_tokens

    organization = recall_organization(digest)
    report = RecallReport(budgets=list(budgets))
    for conversation in conversations:
        ids = conversation_load(organization=organization, conversation=conversation)
        by_episode = {pk: dia for dia, pk in ids.items()}
        turns = conversation.turns
        at = now or (conversation.last_at + timedelta(days=1))
        questions = conversation.questions[:limit] if limit else conversation.questions
        report.turns += len(turns)
        report.questions += len(questions)
        if progress:
            progress(f"{conversation.sample_id}: {len(turns)} turns, {len(questions)} questions")
        if not questions:
            continue
        # The same stored vectors the block's vector pool reads.
        stored = dict(
            EpisodeIndex.objects.filter(episode_id__in=list(by_episode)).values_list(
                "episode_id", "embedding"
            )
        )
        matrix = np.array([stored[ids[t.dia_id]] for t in turns], dtype=np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
        bm25 = Bm25([bm25_tokens(t.text) for t in turns])
        costs = [count_tokens(baseline_line(t, now=at)) + 1 for t in turns]
        vectors = embedder.embed([q.question for q in questions])
        for question, vector in zip(questions, vectors, strict=True):
            lexical = bm25.scores(bm25_tokens(question.question))
            lex_order = [int(i) for i in np.argsort(-lexical, kind="stable") if lexical[i] > 0]
            cosine = matrix @ (vector / max(float(np.linalg.norm(vector)), 1e-9))
            vec_order = [int(i) for i in np.argsort(-cosine, kind="stable")]
            orders = {"bm25": lex_order, "vector": vec_order, "rrf": rrf(lex_order, vec_order)}
            detail: dict[str, Any] = {
                "sample": conversation.sample_id,
                "question": question.question,
                "category": question.category,
                "evidence": list(question.evidence),
            }
            for budget in budgets:
                for design, order in orders.items():
                    shown = {turns[i].dia_id for i in fill_budget(order, costs, budget)}
                    report.add(
                        budget, design, question.category, recall_of(question.evidence, shown)
                    )
                result = memory_block_build(
                    organization=organization,
                    student_external_id=conversation.sample_id,
                    subject_external_id=SUBJECT,
                    message=question.question,
                    now=at,
                    budget=budget,
                    vector=vector,
                )
                shown = {by_episode[r.id] for r in result.recalled if r.id in by_episode}
                report.add(budget, "block", question.category, recall_of(question.evidence, shown))
                if keep_details:
                    detail[f"block_{budget}"] = sorted(shown)
                    detail[f"block_{budget}_tokens"] = result.tokens
                    detail["terms"] = result.terms
            if keep_details:
                positions = {t.dia_id: i for i, t in enumerate(turns)}
                detail["bm25_rank"] = {
                    e: (lex_order.index(positions[e]) if positions.get(e) in lex_order else None)
                    for e in question.evidence
                }
                report.details.append(detail)
    return report


DESIGN_TITLES = {
    "block": "the memory block",
    "bm25": "BM25 (Okapi, `\\w+` tokens)",
    "vector": "vector only (same embedding model)",
    "rrf": "BM25 + vector, reciprocal-rank fusion (k 60)",
}


def report_markdown(report: RecallReport) -> str:
    lines = []
    for budget in report.budgets:
        header = (
            f"| design, budget {budget:,} tokens | all ({report.count(budget)}) | "
            + " | ".join(f"{name} ({report.count(budget, c)})" for c, name in CATEGORIES.items())
            + " |"
        )
        lines += [header, "|---" * (2 + len(CATEGORIES)) + "|"]
        for design in DESIGNS:
            cells = [f"{report.mean(budget, design):.1f} %"] + [
                f"{report.mean(budget, design, c):.1f} %" if report.count(budget, c) else "—"
                for c in CATEGORIES
            ]
            lines.append(f"| {DESIGN_TITLES[design]} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)
