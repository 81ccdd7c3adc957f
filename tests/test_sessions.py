"""Sessions of the pages end on the server: a cookie kept after signing out is refused on the pages and on the API's
reads, other sessions of the same token go on, and the record of an ended session is pruned once it would have
expired anyway; on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from flask import session as flask_session

from api.pages import session as pages_session
from tests.api_client import ApiHarness
from tests.conftest import BACKENDS
from tests.stores import NOW
from tests.test_api_walk import open_1991_petition
from tests.test_pages import csrf_of, session_cookie, sign_in


@pytest.fixture(params=BACKENDS)
def api(request, new_database_url, tmp_path):  # noqa: ANN001, ANN201
    harness = ApiHarness(new_database_url(request.param),
                         config={"TRAMITA_SESSION_KEY": str(tmp_path / "session.key")})
    for role in ("ibge", "tre", "governor", "auditor"):
        harness.token(role)  # issued now, before the case the reads ask for
    harness.case_id = open_1991_petition(harness)["case_id"]
    yield harness
    harness.close()


def cookie_value(response) -> str:  # noqa: ANN001
    """The session cookie's value as the browser saved it from a response."""
    return session_cookie(response).split(";")[0].split("=", 1)[1]


def replayed(api: ApiHarness, cookie: str, path: str):  # noqa: ANN201
    """`path` asked by another browser that sends nothing but a saved copy of the session cookie."""
    browser = api.flask.test_client()
    browser.set_cookie("tramita_sessao", cookie)
    return browser.get(path)


def sign_out(client) -> int:  # noqa: ANN001
    return client.post("/sessao/sair", data={"csrf": csrf_of(client.get("/processos").data)}).status_code


def ended_rows(api: ApiHarness) -> int:
    return api.store.query("SELECT COUNT(*) FROM ended_sessions")[0][0]


def test_a_cookie_saved_before_signing_out_is_refused_on_a_page_and_on_an_api_read(api):
    saved = cookie_value(sign_in(api.client, api.token("auditor")))
    case = f"/cases/{api.case_id}"
    assert replayed(api, saved, "/processos").status_code == 200
    assert replayed(api, saved, case).status_code == 200
    assert sign_out(api.client) == 303
    page = replayed(api, saved, "/processos")
    assert page.status_code == 303 and "motivo=encerrada" in page.headers["Location"]  # asked to sign in again
    read = replayed(api, saved, case)
    assert read.status_code == 401 and read.mimetype == "application/problem+json"
    assert api.client.get("/processos").status_code == 303  # the browser that signed out is signed out too


def test_signing_out_ends_only_that_session_and_another_of_the_same_token_goes_on(api):
    token = api.token("auditor")
    first = cookie_value(sign_in(api.client, token))
    other = api.flask.test_client()
    second = cookie_value(sign_in(other, token))
    assert first != second
    assert sign_out(api.client) == 303
    assert replayed(api, first, "/processos").status_code == 303
    assert replayed(api, second, "/processos").status_code == 200
    assert replayed(api, second, f"/cases/{api.case_id}").status_code == 200
    assert other.get("/processos").status_code == 200


def test_signing_in_again_in_the_same_browser_ends_the_session_it_replaces(api):
    before = cookie_value(sign_in(api.client, api.token("auditor")))
    sign_in(api.client, api.token("ibge"))
    assert replayed(api, before, "/processos").status_code == 303
    assert api.client.get("/processos").status_code == 200


def test_an_ended_session_is_kept_until_it_would_have_expired_and_then_pruned(api):
    saved = cookie_value(sign_in(api.client, api.token("auditor")))
    assert sign_out(api.client) == 303
    assert ended_rows(api) == 1
    api.clock.now = NOW + timedelta(hours=8) - timedelta(seconds=1)
    assert replayed(api, saved, "/processos").status_code == 303  # still refused in its last second
    api.clock.now = NOW + timedelta(hours=8)
    other = api.flask.test_client()
    sign_in(other, api.token("auditor"))
    assert sign_out(other) == 303  # the next sign-out prunes what has expired
    assert ended_rows(api) == 1  # only the session just ended: the first one's record is gone
    assert replayed(api, saved, "/processos").status_code == 303  # and its cookie has expired by itself


def test_a_cookie_without_a_session_id_is_refused_as_signed_out(api):
    """A session signed before sessions had an id cannot be ended on the server: it is refused, once."""
    with api.flask.test_request_context("/"):
        pages_session.start(api.token("auditor"), NOW)
        del flask_session["id"]
        legacy = api.flask.session_interface.get_signing_serializer(api.flask).dumps(dict(flask_session))
    assert replayed(api, legacy, "/processos").status_code == 303
    assert replayed(api, legacy, f"/cases/{api.case_id}").status_code == 401
