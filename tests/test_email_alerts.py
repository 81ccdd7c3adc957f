"""Alerts by e-mail: a subscription naming an address receives its body's alerts, in Portuguese, with the deadline
attached as an .ics holding its reminders, sent to a real SMTP server (aiosmtpd on 127.0.0.1, plain SMTP, which
the sender allows only to a loopback host and without credentials); a server down for a round gets them later,
once; with no SMTP server the messages go to a maildir (infrastructure/mail.py, scheduler/subscribers.py)."""

from __future__ import annotations

import email
import email.policy
import mailbox
import socket
import stat
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from icalendar import Calendar

from domain.subscriptions import parse_key
from infrastructure.mail import MailSettings, message_id, send_smtp
from infrastructure.webhook import DeliveryError
from scheduler.config import SchedulerConfig, load_mail
from scheduler.leader import NoLeadership
from scheduler.service import run
from tests.api_client import ApiHarness
from tests.test_article_rules import TARAUACA
from tests.test_subscriptions import FAST, requisitions, subscribing
from tramita.cli.processes import demo_mail, mailed_in_portuguese

#: Requisitions received Fri 2025-10-17 are due Tue 2025-11-18: subscribed and scanned five days before.
SUBSCRIBED = datetime(2025, 11, 13, 12, tzinfo=timezone.utc)
SCANNED = datetime(2025, 11, 13, 14, tzinfo=timezone.utc)


class Mailbox:
    """The SMTP server's side: what it accepted, and whether it answers 451 (a server in trouble) for now."""

    def __init__(self) -> None:
        self.accepted: list[tuple[list[str], email.message.EmailMessage]] = []
        self.refusing = False
        self.refused = 0

    async def handle_DATA(self, server, session, envelope) -> str:  # noqa: N802 - aiosmtpd's hook name
        if self.refusing:
            self.refused += 1
            return "451 4.3.0 try again later"
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        self.accepted.append((list(envelope.rcpt_tos), message))
        return "250 OK"

    def to(self, address: str) -> list[email.message.EmailMessage]:
        return [message for recipients, message in self.accepted if address in recipients]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def smtp() -> Iterator[tuple[Mailbox, str]]:
    box = Mailbox()
    controller = Controller(box, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield box, f"smtp://127.0.0.1:{controller.port}"
    finally:
        controller.stop()


@pytest.fixture
def api(database_url) -> Iterator[ApiHarness]:
    """The API and the scheduler's store on SQLite and on PostgreSQL (the suite's throwaway cluster)."""
    yield from subscribing(database_url)


def subscribe(api: ApiHarness, role: str, address: str, expect: int = 201, **body) -> dict:
    response = api.client.post("/subscriptions", json={"email": address, **body}, headers=api.headers(role, None))
    assert response.status_code == expect, response.get_json()
    return response.get_json()


def scheduler_once(api: ApiHarness, mail: MailSettings, lines: list | None = None) -> int:
    api.clock.now = SCANNED
    config = mailed_in_portuguese(SchedulerConfig(api.url, webhook_tries=2, mail=mail))
    return run(config, api.app, api.store, NoLeadership(), stop=threading.Event(),
               log=lambda event, **fields: (lines if lines is not None else []).append((event, fields)), once=True,
               webhook_options=FAST)


def attachment(message: email.message.EmailMessage) -> Calendar:
    [ics] = [part for part in message.iter_attachments() if part.get_content_type() == "text/calendar"]
    assert ics.get_param("method") == "PUBLISH"
    return Calendar.from_ical(ics.get_content())


def test_two_bodies_subscribed_by_email_each_receive_only_their_alerts_in_portuguese_with_a_calendar(api, smtp):
    box, url = smtp
    case, _ = requisitions(api, TARAUACA, ("ibge", "tre"))
    api.clock.now = SUBSCRIBED
    ibge = subscribe(api, "ibge", "prazos@ibge.gov.br")
    tre = subscribe(api, "tre", "secretaria@tre-ac.jus.br")
    assert (ibge["channel"], ibge["email"], ibge["url"]) == ("email", "prazos@ibge.gov.br", None)
    assert "secret" not in ibge
    assert scheduler_once(api, MailSettings(smtp_url=url, public_url="https://tramita.ac.gov.br")) == 0
    assert len(box.accepted) == 2
    for address, who in (("prazos@ibge.gov.br", "IBGE"), ("secretaria@tre-ac.jus.br", "Tribunal Regional")):
        [message] = box.to(address)
        assert message["Subject"] == f"Prazo vence em 5 dia(s): {case} — apuração (Art. 10)"
        assert message["Content-Language"] == "pt-BR"
        text = message.get_body(("plain",)).get_content()
        assert f"Processo: {case}" in text and "Vencimento: 18/11/2025 (faltam 5 dia(s))" in text
        assert f"https://tramita.ac.gov.br/processos/{case}" in text
        assert "Quem deve agir: " in text and who in text.split("Quem deve agir: ")[1].splitlines()[0]
        assert "Art. 10 — LC 35/1991" in text
        assert "<table>" in message.get_body(("html",)).get_content()
        [event] = attachment(message).walk("VEVENT")
        assert str(event["dtstart"].dt) == "2025-11-18" and case in str(event["summary"])
        assert [str(alarm["trigger"].dt) for alarm in event.walk("VALARM")] == ["-5 days, 9:00:00",
                                                                                "-1 day, 9:00:00"]
    api.projector.catch_up()
    listed = api.get("/subscriptions", role="tre").get_json()["items"]
    assert [(s["email"], s["deliveries"]) for s in listed] == [("secretaria@tre-ac.jus.br", {"delivered": 1})]
    assert tre["id"] == listed[0]["id"]


def test_a_server_down_for_a_round_gets_the_mail_at_the_next_round_once(api, smtp):
    box, url = smtp
    requisitions(api, TARAUACA, ("ibge",))
    api.clock.now = SUBSCRIBED
    ibge = subscribe(api, "ibge", "prazos@ibge.gov.br")
    box.refusing = True
    assert scheduler_once(api, MailSettings(smtp_url=url)) == 0
    assert box.accepted == [] and box.refused == 2  # both tries of the round answered 451
    api.projector.catch_up()
    [failed] = api.store.query_dicts("SELECT * FROM alert_deliveries WHERE subscription_id = ?", (ibge["id"],))
    assert failed["delivery"] == "failed" and "451" in failed["error"]
    box.refusing = False
    lines: list = []
    assert scheduler_once(api, MailSettings(smtp_url=url), lines) == 0
    assert ("redelivering", {"alerts": 1}) in lines
    [message] = box.to("prazos@ibge.gov.br")
    assert scheduler_once(api, MailSettings(smtp_url=url)) == 0  # delivered: not sent again
    assert len(box.accepted) == 1
    api.projector.catch_up()
    assert dict(api.store.query("SELECT subscription_id, delivery FROM alert_deliveries")) == {
        ibge["id"]: "delivered"}
    assert message["Message-ID"] == message_id(message["X-Tramita-Alert"], ibge["id"])  # the same on every try


def test_without_an_smtp_server_the_mails_are_written_to_the_maildir(api, tmp_path):
    case, _ = requisitions(api, TARAUACA, ("ibge",))
    api.clock.now = SUBSCRIBED
    subscribe(api, "ibge", "prazos@ibge.gov.br")
    maildir = tmp_path / "mail"
    assert scheduler_once(api, load_mail({"TRAMITA_MAILDIR": str(maildir)})) == 0
    [message] = list(mailbox.Maildir(maildir, factory=None))
    parsed = email.message_from_bytes(message.as_bytes(), policy=email.policy.default)
    assert parsed["To"] == "prazos@ibge.gov.br" and case in parsed["Subject"]
    assert attachment(parsed).walk("VALARM")
    assert scheduler_once(api, load_mail({"TRAMITA_MAILDIR": str(maildir)})) == 0  # delivered once
    assert len(list(mailbox.Maildir(maildir, factory=None))) == 1


@pytest.mark.parametrize("address", [
    "Prefeitura <prazos@feijo.ac.gov.br>", "prazos@feijo", "a@b.com, c@d.com", "prazos@feijo.ac.gov.br\r\nBcc: x@y.z",
    "sem arroba", "x" * 250 + "@a.gov.br", "prazos @feijo.ac.gov.br",
])
def test_an_address_that_is_not_one_plain_email_address_is_refused_naming_email(api, address):
    refused = subscribe(api, "ibge", address, expect=422)
    assert "email" in str(refused)


def test_a_subscription_naming_both_an_address_and_a_url_is_refused(api):
    response = api.client.post("/subscriptions", json={"email": "prazos@ibge.gov.br", "url": "https://x.gov.br/"},
                               headers=api.headers("ibge", None))
    assert response.status_code == 422 and "email" in str(response.get_json())


def test_credentials_are_never_sent_to_a_server_without_tls(smtp, tmp_path):
    box, url = smtp
    password = tmp_path / "password"
    password.write_text("s3cret", encoding="utf-8")
    message = email.message.EmailMessage()
    message["From"], message["To"], message["Subject"] = "t@x.gov.br", "y@x.gov.br", "x"
    with pytest.raises(DeliveryError, match="STARTTLS"):
        send_smtp(message, MailSettings(smtp_url=url, user="tramita", password_file=Path(password)))
    assert box.accepted == []
    with pytest.raises(ValueError, match="TRAMITA_SMTP_URL"):
        load_mail({"TRAMITA_SMTP_URL": "smtp://user:pw@mail.ac.gov.br:587"})


def test_the_demo_keeps_one_subscription_key_0600_and_mails_to_the_maildir_without_an_smtp_server(tmp_path):
    key_file = tmp_path / "var" / "subscription-key"
    environ: dict[str, str] = {}
    first = demo_mail(environ, key_file)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert parse_key(environ["TRAMITA_SUBSCRIPTION_KEY"]) is not None
    assert environ["TRAMITA_MAILDIR"] == "var/mail" and "var/mail" in first.where
    again: dict[str, str] = {}
    demo_mail(again, key_file)
    assert again["TRAMITA_SUBSCRIPTION_KEY"] == environ["TRAMITA_SUBSCRIPTION_KEY"]  # feeds' addresses stay
    chosen = {"TRAMITA_SUBSCRIPTION_KEY": "x", "TRAMITA_SMTP_URL": "smtps://mail.ac.gov.br:465"}
    said = demo_mail(chosen, tmp_path / "other-key")
    assert chosen["TRAMITA_SUBSCRIPTION_KEY"] == "x" and not (tmp_path / "other-key").exists()
    assert "smtps://mail.ac.gov.br:465" in said.where and "TRAMITA_MAILDIR" not in chosen


def test_subscriptions_off_are_said_in_portuguese_when_asked(tmp_path):
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}")
    try:
        response = harness.client.post("/subscriptions", json={"email": "prazos@ibge.gov.br"},
                                       headers={**harness.headers("ibge"), "Accept-Language": "pt-BR"})
    finally:
        harness.close()
    assert response.status_code == 503
    assert response.get_json()["detail"].startswith("as assinaturas estão desligadas")


def throwaway_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, made for this test only."""
    from datetime import timedelta

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import ipaddress

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(minutes=5))
                   .not_valid_after(now + timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def test_credentials_go_only_after_starttls_and_the_server_s_certificate_is_checked(tmp_path):
    import ssl

    from aiosmtpd.smtp import AuthResult

    cert_file, key_file = throwaway_certificate(tmp_path)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert_file, key_file)
    logins: list[tuple[bytes, bytes, bool]] = []

    def authenticator(server, session, envelope, mechanism, auth_data) -> AuthResult:
        logins.append((auth_data.login, auth_data.password, session.ssl is not None))
        return AuthResult(success=auth_data.password == b"s3cret")

    box = Mailbox()
    controller = Controller(box, hostname="127.0.0.1", port=free_port(), tls_context=server_tls,
                            require_starttls=True, authenticator=authenticator, auth_require_tls=True)
    controller.start()
    password = tmp_path / "password"
    password.write_text("s3cret\n", encoding="utf-8")
    message = email.message.EmailMessage()
    message["From"], message["To"], message["Subject"] = "tramita@ac.gov.br", "prazos@ibge.gov.br", "Prazo"
    message.set_content("Prazo vencido.")
    url = f"smtp://127.0.0.1:{controller.port}"
    try:
        with pytest.raises(DeliveryError, match="CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
            send_smtp(message, MailSettings(smtp_url=url, user="tramita", password_file=password))
        assert logins == []  # a server the system does not trust is given nothing
        settings = load_mail({"TRAMITA_SMTP_URL": url, "TRAMITA_SMTP_USER": "tramita",
                              "TRAMITA_SMTP_PASSWORD_FILE": str(password), "TRAMITA_SMTP_CA_FILE": str(cert_file)})
        send_smtp(message, settings)
    finally:
        controller.stop()
    assert logins == [(b"tramita", b"s3cret", True)]
    [received] = box.to("prazos@ibge.gov.br")
    assert received["Subject"] == "Prazo"


def test_a_subscription_recorded_before_e_mail_reads_as_having_no_address():
    from domain import chain
    from domain.subscriptions import Subscription

    state = {"channel": "webhook", "url": "https://prazos.example.org/"}
    Subscription.Created.upcast_v1_v2(state)
    assert state["email"] is None and state["digest"] is False and state[chain.UPCAST_MARK] == ["digest", "email"]
    assert Subscription.Created.class_version == 2


def test_a_body_subscribes_and_ends_an_address_on_its_page_in_portuguese_with_its_csrf_token(api):
    from tests.test_pages import csrf_of, sign_in

    client = api.client
    assert sign_in(client, api.token("ibge"), proximo="/assinaturas").status_code == 303
    page = client.get("/assinaturas")
    assert page.status_code == 200 and "Assinaturas de alertas" in page.get_data(as_text=True)
    csrf = csrf_of(page.data)
    assert client.post("/assinaturas", data={"email": "prazos@ibge.gov.br"}).status_code == 403  # no CSRF token
    refused = client.post("/assinaturas", data={"csrf": csrf, "email": "IBGE <prazos@ibge.gov.br>"})
    assert refused.status_code == 422 and "um único endereço de e-mail" in refused.get_data(as_text=True)
    for _ in range(2):  # a double submit subscribes once
        made = client.post("/assinaturas", data={"csrf": csrf, "email": "prazos@ibge.gov.br"})
        assert made.status_code == 303 and made.headers["Location"].endswith("/assinaturas?feita=1")
    [subscription] = api.get("/subscriptions", role="ibge").get_json()["items"]
    assert (subscription["channel"], subscription["email"], subscription["role"]) == (
        "email", "prazos@ibge.gov.br", "ibge")
    listed = client.get("/assinaturas?feita=1").get_data(as_text=True)
    assert "prazos@ibge.gov.br" in listed and "em vigor" in listed
    assert "<td>e-mail</td>" in listed and ">email<" not in listed  # the channel in words
    assert 'href="/assinaturas">Assinaturas de alertas</a>' in client.get("/processos").get_data(as_text=True)
    ended = client.post(f"/assinaturas/{subscription['id']}/encerrar", data={"csrf": csrf})
    assert ended.status_code == 303
    [subscription] = api.get("/subscriptions", role="ibge").get_json()["items"]
    assert subscription["in_force"] is False and subscription["remove_reason"].startswith("encerrada")
    assert client.post("/assinaturas/not-an-id/encerrar", data={"csrf": csrf}).status_code == 404


def test_a_daily_digest_gathers_the_alerts_of_the_day_in_one_message_sent_once_after_the_digest_hour(api, smtp):
    box, url = smtp
    case, _ = requisitions(api, TARAUACA, ("ibge", "tre"))
    api.clock.now = SUBSCRIBED
    response = api.client.post("/subscriptions", json={"email": "contas@tce.ac.gov.br", "digest": True},
                               headers=api.headers("auditor"))
    assert response.status_code == 201 and response.get_json()["digest"] is True
    digest = response.get_json()
    refused = api.client.post("/subscriptions", json={"url": "https://x.gov.br/", "digest": True},
                              headers=api.headers("auditor"))
    assert refused.status_code == 422 and refused.get_json()["field"] == "digest"
    settings = MailSettings(smtp_url=url, digest_hour=7)
    assert scheduler_once(api, settings) == 0  # 09:00 in Rio Branco: raised after today's digest hour
    assert box.accepted == []
    next_morning = datetime(2025, 11, 14, 13, tzinfo=timezone.utc)  # 08:00 in Rio Branco
    for _ in range(2):  # the second run finds both delivered: nothing more
        api.clock.now = next_morning
        config = mailed_in_portuguese(SchedulerConfig(api.url, webhook_tries=2, mail=settings))
        assert run(config, api.app, api.store, NoLeadership(), stop=threading.Event(), log=lambda event, **f: None,
                   once=True, webhook_options=FAST) == 0
    [message] = box.to("contas@tce.ac.gov.br")
    assert message["Subject"] == "Resumo diário de 14/11/2025: 2 alerta(s) do seu órgão"
    text = message.get_body(("plain",)).get_content()
    assert text.count(f"Processo: {case}") == 2 and "Quem deve agir: IBGE" in text
    events = list(attachment(message).walk("VEVENT"))
    assert len(events) == 2 and all(event.walk("VALARM") for event in events)
    api.projector.catch_up()
    assert api.store.query("SELECT delivery, COUNT(*) FROM alert_deliveries WHERE subscription_id = ? "
                           "GROUP BY delivery", (digest["id"],)) == [("delivered", 2)]


@pytest.mark.slow
def test_make_run_turns_subscriptions_on_and_the_demo_s_alerts_land_in_its_maildir(tmp_path):
    from tests.servers import START_SECONDS, free_port as any_port, stop
    from tests.test_first_run import printed_tokens, up
    from tests.test_projector_crash import wait_for

    (tmp_path / "var").mkdir()
    port = any_port()
    process = up(tmp_path, port)
    try:
        output, _ = printed_tokens(tmp_path, process)
        new = tmp_path / "var" / "mail" / "new"
        assert wait_for(lambda: new.is_dir() and any(new.iterdir()), START_SECONDS)
    finally:
        assert stop(process) == 0
    assert "assinaturas e calendários ligados" in output and "var/mail" in output
    assert stat.S_IMODE((tmp_path / "var" / "subscription-key").stat().st_mode) == 0o600
    # the demo's first scan raises a breach (Art. 10 §1) and missed deadlines: any of them may be the first mail
    message = email.message_from_bytes(next(new.iterdir()).read_bytes(), policy=email.policy.default)
    assert message["To"] == "demo@tramita.example.org"
    assert message["Subject"].startswith(("Prazo", "Requisição recusada")), message["Subject"]
    assert f"http://127.0.0.1:{port}/processos/" in message.get_body(("plain",)).get_content()
    assert attachment(message).walk("VEVENT")
