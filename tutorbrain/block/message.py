"""Reading the student's message without a model: history questions, topic words.

Every cue list is data in `tutorbrain.language.data.<code>` (DESIGN §4); this module
only applies them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from tutorbrain import language
from tutorbrain.block.timewindow import time_words

# The full-text pool ORs at most this many distinctive words of the message.
MAX_QUERY_TERMS = 12


@dataclass(frozen=True)
class MessageReading:
    history: bool  # the student asks about their own record
    terms: tuple[str, ...]  # topic terms (stems) for the full-text pool
    language: str = "en"  # the language the message was read in
    latest: bool = False  # "last time": the most recent matching memory is wanted

    @property
    def has_topic(self) -> bool:
        return bool(self.terms)


@cache
def _non_topic_words(code: str) -> frozenset[str]:
    """Words of language `code` that say how the student asks, never what about (when:
    `time_words`)."""
    if code not in language.languages():
        return frozenset()
    out: set[str] = set()
    for key in ("utterance_cues", "question_words", "month_context_words"):
        for phrase in language.data(code).get(key, []):
            out.update(language.normalized_phrase(phrase).split(" "))
    return frozenset(out)


def is_history_question(message: str) -> bool:
    return bool(message) and language.find_cue(message, "history_cues") is not None


def asks_about_mistakes(message: str) -> bool:
    """ "What did I get wrong", "¿en qué me equivoqué?": the misses should lead."""
    return bool(message) and language.find_cue(message, "mistake_cues") is not None


def read_message(message: str, *, fallback_language: str = "en") -> MessageReading:
    """The history flag and the topic terms of a message, read in its own language.

    History cue phrases and time phrases are cut out before the topic words are taken:
    in "What did I get wrong so far?" nothing is left (no topic: the record itself is
    the subject), in "¿Qué vimos en julio sobre la ósmosis?" only "osmosis" is. Only
    the words read as time in the message's own language are cut: "Mai" and "Marco"
    stay topic words of an English message, "Janeiro" of "Rio de Janeiro". The terms
    are Snowball stems of the message's language (`language.detect`; `fallback_language`
    when it is unclear), that language's function words removed
    (`language.index_terms`), as the episodes' search documents hold them.
    """
    if fallback_language not in language.languages():
        fallback_language = "en"
    if not message or not message.strip():
        return MessageReading(history=False, terms=(), language=fallback_language)
    code = language.detect(message, fallback=fallback_language)
    text = language.normalized_phrase(message)
    # "Last time" is read before history cues are cut (some hold it: "la última vez").
    latest_pattern = language.cue_pattern("latest_cues")
    latest = bool(latest_pattern and latest_pattern.search(text))
    history = False
    pattern = language.cue_pattern("history_cues")
    if pattern is not None and pattern.search(text):
        history = True
        text = pattern.sub(" ", text)
    if latest_pattern is not None:
        text = latest_pattern.sub(" ", text)
    skip = _non_topic_words(code) | time_words(message, fallback_language=fallback_language)
    terms = language.index_terms(text, code, skip=skip)
    return MessageReading(
        history=history,
        terms=tuple(dict.fromkeys(terms))[:MAX_QUERY_TERMS],
        language=code,
        latest=latest,
    )


def is_narration(text: str) -> bool:
    """An answer that retells earlier sessions ("in July we saw …"), by narration cues."""
    return bool(text) and language.find_cue(text, "narration_cues") is not None
