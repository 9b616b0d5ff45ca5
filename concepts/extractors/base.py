"""The extractor interface (R-2.1): pages of one file in, a bounded list of concepts out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

# At most this many concepts are taken from one file (R-2.1 "a bounded list"); an
# extractor that finds more keeps the first ones in the order the file presents them.
# A textbook section defines up to ~100 key terms (the anatomy devset's largest: 97).
MAX_CONCEPTS_PER_FILE = 150
# A longer file (a whole book uploaded as one PDF) may give one concept per this many
# characters of text: the anatomy devset's 54 sections hold 848 key terms in ~790,000
# characters (one per ~930), so its whole text in one file keeps them all.
CHARS_PER_CONCEPT = 500


def concept_bound(pages: list[str]) -> int:
    """How many concepts one file may give: MAX_CONCEPTS_PER_FILE, or more for a long one."""
    return max(MAX_CONCEPTS_PER_FILE, sum(len(page) for page in pages) // CHARS_PER_CONCEPT)


SUMMARY_MAX_CHARS = 300
DEFINITION_MAX_CHARS = 1000


@dataclass
class ExtractedConcept:
    name: str
    summary: str = ""
    definition: str = ""
    # Names from the same file's list that this concept builds on.
    builds_on: list[str] = field(default_factory=list)
    # Names it relies on that the file never explains.
    assumes: list[str] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)
    # Whether `definition` defines the concept ("**Osmosis** is ...") or only uses its
    # name in passing: only a defining text gives builds-on edges.
    defines: bool = True
    # Other names the file gives it: the abbreviation it defines ("IQR") or spells out.
    aliases: list[str] = field(default_factory=list)


@dataclass
class Extraction:
    extractor: str
    concepts: list[ExtractedConcept]
    rejected: list[str] = field(default_factory=list)


class ExtractionFailed(Exception):
    """The extractor could not produce a valid result; the message is the file's reason."""


class Extractor(Protocol):
    @property
    def name(self) -> str: ...

    def extract(self, *, pages: list[str], language: str, file_name: str) -> Extraction: ...
