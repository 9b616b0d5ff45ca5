"""Which student language a message is written in, offline and without a model.

Chat messages are short ("¿Qué vimos en julio?", "qu'avons-nous vu ?"), far too short for
character n-gram models trained on paragraphs; what does work on them is what a person
reads: function words, a few characters only one language uses (ñ ¿ ã …), French
elisions and English contractions, and month and relative-date words. All of it is data:
each language module's `detection_*` keys plus its CLDR month names and relative-date
words. A language with its own script (Arabic) is recognised by the script alone.

Scoring: every piece of evidence is shared equally among the languages that list it
("que" is Spanish, Portuguese and French: a third each), so only what tells the
languages apart decides. When nothing is clear — no evidence, too little, or two
languages too close — the caller's fallback (the student's language) is returned.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from functools import cache

from tutorbrain import language

# The best language needs this much evidence ("julio" alone: 1.0; "No": a third) ...
MIN_SCORE = 1.0
# ... and this lead over the runner-up; the fallback wins any contest it is close in.
MIN_LEAD = 0.5

_TOKEN = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*", re.UNICODE)


@cache
def _evidence() -> dict[str, dict[str, dict[str, float]]]:
    """kind -> item -> {language: weight}, each item's weight split among its languages."""
    owners: dict[str, dict[str, set[str]]] = {
        k: defaultdict(set) for k in ("word", "char", "elision", "contraction")
    }
    for code in language.languages():
        data = language.data(code)
        words: set[str] = set()
        for phrase in data.get("detection_words", []):
            words.update(language.normalize(phrase).replace("'", " ").split())
        words.update(language.month_names(code))
        for phrase, _, _ in language.relative_phrases(code):
            words.update(phrase.replace("'", " ").split())
        for word in words:
            owners["word"][word].add(code)
        for char in data.get("detection_characters", ""):
            owners["char"][char.casefold()].add(code)
        for item in data.get("detection_elisions", []):
            owners["elision"][language.normalize(item)].add(code)
        for item in data.get("detection_contractions", []):
            owners["contraction"][language.normalize(item)].add(code)
    return {
        kind: {item: {c: 1.0 / len(codes) for c in codes} for item, codes in items.items()}
        for kind, items in owners.items()
    }


@cache
def _scripts() -> list[tuple[str, re.Pattern[str]]]:
    out = []
    for code in language.languages():
        ranges = language.data(code).get("detection_script_ranges", [])
        if ranges:
            klass = "".join(f"{lo}-{hi}" for lo, hi in ranges)
            out.append((code, re.compile(f"[{klass}]")))
    return out


def scores(text: str) -> dict[str, float]:
    """Evidence per Latin-script language (for tests and for explaining a decision)."""
    evidence = _evidence()
    total: dict[str, float] = defaultdict(float)
    lowered = text.casefold()
    for char in lowered:
        for code, weight in evidence["char"].get(char, {}).items():
            total[code] += weight
    for token in _TOKEN.findall(language.normalize(text)):
        parts = token.split("'")
        for part in parts:
            for code, weight in evidence["word"].get(part, {}).items():
                total[code] += weight
        if len(parts) > 1:
            for code, weight in evidence["elision"].get(parts[0], {}).items():
                total[code] += weight
            for code, weight in evidence["contraction"].get(parts[-1], {}).items():
                total[code] += weight
    return dict(total)


def detect(text: str, *, fallback: str) -> str:
    """The language (en/es/pt/fr/ar) `text` is written in, or `fallback` when unsure."""
    if not text or not text.strip():
        return fallback
    letters = [c for c in text if unicodedata.category(c).startswith("L")]
    for code, script in _scripts():
        own = sum(1 for c in letters if script.match(c))
        if own and own * 2 > len(letters):
            return code
    ranked = sorted(scores(text).items(), key=lambda kv: kv[1], reverse=True)
    if not ranked or ranked[0][1] < MIN_SCORE:
        return fallback
    best, best_score = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
    fallback_score = dict(ranked).get(fallback, 0.0)
    if best != fallback and best_score - fallback_score < MIN_LEAD:
        return fallback
    if best_score - runner_up < MIN_LEAD and best != fallback:
        return fallback
    return best
