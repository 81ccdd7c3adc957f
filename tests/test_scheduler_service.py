"""The scheduler's service in one process: the catch-up after a week down, the cron run stopped cleanly, and the
SQLite lock file excluding a second leader until the first lets go."""

from __future__ import annotations

import threading
from datetime import date, datetime, timezone

from domain.acts import Actor
from domain.application import Tramita
from infrastructure.persistence import persistence_env
from projections.projector import Projector
from infrastructure.store import open_store
from scheduler.config import SchedulerConfig
from scheduler.leader import FileLeadership, NoLeadership, lock_key
from scheduler.scan import scan
from scheduler.service import run
from tests.stores import SEEDED_ON
from tests.test_article_rules import FEIJO, TARAUACA, XAPURI
from tests.test_projector_crash import wait_for
from tests.test_scheduler_processes import unanswered_requisitions


def app_at(now: list[datetime]) -> Tramita:
    app = Tramita(persistence_env("memory://"), clock=lambda: now[0])
    app.seed_registry(Actor("ibge-seed", "ibge"), SEEDED_ON)
    return app


def test_a_scheduler_down_for_a_week_raises_at_its_first_scan_the_alert_each_deadline_calls_for_that_day():
    now = [datetime(2025, 10, 20, 12, tzinfo=timezone.utc)]
    app = app_at(now)
    unanswered_requisitions(app, FEIJO, ("ibge",))  # received Fri 2025-10-17: due Tue 2025-11-18
    store = open_store("memory://")
    projector = Projector(app, store)
    projector.migrate()
    now[0] = datetime(2025, 11, 10, 14, tzinfo=timezone.utc)  # the last scan before the week down
    assert scan(app, store, thresholds=(5, 1), projector=projector).raised == []
    now[0] = datetime(2025, 11, 19, 14, tzinfo=timezone.utc)  # back a day after the due day
    [alert] = scan(app, store, thresholds=(5, 1), projector=projector).raised
    # the warnings of the week down (due in 5 days on 11-13, in 1 day on 11-17) are past: what is true now is raised
    assert (alert.kind, alert.due_on, alert.days_overdue) == ("missed", date(2025, 11, 18), 1)
    store.close()


def test_the_scheduler_scans_at_start_then_waits_for_its_cron_and_stops_cleanly_when_told():
    now = [datetime(2025, 10, 20, 12, tzinfo=timezone.utc)]
    app = app_at(now)
    unanswered_requisitions(app, TARAUACA, ("ibge", "tre"))
    now[0] = datetime(2025, 11, 19, 14, tzinfo=timezone.utc)
    store = open_store("memory://")
    Projector(app, store).migrate()
    stop, lines, codes = threading.Event(), [], []
    config = SchedulerConfig("memory://", cron="0 0 1 1 *")
    thread = threading.Thread(target=lambda: codes.append(run(
        config, app, store, NoLeadership(), stop=stop, log=lambda event, **fields: lines.append((event, fields)))))
    thread.start()
    assert wait_for(lambda: any(event == "scan" for event, _ in lines), 30)
    stop.set()
    thread.join(30)
    assert codes == [0]
    # the read models' check runs at the start on the scheduler's pool, beside the scan: logged before the stop or
    # not at all, however the two threads meet
    checks = [event for event, _ in lines if event == "read-models-checked"]
    assert [event for event, _ in lines if event != "read-models-checked"] == ["leader", "alert", "alert", "scan",
                                                                               "stopped"]
    assert len(checks) <= 1 and lines[-1][0] == "stopped"
    store.close()


def test_a_second_scheduler_on_a_sqlite_file_waits_until_the_first_lets_go(tmp_path):
    path = str(tmp_path / "tramita.sqlite.scheduler.lock")
    first, second = FileLeadership(path), FileLeadership(path)
    assert first.try_acquire()
    assert not second.try_acquire()
    assert second.holder() is not None
    first.release()
    assert second.try_acquire()
    second.release()


def test_the_postgresql_lock_key_is_fixed_and_fits_a_signed_bigint():
    assert lock_key() == lock_key("tramita-scheduler")
    assert -2 ** 63 <= lock_key() < 2 ** 63 and lock_key() != lock_key(XAPURI)


def test_a_refused_requisition_raises_one_breach_alert_naming_the_body_and_its_answer_stays_due():
    from tests.test_article_rules import MESA, requisition_received

    now = [datetime(2025, 10, 20, 12, tzinfo=timezone.utc)]
    app = app_at(now)
    case, requisition = requisition_received(app)  # received Fri 2025-10-17: the answer is due Tue 2025-11-18
    app.refuse_requisition(case, MESA, date(2025, 10, 20), requisition=requisition, reason="sigilo fiscal")
    store = open_store("memory://")
    projector = Projector(app, store)
    projector.migrate()
    now[0] = datetime(2025, 10, 21, 14, tzinfo=timezone.utc)
    [breach] = scan(app, store, thresholds=(5, 1), projector=projector).raised
    assert (breach.kind, breach.article, breach.who, breach.deadline, breach.due_on, breach.days_overdue) == (
        "breach", "art-10-par-1", "ibge", f"requisition-answer:{requisition}", date(2025, 11, 18), 0)
    assert scan(app, store, thresholds=(5, 1), projector=projector).raised == []
    # Art. 10 §1: the refusal does not end the duty to answer; its deadline is alerted as any other.
    now[0] = datetime(2025, 11, 13, 14, tzinfo=timezone.utc)
    assert [a.kind for a in scan(app, store, thresholds=(5, 1), projector=projector).raised] == ["due-in-5-days"]
    store.close()
