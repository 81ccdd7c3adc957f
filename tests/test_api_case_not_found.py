"""A case that does not exist is answered 404 naming the reference the client asked for (the case number, or the
id it gave), never the internal id a number resolves to, on every route that takes a case."""

from __future__ import annotations

import re
import pytest

from api.examples import RECORDED_AT, examples
from domain.case import case_id_for
from domain.demo_further import further_acts
from tests.api_client import ApiHarness
from tests.test_api_contract import assert_problem
from audit.demo_files import seed_demo_with_documents

UNKNOWN = "LC35-2026-9999"


@pytest.fixture(scope="module")
def api(tmp_path_factory):  # noqa: ANN001, ANN201
    """The demo (with the documents its examples attach) and its further acts recorded (so that each act's example
    has its recorder's token to send, and names documents that are stored)."""
    harness = ApiHarness(f"sqlite:///{tmp_path_factory.mktemp('not-found') / 'api.sqlite'}")
    harness.clock.now = RECORDED_AT
    seed_demo_with_documents(harness.app, harness.flask.extensions["tramita.documents"], say=lambda _: None)
    further_acts(harness.app, say=lambda _: None)
    yield harness
    harness.close()


def case_routes(api: ApiHarness) -> list[tuple[str, str, str]]:
    """(method, path template, operationId) of every operation of the document whose path names a case."""
    spec = api.client.get("/openapi.json").get_json()
    return [(method, path, operation.get("operationId") or f"{method} {path}") for path, item in spec["paths"].items()
            if "{case_ref}" in path for method, operation in item.items() if method in ("get", "post")]


def ask(api: ApiHarness, method: str, template: str, operation: str, reference: str):  # noqa: ANN201
    path = re.sub(r"\{(\w+)\}", lambda m: reference if m.group(1) == "case_ref" else "1", template)
    if method == "get":
        return api.get(path)
    example = examples()[operation]
    return api.client.post(path, json=example.body, headers=api.headers(
        example.actor.role, example.actor.municipality, **{"If-Match": "*"}))


def test_every_route_taking_a_case_names_the_unknown_case_number_asked_for(api):
    routes = case_routes(api)
    assert {"get /cases/{case_ref}", "get /cases/{case_ref}/events", "get /cases/{case_ref}/verify",
            "get /cases/{case_ref}/export", "get /cases/{case_ref}/deadlines",
            "get /cases/{case_ref}/events/{version}/proof", "finding-recorded", "law-enacted"} <= {
        operation for _, _, operation in routes}
    for method, template, operation in routes:
        body = assert_problem(ask(api, method, template, operation, UNKNOWN), 404)
        assert body["detail"] == f"no case {UNKNOWN}", (method, template, body)
        assert body["type"].endswith("/case-not-found"), body
        assert str(case_id_for(UNKNOWN)) not in body["detail"]


def test_an_unknown_case_id_is_named_as_the_id_given(api):
    reference = "0b6f8e44-9a70-4c1e-9d0b-3c4f8d2a7e11"
    for method, template, operation in case_routes(api):
        body = assert_problem(ask(api, method, template, operation, reference), 404)
        assert body["detail"] == f"no case {reference}", (method, template, body)


@pytest.mark.parametrize("query", ["as_of=1992-01-01", "version=3", "recorded_before=2026-01-01T00:00:00Z"])
def test_a_case_asked_for_as_of_a_day_a_version_or_a_moment_names_the_unknown_case_number(api, query):
    body = assert_problem(api.get(f"/cases/{UNKNOWN}?{query}"), 404)
    assert body["detail"] == f"no case {UNKNOWN}", body


def test_a_case_that_had_no_act_by_the_day_asked_names_its_number_and_the_day(api):
    number = "LC35-1991-0001"  # the demo's first case: its petition is dated 1991-12-19, recorded in 2026
    body = assert_problem(api.get(f"/cases/{number}?as_of=1991-12-18"), 404)
    assert body["detail"] == f"case {number} had no act dated on or before 1991-12-18", body
    body = assert_problem(api.get(f"/cases/{number}?recorded_before=2000-01-01T00:00:00Z"), 404)
    assert body["detail"] == f"case {number} had no act recorded before 2000-01-01T00:00:00+00:00", body
