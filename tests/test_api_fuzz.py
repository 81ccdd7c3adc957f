"""Fuzzing the edge of the API: generated hostile bodies, query strings, path parameters and headers sent to every
operation in process through Flask's test client. No answer is a server error, every error is problem+json, and a
refused request records nothing.

The operations are read from the app's own OpenAPI document, so a new operation is fuzzed without a change here;
each is sent by a token of a body competent for it (or an auditor, for a read), so that a hostile body gets past
the role check to the parsing it is aimed at. The values are built from what broke the API before: deep nesting,
control characters and lone surrogates, huge and non-finite numbers, odd dates and moments, huge strings.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tramita.web import create_app
from domain.access import MUNICIPAL_ROLES, bodies_competent_for
from domain.demo import FEIJO
from domain.subscriptions import SubscriptionKeys
from tests.api_client import ApiHarness, harness_on
from tests.stores import pinned_clock
from tests.test_api import voters_petition

pytestmark = pytest.mark.slow

#: Enough examples per operation to mix every kind of hostile value with the others; the whole module runs in
#: well under a minute on the 2-core development machine.
EXAMPLES = 20
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


@dataclass(frozen=True)
class Operation:
    method: str
    path: str  # OpenAPI template, e.g. /cases/{case_ref}/acts/requisition-issued
    operation_id: str | None
    query: tuple[tuple[str, str], ...]  # (name, kind): kind is a format (date, date-time) or a JSON type
    headers: tuple[str, ...]
    body: tuple[tuple[str, str], ...]  # the request schema's properties, when it has a body
    plausible: str  # JSON of a body with every required field given an ordinary value (often a valid body)

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


XAPURI = "1200708"
#: Bodies the domain accepts on the fuzzed case (an act it takes again and again, or a first petition), and who
#: sends them: hostile values put into these reach the whole write path (the event's hash, the log, the
#: projections), not only the schemas. Every other operation starts from an ordinary body built from its schema.
RECORDABLE: dict[str, tuple[str, dict[str, Any]]] = {
    "requisition-issued": ("assembly-mesa", {"occurred_on": "2026-03-05", "body": "ibge", "items": ["art-4"]}),
    "figure-recorded": ("ibge", {"occurred_on": "2026-03-02", "figure": "area_km2", "value": "420.5",
                                 "as_of": "2026-01-01", "source": "IBGE"}),
    "petition-filed": ("governor", {"occurred_on": "2026-03-03", "kind": "creation", "municipalities": [XAPURI],
                                    "areas": [{"municipality": XAPURI, "area_km2": "10"}],
                                    "documents": {f"art-4-{i}": "laudo" for i in ("I", "II", "III", "IV", "V", "VI")}}),
}


def operations() -> list[Operation]:
    """Every operation of the OpenAPI document, with the names of its parameters and body fields."""
    spec = create_app({"TRAMITA_DATABASE_URL": "memory://"}, clock=pinned_clock).test_client().get(
        "/openapi.json").get_json()
    found = []
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            if "requestBody" in operation and "application/json" not in operation["requestBody"]["content"]:
                continue  # a file upload (POST /documents): its bytes, types and sizes are tests/test_documents.py's
            parameters = item.get("parameters", []) + operation.get("parameters", [])
            body: tuple[tuple[str, str], ...] = ()
            plausible: Any = {}
            if "requestBody" in operation:
                schema = operation["requestBody"]["content"]["application/json"]["schema"]
                body = tuple((name, _kind(spec, prop)) for name, prop in _resolved(spec, schema)["properties"].items())
                plausible = RECORDABLE[operation["operationId"]][1] if operation.get("operationId") in RECORDABLE \
                    else ordinary(spec, schema)
            found.append(Operation(method.upper(), path, operation.get("operationId"),
                                   tuple((p["name"], _kind(spec, p["schema"])) for p in parameters
                                         if p["in"] == "query"),
                                   tuple(p["name"] for p in parameters if p["in"] == "header"), body,
                                   json.dumps(plausible)))
    return found


def _resolved(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    return spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]] if "$ref" in schema else schema


def json_type(schema: dict[str, Any]) -> str | None:
    """A schema's type; in OpenAPI 3.1 a field that may be null lists "null" beside it, which is left out here."""
    kind = schema.get("type")
    return next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind


def _kind(spec: dict[str, Any], schema: dict[str, Any]) -> str:
    schema = _resolved(spec, schema)
    return schema.get("format") or json_type(schema) or ("number" if "anyOf" in schema else "any")


def ordinary(spec: dict[str, Any], schema: dict[str, Any]) -> Any:
    """An ordinary value for a schema (its required properties only, for an object): the part of a request a
    hostile value is then put into, so that it reaches the field it is aimed at (and often the domain)."""
    schema = _resolved(spec, schema)
    if "anyOf" in schema:
        return ordinary(spec, schema["anyOf"][0])
    if "enum" in schema:
        return schema["enum"][0]
    kind = json_type(schema)
    if kind == "object" and "properties" in schema:
        return {name: ordinary(spec, schema["properties"][name]) for name in schema.get("required", [])}
    if kind == "object":
        return {FEIJO: ordinary(spec, schema.get("additionalProperties") or {"type": "string"})}
    if kind == "array":
        return [ordinary(spec, schema["items"])]
    return {"integer": 1, "number": 1, "boolean": True}.get(kind, "2026-03-05" if schema.get("format") == "date"
                                                            else "1")


OPERATIONS = operations()


# ---------------------------------------------------------------------- hostile values

#: Whole values that broke the API or might: control characters and lone surrogates inside names, numbers and
#: digits it misread, dates and moments at or past the calendar's ends, LIKE wildcards, and their neighbours.
HOSTILE_TEXT = [
    "\x00", "Vila\x00", "\x01", "\x07", "\x1b", "\x7f", "\x85", "\x9f", "\r", "\n", "a\nb", "\t", "\u2028",
    "\ud800", "Vila \ud800", "\udbff", "\udc00x", "\udfff", "\ufeff", "\uffff",
    "%", "_", "\\", "%_%", "²", "\"²\"", "٣", "1_000", " 7 ", "-1", "0", "9223372036854775808", "9" * 30, "9" * 5000,
    "NaN", "nan", "Infinity", "-Infinity", "1e999", "1E+400000000", "1e-400", "0x10", "1/0", "0/0", "1/3", "-0",
    "", " ", "null", "true",
    "0001-01-01", "9999-12-31", "20261201", "2026-W49-2", "2026-02-30", "2026-13-01", "1899-12-31", "2200-01-01",
    "2026-03-05", "+2026-03-05", "2026-3-5", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00",
    "2026-04-01T00:00:00", "2026-04-01T00:00:00Z", "2026-04-01T24:00:00Z", "2026-04-01T00:00:00+24:00",
    "20260401T000000Z", "2026-04-01T00:00:00.1234567890123Z", "2026-04-01 00:00:00Z",
]
#: Longer than a name, a reference, free text; and, in a body only, larger than the body limit. (A query string or
#: a path this long never reaches a real server: gunicorn refuses a request line over 4,094 bytes.)
#: (Sizes, so that Hypothesis does not spell the strings out when it describes a strategy.)
LONG_STRINGS = [("V", 201), ("V", 501), ("V", 10_001)]
HUGE_STRINGS = [("ã", 300_000), ("V", 2_000_000)]


def text(*, huge: bool = False) -> st.SearchStrategy[str]:
    """A hostile value whole, or ordinary text with hostile values inside it, or a long string."""
    whole = st.sampled_from(HOSTILE_TEXT)
    mixed = st.lists(st.one_of(st.text(max_size=6), whole), min_size=1, max_size=4).map("".join)
    long = st.sampled_from(LONG_STRINGS + (HUGE_STRINGS if huge else [])).map(lambda size: size[0] * size[1])
    return st.one_of(whole, mixed, long)


NUMBERS = st.one_of(st.integers(), st.integers(min_value=10**18, max_value=10**60), st.floats(allow_nan=False,
                    allow_infinity=False), st.sampled_from([2**63, -(2**63) - 1, 1e308, -1e308, 5e-324, -1, 0]),
                    st.just(4000).map(lambda digits: 10**digits))


DAYS = [v for v in HOSTILE_TEXT if v[:1].isdigit() and ("-" in v or len(v) == 8) and "T" not in v]
MOMENTS = [v for v in HOSTILE_TEXT if "T" in v and v[:1].isdigit()]
DIGITS = ["-1", "0", "9223372036854775808", "9" * 30, "9" * 5000, "²", "٣", "1_000", " 7 ", "1e3", "0x10"]


def hostile(kind: str, *, huge: bool = False) -> st.SearchStrategy[Any]:
    """A hostile value for a field of a kind (its dates at the calendar's ends, its digits misread...), or any."""
    aimed = {"date": st.sampled_from(DAYS), "date-time": st.sampled_from(MOMENTS),
             "integer": st.sampled_from(DIGITS) | NUMBERS, "number": st.sampled_from(HOSTILE_TEXT) | NUMBERS,
             "string": text(huge=huge)}.get(kind)
    anything = json_value() if huge else text()
    return anything if aimed is None else st.one_of(aimed, aimed, anything)


def nested(depth: int) -> Any:
    value: Any = 1
    for level in range(depth):
        value = [value] if level % 2 else {"x": value}
    return value


def json_value() -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), NUMBERS, text(huge=True))
    return st.one_of(scalars, st.sampled_from([33, 200]).map(nested),
                     st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                         st.one_of(st.text(max_size=5), text()), inner, max_size=3), max_leaves=6))


def body_for(operation: Operation) -> st.SearchStrategy[bytes]:
    """A body: an ordinary one with one to three of its fields given hostile values (or none: the ordinary body
    with a hostile header), hostile fields only, any hostile JSON, or something that is no JSON body at all."""
    fields = st.lists(st.sampled_from(operation.body), max_size=3, unique=True).flatmap(
        lambda chosen: st.fixed_dictionaries({name: hostile(kind, huge=True) for name, kind in chosen}))
    plausible = fields.map(lambda hostile: {**json.loads(operation.plausible), **hostile})
    raw = st.sampled_from(["deep", b'{"occurred_on": NaN}', b'{"x": Infinity}', "digits", b"\xff\xfe",
                           b'{"a": "\\ud800"', b"", b"{", b"null", "padded"]).map(_raw)
    return st.sampled_from(["plausible", "plausible", "plausible", "fields", "value", "raw"]).flatmap(
        lambda kind: raw if kind == "raw" else {"plausible": plausible, "fields": fields,
                                                "value": json_value()}[kind].map(_encoded))


def _raw(kind: bytes | str) -> bytes:
    """A body no encoder writes: 100,000 levels deep, a 5,000-digit number, valid JSON padded past the limit."""
    return {"deep": b"[" * 100_000 + b"]" * 100_000, "digits": b'{"value": ' + b"9" * 5000 + b"}",
            "padded": b'{"occurred_on": "2026-03-05"}' + b" " * 1_100_000}.get(kind, kind)  # type: ignore[arg-type]


def _encoded(value: Any) -> bytes:
    """JSON text as a client might send it: lone surrogates written as `\\ud800` escapes, NaN as a bare word."""
    return json.dumps(value, ensure_ascii=True).encode()


def _quoted(value: str) -> str:
    return quote(value, safe="", errors="surrogatepass")


#: What a header value can carry at all (Latin-1, one line): the test client refuses anything else itself.
HEADER_CHARACTERS = st.characters(max_codepoint=255, exclude_characters="\r\n")
IF_MATCH = st.one_of(st.sampled_from(['"1"', "*", '"²"', '"' + "1" * 5000 + '"', 'W/"1"', '"-1"', "1", '"1", "2"',
                                      '""', '"9223372036854775808"', "", "\xa0\"1\"", '"1"\t']),
                     st.text(HEADER_CHARACTERS, max_size=12))


@st.composite
def requests(draw: st.DrawFn, operation: Operation, case: str) -> dict[str, Any]:
    """The parts of one request: its path, query string, headers and body."""
    path = operation.path
    for name, default in (("case_ref", case), ("ibge_code", FEIJO)):
        if "{" + name + "}" in path:
            value = draw(st.sampled_from([default, default, None]).flatmap(
                lambda chosen: st.just(chosen) if chosen else text()))
            path = path.replace("{" + name + "}", _quoted(value) or "x")
    chosen = draw(st.lists(st.sampled_from(operation.query or (("unknown", "string"),)), min_size=bool(
        operation.query), max_size=3, unique=True))
    query = {name: draw(hostile(kind)) for name, kind in chosen}
    query_string = "&".join(f"{_quoted(k)}={_quoted(str(v))}" for k, v in query.items())
    headers = {}
    if "If-Match" in operation.headers and draw(st.integers(0, 9)) != 5:
        headers["If-Match"] = draw(IF_MATCH)
    if "Idempotency-Key" in operation.headers and draw(st.booleans()):
        headers["Idempotency-Key"] = draw(st.one_of(st.just("fuzz"), st.text(HEADER_CHARACTERS, max_size=300)))
    body = draw(body_for(operation)) if operation.method == "POST" else None
    content_type = draw(st.sampled_from(["application/json"] * 10 + ["text/plain", "application/json; charset=latin-1",
                                                                    "application/x-www-form-urlencoded"]))
    return {"path": path, "query_string": query_string, "headers": headers, "data": body,
            "content_type": content_type}


# ---------------------------------------------------------------------- the API under fuzz

@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def fuzzed(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ApiHarness, str]]:
    """The API on each store (a hostile value that got past the edge could break PostgreSQL only: a U+0000)."""
    with harness_on(request.param, request, tmp_path_factory.mktemp("fuzz")) as api:
        api.app.subscription_keys = SubscriptionKeys(b"fuzz" * 8)  # subscriptions on, as in a deployment
        case = api.open_case("assembly-mesa", date(2026, 3, 2), **voters_petition())["case_id"]
        api.projector.catch_up()
        yield api, case


def role_for(api: ApiHarness, operation: Operation) -> tuple[str, str | None]:
    """A body competent for the operation's act (the first the statute names), or an auditor for a read."""
    if operation.method == "GET":
        return "auditor", None
    if operation.path.startswith(("/subscriptions", "/feeds")):  # not an act: any body subscribes (to its own)
        return "ibge", None
    if operation.operation_id in RECORDABLE:
        return RECORDABLE[operation.operation_id][0], None
    _, competent = bodies_competent_for(api.app.statute, api.app.today(), operation.operation_id)
    role = competent[0]
    return role, FEIJO if role in MUNICIPAL_ROLES else None


def assert_clean_answer(api: ApiHarness, response: Any, recorded_before: int) -> None:  # noqa: ANN401
    status = response.status_code
    assert status < 500, response.get_data(as_text=True)[:500]
    if status >= 400:
        assert response.mimetype == "application/problem+json", (status, response.mimetype)
        problem = response.get_json()
        assert {"type", "title", "status", "detail"} <= set(problem) and problem["status"] == status, problem
        assert api.notifications() == recorded_before, f"a refused request ({status}) recorded something"


@pytest.mark.parametrize("operation", OPERATIONS, ids=str)
def test_hostile_requests_to_every_operation_get_no_server_error_and_refused_ones_record_nothing(
        fuzzed: tuple[ApiHarness, str], operation: Operation) -> None:
    api, case = fuzzed
    headers = api.headers(*role_for(api, operation))

    @SETTINGS
    @given(request=requests(operation, case))
    def send(request: dict[str, Any]) -> None:
        before = api.notifications()
        response = api.client.open(request["path"], method=operation.method, query_string=request["query_string"],
                                   headers={**headers, **request["headers"]}, data=request["data"],
                                   content_type=request["content_type"] if request["data"] is not None else None)
        assert_clean_answer(api, response, before)

    send()


def test_every_operation_of_the_document_is_fuzzed() -> None:
    """The list comes from the OpenAPI document: the writes (each act) and the reads are all in it."""
    ids = {operation.operation_id for operation in OPERATIONS}
    assert {"petition-filed", "figure-recorded", "requisition-issued", "case-archived"} <= ids
    assert {str(o) for o in OPERATIONS} >= {"GET /cases", "GET /alerts", "GET /cases/{case_ref}",
                                            "GET /municipalities/{ibge_code}", "GET /health"}
