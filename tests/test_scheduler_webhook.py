"""Webhook delivery against a local HTTP server: retries with a doubling pause, the delivery record kept as events
on the alert and shown in the alerts table, and an alert never lost by a failed delivery."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from domain.acts import Actor
from domain.application import Tramita, persistence_env
from projections import queries
from projections.projector import Projector
from projections.store import open_store
from scheduler.config import SchedulerConfig
from scheduler.jsonlog import alert_fields
from scheduler.leader import NoLeadership
from scheduler.scan import SCHEDULER, scan
from scheduler.service import Scanner, run
from scheduler.webhook import Webhook
from tests.stores import SEEDED_ON
from tests.test_article_rules import requisition_received

MISSED_DAY = datetime(2025, 11, 19, 14, tzinfo=timezone.utc)  # 09:00 in Rio Branco, the day after the due day


class Server:
    """A webhook on 127.0.0.1 answering each POST with the next status of `statuses` (the last one repeats)."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses, self.bodies = list(statuses), []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                server.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                status = server.statuses.pop(0) if len(server.statuses) > 1 else server.statuses[0]
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/alerts"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def servers() -> Iterator:
    started: list[Server] = []

    def start(statuses: list[int]) -> Server:
        started.append(Server(statuses))
        return started[-1]

    yield start
    for server in started:
        server.close()


@pytest.fixture
def missed():
    """An Art. 10 requisition missed on 2025-11-19, its alert recorded; the app, store and projector."""
    now = [datetime(2025, 10, 20, 12, tzinfo=timezone.utc)]
    app = Tramita(persistence_env("memory://"), clock=lambda: now[0])
    app.seed_registry(Actor("ibge-seed", "ibge"), SEEDED_ON)
    requisition_received(app)
    store = open_store("memory://")
    projector = Projector(app, store)
    projector.migrate()
    now[0] = MISSED_DAY
    [alert] = scan(app, store, thresholds=(5, 1), projector=projector).raised
    yield app, store, projector, alert
    store.close()
    app.close()


def record(app: Tramita):
    return lambda alert_id, tries, error: app.record_alert_delivery(alert_id, SCHEDULER, tries=tries, error=error)


def test_an_alert_refused_twice_by_the_webhook_is_delivered_on_the_third_try_and_recorded_delivered(missed, servers):
    app, store, projector, alert = missed
    server = servers([500, 500, 200])
    pauses: list[float] = []
    webhook = Webhook(server.url, record(app), tries=5, backoff=1.5, sleep=pauses.append)
    webhook.submit(alert.id, alert_fields(alert))
    assert webhook.close(timeout=30)
    assert server.bodies == [alert_fields(alert)] * 3
    assert server.bodies[0]["kind"] == "missed" and server.bodies[0]["article"] == "art-10"
    assert pauses == [1.5, 3.0]
    delivered = app.get_alert(alert.id)
    assert (delivered.delivery, delivered.delivery_tries, delivered.delivery_error) == ("delivered", 3, None)
    projector.catch_up()
    [row] = queries.alerts(store)
    assert (row["delivery"], row["delivery_tries"]) == ("delivered", 3)
    assert queries.undelivered_alerts(store) == []


def test_a_webhook_that_always_fails_leaves_a_failed_record_after_n_tries_and_the_alert_stands(missed, servers):
    app, store, projector, alert = missed
    server = servers([503])
    webhook = Webhook(server.url, record(app), tries=3, sleep=lambda _: None)
    webhook.submit(alert.id, alert_fields(alert))
    assert webhook.close(timeout=30)
    assert len(server.bodies) == 3
    failed = app.get_alert(alert.id)
    assert (failed.delivery, failed.delivery_tries, failed.delivery_error) == ("failed", 3, "HTTP 503")
    assert failed.kind == "missed" and failed.version == 2  # the alert is kept, with its delivery record after it
    projector.catch_up()
    assert [row["alert_id"] for row in queries.undelivered_alerts(store)] == [str(alert.id)]


def test_an_alert_whose_delivery_failed_is_delivered_again_on_the_next_start(missed, servers):
    app, store, projector, alert = missed
    down = servers([500])
    webhook = Webhook(down.url, record(app), tries=2, sleep=lambda _: None)
    webhook.submit(alert.id, alert_fields(alert))
    webhook.close(timeout=30)
    assert app.get_alert(alert.id).delivery == "failed"

    up = servers([200])
    lines: list[tuple[str, dict]] = []
    config = SchedulerConfig("memory://", webhook_url=up.url, webhook_tries=2)
    assert run(config, app, store, NoLeadership(), stop=threading.Event(), once=True,
               log=lambda event, **fields: lines.append((event, fields))) == 0
    assert up.bodies == [alert_fields(alert)]
    again = app.get_alert(alert.id)
    assert (again.delivery, again.delivery_tries) == ("delivered", 3)  # 2 failed tries, then 1
    assert ("redelivering", {"alerts": 1}) in lines
    assert [fields["raised"] for event, fields in lines if event == "scan"] == [0]  # nothing raised twice


def test_a_scan_runs_to_its_end_while_the_webhook_is_still_posting(missed):
    app, store, projector, alert = missed
    posting, released = threading.Event(), threading.Event()

    def slow_post(url: str, body: bytes) -> None:
        posting.set()
        released.wait(30)

    webhook = Webhook("http://127.0.0.1:9/alerts", record(app), tries=1, post=slow_post)
    scanner = Scanner(app, store, projector, (5, 1), lambda event, **fields: None, webhook)
    assert scanner.redeliver() == 1  # the missed alert has no delivery record yet
    assert posting.wait(30)
    result = scanner.scan()
    assert result.deadlines == 1 and result.raised == []
    assert app.get_alert(alert.id).delivery is None
    released.set()
    assert webhook.close(timeout=30)
    assert app.get_alert(alert.id).delivery == "delivered"
