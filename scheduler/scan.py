"""One scan: the deadlines (and Art. 10 §1 breaches) that call for an alert today, recorded as alert events, each
at most once.

1. The projector catches up first (`catch_up=True`): the deadlines table is a read model, and a deadline opened
   by an act recorded since the projector's last batch (or with no projector running at all) would otherwise be
   seen only at a later scan. Catching up is safe beside a running projector (its positions are compare-and-set).
2. The deadlines that can still call for an alert (no closing act, and no `missed` alert recorded) due by
   `today + the largest threshold` are read from the deadlines table through its `alerts_due_on` index: the
   scan costs O(due), not O(all deadlines), and a deadline overdue and left open costs nothing once it has been
   alerted missed (projections/rows.py, `deadline_rows`: the column is right for any thresholds).
3. Each is judged with the domain's `alert_due`; so is each requisition refused (Art. 10 §1: a breach raises an
   alert), read from the cases table. Those whose alert the event store already holds are left out (a deadline
   warned 5 days before stays in step 2's answer until its 1-day warning and its `missed` alert, a breach for
   ever; each alert is recorded once). What is recorded is read from the alert events (scheduler/pending.py), not
   from the alerts table: a row inserted there under an alert's id would otherwise keep that alert from ever being
   raised; a row deleted only sends its case to be judged again, which records nothing twice.
4. `app.raise_alerts` is called once per case left: it judges again from the case aggregate, the source of truth,
   and records each alert under its deterministic id, so a row that lags behind its case never raises a wrong
   alert, and a repeated scan, a restart or a second scheduler never records one twice. A case whose events can
   no longer be applied (the projector has recorded it and raised its system alert) is left out and named in
   `unreadable`; the other cases are judged.

`today` is the application's clock's day in Rio Branco (the alert clock is the application's, injected).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any
from uuid import UUID

from eventsourcing.persistence import PersistenceError

from domain.acts import Actor
from domain.alerts import BREACH, Alert, alert_due
from domain.application import Tramita
from projections import queries
from projections.failures import describe
from projections.projector import Projector
from infrastructure.store import Store
from scheduler.pending import AlertEvents

#: The scheduler's own actor: alerts are the system's acts, attributed to it.
SCHEDULER = Actor("tramita-scheduler", "scheduler")


@dataclass
class ScanResult:
    today: date
    deadlines: int
    """Deadlines read from the table (due by the horizon, no closing act, not yet alerted missed)."""
    cases: int
    """Cases whose aggregate was asked to raise alerts."""
    raised: list[Alert] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    """Cases that could not be judged: (case id, why)."""


def scan(app: Tramita, store: Store, *, thresholds: tuple[int, ...], projector: Projector | None = None,
         actor: Actor = SCHEDULER, recorded: AlertEvents | None = None) -> ScanResult:
    """Raise the alerts the deadlines call for today; return what was read and the alerts recorded.

    `recorded`: the scheduler's reader of the alert events, caught up here; None: one read for this scan."""
    if projector is not None:
        projector.catch_up()
    if recorded is None:
        recorded = AlertEvents(app)
    recorded.catch_up()
    today = app.system_context(actor).today
    rows = queries.alerting_deadlines_due_by(store, today + timedelta(days=max(thresholds)))
    wanted: dict[str, str] = {}  # alert id -> case id
    judged_whole: set[str] = set()  # cases with a row the read models hold wrong: the case itself decides
    for row in rows:
        try:
            deadline = {"closed_by": row["closed_by"], "status": row["status"],
                        "due_on": date.fromisoformat(row["due_on"])}
            kind = alert_due(deadline, today, thresholds)
        except (TypeError, ValueError):  # a due day that is no date (an administrator's edit): not a scan's end
            judged_whole.add(row["case_id"])
            continue
        if kind is not None:
            wanted[str(Alert.id_for(row["case_id"], row["deadline"], kind))] = row["case_id"]
    for case_id, requisition in queries.breached_requisitions(store):  # Art. 10 §1: each breach alerted once
        if requisition is None:
            judged_whole.add(case_id)
        else:
            wanted[str(Alert.id_for(case_id, f"requisition-answer:{requisition}", BREACH))] = case_id
    cases = sorted({str(case_id) for alert_id, case_id in wanted.items() if alert_id not in recorded}
                   | {str(case_id) for case_id in judged_whole})
    raised: list[UUID] = []
    unreadable: list[tuple[str, str]] = []
    for case_id in cases:
        try:
            raised += app.raise_alerts(UUID(case_id), actor, thresholds=thresholds)
        except PersistenceError:  # the store's trouble: the scan fails and the next one tries again
            raise
        except Exception as error:  # an event of the case that no longer applies: judge the others
            unreadable.append((case_id, describe(error)))
    return ScanResult(today, len(rows), len(cases), [app.get_alert(alert_id) for alert_id in raised], unreadable)


def readable_alert(app: Tramita, alert_id: Any, log: Callable[..., None]) -> Alert | None:
    """The alert an alerts row names; None, logged as `alert-unreadable`, for a row that names no alert recorded
    (an administrator's edit to the read models: the alerts themselves are events, and the scan judges their cases
    whole), so that one such row holds up no delivery."""
    try:
        return app.get_alert(UUID(str(alert_id)))
    except PersistenceError:  # the store's trouble: the caller's to see
        raise
    except Exception as error:  # noqa: BLE001 - see the docstring
        log("alert-unreadable", alert_id=str(alert_id), error=describe(error))
        return None
