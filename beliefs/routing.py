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
5. failing that, the topic phrase's leading words, up to its first function word, if
   they are a concept's name ("osmosis in plant cells" -> "osmosis"). Never a name found
   further in: on a real map "separation of powers" would become a belief about "Power"
   and "cell division" one about "Cell".

Cue words are data in `tutorbrain/language/data/<code>.py`; this module holds no list.

Name matching is the concept map's own (concepts.naming: `concept_key`, and
`find_keys_in` which `concept_find_named_in` uses), applied to the subject's keys and
aliases loaded once per derivation: a re-derivation of a thousand checks routes in
memory instead of sending two queries per check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from concepts.models import Concept
from concepts.naming import find_keys_in
from concepts.selectors import concept_key
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


class ConceptRouter:
    """Routes the checks of one subject against its map as it is now (R-4.4).

    Same matching as `concept_by_name` (a concept's key, or a merged name's key) and
    `concept_find_named_in` (whole-word names in a text, longest first), with the keys
    read in one query. A concept's own key wins over another concept's alias.
    """

    def __init__(self, subject: Subject):
        self.subject = subject
        rows = list(
            Concept.objects.filter(subject=subject)
            .order_by("pk")
            .values_list("pk", "key", "aliases")
        )
        keys: dict[str, int] = {}
        for pk, key, _ in rows:
            if key:
                keys.setdefault(key, pk)
        for pk, _, aliases in rows:
            for alias in aliases or ():
                if alias:
                    keys.setdefault(alias, pk)
        self._keys = keys
        self._concepts: dict[int, Concept] = {}
        # A history repeats its topics: stemming a name (concept_key) costs ~0.1 ms and
        # re-deriving 1,000 checks routed each one afresh. Routing is a function of
        # (topic, assessment) for one map, so each distinct pair is routed once.
        self._key_of: dict[str, str] = {}
        self._routed: dict[tuple[str, str], Routing] = {}

    def _concept(self, pk: int | None) -> Concept | None:
        if pk is None:
            return None
        if pk not in self._concepts:
            self._concepts[pk] = Concept.objects.get(pk=pk)
        return self._concepts[pk]

    def by_name(self, name: str) -> Concept | None:
        key = self._key_of.get(name)
        if key is None:
            key = self._key_of[name] = concept_key(name)
        return self._concept(self._keys.get(key)) if key else None

    def named_in(self, text: str) -> Concept | None:
        if not text or not text.strip():
            return None
        found = find_keys_in(text, self._keys)
        return self._concept(found[0][1]) if found else None

    def route(self, *, topic: str, assessment: str = "") -> Routing:
        cache_key = (topic or "", assessment or "")
        routed = self._routed.get(cache_key)
        if routed is None:
            routed = self._routed[cache_key] = self._route(topic=topic, assessment=assessment)
        return routed

    def _route(self, *, topic: str, assessment: str) -> Routing:
        topic = (topic or "").strip()
        if topic:
            concept = self.by_name(topic)
            if concept is not None:
                return Routing(concept=concept, route=Route.NAME, topic_used=topic)
            unframed = strip_frame(topic)
            if unframed:
                concept = self.by_name(unframed)
                if concept is not None:
                    return Routing(concept=concept, route=Route.FRAME, topic_used=unframed)
                topic = unframed
            if reads_like_utterance(topic):
                return Routing(concept=None, route=Route.UTTERANCE, topic_used=topic)
        concept = self.named_in(assessment)
        if concept is not None:
            return Routing(concept=concept, route=Route.ASSESSMENT, topic_used=topic)
        leading = leading_words(topic)
        concept = self.by_name(leading) if leading else None
        if concept is not None:
            return Routing(concept=concept, route=Route.TOPIC_PHRASE, topic_used=leading)
        return Routing(concept=None, route=Route.UNLINKED, topic_used=topic)


def leading_words(phrase: str) -> str:
    """The phrase's words as written from its start (past a leading article) to its
    first function word (any language's stop words): "the osmosis in plant cells" ->
    "osmosis", "estado de oxidación" -> "estado"."""
    articles = language.cue_set("leading_articles")
    stop = language.stop_words()
    start = end = None
    for match in _TOKEN.finditer(phrase):
        word = " ".join(language.words(match.group()))
        if start is None:
            if word not in articles:
                start, end = match.start(), match.end()
        elif word in stop:
            break
        else:
            end = match.end()
    return "" if start is None else phrase[start:end]


def route_check(*, subject: Subject, topic: str, assessment: str = "") -> Routing:
    """Route one check's topic to a concept of `subject`'s map, or say why it cannot be."""
    return ConceptRouter(subject).route(topic=topic, assessment=assessment)
