"""Art. 37 par. ún.: an extinct municipality is reintegrated into the municipality or municipalities it came from,
"observando-se ... a mesma proporção territorial originariamente existente". When the registry knows its origins
(a creation recorded here made it), the law's shares must be theirs; otherwise they are recorded as the law
states them (a seeded municipality: tests/test_article_rules.py's extinction of Jordão)."""

from __future__ import annotations

from datetime import date, timedelta
from fractions import Fraction

from decimal import Decimal

import pytest

from domain.demo import GOVERNOR, GUIOMARD, IBGE, MESA, PLACIDO, TRE, creation_1992, record_figure_1991
from tests.test_article_rules import BUJARI, CAPIXABA, XAPURI, district_case, enact_district, new_app, refused

#: Extrema (case LC35-1991-0001) took 420.5 km² from Plácido de Castro and 180 km² from Senador Guiomard.
ORIGINAL = {PLACIDO: Fraction("420.5") / Fraction("600.5"), GUIOMARD: Fraction(180) / Fraction("600.5")}


def extinction_ready_for_law(app, code: str) -> str:  # noqa: ANN001
    case = app.open_case(MESA, date(1995, 3, 1), kind="extinction", municipalities=[code]).number
    app.certify_extinction_request(case, TRE, date(1995, 3, 2), valid_signatures=700, registered_voters=900)
    app.record_finding(case, IBGE, date(1995, 3, 3), item="art-4-I", value=1400, document="Laudo art-4-I")
    return case


def extrema(app) -> str:  # noqa: ANN001
    creation = creation_1992(app, say=lambda _: None)
    return app.get_case(creation).new_municipality


def test_an_extinct_municipality_made_here_returns_to_its_origins_in_the_proportion_they_gave_it():
    app = new_app()
    code = extrema(app)
    case = extinction_ready_for_law(app, code)
    app.enact_law(case, GOVERNOR, date(1995, 4, 1), law="Lei 2/1995",
                  reintegration={PLACIDO: str(ORIGINAL[PLACIDO]), GUIOMARD: str(ORIGINAL[GUIOMARD])})
    assert app.get_case(case).law["contents"]["reintegration"] == {c: str(s) for c, s in ORIGINAL.items()}
    assert sorted(app.municipality(code).ceased["into"]) == sorted([PLACIDO, GUIOMARD])


def test_a_law_that_states_no_shares_is_given_the_original_proportion():
    app = new_app()
    case = extinction_ready_for_law(app, extrema(app))
    app.enact_law(case, GOVERNOR, date(1995, 4, 1), law="Lei 2/1995")
    assert app.get_case(case).law["contents"]["reintegration"] == {c: str(s) for c, s in ORIGINAL.items()}


def test_reintegrating_a_municipality_made_here_into_another_than_its_origins_is_refused():
    app = new_app()
    case = extinction_ready_for_law(app, extrema(app))
    refused(app, case, lambda: app.enact_law(case, GOVERNOR, date(1995, 4, 1), law="Lei 2/1995",
                                             reintegration={XAPURI: "1"}), article="art-37-par-unico",
            contains=(PLACIDO, GUIOMARD))


def test_reintegrating_a_municipality_made_here_in_halves_is_refused_naming_the_original_proportion():
    app = new_app()
    case = extinction_ready_for_law(app, extrema(app))
    refusal = refused(app, case, lambda: app.enact_law(case, GOVERNOR, date(1995, 4, 1), law="Lei 2/1995",
                                                       reintegration={PLACIDO: "1/2", GUIOMARD: "1/2"}),
                      article="art-37-par-unico", contains=("841/1201",))
    assert refusal.figures["original"] == {c: str(s) for c, s in ORIGINAL.items()}


# A seeded municipality (Bujari) extinguished into one or two others, with figures recorded in 1991 and a district
# its council created in 1993.
FIGURES = {
    BUJARI: {"area_km2": "3000", "population": 5000, "voters": 3000, "revenue": "100000.00", "buildings": 300},
    CAPIXABA: {"area_km2": "1700", "population": 8000, "voters": 4000, "revenue": "200000.00", "buildings": 500},
    XAPURI: {"area_km2": "5300", "population": 9000, "voters": 5000, "revenue": "300000.00", "buildings": 700},
}
LAW_DAY = date(1995, 4, 1)


def bujari_ready_for_law(app) -> str:  # noqa: ANN001
    for code, figures in FIGURES.items():
        for figure, value in figures.items():
            record_figure_1991(app, code, figure, value)
    enact_district(app, district_case(app, BUJARI, date(1993, 3, 1)), BUJARI, date(1993, 3, 20))
    return extinction_ready_for_law(app, BUJARI)


def test_a_municipality_extinguished_into_its_one_origin_gives_it_its_whole_figures_and_its_districts():
    """Art. 37 par. ún.: the whole territory returns to the one origin, as an incorporation's does (Art. 29)."""
    app = new_app()
    case = bujari_ready_for_law(app)
    app.enact_law(case, GOVERNOR, LAW_DAY, law="Lei 2/1995", reintegration={CAPIXABA: "1"})
    capixaba = app.municipality(CAPIXABA)
    assert capixaba.figures_on(LAW_DAY) == {"area_km2": Decimal("4700"), "population": 13000, "voters": 7000,
                                            "revenue": Decimal("300000.00"), "buildings": 800}
    assert capixaba.figures_on(LAW_DAY - timedelta(days=1))["population"] == 8000
    assert "Vila Jurupari" in capixaba.districts
    assert app.municipality(BUJARI).ceased["into"] == [CAPIXABA]


def test_a_municipality_extinguished_into_two_origins_gives_each_its_share_of_the_area_and_no_invented_figure():
    """The law's shares divide the area; how the population, voters, revenue and buildings divide it does not
    say, so each origin's figure becomes unknown from the law's day rather than invented."""
    app = new_app()
    case = bujari_ready_for_law(app)
    app.enact_law(case, GOVERNOR, LAW_DAY, law="Lei 2/1995", reintegration={CAPIXABA: "2/3", XAPURI: "1/3"})
    capixaba, xapuri = app.municipality(CAPIXABA).figures_on(LAW_DAY), app.municipality(XAPURI).figures_on(LAW_DAY)
    assert (capixaba["area_km2"], xapuri["area_km2"]) == (Decimal("3700"), Decimal("6300"))
    assert capixaba["population"] is None and xapuri["voters"] is None
    assert sorted(app.municipality(BUJARI).ceased["into"]) == sorted([CAPIXABA, XAPURI])


@pytest.mark.parametrize("shares", [{BUJARI: "1"}, {BUJARI: "1/2", CAPIXABA: "1/2"}])
def test_an_extinct_municipality_is_never_reintegrated_into_itself(shares):
    app = new_app()
    case = bujari_ready_for_law(app)
    refused(app, case, lambda: app.enact_law(case, GOVERNOR, LAW_DAY, law="Lei 2/1995", reintegration=shares),
            article="art-37-par-unico", contains=(BUJARI, "not to itself"))
    assert app.municipality(BUJARI).ceased is None


def test_a_municipality_made_of_two_origins_districts_returns_each_district_to_the_origin_it_came_from():
    """Art. 37 par. ún.: the territory returns whence it came. A creation that took Xapuri's Vila Seringal and
    Capixaba's Vila Jurupari (its petition's `areas[].district`); its extinction into both gives each its own
    district back, never to the other, never to no one."""
    from tests.test_article_rules import (
        LAW, ORIGIN, PGE, SECTMA, SEFAZ, SETOP, STATE_TAX_REVENUE, plebiscite, record_origin,
    )

    app = new_app()
    for code, district in ((XAPURI, "Vila Seringal"), (CAPIXABA, "Vila Jurupari")):
        made = district_case(app, code, date(1991, 12, 20), district=district)
        enact_district(app, made, code, date(1991, 12, 30))
        record_origin(app, code, date(1992, 2, 3), **ORIGIN)
    case = app.open_case(GOVERNOR, date(1992, 2, 3), kind="creation", municipalities=[XAPURI, CAPIXABA],
                         proposed_name="Vila Nova", documents={f"art-4-{i}": "Ofício" for i in
                                                               ("I", "II", "III", "IV", "V", "VI")},
                         areas=[{"municipality": XAPURI, "district": "Vila Seringal", "area_km2": "300"},
                                {"municipality": CAPIXABA, "district": "Vila Jurupari", "area_km2": "100"}]).number
    for actor, item, value, split in ((IBGE, "art-4-I", 2400, (1600, 800)), (TRE, "art-4-II", 900, (600, 300)),
                                      (SEFAZ, "art-4-III", "95000.00", ("60000.00", "35000.00")),
                                      (IBGE, "art-4-IV", 80, (50, 30))):
        app.record_finding(case, actor, date(1992, 2, 4), item=item, value=value, document="Laudo",
                           by_origin=dict(zip((XAPURI, CAPIXABA), split)),
                           state_tax_revenue=STATE_TAX_REVENUE if item == "art-4-III" else None)
    for actor, item in ((SETOP, "art-4-V"), (PGE, "art-4-VI"), (SECTMA, "art-4-VI")):
        app.record_finding(case, actor, date(1992, 2, 4), item=item, value=True, document="Laudo")
    plebiscite(app, case, date(1992, 2, 9))
    app.enact_law(case, GOVERNOR, date(1992, 3, 14), name="Vila Nova",
                  **{**LAW, "districts": ["Vila Nova (sede)"], "seat_origin": XAPURI})
    new = app.get_case(case).new_municipality
    assert app.municipality(new).districts == ["Vila Nova (sede)", "Vila Seringal", "Vila Jurupari"]
    assert app.municipality(XAPURI).districts == [] and app.municipality(CAPIXABA).districts == []
    extinction = extinction_ready_for_law(app, new)
    app.enact_law(extinction, GOVERNOR, date(1995, 5, 1), law="Lei 3/1995")
    assert app.municipality(XAPURI).districts == ["Vila Seringal"]
    assert app.municipality(CAPIXABA).districts == ["Vila Jurupari"]
