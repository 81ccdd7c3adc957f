"""Contract details that schemathesis found over the OpenAPI document, each pinned by name.

(The HTTP contract proper is in test_api.py; tests/test_api_schemathesis.py generates the requests.)
"""

from __future__ import annotations

from http import HTTPStatus
from urllib.parse import unquote

import pytest

from api.errors import PROBLEM_JSON
from tests.api_client import ApiHarness


@pytest.fixture
def api(tmp_path):  # noqa: ANN201
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}")
    yield harness
    harness.close()


def assert_problem(response, status: int) -> dict:  # noqa: ANN001
    assert response.status_code == status, response.get_json()
    assert response.mimetype == PROBLEM_JSON
    body = response.get_json()
    assert {"type", "title", "status", "detail"} <= set(body) and body["status"] == status
    return body


@pytest.mark.parametrize("path", ["/cases?kidn=creation", "/deadlines?stauts=missed", "/alerts?=1",
                                  "/freezes?municipio=1200302", "/municipalities?nome=Feij%C3%B3",
                                  "/cases/LC35-1991-0001?asof=1992-01-01"])
def test_an_unknown_query_parameter_is_a_problem_json_422_naming_it(api, path):
    """A misspelt filter is refused, not ignored: ignoring it would answer an unfiltered list as if filtered."""
    body = assert_problem(api.get(path), 422)
    name = path.split("?", 1)[1].split("=", 1)[0]
    assert name in body["errors"]["query"], body


def test_the_openapi_links_chain_a_petition_to_its_case_and_the_case_to_its_acts(api):
    """`POST /cases` -> `GET /cases/{case_ref}` -> each act with the case's ETag as If-Match -> the case again.

    Each link names an operation the document has (by operationId or a local operationRef) and only that
    operation's parameters, qualified by location where not a path parameter (OpenAPI 3.1, Link Object)."""
    spec = api.client.get("/openapi.json").get_json()
    operations = {(path, method): operation for path, item in spec["paths"].items()
                  for method, operation in item.items() if method != "parameters"}
    by_id = {operation.get("operationId"): key for key, operation in operations.items()}

    def target(link: dict) -> tuple[str, str]:
        if "operationId" in link:
            return by_id[link["operationId"]]
        pointer = link["operationRef"]
        assert pointer.startswith("#/paths/")
        path, method = pointer[len("#/paths/"):].rsplit("/", 1)
        return unquote(path).replace("~1", "/").replace("~0", "~"), method

    def parameters(key: tuple[str, str]) -> set[str]:
        declared = spec["paths"][key[0]].get("parameters", []) + operations[key].get("parameters", [])
        return {f"{p['in']}.{p['name']}" for p in declared} | {p["name"] for p in declared if p["in"] == "path"}

    links = {key: operation["responses"][status].get("links", {}) for key, operation in operations.items()
             for status in operation["responses"] if status.startswith("2")}
    for key, named in links.items():
        for name, link in named.items():
            assert set(link) <= {"operationId", "operationRef", "parameters", "description", "requestBody", "server"}
            assert ("operationId" in link) != ("operationRef" in link), (key, name)
            assert target(link) in operations, (key, name)
            assert set(link["parameters"]) <= parameters(target(link)), (key, name)
            assert all(value.startswith("$response.") for value in link["parameters"].values())
    assert target(links[("/cases", "post")]["GetCase"]) == ("/cases/{case_ref}", "get")
    case_links = links[("/cases/{case_ref}", "get")]
    acts = {name for (path, method), op in operations.items() if path.startswith("/cases/{case_ref}/acts/")
            for name in [op["operationId"]]}
    assert acts and acts <= set(case_links)
    assert all(case_links[act]["parameters"]["header.If-Match"] == "$response.header.ETag" for act in acts)
    assert all(target(links[by_id[act]]["GetCase"]) == ("/cases/{case_ref}", "get") for act in acts)


def test_every_error_response_is_documented_as_problem_json_and_no_operation_has_a_catch_all_default(api):
    """The error statuses an operation lists cite response components that say what the API answers: the problem
    schema as application/problem+json, nothing as application/json; and no `default` response stands for the
    statuses an operation does not list, so that an undocumented status shows as one."""
    spec = api.client.get("/openapi.json").get_json()
    components = spec["components"]["responses"]
    assert {"BAD_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "UNPROCESSABLE_ENTITY"} <= set(components)
    for name, response in components.items():
        status = HTTPStatus[name]
        # an `example` beside the schema is the API's own answer (tests/test_openapi_examples.py checks it)
        shown = {media: {key: value for key, value in entry.items() if key != "example"}
                 for media, entry in response["content"].items()}
        assert status >= 400 and {**response, "content": shown} == {"description": status.phrase, "content": {
            PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}}, (name, response)
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method != "parameters":
                assert "default" not in operation["responses"], (method, path)
                cited = [r["$ref"].rsplit("/", 1)[1] for s, r in operation["responses"].items() if "$ref" in r]
                assert all(HTTPStatus[name] >= 400 for name in cited), (method, path, cited)
