"""docs/law/deadlines.md, "When a deadline is missed": which alert a deadline calls for on the day before, of and
after each boundary."""

from __future__ import annotations

from datetime import date, datetime, timezone
from uuid import UUID, uuid5

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.acts import Actor
from domain.alerts import ALERTS_NAMESPACE, SYSTEM_ALERTS_NAMESPACE, Alert, alert_due
from domain.application import Tramita
from infrastructure.persistence import persistence_env
from tests.stores import SEEDED_ON
from tests.test_article_rules import requisition_received

# docs/law/deadlines.md's worked example: received Fri 2025-10-17, 30 days, moved over the 17 Nov holiday
DUE = date(2025, 11, 18)
OPEN = {"closed_by": None, "due_on": DUE}
SCHEDULER = Actor("tramita-scheduler", "scheduler")


@pytest.mark.parametrize(("today", "expected"), [
    (date(2025, 11, 12), None),
    (date(2025, 11, 13), "due-in-5-days"),
    (date(2025, 11, 16), "due-in-5-days"),
    (date(2025, 11, 17), "due-in-1-day"),
    (DUE, "due-in-1-day"),
    (date(2025, 11, 19), "missed"),
])
def test_an_open_deadline_is_due_soon_within_each_threshold_and_missed_once_its_last_day_has_ended(today, expected):
    assert alert_due(OPEN, today, (5, 1)) == expected


def test_a_closed_deadline_or_one_without_a_due_date_calls_for_no_alert():
    assert alert_due({"closed_by": "LedgerTransferred", "due_on": DUE}, date(2026, 1, 1), (5, 1)) is None
    assert alert_due({"closed_by": None, "due_on": None}, date(2026, 1, 1), (5, 1)) is None


def test_the_missed_alert_waits_for_the_due_day_to_end_in_rio_branco_not_in_utc():
    now = [datetime(2025, 10, 20, 12, tzinfo=timezone.utc)]
    app = Tramita(persistence_env("memory://"), clock=lambda: now[0])
    app.seed_registry(Actor("ibge-seed", "ibge"), SEEDED_ON)
    case, _ = requisition_received(app)
    kinds = lambda ids: [app.repository.get(i).kind for i in ids]  # noqa: E731
    now[0] = datetime(2025, 11, 19, 4, 59, tzinfo=timezone.utc)  # 23:59 on the 18th in Rio Branco (UTC-5)
    assert kinds(app.raise_alerts(case, SCHEDULER, thresholds=(5, 1))) == ["due-in-1-day"]
    now[0] = datetime(2025, 11, 19, 5, 0, tzinfo=timezone.utc)  # midnight in Rio Branco: the last day has ended
    missed = app.raise_alerts(case, SCHEDULER, thresholds=(5, 1))
    assert kinds(missed) == ["missed"]
    assert app.raise_alerts(case, SCHEDULER, thresholds=(5, 1)) == []
    alert = app.repository.get(missed[0])
    assert (alert.article, alert.due_on, alert.days_overdue, alert.raised_on) == ("art-10", DUE, 1, date(2025, 11, 19))
    assert alert.id == Alert.id_for(app.resolve_case(case), alert.deadline, "missed")


def test_a_deadline_an_act_recorded_missed_calls_for_the_missed_alert_even_on_its_due_day():
    # Art. 26 par. ún.: personnel documents not sent by the installation are recorded missed on that very day
    recorded_missed = {"closed_by": None, "due_on": DUE, "status": "missed"}
    assert alert_due(recorded_missed, DUE, (5, 1)) == "missed"
    assert alert_due({**recorded_missed, "closed_by": "personnel-documents-sent"}, DUE, (5, 1)) is None


@settings(max_examples=500)
@given(case_id=st.uuids().map(str) | st.text(), deadline=st.text(), kind=st.text())
def test_an_alert_id_is_the_name_based_uuid_of_its_case_deadline_and_kind_as_it_always_was(case_id, deadline, kind):
    """Stored alerts are found again by these ids: the faster working out must give exactly `uuid.uuid5`'s."""
    try:
        expected = uuid5(ALERTS_NAMESPACE, f"{case_id}:{deadline}:{kind}")
    except UnicodeEncodeError:  # a lone surrogate: no id either way
        with pytest.raises(UnicodeEncodeError):
            Alert.id_for(case_id, deadline, kind)
        return
    assert Alert.id_for(case_id, deadline, kind) == expected
    assert Alert.system_id_for(kind, deadline) == uuid5(SYSTEM_ALERTS_NAMESPACE, f"{kind}:{deadline}")


def test_the_alert_ids_of_a_known_case_are_those_recorded_before():
    """Worked out with `uuid.uuid5` before the faster working out: the ids of alerts already stored."""
    case_id = "0f8fad5b-d9cb-469f-a165-70867728950e"
    assert str(Alert.id_for(case_id, "R1", "missed")) == "4ff0e0ed-4f0f-5a18-9252-c454bfeb0535"
    assert Alert.id_for(UUID(case_id), "R1", "missed") == Alert.id_for(case_id, "R1", "missed")
    assert str(Alert.system_id_for("projection-failure", "cases")) == "504611ee-57d2-5688-a018-79ae5ecf7f2d"
