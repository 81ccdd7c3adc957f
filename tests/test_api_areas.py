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


def test_the_registry_shows_the_figure_the_rules_read_the_last_recorded_of_its_day(api):
    """Art. 5 is judged on the figure in force on the act's day, the last recorded of a day (a correction): the
    registry's `GET /municipalities/{code}` shows that figure, not the first of the day."""
    for value in ("30000", "31000"):
        recorded = api.client.post(f"/municipalities/{CAPIXABA}/figures", headers=api.headers("ibge"), json={
            "occurred_on": "2026-03-01", "figure": "population", "value": value, "as_of": "2025-07-01",
            "source": "IBGE, estimativa 2025"})
        assert recorded.status_code == 201, recorded.get_json()
    api.projector.catch_up()
    shown = api.get(f"/municipalities/{CAPIXABA}").get_json()["figures"]["population"]
    assert shown["value"] == 31000 and shown["as_of"] == "2025-07-01"
    assert api.app.municipality(CAPIXABA).figure_on("population", date(2026, 3, 1)).value == 31000


def test_the_registry_shows_an_area_a_law_moved_before_2022_over_the_seed_s_undated_area(api):
    """The seed's area has no date of its own: an area recorded for 1995 is the registry's current area, as the
    rules read it on every later day (before, the seed's 2022-08-01 entry was shown as the latest)."""
    recorded = api.client.post(f"/municipalities/{CAPIXABA}/figures", headers=api.headers("ibge"), json={
        "occurred_on": "2026-03-01", "figure": "area_km2", "value": "1801.974", "as_of": "1995-05-01",
        "source": "Lei 1/1995"})
    assert recorded.status_code == 201, recorded.get_json()
    api.projector.catch_up()
    shown = api.get(f"/municipalities/{CAPIXABA}").get_json()["figures"]["area_km2"]
    assert shown["value"] == "1801.974" and shown["as_of"] == "1995-05-01"
