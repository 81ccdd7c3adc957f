"""What the document store keeps and for how long: a quota per body (per legal day and in all, 429 past it, nothing
stored), the removal of a document no act cites within TRAMITA_DOCUMENT_EXPIRY_DAYS (recorded in the event log;
a cited one never), the documents' storage on /health, and a described row an administrator edited."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone

import pytest

from api.app import settings_from
from audit.document_limits import Quota, QuotaExceededError, body_of, seconds_to_next_day
from audit.documents import DocumentStore
from audit.notes import Signer
from domain.acts import Actor
from scheduler.config import load as scheduler_settings
from scheduler.documents import DocumentExpiry
from scheduler.service import Scanner
from tests.api_client import ADMIN, ApiHarness
from tests.servers import serving
from tests.conftest import BACKENDS
from tests.test_api_walk import open_1991_petition
from tests.test_documents import PDF, attached_finding, finding_with, sha, stored_documents, upload

#: 23:59:58 on 30 November 2026 in Rio Branco (UTC-5): two seconds before the legal day ends.
LATE = datetime(2026, 12, 1, 4, 59, 58, tzinfo=timezone.utc)
MIDNIGHT = datetime(2026, 12, 1, 5, 0, 0, tzinfo=timezone.utc)
SIZE = 100
DAY = timedelta(days=1)


def pdf(n: int, size: int = SIZE) -> bytes:
    """A distinct PDF of `size` bytes."""
    head = b"%PDF-1.4\n%" + str(n).encode() + b"\n"
    return head + b"\n" * (size - len(head))


def harness(url: str, signed: bool = True, **settings: str) -> ApiHarness:
    api = ApiHarness(url, config=settings, signer=Signer.generate("tramita.test/acre") if signed else None)
    for role in ("ibge", "tre", "governor", "auditor"):
        api.token(role)
    return api


@pytest.fixture(params=BACKENDS)
def daily(request, new_database_url):  # noqa: ANN001, ANN201
    """Three documents of SIZE a day per body, ten in all."""
    api = harness(new_database_url(request.param), TRAMITA_DOCUMENT_QUOTA_BYTES_PER_DAY=str(3 * SIZE),
                  TRAMITA_DOCUMENT_QUOTA_BYTES=str(10 * SIZE))
    yield api
    api.close()


@pytest.fixture(params=BACKENDS)
def total(request, new_database_url):  # noqa: ANN001, ANN201
    """No daily limit, two documents of SIZE in all per body, kept 7 days uncited."""
    api = harness(new_database_url(request.param), TRAMITA_DOCUMENT_QUOTA_BYTES_PER_DAY="0",
                  TRAMITA_DOCUMENT_QUOTA_BYTES=str(2 * SIZE))
    yield api
    api.close()


@pytest.fixture(params=BACKENDS)
def api(request, new_database_url):  # noqa: ANN001, ANN201
    harness_ = harness(new_database_url(request.param))
    yield harness_
    harness_.close()


def expire(api: ApiHarness, days: int = 7) -> list:
    """What the scheduler's job and `tramita documents expire` run: the projections caught up, then the removal."""
    return api.flask.extensions["tramita.documents"].expire(days, catch_up=api.projector.catch_up)


def alerts_of(api: ApiHarness, kind: str) -> list[dict]:
    api.projector.catch_up()
    return [a for a in api.get("/alerts").get_json()["items"] if a["kind"] == kind]


# ------------------------------------------------------------------------------------------------ the quota

def test_a_body_past_its_daily_quota_is_refused_429_until_midnight_in_rio_branco_and_nothing_is_stored(daily):
    api = daily
    api.clock.now = LATE - DAY  # the day before: its bytes count on that day, not the next
    assert upload(api, pdf(0)).status_code == 201
    api.clock.now = LATE
    assert [upload(api, pdf(n)).status_code for n in (1, 2, 3)] == [201, 201, 201]
    assert upload(api, pdf(1)).status_code == 200  # bytes already stored add nothing
    api.clock.now = LATE + timedelta(seconds=1)  # 23:59:59: the day's last second
    before = stored_documents(api)
    refused = upload(api, pdf(4))
    assert refused.status_code == 429 and refused.mimetype == "application/problem+json"
    problem = refused.get_json()
    assert problem["type"].endswith("/document-quota-exceeded") and problem["limit"] == 3 * SIZE
    assert "TRAMITA_DOCUMENT_QUOTA_BYTES_PER_DAY" in problem["detail"] and "300" in problem["detail"]
    assert refused.headers["Retry-After"] == "1"  # the seconds to midnight in Rio Branco
    assert stored_documents(api) == before and sha(pdf(4)) not in before
    assert not api.store.query("SELECT 1 FROM document_uploads WHERE sha256 = ?", (sha(pdf(4)),))
    assert api.client.get(f"/documents/{sha(pdf(4))}", headers=api.headers("ibge")).status_code == 404
    other = api.app.issue_token(ADMIN, name="test-ibge-2", role="ibge", municipality=None).token
    second_token = api.client.post("/documents", data=pdf(5), headers={
        "Authorization": f"Bearer {other}", "Content-Type": "application/pdf"})
    assert second_token.status_code == 429  # the quota is the body's, not the token's
    assert upload(api, pdf(6), role="tre").status_code == 201  # another body has its own
    api.clock.now = MIDNIGHT  # the next legal day
    assert upload(api, pdf(4)).status_code == 201


def test_the_refusal_is_said_in_portuguese_when_asked(daily):
    api = daily
    api.clock.now = LATE
    for n in range(3):
        upload(api, pdf(n))
    refused = api.client.post("/documents", data=pdf(9), headers=api.headers(
        "ibge", **{"Content-Type": "application/pdf", "Accept-Language": "pt-BR"}))
    assert refused.status_code == 429
    detail = refused.get_json()["detail"]
    assert "meia-noite em Rio Branco" in detail and "TRAMITA_DOCUMENT_QUOTA_BYTES_PER_DAY" in detail


def test_a_body_past_its_total_quota_is_refused_429_without_retry_after_until_an_uncited_document_expires(total):
    api = total
    assert [upload(api, pdf(n)).status_code for n in (1, 2)] == [201, 201]
    refused = upload(api, pdf(3))
    assert refused.status_code == 429 and "Retry-After" not in refused.headers
    problem = refused.get_json()
    assert problem["type"].endswith("/document-quota-exceeded") and problem["limit"] == 2 * SIZE
    assert "TRAMITA_DOCUMENT_QUOTA_BYTES " in problem["detail"] or "(TRAMITA_DOCUMENT_QUOTA_BYTES)" in problem["detail"]
    assert sha(pdf(3)) not in stored_documents(api)
    api.clock.now += 7 * DAY
    assert len(expire(api)) == 2  # their bytes are given back to the body
    assert upload(api, pdf(3)).status_code == 201


def test_a_body_past_its_daily_number_of_new_documents_is_refused_429_however_small_they_are(new_database_url):
    api = harness(new_database_url("sqlite"), TRAMITA_DOCUMENT_QUOTA_DOCUMENTS_PER_DAY="2")
    try:
        api.clock.now = LATE
        assert [upload(api, pdf(n, 20)).status_code for n in (1, 2)] == [201, 201]
        refused = upload(api, pdf(3, 20))
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "2"
        problem = refused.get_json()
        assert problem["limit"] == 2 and "TRAMITA_DOCUMENT_QUOTA_DOCUMENTS_PER_DAY" in problem["detail"]
        assert "new documents" in problem["detail"] and sha(pdf(3, 20)) not in stored_documents(api)
        api.clock.now = MIDNIGHT
        assert upload(api, pdf(3, 20)).status_code == 201
    finally:
        api.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_concurrent_uploads_of_one_body_never_pass_its_quota_together(backend, new_database_url):
    api = harness(new_database_url(backend))
    store = DocumentStore(api.url)
    try:
        quota, now, attempts = Quota(per_day=3 * SIZE, total=0), LATE, 12
        start, results = threading.Barrier(attempts), []

        def attempt(n: int) -> None:
            start.wait(timeout=60)
            try:
                results.append(store.put(pdf(n), "application/pdf", f"token-{n}", now, body="ibge", quota=quota)[1])
            except QuotaExceededError:
                results.append(False)

        threads = [threading.Thread(target=attempt, args=(n,)) for n in range(attempts)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert len(results) == attempts and results.count(True) == 3
        assert len(stored_documents(api)) == 3
        assert api.store.query("SELECT SUM(size) FROM document_additions WHERE body = 'ibge'")[0][0] == 3 * SIZE
    finally:
        store.close()
        api.close()


def test_a_body_is_its_role_and_the_municipality_of_a_municipal_role():
    assert body_of(Actor("x", "deputy")) == "deputy"
    assert body_of(Actor("x", "council", "1200385")) == "council:1200385"
    assert body_of(Actor("x", "council", "1200385")) != body_of(Actor("y", "council", "1200203"))
    assert seconds_to_next_day(LATE) == 2 and seconds_to_next_day(MIDNIGHT) == 24 * 3600


@pytest.mark.parametrize("name, value", [("TRAMITA_DOCUMENT_QUOTA_BYTES_PER_DAY", "-1"),
                                         ("TRAMITA_DOCUMENT_QUOTA_BYTES", "2 GiB"),
                                         ("TRAMITA_DOCUMENT_EXPIRY_DAYS", "0")])
def test_a_bad_document_setting_is_refused_naming_it(name, value):
    with pytest.raises(ValueError, match=name):
        settings_from({name: value})
    defaults = settings_from({})
    assert defaults["document_quota"] == Quota(200 * 1024 * 1024, 2048 * 1024 * 1024, 200)
    assert defaults["document_expiry_days"] == 7


@pytest.mark.slow
def test_a_served_app_refuses_past_the_daily_quota_with_retry_after_and_shows_its_documents_on_health(tmp_path,
                                                                                                     monkeypatch):
    from tramita.cli import main

    url = f"sqlite:///{tmp_path / 'tramita.sqlite'}"
    monkeypatch.setenv("TRAMITA_DATABASE_URL", url)
    assert main(["migrate"]) == 0
    issued = ApiHarness(url)
    token = issued.app.issue_token(ADMIN, name="test-ibge", role="ibge", municipality=None).token
    issued.close()
    env = {"TRAMITA_DATABASE_URL": url, "TRAMITA_DOCUMENT_QUOTA_BYTES_PER_DAY": str(2 * SIZE)}
    with serving(tmp_path, "--workers", "1", env=env) as server:
        def send(content: bytes) -> tuple[int, dict, bytes]:
            connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
            connection.request("POST", "/documents", body=content, headers={
                "Authorization": f"Bearer {token}", "Content-Type": "application/pdf"})
            answer = connection.getresponse()
            try:
                return answer.status, dict(answer.getheaders()), answer.read()
            finally:
                connection.close()

        assert [send(pdf(n))[0] for n in (1, 2)] == [201, 201]
        status, headers, body = send(pdf(3))
        assert status == 429 and headers["Content-Type"] == "application/problem+json"
        assert json.loads(body)["type"].endswith("/document-quota-exceeded")
        assert 1 <= int(headers["Retry-After"]) <= 24 * 3600
        connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
        connection.request("GET", "/health")
        health = json.loads(connection.getresponse().read())
        connection.close()
        assert health["documents"] == {"count": 2, "bytes": 2 * SIZE, "uncited_bytes": 2 * SIZE}


# ------------------------------------------------------------------------------------------------ expiry

def test_the_scheduler_reads_the_expiry_and_its_schedule_from_the_environment():
    configured = scheduler_settings({"TRAMITA_DOCUMENT_EXPIRY_DAYS": "2", "TRAMITA_DOCUMENT_EXPIRY_CRON": "5 3 * * *"},
                                    "memory://")
    assert configured.document_expiry_days == 2 and configured.document_expiry_cron == "5 3 * * *"
    assert scheduler_settings({}, "memory://").document_expiry_days == 7
    with pytest.raises(ValueError, match="TRAMITA_DOCUMENT_EXPIRY_DAYS"):
        scheduler_settings({"TRAMITA_DOCUMENT_EXPIRY_DAYS": "sete"}, "memory://")


def test_a_configured_expiry_removes_after_its_own_days(api):
    uploaded_at = api.clock.now
    upload(api, pdf(1))
    api.clock.now = uploaded_at + 2 * DAY - timedelta(seconds=1)
    assert expire(api, days=2) == []
    api.clock.now = uploaded_at + 2 * DAY
    assert [r.sha256 for r in expire(api, days=2)] == [sha(pdf(1))]
    assert "2 dias" in alerts_of(api, "document-expired")[0]["message"]


def test_an_uncited_document_is_removed_after_the_expiry_not_before_and_its_removal_is_recorded(api):
    uploaded_at = api.clock.now
    assert upload(api, pdf(1)).status_code == 201
    api.clock.now = uploaded_at + 7 * DAY - timedelta(seconds=1)
    assert expire(api) == [] and sha(pdf(1)) in stored_documents(api)
    before = api.notifications()
    api.clock.now = uploaded_at + 7 * DAY
    removed = expire(api)
    assert [r.sha256 for r in removed] == [sha(pdf(1))]
    assert sha(pdf(1)) not in stored_documents(api)
    assert api.client.get(f"/documents/{sha(pdf(1))}", headers=api.headers("ibge")).status_code == 404
    assert api.notifications() == before + 1  # the removal's event
    recorded = alerts_of(api, "document-expired")
    assert len(recorded) == 1 and sha(pdf(1)) in recorded[0]["subject"]
    message = recorded[0]["message"]
    assert "documento removido" in message and "7 dias" in message and uploaded_at.isoformat() in message
    assert "ibge" in message and f"{SIZE} bytes" in message  # what, by whom it was added, when and why
    assert expire(api) == [] and len(alerts_of(api, "document-expired")) == 1  # once


def test_a_cited_document_is_never_removed(api):
    attached_finding(api)
    api.clock.now += 400 * DAY
    assert expire(api) == []
    assert api.get(f"/documents/{sha(PDF)}").data == PDF


def test_an_act_recorded_but_not_yet_projected_keeps_the_document_it_cites(api):
    assert upload(api, pdf(1)).status_code == 201
    case = open_1991_petition(api)["case_id"]
    api.clock.now += 8 * DAY
    finding_with(api, case, [{"sha256": sha(pdf(1)), "name": "Laudo.pdf"}])  # the projector has not run
    assert expire(api) == []
    assert api.get(f"/documents/{sha(pdf(1))}").data == pdf(1)


def test_an_upload_again_starts_the_expiry_again(api):
    first = api.clock.now
    upload(api, pdf(1))
    api.clock.now = first + 5 * DAY
    assert upload(api, pdf(1)).status_code == 200
    api.clock.now = first + 8 * DAY
    assert expire(api) == []
    api.clock.now = first + 12 * DAY
    assert [r.sha256 for r in expire(api)] == [sha(pdf(1))]


def test_a_removal_whose_event_was_not_saved_is_recorded_by_the_next_run(api, monkeypatch):
    upload(api, pdf(1))
    api.clock.now += 7 * DAY
    saving = api.app.raise_system_alert

    def crash(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("the process died before the alert was saved")

    monkeypatch.setattr(api.app, "raise_system_alert", crash)
    with pytest.raises(RuntimeError):
        expire(api)
    assert sha(pdf(1)) not in stored_documents(api) and alerts_of(api, "document-expired") == []
    monkeypatch.setattr(api.app, "raise_system_alert", saving)
    assert expire(api) == []  # nothing more to remove, but the removal is recorded now
    assert [sha(pdf(1)) in a["subject"] for a in alerts_of(api, "document-expired")] == [True]


def test_the_schedulers_job_removes_and_logs_what_expired(api):
    upload(api, pdf(1))
    api.clock.now += 7 * DAY
    lines: list[tuple[str, dict]] = []
    scanner = Scanner(api.app, api.store, api.projector, (5, 1), lambda event, **fields: lines.append((event, fields)))
    assert DocumentExpiry(scanner, api.url, 7).run() == 1
    assert ("document-expiry", {"removed": 1, "days": 7}) in lines
    assert [f["sha256"] for e, f in lines if e == "document-expired"] == [sha(pdf(1))]
    assert len(alerts_of(api, "document-expired")) == 1
    logged = len(lines)
    assert DocumentExpiry(scanner, api.url, 7).run() == 0 and len(lines) == logged  # an idle hour logs nothing


def test_the_command_removes_what_expired_and_says_so_in_portuguese(tmp_path):
    url = f"sqlite:///{tmp_path / 'tramita.sqlite'}"
    api = harness(url, signed=False)  # the command signs with TRAMITA_SIGNING_KEY, unset here
    try:
        api.clock.now = datetime(2021, 1, 4, 15, 0, tzinfo=timezone.utc)  # long before the command's wall clock
        upload(api, pdf(1))
        kept = attached_finding(api, pdf(2))
    finally:
        api.close()
    ran = subprocess.run([sys.executable, "-m", "tramita", "documents", "expire"], capture_output=True, text=True,
                         env={**os.environ, "TRAMITA_DATABASE_URL": url}, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert sha(pdf(1)) in ran.stdout and "1 documento(s) removido(s)" in ran.stdout, ran.stdout
    api = harness(url, signed=False)
    try:
        assert stored_documents(api) == [sha(pdf(2))] and kept
        assert len(alerts_of(api, "document-expired")) == 1
    finally:
        api.close()


# ------------------------------------------------------------------------------------------------ /health

def test_health_shows_the_documents_storage_and_the_uncited_bytes_awaiting_expiry(api):
    attached_finding(api)
    upload(api, pdf(1))
    health = api.client.get("/health").get_json()
    assert health["documents"] == {"count": 2, "bytes": len(PDF) + SIZE, "uncited_bytes": SIZE}


# ------------------------------------------------------------------------------------------------ describe

@pytest.mark.parametrize("edit", ["size = 'muitos'", "size = 12.5", "media_type = 42", "media_type = 'text/html'"])
def test_an_act_citing_a_document_whose_row_was_edited_is_refused_as_altered_with_its_alarm(edit, new_database_url):
    api = harness(new_database_url("sqlite"))
    try:
        assert upload(api, PDF).status_code == 201
        case = open_1991_petition(api)["case_id"]
        with api.store.transaction() as tx:
            tx.execute(f"UPDATE documents SET {edit} WHERE sha256 = ?", (sha(PDF),))
        before = api.notifications()
        refused = finding_with(api, case, [{"sha256": sha(PDF), "name": "Laudo.pdf"}], expect=500)
        assert refused.mimetype == "application/problem+json"
        assert refused.get_json()["type"].endswith("/document-altered")
        assert api.notifications() == before + 1  # the alarm alone: the act recorded nothing
        assert len(alerts_of(api, "document-altered")) == 1
        assert upload(api, PDF).status_code == 200  # the original bytes repair the row
        finding_with(api, case, [{"sha256": sha(PDF), "name": "Laudo.pdf"}])
    finally:
        api.close()
