"""What is left to deliver is decided from the alert events, never from the `alerts` or `alert_deliveries` tables
(scheduler/pending.py, docs/scheduler.md): a database administrator who marks those rows delivered, or deletes them,
silences no alert, and each alert still reaches a local receiver exactly once."""

from __future__ import annotations

import shutil
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from domain.acts import Actor
from domain.alerts import MISSED, Alert
from scheduler.config import SchedulerConfig
from scheduler.leader import NoLeadership
from scheduler.pending import AlertEvents
from scheduler.scan import SCHEDULER, scan
from scheduler.service import Scanner, run, webhook_for
from tests.api_client import ApiHarness, harness_on
from tests.conftest import BACKENDS
from tests.stores import make_app
from tests.test_article_rules import TARAUACA
from tests.test_scheduler_webhook import SECRET, Server
from tests.test_subscriptions import ACTS_DAY, FAST, SCANNED, SUBSCRIBED, requisitions, subscribe, subscribing

FIXTURE_STORE = Path(__file__).resolve().parent / "fixtures" / "v1" / "store.sqlite"

MARKED_DELIVERED = "UPDATE alerts SET delivery = 'delivered', delivery_tries = 1, delivery_error = NULL"
EMPTIED = "DELETE FROM alerts"


@pytest.fixture
def api(tmp_path) -> Iterator[ApiHarness]:
    yield from subscribing(f"sqlite:///{tmp_path / 'api.sqlite'}", TRAMITA_SUBSCRIPTION_PRIVATE_URLS="1")


def raised_undelivered(api: ApiHarness) -> list[str]:
    """Two requisitions missed (the IBGE's and the TRE's), their alerts recorded by a scan that hands them to no
    receiver, and projected: the alerts table shows them undelivered."""
    requisitions(api, TARAUACA, ("ibge", "tre"))
    api.clock.now = SCANNED
    raised = scan(api.app, api.store, thresholds=(5, 1), projector=api.projector).raised
    api.projector.catch_up()
    assert [row["delivery"] for row in api.store.query_dicts("SELECT delivery FROM alerts")] == [None, None]
    return sorted(str(alert.id) for alert in raised)


def edit(api: ApiHarness, *statements: str) -> None:
    """What a database administrator may do to the read models."""
    with api.store.transaction() as tx:
        for statement in statements:
            tx.execute(statement)


def scheduler_once(api: ApiHarness, lines: list, webhook_url: str | None = None) -> int:
    """One `tramita scheduler --once` process, in this one: a fresh reading of the alert events."""
    config = SchedulerConfig(api.url, webhook_url=webhook_url, webhook_secret=SECRET if webhook_url else None,
                             webhook_tries=1, subscription_private_urls=True)
    return run(config, api.app, api.store, NoLeadership(), stop=threading.Event(),
               log=lambda event, **fields: lines.append((event, fields)), once=True, webhook_options=FAST)


def delivered_ids(server: Server) -> list[str]:
    return sorted(body["alert_id"] for body in server.bodies)


@pytest.mark.parametrize("statements", [[MARKED_DELIVERED], [EMPTIED]], ids=["marked delivered", "emptied"])
def test_each_alert_reaches_the_operators_receiver_once_whatever_the_alerts_table_says(api, statements):
    alerts = raised_undelivered(api)
    edit(api, *statements)
    receiver = Server([200])
    try:
        assert scheduler_once(api, [], receiver.url) == 0
        assert delivered_ids(receiver) == alerts
        edit(api, *statements)  # and again before the next process: still the events decide
        lines: list = []
        assert scheduler_once(api, lines, receiver.url) == 0
    finally:
        receiver.close()
    assert delivered_ids(receiver) == alerts  # nothing sent twice
    assert not [fields for event, fields in lines if event == "redelivering"]
    assert {api.app.get_alert(uuid.UUID(alert_id)).delivery for alert_id in alerts} == {"delivered"}


def test_an_alert_whose_round_failed_is_delivered_again_though_its_row_was_then_marked_delivered(api):
    alerts = raised_undelivered(api)
    receiver = Server([500, 200])
    try:
        log: list = []
        webhook = webhook_for(SchedulerConfig(api.url, webhook_url=receiver.url, webhook_secret=SECRET,
                                              webhook_tries=1), api.app, lambda *a, **k: None, **FAST)
        scanner = Scanner(api.app, api.store, api.projector, (5, 1), lambda event, **f: log.append(event), webhook)
        assert scanner.redeliver_now() == 2
        assert webhook.close(timeout=60)
        [failed] = [a for a in alerts if api.app.get_alert(uuid.UUID(a)).delivery == "failed"]
        api.projector.catch_up()
        edit(api, MARKED_DELIVERED, "DELETE FROM alert_deliveries")
        lines: list = []
        assert scheduler_once(api, lines, receiver.url) == 0  # a new process, at its start-up redelivery
        assert ("redelivering", {"alerts": 1}) in lines
        assert scheduler_once(api, [], receiver.url) == 0
    finally:
        receiver.close()
    bodies = [body["alert_id"] for body in receiver.bodies]
    assert sorted(bodies) == sorted([*alerts, failed])  # the failed one twice: refused (500), then delivered
    assert {api.app.get_alert(uuid.UUID(alert_id)).delivery for alert_id in alerts} == {"delivered"}


@pytest.mark.parametrize("forged", [True, False], ids=["deliveries marked delivered", "deliveries deleted"])
def test_each_subscription_receives_its_alert_once_whatever_the_delivery_tables_say(api, forged):
    requisitions(api, TARAUACA, ("ibge", "tre"))
    ibge_hook, tre_hook = Server([200]), Server([200])
    try:
        api.clock.now = SUBSCRIBED
        ibge = subscribe(api, "ibge", ibge_hook.url)
        tre = subscribe(api, "tre", tre_hook.url)
        api.clock.now = SCANNED
        raised = scan(api.app, api.store, thresholds=(5, 1), projector=api.projector).raised
        api.projector.catch_up()
        by_who = {alert.who: str(alert.id) for alert in raised}
        statements = [MARKED_DELIVERED, "DELETE FROM alert_deliveries"]
        if forged:
            statements += [f"INSERT INTO alert_deliveries (alert_id, subscription_id, delivery, tries) VALUES "
                           f"('{alert_id}', '{subscription['id']}', 'delivered', 1)"
                           for alert_id in by_who.values() for subscription in (ibge, tre)]
        else:
            statements += [EMPTIED]
        edit(api, *statements)
        lines: list = []
        assert scheduler_once(api, lines) == 0
        assert ("redelivering", {"alerts": 2}) in lines
        edit(api, *statements)
        again: list = []
        assert scheduler_once(api, again) == 0
    finally:
        ibge_hook.close()
        tre_hook.close()
    assert [body["alert_id"] for body in ibge_hook.bodies] == [by_who["ibge"]]
    assert [body["alert_id"] for body in tre_hook.bodies] == [by_who["tre"]]
    assert not [fields for event, fields in again if event == "redelivering"]  # a second round sends nothing
    for who, subscription in (("ibge", ibge), ("tre", tre)):
        assert api.app.get_alert(uuid.UUID(by_who[who])).deliveries[subscription["id"]]["delivery"] == "delivered"


def test_a_subscription_whose_round_failed_gets_its_alert_again_though_its_delivery_row_says_delivered(api):
    requisitions(api, TARAUACA, ("ibge",))
    hook = Server([500, 200])
    try:
        api.clock.now = SUBSCRIBED
        subscribed = subscribe(api, "ibge", hook.url)
        assert scheduler_once(api, []) == 0  # raised at the scan, and refused
        api.projector.catch_up()
        [row] = api.store.query_dicts("SELECT * FROM alert_deliveries")
        assert (row["subscription_id"], row["delivery"]) == (subscribed["id"], "failed")
        edit(api, "UPDATE alert_deliveries SET delivery = 'delivered', error = NULL")
        assert scheduler_once(api, []) == 0
        assert scheduler_once(api, []) == 0
    finally:
        hook.close()
    [alert_id] = {body["alert_id"] for body in hook.bodies}
    assert len(hook.bodies) == 2  # refused once, then delivered once: not a third time
    assert api.app.get_alert(uuid.UUID(alert_id)).deliveries[subscribed["id"]]["delivery"] == "delivered"


def test_an_alerts_row_written_under_a_due_alerts_id_keeps_it_neither_from_being_raised_nor_delivered(api):
    """The scan left out the deadlines whose alert the alerts table held: a row inserted there under the id of an
    alert not yet raised kept it from ever being recorded."""
    case, _ = requisitions(api, TARAUACA, ("ibge",))
    api.clock.now = SCANNED
    api.projector.catch_up()
    [deadline] = api.store.query_dicts("SELECT case_id, deadline FROM deadlines WHERE alerts_due_on IS NOT NULL")
    due = str(Alert.id_for(deadline["case_id"], deadline["deadline"], MISSED))
    edit(api, f"INSERT INTO alerts (alert_id, raised_at, delivery) VALUES ('{due}', '2025-11-19', 'delivered')")
    receiver = Server([200])
    try:
        lines: list = []
        assert scheduler_once(api, lines, receiver.url) == 0
    finally:
        receiver.close()
    assert [fields["raised"] for event, fields in lines if event == "scan"] == [1]
    assert delivered_ids(receiver) == [due]
    assert api.app.get_alert(uuid.UUID(due)).case_number == case


@pytest.mark.parametrize("backend", BACKENDS)
def test_on_each_store_the_alerts_table_emptied_withholds_no_alert_and_none_is_sent_twice(backend, request,
                                                                                          tmp_path):
    """The alert events are selected by their topics in SQL, which each store's recorder writes its own way."""
    with harness_on(backend, request, tmp_path) as api:
        api.clock.now = ACTS_DAY
        alerts = raised_undelivered(api)
        edit(api, EMPTIED)
        receiver = Server([200])
        try:
            assert scheduler_once(api, [], receiver.url) == 0
            edit(api, MARKED_DELIVERED, EMPTIED)
            assert scheduler_once(api, [], receiver.url) == 0
        finally:
            receiver.close()
        assert delivered_ids(receiver) == alerts


def test_the_reader_follows_the_log_from_where_it_stopped_and_knows_each_round_by_its_target(memory_app):
    events = AlertEvents(memory_app)
    assert events.catch_up() == 0 and len(events) == 0
    first = memory_app.raise_system_alert(SCHEDULER, kind="projection-failure", subject="a", message="m")
    second = memory_app.raise_system_alert(SCHEDULER, kind="projection-failure", subject="b", message="m")
    assert events.catch_up() == 2 and events.undelivered() == events.undelivered(system=True) == [first, second]
    memory_app.record_alert_delivery(first, SCHEDULER, tries=1)
    memory_app.record_alert_delivery(second, SCHEDULER, tries=2, error="HTTP 500")
    memory_app.record_alert_delivery(second, SCHEDULER, tries=1, subscription=uuid.uuid4())
    memory_app.issue_token(Actor("admin", "token-administrator"), name="t", role="ibge")  # not an alert event
    assert events.catch_up() == 3
    assert first in events and events.undelivered() == [second]  # failed: due again; another target's round aside
    assert events.catch_up() == 0


def test_the_alert_events_of_a_store_written_by_an_earlier_version_are_read_by_their_stored_topics(tmp_path):
    copy = tmp_path / "store.sqlite"
    shutil.copyfile(FIXTURE_STORE, copy)
    app = make_app(f"sqlite:///{copy}", seed=False, clock=lambda: datetime(2026, 12, 1, tzinfo=timezone.utc))
    events = AlertEvents(app)
    assert events.catch_up() == 3
    with sqlite3.connect(copy) as database:
        stored = {uuid.UUID(row[0]) for row in database.execute(
            "SELECT originator_id FROM stored_events WHERE topic = 'domain.alerts:Alert.Raised'")}
    assert set(events.undelivered()) == stored and all(alert_id in events for alert_id in stored)


def test_an_alert_event_edited_past_reading_is_named_and_holds_back_no_other_alert(api, tmp_path):
    alerts = raised_undelivered(api)
    edited, kept = alerts
    with sqlite3.connect(tmp_path / "api.sqlite") as database:
        changed = database.execute("UPDATE stored_events SET state = ? WHERE originator_id = ?",
                                   (b"{", uuid.UUID(edited).hex)).rowcount
    assert changed == 1
    receiver = Server([200])
    try:
        lines: list = []
        assert scheduler_once(api, lines, receiver.url) == 0
    finally:
        receiver.close()
    assert delivered_ids(receiver) == [kept]
    assert [fields["alert_id"] for event, fields in lines if event == "alert-unreadable"] == [edited]
