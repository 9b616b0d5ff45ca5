"""The LLM extractor: any OpenAI-compatible chat endpoint with JSON-schema output (R-2.1).

Works with OpenAI, vLLM, Ollama and llama.cpp servers (`response_format` of type
`json_schema`). The answer is validated here whatever the server promised: a malformed
answer is asked for once more, then the file fails with a clear reason and nothing is
written. The endpoint being down, slow (TUTORBRAIN_LLM_TIMEOUT_SECONDS) or answering an
HTTP error fails the file the same way.

What it can do that the offline extractor cannot: concepts a text explains without a
definition sentence, prerequisites stated in prose, better summaries. What it cannot:
be free, offline, or deterministic; its names still go through the validator.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from concepts.extractors.base import (
    DEFINITION_MAX_CHARS,
    MAX_CONCEPTS_PER_FILE,
    SUMMARY_MAX_CHARS,
    ExtractedConcept,
    Extraction,
    ExtractionFailed,
)
from concepts.naming import concept_key

# How much of a file is sent: about 30k tokens of text, enough for a long chapter.
INPUT_MAX_CHARS = 120_000
# One retry on malformed output, then a clear failure.
ATTEMPTS = 2
NAME_MAX_CHARS = 200

SYSTEM_PROMPT = """You read one file of a course and list the concepts it explains.
Return JSON only, matching the schema. For each concept give:
- name: the concept's short name as the file writes it (1-5 words, never a sentence, never
  section furniture such as Introduction, Summary, Exercises, Chapter 3);
- summary: one sentence saying what it is;
- definition: the file's short definition (at most three sentences);
- builds_on: names of other concepts in YOUR list that this one builds on;
- assumes: prerequisites the file relies on but never explains;
- pages: the page numbers (as marked) where the file explains it.
List at most {max_concepts} concepts, the most important first."""


def response_schema(max_concepts: int) -> dict[str, Any]:
    text_list = {"type": "array", "items": {"type": "string"}}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["concepts"],
        "properties": {
            "concepts": {
                "type": "array",
                "maxItems": max_concepts,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["name", "summary", "definition", "builds_on", "assumes", "pages"],
                    "properties": {
                        "name": {"type": "string"},
                        "summary": {"type": "string"},
                        "definition": {"type": "string"},
                        "builds_on": text_list,
                        "assumes": text_list,
                        "pages": {"type": "array", "items": {"type": "integer"}},
                    },
                },
            }
        },
    }


class MalformedOutput(ValueError):
    pass


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise MalformedOutput(f"{where} must be a list of strings")
    return [v.strip() for v in value if v.strip()]


def parse_output(
    content: str | None, *, page_count: int, max_concepts: int
) -> list[ExtractedConcept]:
    """Validate the model's answer; MalformedOutput says what is wrong."""
    if not content or not content.strip():
        raise MalformedOutput("empty answer")
    text = content.strip()
    if text.startswith("```"):
        # Some servers wrap JSON in a Markdown fence even in JSON mode.
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedOutput(f"not JSON ({exc.msg} at position {exc.pos})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("concepts"), list):
        raise MalformedOutput('the answer must be an object with a "concepts" list')
    out: list[ExtractedConcept] = []
    for i, item in enumerate(data["concepts"][:max_concepts]):
        where = f"concepts[{i}]"
        if not isinstance(item, dict):
            raise MalformedOutput(f"{where} must be an object")
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise MalformedOutput(f"{where}.name must be a non-empty string")
        for field_name in ("summary", "definition"):
            if not isinstance(item.get(field_name, ""), str):
                raise MalformedOutput(f"{where}.{field_name} must be a string")
        pages = item.get("pages", [])
        if not isinstance(pages, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) for p in pages
        ):
            raise MalformedOutput(f"{where}.pages must be a list of integers")
        out.append(
            ExtractedConcept(
                name=name.strip()[:NAME_MAX_CHARS],
                summary=item.get("summary", "").strip()[:SUMMARY_MAX_CHARS],
                definition=item.get("definition", "").strip()[:DEFINITION_MAX_CHARS],
                builds_on=_strings(item.get("builds_on", []), f"{where}.builds_on"),
                assumes=_strings(item.get("assumes", []), f"{where}.assumes"),
                pages=sorted({p for p in pages if 1 <= p <= max(page_count, 1)}),
            )
        )
    # builds_on must come from the file's own list; anything else is an assumption.
    own = {concept_key(c.name) for c in out}
    for concept in out:
        outside = [n for n in concept.builds_on if concept_key(n) not in own]
        concept.builds_on = [n for n in concept.builds_on if concept_key(n) in own]
        concept.assumes = list(dict.fromkeys([*concept.assumes, *outside]))
    return out


def pages_prompt(pages: list[str], limit: int = INPUT_MAX_CHARS) -> str:
    parts: list[str] = []
    used = 0
    for number, page in enumerate(pages, start=1):
        chunk = f"=== page {number} ===\n{page.strip()}\n"
        if used + len(chunk) > limit:
            parts.append(f"=== (the file continues; cut at {limit} characters) ===")
            break
        parts.append(chunk)
        used += len(chunk)
    return "\n".join(parts)


@dataclass
class LlmExtractor:
    base_url: str
    model: str
    api_key: str
    timeout: float
    max_concepts: int = MAX_CONCEPTS_PER_FILE

    @property
    def name(self) -> str:
        return f"llm:{self.model}"

    @classmethod
    def from_settings(cls) -> LlmExtractor:
        if not (settings.TUTORBRAIN_LLM_BASE_URL and settings.TUTORBRAIN_LLM_MODEL):
            raise ExtractionFailed(
                "TUTORBRAIN_EXTRACTOR=llm needs TUTORBRAIN_LLM_BASE_URL and TUTORBRAIN_LLM_MODEL"
            )
        return cls(
            base_url=settings.TUTORBRAIN_LLM_BASE_URL,
            model=settings.TUTORBRAIN_LLM_MODEL,
            api_key=settings.TUTORBRAIN_LLM_API_KEY,
            timeout=settings.TUTORBRAIN_LLM_TIMEOUT_SECONDS,
        )

    def _client(self):
        from openai import OpenAI

        # Retries are ours (one, on malformed output); the client must not add more.
        return OpenAI(
            base_url=self.base_url,
            api_key=self.api_key or "none",
            timeout=self.timeout,
            max_retries=0,
        )

    def extract(self, *, pages: list[str], language: str = "", file_name: str = "") -> Extraction:
        import openai

        client = self._client()
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT.format(max_concepts=self.max_concepts)},
            {
                "role": "user",
                "content": f"File: {file_name or 'unnamed'} (language: {language or 'unknown'})\n\n"
                + pages_prompt(pages),
            },
        ]
        problem = ""
        for _ in range(ATTEMPTS):
            try:
                response = client.chat.completions.create(
                    model=self.model,
                    messages=messages,
                    temperature=0,
                    response_format={
                        "type": "json_schema",
                        "json_schema": {
                            "name": "concept_list",
                            "strict": True,
                            "schema": response_schema(self.max_concepts),
                        },
                    },
                )
            except openai.APITimeoutError as exc:
                raise ExtractionFailed(
                    f"the extractor endpoint did not answer within {self.timeout:g} s"
                ) from exc
            except openai.APIConnectionError as exc:
                raise ExtractionFailed(
                    f"the extractor endpoint {self.base_url} cannot be reached: {exc}"
                ) from exc
            except openai.APIStatusError as exc:
                raise ExtractionFailed(
                    f"the extractor endpoint answered HTTP {exc.status_code}: {exc.message}"
                ) from exc
            try:
                content = response.choices[0].message.content if response.choices else None
                concepts = parse_output(
                    content, page_count=len(pages), max_concepts=self.max_concepts
                )
            except MalformedOutput as exc:
                problem = str(exc)
                continue
            return Extraction(extractor=self.name, concepts=concepts)
        raise ExtractionFailed(
            f"the extractor returned malformed output {ATTEMPTS} times (last: {problem}); "
            "nothing was written"
        )
