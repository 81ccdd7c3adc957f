"""What the API trusts of the network: addresses it hands out are built on the configured public URL, never on the
request's `Host`; `/docs` and `/openapi.json` carry the pages' security headers; an address that sends too many
wrong tokens within a minute is refused with 429 until the minute is over."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from api.app import DOCS_ENDPOINTS, SWAGGER_PAGE, settings_from
from api.http import FAILURE_WINDOW, TokenFailures
from domain.subscriptions import SubscriptionKeys
from tests.api_client import ApiHarness
from tests.test_pages import sign_in, text

PUBLIC_URL = "https://tramita.ac.gov.br"
ATTACKER = {"REMOTE_ADDR": "203.0.113.7"}
COLLEAGUE = {"REMOTE_ADDR": "198.51.100.20"}


@pytest.fixture
def api(tmp_path) -> Iterator[ApiHarness]:
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}", config={"TRAMITA_PUBLIC_URL": PUBLIC_URL + "/"})
    harness.app.subscription_keys = SubscriptionKeys(b"k" * 32)
    try:
        yield harness
    finally:
        harness.close()


def test_a_feed_s_address_is_on_the_configured_public_url_whatever_host_the_request_names(api):
    opened = api.client.post("/feeds", json={}, headers=api.headers("ibge", Host="evil.example"))
    assert opened.status_code == 201, opened.get_json()
    feed_url = opened.get_json()["feed_url"]
    assert feed_url.startswith(PUBLIC_URL + "/feeds/") and feed_url.endswith(".ics")
    assert "evil.example" not in feed_url


def test_without_a_public_url_the_feeds_are_on_the_embedded_server_s_address():
    assert settings_from({})["public_url"] == "http://127.0.0.1:8000"


@pytest.mark.parametrize("value", ["tramita.ac.gov.br", "ftp://tramita.ac.gov.br", "https://tramita.ac.gov.br/api",
                                   "https://tramita.ac.gov.br?x=1", "https://tramita.ac.gov.br#top", "https://",
                                   "https://tramita.ac.gov.br:99999", "https://user@tramita.ac.gov.br"])
def test_a_public_url_with_a_path_query_fragment_or_another_scheme_is_refused_naming_the_setting(value):
    with pytest.raises(ValueError, match="^TRAMITA_PUBLIC_URL: .* no path, query or fragment"):
        settings_from({"TRAMITA_PUBLIC_URL": value})


@pytest.mark.parametrize("value", ["0", "-1", "twenty", "", "100001"])
def test_a_token_failure_limit_that_is_not_a_positive_number_is_refused_naming_the_setting(value):
    with pytest.raises(ValueError, match="^TRAMITA_TOKEN_FAILURES_PER_MINUTE: "):
        settings_from({"TRAMITA_TOKEN_FAILURES_PER_MINUTE": value})


@pytest.mark.parametrize("path", ["/docs", "/openapi.json", "/docs/swagger-init.js", "/docs/static/swagger-ui.css"])
def test_the_api_s_description_and_its_viewer_carry_the_security_headers_and_cannot_be_framed(api, path):
    response = api.client.get(path)
    assert response.status_code == 200
    policy = response.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy and "script-src 'self';" in policy and "unsafe-inline" not in policy
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"


def test_the_swagger_page_has_no_inline_script_and_starts_from_a_file_the_app_serves(api):
    assert "<script>" not in SWAGGER_PAGE and 'src="/docs/swagger-init.js"' in SWAGGER_PAGE
    started = api.client.get("/docs/swagger-init.js")
    assert started.mimetype in ("text/javascript", "application/javascript")
    assert b'SwaggerUIBundle({url: "/openapi.json"' in started.data
    assert {"docs", "docs_static", "docs_init", "api-docs.openapi_json"} == DOCS_ENDPOINTS


def test_a_page_and_an_api_answer_keep_their_own_headers(api):
    page = api.client.get("/")
    assert "form-action 'self'" in page.headers["Content-Security-Policy"] and page.headers["X-Frame-Options"] == "DENY"
    assert "Content-Security-Policy" not in api.get("/cases").headers


def wrong_token(api: ApiHarness, address: dict[str, str], **headers: str):  # noqa: ANN201
    return api.client.get("/cases", headers={"Authorization": "Bearer not-a-token", **headers}, environ_base=address)


def limited(api: ApiHarness, per_minute: int) -> list[float]:
    """The app's failure table, `per_minute` failures an address, on a clock the test moves; the clock."""
    now = [1000.0]
    api.flask.extensions["tramita.token_failures"] = TokenFailures(per_minute, clock=lambda: now[0])
    return now


def test_an_address_that_sent_too_many_wrong_tokens_is_refused_with_429_until_the_minute_is_over(api):
    now = limited(api, 3)
    assert [wrong_token(api, ATTACKER).status_code for _ in range(3)] == [401, 401, 401]
    now[0] += 20
    refused = wrong_token(api, ATTACKER, **{"Accept-Language": "pt-BR"})
    assert refused.status_code == 429 and refused.mimetype == "application/problem+json"
    assert refused.headers["Retry-After"] == "40"
    problem = refused.get_json()
    assert problem["field"] == "Authorization" and problem["status"] == 429
    assert problem["detail"] == "Muitos tokens errados vindos deste endereço: tente de novo em 40 segundos"
    assert wrong_token(api, ATTACKER).get_json()["detail"] == (
        "Too many wrong tokens from this address: try again in 40 seconds")
    right = api.client.get("/cases", headers=api.headers("auditor"), environ_base=ATTACKER)
    assert right.status_code == 429  # not even a right token is checked: a guess would otherwise tell
    assert api.client.get("/cases", environ_base=ATTACKER).status_code == 401  # no token: nothing to guess
    assert api.client.get("/cases", headers=api.headers("auditor"), environ_base=COLLEAGUE).status_code == 200
    now[0] += FAILURE_WINDOW - 20
    assert api.client.get("/cases", headers=api.headers("auditor"), environ_base=ATTACKER).status_code == 200
    assert wrong_token(api, ATTACKER).status_code == 401


def test_right_tokens_and_requests_without_a_token_never_count(api):
    limited(api, 2)
    for _ in range(5):
        assert api.client.get("/cases", headers=api.headers("auditor"), environ_base=ATTACKER).status_code == 200
        assert api.client.get("/cases", environ_base=ATTACKER).status_code == 401
    assert [wrong_token(api, ATTACKER).status_code for _ in range(3)] == [401, 401, 429]


def test_every_operation_that_takes_a_token_documents_its_429(api):
    operations = [operation for path in api.client.get("/openapi.json").get_json()["paths"].values()
                  for operation in path.values() if isinstance(operation, dict) and "responses" in operation]
    assert operations and all(("429" in o["responses"]) is ("401" in o["responses"]) for o in operations)


def test_wrong_tokens_through_the_loopback_nginx_shares_with_every_client_are_left_to_nginx_to_limit(api):
    limited(api, 2)
    for loopback in ("127.0.0.1", "::1", "::ffff:127.0.0.1"):
        assert [wrong_token(api, {"REMOTE_ADDR": loopback}).status_code for _ in range(3)] == [401, 401, 401]
    assert api.client.get("/cases", headers=api.headers("auditor")).status_code == 200
    forwarded = {"X-Forwarded-For": "203.0.113.7", "X-Real-IP": "203.0.113.7"}
    assert [wrong_token(api, COLLEAGUE, **forwarded).status_code for _ in range(3)] == [401, 401, 429]
    assert api.client.get("/cases", headers=api.headers("auditor"), environ_base=ATTACKER).status_code == 200


def test_the_limit_is_read_from_its_setting_and_the_table_of_addresses_stays_bounded(tmp_path):
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}", config={"TRAMITA_TOKEN_FAILURES_PER_MINUTE": "1"})
    try:
        assert wrong_token(harness, ATTACKER).status_code == 401
        assert wrong_token(harness, ATTACKER).status_code == 429
    finally:
        harness.close()
    failures = TokenFailures(1, clock=lambda: 0.0, size=3)
    for n in range(10):
        failures.failed(f"203.0.113.{n}")
    assert list(failures.counted) == ["203.0.113.7", "203.0.113.8", "203.0.113.9"]
    assert failures.wait("203.0.113.9") == 60 and failures.wait("203.0.113.0") is None


def sign_in_from(api: ApiHarness, address: dict[str, str], token: str, **headers: str):  # noqa: ANN201
    return sign_in(api.client, token, environ_base=address, headers=headers)


def test_wrong_tokens_typed_into_the_sign_in_form_count_as_the_api_s_and_end_in_429_until_the_minute_is_over(api):
    now = limited(api, 2)
    assert sign_in_from(api, ATTACKER, "not-a-token").status_code == 401
    assert wrong_token(api, ATTACKER).status_code == 401  # one table: the form and the API are one guesser's
    refused = sign_in_from(api, ATTACKER, "still-not-a-token", **{"Accept-Language": "pt-BR"})
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "60"
    assert "Muitos tokens errados vindos deste endereço: tente de novo em 60 segundos" in text(refused)
    assert "tramita_sessao=" not in "".join(refused.headers.getlist("Set-Cookie"))
    right = sign_in_from(api, ATTACKER, api.token("auditor"))
    assert right.status_code == 429  # the right token is not even checked
    assert sign_in_from(api, COLLEAGUE, api.token("auditor")).status_code == 303
    now[0] += FAILURE_WINDOW
    assert sign_in_from(api, ATTACKER, api.token("auditor")).status_code == 303


@pytest.fixture
def behind_a_proxy(tmp_path) -> Iterator[ApiHarness]:
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}", config={"TRAMITA_TRUSTED_PROXIES": "1"})
    try:
        yield harness
    finally:
        harness.close()


def test_behind_a_declared_proxy_wrong_tokens_are_counted_per_client_the_proxy_names_not_per_proxy(behind_a_proxy):
    api, proxy = behind_a_proxy, {"REMOTE_ADDR": "127.0.0.1"}
    limited(api, 2)
    # nginx appends the address it was connected from; whatever the client wrote before it is the client's.
    attacker = {"X-Forwarded-For": "198.51.100.20, 203.0.113.7"}
    assert [wrong_token(api, proxy, **attacker).status_code for _ in range(3)] == [401, 401, 429]
    assert wrong_token(api, proxy, **{"X-Forwarded-For": "203.0.113.7"}).status_code == 429
    colleague = {"X-Forwarded-For": "198.51.100.20"}  # the address the attacker wrote first is not locked out
    right = api.client.get("/cases", headers={**api.headers("auditor"), **colleague}, environ_base=proxy)
    assert right.status_code == 200
    assert api.client.get("/cases", headers=api.headers("auditor"), environ_base=proxy).status_code == 200


@pytest.mark.parametrize("value", ["x", "-1", "6", "1.5", "10"])
def test_a_number_of_trusted_proxies_that_is_no_small_whole_number_is_refused_naming_the_setting(value):
    with pytest.raises(ValueError, match="^TRAMITA_TRUSTED_PROXIES: "):
        settings_from({"TRAMITA_TRUSTED_PROXIES": value})
    assert settings_from({})["trusted_proxies"] == 0
