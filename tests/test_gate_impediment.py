"""CF art. 18 §4: while the federal gate is closed, a case of a gated kind shows the gate as an open impediment,
judged on the day the case is read, not only on the day it was opened."""

from __future__ import annotations

from datetime import date

from tests.test_article_rules import open_creation
from tests.test_statute_amendments import new_app, open_period

GATE = "cf-art-18-par-4"


def impediments(app, case: str, on: date) -> list[str]:  # noqa: ANN001
    document, _ = app.case_view(case, as_of=on)
    return [i["article"] for i in document["impediments"]]


def test_a_case_opened_the_day_before_the_gate_shows_it_as_an_impediment_from_the_day_the_gate_is_in_force():
    app = new_app()
    case = open_creation(app, date(1996, 9, 12))
    assert app.get_case(case).impediments == []  # as recorded at its opening
    assert impediments(app, case, date(1996, 9, 12)) == []
    assert impediments(app, case, date(1996, 9, 13)) == [GATE]
    assert impediments(app, case, date(1996, 9, 14)) == [GATE]
    assert [i["article"] for i in app.case_view(case)[0]["impediments"]] == [GATE]  # read today


def test_a_case_opened_on_the_day_the_gate_came_into_force_shows_it():
    app = new_app()
    case = open_creation(app, date(1996, 9, 13))
    assert [i["article"] for i in app.get_case(case).impediments] == [GATE]
    assert impediments(app, case, date(1996, 9, 13)) == [GATE]


def test_while_a_federal_period_is_open_the_gate_is_no_impediment_and_it_is_again_once_the_period_ends():
    app = new_app()
    case = open_creation(app, date(2026, 3, 2))
    open_period(app)  # open from 2027-03-01 to 2027-08-31
    assert impediments(app, case, date(2027, 2, 28)) == [GATE]
    assert impediments(app, case, date(2027, 3, 1)) == []
    assert impediments(app, case, date(2027, 8, 31)) == []
    assert impediments(app, case, date(2027, 9, 1)) == [GATE]


def test_a_district_case_is_never_held_by_the_gate():
    from tests.test_article_rules import TARAUACA, district_case

    app = new_app()
    case = district_case(app, TARAUACA, date(2026, 7, 1))
    assert impediments(app, case, date(2026, 7, 10)) == []
