"""The benchmark's optional end-to-end mode, against a tiny local server speaking the
OpenAI chat-completions protocol (no network, no model)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tutorbrain.evaluation.e2e import ChatEndpoint, e2e_markdown, e2e_run, grade_answer
from tutorbrain.management.commands.bench_memory import Command


class CopyingModel(BaseHTTPRequestHandler):
    """Answers with the memory part of its system message: a model that repeats its prompt."""

    requests: list[dict] = []

    def do_POST(self):  # noqa: N802 - the http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        CopyingModel.requests.append(body)
        system = body["messages"][0]["content"]
        reply = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": system.split("\n\n", 1)[-1]},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), CopyingModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    CopyingModel.requests = []
    try:
        yield ChatEndpoint(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="copy")
    finally:
        server.shutdown()
        server.server_close()


EMPTY_JULY = {
    "id": 1,
    "category": "empty_month",
    "message": "What did we see in July 2026?",
    "expected": {"year": 2026, "month": 7},
}
RECALL = {
    "id": 2,
    "category": "recall",
    "message": "What did we talk about Osmosis last time?",
    "expected": {"concept": "Osmosis", "episode_ids": [5, 6], "dates": ["15 Oct"]},
}


def test_each_question_is_asked_twice_and_graded_on_the_answer(endpoint):
    prompts = [
        (EMPTY_JULY, "full", "No record of work with this student in July 2026."),
        (EMPTY_JULY, "retrieval", "PASSAGES FROM THE STUDENT'S FILES:\n**Osmosis**: water moves."),
        (RECALL, "window", "- 15 Oct · you were asked: Can you explain Osmosis?"),
    ]
    result = e2e_run(endpoint=endpoint, prompts=prompts)
    assert len(CopyingModel.requests) == 2 * len(prompts)
    first = CopyingModel.requests[0]
    assert first["temperature"] == 0
    assert first["messages"][1] == {"role": "user", "content": EMPTY_JULY["message"]}
    assert result.passes[(1, "full")] == [True, True]
    assert result.passes[(1, "retrieval")] == [False, False]
    assert result.passes[(2, "window")] == [True, True]
    assert result.disagreements() == 0
    report = e2e_markdown(result, endpoint=endpoint, designs=["retrieval", "window", "full"])
    assert "Run 2:" in report and "0 of 3" in report


def test_answer_graders_compare_names_as_whole_words():
    assert grade_answer("wrong", "You struggled with ósmosis.", {"concept": "Osmosis"})
    assert not grade_answer("explain", "Mitochondria release energy.", {"concept": "Osmosis"})
    assert not grade_answer(
        "prerequisites", "Review Cytoplasm.", {"prerequisites": ["Cytoplasm", "Respiration"]}
    )


def test_without_an_endpoint_the_mode_is_skipped_and_says_so():
    options = {"chat_base_url": "", "chat_model": "", "chat_api_key": "", "designs": ["full"]}
    assert "skipped" in Command().end_to_end(None, options)
