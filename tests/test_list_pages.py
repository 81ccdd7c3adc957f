"""Every list answers one envelope (`items`, `total`, `next`) and is never cut silently: 1,200 missed deadlines and
their 1,200 alerts listed in full through `next`, and the same lists as CSV with every row (docs/api.md)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import date, datetime, timezone

import pytest

from scheduler.scan import scan
from tests.api_client import ApiHarness
from tests.test_article_rules import FEIJO, TARAUACA
from tests.test_scheduler_processes import MESA, open_by_voters, signatures

MANY = 1_200
#: 09:00 in Rio Branco on Wed 2025-11-19, the day after the requisitions' due day.
MISSED_DAY = datetime(2025, 11, 19, 14, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> Iterator[ApiHarness]:
    """Two cases with 600 requisitions each, received Fri 2025-10-17, due Tue 2025-11-18, never answered; scanned
    the day after: 1,200 missed deadlines and 1,200 `missed` alerts."""
    api = ApiHarness(f"sqlite:///{tmp_path_factory.mktemp('pages') / 'api.sqlite'}")
    api.clock.now = datetime(2025, 10, 20, 12, tzinfo=timezone.utc)
    for code in (FEIJO, TARAUACA):
        case = open_by_voters(api.app, date(2025, 10, 14), signatures(30, code), origins=(code,)).number
        issued = [api.app.issue_requisition(case, MESA, date(2025, 10, 15), body="ibge", items=["art-4"]).result
                  for _ in range(MANY // 2)]
        for requisition in issued:
            api.app.receive_requisition(case, MESA, date(2025, 10, 17), requisition=requisition)
    api.clock.now = MISSED_DAY
    assert len(scan(api.app, api.store, thresholds=(5, 1), projector=api.projector).raised) == MANY
    api.projector.catch_up()
    yield api
    api.close()


def walk(api: ApiHarness, path: str) -> tuple[list[dict], list[dict]]:
    """Follow `next` from `path` to the last page; every item and every page's envelope."""
    items, pages = [], []
    while path is not None:
        response = api.get(path)
        assert response.status_code == 200, response.get_json()
        page = response.get_json()
        pages.append(page)
        items += page["items"]
        path = page["next"]
    return items, pages


def test_1200_alerts_are_listed_in_full_through_next_each_once_oldest_first(many):
    items, pages = walk(many, "/alerts?limit=500")
    assert [len(p["items"]) for p in pages] == [500, 500, 200] and {p["total"] for p in pages} == {MANY}
    assert len({a["alert_id"] for a in items}) == MANY and pages[-1]["next"] is None
    assert [(a["raised_at"], a["alert_id"]) for a in items] == sorted((a["raised_at"], a["alert_id"]) for a in items)
    assert pages[0]["next"] == "/alerts?limit=500&offset=500" and pages[1]["next_offset"] == 1000


def test_1200_missed_deadlines_are_listed_in_full_through_next_with_the_filters_kept(many):
    items, pages = walk(many, "/deadlines?status=missed&limit=450")
    assert [len(p["items"]) for p in pages] == [450, 450, 300] and pages[0]["total"] == MANY
    assert "status=missed" in pages[0]["next"]
    assert len({(d["case_id"], d["deadline"]) for d in items}) == MANY
    assert {(d["status"], d["due_on"], d["days_overdue"]) for d in items} == {("missed", "2025-11-18", 1)}
    assert many.get("/deadlines?status=met-late").get_json() == {
        "items": [], "total": 0, "limit": 500, "offset": 0, "next": None, "next_offset": None}


def test_the_default_page_says_there_is_more_rather_than_cutting_silently(many):
    page = many.get("/alerts").get_json()
    assert (len(page["items"]), page["total"], page["next"]) == (500, MANY, "/alerts?limit=500&offset=500")


def rows_of(response) -> list[dict]:
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert response.data.startswith("\ufeff".encode())  # the BOM: Excel reads the file as UTF-8
    return list(csv.DictReader(io.StringIO(response.data.decode("utf-8-sig"), newline=""), delimiter=";"))


def test_both_lists_as_csv_parse_back_with_every_row_and_the_json_fields_as_columns(many):
    alerts = rows_of(many.get("/alerts?format=csv"))
    assert len(alerts) == MANY and len({a["alert_id"] for a in alerts}) == MANY
    assert {(a["kind"], a["who"], a["due_on"], a["days_overdue"]) for a in alerts} == {("missed", "ibge",
                                                                                        "2025-11-18", "1")}
    listed, _ = walk(many, "/alerts?limit=5000")
    assert [a["alert_id"] for a in alerts] == [a["alert_id"] for a in listed]
    deadlines = rows_of(many.client.get("/deadlines?status=missed", headers=many.headers(
        "auditor", **{"Accept": "text/csv"})))
    assert len(deadlines) == MANY and set(deadlines[0]) == set(many.get("/deadlines").get_json()["items"][0])
    assert 'filename="prazos-2025-11-19.csv"' in many.client.get(
        "/deadlines?format=csv", headers=many.headers("auditor")).headers["Content-Disposition"]


def test_csv_is_asked_by_accept_or_format_and_json_stays_the_default(many):
    assert many.get("/alerts?limit=1").mimetype == "application/json"
    browser = many.client.get("/alerts?limit=1", headers=many.headers("auditor", Accept="text/html,*/*;q=0.8"))
    assert browser.mimetype == "application/json"
    assert many.client.get("/alerts?format=json", headers=many.headers(
        "auditor", Accept="text/csv")).mimetype == "application/json"
    assert many.get("/alerts?format=xlsx").status_code == 422


def test_a_csv_cell_a_spreadsheet_would_run_as_a_formula_is_written_after_an_apostrophe():
    from api.exports import csv_lines

    text = "".join(csv_lines(["subject", "days_overdue"], [{"subject": "=HYPERLINK(\"x\")", "days_overdue": -1},
                                                           {"subject": "Feijó; 2", "days_overdue": None}]))
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""), delimiter=";"))
    assert rows == [["subject", "days_overdue"], ["'=HYPERLINK(\"x\")", "-1"], ["Feijó; 2", ""]]
