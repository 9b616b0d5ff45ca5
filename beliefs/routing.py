"""Topic routing of a check to a concept of the map (R-4.4).

In order, exact names only (the concept map's own key decides what "the same name" is):

1. the topic as sent is a concept's name ("Osmosis");
2. the topic without a frame the chat service put around it ("Check on cytoplasm",
   "Pregunta sobre la ósmosis"); the frames are language data (`check_topic_frames`);
3. if what is left reads like something the student said ("ask me the questions",
   "explique-moi encore"), the check stays in the log as evidence and is never routed:
   a belief about "ask me the questions" would be invented;
4. otherwise the topic is a phrase, and the tutor's own assessment text usually names the
   concept: the longest concept name found in it (whole words) wins;
5. failing that, a concept name inside the topic phrase itself ("osmosis in plant cells").

Cue words are data in `tutorbrain/language/data/<code>.py`; this module holds no list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from concepts.models import Concept
from concepts.selectors import concept_by_name, concept_find_named_in
from memory.models import Subject
from tutorbrain import language


class Route:
    NAME = "name"
    FRAME = "frame"
    ASSESSMENT = "assessment"
    TOPIC_PHRASE = "topic_phrase"
    UTTERANCE = "utterance"
    UNLINKED = "unlinked"


# An utterance-like topic has at least this many cue words per content word ("explain
# photosynthesis again": 2 cues, 1 content word). Equal counts already read as speech.
UTTERANCE_CUES_PER_CONTENT_WORD = 1.0
# Words of one letter are never content ("a", "o", "y", "à").
CONTENT_WORD_MIN_CHARS = 2

_TOKEN = re.compile(r"[\w'’\u0610-\u061a\u064b-\u065f\u0670\u0640-]+", re.UNICODE)
_EDGE_PUNCTUATION = " \t\n:;,.-–—|/\\\"'«»“”()[]"


@dataclass(frozen=True)
class Routing:
    concept: Concept | None
    route: str  # one of Route.*
    topic_used: str  # the text that was matched (the topic without its frame, ...)

    @property
    def linked(self) -> bool:
        return self.concept is not None


@cache
def _frames() -> tuple[tuple[str, ...], ...]:
    """Every language's check-topic frames as normalised word tuples, longest first."""
    frames: set[tuple[str, ...]] = set()
    for code in language.languages():
        for phrase in language.data(code).get("check_topic_frames", []):
            tokens = tuple(language.words(phrase))
            if tokens:
                frames.add(tokens)
    return tuple(sorted(frames, key=len, reverse=True))


@cache
def _cue_words() -> frozenset[str]:
    out: set[str] = set()
    for code in language.languages():
        for key in ("utterance_cues", "question_words"):
            for phrase in language.data(code).get(key, []):
                out.update(language.words(phrase))
    return frozenset(out)


def strip_frame(topic: str) -> str | None:
    """The topic without a leading frame, in its original spelling; None if it has none."""
    matches = list(_TOKEN.finditer(topic))
    normalised: list[tuple[str, int]] = []  # (normalised word, end offset in topic)
    for match in matches:
        for word in language.words(match.group(0)):
            normalised.append((word, match.end()))
    words = [w for w, _ in normalised]
    for frame in _frames():
        n = len(frame)
        if len(words) > n and tuple(words[:n]) == frame:
            rest = topic[normalised[n - 1][1] :].strip(_EDGE_PUNCTUATION)
            if rest:
                return rest
    return None


def reads_like_utterance(text: str) -> bool:
    """True when the text is mostly asking verbs, question words, pronouns and fillers."""
    words = language.words(text)
    if not words:
        return False
    cues = _cue_words()
    stops = language.stop_words()
    cue_count = sum(1 for w in words if w in cues)
    content = [
        w for w in words if w not in cues and w not in stops and len(w) >= CONTENT_WORD_MIN_CHARS
    ]
    return cue_count > 0 and cue_count >= UTTERANCE_CUES_PER_CONTENT_WORD * len(content)


def route_check(*, subject: Subject, topic: str, assessment: str = "") -> Routing:
    """Route one check's topic to a concept of `subject`'s map, or say why it cannot be."""
    topic = (topic or "").strip()
    if topic:
        concept = concept_by_name(subject=subject, name=topic)
        if concept is not None:
            return Routing(concept=concept, route=Route.NAME, topic_used=topic)
        unframed = strip_frame(topic)
        if unframed:
            concept = concept_by_name(subject=subject, name=unframed)
            if concept is not None:
                return Routing(concept=concept, route=Route.FRAME, topic_used=unframed)
            topic = unframed
        if reads_like_utterance(topic):
            return Routing(concept=None, route=Route.UTTERANCE, topic_used=topic)
    if assessment and assessment.strip():
        concept = concept_find_named_in(subject=subject, text=assessment)
        if concept is not None:
            return Routing(concept=concept, route=Route.ASSESSMENT, topic_used=topic)
    if topic:
        concept = concept_find_named_in(subject=subject, text=topic)
        if concept is not None:
            return Routing(concept=concept, route=Route.TOPIC_PHRASE, topic_used=topic)
    return Routing(concept=None, route=Route.UNLINKED, topic_used=topic)
