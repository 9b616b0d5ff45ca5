"""The OpenAPI contract, checked by schemathesis over the live schema (issue 14).

Every operation is called with generated requests (valid and invalid ones) through the
real WSGI application, database and API key: no 5xx, and every response's status code,
content type, headers and body are the ones the schema documents. The number of
examples per operation is bounded to keep the suite quick; the one-off run of the docs
(docs/hardening.md) sets SCHEMATHESIS_EXAMPLES=50.
"""

from __future__ import annotations

import json
import os
import re

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from memory.services import api_key_create
from tests.factories import OrganizationFactory

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "8"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.fixture
def api_schema(db):
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    from config.wsgi import application

    # As Django's test client does: a request must not close the test's connection
    # (its transaction holds the test's data).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def auth_header(db):
    _, raw = api_key_create(organization=OrganizationFactory(), name="contract")
    return {"Authorization": f"Api-Key {raw}"}


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_every_operation_answers_as_its_schema_documents(api_schema, auth_header, mode):
    # Each operation gets its own bounded Hypothesis run; every failure is collected so
    # one broken operation does not hide another.
    failures: list[str] = []
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 9
    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def call(case):
            case.call_and_validate(headers=auth_header, checks=CHECKS)

        try:
            call()
        except Unsatisfiable:
            pass  # no input of this operation can be made invalid (no parameters, no body)
        except Exception as exc:  # a schemathesis failure group, reported whole below
            failures.append(f"{operation.method.upper()} {operation.path}: {exc}")
    assert not failures, "\n\n".join(failures)


def _schema_document(client) -> dict:
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    return json.loads(response.content)


@pytest.mark.django_db
def test_no_two_components_share_a_name_and_the_block_is_not_the_health_answer(client):
    document = _schema_document(client)
    block = document["paths"]["/api/v1/memory-block/"]["post"]["responses"]["200"]
    ref = block["content"]["application/json"]["schema"]["$ref"]
    assert ref == "#/components/schemas/MemoryBlockOutput"
    properties = document["components"]["schemas"]["MemoryBlockOutput"]["properties"]
    assert {"block", "recalled", "dropped", "student_known", "subject_known"} <= set(properties)
    assert "Output" not in document["components"]["schemas"]


@pytest.mark.django_db
def test_every_operation_documents_its_errors_with_the_error_schema(client):
    document = _schema_document(client)
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            codes = {"400", "404", "413"} | (
                {"401", "429"} if operation.get("security") else set()  # public: no key
            )
            missing = codes - set(operation["responses"])
            assert not missing, (method, path, missing)
            for code in codes:
                body = operation["responses"][code]["content"]["application/json"]["schema"]
                assert body == {"$ref": "#/components/schemas/Error"}, (method, path, code)


@pytest.mark.django_db
def test_every_field_is_described_and_choices_are_enums(client):
    document = _schema_document(client)
    undescribed = []
    for name, component in document["components"]["schemas"].items():
        for field, spec in component.get("properties", {}).items():
            if not (spec.get("description") or spec.get("$ref") or "allOf" in spec):
                undescribed.append(f"{name}.{field}")
    assert undescribed == []
    schemas = document["components"]["schemas"]
    event = schemas["EpisodeAppendSingleInputRequest"]["properties"]
    assert set(_enum(document, event["kind"])) == {
        "question",
        "answer",
        "check",
        "quiz",
        "file",
        "taught",
        "consolidation",
    }
    assert {"right", "wrong", "partial"} <= set(_enum(document, event["verdict"]))
    stance = schemas["AnswerStanceInputRequest"]["properties"]["stance"]
    assert set(_enum(document, stance)) == {"answered", "partial", "cannot"}
    recalled = schemas["RecalledEpisode"]["properties"]["kind"]
    assert "check" in _enum(document, recalled)


def _enum(document: dict, spec: dict) -> list:
    """The enum values of a property, through $ref / allOf / oneOf."""
    if "enum" in spec:
        return [v for v in spec["enum"] if v is not None]
    if "$ref" in spec:
        return _enum(document, document["components"]["schemas"][spec["$ref"].split("/")[-1]])
    values: list = []
    for part in spec.get("allOf", []) + spec.get("oneOf", []) + spec.get("anyOf", []):
        values += _enum(document, part)
    return values


@pytest.mark.django_db
def test_the_episode_append_has_curated_examples(client):
    document = _schema_document(client)
    examples = document["paths"]["/api/v1/episodes/"]["post"]["requestBody"]["content"][
        "application/json"
    ]["examples"]
    values = [example["value"] for example in examples.values()]
    kinds = {value.get("kind") for value in values}
    assert {"question", "answer", "check"} <= kinds
    answer = next(v for v in values if v.get("kind") == "answer")
    assert answer["recalled_ids"] and answer["citations"]
    check = next(v for v in values if v.get("kind") == "check")
    assert check["verdict"] and check["predicted_mastery"] is not None


@pytest.mark.django_db
def test_no_requirement_numbers_appear_in_the_public_schema(client):
    text = json.dumps(_schema_document(client))
    assert re.findall(r"\bR-\d+(?:\.\d+)?", text) == []
