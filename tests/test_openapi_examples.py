"""The OpenAPI document is valid OpenAPI 3.1, and each operation shows, for each success status it documents, an
example of the answer taken from the demo replayed through the API (api/response_examples.py), which validates
against the response's schema: the examples cannot drift from what the API answers. The document is the same in
every process."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from api.examples import demo_requests
from tests.api_client import ApiHarness

ROOT = Path(__file__).resolve().parent.parent
#: The document's address inside the registry the examples are validated with.
DOCUMENT = "urn:tramita:openapi"
#: Another process building the app over an in-memory store: the SHA-256 of the document it serves.
OTHER_PROCESS = """
import hashlib, sys
from tramita.web import create_app
app = create_app({"TRAMITA_DATABASE_URL": "memory://"})
sys.stdout.write(hashlib.sha256(app.test_client().get("/openapi.json").get_data()).hexdigest())
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    harness = ApiHarness(f"sqlite:///{tmp_path_factory.mktemp('openapi') / 'api.sqlite'}")
    try:
        response = harness.client.get("/openapi.json")
        assert response.status_code == 200
        return response.get_data()
    finally:
        harness.close()


@pytest.fixture(scope="module")
def spec(served: bytes) -> dict[str, Any]:
    return json.loads(served)


def pointer(*parts: str) -> str:
    return "/".join(part.replace("~", "~0").replace("/", "~1") for part in parts)


def success_responses(spec: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(path, method, status) -> the response, for every 2xx response of every operation."""
    return {(path, method, status): response for path, item in spec["paths"].items()
            for method, operation in item.items() if method != "parameters"
            for status, response in operation["responses"].items() if status.startswith("2")}


def test_the_document_is_valid_openapi_3_1(spec):
    assert spec["openapi"] == "3.1.0"
    validate(spec)  # the OpenAPI 3.1 schema, and each Schema Object's defaults against their schemas


def test_a_field_that_may_be_null_and_has_several_kinds_takes_null_as_one_more_kind(spec):
    """apispec writes `nullable` no more in 3.1: null is a type, and an `anyOf` field needs it among its kinds."""
    revenue = spec["components"]["schemas"]["FindingRecorded"]["properties"]["state_tax_revenue"]
    assert {"type": "null"} in revenue["anyOf"] and "nullable" not in json.dumps(spec)


def test_every_operation_shows_an_example_of_each_success_status_it_documents(spec):
    without = [key for key, response in success_responses(spec).items()
               if not any("example" in entry or "examples" in entry for entry in response.get("content", {}).values())]
    assert without == []
    assert len({(path, method) for path, method, _ in success_responses(spec)}) >= 58


def test_each_response_example_validates_against_its_schema_with_the_document_s_components(spec):
    registry = Registry().with_resource(DOCUMENT, Resource.from_contents(spec, default_specification=DRAFT202012))
    checked, faults = 0, []
    for (path, method, status), response in success_responses(spec).items():
        for media_type, entry in response.get("content", {}).items():
            if "example" not in entry:
                continue
            where = f"{DOCUMENT}#/{pointer('paths', path, method, 'responses', status, 'content', media_type)}/schema"
            validator = Draft202012Validator({"$ref": where}, registry=registry,
                                             format_checker=Draft202012Validator.FORMAT_CHECKER)
            faults += [(path, method, status, list(error.absolute_path), error.message[:200])
                       for error in validator.iter_errors(entry["example"])]
            checked += 1
    assert faults == []
    assert checked >= 58


def test_an_example_that_breaks_its_schema_is_caught_by_the_same_validation(spec):
    registry = Registry().with_resource(DOCUMENT, Resource.from_contents(spec, default_specification=DRAFT202012))
    where = f"{DOCUMENT}#/{pointer('paths', '/cases/{case_ref}', 'get', 'responses', '200')}/content/application~1json"
    case = dict(spec["paths"]["/cases/{case_ref}"]["get"]["responses"]["200"]["content"]["application/json"]["example"])
    validator = Draft202012Validator({"$ref": f"{where}/schema"}, registry=registry)
    assert validator.is_valid(case)
    case["number"] = 1
    assert not validator.is_valid(case)


def test_the_examples_are_the_demo_s_own_answers(spec):
    """The case read is the demo's first case after its acts, its checkpoint signs the log's tree, the feed is the
    demo's calendar, and the removed subscription is the one the demo's webhook example made."""
    case = spec["paths"]["/cases/{case_ref}"]["get"]
    assert case["responses"]["200"]["content"]["application/json"]["example"]["number"] == "LC35-1991-0001"
    latest = spec["paths"]["/checkpoints/latest"]["get"]["responses"]["200"]["content"]["text/plain"]["example"]
    assert latest.startswith("tramita.example\n")
    calendar = spec["paths"]["/feeds/{feed_id}/{key}.ics"]["get"]["responses"]["200"]["content"]["text/calendar"]
    assert calendar["example"].startswith("BEGIN:VCALENDAR")
    made = {request.made for request in demo_requests() if request.made is not None}
    created = spec["paths"]["/subscriptions"]["post"]["responses"]["201"]["content"]["application/json"]["example"]
    removed = next(p for p in spec["paths"]["/subscriptions/{subscription_id}"]["parameters"]
                   if p["name"] == "subscription_id")
    assert created["id"] in made and removed["example"] in made


def test_a_file_is_described_and_a_long_text_answer_cut(spec):
    dossier = spec["paths"]["/cases/{case_ref}/dossier.pdf"]["get"]["responses"]["200"]["content"]
    assert set(dossier["application/pdf"]["examples"]["file"]) == {"summary", "description"}
    export = spec["paths"]["/cases/{case_ref}/export"]["get"]["responses"]["200"]["content"]
    (text,) = [entry["example"] for entry in export.values()]
    assert len(text) < 8000 and text.rstrip("\n").endswith("more lines)")
    assert "hash" in json.loads(text.splitlines()[0])


def test_the_document_is_the_same_in_another_process(served):
    """Random ids (a subscription's, its secret, its feed key) are shown by their stand-ins, and the checkpoints
    sign the log before any of them; the clock is RECORDED_AT."""
    other = subprocess.run([sys.executable, "-c", OTHER_PROCESS], cwd=ROOT, capture_output=True, text=True,
                           timeout=300, check=True)
    assert other.stdout == hashlib.sha256(served).hexdigest()


def test_the_refusals_operations_cite_show_one_problem_each_as_the_api_answered_it(spec):
    registry = Registry().with_resource(DOCUMENT, Resource.from_contents(spec, default_specification=DRAFT202012))
    shown = {}
    for name, response in spec["components"]["responses"].items():
        entry = response.get("content", {}).get("application/problem+json", {})
        if "example" in entry:
            validator = Draft202012Validator({"$ref": f"{DOCUMENT}#/components/schemas/Problem"}, registry=registry)
            assert validator.is_valid(entry["example"]), name
            shown[name] = entry["example"]["status"]
    assert {"UNAUTHORIZED": 401, "FORBIDDEN": 403, "NOT_FOUND": 404, "PRECONDITION_FAILED": 412,
            "UNPROCESSABLE_ENTITY": 422, "PRECONDITION_REQUIRED": 428}.items() <= shown.items()
