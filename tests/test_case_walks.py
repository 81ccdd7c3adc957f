"""Each of the six case kinds walked from its opening to its final act, on the in-memory store and SQLite."""

from __future__ import annotations

from datetime import date

import pytest

from domain.demo import (CCJ, GOVERNOR, IBGE, MESA, PGE, PRESIDENT, SECTMA, SEFAZ, TRE, creation_1992,
                         municipal)
from domain.errors import LegalRuleError

CAPIXABA, ACRELANDIA, GUIOMARD, PLACIDO = "1200179", "1200013", "1200450", "1200385"
XAPURI, JORDAO, TARAUACA, BUJARI = "1200708", "1200328", "1200609", "1200138"


def plebiscite(app, case, start: date, populations: dict, seat_votes: dict | None = None) -> None:
    """Art. 11-16: decree, schedule, homologate, communicate, register, draft the bill (dates from `start`)."""
    day = start.toordinal()
    app.decree_plebiscite(case, PRESIDENT, date.fromordinal(day), decree="DL 1")
    app.schedule_plebiscite(case, TRE, date.fromordinal(day + 3), resolution="Res. 1",
                            plebiscite_date=date.fromordinal(day + 20))
    app.homologate_result(case, TRE, date.fromordinal(day + 22), voted_on=date.fromordinal(day + 20),
                          populations=populations, seat_votes=seat_votes)
    app.communicate_result(case, TRE, date.fromordinal(day + 25))
    app.register_in_plenary(case, PRESIDENT, date.fromordinal(day + 27))
    app.draft_bill(case, CCJ, date.fromordinal(day + 30), bill="PL 1")


FAVOURABLE = {"registered": 1000, "turnout": 800, "yes": 600, "no": 150, "blank": 30, "void": 20}


def test_a_1992_creation_walks_from_petition_to_installation_and_concludes_with_one_ledger_late(app):
    lines: list[str] = []
    number = creation_1992(app, lambda said: lines.append(str(said)))
    case = app.get_case(number)
    assert case.stage == "concluded"
    assert case.deadlines["ledger-transfer:1200450"]["status"] == "met-late"
    assert case.deadlines["ledger-transfer:1200450"]["days_late"] == 18
    assert case.deadlines["ledger-transfer:1200385"]["status"] == "met-on-time"
    assert case.deadlines["organic-law"]["due_on"] == date(1993, 7, 1)
    assert any("art-17-par-unico" in line and "Extrema (MG)" in line for line in lines)
    new = app.municipality(case.new_municipality)
    assert new.name == "Vila Extrema" and new.districts == ["Vila Extrema (sede)", "Nova Califórnia"]
    assert new.figure_on("population", date(1992, 1, 21)).value == 2400
    assert app.municipality(PLACIDO).figure_on("population", date(1992, 1, 21)).value == 14000 - 1600
    assert app.municipality(PLACIDO).freezes_on(date(1992, 1, 21)) == []
    assert case.law["legislation_of"] == {"municipality": PLACIDO, "article": "art-21-I"}


def test_an_incorporation_walks_from_petition_to_its_law_and_the_incorporated_municipality_ceases(app):
    case = app.open_case(GOVERNOR, date(1993, 3, 1), kind="incorporation", municipalities=[CAPIXABA],
                         receiving=GUIOMARD).number
    assert app.municipality(CAPIXABA).freezes_on(date(1993, 3, 1))[0]["case_number"] == case
    for code in (CAPIXABA, GUIOMARD):
        app.record_council_decree(case, municipal("council", code), date(1993, 3, 10), municipality=code,
                                  decree=f"DL {code}", seats=9, yes_votes=5)
    plebiscite(app, case, date(1993, 4, 1), {"area": FAVOURABLE})
    app.enact_law(case, GOVERNOR, date(1993, 6, 1), law="Lei 1.100/1993")
    assert app.get_case(case).stage == "law-enacted"
    assert app.municipality(CAPIXABA).ceased["into"] == [GUIOMARD]
    assert app.municipality(GUIOMARD).freezes_on(date(1993, 6, 1)) == []


def test_a_fusion_walks_from_petition_to_its_law_with_the_seat_the_plebiscite_chose(app):
    case = app.open_case(GOVERNOR, date(1993, 3, 1), kind="fusion", municipalities=[CAPIXABA, ACRELANDIA]).number
    for code in (CAPIXABA, ACRELANDIA):
        app.record_council_decree(case, municipal("council", code), date(1993, 3, 10), municipality=code,
                                  decree=f"DL {code}", seats=9, yes_votes=6)
    plebiscite(app, case, date(1993, 4, 1), {CAPIXABA: FAVOURABLE, ACRELANDIA: FAVOURABLE},
               seat_votes={"Vila Aurora do Acre": 900, "Outra Sede": 400})
    app.enact_law(case, GOVERNOR, date(1993, 6, 1), law="Lei 1.101/1993", name="Vila Aurora do Acre",
                  limits="anexo", comarca="Rio Branco", districts=["Vila Aurora do Acre (sede)"],
                  living_person_declaration=True)
    fused = app.get_case(case)
    assert fused.law["seat"] == "Vila Aurora do Acre"
    assert fused.law["legislation_of"]["article"] == "art-21-II"
    assert app.municipality(CAPIXABA).ceased["into"] == [fused.new_municipality]
    assert app.municipality(ACRELANDIA).ceased["into"] == [fused.new_municipality]
    assert app.municipality(fused.new_municipality).name == "Vila Aurora do Acre"


def test_a_dismemberment_walks_from_petition_to_its_law_moving_area_and_figures(app):
    for code in (CAPIXABA, GUIOMARD):
        for figure, value in {"population": 9000, "voters": 5000, "revenue": "300000", "buildings": 700,
                              "area_km2": "1700"}.items():
            actor = {"voters": TRE, "revenue": SEFAZ}.get(figure, IBGE)
            app.record_figure(code, actor, date(1993, 3, 1), figure=figure, value=value, as_of=date(1993, 1, 1),
                              source="test figure")
    case = app.open_case(GOVERNOR, date(1993, 3, 1), kind="dismemberment", municipalities=[CAPIXABA],
                         receiving=GUIOMARD, areas=[{"municipality": CAPIXABA, "area_km2": "100"}]).number
    for code in (CAPIXABA, GUIOMARD):
        app.record_council_decree(case, municipal("council", code), date(1993, 3, 10), municipality=code,
                                  decree=f"DL {code}", seats=9, yes_votes=5)
    for actor, item, value, tax in ((IBGE, "art-4-I", 500, None), (TRE, "art-4-II", 200, None),
                                    (SEFAZ, "art-4-III", "1000", "10000000"), (IBGE, "art-4-IV", 30, None)):
        app.record_finding(case, actor, date(1993, 3, 15), item=item, value=value, state_tax_revenue=tax,
                           document="laudo")
    plebiscite(app, case, date(1993, 4, 1), {"area": FAVOURABLE})
    app.enact_law(case, GOVERNOR, date(1993, 6, 1), law="Lei 1.102/1993")
    assert app.municipality(CAPIXABA).figure_on("area_km2", date(1993, 6, 1)).value == 1600
    assert app.municipality(GUIOMARD).figure_on("population", date(1993, 6, 1)).value == 9500
    assert app.municipality(CAPIXABA).figure_on("population", date(1993, 5, 31)).value == 9000
    assert app.get_case(case).law["contents"]["art-5"][CAPIXABA]["verdicts"]["art-4-I"] is True


def district_creation(app, code: str, district: str, law_on: date) -> str:
    case = app.open_case(municipal("mayor", code), date(2026, 2, 2), kind="district_creation",
                         municipalities=[code], district=district).number
    for actor, item, value in ((IBGE, "art-31-I", 20), (IBGE, "art-31-II", 301), (PGE, "art-31-III", True),
                               (SECTMA, "art-31-III", True)):
        app.record_finding(case, actor, date(2026, 3, 2), item=item, value=value, document="laudo")
    app.enact_law(case, municipal("council", code), law_on, law="Lei Municipal 1/2026",
                  living_person_declaration=True)
    return case


def test_a_district_creation_walks_from_the_municipality_petition_to_its_municipal_law(app):
    case = district_creation(app, XAPURI, "Vila Seringueira", date(2026, 6, 1))
    assert app.get_case(case).stage == "law-enacted"
    assert "Vila Seringueira" in app.municipality(XAPURI).districts
    assert app.get_case(case).communications_due(app.context(MESA, date(2026, 6, 1)))


def test_a_district_suppression_walks_from_petition_to_its_law_and_the_district_leaves_the_registry(app):
    district_creation(app, XAPURI, "Vila Seringueira", date(2026, 6, 1))
    case = app.open_case(municipal("council", XAPURI), date(2026, 7, 1), kind="district_suppression",
                         municipalities=[XAPURI], district="vila seringueira").number
    app.enact_law(case, municipal("mayor", XAPURI), date(2026, 8, 3), law="Lei Municipal 2/2026")
    assert "Vila Seringueira" not in app.municipality(XAPURI).districts


def test_an_extinction_walks_from_the_voters_request_to_its_law_and_the_territory_returns_to_its_origin(app):
    case = app.open_case(MESA, date(2026, 3, 2), kind="extinction", municipalities=[JORDAO]).number
    app.certify_extinction_request(case, TRE, date(2026, 4, 1), valid_signatures=3928, registered_voters=5892)
    app.record_finding(case, IBGE, date(2026, 4, 15), item="art-4-I", value=1400, document="laudo")
    app.enact_law(case, GOVERNOR, date(2026, 6, 1), law="Lei 4.000/2026", reintegration={TARAUACA: "1"})
    assert app.municipality(JORDAO).ceased["into"] == [TARAUACA]
    assert app.get_case(case).law["contents"]["lost"] == ["art-4-I"]


def test_an_unfavourable_plebiscite_walks_to_the_archive_and_the_freeze_is_lifted(app):
    case = app.open_case(GOVERNOR, date(2026, 3, 2), kind="incorporation", municipalities=[BUJARI],
                         receiving=XAPURI).number
    for code in (BUJARI, XAPURI):
        app.record_council_decree(case, municipal("council", code), date(2026, 3, 10), municipality=code,
                                  decree="DL", seats=11, yes_votes=6)
    unfavourable = {"registered": 1000, "turnout": 500, "yes": 400, "no": 100, "blank": 0, "void": 0}
    with pytest.raises(LegalRuleError) as refusal:
        plebiscite(app, case, date(2026, 4, 1), {"area": unfavourable})
    assert refusal.value.article == "art-16-par-unico"
    assert "turnout 50.00% is not an absolute majority of the 1,000 registered voters" in refusal.value.message
    assert app.get_case(case).result["favourable"] is False
    assert app.get_case(case).obligations(app.context(MESA, date(2026, 5, 20)))["archive"] == ["art-16-par-unico"]
    app.archive_case(case, MESA, date(2026, 5, 20), reason="Art. 16 par. ún.: unfavourable plebiscite")
    assert app.get_case(case).stage == "archived"
    assert app.municipality(BUJARI).freezes_on(date(2026, 5, 20)) == []
    assert app.municipality(BUJARI).freezes_on(date(2026, 5, 19))[0]["case_number"] == case


def test_a_fused_municipality_is_installed_with_a_ledger_deadline_for_each_origin(memory_app):
    app = memory_app
    case = app.open_case(GOVERNOR, date(1993, 3, 1), kind="fusion", municipalities=[CAPIXABA, ACRELANDIA]).number
    for code in (CAPIXABA, ACRELANDIA):
        app.record_council_decree(case, municipal("council", code), date(1993, 3, 10), municipality=code,
                                  decree=f"DL {code}", seats=9, yes_votes=6)
    plebiscite(app, case, date(1993, 4, 1), {CAPIXABA: FAVOURABLE, ACRELANDIA: FAVOURABLE},
               seat_votes={"Vila Aurora do Acre": 900})
    app.enact_law(case, GOVERNOR, date(1993, 6, 1), law="Lei 1.101/1993", name="Vila Aurora do Acre",
                  limits="anexo", comarca="Rio Branco", districts=["Vila Aurora do Acre (sede)"],
                  living_person_declaration=True)
    app.install_municipality(case, PRESIDENT, date(1993, 7, 1), mayor="M", vice_mayor="V", councillors=["C1"])
    deadlines = app.get_case(case).deadlines
    assert deadlines[f"ledger-transfer:{CAPIXABA}"]["due_on"] == date(1993, 8, 30)
    assert deadlines[f"ledger-transfer:{ACRELANDIA}"]["who"] == "origin-municipality"
    assert deadlines[f"personnel-documents:{CAPIXABA}"]["status"] == "missed"
    assert deadlines["organic-law"]["due_on"] == date(1994, 1, 3)  # 1994-01-01 is a holiday, 02 a Sunday
