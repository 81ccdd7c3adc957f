"""`GET /whoami`: a client asks who its token acts as before its first act, and is told by the token's own check."""

from __future__ import annotations

import pytest

from tests.api_client import ADMIN, ApiHarness


@pytest.fixture
def api(tmp_path):  # noqa: ANN001, ANN201
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}")
    yield harness
    harness.close()


def test_whoami_answers_the_tokens_principal_role_and_municipality(api):
    response = api.client.get("/whoami", headers=api.headers("council", "1200013"))
    assert response.status_code == 200
    assert response.get_json() == {"token_id": response.get_json()["token_id"], "principal":
                                   "test-council-1200013", "role": "council",
                                   "municipality": "1200013"}
    listed = {str(token.id) for token in api.app.tokens()}
    assert response.get_json()["token_id"] in listed


def test_whoami_names_no_municipality_for_a_state_body(api):
    body = api.get("/whoami", role="assembly-mesa").get_json()
    assert (body["role"], body["municipality"]) == ("assembly-mesa", None)


def test_whoami_refuses_a_request_without_a_token_and_a_revoked_token(api):
    assert api.client.get("/whoami").status_code == 401
    token_id = api.get("/whoami", role="tre").get_json()["token_id"]
    api.app.revoke_token(ADMIN, token_id, reason="revoked by the test")
    assert api.get("/whoami", role="tre").status_code == 401
