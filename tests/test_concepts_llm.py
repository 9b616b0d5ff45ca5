"""The LLM extractor against a small local HTTP server speaking the OpenAI chat protocol:
good JSON, malformed JSON (one retry, then failure), timeout, endpoint down."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from concepts.extractors.llm import LlmExtractor
from concepts.models import Concept, FileReading
from concepts.services import file_read, file_upload

GOOD = {
    "concepts": [
        {
            "name": "Osmosis",
            "summary": "The diffusion of water across a membrane.",
            "definition": "Osmosis is the diffusion of water across a selectively permeable membrane.",
            "builds_on": ["Diffusion"],
            "assumes": ["Semipermeable membrane"],
            "pages": [1],
        },
        {
            "name": "Diffusion",
            "summary": "Net movement from high to low concentration.",
            "definition": "Diffusion is the net movement of particles down a gradient.",
            "builds_on": [],
            "assumes": [],
            "pages": [1, 7],
        },
        {
            "name": "Introduction",
            "summary": "Furniture the validator turns away.",
            "definition": "",
            "builds_on": [],
            "assumes": [],
            "pages": [1],
        },
    ]
}


class FakeOpenAI:
    """Answers /v1/chat/completions from a script: "good", "malformed" or "slow"."""

    def __init__(self, script: list[str], delay: float = 2.0):
        self.script = list(script)
        self.delay = delay
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                behaviour = fake.script.pop(0) if fake.script else "good"
                if behaviour == "slow":
                    time.sleep(fake.delay)
                content = json.dumps(GOOD) if behaviour != "malformed" else '{"concepts": [ {"name"'
                payload = json.dumps(
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "test"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                ).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (the timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def llm_settings(settings):
    settings.TUTORBRAIN_EXTRACTOR = "llm"
    settings.TUTORBRAIN_LLM_MODEL = "test-model"
    settings.TUTORBRAIN_LLM_API_KEY = "test-key"
    # Generous: a good answer on a loaded machine must not time out by luck; the
    # timeout test sets its own short one.
    settings.TUTORBRAIN_LLM_TIMEOUT_SECONDS = 30.0
    return settings


def _upload(pair):
    content = b"# Notes\n\nOsmosis is the diffusion of water.\n"
    return file_upload(pair=pair, name="notes.md", content=content, queue=False).file


def test_good_json_is_validated_and_merged_into_the_map(pair, llm_settings):
    with FakeOpenAI(["good"]) as server:
        llm_settings.TUTORBRAIN_LLM_BASE_URL = server.base_url
        reading = file_read(subject_file=_upload(pair))
    assert reading.state == FileReading.State.DONE, reading.reason
    assert reading.extractor == "llm:test-model"
    request = server.requests[0]
    assert request["model"] == "test-model"
    assert request["response_format"]["type"] == "json_schema"
    names = set(Concept.objects.filter(subject=pair.subject).values_list("name", flat=True))
    assert names == {"Osmosis", "Diffusion"}  # "Introduction" rejected by the validator
    assert "Introduction" in reading.rejected_names
    osmosis = Concept.objects.get(subject=pair.subject, name="Osmosis")
    assert list(osmosis.builds_on.values_list("prerequisite__name", flat=True)) == ["Diffusion"]
    assert osmosis.assumes == ["Semipermeable membrane"]
    # Page 7 does not exist in a one-page file: dropped.
    assert Concept.objects.get(name="Diffusion").sources.get().pages == [1]


def test_malformed_json_is_retried_once(pair, llm_settings):
    with FakeOpenAI(["malformed", "good"]) as server:
        llm_settings.TUTORBRAIN_LLM_BASE_URL = server.base_url
        reading = file_read(subject_file=_upload(pair))
    assert reading.state == FileReading.State.DONE
    assert len(server.requests) == 2


def test_malformed_json_twice_fails_the_file_and_leaves_the_map_unchanged(pair, llm_settings):
    with FakeOpenAI(["malformed", "malformed", "good"]) as server:
        llm_settings.TUTORBRAIN_LLM_BASE_URL = server.base_url
        reading = file_read(subject_file=_upload(pair))
    assert reading.state == FileReading.State.FAILED
    assert "malformed output 2 times" in reading.reason
    assert len(server.requests) == 2
    assert not Concept.objects.filter(subject=pair.subject).exists()


def test_a_timeout_fails_the_file_with_the_reason_and_leaves_the_map_unchanged(pair, llm_settings):
    llm_settings.TUTORBRAIN_LLM_TIMEOUT_SECONDS = 0.5
    with FakeOpenAI(["slow"], delay=2.0) as server:
        llm_settings.TUTORBRAIN_LLM_BASE_URL = server.base_url
        reading = file_read(subject_file=_upload(pair))
    assert reading.state == FileReading.State.FAILED
    assert "did not answer within 0.5 s" in reading.reason
    assert not Concept.objects.filter(subject=pair.subject).exists()


def test_an_endpoint_that_is_down_fails_the_file_with_the_reason(pair, llm_settings):
    with FakeOpenAI([]) as server:
        down = server.base_url
    llm_settings.TUTORBRAIN_LLM_BASE_URL = down
    reading = file_read(subject_file=_upload(pair))
    assert reading.state == FileReading.State.FAILED
    assert "cannot be reached" in reading.reason
    assert not Concept.objects.filter(subject=pair.subject).exists()


def test_the_extractor_without_an_endpoint_setting_fails_clearly(pair, llm_settings):
    llm_settings.TUTORBRAIN_LLM_BASE_URL = ""
    reading = file_read(subject_file=_upload(pair))
    assert reading.state == FileReading.State.FAILED
    assert "TUTORBRAIN_LLM_BASE_URL" in reading.reason


def test_the_concept_count_is_bounded():
    extractor = LlmExtractor(base_url="http://x", model="m", api_key="", timeout=1, max_concepts=1)
    from concepts.extractors.llm import parse_output

    assert (
        len(parse_output(json.dumps(GOOD), page_count=1, max_concepts=extractor.max_concepts)) == 1
    )


def test_answers_of_the_wrong_shape_are_malformed():
    from concepts.extractors.llm import MalformedOutput, parse_output

    for content in [
        "",
        "[]",
        '{"concepts": "Osmosis"}',
        '{"concepts": [{"name": ""}]}',
        '{"concepts": [{"name": "Osmosis", "pages": ["one"]}]}',
        '{"concepts": [{"name": "Osmosis", "builds_on": [1]}]}',
    ]:
        with pytest.raises(MalformedOutput):
            parse_output(content, page_count=3, max_concepts=10)


def test_builds_on_outside_the_files_own_list_becomes_an_assumption():
    from concepts.extractors.llm import parse_output

    content = json.dumps(
        {"concepts": [{"name": "Osmosis", "summary": "", "definition": "",
                       "builds_on": ["Diffusion"], "assumes": [], "pages": [2]}]}
    )  # fmt: skip
    (osmosis,) = parse_output(content, page_count=3, max_concepts=10)
    assert osmosis.builds_on == [] and osmosis.assumes == ["Diffusion"]
    assert osmosis.pages == [2]
