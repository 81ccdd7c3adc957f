"""Hostile input at the edge of the HTTP API: every request an outside attacker answered 500 (or got recorded) is
now a clean 4xx problem+json naming the field at fault, and records nothing; the limits are the documented ones;
and an idempotent retry is answered from its receipt even when its If-Match has gone stale, also under a race.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import pytest

from api.app import settings_from
from tramita.cli import main
from api.body import DEFAULT_MAX_BODY_BYTES, MAX_JSON_DEPTH
from api.errors import MAX_FAULTS_LISTED
from api.fields import MAX_FREE_TEXT_CHARS, MAX_ITEMS, MAX_NAME_CHARS, MAX_REFERENCE_CHARS, MAX_SIGNATURES
from domain.demo import FEIJO
from tests.api_client import ApiHarness, harness_on
from tests.test_api import voters_petition
from tests.test_api_serve import created_token

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
REQUISITION = {"occurred_on": "2026-03-05", "body": "ibge", "items": ["art-4"]}
#: The tokens the rows send: (role, municipality).
ROLES = {role: (role, None) for role in ("assembly-mesa", "ibge", "auditor", "governor")} | {
    "council": ("council", FEIJO)}


@dataclass
class Edge:
    """A seeded API with one voters' creation case at version 1, projected (so that lists find it)."""

    api: ApiHarness
    case: str

    def post(self, path: str, role: str = "assembly-mesa", *, body: Any = None, raw: bytes | str | None = None,
             content_type: str = "application/json", **headers: str):  # noqa: ANN201
        data = raw if raw is not None else json.dumps(body)
        return self.api.client.post(path.format(case=self.case), data=data, content_type=content_type,
                                    headers=self.api.headers(*ROLES[role], **headers))

    def act(self, body: Any = None, *, raw: bytes | str | None = None, **headers: str):  # noqa: ANN201
        headers.setdefault("If-Match", '"1"')
        return self.post("/cases/{case}/acts/requisition-issued", body=body, raw=raw, **headers)


@pytest.fixture(scope="module", params=BACKENDS)
def edge(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Edge]:
    """One API per backend for the whole module: every row below records nothing, so they can share it."""
    with harness_on(request.param, request, tmp_path_factory.mktemp("edge")) as api:
        case = api.open_case("assembly-mesa", date(2026, 3, 2), **voters_petition())["case_id"]
        api.projector.catch_up()
        for role in ROLES.values():  # issued now, so that no row's count of notifications includes issuing one
            api.token(*role)
        yield Edge(api, case)


def assert_problem(response, status: int) -> dict:  # noqa: ANN001
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True)[:500])
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert {"type", "title", "status", "detail"} <= set(body) and body["status"] == status
    return body


# ---------------------------------------------------------------------- every request that was a 500

def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def petition(**changes: Any) -> dict[str, Any]:
    return {"occurred_on": "2026-03-03", **voters_petition(), **changes}


def figure(value: Any) -> dict[str, Any]:
    return {"occurred_on": "2026-03-02", "figure": "area_km2", "value": value, "as_of": "2026-01-01",
            "source": "IBGE"}


@dataclass(frozen=True)
class Hostile:
    """One hostile request: what is sent (given the Edge), the status it gets, and the field it names."""

    name: str
    send: Callable[[Edge], Any]
    status: int
    field: str | None
    extra: dict[str, Any] = field(default_factory=dict)


HOSTILE = [
    Hostile("JSON nested 100,000 deep", lambda e: e.act(raw=deep(100_000)), 400, "body"),
    Hostile("JSON nested 100,000 deep, with an Idempotency-Key",
            lambda e: e.act(raw=deep(100_000), **{"Idempotency-Key": "deep"}), 400, "body"),
    Hostile(f"JSON nested {MAX_JSON_DEPTH + 1} deep in a field",
            lambda e: e.act(raw=json.dumps({**REQUISITION, "items": ["x"]})[:-1] + ', "x": '
                        + deep(MAX_JSON_DEPTH) + "}"), 400, "body"),
    Hostile("an escaped lone surrogate in a proposed name",
            lambda e: e.post("/cases", raw=json.dumps(petition(proposed_name="Vila \ud800")),
                             **{"Idempotency-Key": "s"}),
            422, "proposed_name"),
    Hostile("alerts since 0001-01-01T00:00:00+14:00 (before the first UTC moment)",
            lambda e: e.api.get("/alerts?since=0001-01-01T00:00:00%2B14:00"), 422, "since"),
    Hostile("alerts since 9999-12-31T23:59:59-14:00 (after the last UTC moment)",
            lambda e: e.api.get("/alerts?since=9999-12-31T23:59:59-14:00"), 422, "since"),
    Hostile("a page of cases at offset 2**63", lambda e: e.api.get("/cases?offset=9223372036854775808"), 422,
            "offset"),
    Hostile("a case at version 2**63", lambda e: e.api.get("/cases/{case}?version=9223372036854775808".format(
        case=e.case)), 422, "version"),
    Hostile('a figure value "NaN"', lambda e: e.post(f"/municipalities/{FEIJO}/figures", "ibge", body=figure("NaN")),
            422, "value"),
    Hostile('a figure value "Infinity"',
            lambda e: e.post(f"/municipalities/{FEIJO}/figures", "ibge", body=figure("Infinity")), 422, "value"),
    Hostile("a figure value 1e999 (beyond a float)",
            lambda e: e.post(f"/municipalities/{FEIJO}/figures", "ibge", raw=json.dumps(figure(0)).replace(
                '"value": 0', '"value": 1e999')), 422, "value"),
    Hostile('a figure value "1E+400000000" (a huge exponent)',
            lambda e: e.post(f"/municipalities/{FEIJO}/figures", "ibge", body=figure("1E+400000000")), 422, "value"),
    Hostile("a bare NaN (not JSON)",
            lambda e: e.post(f"/municipalities/{FEIJO}/figures", "ibge", raw=json.dumps(figure(0)).replace(
                '"value": 0', '"value": NaN')), 400, "body"),
    Hostile("a count of 5,000 digits",
            lambda e: e.post("/cases/{case}/acts/council-decree-recorded", "council", raw=json.dumps(
                {"occurred_on": "2026-03-05", "municipality": FEIJO, "decree": "D", "seats": 0, "yes_votes": 1})
                .replace('"seats": 0', '"seats": ' + "9" * 5000), **{"If-Match": '"1"'}), 422, "seats"),
    Hostile('If-Match of a non-ASCII digit ("²")', lambda e: e.act(REQUISITION, **{"If-Match": '"²"'}), 400,
            "If-Match"),
    Hostile("If-Match of 5,000 digits", lambda e: e.act(REQUISITION, **{"If-Match": '"' + "1" * 5000 + '"'}), 400,
            "If-Match"),
    Hostile("If-Match of a weak ETag", lambda e: e.act(REQUISITION, **{"If-Match": 'W/"1"'}), 400, "If-Match"),
    Hostile("a proposed name of 10 MB", lambda e: e.post("/cases", body=petition(proposed_name="V" * 10_000_000)),
            413, "body", {"limit": DEFAULT_MAX_BODY_BYTES}),
    Hostile(f"a proposed name of {MAX_NAME_CHARS + 1} characters",
            lambda e: e.post("/cases", body=petition(proposed_name="V" * (MAX_NAME_CHARS + 1))), 422, "proposed_name"),
    Hostile("occurred_on=20261201 (ISO basic format)",
            lambda e: e.act({**REQUISITION, "occurred_on": "20260305"}), 422, "occurred_on"),
    Hostile("occurred_on=2026-W10-4 (a week date)",
            lambda e: e.act({**REQUISITION, "occurred_on": "2026-W10-4"}), 422, "occurred_on"),
    Hostile("a U+0000 in a body", lambda e: e.act({**REQUISITION, "body": "ibge\u0000"}), 422, "body"),
    Hostile("a U+0000 in a proposed name", lambda e: e.post("/cases", body=petition(proposed_name="Vila\u0000")),
            422, "proposed_name"),
    Hostile("a C1 control (U+0085) in a signature's title", lambda e: e.post("/cases", body=petition(
        signatures=[{**s, "title": s["title"] + "\u0085"} for s in voters_petition()["signatures"]])), 422,
        "signatures.0.title"),
    Hostile("a newline in a name (names are one line)", lambda e: e.post("/cases", body=petition(
        proposed_name="Vila\nTarumã")), 422, "proposed_name"),
    Hostile("a DEL in a refusal's reason (free text takes newlines and tabs only)",
            lambda e: e.post("/cases/{case}/acts/requisition-refused", body={
                "occurred_on": "2026-03-05", "requisition": "R1", "reason": "não\x7f"}, **{"If-Match": '"1"'}),
            422, "reason"),
    Hostile("a control character in a document's key", lambda e: e.post("/cases", body=petition(
        documents={"art-4-I\u0007": "doc"})), 422, "documents.art-4-I\u0007.key"),
    Hostile("a lone surrogate in an unknown field's name (echoed back escaped)",
            lambda e: e.act(raw=json.dumps({**REQUISITION, "x\ud800": 1})), 422, "x\\ud800"),
    Hostile("a U+0000 in a query string", lambda e: e.api.get("/cases?municipality=%00"), 422, "municipality"),
    Hostile("a U+0000 in a search", lambda e: e.api.get("/municipalities?text=Feij%00"), 422, "text"),
    Hostile("a body that is not JSON", lambda e: e.act(raw="occurred_on=2026-03-05"), 400, "body"),
    Hostile("a body that is not UTF-8", lambda e: e.act(raw=b'{"body": "\xff"}'), 400, "body"),
    Hostile("a body of another content type",
            lambda e: e.post("/cases/{case}/acts/requisition-issued", raw="body=ibge", content_type="text/plain",
                             **{"If-Match": '"1"'}), 415, "Content-Type"),
    Hostile("a JSON body in another charset",
            lambda e: e.post("/cases/{case}/acts/requisition-issued", raw=json.dumps(REQUISITION),
                             content_type="application/json; charset=latin-1", **{"If-Match": '"1"'}),
            415, "Content-Type"),
    Hostile("a JSON array instead of an object", lambda e: e.act([REQUISITION]), 422, "body"),
    Hostile("a key given twice in one object (which would count is a guess)",
            lambda e: e.post(f"/municipalities/{FEIJO}/figures", "ibge", raw=json.dumps(figure("420")).replace(
                '"value": "420"', '"value": "420", "value": "999"')), 400, "body"),
    Hostile("a key given twice in a nested object", lambda e: e.act(raw=json.dumps(
        {**REQUISITION, "attachments": [{"sha256": "a"}]}).replace('"sha256": "a"', '"sha256": "a", "sha256": "b"')),
        400, "body"),
    Hostile("a query parameter given twice", lambda e: e.api.get("/cases?limit=1&limit=2"), 422, "limit"),
    Hostile("an as-of date sent to the export, which has no such view",
            lambda e: e.api.get("/cases/{case}/export?as_of=2026-01-01".format(case=e.case)), 422, "as_of"),
    Hostile("a parameter sent to the verification, which takes none",
            lambda e: e.api.get("/cases/{case}/verify?all=1".format(case=e.case)), 422, "all"),
    Hostile("a query parameter sent with an act", lambda e: e.post(
        "/cases/{case}/acts/requisition-issued?dry_run=1", body=REQUISITION, **{"If-Match": '"1"'}), 422, "dry_run"),
    Hostile("a zero-denominator share", lambda e: e.post("/cases/{case}/acts/law-enacted", "governor", body={
        "occurred_on": "2026-03-05", "law": "LC 1", "reintegration": {FEIJO: "1/0"}}, **{"If-Match": '"1"'}),
        422, f"reintegration.{FEIJO}.value"),
]


@pytest.mark.parametrize("hostile", HOSTILE, ids=[h.name for h in HOSTILE])
def test_a_hostile_request_is_a_4xx_problem_naming_the_field_and_records_nothing(edge: Edge, hostile: Hostile):
    before = edge.api.notifications()
    body = assert_problem(hostile.send(edge), hostile.status)
    assert body.get("field") == hostile.field, body
    assert {k: body.get(k) for k in hostile.extra} == hostile.extra
    assert edge.api.notifications() == before


@pytest.mark.parametrize(("field", "items", "most"), [
    ("municipalities", "1", MAX_ITEMS), ("signatures", "{}", MAX_SIGNATURES), ("documents", None, MAX_ITEMS)])
def test_a_list_or_mapping_of_too_many_items_is_refused_before_its_items_are_read(edge: Edge, field: str,
                                                                                items: str | None, most: int):
    """A 0.9 MB body of 300,000 empty signatures was read item by item for half a minute and answered with a
    100 MB problem naming each one; a worker grew by gigabytes under a few of them."""
    many = ",".join(f'"k{n}":"v"' for n in range(most + 1)) if items is None else ",".join([items] * (most + 1))
    rest = json.dumps({key: value for key, value in petition().items() if key != field})
    raw = rest[:-1] + f', "{field}": ' + ("{" + many + "}" if items is None else f"[{many}]") + "}"
    before = edge.api.notifications()
    body = assert_problem(edge.post("/cases", "governor", raw=raw), 422)
    assert body["field"] == field and f"{most:,}".replace(",", "") in body["detail"].replace(",", "")
    assert len(body["errors"]["json"]) == 1
    assert edge.api.notifications() == before


def test_a_body_of_many_bad_items_is_answered_with_its_first_faults_and_a_count_of_the_rest(edge: Edge):
    rest = json.dumps({key: value for key, value in petition().items() if key != "signatures"})
    raw = rest[:-1] + ', "signatures": [' + ",".join(["{}"] * 300) + "]}"
    before = edge.api.notifications()
    response = edge.post("/cases", "governor", raw=raw, **{"Accept-Language": "pt-BR"})
    body = assert_problem(response, 422)
    listed = sum(len(fields) for fields in body["errors"]["json"]["signatures"].values())
    assert listed == MAX_FAULTS_LISTED and body["field"] == "signatures.0.title"
    assert body["detail"].endswith(f"(e mais {900 - MAX_FAULTS_LISTED} falhas, não listadas)")
    assert len(response.data) < 20_000
    assert edge.api.notifications() == before


# ---------------------------------------------------------------------- what each limit lets through

def test_a_name_of_the_maximum_length_and_free_text_with_newlines_and_tabs_are_recorded(tmp_path):
    api = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}")
    try:
        longest = "Vila " + "V" * (MAX_NAME_CHARS - 5)
        body = voters_petition()
        body["areas"][0]["description"] = "a leste do rio\n\tconforme o memorial"
        opened = api.open_case("assembly-mesa", date(2026, 3, 2), **{**body, "proposed_name": longest})
        case = opened["case_id"]
        assert api.get(f"/cases/{case}").get_json()["proposed_name"] == longest
        api.act(case, "requisition-issued", "assembly-mesa", date(2026, 3, 5), body="ibge", items=["art-4"])
        refused = api.act(case, "requisition-refused", "assembly-mesa", date(2026, 3, 6), requisition="R1",
                          reason="não respondeu\n\tofício 12/2026")
        assert refused["version"] == 3
    finally:
        api.close()


def test_the_documented_limits_are_in_the_openapi_document_for_every_string_of_every_request(edge: Edge):
    """Every string a request schema reads has a maxLength (or a pattern bounding it, or an enum), so a new field
    cannot be added without a limit; names, references and free text have theirs."""
    spec = edge.api.client.get("/openapi.json").get_json()
    schemas = spec["components"]["schemas"]
    request_schemas = {ref.rsplit("/", 1)[1] for item in spec["paths"].values() for op in item.values()
                       if isinstance(op, dict) and "application/json" in op.get("requestBody", {}).get("content", {})
                       for ref in [op["requestBody"]["content"]["application/json"]["schema"]["$ref"]]}
    nested = {"Area", "Signature", "PopulationResult", "Attachment"}

    def strings(schema: dict, where: str) -> Iterator[tuple[str, dict]]:
        if schema.get("type") in ("string", ["string", "null"]):  # OpenAPI 3.1: null beside the type of a nullable
            yield where, schema
        for key in ("items", "additionalProperties"):
            if isinstance(schema.get(key), dict):
                yield from strings(schema[key], f"{where}[]")
        for branch in schema.get("anyOf", []):
            yield from strings(branch, where)

    found = {}
    for name in request_schemas | nested:
        for prop, schema in schemas[name]["properties"].items():
            for where, string in strings(schema, f"{name}.{prop}"):
                found[where] = string
                bounded = "maxLength" in string or "enum" in string or "format" in string or \
                    ("pattern" in string and "{" in string["pattern"])
                assert bounded, (where, string)
    assert found["Petition.proposed_name"]["maxLength"] == MAX_NAME_CHARS
    assert found["RequisitionIssued.body"]["maxLength"] == MAX_REFERENCE_CHARS
    assert found["RequisitionRefused.reason"]["maxLength"] == MAX_FREE_TEXT_CHARS
    assert "\\n" not in found["Petition.proposed_name"]["pattern"]
    path_parameters = spec["paths"]["/cases/{case_ref}"]["parameters"]
    assert {p["name"]: p["schema"].get("maxLength") for p in path_parameters} == {"case_ref": MAX_REFERENCE_CHARS}


@pytest.mark.parametrize("path", ["/cases/LC35%002026", "/cases/" + "9" * (MAX_REFERENCE_CHARS + 1),
                                  "/municipalities/12%0A00302", "/cases/LC35-2026-0001%C2%85/events"])
def test_a_path_parameter_with_a_control_character_or_too_long_matches_no_route(edge: Edge, path: str):
    assert_problem(edge.api.get(path), 404)


def test_text_search_takes_percent_and_underscore_literally(edge: Edge):
    """`?text=%` and `?text=_` matched every case and municipality: LIKE wildcards are now escaped."""
    for query in ("%", "_", "\\", "Feij_", "%Feij%"):
        cases = edge.api.get("/cases", query_string={"text": query})
        municipalities = edge.api.get("/municipalities", query_string={"text": query})
        assert (cases.status_code, cases.get_json()["items"]) == (200, []), query
        assert (municipalities.status_code, municipalities.get_json()["items"]) == (200, []), query
    assert [m["name"] for m in edge.api.get("/municipalities?text=feijo").get_json()["items"]] == ["Feijó"]
    assert [c["case_id"] for c in edge.api.get("/cases?text=taruma").get_json()["items"]] == [edge.case]


def test_a_page_offset_and_limit_take_ascii_digits_within_their_bounds(edge: Edge):
    assert edge.api.get("/cases?offset=1000000000").status_code == 200
    for query in ("offset=1000000001", "offset=-1", "offset=%C2%B2", "offset=1_0", "offset=%201", "limit=0",
                  "limit=501"):
        assert assert_problem(edge.api.get(f"/cases?{query}"), 422)["field"] == query.split("=")[0], query


def test_a_moment_is_iso_8601_with_a_time_zone_and_is_compared_in_utc(edge: Edge):
    assert edge.api.get("/alerts?since=2026-04-01T00:00:00Z").status_code == 200
    assert edge.api.get("/alerts?since=2026-04-01T09:30-05:00").status_code == 200
    assert edge.api.get("/alerts?since=2026-04-01T00:00:00.1234567%2B00:00").status_code == 200
    for moment in ("2026-04-01T00:00:00", "2026-04-01", "20260401T000000Z", "2026-04-01T25:00:00Z",
                   "1899-12-31T23:00:00Z", "2026-04-01T00:00:00%2B24:00"):
        assert assert_problem(edge.api.get(f"/alerts?since={moment}"), 422)["field"] == "since", moment


# ---------------------------------------------------------------------- the body limit

@pytest.fixture
def small_limit(tmp_path) -> Iterator[ApiHarness]:  # noqa: ANN001
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}", config={"TRAMITA_MAX_BODY_BYTES": "2048"})
    yield harness
    harness.close()


def test_a_body_over_the_limit_is_413_before_it_is_parsed_also_when_chunked(small_limit: ApiHarness):
    api = small_limit
    headers = api.headers("assembly-mesa")
    before = api.notifications()
    too_long = json.dumps(petition(proposed_name="V" * 3000))
    assert assert_problem(api.client.post("/cases", data=too_long, content_type="application/json",
                                          headers=headers), 413)["limit"] == 2048
    # Chunked, with no Content-Length (as gunicorn passes it on: a terminated stream), and not even JSON: refused
    # for its size after the limit + 1 bytes, before anything parses it.
    chunked = api.client.post("/cases", input_stream=io.BytesIO(b"[" * 100_000), content_type="application/json",
                              headers={**headers, "Transfer-Encoding": "chunked"},
                              environ_overrides={"wsgi.input_terminated": True})
    assert assert_problem(chunked, 413)["field"] == "body"
    assert api.notifications() == before
    fits = json.dumps(figure("420.5"))
    response = api.client.post(f"/municipalities/{FEIJO}/figures", data=fits, content_type="application/json",
                               headers=api.headers("ibge"))
    assert response.status_code == 201, response.get_json()


@pytest.mark.slow
def test_gunicorn_answers_a_chunked_body_over_the_limit_413(tmp_path, monkeypatch, capsys):
    """`tramita serve` as deployed: gunicorn decodes the chunks and ends the stream; the API stops reading after
    the limit + 1 bytes and answers 413."""
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{tmp_path / 'tramita.sqlite'}")
    monkeypatch.setenv("TRAMITA_MAX_BODY_BYTES", "4096")
    assert main(["migrate"]) == 0
    capsys.readouterr()
    _, token = created_token(capsys, "--role", "assembly-mesa", "--name", "Mesa")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "tramita", "serve", "--bind", f"127.0.0.1:{port}",
                               "--workers", "1"], env={**os.environ}, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120  # a loaded 2-core machine may take long to import and fork
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        chunks = (b"[" * 8192 for _ in range(8))  # 64 KiB in 8 chunks, no Content-Length
        connection.request("POST", "/cases", body=chunks, encode_chunked=True, headers={
            "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        response = connection.getresponse()
        problem = json.loads(response.read())
        assert (response.status, response.getheader("Content-Type")) == (413, "application/problem+json")
        assert (problem["field"], problem["limit"]) == ("body", 4096)
    finally:
        server.send_signal(signal.SIGTERM)
        output, _ = server.communicate(timeout=60)
    assert server.returncode == 0, output


@pytest.mark.parametrize("value", ["", "1 MiB", "-1", "0", "1e6", "²", "9" * 5000, str(64 * 1024 * 1024 + 1)])
def test_a_malformed_body_limit_is_refused_naming_its_variable(value: str):
    with pytest.raises(ValueError, match="TRAMITA_MAX_BODY_BYTES"):
        settings_from({"TRAMITA_MAX_BODY_BYTES": value})


def test_the_body_limit_defaults_to_one_mebibyte_and_is_read_from_the_environment():
    assert settings_from({})["max_body_bytes"] == DEFAULT_MAX_BODY_BYTES == 1024 * 1024
    assert settings_from({"TRAMITA_MAX_BODY_BYTES": "4096"})["max_body_bytes"] == 4096


# ---------------------------------------------------------------------- idempotent replay wins over If-Match

def test_a_retry_whose_if_match_went_stale_is_answered_from_its_receipt(tmp_path):
    api = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}")
    try:
        case = api.open_case("assembly-mesa", date(2026, 3, 2), **voters_petition())["case_id"]
        path = f"/cases/{case}/acts/requisition-issued"
        headers = api.headers("assembly-mesa", **{"If-Match": '"1"', "Idempotency-Key": "mesa-ibge-1"})
        first = api.client.post(path, json=REQUISITION, headers=headers)
        api.act(case, "requisition-issued", "assembly-mesa", date(2026, 3, 6), body="tre", items=["art-4"])
        before = api.notifications()
        retry = api.client.post(path, json=REQUISITION, headers=headers)  # If-Match "1": the case is at 3 now
        assert (retry.status_code, retry.get_json(), retry.headers["ETag"]) == (200, first.get_json(), '"2"')
        assert retry.headers["Idempotent-Replayed"] == "true"
        assert api.notifications() == before
    finally:
        api.close()


COPIES = 160


def race(send: Callable[[Any], Any], clients: list[Any]) -> list[Any]:
    """Send `COPIES` copies at once, spread over the clients (each on its own application), each on a thread."""
    start, answers, lock = threading.Barrier(COPIES), [], threading.Lock()

    def one(n: int) -> None:
        client = clients[n % len(clients)].test_client()
        start.wait(timeout=60)
        answer = send(client)
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(COPIES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    return answers


def two_workers(url: str) -> tuple[ApiHarness, ApiHarness]:
    """Two applications on one database, as two gunicorn workers are; the second shares the first's tokens."""
    first = ApiHarness(url)
    second = ApiHarness(url)
    second._tokens = first._tokens
    return first, second


def assert_one_act_every_copy_answered_alike(answers: list[Any], status: int) -> None:
    assert sorted({a.status_code for a in answers}) == [status], sorted(
        (a.status_code, a.get_data(as_text=True)[:200]) for a in answers if a.status_code != status)
    assert len({a.get_data() for a in answers}) == 1 and len({a.headers["ETag"] for a in answers}) == 1
    assert sum("Idempotent-Replayed" not in a.headers for a in answers) == 1


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_racing_copies_with_one_key_and_one_if_match_all_get_the_original_answer(new_database_url, backend):
    """160 copies of one request (one Idempotency-Key, one If-Match) used to give 3-6 of them 412: a copy that
    lost found the case moved on by the copy that won. Now one act is recorded and every copy gets its answer."""
    workers = two_workers(new_database_url(backend))
    try:
        api = workers[0]
        case = api.open_case("assembly-mesa", date(2026, 3, 2), **voters_petition())["case_id"]
        headers = api.headers("assembly-mesa", **{"If-Match": '"1"', "Idempotency-Key": "race-1"})
        before = api.notifications()
        answers = race(lambda client: client.post(f"/cases/{case}/acts/requisition-issued", json=REQUISITION,
                                                  headers=headers), [w.flask for w in workers])
        assert_one_act_every_copy_answered_alike(answers, 200)
        assert answers[0].headers["ETag"] == '"2"' and answers[0].get_json()["result"] == "R1"
        assert api.app.get_case(case).version == 2
        assert api.notifications() == before + 2  # the act and its receipt
    finally:
        for worker in workers:
            worker.close()


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_racing_copies_of_one_petition_with_one_key_open_one_case(new_database_url, backend):
    """A petition's copies that lose find its territory frozen by the one that won (Art. 38): they are answered
    from the winner's receipt too, not refused under Art. 38."""
    workers = two_workers(new_database_url(backend))
    try:
        api = workers[0]
        headers = api.headers("assembly-mesa", **{"Idempotency-Key": "petition-1"})
        body = petition()
        answers = race(lambda client: client.post("/cases", json=body, headers=headers), [w.flask for w in workers])
        assert_one_act_every_copy_answered_alike(answers, 201)
        assert answers[0].get_json()["number"] == "LC35-2026-0001"
        api.projector.catch_up()
        assert [c["number"] for c in api.get("/cases").get_json()["items"]] == ["LC35-2026-0001"]
    finally:
        for worker in workers:
            worker.close()


@pytest.mark.parametrize("path, content_type, role", [("/cases", "application/json", "assembly-mesa"),
                                                      ("/documents", "application/pdf", "ibge")])
def test_a_body_that_stops_coming_is_408_naming_the_body_and_records_nothing(edge: Edge, path, content_type, role):
    """Werkzeug reports a read of the body that fails as a disconnected client (a bare 400): it is the body that
    did not arrive, 408 naming it."""
    import io

    class Stalls(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:  # noqa: ANN001
            raise TimeoutError("the request was not read within its time")

    before = edge.api.notifications()
    response = edge.api.client.post(path, headers={**edge.api.headers(*ROLES[role]), "Content-Type": content_type,
                                                   "Content-Length": "100"},
                                    environ_overrides={"wsgi.input": io.BufferedReader(Stalls()),
                                                       "wsgi.input_terminated": True, "CONTENT_LENGTH": "100"})
    assert assert_problem(response, 408)["field"] == "body"
    assert edge.api.notifications() == before


class InvalidChunkSize(Exception):
    """What a server's HTTP parser raises from `wsgi.input` for a chunked body it cannot decode (gunicorn's own
    class of that name is no OSError either)."""


@pytest.mark.parametrize("path, content_type, role", [("/cases", "application/json", "assembly-mesa"),
                                                      ("/documents", "application/pdf", "ibge")])
def test_a_body_whose_framing_the_server_refuses_is_400_naming_the_body_and_records_nothing(
        edge: Edge, path, content_type, role):
    """A chunked body whose framing the server's parser refuses, as it reports it while the API reads
    `wsgi.input` (an exception of its own, not an OSError): the body is at fault, 400 naming it, not a 500."""

    class BrokenChunks(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:  # noqa: ANN001
            raise InvalidChunkSize("Invalid chunk size: 'zz'")

    before = edge.api.notifications()
    response = edge.api.client.post(path, headers={**edge.api.headers(*ROLES[role]), "Content-Type": content_type,
                                                   "Transfer-Encoding": "chunked"},
                                    environ_overrides={"wsgi.input": io.BufferedReader(BrokenChunks()),
                                                       "wsgi.input_terminated": True})
    problem = assert_problem(response, 400)
    assert (problem["field"], problem["type"].rsplit("/", 1)[1]) == ("body", "malformed-body")
    assert "chunk size" in problem["detail"]
    assert edge.api.notifications() == before
