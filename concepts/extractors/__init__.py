"""Extractors behind one interface; `settings.TUTORBRAIN_EXTRACTOR` picks one."""

from __future__ import annotations

from django.conf import settings

from concepts.extractors.base import (
    MAX_CONCEPTS_PER_FILE,
    ExtractedConcept,
    Extraction,
    ExtractionFailed,
    Extractor,
    concept_bound,
)

__all__ = [
    "MAX_CONCEPTS_PER_FILE",
    "ExtractedConcept",
    "Extraction",
    "ExtractionFailed",
    "Extractor",
    "concept_bound",
    "extractor_get",
]


def extractor_get() -> Extractor:
    if settings.TUTORBRAIN_EXTRACTOR == "llm":
        from concepts.extractors.llm import LlmExtractor

        return LlmExtractor.from_settings()
    from concepts.extractors.offline import OfflineExtractor

    return OfflineExtractor()
