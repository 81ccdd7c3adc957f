"""Art. 10 and 11: the Mesa's requisitions belong to the instruction, which the plebiscite's decree ends (no
finding follows it). A requisition received after the decree is refused; one still unanswered at the decree stays
open (and is alerted missed when its 30 days run out) but is no obligation the case waits on to conclude."""

from __future__ import annotations

from datetime import date

from domain.demo import IBGE, MESA, PRESIDENT
from domain.errors import ActOutOfOrderError
from tests.test_article_rules import (
    ORIGIN, XAPURI, day, new_app, open_by_voters, record_findings, record_origin, refused, signatures,
)

OPENED = date(1992, 2, 3)


def voters_case_with_a_requisition(app, *, received: bool) -> tuple[str, str]:  # noqa: ANN001
    """A voters' creation from Xapuri whose R1 to the IBGE is issued on day 1; every Art. 4 finding on day 2 (the
    requirements are met); R1 received on day 3 when `received` (after the IBGE's findings: its deadline opens)."""
    record_origin(app, XAPURI, OPENED, **ORIGIN)
    case = open_by_voters(app, OPENED, signatures(30, XAPURI), origins=(XAPURI,)).number
    requisition = app.issue_requisition(case, MESA, day(OPENED, 1), body="ibge", items=["art-4-I"]).result
    record_findings(app, case, day(OPENED, 2))
    if received:
        app.receive_requisition(case, MESA, day(OPENED, 3), requisition=requisition)
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
