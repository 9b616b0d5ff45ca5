"""End-to-end mode of the benchmark: the questions asked through a chat model (optional).

When an OpenAI-compatible chat endpoint is configured, every pre-registered question is
sent under every design — the design's prompt as the system message, the student's
message as the user message, temperature 0 — and the model's *answer* is graded with
string comparisons only, twice, so the run-to-run difference of the model is reported
beside the scores. Without an endpoint the mode is skipped, never imitated.

Answer graders (what a string comparison can say about free text, and no more):
- wrong: the answer names the concept the student got wrong;
- prerequisites: the answer names every prerequisite (the direction cannot be read from
  free text, which is why the block-level grader is the primary one);
- explain: the answer names the concept;
- active month: the answer names a concept the student worked on that month;
- empty month: the answer says "no record" (the system message asks the model to say so
  when its memory says so — the same instruction for every design);
- recall: the answer cites the exchange's date as the memory writes it ("15 Oct").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tutorbrain.language import normalized_phrase

SYSTEM_INSTRUCTIONS = (
    "You are a tutor. Below is what you have in your prompt about this student and this "
    "subject. Answer the student's message briefly, in their language, from it only. Name "
    "concepts by the names used below and cite earlier work by its date as written below. "
    "If the memory says there is no record of work in a period, say 'No record'."
)
RUNS = 2
MAX_ANSWER_TOKENS = 300


@dataclass(frozen=True)
class ChatEndpoint:
    base_url: str
    model: str
    api_key: str = ""
    timeout: float = 60.0


def _names_in(answer: str, name: str) -> bool:
    key = normalized_phrase(name)
    return (
        bool(key)
        and re.search(rf"(?:^| ){re.escape(key)}(?: |$)", normalized_phrase(answer)) is not None
    )


def grade_answer(category: str, answer: str, expected: dict[str, Any]) -> bool:
    """String comparisons on a model's answer (see the module docstring)."""
    if category in ("wrong", "explain"):
        return _names_in(answer, expected["concept"])
    if category == "prerequisites":
        return all(_names_in(answer, p) for p in expected["prerequisites"])
    if category == "active_month":
        return any(_names_in(answer, c) for c in expected.get("concepts", []))
    if category == "empty_month":
        return "no record" in normalized_phrase(answer)
    if category == "recall":
        return any(_names_in(answer, d) for d in expected.get("dates", []))
    raise ValueError(f"unknown category {category!r}")


def chat_answer(endpoint: ChatEndpoint, *, prompt: str, message: str) -> str:
    from openai import OpenAI

    client = OpenAI(
        base_url=endpoint.base_url, api_key=endpoint.api_key or "none", timeout=endpoint.timeout
    )
    response = client.chat.completions.create(
        model=endpoint.model,
        temperature=0,
        max_tokens=MAX_ANSWER_TOKENS,
        messages=[
            {"role": "system", "content": f"{SYSTEM_INSTRUCTIONS}\n\n{prompt}"},
            {"role": "user", "content": message},
        ],
    )
    return response.choices[0].message.content or ""


@dataclass
class E2EResult:
    # (question id, design) -> pass per run
    passes: dict[tuple[int, str], list[bool]]
    categories: dict[int, str]

    def table(self, run: int) -> dict[str, dict[str, tuple[int, int]]]:
        out: dict[str, dict[str, list[int]]] = {}
        for (qid, design), runs in self.passes.items():
            for key in (self.categories[qid], "overall"):
                cell = out.setdefault(key, {}).setdefault(design, [0, 0])
                cell[0] += runs[run]
                cell[1] += 1
        return {c: {d: (v[0], v[1]) for d, v in row.items()} for c, row in out.items()}

    def disagreements(self) -> int:
        return sum(len(set(runs)) > 1 for runs in self.passes.values())


def e2e_run(
    *,
    endpoint: ChatEndpoint,
    prompts: list[tuple[dict[str, Any], str, str]],  # (question, design, prompt text)
    runs: int = RUNS,
    progress: Callable[[int], None] | None = None,
) -> E2EResult:
    passes: dict[tuple[int, str], list[bool]] = {}
    categories: dict[int, str] = {}
    for _ in range(runs):
        for question, design, prompt in prompts:
            answer = chat_answer(endpoint, prompt=prompt, message=question["message"])
            ok = grade_answer(question["category"], answer, question["expected"])
            passes.setdefault((question["id"], design), []).append(ok)
            categories[question["id"]] = question["category"]
            if progress:
                progress(1)
    return E2EResult(passes=passes, categories=categories)


def e2e_markdown(result: E2EResult, *, endpoint: ChatEndpoint, designs: list[str]) -> str:
    from tutorbrain.evaluation.bench import CATEGORY_TITLES, DESIGN_TITLES

    lines = [
        f"End-to-end through `{endpoint.model}` at `{endpoint.base_url}` (answers graded by "
        f"string comparison, {RUNS} runs, temperature 0):",
        "",
    ]
    for run in range(RUNS):
        table = result.table(run)
        lines += [
            f"Run {run + 1}:",
            "",
            "| category | " + " | ".join(DESIGN_TITLES[d] for d in designs) + " |",
            "|---|" + "---|" * len(designs),
        ]
        for category, title in [*CATEGORY_TITLES.items(), ("overall", "**overall**")]:
            if category not in table:
                continue
            cells = []
            for d in designs:
                passed, total = table[category].get(d, (0, 0))
                cells.append(f"{100 * passed / total:.0f} % ({passed}/{total})" if total else "—")
            lines.append(f"| {title} | " + " | ".join(cells) + " |")
        lines.append("")
    lines.append(
        f"Run-to-run difference: {result.disagreements()} of {len(result.passes)} "
        "question × design gradings changed between the runs."
    )
    return "\n".join(lines)
