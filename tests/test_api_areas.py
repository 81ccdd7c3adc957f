"""Art. 1-I and 1-III over HTTP: a dismemberment that exchanges parcels is judged on each municipality's net area,
and the law moves the registry's areas by those nets."""

from __future__ import annotations

from datetime import date

import pytest

from tests.api_client import ApiHarness
from tests.test_api import assert_problem

XAPURI, CAPIXABA = "1200708", "1200179"
OPENED = date(2026, 3, 2)


@pytest.fixture
def api(tmp_path):  # noqa: ANN201
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}")
    yield harness
    harness.close()


def exchange(api: ApiHarness, ceded: str, received: str) -> str:
    """Xapuri (1,000 km² in the registry) cedes a parcel to Capixaba (3,000 km²) and receives one back; both
    councils approve (Art. 28: 6 of 10 seats). The case id."""
    for code, area in ((XAPURI, "1000"), (CAPIXABA, "3000")):
        recorded = api.client.post(f"/municipalities/{code}/figures", headers=api.headers("ibge"), json={
            "occurred_on": "2026-03-01", "figure": "area_km2", "value": area, "as_of": "2026-01-01",
            "source": "IBGE, áreas territoriais 2026"})
        assert recorded.status_code == 201, recorded.get_json()
    opened = api.open_case("governor", OPENED, kind="dismemberment", municipalities=[XAPURI], receiving=CAPIXABA,
                           areas=[{"municipality": XAPURI, "area_km2": ceded, "description": "faixa do igarapé"},
                                  {"municipality": CAPIXABA, "area_km2": received, "description": "faixa da BR"}])
    case = opened["case_id"]
    for code in (XAPURI, CAPIXABA):
        decreed = api.client.post(f"/cases/{case}/acts/council-decree-recorded", json={
            "occurred_on": "2026-03-05", "municipality": code, "decree": f"Decreto Legislativo {code}/2026",
            "seats": 10, "yes_votes": 6}, headers=api.headers("council", code, **{"If-Match": api.etag(case)}))
        assert decreed.status_code == 200, decreed.get_json()
    return case


def dispense(api: ApiHarness, case: str):  # noqa: ANN201
    return api.client.post(f"/cases/{case}/acts/plebiscite-dispensed", headers=api.headers(
        "assembly-mesa", **{"If-Match": api.etag(case)}), json={
        "occurred_on": "2026-03-10", "justification": "divisas naturais; acesso à sede (Art. 1-II)"})


def test_an_exchange_whose_net_cession_is_inside_the_bracket_is_dispensed_though_its_gross_cession_is_not(api):
    """Art. 1-III: Xapuri cedes 200 km² (20% of 1,000, above the 15% of Art. 1-I a) and receives 100: it cedes a
    net 100 km² (10%), and Capixaba cedes nothing net: the plebiscite is dispensed."""
    answer = dispense(api, exchange(api, ceded="200", received="100"))
    assert answer.status_code == 200, answer.get_json()
    figures = answer.get_json()["events"][0]["payload"]["figures"]
    assert figures[XAPURI]["net_ceded_km2"] == "100" and figures[CAPIXABA]["net_share"] == "0%"


def test_an_exchange_whose_net_cession_is_above_the_bracket_is_refused_naming_the_net(api):
    """Art. 1-I a, 1-III: Xapuri cedes 200 km² and receives 30, a net 170 km² (17% of 1,000, above 15%): refused
    under art-1-I naming the net cession, and nothing is recorded."""
    case = exchange(api, ceded="200", received="30")
    api.token("assembly-mesa")  # issued (an event) before counting
    before = api.notifications()
    problem = assert_problem(dispense(api, case), 422)
    assert problem["article"] == "art-1-I" and "cedes a net 170 km² of 1000 km²" in problem["detail"]
    assert api.notifications() == before


def test_a_dismemberment_parcel_from_a_third_municipality_is_refused_naming_the_area(api):
    response = api.client.post("/cases", headers=api.headers("governor"), json={
        "occurred_on": OPENED.isoformat(), "kind": "dismemberment", "municipalities": [XAPURI], "receiving": CAPIXABA,
        "areas": [{"municipality": XAPURI, "area_km2": "200", "description": "a"},
                  {"municipality": "1200302", "area_km2": "10", "description": "b"}]})
    problem = assert_problem(response, 422)
    assert problem["field"] == "areas[].municipality" and "origin or the receiving" in problem["detail"]
