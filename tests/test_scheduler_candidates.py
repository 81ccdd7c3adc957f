"""Which deadlines the scheduler's scan reads (`alerts_due_on`, projections/rows.py): a closed or undated deadline
never, an overdue one left open no more once it has been alerted missed (whatever the thresholds), a warned one
until its last alert, on the day before, of and after each boundary; and the column is the same followed batch by
batch, after a later act on its case and rebuilt from the first event.

The worked example of docs/law/deadlines.md: an Art. 10 requisition received on Fri 2025-10-17 and never answered,
due on Tue 2025-11-18. With thresholds (5, 1): "due in 5 days" from Thu 11-13, "due in 1 day" from Mon 11-17,
"missed" from Wed 11-19.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from types import SimpleNamespace
from uuid import NAMESPACE_URL, uuid5

import pytest

from domain.acts import Actor
from domain.alerts import Alert
from domain.demo import MESA
from projections import queries
from projections.projector import Projector
from projections.rows import deadline_rows, missed_alert_ids
from infrastructure.store import open_store
from projections.writing import table_rows
from scheduler.scan import scan
from tests.stores import make_app
from tests.test_article_rules import FEIJO, TARAUACA, XAPURI, open_by_voters, requisition_received, signatures
from tests.test_projections import snapshot
from tests.test_scheduler_processes import unanswered_requisitions

THRESHOLDS = (5, 1)
IBGE = Actor("ibge-t", "ibge")


def received_requisition(app, code: str, first: int, received_on: date) -> str:
    """A voters' case of `code` whose requisition to the IBGE, issued on 2025-10-15, was received on `received_on`."""
    case = open_by_voters(app, date(2025, 10, 14), signatures(30, code, first=first), origins=(code,)).number
    issued = app.issue_requisition(case, MESA, date(2025, 10, 15), body="ibge", items=["art-4"]).result
    app.receive_requisition(case, MESA, received_on, requisition=issued)
    return case


def at_nine(day: date) -> datetime:
    """09:00 in Rio Branco (UTC-5) on `day`: when the scheduler scans."""
    return datetime(day.year, day.month, day.day, 14, tzinfo=timezone.utc)


@pytest.fixture
def unanswered(database_url):
    """The requisition received on 2025-10-17 and never answered; the app, its clock, the store and the projector."""
    now = [datetime(2025, 10, 20, 12, tzinfo=timezone.utc)]
    app = make_app(database_url, clock=lambda: now[0])
    case, requisition = requisition_received(app)
    store = open_store(database_url)
    projector = Projector(app, store)
    projector.migrate()
    projector.catch_up()
    yield app, now, store, projector, case, f"requisition-answer:{requisition}"
    store.close()


def read_by_scan(store, day: date, thresholds: tuple[int, ...] = THRESHOLDS) -> list[str]:
    """The deadlines the scan of `day` reads (due by `day` + the largest threshold, still alerting)."""
    return [row["deadline"] for row in queries.alerting_deadlines_due_by(store, day + timedelta(days=max(thresholds)))]


def column(store, key: str) -> str | None:
    [(value,)] = store.query("SELECT alerts_due_on FROM deadlines WHERE deadline = ?", (key,))
    return value


def test_an_overdue_deadline_alerted_missed_is_no_longer_read_by_the_scan_while_it_stays_open(unanswered):
    app, now, store, projector, case, key = unanswered
    now[0] = at_nine(date(2025, 11, 19))
    assert read_by_scan(store, date(2025, 11, 19)) == [key]
    [alert] = scan(app, store, thresholds=THRESHOLDS, projector=projector).raised
    assert (alert.kind, alert.deadline) == ("missed", key)
    projector.catch_up()
    assert column(store, key) is None
    for day in (date(2025, 11, 19), date(2025, 11, 20), date(2026, 11, 19)):
        assert read_by_scan(store, day) == []
        assert read_by_scan(store, day, thresholds=(30, 7, 0)) == []  # whatever the thresholds
        assert [r["deadline"] for r in queries.open_deadlines_due_by(store, day)] == [key]  # still open, overdue
        now[0] = at_nine(day)
        result = scan(app, store, thresholds=THRESHOLDS, projector=projector)
        assert (result.deadlines, result.cases, result.raised) == (0, 0, [])


def test_a_later_act_on_the_case_keeps_its_deadline_out_of_the_scan_once_alerted_missed(unanswered):
    app, now, store, projector, case, key = unanswered
    now[0] = at_nine(date(2025, 11, 19))
    scan(app, store, thresholds=THRESHOLDS, projector=projector)
    projector.catch_up()
    app.issue_requisition(case, MESA, date(2025, 11, 19), body="tre", items=["art-4-III"])  # rewrites the case's rows
    projector.catch_up()
    assert column(store, key) is None and read_by_scan(store, date(2025, 11, 20)) == []


def test_a_deadline_row_alerts_until_closed_or_alerted_missed_whatever_its_status():
    due = date(2025, 11, 18)
    state = lambda status, due_on=due, closed_by=None: {  # noqa: E731
        "rule": "r", "article": "art-10", "who": "ibge", "municipality": None, "starts_on": date(2025, 10, 17),
        "due_on": due_on, "status": status, "closed_by": closed_by, "closed_on": None, "days_late": None}
    deadlines = {"open": state("open"), "undated": state("open", due_on=None), "recorded-missed": state("missed"),
                 "met": state("met-late", closed_by="finding-recorded")}
    case = SimpleNamespace(id=uuid5(NAMESPACE_URL, "a case"), number="LC35-2025-0001", kind="creation",
                           deadlines=deadlines, standing_deadlines=lambda: deadlines)  # a case not archived
    columns = lambda recorded=frozenset(): {row[1]: row[-1] for row in deadline_rows(case, recorded)}  # noqa: E731
    assert columns() == {"open": "2025-11-18", "undated": None, "recorded-missed": "2025-11-18", "met": None}
    assert set(missed_alert_ids(case).values()) == {"open", "recorded-missed"}
    alerted = {Alert.id_for(case.id, key, "missed") for key in ("open", "recorded-missed")}
    assert columns(alerted) == {"open": None, "undated": None, "recorded-missed": None, "met": None}
    warned = {Alert.id_for(case.id, key, kind) for key in ("open", "recorded-missed")
              for kind in ("due-in-5-days", "due-in-1-day", "breach")}
    assert columns(warned) == columns()  # no other alert ends a deadline's alerts


def test_the_projector_works_out_each_missed_alert_id_once_and_writes_the_same_deadline_rows(monkeypatch):
    """Each id is a SHA-1 (`Alert.id_for`); the rows were worked out twice per case and batch: once to ask the
    store which alerts it holds, once to write the rows."""
    due = date(2025, 11, 18)
    deadlines = {key: {"rule": "r", "article": "art-10", "who": "ibge", "municipality": None, "starts_on": due,
                       "due_on": due, "status": "open", "closed_by": None, "closed_on": None, "days_late": None}
                 for key in ("R1", "R2", "R3")}
    case = SimpleNamespace(id=uuid5(NAMESPACE_URL, "a case"), number="LC35-2025-0001", kind="creation",
                           deadlines=deadlines, standing_deadlines=lambda: deadlines)
    alerted = {Alert.id_for(case.id, "R2", "missed")}
    expected = deadline_rows(case, alerted)
    made = []
    id_for = Alert.id_for
    monkeypatch.setattr(Alert, "id_for", staticmethod(lambda *args: made.append(args) or id_for(*args)))
    asked = []
    rows = table_rows("deadlines", [case], lambda ids: asked.append(list(ids)) or alerted & set(ids))
    assert rows == expected and [row[-1] for row in rows] == ["2025-11-18", None, "2025-11-18"]
    assert len(made) == 3 and len(asked) == 1 and len(asked[0]) == 3


#: The scan of each day (09:00 in Rio Branco), from the day before the 5-day warning to the day after the missed
#: alert: does it read the deadline, and which alert does it raise.
WALK = [
    (date(2025, 11, 12), False, None),  # the day before "due in 5 days"
    (date(2025, 11, 13), True, "due-in-5-days"),
    (date(2025, 11, 14), True, None),
    (date(2025, 11, 16), True, None),  # the day before "due in 1 day"
    (date(2025, 11, 17), True, "due-in-1-day"),
    (date(2025, 11, 18), True, None),  # the due day: the day before "missed"
    (date(2025, 11, 19), True, "missed"),
    (date(2025, 11, 20), False, None),
]


def test_a_deadline_warned_5_days_before_is_read_until_its_1_day_warning_and_its_missed_alert(unanswered):
    app, now, store, projector, case, key = unanswered
    seen = []
    for day, _, _ in WALK:
        now[0] = at_nine(day)
        projector.catch_up()  # what the scan itself does first: the day's question is asked of current rows
        read = read_by_scan(store, day) == [key]
        result = scan(app, store, thresholds=THRESHOLDS, projector=projector)
        assert result.deadlines == int(read)
        seen.append((day, read, result.raised[0].kind if result.raised else None))
        assert len(result.raised) <= 1
    assert seen == WALK
    projector.catch_up()
    ids = {a["alert_id"] for a in queries.alerts(store, case_id=str(app.resolve_case(case)))}
    assert ids == {str(Alert.id_for(app.resolve_case(case), key, kind)) for kind in
                   ("due-in-5-days", "due-in-1-day", "missed")}


def test_a_deadline_warned_under_some_thresholds_is_still_warned_under_others_after_a_restart(unanswered):
    app, now, store, projector, case, key = unanswered
    now[0] = at_nine(date(2025, 11, 13))
    assert [a.kind for a in scan(app, store, thresholds=(5, 1), projector=projector).raised] == ["due-in-5-days"]
    now[0] = at_nine(date(2025, 11, 15))  # restarted with `--thresholds 3`: 3 days are left
    assert read_by_scan(store, date(2025, 11, 15), thresholds=(3,)) == [key]
    assert [a.kind for a in scan(app, store, thresholds=(3,), projector=projector).raised] == ["due-in-3-days"]


def test_a_rebuild_gives_the_same_alerts_column_as_the_batches_followed(database_url):
    now = [datetime(2025, 10, 20, 12, tzinfo=timezone.utc)]
    app = make_app(database_url, clock=lambda: now[0])
    store = open_store(database_url)
    try:
        projector = Projector(app, store, batch_size=3)
        projector.migrate()
        alerted = unanswered_requisitions(app, FEIJO, ("ibge", "tre"))  # due 11-18: warned, then missed
        warned = received_requisition(app, TARAUACA, 100, date(2025, 10, 20))  # due 11-19: warned, not yet missed
        for day in (date(2025, 11, 13), date(2025, 11, 14), date(2025, 11, 19)):
            now[0] = at_nine(day)
            scan(app, store, thresholds=THRESHOLDS, projector=projector)
        # the IBGE answers late after its `missed` alert, and the case's rows are written again
        app.record_finding(alerted, IBGE, date(2025, 11, 19), item="art-4-I", value=2100, document="Ofício 9/2025")
        later = received_requisition(app, XAPURI, 200, date(2025, 11, 19))  # due 12-19
        projector.catch_up()
        by_case = {}
        for row in store.query_dicts("SELECT * FROM deadlines ORDER BY case_number, deadline"):
            by_case.setdefault(row["case_number"], set()).add((row["status"], row["due_on"], row["alerts_due_on"]))
        assert by_case == {
            alerted: {("met-late", "2025-11-18", None), ("open", "2025-11-18", None)},  # closed; alerted missed
            warned: {("open", "2025-11-19", "2025-11-19")},  # warned in 1 day: its `missed` alert to come
            later: {("open", "2025-12-19", "2025-12-19")},
        }
        followed = snapshot(store)
        Projector(app, store, names=["deadlines"], batch_size=2).rebuild()  # what `tramita migrate` does
        assert snapshot(store) == followed
        projector.rebuild()
        assert snapshot(store) == followed
    finally:
        store.close()


def test_the_scan_reads_the_alerts_due_on_index():
    app = make_app("memory://")
    requisition_received(app)
    store = open_store("memory://")  # SQLite, which names the index it searches even over a few rows
    try:
        projector = Projector(app, store)
        projector.migrate()
        projector.catch_up()
        plan = store.explain(queries.ALERTING_DUE_BY, ("2025-11-24",)).lower()
        assert "ix_deadlines_alerts_due_on" in plan and "search" in plan, plan
    finally:
        store.close()
