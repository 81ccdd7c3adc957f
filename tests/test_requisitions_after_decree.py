"""Art. 10 and 11: the body's findings answer its requisitions (also one recorded before the receipt was), and the
requisitions belong to the instruction, which the plebiscite's decree ends (no finding follows it). A requisition
received after the decree is refused; one still unanswered at the decree stays open (and is alerted missed when its
30 days run out) but is no obligation the case waits on to conclude."""

from __future__ import annotations

from datetime import date

from domain.demo import IBGE, MESA, PGE, PRESIDENT, SECTMA, SEFAZ, SETOP, TRE
from domain.errors import ActOutOfOrderError
from tests.test_article_rules import (
    NEW_MUNICIPALITY, ORIGIN, STATE_TAX_REVENUE, XAPURI, day, new_app, open_by_voters, record_findings, record_origin,
    refused, signatures,
)

OPENED = date(1992, 2, 3)


def voters_case_with_a_requisition(app, *, received: bool) -> tuple[str, str]:  # noqa: ANN001
    """A voters' creation from Xapuri: the IBGE, the TRE and the SEFAZ record their findings on day 1; R1 to the
    IBGE is issued on day 2 (so no finding of the IBGE answers it), received on day 3 when `received` (its deadline
    opens); the SETOP, the PGE and the SECTMA record theirs on day 4 (the requirements are met)."""
    record_origin(app, XAPURI, OPENED, **ORIGIN)
    case = open_by_voters(app, OPENED, signatures(30, XAPURI), origins=(XAPURI,)).number
    for actor, item in ((IBGE, "art-4-I"), (TRE, "art-4-II"), (SEFAZ, "art-4-III"), (IBGE, "art-4-IV")):
        app.record_finding(case, actor, day(OPENED, 1), item=item, value=NEW_MUNICIPALITY[item], document="Laudo",
                           state_tax_revenue=STATE_TAX_REVENUE if item == "art-4-III" else None)
    requisition = app.issue_requisition(case, MESA, day(OPENED, 2), body="ibge", items=["art-4"]).result
    if received:
        app.receive_requisition(case, MESA, day(OPENED, 3), requisition=requisition)
    for actor, item in ((SETOP, "art-4-V"), (PGE, "art-4-VI"), (SECTMA, "art-4-VI")):
        app.record_finding(case, actor, day(OPENED, 4), item=item, value=True, document="Laudo")
    assert app.get_case(case).stage == "requirements-met"
    return case, requisition


def obligations(app, case: str) -> list[str]:  # noqa: ANN001
    return app.case_document(app.get_case(case))["obligations"]["deadlines"]


def test_a_requisition_unanswered_before_the_decree_is_an_obligation_and_no_longer_one_from_the_decree():
    app = new_app()
    case, requisition = voters_case_with_a_requisition(app, received=True)
    key = f"requisition-answer:{requisition}"
    assert obligations(app, case) == [key]  # the IBGE may still answer with a finding
    app.decree_plebiscite(case, PRESIDENT, day(OPENED, 6), decree="Decreto Legislativo 1")
    assert obligations(app, case) == []
    assert app.get_case(case).deadlines[key]["closed_by"] is None  # still open: alerted missed when it runs out
    refused(app, case, lambda: app.record_finding(case, IBGE, day(OPENED, 7), item="art-4-I", value=3100,
                                                  document="Laudo tardio"), article="art-11",
            error=ActOutOfOrderError)


def test_a_requisition_received_the_day_of_the_decree_is_refused_under_art_11():
    app = new_app()
    case, requisition = voters_case_with_a_requisition(app, received=False)
    app.decree_plebiscite(case, PRESIDENT, day(OPENED, 6), decree="Decreto Legislativo 1")
    refused(app, case, lambda: app.receive_requisition(case, MESA, day(OPENED, 6), requisition=requisition),
            article="art-11", error=ActOutOfOrderError, contains=("plebiscite-decreed",))


def test_a_requisition_received_the_day_before_the_decree_opens_its_deadline():
    app = new_app()
    case, requisition = voters_case_with_a_requisition(app, received=False)
    app.receive_requisition(case, MESA, day(OPENED, 5), requisition=requisition)
    app.decree_plebiscite(case, PRESIDENT, day(OPENED, 6), decree="Decreto Legislativo 1")
    assert app.get_case(case).deadlines[f"requisition-answer:{requisition}"]["starts_on"] == day(OPENED, 5)


def test_a_requisition_whose_body_answered_before_its_receipt_was_recorded_is_met_on_time_at_the_receipt():
    """Art. 10: the body's findings answer its requisitions; the IBGE's findings of day 2 answer R1, issued on day
    1 and received on day 3."""
    app = new_app()
    record_origin(app, XAPURI, OPENED, **ORIGIN)
    case = open_by_voters(app, OPENED, signatures(30, XAPURI), origins=(XAPURI,)).number
    requisition = app.issue_requisition(case, MESA, day(OPENED, 1), body="ibge", items=["art-4"]).result
    record_findings(app, case, day(OPENED, 2))
    app.receive_requisition(case, MESA, day(OPENED, 3), requisition=requisition)
    deadline = app.get_case(case).deadlines[f"requisition-answer:{requisition}"]
    assert (deadline["status"], deadline["closed_by"], deadline["days_late"]) == ("met-on-time", "finding-recorded", 0)
    assert app.case_document(app.get_case(case))["obligations"]["deadlines"] == []


def test_a_finding_recorded_before_the_requisition_was_issued_does_not_answer_it():
    app = new_app()
    record_origin(app, XAPURI, OPENED, **ORIGIN)
    case = open_by_voters(app, OPENED, signatures(30, XAPURI), origins=(XAPURI,)).number
    app.record_finding(case, IBGE, day(OPENED, 1), item="art-4-I", value=3100, document="Laudo art-4-I")
    requisition = app.issue_requisition(case, MESA, day(OPENED, 2), body="ibge", items=["art-4-IV"]).result
    app.receive_requisition(case, MESA, day(OPENED, 3), requisition=requisition)
    assert app.get_case(case).deadlines[f"requisition-answer:{requisition}"]["closed_by"] is None
