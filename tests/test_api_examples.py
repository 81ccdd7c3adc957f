"""The OpenAPI document's request examples (api/examples.py): every write has one, taken from the demo's acts, and
each is accepted when the demo is replayed through HTTP, in its order, on a fresh store."""

from __future__ import annotations

import re
from typing import Any

import pytest

from api.examples import RECORDED_AT, demo_requests
from domain.subscriptions import SubscriptionKeys
from tests.api_client import ApiHarness

WRITES = ("post", "put", "patch", "delete")


@pytest.fixture
def api(tmp_path):  # noqa: ANN001, ANN201
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}")
    harness.clock.now = RECORDED_AT
    harness.app.subscription_keys = SubscriptionKeys(b"k" * 32)
    yield harness
    harness.close()


def write_operations(spec: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """operationId -> (path template, operation, its path parameters) for every write of the document that takes
    JSON or no body (an upload's body is a file's bytes, shown by its media types: tests/test_documents.py)."""
    return {operation["operationId"]: (path, operation, item.get("parameters", []) + operation.get("parameters", []))
            for path, item in spec["paths"].items() for method, operation in item.items() if method in WRITES
            and ("requestBody" not in operation or "application/json" in operation["requestBody"]["content"])}


def test_every_write_of_the_document_has_a_request_example_and_an_example_for_each_path_parameter(api):
    spec = api.client.get("/openapi.json").get_json()
    writes = write_operations(spec)
    assert {"petition-filed", "figure-recorded", "statute-amended", "finding-recorded", "law-enacted"} <= set(writes)
    without = [name for name, (_, operation, _) in writes.items() if "requestBody" in operation
               and "example" not in operation["requestBody"]["content"]["application/json"]]
    assert without == []
    unshown = [(name, p["name"]) for name, (_, operation, _) in writes.items() if "requestBody" not in operation
               for p in operation.get("parameters", []) if p["in"] == "query" and "example" not in p]
    assert unshown == []
    unnamed = [(name, p["name"]) for name, (_, _, parameters) in writes.items() for p in parameters
               if p["in"] == "path" and "example" not in p]
    assert unnamed == []


def test_a_case_read_offers_the_demo_s_first_case_as_its_path_example(api):
    spec = api.client.get("/openapi.json").get_json()
    case_ref = next(p for p in spec["paths"]["/cases/{case_ref}"]["parameters"] if p["name"] == "case_ref")
    assert case_ref["example"] == "LC35-1991-0001"


def test_each_example_is_the_body_of_the_demo_s_first_act_of_its_operation_and_names_that_act_s_case(api):
    spec = api.client.get("/openapi.json").get_json()
    first: dict[str, Any] = {}
    for request in demo_requests():
        first.setdefault(request.operation, request)
    for name, (_, operation, parameters) in write_operations(spec).items():
        if "requestBody" in operation:
            assert operation["requestBody"]["content"]["application/json"]["example"] == first[name].body, name
        else:
            shown = {p["name"]: p["example"] for p in operation["parameters"] if p["in"] == "query"}
            assert shown == first[name].body, name
        assert {p["name"]: p["example"] for p in parameters if p["in"] == "path"} == first[name].path, name


def test_the_demo_replayed_through_http_in_its_order_accepts_every_example_on_a_fresh_store(api):
    """Every write of the demo, each the request its example shows, sent with its recorder's token (and the case's
    ETag as If-Match on a case) to the path the document gives, with the example's path parameters; an act that
    attaches a document comes after the upload of that document's bytes, by the same body."""
    spec = api.client.get("/openapi.json").get_json()
    writes = write_operations(spec)
    examples = {name: operation["requestBody"]["content"]["application/json"]["example"] if "requestBody" in
                operation else {p["name"]: p["example"] for p in operation["parameters"] if p["in"] == "query"}
                for name, (_, operation, _) in writes.items()}
    sent: set[str] = set()
    given: dict[str, str] = {}  # what the demo made (a subscription) -> the id the replay's answer gave it
    uploaded: set[str] = set()
    for request in demo_requests():
        if request.content is not None:
            response = api.client.post("/documents", data=request.content, headers=api.headers(
                request.actor.role, request.actor.municipality, **{"Content-Type": request.media_type}))
            assert response.status_code == 201, response.get_json()
            uploaded.add(response.get_json()["sha256"])
            continue
        assert {a["sha256"] for a in request.body.get("attachments", [])} <= uploaded, request.operation
        template, _, _ = writes[request.operation]
        path = re.sub(r"\{(\w+)\}", lambda m: given.get(request.path[m.group(1)], request.path[m.group(1)]),
                      template)
        extra = {"If-Match": api.etag(request.path["case_ref"])} if "case_ref" in request.path else {}
        headers = api.headers(request.actor.role, request.actor.municipality, **extra)
        if "requestBody" in writes[request.operation][1]:
            response = api.client.post(path, json=request.body, headers=headers)
        else:
            response = api.client.delete(path, query_string=request.body, headers=headers)
        if request.made is not None:
            given[request.made] = response.get_json()["id"]
        assert 200 <= response.status_code < 300, (request.operation, path, response.get_json())
        if request.operation == "petition-filed":
            assert response.get_json()["number"], response.get_json()
        if request.operation not in sent:
            assert request.body == examples[request.operation], request.operation
            sent.add(request.operation)
    assert sent == set(writes)
    assert uploaded, "the demo attaches documents to some of its acts"
    for number in {r.path["case_ref"] for r in demo_requests() if "case_ref" in r.path}:
        assert api.get(f"/cases/{number}").status_code == 200, number
