"""Contract details that schemathesis found over the OpenAPI document, each pinned by name.

(The HTTP contract proper is in test_api.py; tests/test_api_schemathesis.py generates the requests.)
"""

from __future__ import annotations

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
