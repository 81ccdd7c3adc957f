"""A law that moves an unknown part of a known figure leaves that figure unknown from the law's day: the registry
never keeps the value from before the law as if it still held, and never invents one (Art. 5 then asks for it)."""

from __future__ import annotations

from datetime import date

from domain.demo import GOVERNOR, municipal
from tests.api_client import ApiHarness
from tests.test_article_rules import BUJARI, CAPIXABA, new_app, plebiscite, record_origin
from tests.test_pages import sign_in

LAW_ON = date(1993, 5, 1)


def incorporate_bujari(app, **bujari) -> None:  # noqa: ANN001
    """Bujari (its voters unknown unless given) is incorporated into Capixaba by a law of 1993-05-01."""
    record_origin(app, BUJARI, date(1993, 1, 1), area_km2="3000", population=5000, **bujari)
    record_origin(app, CAPIXABA, date(1993, 1, 1), area_km2="1700", population=6000, voters=3500,
                  revenue="500000.00")
    case = app.open_case(GOVERNOR, date(1993, 3, 1), kind="incorporation", municipalities=[BUJARI],
                         receiving=CAPIXABA).number
    for code in (BUJARI, CAPIXABA):
        app.record_council_decree(case, municipal("council", code), date(1993, 3, 5), municipality=code,
                                  decree="DL 1/1993", seats=9, yes_votes=5)
    plebiscite(app, case, date(1993, 3, 10))
    app.enact_law(case, GOVERNOR, LAW_ON, law="Lei 1/1993")


def test_incorporating_a_municipality_whose_voters_are_unknown_makes_the_receiver_s_voters_unknown_from_the_law():
    app = new_app()
    incorporate_bujari(app)
    capixaba = app.municipality(CAPIXABA)
    assert capixaba.figures_on(LAW_ON)["voters"] is None
    assert capixaba.figures_on(date(1993, 4, 30))["voters"] == 3500  # the day before, as recorded
    assert capixaba.figures_on(LAW_ON)["population"] == 11000 and capixaba.figures_on(LAW_ON)["area_km2"] == 4700


def test_incorporating_a_municipality_whose_voters_are_known_adds_them():
    app = new_app()
    incorporate_bujari(app, voters=2000)
    assert app.municipality(CAPIXABA).figures_on(LAW_ON)["voters"] == 5500


def test_a_figure_made_unknown_by_a_law_shows_as_unknown_in_the_api_and_on_the_municipality_s_page(tmp_path):
    api = ApiHarness(f"sqlite:///{tmp_path / 'tramita.sqlite'}")
    try:
        incorporate_bujari(api.app)
        api.projector.catch_up()
        # Bujari's revenue is unknown, so Capixaba's is from the law (the seed has no later revenue of its own)
        revenue = api.get(f"/municipalities/{CAPIXABA}").get_json()["figures"]["revenue"]
        assert revenue["value"] is None and revenue["as_of"] == LAW_ON.isoformat()
        assert sign_in(api.client, api.token("auditor")).status_code == 303
        page = api.client.get(f"/municipios/{CAPIXABA}", headers={"Accept-Language": "pt-BR"})
        assert page.status_code == 200
        assert "desconhecido (uma lei transferiu uma parte desconhecida)" in page.get_data(as_text=True)
    finally:
        api.close()
