"""An archived case takes no further act (Art. 16 par. ún., or a withdrawal or rejection): a deadline still open and
not due before the archive's day ends with the case, shown `ended` and calling for no alert; one due before the
archive was missed while the case was live and keeps its `missed` alert (domain/case/deadlines.py)."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from domain.acts import Actor
from domain.application import Tramita
from domain.demo import MESA
from projections import queries
from projections.rows import case_rows, deadline_rows
from tests.stores import make_app
from tests.test_article_rules import requisition_received

DUE = date(2025, 11, 18)  # the requisition received on Fri 2025-10-17 (docs/law/deadlines.md's worked example)
KEY = "requisition-answer:R1"
SCHEDULER = Actor("tramita-scheduler", "scheduler")


def archived_on(archive_day: date) -> tuple[Tramita, str, list[datetime]]:
    now = [datetime(2025, 10, 20, 12, tzinfo=timezone.utc)]
    app = make_app("memory://", clock=lambda: now[0])
    case, requisition = requisition_received(app)
    assert f"requisition-answer:{requisition}" == KEY
    now[0] = datetime.combine(archive_day, datetime.min.time(), timezone.utc) + timedelta(hours=12)
    app.archive_case(case, MESA, archive_day, reason="Desistência dos autores")
    now[0] = datetime(2026, 1, 15, 12, tzinfo=timezone.utc)  # long after the due day
    return app, case, now


@pytest.mark.parametrize("archive_day", [DUE - timedelta(days=1), DUE])
def test_a_deadline_not_due_before_the_archive_ends_with_the_case_and_calls_for_no_alert(archive_day):
    app, case, _ = archived_on(archive_day)
    deadline = app.case_document(app.get_case(case))["deadlines"][KEY]
    assert (deadline["status"], deadline["closed_by"], deadline["closed_on"]) == ("ended", "case-archived", archive_day)
    assert app.raise_alerts(case, SCHEDULER, thresholds=(5, 1)) == []
    assert app.get_case(case).deadlines[KEY]["status"] == "open"  # as recorded: the ending is derived, not stored


def test_a_deadline_due_the_day_before_the_archive_was_missed_while_the_case_was_live_and_is_alerted_missed():
    app, case, _ = archived_on(DUE + timedelta(days=1))
    deadline = app.case_document(app.get_case(case))["deadlines"][KEY]
    assert deadline["closed_by"] is None
    raised = [app.get_alert(alert_id) for alert_id in app.raise_alerts(case, SCHEDULER, thresholds=(5, 1))]
    assert [(alert.deadline, alert.kind) for alert in raised] == [(KEY, "missed")]


def test_the_read_models_show_a_deadline_the_archive_ended_as_ended_and_never_read_it_for_alerts():
    app, case, now = archived_on(DUE - timedelta(days=1))
    current = app.get_case(case)
    (row,) = [row for row in deadline_rows(current) if row[1] == KEY]
    assert (row[10], row[11], row[12], row[14]) == ("ended", "case-archived", (DUE - timedelta(days=1)).isoformat(),
                                                    None)
    (case_row,) = case_rows(current)
    assert case_row[14] == 0 and case_row[15] is None  # no open deadline, nothing next due
    listed = queries.case_deadlines(current, today=now[0].date(), due_soon_days=5)
    assert [(r["deadline"], r["status"]) for r in listed] == [(KEY, "ended")]
    assert app.case_document(current)["obligations"]["deadlines"] == []
