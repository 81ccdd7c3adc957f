"""The HTTP contract: who may record what (401, 403), concurrency (If-Match: 428, 412), retries (Idempotency-Key),
problem+json refusals naming the article, the three ways to look back at a case, and the offline docs."""

from __future__ import annotations

import threading
from datetime import date, datetime, timezone

import pytest

from api.acts import ACTS
from domain.access import bodies_competent_for
from domain.application import Tramita
from domain.demo import FEIJO
from domain.voter_title import make_voter_title
from tests.api_client import ADMIN, ApiHarness

WRITES = ["petition-filed", "figure-recorded", "toponym-added", *(act.name for act in ACTS)]


@pytest.fixture
def api(tmp_path):  # noqa: ANN201
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}")
    yield harness
    harness.close()


def signatures(count: int) -> list[dict[str, str]]:
    return [{"title": make_voter_title(f"{20000000 + n:08d}", "24"), "zone": "5", "section": str(n % 7 + 1),
             "area": FEIJO} for n in range(count)]


def voters_petition(count: int = 32) -> dict:
    return {"kind": "creation", "municipalities": [FEIJO], "proposed_name": "Vila Tarumã",
            "signatures": signatures(count),
            "areas": [{"municipality": FEIJO, "area_km2": "1900", "description": "Vila Tarumã"}]}


def write_path(act: str, case: str) -> str:
    if act == "petition-filed":
        return "/cases"
    if act == "figure-recorded":
        return f"/municipalities/{FEIJO}/figures"
    if act == "toponym-added":
        return "/toponyms"
    return f"/cases/{case}/acts/{act}"


@pytest.fixture
def case(api: ApiHarness) -> str:
    return api.open_case("assembly-mesa", date(2026, 3, 2), **voters_petition())["case_id"]


def assert_problem(response, status: int) -> dict:  # noqa: ANN001
    assert response.status_code == status, response.get_json()
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert {"type", "title", "status", "detail"} <= set(body) and body["status"] == status
    return body


# ---------------------------------------------------------------------- who may record what

def wrong_role(app: Tramita, act: str) -> str:
    _, competent = bodies_competent_for(app.statute, app.today(), act)
    return next(role for role in app.token_roles() if role not in competent and role != "auditor")


@pytest.mark.parametrize("act", WRITES)
def test_an_act_sent_by_a_body_the_law_does_not_name_is_403_naming_the_competent_body_and_records_nothing(
        api, case, act):
    role = wrong_role(api.app, act)
    headers = api.headers(role, FEIJO if role in ("council", "mayor", "municipality") else None)
    before = api.notifications()
    response = api.client.post(write_path(act, case), json={"not": "even a valid body"}, headers=headers)
    body = assert_problem(response, 403)
    _, competent = bodies_competent_for(api.app.statute, api.app.today(), act)
    assert body["competent"] == competent and role in body["detail"] and body["article"]
    assert api.notifications() == before


@pytest.mark.parametrize("act", WRITES)
def test_an_auditor_reads_everything_and_records_nothing(api, case, act):
    headers = api.headers("auditor", **{"If-Match": '"1"'})
    before = api.notifications()
    response = api.client.post(write_path(act, case), json={"occurred_on": "2026-03-05"}, headers=headers)
    assert "auditor is not the competent body" in assert_problem(response, 403)["detail"]
    assert api.notifications() == before
    for path in (f"/cases/{case}", f"/cases/{case}/events", "/cases", "/deadlines", "/alerts", "/freezes",
                 "/municipalities"):
        assert api.get(path, role="auditor").status_code == 200


def test_a_request_without_a_token_is_401_before_its_body_is_read(api, case):
    response = api.client.post(f"/cases/{case}/acts/requisition-issued", data="{not json")
    assert_problem(response, 401)
    assert response.headers["WWW-Authenticate"] == 'Bearer realm="tramita"'
    assert_problem(api.client.get(f"/cases/{case}"), 401)
    assert_problem(api.client.get("/cases", headers={"Authorization": "Bearer trm_nothing_here"}), 401)


def test_a_revoked_token_no_longer_authenticates_and_its_revocation_is_recorded(api):
    issued = api.app.issue_token(ADMIN, name="clerk", role="tre")
    assert api.client.get("/cases", headers={"Authorization": f"Bearer {issued.token}"}).status_code == 200
    api.app.revoke_token(ADMIN, str(issued.id), reason="clerk left the TRE")
    assert_problem(api.client.get("/cases", headers={"Authorization": f"Bearer {issued.token}"}), 401)
    assert api.app.verify(issued.id).ok and api.app.repository.get(issued.id).revoke_reason == "clerk left the TRE"


def test_the_token_secret_is_stored_only_as_a_hash(api):
    issued = api.app.issue_token(ADMIN, name="mesa clerk", role="assembly-mesa")
    secret = issued.token.split("_", 2)[2]  # trm_<id>_<secret>; the secret itself may hold "_"
    stored = b"".join(record.state for record in api.app.recorder.select_events(issued.id))
    assert secret.encode() not in stored


def test_a_municipal_token_acts_only_for_its_own_municipality(api, case):
    response = api.client.post("/cases", json={"occurred_on": "2026-03-10", "kind": "district_creation",
                                               "municipalities": ["1200013"], "district": "Vila Nova"},
                               headers=api.headers("mayor", FEIJO))
    body = assert_problem(response, 403)
    assert "1200013" in body["detail"] and FEIJO in body["detail"]


# ---------------------------------------------------------------------- If-Match and retries

def test_an_act_without_if_match_is_428_and_with_a_stale_etag_is_412_and_records_nothing(api, case):
    body = {"occurred_on": "2026-03-05", "body": "ibge", "items": ["art-4"]}
    path = f"/cases/{case}/acts/requisition-issued"
    api.token("assembly-mesa")
    before = api.notifications()
    assert assert_problem(api.client.post(path, json=body, headers=api.headers("assembly-mesa")), 428)["field"] \
        == "If-Match"
    first = api.client.post(path, json=body, headers=api.headers("assembly-mesa", **{"If-Match": '"1"'}))
    assert first.status_code == 200 and first.headers["ETag"] == '"2"'
    stale = api.client.post(path, json=body, headers=api.headers("assembly-mesa", **{"If-Match": '"1"'}))
    assert "expected version 1, the case is at version 2" in assert_problem(stale, 412)["detail"]
    assert api.notifications() == before + 1


def test_a_retry_with_the_same_idempotency_key_returns_the_original_result_and_records_once(api, case):
    path, body = f"/cases/{case}/acts/requisition-issued", {"occurred_on": "2026-03-05", "body": "ibge",
                                                            "items": ["art-4"]}
    headers = api.headers("assembly-mesa", **{"If-Match": '"1"', "Idempotency-Key": "mesa-2026-03-05-ibge"})
    first = api.client.post(path, json=body, headers=headers)
    before = api.notifications()
    again = api.client.post(path, json=body, headers=headers)
    assert (again.status_code, again.get_json(), again.headers["ETag"]) == (200, first.get_json(), '"2"')
    assert again.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers
    assert api.notifications() == before
    other = api.client.post(path, json={**body, "body": "tre"}, headers=headers)
    assert assert_problem(other, 422)["field"] == "Idempotency-Key"
    assert api.notifications() == before


def test_an_idempotency_key_is_the_tokens_own(api, case):
    path, body = f"/cases/{case}/acts/requisition-issued", {"occurred_on": "2026-03-05", "body": "ibge",
                                                            "items": ["art-4"]}
    api.client.post(path, json=body,
                    headers=api.headers("assembly-mesa", **{"If-Match": '"1"', "Idempotency-Key": "k"}))
    other_clerk = api.app.issue_token(ADMIN, name="second mesa clerk", role="assembly-mesa").token
    response = api.client.post(path, json=body, headers={"Authorization": f"Bearer {other_clerk}",
                                                         "If-Match": '"2"', "Idempotency-Key": "k"})
    assert response.status_code == 200 and response.get_json()["version"] == 3


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_racing_copies_of_one_request_record_one_act_and_both_get_its_result(new_database_url, backend):
    from domain.access import IdempotentRequest
    from domain.acts import Actor
    from tests.stores import make_app

    url = new_database_url(backend)
    apps = [make_app(url), make_app(url, seed=False)]
    mesa = Actor("mesa", "assembly-mesa")
    opened = apps[0].open_case(mesa, date(2026, 3, 2), **voters_petition())
    request = IdempotentRequest(scope="token-1", key="retry-me", fingerprint="f" * 64, act="requisition-issued")
    start, results = threading.Barrier(2), []

    def send(app: Tramita) -> None:
        start.wait()
        results.append(app.idempotently(request, lambda: app.issue_requisition(
            opened.number, mesa, date(2026, 3, 5), body="ibge", items=["art-4"])))

    threads = [threading.Thread(target=send, args=(app,)) for app in apps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.replayed for r in results) == [False, True]
    assert {(r.version, r.result) for r in results} == {(2, "R1")}
    assert apps[0].get_case(opened.number).version == 2


# ---------------------------------------------------------------------- refusals and malformed requests

def test_a_refusal_under_the_law_is_problem_json_naming_the_article_and_the_figures_compared(api):
    api.token("assembly-mesa")
    before = api.notifications()
    response = api.client.post("/cases", json={"occurred_on": "2026-03-02", **voters_petition(29)},
                               headers=api.headers("assembly-mesa"))
    body = assert_problem(response, 422)
    assert body["article"] == "art-8" and body["figures"] == {"area": FEIJO, "required": 30, "found": 29}
    assert api.notifications() == before


def test_an_act_out_of_order_is_409_naming_the_article_that_orders_it(api, case):
    response = api.client.post(f"/cases/{case}/acts/result-communicated", json={"occurred_on": "2026-03-05"},
                               headers=api.headers("tre", **{"If-Match": '"1"'}))
    assert assert_problem(response, 409)["article"] == "art-14"


def test_a_malformed_body_is_422_listing_each_field_at_fault(api, case):
    response = api.client.post(f"/cases/{case}/acts/requisition-issued",
                               json={"occurred_on": "5 March", "items": [], "colour": "blue"},
                               headers=api.headers("assembly-mesa", **{"If-Match": '"1"'}))
    errors = assert_problem(response, 422)["errors"]["json"]
    assert set(errors) == {"occurred_on", "body", "items", "colour"}


def test_an_unknown_case_is_404_and_a_wrong_method_keeps_its_allow_header(api):
    assert_problem(api.get("/cases/LC35-2026-0999"), 404)
    token_id = api.app.issue_token(ADMIN, name="not a case", role="tre").id
    for path in ("", "/events", "/verify", "/export", "/deadlines"):
        assert_problem(api.get(f"/cases/{token_id}{path}"), 404)
    response = api.client.delete("/cases", headers=api.headers("auditor"))
    assert_problem(response, 405)
    assert set(response.headers["Allow"].split(", ")) >= {"GET", "POST"}


# ---------------------------------------------------------------------- looking back: as_of, version, recorded_before

def test_as_of_version_and_recorded_before_differ_when_an_act_is_recorded_late(api):
    api.clock.now = datetime(2026, 3, 2, 15, tzinfo=timezone.utc)
    case = api.open_case("assembly-mesa", date(2026, 3, 2), **voters_petition())["case_id"]
    api.clock.now = datetime(2026, 3, 5, 15, tzinfo=timezone.utc)
    requisition = api.act(case, "requisition-issued", "assembly-mesa", date(2026, 3, 5), body="ibge",
                          items=["art-4"])["result"]
    # The receipt happened on 9 March but the Mesa recorded it only on 20 April (the receipt and the Art. 10
    # deadline it opens: versions 3 and 4).
    api.clock.now = datetime(2026, 4, 20, 15, tzinfo=timezone.utc)
    api.act(case, "requisition-received", "assembly-mesa", date(2026, 3, 9), requisition=requisition)

    def version(query: str) -> int:
        response = api.get(f"/cases/{case}?{query}")
        assert response.status_code == 200, response.get_json()
        return response.get_json()["version"]

    assert version("as_of=2026-03-10") == 4  # the law's view: the receipt had happened by 10 March
    assert version("recorded_before=2026-04-01T00:00:00Z") == 2  # the system's view on 1 April: not yet known
    assert version("version=1") == 1
    assert version("as_of=2026-03-08") == 2 and version("recorded_before=2026-04-20T15:00:01Z") == 4
    assert api.get(f"/cases/{case}?as_of=2026-03-01").status_code == 404
    assert_problem(api.get(f"/cases/{case}?as_of=2026-03-10&version=1"), 422)
    assert_problem(api.get(f"/cases/{case}?version=9"), 422)


# ---------------------------------------------------------------------- read models and docs

def test_cases_are_listed_from_the_projection_with_filters_and_pages(api, case):
    api.open_case("assembly-mesa", date(2026, 3, 3), **voters_petition())
    api.projector.catch_up()
    page = api.get("/cases?limit=1").get_json()
    assert [c["number"] for c in page["items"]] == ["LC35-2026-0001"] and page["next_offset"] == 1
    last = api.get("/cases?limit=1&offset=1").get_json()
    assert [c["number"] for c in last["items"]] == ["LC35-2026-0002"]
    assert api.get(f"/cases?municipality={FEIJO}&kind=creation").get_json()["items"][0]["case_id"] == case
    assert api.get("/cases?kind=fusion").get_json()["items"] == []
    freezes = api.get(f"/freezes?municipality={FEIJO}&active=true").get_json()["items"]
    assert {f["case_number"] for f in freezes} == {"LC35-2026-0001", "LC35-2026-0002"}
    assert api.get(f"/municipalities/{FEIJO}").get_json()["frozen"] is True
    assert_problem(api.get("/municipalities/9999999"), 404)


def test_the_openapi_document_has_one_operation_per_act_each_with_its_own_request_schema(api):
    spec = api.client.get("/openapi.json").get_json()
    schemas = {}
    for act in ACTS:
        operation = spec["paths"][f"/cases/{{case_ref}}/acts/{act.name}"]["post"]
        assert operation["operationId"] == act.name and operation["summary"] == act.summary
        schemas[act.name] = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert "application/problem+json" in spec["components"]["responses"]["FORBIDDEN"]["content"]
    assert len(set(schemas.values())) >= len(ACTS) - 3  # acts with no content share the empty schema


def test_the_docs_are_served_from_the_package_and_work_offline(api):
    page = api.client.get("/docs")
    assert page.status_code == 200 and b"/docs/static/swagger-ui-bundle.js" in page.data
    assert b"http://" not in page.data and b"https://" not in page.data
    script = api.client.get("/docs/static/swagger-ui-bundle.js")
    assert script.status_code == 200 and len(script.data) > 100_000


def test_health_answers_without_a_token_and_shows_the_projections_positions(api):
    api.projector.catch_up()
    body = api.client.get("/health").get_json()
    assert body["status"] == "ok" and body["projections"]["cases"] == body["notifications"] > 0


def test_alerts_the_scheduler_raised_are_read_through_the_api_since_a_moment(api, case):
    from scheduler.scan import scan

    api.clock.now = datetime(2026, 3, 9, 15, tzinfo=timezone.utc)
    requisition = api.act(case, "requisition-issued", "assembly-mesa", date(2026, 3, 5), body="ibge",
                          items=["art-4"])["result"]
    api.act(case, "requisition-received", "assembly-mesa", date(2026, 3, 9), requisition=requisition)
    # Received Mon 9 March: 30 days -> Wed 8 April (Art. 10). The IBGE never answers.
    api.clock.now = datetime(2026, 4, 9, 15, tzinfo=timezone.utc)
    scan(api.app, api.store, thresholds=(5, 1), projector=api.projector)
    api.projector.catch_up()  # what the running projector does
    alerts = api.get("/alerts?since=2026-04-09T00:00:00Z").get_json()["items"]
    assert [(a["kind"], a["article"], a["who"], a["due_on"], a["days_overdue"]) for a in alerts] == [
        ("missed", "art-10", "ibge", "2026-04-08", 1)]
    assert api.get("/alerts?since=2026-04-10T00:00:00Z").get_json()["items"] == []
    assert api.get("/alerts", query_string={"since": "2026-04-09T09:59:59-05:00"}).get_json()["total"] == 1
    missed = api.get("/deadlines?status=missed").get_json()["items"]
    assert [(d["deadline"], d["days_overdue"]) for d in missed] == [(alerts[0]["deadline"], 1)]


def test_an_act_answers_what_it_decided_and_its_version_and_a_retry_gets_the_same_events(api, case):
    """The answer carries the act's events on the case (Art. 10: the receipt opens the 30-day answer deadline),
    not the whole case, and a retry with the same Idempotency-Key reads the same events back."""
    issued = api.act(case, "requisition-issued", "assembly-mesa", date(2026, 3, 5), body="ibge", items=["art-4"])
    path, body = f"/cases/{case}/acts/requisition-received", {"occurred_on": "2026-03-09",
                                                              "requisition": issued["result"]}
    headers = api.headers("assembly-mesa", **{"If-Match": '"2"', "Idempotency-Key": "mesa-2026-03-09-r1"})
    first = api.client.post(path, json=body, headers=headers)
    answer = first.get_json()
    assert "case" not in answer and (answer["case_id"], answer["version"]) == (case, 4)
    assert [(e["sequence"], e["type"], e["article"]) for e in answer["events"]] == [
        (3, "Case.RequisitionReceived", "art-10"), (4, "Case.DeadlineOpened", "art-10")]
    assert first.headers["ETag"] == '"4"' and first.headers["Location"] == f"/cases/{case}"
    again = api.client.post(path, json=body, headers=headers)
    assert again.get_json() == answer and again.headers["Idempotent-Replayed"] == "true"
    timeline = api.get(f"/cases/{case}/events").get_json()
    assert answer["events"] == timeline[2:4]


@pytest.mark.parametrize(("occurred_on", "status"), [("2026-11-29", 201), ("2026-11-30", 201), ("2026-12-01", 422)])
def test_a_registry_figure_dated_after_today_in_rio_branco_is_refused_like_every_act(api, occurred_on, status):
    """Art. 4 par. ún.: a figure is recorded by an act, and no act has a legal date in the future (the harness's
    clock reads 2026-11-30 15:00 UTC, 11:00 in Rio Branco): the day before and the day itself are recorded, the
    next day is refused naming occurred_on, and nothing is recorded."""
    headers = api.headers("ibge")  # the token is issued (an event) before counting
    before = api.notifications()
    response = api.client.post(f"/municipalities/{FEIJO}/figures", headers=headers, json={
        "occurred_on": occurred_on, "figure": "population", "value": 9000, "as_of": "2026-11-29",
        "source": "IBGE, estimativa 2026"})
    assert response.status_code == status, response.get_json()
    if status == 422:
        problem = assert_problem(response, 422)
        assert problem["field"] == "occurred_on" and "2026-12-01 is in the future (today is 2026-11-30)" in \
            problem["detail"]
        assert api.notifications() == before
    else:
        assert api.notifications() == before + 1


BOA_ESPERANCA = {"occurred_on": "2026-11-23", "name": "Boa Esperança do Norte", "uf": "MT", "ibge_code": "5101837",
                 "source": "IBGE: município instalado em 2025-01-01"}


def test_a_municipality_the_ibge_adds_over_the_api_is_then_an_existing_name_under_art_17(api):
    """Art. 17 par. ún.: a municipality installed after the shipped IBGE list is added by the IBGE's act; the list
    that judges names then holds it (accents and case aside), and `GET /toponyms` shows it with its source."""
    response = api.client.post("/toponyms", json=BOA_ESPERANCA, headers=api.headers("ibge"))
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["act"] == "toponym-added" and response.headers["Location"] == "/toponyms"
    assert [t.uf for t in api.app.toponyms().same_name("BOA ESPERANCA DO NORTE")] == ["MT"]
    listed = api.get("/toponyms").get_json()
    assert listed["added"] == [{k: BOA_ESPERANCA[k] for k in ("name", "uf", "ibge_code", "source")}]
    assert listed["shipped"] == len(api.app.toponyms()) - 1 and listed["version"].endswith("+1")


@pytest.mark.parametrize("field, value", [("uf", "XX"), ("uf", "mt"), ("ibge_code", "1200013"),
                                          ("ibge_code", "510183"), ("ibge_code", "51018370"),
                                          ("ibge_code", "５101837"), ("name", " "), ("source", "")])
def test_a_name_added_with_a_state_or_code_the_ibge_list_does_not_know_is_refused_naming_the_field(api, field, value):
    headers = api.headers("ibge")
    before = api.notifications()
    response = api.client.post("/toponyms", json={**BOA_ESPERANCA, field: value}, headers=headers)
    problem = assert_problem(response, 422)
    assert problem["field"] == field or field in str(problem.get("errors")), problem
    assert api.notifications() == before


def test_a_district_finding_recorded_by_a_body_art_32_does_not_name_is_refused_citing_art_32(api):
    """Art. 32: the IBGE finds Art. 31 I and II for a district (the PGE and the SECTMA find III); the TRE's
    finding of Art. 31-I is refused under Art. 32, not under Art. 4 par. ún. (the creation article), and records
    nothing; the IBGE's is recorded."""
    opened = api.client.post("/cases", json={"occurred_on": "2026-03-10", "kind": "district_creation",
                                             "municipalities": [FEIJO], "district": "Vila Nova"},
                             headers=api.headers("mayor", FEIJO))
    assert opened.status_code == 201, opened.get_json()
    case, finding = opened.get_json()["case_id"], {"item": "art-31-I", "value": 320, "document": "Laudo 1/2026"}
    api.token("tre")
    before = api.notifications()
    refused = api.client.post(f"/cases/{case}/acts/finding-recorded", json={"occurred_on": "2026-03-12", **finding},
                              headers=api.headers("tre", **{"If-Match": '"1"'}))
    problem = assert_problem(refused, 403)
    assert problem["article"] == "art-32" and "ibge" in problem["detail"]
    assert api.notifications() == before
    recorded = api.act(case, "finding-recorded", "ibge", date(2026, 3, 12), **finding)
    assert [e["article"] for e in recorded["events"]] == ["art-31-I"]


def test_a_creation_finding_recorded_by_a_body_art_4_does_not_name_is_refused_citing_art_4(api, case):
    """Art. 4 par. ún.: the IBGE finds Art. 4-I (population); the TRE's finding of it is refused under Art. 4
    par. ún."""
    refused = api.client.post(f"/cases/{case}/acts/finding-recorded", headers=api.headers("tre", **{"If-Match": '"1"'}),
                              json={"occurred_on": "2026-03-12", "item": "art-4-I", "value": 2100,
                                    "document": "Laudo 2/2026"})
    assert assert_problem(refused, 403)["article"] == "art-4-par-unico"


def district_signatures(count: int, district: str, first: int) -> list[dict[str, str]]:
    return [{"title": make_voter_title(f"{first + n:08d}", "24"), "zone": "5", "section": str(n % 7 + 1),
             "area": district} for n in range(count)]


def two_districts_petition(sede: int, envira: int) -> dict:
    return {"occurred_on": "2026-03-02", "kind": "creation", "municipalities": [FEIJO], "proposed_name": "Vila Tarumã",
            "areas": [{"municipality": FEIJO, "district": "Sede", "area_km2": "900", "description": "margem esquerda"},
                      {"municipality": FEIJO, "district": "Envira", "area_km2": "1000", "description": "rio Envira"}],
            "signatures": district_signatures(sede, "Sede", 30000000) + district_signatures(envira, "Envira", 31000000)}


def test_a_voters_petition_over_two_districts_with_30_signatures_in_each_is_accepted_and_counted_per_district(api):
    """Art. 8 par. ún.: an area spanning two districts of Feijó needs 30 voters in each; 30 and 30 open the case,
    and the case shows the count of each district."""
    opened = api.client.post("/cases", json=two_districts_petition(30, 30), headers=api.headers("assembly-mesa"))
    assert opened.status_code == 201, opened.get_json()
    case = api.get(f"/cases/{opened.get_json()['case_id']}").get_json()
    assert case["signatures_per_area"] == {f"{FEIJO}/Sede": 30, f"{FEIJO}/Envira": 30}
    assert [a["district"] for a in case["areas"]] == ["Sede", "Envira"] and case["signature_count"] == 60


def test_a_voters_petition_over_two_districts_with_29_signatures_in_one_is_refused_under_art_8_par_unico(api):
    """Art. 8 par. ún.: 30 in the Sede and 29 in the Envira district: refused naming the Envira district, with the
    count found and required, and nothing recorded."""
    headers = api.headers("assembly-mesa")
    before = api.notifications()
    refused = api.client.post("/cases", json=two_districts_petition(30, 29), headers=headers)
    problem = assert_problem(refused, 422)
    assert problem["article"] == "art-8-par-unico" and f"{FEIJO}/Envira has 29 valid signatures" in problem["detail"]
    assert problem["figures"] == {"area": f"{FEIJO}/Envira", "required": 30, "found": 29}
    assert api.notifications() == before
