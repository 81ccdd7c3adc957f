"""Webhook delivery against a local HTTP server: retries with a capped, jittered pause, no redirect followed, a
bounded wait on a slow receiver, every POST signed (Standard Webhooks), the delivery record kept as events on the
alert and shown in the alerts table, and an alert never lost by a failed delivery."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from uuid import uuid4

import pytest
from standardwebhooks import Webhook as Verifier

from domain.acts import Actor
from domain.application import Tramita
from infrastructure.persistence import persistence_env
from projections import queries
from projections.projector import Projector
from infrastructure.store import open_store
from scheduler.config import SchedulerConfig
from scheduler.jsonlog import alert_fields
from scheduler.leader import NoLeadership
from scheduler.scan import SCHEDULER, scan
from scheduler.service import Scanner, run
from infrastructure.webhook import DeliveryError, Webhook, post_signed
from tests.stores import SEEDED_ON
from tests.test_article_rules import requisition_received
from tests.test_projector_crash import wait_for

MISSED_DAY = datetime(2025, 11, 19, 14, tzinfo=timezone.utc)  # 09:00 in Rio Branco, the day after the due day
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"  # the Standard Webhooks documentation's example secret
#: How long a receiver below keeps dripping a body or stalling its headers, at most (far beyond any try's timeout).
STALL_SECONDS = 60.0

Answer = Callable[[BaseHTTPRequestHandler, threading.Event], None]


def status(code: int, **headers: str) -> Answer:
    def answer(handler: BaseHTTPRequestHandler, stopped: threading.Event) -> None:
        handler.send_response(code)
        for name, value in {"Content-Length": "0", **headers}.items():
            handler.send_header(name, value)
        handler.end_headers()
    return answer


def slow_body(code: int) -> Answer:
    """The status and headers at once, then a body of one byte every 0.2 s for a minute."""
    def answer(handler: BaseHTTPRequestHandler, stopped: threading.Event) -> None:
        ticks = int(STALL_SECONDS / 0.2)
        handler.send_response(code)
        handler.send_header("Content-Length", str(ticks))
        handler.end_headers()
        for _ in range(ticks):
            if stopped.wait(0.2):
                return
            handler.wfile.write(b"x")
            handler.wfile.flush()
    return answer


def stalled_headers(handler: BaseHTTPRequestHandler, stopped: threading.Event) -> None:
    """A status line, then nothing more for a minute."""
    handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
    handler.wfile.flush()
    stopped.wait(STALL_SECONDS)


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Server:
    """A webhook on 127.0.0.1 answering each request with the next of `answers` (the last one repeats); ints are
    statuses. It keeps every request, and the JSON of every body in `bodies`."""

    def __init__(self, answers: list[int | Answer]) -> None:
        self.answers = [status(a) if isinstance(a, int) else a for a in answers]
        self.requests: list[Received] = []
        self.stopped = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def handle_any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.requests.append(Received(self.command, self.path, dict(self.headers), body))
                answer = server.answers.pop(0) if len(server.answers) > 1 else server.answers[0]
                try:
                    answer(self, server.stopped)
                except (BrokenPipeError, ConnectionResetError):  # the scheduler stopped listening: its right
                    pass

            do_POST = do_GET = handle_any  # noqa: N815 - http.server's names

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/alerts"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    @property
    def bodies(self) -> list[dict]:
        return [json.loads(r.body) for r in self.requests]

    def close(self) -> None:
        self.stopped.set()
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def servers() -> Iterator:
    started: list[Server] = []

    def start(answers: list[int | Answer]) -> Server:
        started.append(Server(answers))
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
    webhook = Webhook(server.url, record(app), tries=5, secret=SECRET, backoff=1.5, sleep=pauses.append,
                      jitter=lambda ceiling: ceiling)
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
    webhook = Webhook(server.url, record(app), tries=3, secret=SECRET, sleep=lambda _: None)
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
    webhook = Webhook(down.url, record(app), tries=2, secret=SECRET, sleep=lambda _: None)
    webhook.submit(alert.id, alert_fields(alert))
    webhook.close(timeout=30)
    assert app.get_alert(alert.id).delivery == "failed"

    up = servers([200])
    lines: list[tuple[str, dict]] = []
    config = SchedulerConfig("memory://", webhook_url=up.url, webhook_tries=2, webhook_secret=SECRET)
    assert run(config, app, store, NoLeadership(), stop=threading.Event(), once=True,
               log=lambda event, **fields: lines.append((event, fields))) == 0
    assert up.bodies == [alert_fields(alert)]
    again = app.get_alert(alert.id)
    assert (again.delivery, again.delivery_tries) == ("delivered", 3)  # 2 failed tries, then 1
    assert ("redelivering", {"alerts": 1}) in lines
    assert [fields["raised"] for event, fields in lines if event == "scan"] == [0]  # nothing raised twice


def test_a_resident_scheduler_delivers_again_on_its_redelivery_schedule_an_alert_whose_round_failed(missed,
                                                                                                   servers):
    """A receiver down for one round (a redeploy) lost its alerts until the scheduler next started, which for a
    resident one could be weeks: the redelivery job queues them again while it runs (each at most once at a time)."""
    app, store, projector, alert = missed
    flaky = servers([503, 503, 204])
    lines: list[tuple[str, dict]] = []
    webhook = Webhook(flaky.url, record(app), tries=2, secret=SECRET, sleep=lambda _: None)
    scanner = Scanner(app, store, projector, (5, 1), lambda event, **fields: lines.append((event, fields)), webhook)
    webhook.submit(alert.id, alert_fields(alert))
    assert wait_for(lambda: app.get_alert(alert.id).delivery == "failed", 30)
    assert scanner.redeliver_now() == 1
    assert webhook.close(timeout=30)
    again = app.get_alert(alert.id)
    assert (again.delivery, again.delivery_tries) == ("delivered", 3)
    assert ("redelivering", {"alerts": 1}) in lines
    assert len(flaky.bodies) == 3 and {body["alert_id"] for body in flaky.bodies} == {str(alert.id)}


def test_the_redelivery_runs_on_its_own_schedule_while_the_scheduler_runs(missed):
    from scheduler.config import DEFAULT_REDELIVERY_CRON, load

    assert load({}, "memory://").redelivery_cron == DEFAULT_REDELIVERY_CRON
    assert load({"TRAMITA_REDELIVERY_CRON": "*/5 * * * *"}, "memory://").redelivery_cron == "*/5 * * * *"
    with pytest.raises(ValueError, match="TRAMITA_REDELIVERY_CRON"):
        load({"TRAMITA_REDELIVERY_CRON": "every hour"}, "memory://")


def test_a_scan_runs_to_its_end_while_the_webhook_is_still_posting(missed):
    app, store, projector, alert = missed
    posting, released = threading.Event(), threading.Event()

    def slow_post(url: str, body: bytes, headers: dict[str, str]) -> None:
        posting.set()
        released.wait(30)

    webhook = Webhook("http://127.0.0.1:9/alerts", record(app), tries=1, secret=SECRET, post=slow_post)
    scanner = Scanner(app, store, projector, (5, 1), lambda event, **fields: None, webhook)
    assert scanner.redeliver() == 1  # the missed alert has no delivery record yet
    assert posting.wait(30)
    result = scanner.scan()
    assert result.deadlines == 0 and result.raised == []  # alerted missed, its deadline is no longer read
    assert app.get_alert(alert.id).delivery is None
    released.set()
    assert webhook.close(timeout=30)
    assert app.get_alert(alert.id).delivery == "delivered"


def test_a_redirect_and_a_slow_failing_answer_cost_a_try_each_and_the_alert_arrives_once_signed(missed, servers):
    app, store, projector, alert = missed
    internal = servers([200])
    receiver = servers([status(302, Location=internal.url), slow_body(500), 200])
    pauses: list[float] = []
    webhook = Webhook(receiver.url, record(app), tries=5, secret=SECRET, backoff=0.5, backoff_cap=0.8,
                      post=partial(post_signed, timeout=2.0), sleep=pauses.append)
    webhook.submit(alert.id, alert_fields(alert))
    assert webhook.close(timeout=STALL_SECONDS / 2)  # the slow body alone would take STALL_SECONDS
    assert internal.requests == []  # the redirect was not followed
    assert [r.method for r in receiver.requests] == ["POST"] * 3
    delivered = receiver.requests[-1]
    assert Verifier(SECRET).verify(delivered.body, delivered.headers) == alert_fields(alert)
    assert {r.headers["webhook-id"] for r in receiver.requests} == {str(alert.id)}  # for the receiver to de-duplicate
    assert len(pauses) == 2 and 0 <= pauses[0] <= 0.5 and 0 <= pauses[1] <= 0.8  # full jitter under the cap
    recorded = app.get_alert(alert.id)
    assert (recorded.delivery, recorded.delivery_tries, recorded.delivery_error) == ("delivered", 3, None)
    projector.catch_up()
    assert queries.undelivered_alerts(store) == []


def test_a_receiver_that_always_redirects_leaves_a_failed_record_naming_the_status(missed, servers):
    app, _, _, alert = missed
    internal = servers([200])
    receiver = servers([status(307, Location=internal.url)])
    webhook = Webhook(receiver.url, record(app), tries=2, secret=SECRET, sleep=lambda _: None)
    webhook.submit(alert.id, alert_fields(alert))
    assert webhook.close(timeout=30)
    failed = app.get_alert(alert.id)
    assert (failed.delivery, failed.delivery_tries) == ("failed", 2)
    assert failed.delivery_error == "HTTP 307 (redirects are not followed)"
    assert internal.requests == []


def test_a_receiver_that_never_finishes_its_headers_fails_the_try_at_the_timeout(missed, servers):
    app, _, _, alert = missed
    receiver = servers([stalled_headers])
    webhook = Webhook(receiver.url, record(app), tries=1, secret=SECRET, post=partial(post_signed, timeout=1.0))
    webhook.submit(alert.id, alert_fields(alert))
    assert webhook.close(timeout=STALL_SECONDS / 2)
    assert app.get_alert(alert.id).delivery_error == "no answer within 1 s"


def test_a_receiver_silent_past_the_sockets_own_timeout_is_told_as_no_answer_within_the_timeout(servers, monkeypatch):
    """On a busy machine the socket's timeout can run out before the watchdog's thread runs: the watchdog is held
    back here, so that only the socket's timeout ends the wait."""
    import infrastructure.webhook as webhook_module

    held_back = threading.Event()

    class LateTimer(threading.Timer):
        def __init__(self, interval: float, function: Callable[[], None]) -> None:
            super().__init__(STALL_SECONDS, function)
            held_back.set()

    monkeypatch.setattr(webhook_module.threading, "Timer", LateTimer)
    receiver = servers([stalled_headers])
    with pytest.raises(webhook_module.DeliveryError) as failure:
        post_signed(receiver.url, b"{}", {}, timeout=0.5)
    assert held_back.is_set()
    assert str(failure.value) == "no answer within 0.5 s"


def test_a_host_name_no_address_can_have_is_a_failed_try_not_an_error():
    """A label of 64 characters passes the address check; connecting to it raised UnicodeError (IDNA)."""
    with pytest.raises(DeliveryError, match="UnicodeError"):
        post_signed("http://" + "a" * 64 + ".example.com/hook", b"{}", {}, timeout=5)


def test_an_unforeseen_error_in_one_try_is_a_failed_try_and_the_worker_delivers_the_next_ones():
    """The worker thread ended on any error but a refused try: every later alert of its queue stayed queued,
    with no record and no log line. An error no one foresaw in a try (an address http.client refuses) is a failed
    try, recorded with its error."""
    delivered, lines, records = [], [], []

    def post(url: str, body: bytes, headers: dict) -> None:
        if not delivered:
            delivered.append(None)
            raise RuntimeError("a receiver no one foresaw")
        delivered.append(json.loads(body)["n"])

    webhook = Webhook("http://receiver.example/hook", lambda *recorded: records.append(recorded), tries=1,
                      secret=SECRET, post=post, log=lambda event, **fields: lines.append((event, fields.get(
                          "last_error"))))
    first, second = uuid4(), uuid4()
    webhook.submit(first, {"n": 1})
    webhook.submit(second, {"n": 2})
    assert webhook.close(timeout=60)
    assert delivered == [None, 2]
    assert records == [(first, 1, "RuntimeError: a receiver no one foresaw"), (second, 1, None)]
    assert lines == [("delivery-failed", "RuntimeError: a receiver no one foresaw"), ("delivered", None)]


def test_a_log_or_a_record_that_fails_never_ends_the_worker_and_the_next_alerts_are_delivered():
    """A full disk under the log (stdout) made the worker's `delivered` line fail, then its `delivery-unrecorded`
    line too, and the thread ended: nothing was delivered again until a restart."""
    delivered = []

    def log(event: str, **fields) -> None:
        raise OSError(28, "No space left on device")

    def record(alert_id, tries, error) -> None:
        if not delivered or len(delivered) == 1:
            raise OSError("the store is away")

    webhook = Webhook("http://receiver.example/hook", record, tries=1, secret=SECRET,
                      post=lambda url, body, headers: delivered.append(json.loads(body)["n"]), log=log)
    for n in (1, 2, 3):
        webhook.submit(uuid4(), {"n": n})
    assert webhook.close(timeout=60)
    assert delivered == [1, 2, 3]


def test_the_json_log_never_fails_its_caller_when_its_stream_refuses_a_line(capsys):
    from scheduler.jsonlog import json_lines

    class Full:
        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

        def flush(self) -> None:
            raise OSError(28, "No space left on device")

    log = json_lines(lambda: datetime(2026, 11, 30, tzinfo=timezone.utc), Full())
    log("delivered", alert_id="a")
    assert "log line not written" in capsys.readouterr().err


def test_an_alert_queued_or_being_delivered_is_not_queued_again_by_a_redelivery():
    release = threading.Event()
    posts = []

    def post(url: str, body: bytes, headers: dict) -> None:
        posts.append(headers["webhook-id"])
        release.wait(30)

    webhook = Webhook("http://receiver.example/hook", lambda *_: None, tries=1, secret=SECRET, post=post)
    alert = uuid4()
    assert webhook.submit(alert, {"n": 1}) is True
    assert webhook.submit(alert, {"n": 1}) is False  # queued or being delivered: not twice
    release.set()
    assert webhook.close(timeout=60)
    assert posts == [str(alert)]


def test_the_pause_between_tries_doubles_up_to_the_cap_and_is_drawn_below_it():
    webhook = Webhook("http://127.0.0.1:9/alerts", lambda *_: None, tries=20, secret=SECRET, backoff=1.0,
                      backoff_cap=30.0, jitter=lambda ceiling: ceiling)
    assert [webhook.pause(n) for n in (1, 2, 3, 5, 6, 19)] == [1.0, 2.0, 4.0, 16.0, 30.0, 30.0]
    drawn = Webhook("http://127.0.0.1:9/alerts", lambda *_: None, tries=20, secret=SECRET, backoff=1.0,
                    backoff_cap=30.0)
    assert all(0 <= drawn.pause(19) <= 30.0 for _ in range(200))
    webhook.close(), drawn.close()


def test_a_system_alert_reaches_the_webhook_with_its_case_fields_null(missed, servers):
    app, store, projector, _ = missed
    raised = app.raise_system_alert(SCHEDULER, kind="projection-failure", subject="cases:x", message="cannot write")
    receiver = servers([200])
    lines: list[tuple[str, dict]] = []
    config = SchedulerConfig("memory://", webhook_url=receiver.url, webhook_tries=1, webhook_secret=SECRET)
    assert run(config, app, store, NoLeadership(), stop=threading.Event(), once=True,
               log=lambda event, **fields: lines.append((event, fields))) == 0
    [body] = [b for b in receiver.bodies if b["alert_id"] == str(raised)]  # handed over once, not twice
    assert (body["kind"], body["subject"], body["message"]) == ("projection-failure", "cases:x", "cannot write")
    assert body["case_id"] is None and body["due_on"] is None and body["article"] is None
    assert app.get_alert(raised).delivery == "delivered"


def test_an_alert_this_worker_delivered_is_not_sent_again_by_a_redelivery_that_read_it_before_its_record():
    """The worker records the delivery and lets the alert go; a redelivery that caught the alerts table up before
    that record reached it submitted it again, and the receiver got it twice."""
    posts: list[str] = []
    webhook = Webhook("http://receiver.example/hook", lambda *_: None, tries=1, secret=SECRET,
                      post=lambda url, body, headers: posts.append(headers["webhook-id"]))
    alert = uuid4()
    assert webhook.submit(alert, {"n": 1})
    assert wait_for(lambda: posts == [str(alert)], 30)
    assert wait_for(lambda: webhook.submit(alert, {"n": 1}) is False and alert not in webhook._pending, 30)
    assert webhook.close(timeout=30)
    assert posts == [str(alert)]
