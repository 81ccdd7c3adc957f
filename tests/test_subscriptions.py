"""Alerts to the body that must act: each body's subscription receives its own alerts only, signed with its own
secret, whatever another body's receiver does; what a body may subscribe to; its open deadlines as a calendar
feed at a secret address (domain/subscriptions.py, docs/scheduler.md, docs/api.md)."""

from __future__ import annotations

import base64
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone

import pytest
from icalendar import Calendar
from standardwebhooks import Webhook as Verifier

from domain import chain
from domain.subscriptions import SubscriptionKeys
from scheduler.config import SchedulerConfig
from scheduler.jsonlog import alert_fields
from scheduler.leader import NoLeadership
from scheduler.service import Scanner, run
from scheduler.subscribers import Subscribers
from tests.api_client import ADMIN, ApiHarness
from tests.test_article_rules import FEIJO, IBGE, TARAUACA, XAPURI
from tests.test_projector_crash import wait_for
from tests.test_scheduler_processes import MESA, open_by_voters, signatures
from tests.test_scheduler_webhook import STALL_SECONDS, Server, status

ACTS_DAY = datetime(2025, 10, 20, 12, tzinfo=timezone.utc)
SUBSCRIBED = datetime(2025, 11, 19, 13, tzinfo=timezone.utc)  # 08:00 in Rio Branco, the day after the due day
SCANNED = datetime(2025, 11, 19, 14, tzinfo=timezone.utc)
FAST = {"sleep": lambda seconds: None, "jitter": lambda ceiling: 0.0}


def subscribing(database_url: str, **config: str) -> Iterator[ApiHarness]:
    """The API on `database_url` with a subscription key, its clock on the day the acts are recorded."""
    harness = ApiHarness(database_url, config=config)
    harness.app.subscription_keys = SubscriptionKeys(b"k" * 32)
    harness.clock.now = ACTS_DAY
    try:
        yield harness
    finally:
        harness.close()


@pytest.fixture
def api(tmp_path) -> Iterator[ApiHarness]:
    yield from subscribing(f"sqlite:///{tmp_path / 'api.sqlite'}", TRAMITA_SUBSCRIPTION_PRIVATE_URLS="1")


def silent(handler, stopped) -> None:
    """Never a byte of an answer, until the test lets go (far beyond any try's timeout)."""
    stopped.wait(STALL_SECONDS)


def requisitions(api: ApiHarness, code: str, bodies: tuple[str, ...]) -> tuple[str, list[str]]:
    """A voters' case of `code` with one requisition to each of `bodies`, received Fri 2025-10-17 (due Tue
    2025-11-18) and never answered."""
    case = open_by_voters(api.app, date(2025, 10, 14), signatures(30, code), origins=(code,)).number
    issued = [api.app.issue_requisition(case, MESA, date(2025, 10, 15), body=body, items=["art-4"]).result
              for body in bodies]
    for requisition in issued:
        api.app.receive_requisition(case, MESA, date(2025, 10, 17), requisition=requisition)
    return case, issued


def subscribe(api: ApiHarness, token_role: str, url: str, token_municipality: str | None = None, expect: int = 201,
              **body) -> dict:
    """POST /subscriptions with a token of `token_role` (of `token_municipality`); the answer's body."""
    response = api.client.post("/subscriptions", json={"url": url, **body},
                               headers=api.headers(token_role, token_municipality))
    assert response.status_code == expect, response.get_json()
    return response.get_json()


def scheduler_once(api: ApiHarness, lines: list) -> int:
    api.clock.now = SCANNED
    config = SchedulerConfig(api.url, webhook_tries=2, subscription_private_urls=True)  # as the API's (127.0.0.1)
    return run(config, api.app, api.store, NoLeadership(), stop=threading.Event(),
               log=lambda event, **fields: lines.append((event, fields)), once=True, webhook_options=FAST)


def test_each_body_receives_only_the_alerts_it_must_act_on_each_signed_with_its_own_secret(api):
    case, _ = requisitions(api, TARAUACA, ("ibge", "tre"))
    ibge_hook, tre_hook = Server([204]), Server([200])
    try:
        api.clock.now = SUBSCRIBED
        ibge = subscribe(api, "ibge", ibge_hook.url)
        tre = subscribe(api, "tre", tre_hook.url, kinds=["missed"])
        assert ibge["secret"] != tre["secret"] and ibge["role"] == "ibge" and tre["kinds"] == ["missed"]
        lines: list = []
        assert scheduler_once(api, lines) == 0
    finally:
        ibge_hook.close()
        tre_hook.close()
    for hook, subscribed, who in ((ibge_hook, ibge, "ibge"), (tre_hook, tre, "tre")):
        [received] = hook.requests
        body = Verifier(subscribed["secret"]).verify(received.body, received.headers)
        assert (body["who"], body["kind"], body["case_number"], body["subscription_id"]) == (
            who, "missed", case, subscribed["id"])
        assert body == {**alert_fields(api.app.get_alert(uuid.UUID(body["alert_id"]))),
                        "subscription_id": subscribed["id"]}
        with pytest.raises(Exception):  # another body's secret does not verify it
            Verifier((tre if who == "ibge" else ibge)["secret"]).verify(received.body, received.headers)
    api.projector.catch_up()
    listed = api.get("/subscriptions", role="ibge").get_json()
    assert [(s["id"], s["deliveries"]) for s in listed["items"]] == [(ibge["id"], {"delivered": 1})]
    assert "secret" not in listed["items"][0]  # shown once, when made


def test_a_subscription_whose_events_were_altered_stops_neither_the_others_delivery_nor_the_scan(api, tmp_path):
    """Every scan reads every subscription: one whose first event no longer decoded (an administrator's edit) made
    each scan fail, and the resident scheduler exit at start-up."""
    requisitions(api, TARAUACA, ("ibge", "tre"))
    altered_hook, tre_hook = Server([200]), Server([200])
    try:
        api.clock.now = SUBSCRIBED
        altered = subscribe(api, "ibge", altered_hook.url)
        tre = subscribe(api, "tre", tre_hook.url)
        with sqlite3.connect(tmp_path / "api.sqlite") as database:
            database.execute("UPDATE stored_events SET state = ? WHERE originator_id = ? AND originator_version = 1",
                             (b"{", uuid.UUID(altered["id"]).hex))
        lines: list = []
        assert scheduler_once(api, lines) == 0
    finally:
        altered_hook.close()
        tre_hook.close()
    assert [event for event, _ in lines].count("scan") == 1
    assert len(tre_hook.requests) == 1 and altered_hook.requests == []
    assert [s.id for s in api.app.all_subscriptions()] == [uuid.UUID(tre["id"])]


def test_a_receiver_that_never_answers_holds_back_neither_the_other_bodys_delivery_nor_the_scan(api):
    requisitions(api, TARAUACA, ("ibge", "tre"))
    stalled, answering = Server([silent]), Server([200])
    api.clock.now = SUBSCRIBED
    ibge = subscribe(api, "ibge", stalled.url)
    tre = subscribe(api, "tre", answering.url)
    api.clock.now = SCANNED
    lines: list = []
    log = lambda event, **fields: lines.append((event, fields))  # noqa: E731
    subscribers = Subscribers(api.app, api.store, log, tries=1, backoff_cap=1.0, options=FAST, private_urls=True)
    scanner = Scanner(api.app, api.store, api.projector, (5, 1), log, subscribers=subscribers)
    try:
        result = scanner.scan()  # returns at once: the deliveries are the workers'
        assert len(result.raised) == 2
        assert wait_for(lambda: any(e == "delivered" and f["subscription_id"] == tre["id"] for e, f in lines))
        assert wait_for(lambda: len(stalled.requests) == 1)
        assert not any(f.get("subscription_id") == ibge["id"] for e, f in lines if e != "alert")  # still waiting
        assert len(answering.requests) == 1
    finally:
        stalled.close()  # the stalled receiver lets go: its try fails and is recorded
        answering.close()
    assert subscribers.close(60) == []
    api.projector.catch_up()
    by_subscription = {row[0]: row[1:] for row in api.store.query(
        "SELECT subscription_id, delivery, tries FROM alert_deliveries")}
    assert by_subscription == {tre["id"]: ("delivered", 1), ibge["id"]: ("failed", 1)}


def test_a_failed_subscription_is_delivered_again_at_the_next_start_and_the_delivered_one_is_not(api):
    requisitions(api, TARAUACA, ("ibge", "tre"))
    refusing = Server([500, status(302, Location="http://127.0.0.1:9/"), 200])
    answering, late = Server([200]), Server([200])
    try:
        api.clock.now = SUBSCRIBED
        ibge = subscribe(api, "ibge", refusing.url)
        tre = subscribe(api, "tre", answering.url)
        assert scheduler_once(api, []) == 0
        api.projector.catch_up()
        [failed] = api.store.query_dicts("SELECT * FROM alert_deliveries WHERE subscription_id = ?", (ibge["id"],))
        assert (failed["delivery"], failed["tries"], failed["error"]) == (
            "failed", 2, "HTTP 302 (redirects are not followed)")
        api.clock.now = datetime(2025, 11, 19, 15, tzinfo=timezone.utc)
        subscribe(api, "tre", late.url)  # made after the alert was raised: it is in GET /alerts, not sent
        lines: list = []
        assert scheduler_once(api, lines) == 0
    finally:
        for server in (refusing, answering, late):
            server.close()
    assert ("redelivering", {"alerts": 1}) in lines
    assert len(refusing.requests) == 3 and len(answering.requests) == 1 and late.requests == []
    api.projector.catch_up()
    rows = dict(api.store.query("SELECT subscription_id, delivery FROM alert_deliveries"))
    assert rows == {ibge["id"]: "delivered", tre["id"]: "delivered"}
    alert = api.app.get_alert(uuid.UUID(refusing.bodies[-1]["alert_id"]))
    assert alert.deliveries[ibge["id"]] == {"delivery": "delivered", "tries": 3,
                                            "error": "HTTP 302 (redirects are not followed)"}
    assert alert.delivery is None  # the operators' webhook (none here) has its own record


def test_a_body_subscribes_only_to_what_it_must_act_on_and_an_auditor_to_anything(api):
    case, _ = requisitions(api, FEIJO, ("ibge",))
    url = "http://127.0.0.1:9/hook"
    assert subscribe(api, "ibge", url, expect=422, role="tre")["field"] == "role"
    assert subscribe(api, "council", url, FEIJO, expect=422, municipality=XAPURI)["field"] == "municipality"
    council = subscribe(api, "council", url, FEIJO)
    assert (council["role"], council["municipality"]) == ("council", FEIJO)
    auditor = subscribe(api, "auditor", url, role="tre", municipality=XAPURI, case=case)
    assert (auditor["role"], auditor["municipality"]) == ("tre", XAPURI) and auditor["case_id"] is not None
    assert subscribe(api, "auditor", url)["role"] is None  # everything
    assert subscribe(api, "ibge", url, expect=422, kinds=["payday"])["field"] == "kinds"
    assert subscribe(api, "ibge", "ftp://example.org/", expect=422)["field"] == "url"
    assert subscribe(api, "ibge", "https://user:pw@example.org/", expect=422)["field"] == "url"
    assert api.client.post("/subscriptions", json={"url": url}).status_code == 401
    # Another body neither sees nor removes it; its own body does, and the removal is recorded.
    assert [s["id"] for s in api.get("/subscriptions", role="ibge").get_json()["items"]] == []
    assert api.client.delete(f"/subscriptions/{council['id']}", headers=api.headers("ibge")).status_code == 404
    removed = api.client.delete(f"/subscriptions/{council['id']}?reason=mudou", headers=api.headers("council", FEIJO))
    assert removed.status_code == 200 and removed.get_json()["in_force"] is False
    events = list(api.app.events.get(uuid.UUID(council["id"])))
    assert [type(e).__name__ for e in events] == ["Created", "Removed"]
    assert all(chain.hash_of(e) == e.hash for e in events) and events[1].prev_hash == events[0].hash
    assert events[0].actor["role"] == "council" and events[1].reason == "mudou"


def test_an_address_of_the_deployments_own_network_is_refused_unless_allowed(tmp_path):
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}")
    harness.app.subscription_keys = SubscriptionKeys(b"k" * 32)
    try:
        for url in ("http://127.0.0.1:8080/", "http://10.0.0.5/", "http://169.254.169.254/", "http://localhost/",
                    "http://[64:ff9b::7f00:1]/", "http://[2002:7f00:1::]/", "http://[::7f00:1]/",
                    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/"):  # 127.0.0.1 in NAT64, 6to4, ... forms
            response = harness.client.post("/subscriptions", json={"url": url}, headers=harness.headers("ibge"))
            assert (response.status_code, response.get_json()["field"]) == (422, "url"), url
        assert harness.client.post("/subscriptions", json={"url": "https://prazos.example.org/tramita"},
                                   headers=harness.headers("ibge")).status_code == 201
    finally:
        harness.close()


def test_without_a_subscription_key_a_subscription_is_refused_as_unavailable(tmp_path):
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}")
    try:
        response = harness.client.post("/subscriptions", json={"url": "https://example.org/"},
                                       headers=harness.headers("ibge"))
        assert response.status_code == 503 and "TRAMITA_SUBSCRIPTION_KEY" in response.get_json()["detail"]
    finally:
        harness.close()


def feed_events(api: ApiHarness, path: str) -> list:
    response = api.client.get(path)  # no Authorization: a calendar program cannot send one
    assert response.status_code == 200 and response.mimetype == "text/calendar", response.data[:200]
    return [c for c in Calendar.from_ical(response.data).walk("VEVENT")]


def test_a_bodys_calendar_feed_holds_exactly_its_open_deadlines_with_stable_uids(api):
    feijo, (feijo_ibge,) = requisitions(api, FEIJO, ("ibge",))
    tarauaca, (_, tarauaca_ibge) = requisitions(api, TARAUACA, ("tre", "ibge"))
    xapuri, _ = requisitions(api, XAPURI, ("ibge",))  # answered: its deadline is closed, on no calendar
    api.app.record_finding(xapuri, IBGE, date(2025, 10, 20), item="art-4-I", value=2400, document="Ofício IBGE")
    assert all(d["closed_by"] for d in api.app.get_case(xapuri).deadlines.values() if d["who"] == "ibge")
    api.projector.catch_up()
    opened = api.client.post("/feeds", json={}, headers=api.headers("ibge"))
    assert opened.status_code == 201, opened.get_json()
    feed_url = opened.get_json()["feed_url"]
    path = feed_url.split("://", 1)[1].split("/", 1)[1]
    events = feed_events(api, "/" + path)
    assert sorted(str(e["uid"]) for e in events) == sorted(
        queries_uid(api, case, f"requisition-answer:{r}") for case, r in ((feijo, feijo_ibge),
                                                                         (tarauaca, tarauaca_ibge)))
    for event in events:
        assert event.decoded("dtstart") == date(2025, 11, 18) and "art-10" in str(event["summary"])
        assert "Ato esperado: apuração" in str(event["description"])
        alarms = event.walk("VALARM")  # the scheduler's warning days, 5 and 1 before, at 9 in the morning
        assert [alarm.decoded("trigger") for alarm in alarms] == [timedelta(days=-5, hours=9),
                                                                  timedelta(days=-1, hours=9)]
        assert [str(alarm["action"]) for alarm in alarms] == ["DISPLAY", "DISPLAY"]
        assert str(alarms[0]["description"]).startswith("Prazo vence em 5 dias: apuração")
        assert str(alarms[1]["description"]).startswith("Prazo vence amanhã: apuração")
    assert {str(e["summary"]).split(" — ")[1].split(" ")[0] for e in events} == {
        api.app.get_case(feijo).number, api.app.get_case(tarauaca).number}
    api.clock.now = datetime(2025, 11, 20, 14, tzinfo=timezone.utc)  # the next day: the same events, the same UIDs
    again = feed_events(api, "/" + path)
    assert [str(e["uid"]) for e in again] == [str(e["uid"]) for e in events]
    assert "(vencido)" in str(again[0]["summary"]) and not again[0].walk("VALARM")  # missed: nothing to remind
    assert api.client.get("/" + path.replace(".ics", "x.ics")).status_code == 404  # another key opens nothing
    feed_id = opened.get_json()["id"]
    assert api.client.delete(f"/subscriptions/{feed_id}", headers=api.headers("ibge")).status_code == 200
    assert api.client.get("/" + path).status_code == 404  # removed: the address answers nothing


def queries_uid(api: ApiHarness, case: str, deadline: str) -> str:
    from api.exports import deadline_uid

    return deadline_uid(str(api.app.get_case(case).id), deadline)


def test_a_feed_stops_opening_when_the_token_that_made_it_is_revoked(api):
    requisitions(api, FEIJO, ("ibge",))
    api.projector.catch_up()
    opened = api.client.post("/feeds", json={}, headers=api.headers("ibge")).get_json()
    path = "/" + opened["feed_url"].split("://", 1)[1].split("/", 1)[1]
    assert len(feed_events(api, path)) == 1
    [token] = [t for t in api.app.tokens() if t.role == "ibge"]
    api.app.revoke_token(ADMIN, str(token.id), reason="servidor desligado")
    assert api.client.get(path).status_code == 404


def test_the_subscription_key_derives_distinct_secrets_and_is_refused_when_short():
    from domain.subscriptions import parse_key

    keys = parse_key(base64.b64encode(b"x" * 32).decode())
    first, second = uuid.uuid4(), uuid.uuid4()
    assert keys.webhook_secret(first) != keys.webhook_secret(second) != keys.feed_key(second)
    assert keys.webhook_secret(first).startswith("whsec_") and keys.opens(first, keys.feed_key(first))
    with pytest.raises(ValueError, match="TRAMITA_SUBSCRIPTION_KEY"):
        parse_key(base64.b64encode(b"x" * 16).decode())
    assert parse_key("") is None


def test_a_delivery_recorded_before_subscriptions_reads_as_one_to_the_operators_webhook():
    from domain.alerts import Alert

    for event_class in (Alert.Delivered, Alert.DeliveryFailed):
        state = {"tries": 2, "last_error": "HTTP 500"}
        event_class.upcast_v1_v2(state)
        assert state["subscription"] is None and state[chain.UPCAST_MARK] == ["subscription"]
        assert event_class.class_version == 2


@pytest.mark.parametrize("path, body, other", [
    ("/subscriptions", {"url": "https://prazos.example.org/tramita"}, {"url": "https://prazos.example.org/outro"}),
    ("/feeds", {}, {"role": "ibge"})])
def test_a_retry_with_the_same_idempotency_key_gets_the_original_subscription_and_its_secret_and_makes_no_other(
        api, path, body, other):
    """A retry of a lost answer made a second subscription: every alert then went twice to the receiver, one copy
    signed with the secret of the answer the client never read."""
    headers = api.headers("ibge", **{"Idempotency-Key": "ibge-hook-1"})
    first = api.client.post(path, json=body, headers=headers)
    again = api.client.post(path, json=body, headers=headers)
    assert first.status_code == again.status_code == 201, (first.get_json(), again.get_json())
    assert again.get_json() == first.get_json() and again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    listed = api.client.get("/subscriptions", headers=api.headers("ibge")).get_json()
    assert [item["id"] for item in listed["items"]] == [first.get_json()["id"]]
    reused = api.client.post(path, json=other, headers=headers)  # the same key for another request
    assert reused.status_code == 422 and reused.get_json()["field"] == "Idempotency-Key", reused.get_json()


def test_a_body_may_have_at_most_so_many_webhooks_in_force_and_one_removed_makes_room(api):
    from domain.subscriptions import MAX_SUBSCRIPTIONS_PER_BODY

    made = [subscribe(api, "ibge", f"https://prazos.example.org/{n}") for n in range(MAX_SUBSCRIPTIONS_PER_BODY)]
    refused = subscribe(api, "ibge", "https://prazos.example.org/one-too-many", expect=422)
    assert refused["field"] == "channel" and str(MAX_SUBSCRIPTIONS_PER_BODY) in refused["detail"]
    assert subscribe(api, "tre", "https://prazos.example.org/tre")  # another body's count is its own
    removed = api.client.delete(f"/subscriptions/{made[0]['id']}?reason=trocado",
                                headers=api.headers("ibge"))
    assert removed.status_code == 200, removed.get_json()
    assert subscribe(api, "ibge", "https://prazos.example.org/in-its-place")


@pytest.mark.slow
def test_a_body_s_subscriptions_made_at_once_keep_to_the_limit_and_a_retried_one_is_made_once(api):
    """Counting and saving were two steps: 16 made at once by one body gave 14; two copies of one request with one
    key at once gave a 500 to the one that lost."""
    import threading

    from domain.subscriptions import MAX_SUBSCRIPTIONS_PER_BODY

    headers = api.headers("ibge")
    barrier, answers = threading.Barrier(16), []

    def make(n: int, key: str | None) -> None:
        client = api.flask.test_client()
        barrier.wait()
        extra = {"Idempotency-Key": key} if key else {}
        url = f"https://prazos.example.org/{'k' if key else n}"
        answers.append(client.post("/subscriptions", json={"url": url}, headers={**headers, **extra}))

    threads = [threading.Thread(target=make, args=(n, None)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [201] * MAX_SUBSCRIPTIONS_PER_BODY + [422] * (16 - MAX_SUBSCRIPTIONS_PER_BODY), statuses

    tre, barrier, answers = api.headers("tre"), threading.Barrier(2), []
    headers = tre
    threads = [threading.Thread(target=make, args=(0, "tre-once")) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert [answer.status_code for answer in answers] == [201, 201]
    assert answers[0].get_json() == answers[1].get_json()
    assert len(api.client.get("/subscriptions", headers=tre).get_json()["items"]) == 1
