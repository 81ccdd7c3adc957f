"""Art. 22 par. ún. and Art. 26 par. ún.: the deadlines the installation sets for each origin municipality, with
the clause they come from, and Art. 26's documents judged by their legal date whatever the order of recording."""

from __future__ import annotations

from datetime import date

import pytest

from domain.acts import Actor
from domain.demo import municipal
from tests.test_article_rules import INSTALLED_ON as INSTALLED, XAPURI, creation_enacted, install, new_app

DOCUMENTS = f"personnel-documents:{XAPURI}"
LEDGER = f"ledger-transfer:{XAPURI}"


def send_documents(app, case: str, on: date) -> None:  # noqa: ANN001
    app.send_personnel_documents(case, municipal("municipality", XAPURI), on, origin=XAPURI, document="Ofício 1")


def test_the_personnel_documents_and_ledger_deadlines_cite_their_paragraphs_and_so_do_their_alerts():
    app = new_app()
    case = creation_enacted(app)
    install(app, case)
    deadlines = app.get_case(case).deadlines
    assert (deadlines[DOCUMENTS]["article"], deadlines[LEDGER]["article"]) == ("art-26-par-unico", "art-22-par-unico")
    raised = [app.get_alert(i) for i in app.raise_alerts(case, Actor("scheduler", "scheduler"), thresholds=(5, 1))]
    assert {(a.deadline, a.article) for a in raised if a.kind == "missed"} >= {
        (DOCUMENTS, "art-26-par-unico"), (LEDGER, "art-22-par-unico")}


@pytest.mark.parametrize("documents_first", [True, False], ids=["recorded-before", "recorded-after"])
def test_documents_sent_on_the_installation_day_meet_art_26_on_time_whichever_act_was_recorded_first(
        documents_first):
    app = new_app()
    case = creation_enacted(app)
    if documents_first:
        send_documents(app, case, INSTALLED)
        install(app, case)
    else:
        install(app, case)
        send_documents(app, case, INSTALLED)
    deadline = app.get_case(case).deadlines[DOCUMENTS]
    assert (deadline["status"], deadline["days_late"], deadline["closed_on"]) == ("met-on-time", 0, INSTALLED)


def test_documents_not_sent_by_the_installation_are_recorded_missed_and_that_record_stays_once_they_arrive():
    app = new_app()
    case = creation_enacted(app)
    install(app, case)
    assert app.get_case(case).deadlines[DOCUMENTS]["status"] == "missed"
    send_documents(app, case, INSTALLED)
    missed = [e for e in app.events_of(case) if type(e).__name__ == "DeadlineMissed" and e.deadline == DOCUMENTS]
    assert [e.occurred_on for e in missed] == [INSTALLED]


def test_documents_sent_the_day_after_the_installation_meet_art_26_one_day_late():
    app = new_app()
    case = creation_enacted(app)
    install(app, case)
    send_documents(app, case, date(1993, 1, 2))
    deadline = app.get_case(case).deadlines[DOCUMENTS]
    assert (deadline["status"], deadline["days_late"]) == ("met-late", 1)


def test_documents_sent_the_day_before_the_installation_meet_art_26_on_time():
    app = new_app()
    case = creation_enacted(app)
    send_documents(app, case, date(1992, 12, 31))
    install(app, case)
    deadline = app.get_case(case).deadlines[DOCUMENTS]
    assert (deadline["status"], deadline["days_late"]) == ("met-on-time", 0)
