"""The block's text: a fixed frame, sections in mode order, lines under a token budget (R-5.8).

Budget order: the frame (header, the history/time-window lines, HOW TO USE, footer) is
paid first and is the minimum budget; then beliefs (cheap, ~20 tokens a line, they
stand for many episodes, R-4.3); then episodes spend what remains, after a reserve
for the map; then map lines fill by centrality with what is left. Section *position*
depends on the mode: history questions put beliefs and earlier work first and the
map last; ordinary questions put the map first (R-5.7).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

from tutorbrain.block.tokens import count_tokens, truncate_to_tokens

FRAME_TOP = "===== YOUR MEMORY OF THIS STUDENT AND SUBJECT ====="
FRAME_END = "===== END OF MEMORY ====="
HISTORY_LINE = (
    "THE STUDENT IS ASKING ABOUT THEIR OWN RECORD. Answer from what you believe and the "
    "earlier work below (checks, quizzes and the conversation itself); the subject map "
    "comes last and is about the material, not about them."
)
WINDOW_LINE = (
    "THE STUDENT IS ASKING ABOUT {label} (their time zone): the earlier work below is only "
    "from {label}."
)
NO_RECORD_LINE = "No record of work with this student {preposition} {label}."
FUTURE_WINDOW_LINE = (
    "The student names {label}, which has not happened yet: the earlier work below is not "
    "limited to it."
)
BELIEFS_HEADER = (
    "WHAT YOU CURRENTLY BELIEVE ABOUT THIS STUDENT (from their checks; confidence 0–1; "
    "p_right = chance they get the next check on it right):"
)
EPISODES_HEADER = "EARLIER WORK WITH THIS STUDENT (oldest first):"
NO_EPISODES_LINE = "- none on record: this is your first work with this student in this subject"
# The percent is the map's readiness: each concept's band — named 0.35, explained
# by a file 0.60, confirmed by a check 0.85, taught 1.0 — weighted by centrality. Checks
# and teaching raise it, so it is not a share the files explain, and must not say so.
MAP_HEADER = (
    "SUBJECT MAP ({count} concepts; readiness of the material {percent}%, from its files, "
    "checks and teaching; NOT the student's mastery):"
)
NO_MAP_LINE = "- no file of this subject has been read yet"
HOW_TO_USE = (
    "HOW TO USE THIS: it is your own memory of past work with this student, not their "
    "material. Cite an earlier episode by its date; never claim past work that is not "
    "listed here. {limits}"
)
STALE_CITATION_LABEL = "[note: the file this cited has since been replaced or removed]"
REPEATS_SUFFIX = "(and {n} more times like it)"
REPEATS_SUFFIX_ONE = "(and 1 more time like it)"

# Short prefixes: every token of chrome is a token less of memory (R-5.8's budget).
KIND_PHRASES = {
    "question": "student: {summary}",
    "answer": "you: {summary}",
    "check": "check: {summary}",
    "quiz": "quiz: {summary}",
    "file": "file: {summary}",
    "taught": "you were taught: {summary}",
    "consolidation": "day summary: {summary}",
}

# Shares of what the frame leaves: beliefs may take at most this much, and this much is
# kept back for the map while episodes are chosen (unused reserve goes to the map's
# further lines, and episodes never starve beliefs of their first place).
BELIEFS_MAX_SHARE = 0.40
BELIEFS_ALWAYS = 3
MAP_RESERVE_SHARE = {"ordinary": 0.30, "history": 0.15}
# Episodes that did not fit, in a row, before the budget is taken as spent.
EPISODE_MISSES_MAX = 8
# One line never takes more than this, whatever the episode's summary holds.
LINE_MAX_TOKENS = 80
# An episode's text beyond this is shown as the part around the words the message
# shares with it (a snippet), not as its beginning cut short.
EPISODE_TEXT_MAX_TOKENS = 48
ELLIPSIS = "…"


@dataclass
class BeliefLine:
    claim_label: str  # "understands", "struggles with"
    concept: str
    confidence: float
    needs_confirmation: bool = False
    # None only for a belief written before p_right existed.
    p_right: float | None = None

    def render(self) -> str:
        note = " [to confirm]" if self.needs_confirmation else ""
        p = f", p_right {self.p_right:.2f}" if self.p_right is not None else ""
        return f"- {self.claim_label} {self.concept} ({self.confidence:.2f}{p}){note}"


@dataclass
class EpisodeLine:
    id: int
    kind: str
    summary: str
    occurred_at: datetime
    verdict: str = ""
    repeats: int = 0
    stale_citation: bool = False

    def render(self, *, zone: ZoneInfo, now: datetime, terms: Terms | None = None) -> str:
        local = self.occurred_at.astimezone(zone)
        when = local.strftime("%d %b").lstrip("0")
        if local.year != now.astimezone(zone).year:
            when += f" {local.year}"
        summary = " ".join(self.summary.split())
        if count_tokens(summary) > EPISODE_TEXT_MAX_TOKENS:
            summary = snippet(summary, terms, EPISODE_TEXT_MAX_TOKENS)
        if self.kind in ("check", "quiz") and self.verdict and self.verdict not in summary:
            summary = f"{summary}: {self.verdict}"
        text = f"- {when} · " + KIND_PHRASES.get(self.kind, "{summary}").format(summary=summary)
        if self.repeats:
            suffix = (
                REPEATS_SUFFIX_ONE if self.repeats == 1 else REPEATS_SUFFIX.format(n=self.repeats)
            )
            text = f"{text} {suffix}"
        if self.stale_citation:
            text = f"{text} {STALE_CITATION_LABEL}"
        return text


@dataclass(frozen=True)
class Terms:
    """The message's search terms (stems) and the language they were taken in."""

    stems: frozenset[str]
    code: str


def snippet(text: str, terms: Terms | None, limit: int) -> str:
    """The part of `text` (at most `limit` tokens) around the words `terms` name.

    The window covering the most distinct terms is chosen, then widened on both sides
    while it fits; "…" marks each cut end. With no term in the text, its beginning.
    """
    words = text.split(" ")
    hits: list[frozenset[str]] = []
    if terms is not None and terms.stems:
        from tutorbrain.language import index_terms

        hits = [frozenset(index_terms(w, terms.code)) & terms.stems for w in words]
    if not any(hits):
        return truncate_to_tokens(text, limit, ellipsis=ELLIPSIS)
    costs = [count_tokens(w) for w in words]
    room = limit - 2 * count_tokens(ELLIPSIS)
    best = (0, 0, 0)  # (distinct terms covered, -length, start) of the best window
    best_span = (0, 0)
    start, spent = 0, 0
    for end in range(len(words)):
        spent += costs[end]
        while spent > room and start <= end:
            spent -= costs[start]
            start += 1
        if start > end:
            continue
        covered = len(frozenset().union(*hits[start : end + 1]))
        # The shortest window ending here with the same coverage: the room left over
        # is spread on both sides below.
        first = start
        while first < end and (
            not hits[first] or hits[first] <= frozenset().union(*hits[first + 1 : end + 1])
        ):
            first += 1
        key = (covered, -(end - first), -first)
        if key > best:
            best, best_span = key, (first, end + 1)
    lo, hi = best_span
    spent = sum(costs[lo:hi])
    # Widen: one word before, one after, in turn, while the window still fits.
    grew = True
    while grew:
        grew = False
        if lo > 0 and spent + costs[lo - 1] <= room:
            lo -= 1
            spent += costs[lo]
            grew = True
        if hi < len(words) and spent + costs[hi] <= room:
            spent += costs[hi]
            hi += 1
            grew = True
    return (
        (ELLIPSIS if lo > 0 else "")
        + " ".join(words[lo:hi])
        + (ELLIPSIS if hi < len(words) else "")
    )


@dataclass
class MapLine:
    name: str
    summary: str
    taught_note: str | None
    builds_on: list[str]

    def render(self) -> str:
        """`- Name: summary [taught: note] (builds on: A, B)` within LINE_MAX_TOKENS.

        When the line is too long the summary and the note are cut, never the builds-on
        list: the prerequisites are what a "what should I review before X" needs. The
        file's summary is cut first: the taught note is what a person chose to say about
        the concept, and is kept whole when it fits the line on its own.
        """
        head = f"- {self.name}"
        tail = f" (builds on: {', '.join(self.builds_on)})" if self.builds_on else ""
        summary = _without_name_prefix(" ".join(self.summary.split()), self.name)
        summary_part = f": {summary}" if summary else ""
        note_part = f" [taught: {' '.join(self.taught_note.split())}]" if self.taught_note else ""
        middle = summary_part + note_part
        text = head + middle + tail
        if count_tokens(text) <= LINE_MAX_TOKENS:
            return text
        # One token kept back for the "]" that closes a cut taught note.
        room = LINE_MAX_TOKENS - count_tokens(head + tail) - 1
        if note_part and count_tokens(note_part) <= room:
            left = room - count_tokens(note_part)
            return head + truncate_to_tokens(summary_part, left) + note_part + tail
        cut = truncate_to_tokens(middle, room) if room > 0 else ""
        if "[taught: " in cut and not cut.endswith("]"):
            cut += "]"
        return truncate_to_tokens(head + cut + tail, LINE_MAX_TOKENS)


def _without_name_prefix(summary: str, name: str) -> str:
    """Drop a leading "Name:" that repeats the line's own name (glossary-style summaries)."""
    prefix = f"{name}:"
    if summary[: len(prefix)].casefold() == prefix.casefold():
        return summary[len(prefix) :].strip()
    return summary


@dataclass
class BlockParts:
    mode: str  # "ordinary" | "history"
    limits_sentence: str
    beliefs: list[BeliefLine]
    episodes: list[EpisodeLine]  # best first
    map_count: int
    map_readiness: float
    map_lines: list[MapLine]  # concepts the message names first, then by centrality
    # How many of map_lines lead because the message names them: they get room in any mode.
    map_pinned: int = 0
    window_label: str | None = None
    window_preposition: str = "in"
    window_empty: bool = False
    future_window_label: str | None = None  # a window after `now`, ignored
    has_history: bool = True  # False: nothing at all on record for this pair
    # History mode: episodes grouped by kind group, each best first, taken in turn.
    episode_groups: list[list[EpisodeLine]] = field(default_factory=list)
    # The message's terms: a long episode shows the part around them.
    terms: Terms | None = None


@dataclass
class FormattedBlock:
    text: str
    tokens: int
    episodes: list[EpisodeLine]  # what made it into the text, oldest first
    beliefs_shown: int
    map_lines_shown: int


class BudgetTooSmall(Exception):
    def __init__(self, minimum: int):
        super().__init__(f"must be at least {minimum} tokens (the block's frame alone)")
        self.minimum = minimum


def _cost(line: str) -> int:
    return count_tokens(line) + 1  # the line and its newline


def frame_lines(parts: BlockParts) -> tuple[list[str], list[str]]:
    head = [FRAME_TOP]
    if parts.mode == "history":
        head.append(HISTORY_LINE)
    if parts.window_label:
        template = NO_RECORD_LINE if parts.window_empty else WINDOW_LINE
        head.append(template.format(preposition=parts.window_preposition, label=parts.window_label))
    elif parts.future_window_label:
        head.append(FUTURE_WINDOW_LINE.format(label=parts.future_window_label))
    tail = [HOW_TO_USE.format(limits=parts.limits_sentence).rstrip(), FRAME_END]
    return head, tail


def frame_tokens(parts: BlockParts) -> int:
    head, tail = frame_lines(parts)
    # The last line has no newline after it.
    return sum(_cost(line) for line in head + tail) - 1


def _take(lines: list[str], allowance: int) -> tuple[list[str], int]:
    """Lines from the front while they fit; a too-long line is cut to fit its cap."""
    taken, spent = [], 0
    for line in lines:
        tokens = count_tokens(line)
        if tokens > LINE_MAX_TOKENS:
            line = truncate_to_tokens(line, LINE_MAX_TOKENS)
            tokens = count_tokens(line)
        cost = tokens + 1
        if spent + cost > allowance:
            break
        taken.append(line)
        spent += cost
    return taken, spent


def _section(header: str, lines: list[str], empty_line: str | None, allowance: int):
    """A section's header and lines within `allowance`; nothing when even one line won't fit."""
    header_cost = _cost(header)
    if not lines:
        lines = [empty_line] if empty_line else []
    if not lines or header_cost >= allowance:
        return [], 0
    taken, spent = _take(lines, allowance - header_cost)
    if not taken:
        return [], 0
    return [header, *taken], header_cost + spent


def block_format(parts: BlockParts, *, budget: int, zone: ZoneInfo, now: datetime):
    """The block text within `budget` tokens (by tokens.count_tokens), or BudgetTooSmall."""
    minimum = frame_tokens(parts)
    if budget < minimum:
        raise BudgetTooSmall(minimum)
    head, tail = frame_lines(parts)
    remaining = budget - minimum

    # Beliefs first.
    belief_lines = [b.render() for b in parts.beliefs]
    # Beliefs come first: the first few always get their room; beyond them beliefs take
    # at most a share, so that many beliefs still leave room for episodes.
    first_beliefs = _cost(BELIEFS_HEADER) + sum(
        _cost(line) for line in belief_lines[:BELIEFS_ALWAYS]
    )
    # No beliefs: no section (a header over "nothing yet" only spends the budget).
    belief_section, spent = _section(
        BELIEFS_HEADER,
        belief_lines,
        None,
        min(remaining, max(int(remaining * BELIEFS_MAX_SHARE), first_beliefs)),
    )
    remaining -= spent
    beliefs_shown = max(0, len(belief_section) - 1) if parts.beliefs else 0

    # Map reserve, then episodes.
    map_header = MAP_HEADER.format(count=parts.map_count, percent=round(parts.map_readiness * 100))
    map_rendered = [m.render() for m in parts.map_lines]
    map_need = _cost(map_header) + sum(_cost(line) for line in map_rendered[:3])
    reserve = min(map_need, int(remaining * MAP_RESERVE_SHARE[parts.mode])) if map_rendered else 0
    if parts.map_pinned and map_rendered:
        # The concepts the student asks about keep their lines even in history mode.
        pinned_need = _cost(map_header) + sum(
            _cost(line) for line in map_rendered[: parts.map_pinned]
        )
        reserve = min(remaining, max(reserve, pinned_need))

    episodes_chosen: list[EpisodeLine] = []
    episode_section: list[str] = []
    if not parts.window_empty:
        allowance = remaining - reserve
        order = _episode_order(parts)
        chosen_lines: list[tuple[EpisodeLine, str]] = []
        spent = _cost(EPISODES_HEADER)
        misses = 0
        for line in order:
            rendered = line.render(zone=zone, now=now, terms=parts.terms)
            tokens = count_tokens(rendered)
            if tokens > LINE_MAX_TOKENS:
                rendered = truncate_to_tokens(rendered, LINE_MAX_TOKENS)
                tokens = count_tokens(rendered)
            cost = tokens + 1
            if spent + cost > allowance:
                # A shorter line further down may still fit; stop looking after a few.
                misses += 1
                if misses >= EPISODE_MISSES_MAX:
                    break
                continue
            chosen_lines.append((line, rendered))
            spent += cost
        if chosen_lines:
            chosen_lines.sort(key=lambda pair: (pair[0].occurred_at, pair[0].id))
            episodes_chosen = [line for line, _ in chosen_lines]
            episode_section = [EPISODES_HEADER, *[text for _, text in chosen_lines]]
            remaining -= spent
        elif not parts.has_history and _cost(EPISODES_HEADER) + _cost(NO_EPISODES_LINE) <= (
            remaining - reserve
        ):
            episode_section = [EPISODES_HEADER, NO_EPISODES_LINE]
            remaining -= _cost(EPISODES_HEADER) + _cost(NO_EPISODES_LINE)

    # Map lines by centrality with whatever is left.
    map_section, spent = _section(
        map_header, map_rendered, None if map_rendered else NO_MAP_LINE, remaining
    )
    if not map_rendered and parts.map_count == 0:
        map_section = []  # no map at all: say nothing rather than a header about nothing
        spent = 0
    remaining -= spent

    if parts.mode == "history":
        body = belief_section + episode_section + map_section
    else:
        body = map_section + belief_section + episode_section
    text = "\n".join(head + body + tail)
    tokens = count_tokens(text)
    if tokens > budget:  # a bug, never a silent overrun
        raise AssertionError(f"block of {tokens} tokens exceeds its budget of {budget}")
    return FormattedBlock(
        text=text,
        tokens=tokens,
        episodes=episodes_chosen,
        beliefs_shown=beliefs_shown,
        map_lines_shown=max(0, len(map_section) - 1),
    )


def _episode_order(parts: BlockParts) -> list[EpisodeLine]:
    """Best first; in history mode the kind groups take turns (conversation included)."""
    if parts.mode != "history" or not parts.episode_groups:
        return list(parts.episodes)
    order: list[EpisodeLine] = []
    groups = [list(g) for g in parts.episode_groups if g]
    index = 0
    while any(groups):
        group = groups[index % len(groups)]
        if group:
            order.append(group.pop(0))
        index += 1
    return order
