"""Offline token counting for the block budget.

No tokenizer file may be downloaded at run time, and the chat service's model is not
known here, so the block counts tokens with a deterministic estimate that leans high
against common BPE tokenizers (GPT cl100k/o200k, Llama, Mistral), so that a block
that fits by this count fits by theirs:

- a run of ASCII letters costs ceil(len / 4) tokens (BPE merges ~4 English characters
  per token; short words are one token);
- a run of non-ASCII letters (accents, Arabic, ...) costs ceil(len / 2): these
  scripts split into shorter pieces;
- every digit, punctuation mark or symbol costs 1 (BPE groups digits by up to three
  and often merges punctuation with spaces, so this over-counts);
- a newline costs 1; other whitespace is free (BPE attaches it to the next word).

The block never exceeds the caller's budget *by this count*: the builder measures each
line with `count_tokens` and stops before the sum would pass the budget.
"""

from __future__ import annotations

import re
from functools import lru_cache

ASCII_CHARS_PER_TOKEN = 4
OTHER_CHARS_PER_TOKEN = 2

_ASCII_RUNS = re.compile(r"[A-Za-z]+")
_OTHER_RUNS = re.compile(r"[^\W\d_A-Za-z]+")
_SINGLES = re.compile(r"[\d_]|[^\w\s]|\n")


@lru_cache(maxsize=8192)
def count_tokens(text: str) -> int:
    # Three C-level scans instead of a Python loop over pieces: this runs for every
    # candidate line of every block. Cached: a pair's episodes come back turn after turn
    # as the same lines (~4 % of a server's Python time went here, uncached).
    return (
        sum(
            (len(run) + ASCII_CHARS_PER_TOKEN - 1) // ASCII_CHARS_PER_TOKEN
            for run in _ASCII_RUNS.findall(text)
        )
        + sum(
            (len(run) + OTHER_CHARS_PER_TOKEN - 1) // OTHER_CHARS_PER_TOKEN
            for run in _OTHER_RUNS.findall(text)
        )
        + len(_SINGLES.findall(text))
    )


def truncate_to_tokens(text: str, limit: int, *, ellipsis: str = "…") -> str:
    """The longest prefix of `text` (cut at a word boundary, plus an ellipsis) whose
    count is at most `limit`; "" when not even the ellipsis fits."""
    if count_tokens(text) <= limit:
        return text
    words = text.split(" ")
    lo, hi = 0, len(words)
    # Binary search on the number of words kept: counts are monotone in the prefix.
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(" ".join(words[:mid]) + ellipsis) <= limit:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:
        return ""
    return " ".join(words[:lo]) + ellipsis
