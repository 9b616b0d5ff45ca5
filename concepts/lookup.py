"""Finding a file's concepts in the map by index, not by comparing with the whole map.

Reading a file used to load every concept of the subject (with its vector) and compare
each new name, and each definition, with all of them in Python: the cost grew with the
map. Here the candidates are looked up instead, and the merge rules (`concepts.merge`,
`concepts.naming`) are then applied to those candidates only:

- names that may be the same by key: every key that differs from the name's key only by
  number endings (`key_variants`), looked up on the (subject, key) unique index and the
  GIN index on aliases;
- names that may be the same by meaning: the nearest name vectors among the subject's
  concepts named in another language than the file's (an exact scan of those vectors,
  read once per file), only those within the calibrated distance. Within one language
  only keys merge (`services._candidates`), so a one-language book scans nothing;
- concepts a definition names: every run of words of the text that is one of the
  subject's keys or aliases, with its last word's number ending undone
  (`names_in_text`: the runs of `text_key_candidates` that are names, found by walking
  the text against the names and their leading words, read once per file);
- older definitions that name a new concept: `Concept.definition_tokens` (the set of
  a definition's tokens) must contain all the new name's tokens, its last in any number
  (the rows holding one of those last words found by a hashed probe per token).

The variant sets are deliberately generous (a superset costs a few index probes; a
missing variant would miss a merge). `tests/test_concepts_lookup.py` checks them against
`naming.same_but_number` and `naming.find_keys_in` on a word list: a new number rule
there must be mirrored here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from functools import lru_cache

from concepts.naming import tokens

# Singular <-> plural endings of the last word, both ways (English, Spanish, Portuguese,
# French, Latin and Greek loans). Accents are already folded by the key.
_ENDINGS = (
    ("", "s"),
    ("", "es"),
    ("y", "ies"),
    ("us", "i"),
    ("um", "a"),
    ("on", "a"),
    ("is", "es"),
    ("ix", "ices"),
    ("ex", "ices"),
    ("a", "ae"),
    ("f", "ves"),
    ("fe", "ves"),
    ("z", "ces"),
    ("al", "ais"),
    ("al", "aux"),
    ("m", "ns"),
    ("ao", "oes"),
    ("ao", "aes"),
    ("", "x"),
    ("man", "men"),
)
# More variants than this for one key (a long name of plural-looking words): only its
# first and last words vary.
KEY_VARIANTS_MAX = 512


@lru_cache(maxsize=65536)
def word_variants(word: str) -> frozenset[str]:
    """The word and every form that differs from it by a number ending, either way.

    Cached: a file's definitions ask for the same few hundred words tens of thousands
    of times (`text_key_candidates`)."""
    out = {word}
    for singular, plural in _ENDINGS:
        if word.endswith(singular):
            out.add(word[: len(word) - len(singular)] + plural)
        if word.endswith(plural) and len(word) > len(plural):
            out.add(word[: len(word) - len(plural)] + singular)
    return frozenset(w for w in out if w)


def key_variants(key: str) -> set[str]:
    """Every key that may be the same concept as `key` by number endings: each word in
    any number, as `naming.same_but_number` compares word by word ("sistemas nerviosos
    centrales"). A name of many words varies its first and last only, to bound the set."""
    if not key:
        return set()
    variants = [word_variants(word) for word in key.split(" ")]
    if math.prod(len(v) for v in variants) <= KEY_VARIANTS_MAX:
        return {" ".join(words) for words in itertools.product(*variants)}
    middle = " ".join(key.split(" ")[1:-1])
    return {
        " ".join(w for w in (first, middle, last) if w)
        for first in variants[0]
        for last in variants[-1]
    }


def text_key_candidates(text: str, max_tokens: int) -> set[str]:
    """Keys that a concept named in `text` could have: each run of up to `max_tokens`
    tokens, with its last word's number ending undone either way. The definition of
    what `names_in_text` finds (the tests hold the two equal); the reading uses that."""
    words = tokens(text)
    variants = [word_variants(word) for word in words]
    out: set[str] = set()
    for start in range(len(words)):
        head = ""  # the run's words before its last, grown one word at a time
        for end in range(start, min(start + max_tokens, len(words))):
            out.update(f"{head} {last}" if head else last for last in variants[end])
            head = f"{head} {words[end]}" if head else words[end]
    return out


class NameIndex:
    """A subject's keys and aliases, with every leading run of their words ("cell" and
    "cell membrane" of "cell membrane protein"): a text's word run is extended only
    while it can still become a name."""

    def __init__(self, names: Iterable[str]):
        self.names = frozenset(names)
        heads: set[str] = set()
        for name in self.names:
            words = name.split(" ")
            heads.update(" ".join(words[:end]) for end in range(1, len(words)))
        self.heads = frozenset(heads)


def names_in_text(text: str, index: NameIndex) -> set[str]:
    """The names of `index` that `text` holds: exactly the names among
    `text_key_candidates(text, longest name)`, without making every run of the text.

    `text_key_candidates` of a definition are tens of thousands of strings at a
    thousand-concept map (runs as long as its longest name), all sent to the database
    to find the few hundred that are names; this walks each start of the text only as
    far as the run is the beginning of some name.
    """
    words = tokens(text)
    out: set[str] = set()
    for start in range(len(words)):
        head = ""  # the run's words before its last, grown one word at a time
        for end in range(start, len(words)):
            for last in word_variants(words[end]):
                run = f"{head} {last}" if head else last
                if run in index.names:
                    out.add(run)
            head = f"{head} {words[end]}" if head else words[end]
            if head not in index.heads:
                break
    return out


def definition_tokens(definition: str) -> list[str]:
    """The distinct tokens of a definition, for the GIN lookup of "which definitions
    name this concept" (stored in `Concept.definition_tokens`)."""
    return sorted(set(tokens(definition or "")))
