"""Schemathesis over `/openapi.json`, in process: every operation with generated requests (stateless), then
chains of operations that the document's links connect (stateful): `POST /cases` -> `GET /cases/{case_ref}`
-> the case's acts, each sent with the `ETag` it was given as `If-Match`.

The API runs on a temporary SQLite file with the registry and the four demo cases seeded, the projections
brought up to date, and the clock pinned. Each generated request carries a bearer token of the role under test:
`assembly-mesa` reaches most writes; an `auditor` reads everything and may record nothing (403 on every write).

Checks: schemathesis' own, all of them (no server error; status codes, content types, headers and bodies as
documented; schema-violating requests refused; a missing or wrong token refused; ...), with one replaced (see
`refused_only_by_the_law`), and ours: every 4xx/5xx answer is `application/problem+json` with `type`, `title`,
`status` and `detail`. Each operation documents the error statuses it gives (400, 401, 403, 404, 409, 412, 413,
415, 422, 428 where each applies) and there is no catch-all `default` response, so the status code check holds
every answer to its operation's list.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import datetime, time, timedelta, timezone
from http import HTTPStatus
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.generation.meta import GenerationMode, ParameterLocation
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from tramita.web import create_app
from api.errors import PROBLEM_JSON, TYPE_BASE
from api.fields import EARLIEST_DAY, LATEST_DAY
from domain.demo import seed_demo
from domain.subscriptions import SubscriptionKeys
from tests.api_client import ApiHarness
from tests.stores import pinned_clock

pytestmark = pytest.mark.slow

PROBLEM_MEMBERS = ("type", "title", "status", "detail")
#: Dates and moments within the days the API reads (api/fields.py, README "HTTP API"): JSON Schema can bound a
#: number but not a `format: date`, so the generator is told here, as a client is told by the README.
schemathesis.openapi.format("date", st.dates(EARLIEST_DAY, LATEST_DAY).map(lambda d: d.isoformat()))
schemathesis.openapi.format("date-time", st.datetimes(
    datetime.combine(EARLIEST_DAY, time()) + timedelta(days=1), datetime.combine(LATEST_DAY, time()),
    timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=-5)), timezone(timedelta(hours=14))]),
).map(lambda moment: moment.isoformat()))
ROLES = ("assembly-mesa", "auditor")

#: Reproducible and quick: a fixed seed, a few examples per operation, no per-example deadline (SQLite writes).
SETTINGS = settings(max_examples=15, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
STATEFUL_SETTINGS = settings(SETTINGS, max_examples=30, stateful_step_count=8)


def problem_json(ctx: Any, response: schemathesis.Response, case: schemathesis.Case) -> None:
    """Every error is RFC 9457 problem+json with the four members tramita always gives."""
    if response.status_code < 400:
        return None
    content_type = response.headers.get("content-type", [""])[0].split(";")[0].strip()
    assert content_type == PROBLEM_JSON, (
        f"{response.status_code} answered with Content-Type {content_type!r}, not {PROBLEM_JSON}")
    body = response.json()
    assert isinstance(body, dict), f"a problem is a JSON object, got {body!r}"
    missing = [member for member in PROBLEM_MEMBERS if member not in body]
    assert not missing, f"the problem lacks {', '.join(missing)}: {body!r}"
    assert body["status"] == response.status_code, f"problem status {body['status']} != {response.status_code}"
    return None


def refused_only_by_the_law(ctx: Any, response: schemathesis.Response, case: schemathesis.Case) -> None:
    """Instead of schemathesis' `positive_data_acceptance`, which takes any 412 or 422 to a schema-valid request
    for a bug. Here a request the document calls valid is routinely refused for what no schema can say: an act
    the law forbids on that case, a municipality not in the registry, a stale `If-Match` (422 or 412, naming
    the problem's kind). What stays a bug: a schema-valid request refused as malformed (the API's own parsing
    disagreeing with its document, a problem of no kind) or with any other 4xx than these and the ones
    schemathesis accepts (401, 403, 404, 409, 429)."""
    if case.meta is None or not case.meta.generation.mode.is_positive or response.status_code < 400:
        return None
    status = response.status_code
    if status >= 500 or status in (401, 403, 404, 409, 429):
        return None
    body = response.json() if status in (412, 422) else {}
    generic = TYPE_BASE + HTTPStatus(status).phrase.lower().replace(" ", "-")
    if status == 422 and body.get("type") == generic and only_keys_refused(body.get("errors") or {}):
        return None
    assert status in (412, 422) and body.get("type") not in (None, generic), (
        f"a schema-valid request was refused {status} as malformed: {body!r}")
    return None


def only_keys_refused(errors: dict[str, Any]) -> bool:
    """Was every field at fault the key of an object (`{"documents": {"\x07": {"key": [...]}}}`)? The document gives
    no `propertyNames` (OpenAPI 3.0 had none, and apispec writes none in 3.1), so it does not say that a key holds no
    control character; the edge refuses one all the same (tests/test_api_edge.py), and that is no disagreement."""
    leaves: list[tuple[str, ...]] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, (*path, str(key)))
        else:
            leaves.append(path)

    walk(errors, ())
    return bool(leaves) and all(path[-1] == "key" for path in leaves)


class SeededApi:
    """The WSGI app schemathesis calls: the API on the seeded database, once the fixture has built it.

    The schema is loaded when this module is imported (schemathesis' pytest loader from a fixture does not run on
    this pytest), from an empty in-memory API: the OpenAPI document does not depend on the data.
    """

    def __init__(self) -> None:
        self.target: Any = create_app({"TRAMITA_DATABASE_URL": "memory://"}, clock=pinned_clock)
        self.bearer: dict[str, dict[str, str]] = {}
        self.pristine: Path | None = None

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        return self.target(environ, start_response)


API = SeededApi()
#: `missing_required_header` expects 400/401/403/406/415/422 for a missing required header; for `If-Match` the
#: API answers 428 Precondition Required, the status RFC 6585 defines for exactly that, and documents it. A
#: negative body may be refused 413 too: a list one item past its `maxItems` (20,001 signatures) can be larger
#: than the body limit, and is then refused before it is parsed.
CONFIG = schemathesis.Config.from_dict({"checks": {
    "missing_required_header": {"expected-statuses": [400, 401, 403, 406, 415, 422, 428]},
    "negative_data_rejection": {"expected-statuses": [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429,
                                                      "5XX"]}}})
schema = schemathesis.openapi.from_wsgi("/openapi.json", API, config=CONFIG)


@pytest.fixture(scope="module")
def seeded_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeededApi]:
    """The demo on a SQLite file, projected, with a token per role; kept for the module (seeding takes a while)."""
    folder = tmp_path_factory.mktemp("schemathesis")
    harness = seeded_harness(f"sqlite:///{folder / 'tramita.sqlite'}")
    seed_demo(harness.app, say=lambda _: None)
    harness.projector.catch_up()
    pristine = copy_database(folder / "tramita.sqlite", folder / "pristine.sqlite")
    empty, API.target = API.target, harness.flask
    API.bearer = {role: harness.headers(role) for role in ROLES}
    API.pristine = pristine
    try:
        yield API
    finally:
        API.target, API.bearer = empty, {}
        harness.close()


def copy_database(source: Path, target: Path) -> Path:
    """A consistent copy of an SQLite store (SQLite's backup); the copy's path."""
    with closing(sqlite3.connect(source)) as reading, closing(sqlite3.connect(target)) as writing:
        reading.backup(writing)
    return target


def seeded_harness(url: str) -> ApiHarness:
    harness = ApiHarness(url)
    harness.app.subscription_keys = SubscriptionKeys(b"schemathesis-key" * 2)  # subscriptions on
    return harness


class FreshDemo:
    """A copy of the seeded demo as it was before any generated request, for one example of the stateful phase.

    Hypothesis replays an example (to check it, to shrink it) and expects the same answers each time: the chains
    record acts, so each example starts from its own copy of the untouched demo, with its own app and caches."""

    def __init__(self, folder: Path, pristine: Path) -> None:
        self.folder, self.pristine, self.count = folder, pristine, 0

    def open(self) -> ApiHarness:
        self.count += 1
        path = copy_database(self.pristine, self.folder / f"example-{self.count}.sqlite")
        return seeded_harness(f"sqlite:///{path}")


def test_the_openapi_document_is_valid_openapi_3_1_with_links_for_the_stateful_phase() -> None:
    schema.validate()  # against the OpenAPI 3.1 meta-schema
    assert schema.raw_schema["openapi"] == "3.1.0"
    assert "links" in schema.raw_schema["paths"]["/cases"]["post"]["responses"]["201"]


def call_and_check(case: schemathesis.Case, role: str) -> None:
    excluded = [positive_data_acceptance]
    header = case.meta.components.get(ParameterLocation.HEADER) if case.meta else None
    if header is not None and header.mode == GenerationMode.NEGATIVE:
        # The test sends the role's valid bearer token in place of the generated headers, so a header made
        # invalid never reaches the server: such a request is valid and is rightly answered, not refused.
        excluded.append(negative_data_rejection)
    case.call_and_validate(headers=API.bearer[role], additional_checks=[problem_json, refused_only_by_the_law],
                           excluded_checks=excluded)


@schema.parametrize()
@SETTINGS
def test_every_operation_answers_the_mesa_as_documented(case: schemathesis.Case, seeded_api: SeededApi) -> None:
    call_and_check(case, "assembly-mesa")


@schema.parametrize()
@SETTINGS
def test_every_operation_answers_an_auditor_as_documented(case: schemathesis.Case, seeded_api: SeededApi) -> None:
    call_and_check(case, "auditor")


#: The stateful phase starts from a case that exists (a generated `case_ref` is never one: the chains would
#: stop at the first 404) and generates valid data only: the stateless tests above send the invalid data, and an
#: invalid request ends a chain at once. Chains then follow the document's links: the case -> an act with the
#: case's ETag as If-Match -> the case as the act left it -> ...
CHAIN_CONFIG = schemathesis.Config.from_dict({
    "generation": {"mode": "positive"},
    "checks": {"missing_required_header": {"expected-statuses": [400, 401, 403, 406, 415, 422, 428]}},
    "operations": [{"include-path": "/cases/{case_ref}", "include-method": "GET",
                    "parameters": {"case_ref": "LC35-2026-0001"}}],
})


@pytest.mark.parametrize("role", ROLES)
def test_chains_of_acts_answer_as_documented(seeded_api: SeededApi, role: str, tmp_path: Path) -> None:
    assert seeded_api.pristine is not None
    demo = FreshDemo(tmp_path, seeded_api.pristine)
    chains = schemathesis.openapi.from_wsgi("/openapi.json", API, config=CHAIN_CONFIG)
    answered: list[tuple[str, int, str]] = []  # (operation, status, If-Match sent)
    shared = API.target
    headers: dict[str, str] = {}

    class Chains(chains.as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            self.harness = demo.open()
            API.target = self.harness.flask
            headers.clear()
            headers.update(self.harness.headers(role))

        def teardown(self) -> None:
            API.target = shared
            self.harness.close()

        def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, Any]:
            return {"headers": headers}

        def after_call(self, response: Any, case: Any) -> None:
            super().after_call(response, case)
            answered.append((f"{case.method} {case.path}", response.status_code, case.headers.get("If-Match", "")))

        def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any) -> None:
            case.validate_response(response, additional_checks=[problem_json, refused_only_by_the_law],
                                   excluded_checks=[positive_data_acceptance], headers=headers,
                                   transport_kwargs=kwargs or None, recorder=self.recorder)

    try:
        Chains.run(settings=STATEFUL_SETTINGS)
    finally:
        API.target = shared
    assert demo.count >= STATEFUL_SETTINGS.max_examples  # every example began on its own copy
    # The chains did real work: a list's link led to a case that was read (the case is reached only by links).
    assert ("GET /cases/{case_ref}", 200, "") in answered, sorted(set(answered))
