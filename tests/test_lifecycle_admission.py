"""The order of acts enforced from the lifecycle data: each refusal names the article that orders the act and says
what was required and what was found; `next_acts` names the competent bodies and municipalities; the dismemberment's
dispensation is pinned on the day before, of and after LC 132/2004."""

from __future__ import annotations

from datetime import date

import pytest

from domain.demo import CCJ, GOVERNOR, MESA, PRESIDENT, TRE, municipal
from domain.errors import ActOutOfOrderError, RuleNotInForceError
from domain.parameters import shipped_statute
from tests.test_article_rules import BUJARI, CAPIXABA, JORDAO, XAPURI, creation_verified, dismemberment, new_app

STATUTE = shipped_statute()


def refusal_of(act) -> ActOutOfOrderError:
    with pytest.raises((ActOutOfOrderError, RuleNotInForceError)) as caught:
        act()
    return caught.value


def test_a_plebiscite_is_not_scheduled_before_the_assembly_decrees_it():
    app = new_app()
    case = creation_verified(app, date(2026, 3, 2))
    refusal = refusal_of(lambda: app.schedule_plebiscite(case, TRE, date(2026, 3, 9), resolution="Res. 1",
                                                         plebiscite_date=date(2026, 4, 5)))
    assert refusal.article == "art-12"
    assert "plebiscite-scheduled follows plebiscite-decreed" in refusal.message
    assert "none was recorded" in refusal.message and refusal.figures["missing"] == ["plebiscite-decreed"]


def test_a_result_is_not_homologated_twice_and_the_refusal_gives_the_first_homologation_s_date():
    app = new_app()
    case = creation_verified(app, date(2026, 3, 2))
    app.decree_plebiscite(case, PRESIDENT, date(2026, 3, 9), decree="DL 1")
    app.schedule_plebiscite(case, TRE, date(2026, 3, 10), resolution="R 1", plebiscite_date=date(2026, 4, 5))
    result = {"registered": 1000, "turnout": 800, "yes": 600, "no": 200}
    app.homologate_result(case, TRE, date(2026, 4, 7), voted_on=date(2026, 4, 5), populations={"area": result})
    refusal = refusal_of(lambda: app.homologate_result(case, TRE, date(2026, 4, 8), voted_on=date(2026, 4, 5),
                                                       populations={"area": result}))
    assert refusal.article == "art-13" and "already recorded on 2026-04-07" in refusal.message
    refusal = refusal_of(lambda: app.schedule_plebiscite(case, TRE, date(2026, 4, 8), resolution="R 2",
                                                         plebiscite_date=date(2026, 5, 5)))
    assert refusal.article == "art-13" and "plebiscite-result-homologated was recorded on 2026-04-07" in refusal.message


def test_a_council_decree_after_the_plebiscite_decree_is_refused_under_the_article_that_decreed_it():
    app = new_app()
    case = app.open_case(GOVERNOR, date(2026, 3, 2), kind="incorporation", municipalities=[BUJARI],
                         receiving=CAPIXABA).number
    for code in (BUJARI, CAPIXABA):
        app.record_council_decree(case, municipal("council", code), date(2026, 3, 5), municipality=code,
                                  decree=f"DL {code}", seats=9, yes_votes=5)
    refusal = refusal_of(lambda: app.record_council_decree(case, municipal("council", BUJARI), date(2026, 3, 6),
                                                           municipality=BUJARI, decree="DL 2", seats=9, yes_votes=9))
    assert refusal.article == "art-29" and f"already recorded for {BUJARI}" in refusal.message
    app.decree_plebiscite(case, PRESIDENT, date(2026, 3, 9), decree="DL 1")
    assert app.get_case(case).next_acts_document(STATUTE, date(2026, 3, 9))[0]["act"] == "plebiscite-scheduled"


@pytest.mark.parametrize("kind, municipalities, receiving, article", [
    ("fusion", [BUJARI, CAPIXABA], None, "art-6"), ("incorporation", [BUJARI], CAPIXABA, "art-29")])
def test_no_requisition_is_issued_in_a_kind_that_records_no_finding_to_answer_it(kind, municipalities, receiving,
                                                                                   article):
    app = new_app()
    case = app.open_case(GOVERNOR, date(2026, 3, 2), kind=kind, municipalities=municipalities,
                         receiving=receiving).number
    refusal = refusal_of(lambda: app.issue_requisition(case, MESA, date(2026, 3, 3), body="ibge", items=["x"]))
    assert refusal.article == article and "requisition-issued" in refusal.message


def test_an_act_no_lifecycle_of_the_kind_orders_is_refused_naming_the_kinds_whose_lifecycle_does():
    app = new_app()
    case = app.open_case(MESA, date(2026, 3, 2), kind="extinction", municipalities=[JORDAO]).number
    refusal = refusal_of(lambda: app.decree_plebiscite(case, PRESIDENT, date(2026, 3, 3), decree="DL 1"))
    assert refusal.article == "art-11"
    assert refusal.message == ("plebiscite-decreed is not an act of an extinction case; it is an act of: creation, "
                               "incorporation, fusion, dismemberment")


def test_an_extinction_law_follows_the_tre_s_certificate_of_the_voters_request():
    app = new_app()
    case = app.open_case(MESA, date(2026, 3, 2), kind="extinction", municipalities=[JORDAO]).number
    refusal = refusal_of(lambda: app.enact_law(case, GOVERNOR, date(2026, 3, 20), law="LC 1",
                                               reintegration={"1200609": "1"}))
    assert refusal.article == "art-37-II" and "follows request-signatures-certified" in refusal.message


def test_an_unfavourable_result_refuses_the_bill_saying_why_and_offers_the_archive():
    app = new_app()
    case = creation_verified(app, date(2026, 3, 2))
    app.decree_plebiscite(case, PRESIDENT, date(2026, 3, 9), decree="DL 1")
    app.schedule_plebiscite(case, TRE, date(2026, 3, 10), resolution="R 1", plebiscite_date=date(2026, 4, 5))
    app.homologate_result(case, TRE, date(2026, 4, 7), voted_on=date(2026, 4, 5),
                          populations={"area": {"registered": 1000, "turnout": 400, "yes": 300, "no": 100}})
    app.communicate_result(case, TRE, date(2026, 4, 8))
    refusal = refusal_of(lambda: app.draft_bill(case, CCJ, date(2026, 4, 9), bill="PL 1"))
    assert refusal.article == "art-16-par-unico" and "the plebiscite was unfavourable" in refusal.message
    offered = [entry["act"] for entry in app.get_case(case).next_acts_document(STATUTE, date(2026, 4, 9))]
    assert offered == ["result-registered-in-plenary", "case-archived"]


def test_an_archived_case_offers_no_next_act():
    app = new_app()
    case = creation_verified(app, date(2026, 3, 2))
    assert app.get_case(case).next_acts(STATUTE, date(2026, 3, 8))
    app.archive_case(case, MESA, date(2026, 3, 8), reason="desistência")
    assert app.get_case(case).next_acts(STATUTE, date(2026, 3, 8)) == []


def test_next_acts_names_the_councils_still_to_decide_and_their_competent_body():
    app = new_app()
    case = app.open_case(GOVERNOR, date(2026, 3, 2), kind="incorporation", municipalities=[BUJARI],
                         receiving=CAPIXABA).number
    app.record_council_decree(case, municipal("council", BUJARI), date(2026, 3, 5), municipality=BUJARI,
                              decree="DL B", seats=9, yes_votes=5)
    offered = app.get_case(case).next_acts_document(STATUTE, date(2026, 3, 5))
    assert offered == [
        {"act": "council-decree-recorded", "article": "art-29", "roles": ["council"], "municipalities": [CAPIXABA]},
        {"act": "case-archived", "article": "art-16-par-unico", "roles": ["assembly-mesa", "assembly-president"],
         "municipalities": []}]


@pytest.mark.parametrize("on, dispensable", [(date(2004, 1, 28), False), (date(2004, 1, 29), True),
                                             (date(2004, 1, 30), True)])
def test_a_dismemberment_offers_the_dispensation_of_its_plebiscite_from_lc_132_2004_only(on, dispensable):
    app = new_app()
    case = app.get_case(dismemberment(app, date(2004, 1, 5), XAPURI, CAPIXABA, "100", ceding_area="5000"))
    offered = [entry["act"] for entry in case.next_acts_document(STATUTE, on)]
    assert ("plebiscite-dispensed" in offered) is dispensable and "plebiscite-decreed" in offered
    refusal = case.order_refusal(STATUTE, "plebiscite-dispensed", on)
    if dispensable:
        assert refusal is None
    else:
        assert isinstance(refusal, RuleNotInForceError) and refusal.article == "art-1-I"
        assert "lifecycle in force on 2004-01-28" in refusal.message and "from 2004-01-29" in refusal.message
