"""Four designs of the same tutor that differ only in what reaches the prompt (R-8.2).

Every design's prompt ends with the same passages retrieved from the subject's current
files (what a retrieval-augmented tutor has without any memory). What precedes them:

- `retrieval`: nothing — no memory at all;
- `window`: the last `WINDOW_TURNS` conversation episodes, unranked, oldest first;
- `episodes`: ranked recall from the episode log only — full-text and vector pools over
  the whole history plus the recent past, scored by relevance, salience and recency — with
  no map, no beliefs, no time-window branch and no history branch;
- `full`: the real memory block (`tutorbrain.block.build.memory_block_build`).

Episode lines are written the way the block writes them ("- 12 Jul · kind: summary"), so
that the graders read every design the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tutorbrain.evaluation import integration
from tutorbrain.evaluation.graders import Recalled, Shown

if TYPE_CHECKING:
    from memory.models import Pair

DESIGNS = ("retrieval", "window", "episodes", "full")
WINDOW_TURNS = 20  # "the last 20 turns, unranked"
CONVERSATION_KINDS = ("question", "answer", "check", "quiz", "taught")
PASSAGES = 3  # file paragraphs retrieved per message, in every design
PASSAGES_HEADER = "PASSAGES FROM THE STUDENT'S FILES:"
EPISODES_HEADER = "EARLIER WORK WITH THIS STUDENT (oldest first):"
WINDOW_HEADER = "THE LAST TURNS WITH THIS STUDENT (oldest first):"
# The episodes design's pools and weights (the original design's starting weights).
EPISODE_POOL_RECENT = 500
EPISODE_POOL_VECTOR = 50
EPISODE_RESULTS = 12
WEIGHT_RELEVANCE = 0.55
WEIGHT_SALIENCE = 0.30
WEIGHT_RECENCY = 0.15
RECENCY_HALF_LIFE_DAYS = 75.0  # 200 days keep ~0.156 of recency, as in SPEC


@dataclass(frozen=True)
class Asked:
    """One pre-registered question, resolved to its pair."""

    pair: Pair
    message: str
    now: datetime
    budget: int


def episode_line(episode, *, now: datetime) -> str:
    """An episode line exactly as the memory block writes it."""
    from zoneinfo import ZoneInfo

    from tutorbrain.block.format import EpisodeLine

    return EpisodeLine(
        id=episode.pk,
        kind=episode.kind,
        summary=episode.summary,
        occurred_at=episode.occurred_at,
        verdict=episode.verdict,
    ).render(zone=ZoneInfo("UTC"), now=now)


def _episodes_part(header: str, episodes: Sequence, *, now: datetime) -> str:
    ordered = sorted(episodes, key=lambda e: (e.occurred_at, e.seq))
    return "\n".join([header, *(episode_line(e, now=now) for e in ordered)])


def _recalled(episodes: Sequence) -> tuple[Recalled, ...]:
    return tuple(Recalled(id=e.pk, occurred_at=e.occurred_at) for e in episodes)


# ---- passages (every design) ----------------------------------------------------------------


def file_passages(*, subject, message: str, limit: int = PASSAGES) -> list[str]:
    """The paragraphs of the subject's current files that share most words with the message
    (plain lexical retrieval, as a chat service without memory would have)."""
    from memory.models import SubjectFile
    from tutorbrain.language import search_terms

    wanted = set(search_terms(message))
    scored = []
    files = SubjectFile.objects.filter(
        subject=subject, replaced_at__isnull=True, removed_at__isnull=True
    ).order_by("name")
    for order, file in enumerate(files):
        text = bytes(file.content).decode("utf-8", errors="replace")
        for number, paragraph in enumerate(p.strip() for p in text.split("\n\n")):
            if not paragraph or paragraph.startswith("#"):
                continue
            overlap = len(wanted & set(search_terms(paragraph)))
            if overlap:
                scored.append((-overlap, order, number, paragraph))
    return [p for *_, p in sorted(scored)[:limit]]


def _with_passages(memory: str, passages: list[str]) -> str:
    parts = [memory] if memory else []
    if passages:
        parts.append("\n".join([PASSAGES_HEADER, *passages]))
    return "\n\n".join(parts)


# ---- the four designs -------------------------------------------------------------------------


def design_retrieval(asked: Asked, passages: list[str]) -> Shown:
    return Shown(text=_with_passages("", passages))


def design_window(asked: Asked, passages: list[str]) -> Shown:
    from memory.models import Episode

    last = list(
        Episode.objects.filter(
            pair=asked.pair, kind__in=CONVERSATION_KINDS, occurred_at__lt=asked.now
        ).order_by("-occurred_at", "-seq")[:WINDOW_TURNS]
    )
    return Shown(
        text=_with_passages(
            _episodes_part(WINDOW_HEADER, last, now=asked.now) if last else "", passages
        ),
        recalled=_recalled(last),
    )


def design_episodes(asked: Asked, passages: list[str]) -> Shown:
    """Ranked recall from the episode log only (no map, beliefs, time or history branch)."""
    import math

    from django.contrib.postgres.search import SearchQuery
    from pgvector.django import CosineDistance

    from memory.models import Episode, EpisodeIndex
    from tutorbrain.block.tokens import count_tokens
    from tutorbrain.embedder import embed
    from tutorbrain.language import index_terms

    pair, now = asked.pair, asked.now
    base = EpisodeIndex.objects.filter(pair_id=pair.pk, occurred_at__lt=now).exclude(
        kind="consolidation"
    )
    relevance: dict[int, float] = {}
    # The same stemmed terms the search documents hold (tutorbrain.language.index_terms).
    terms = list(dict.fromkeys(index_terms(asked.message, pair.subject.language)))
    if terms:
        query = SearchQuery(" | ".join(terms), search_type="raw", config="simple")
        for episode_id in base.filter(search=query).values_list("episode_id", flat=True):
            relevance[episode_id] = 1.0
    vector = embed([asked.message])[0]
    for episode_id, distance in (
        base.exclude(embedding__isnull=True)
        .annotate(distance=CosineDistance("embedding", vector))
        .order_by("distance")
        .values_list("episode_id", "distance")[:EPISODE_POOL_VECTOR]
    ):
        relevance[episode_id] = max(relevance.get(episode_id, 0.0), 1.0 - float(distance))
    recent = list(
        base.order_by("-occurred_at").values_list("episode_id", flat=True)[:EPISODE_POOL_RECENT]
    )
    candidates = Episode.objects.filter(pk__in=set(relevance) | set(recent))
    decay = math.log(2) / RECENCY_HALF_LIFE_DAYS

    def score(e) -> float:
        age = max(0.0, (now - e.occurred_at).total_seconds() / 86400)
        return (
            WEIGHT_RELEVANCE * relevance.get(e.pk, 0.0)
            + WEIGHT_SALIENCE * e.salience
            + WEIGHT_RECENCY * math.exp(-decay * age)
        )

    ranked = sorted(candidates, key=lambda e: (-score(e), -e.pk))
    chosen: list[Any] = []
    used = count_tokens(EPISODES_HEADER)
    for episode in ranked[: EPISODE_RESULTS * 3]:
        cost = count_tokens(episode_line(episode, now=now))
        if used + cost > asked.budget or len(chosen) == EPISODE_RESULTS:
            break
        chosen.append(episode)
        used += cost
    return Shown(
        text=_with_passages(
            _episodes_part(EPISODES_HEADER, chosen, now=now) if chosen else "", passages
        ),
        recalled=_recalled(chosen),
    )


def design_full(asked: Asked, passages: list[str]) -> Shown:
    result = integration.block_build(
        pair=asked.pair, message=asked.message, now=asked.now, budget=asked.budget
    )
    block = integration.shown_of_block(result)
    return Shown(text=_with_passages(block.text, passages), recalled=block.recalled)


DESIGN_BUILDERS = {
    "retrieval": design_retrieval,
    "window": design_window,
    "episodes": design_episodes,
    "full": design_full,
}
