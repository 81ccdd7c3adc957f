"""Alerts by e-mail: the message a subscription's address receives, and how it is sent (SMTP, or a maildir).

The message (`compose`) is in Portuguese (the words through the gettext function the wiring gives, the pages'
catalogue): the subject names how the deadline stands and the case's number, the act expected and its article
("Prazo vencido: LC35-2026-0003 — apuração (Art. 10)"); the body, plain text with an HTML alternative, says who must
act, the act and the article in words, the due date (dd/mm/aaaa), the days left or late and the link to the case's
page; the deadline is attached as an iCalendar event (`text/calendar; method=PUBLISH`, infrastructure/ical.py) with
its reminders. Its `Message-ID` is derived from the alert and the subscription, the same on every try and round, so
a message sent again after a crash (between the server's acceptance and the delivery's record) is recognisable.
A daily digest (`compose_digest`) gathers a subscription's alerts of a day in one such message, one .ics for all.

Sending (`MailSender.post`, the transport of a subscription's `Webhook` worker, which keeps the queue, the tries,
the pauses and the delivery record): with `TRAMITA_SMTP_URL`, to that server, `smtps://` (TLS from the start) or
`smtp://` (STARTTLS required; plain only to a loopback host and without credentials, which the tests use); a try
succeeds only when the server accepted the message for the address. With no SMTP URL, the message is written to a
maildir (`TRAMITA_MAILDIR`, default `var/mail`), as the `make run` demo does.
"""

from __future__ import annotations

import html
import ipaddress
import json
import mailbox
import smtplib
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit
from uuid import NAMESPACE_URL, uuid5

from domain.alert_words import alert_words, day
from infrastructure.ical import calendar
from infrastructure.webhook import DeliveryError

#: Seconds an SMTP exchange may take (connecting, each command) before the try counts as failed.
TIMEOUT = 30.0
MESSAGE_NAMESPACE = uuid5(NAMESPACE_URL, "urn:tramita:alert-mail")
def _same(text: str) -> str:
    return text


@dataclass(frozen=True)
class MailSettings:
    """Where and how alerts are mailed (scheduler/config.py reads them from the environment)."""

    smtp_url: str | None = None
    user: str | None = None
    password_file: Path | None = field(default=None, repr=False)
    sender: str = "tramita <tramita@localhost>"
    maildir: Path = Path("var/mail")
    timeout: float = TIMEOUT
    #: The certificates to trust for the server's (TRAMITA_SMTP_CA_FILE: a deployment's own CA); None: the system's.
    ca_file: Path | None = None
    public_url: str = "http://127.0.0.1:8000"
    #: The days before the due day the attachment's reminders ring (the scheduler's thresholds).
    reminders: tuple[int, ...] = (5, 1)
    #: The hour (Rio Branco time) from which a day's digest is sent, at the first redelivery at or after it.
    digest_hour: int = 7
    #: The catalogue's gettext in Portuguese (the wiring gives it); the identity leaves the English msgids.
    gettext: Callable[[str], str] = _same
    #: A whole number (the days left or late) as the catalogue's language writes it (the wiring gives Babel's).
    number: Callable[[int], str] = str


def check_smtp_url(text: str, source: str = "TRAMITA_SMTP_URL") -> str:
    """`smtp://host[:port]` or `smtps://host[:port]`, nothing else in it (no user or password: those come from
    their own settings)."""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        port, parts = -1, None
    if parts is None or parts.scheme not in ("smtp", "smtps") or not parts.hostname or port == 0 \
            or parts.username or parts.password or parts.path not in ("", "/") or parts.query:
        raise ValueError(f"{source}: {text[:80]!r} is not smtp://host:port (STARTTLS) or smtps://host:port")
    return text


def message_id(alert_id: str, subscription_id: str) -> str:
    """The message's id: the same for one alert to one subscription on every try."""
    return f"<{uuid5(MESSAGE_NAMESPACE, f'{alert_id}:{subscription_id}')}@tramita>"


@dataclass(frozen=True)
class Told:
    """One alert in words: how its deadline stands, the lines the message shows, the link, the .ics event."""

    state: str
    act: str
    article: str
    lines: list[tuple[str, str]]
    link: str
    event: dict[str, Any]
    acts: list[str]


def told(alert: Mapping[str, Any], settings: MailSettings, acts: list[str],
         municipality_name: str | None = None) -> Told:
    """The words of one case alert (`scheduler.jsonlog.alert_fields`); `acts` are the labels of the acts that close
    its deadline (the statute's)."""
    _ = settings.gettext
    said = alert_words(alert, _, lambda code: municipality_name if code == alert.get("municipality") else None,
                       number=settings.number)
    act = " ou ".join(acts) if acts else alert["rule"]
    state, who, article = said.state, said.who, said.article
    due, when = date.fromisoformat(alert["due_on"]), said.when
    lines = [
        (_("Case"), alert["case_number"]), (_("Who must act"), who), (_("Act expected"), act),
        (_("Article"), f"{article} — LC 35/1991"), (_("Due date"), f"{day(due)} ({when})"),
    ]
    event = {"case_id": alert["case_id"], "deadline": alert["deadline"], "case_number": alert["case_number"],
             "rule": alert["rule"], "article": alert["article"], "who": who, "municipality": None,
             "due_on": alert["due_on"], "status": "missed" if alert["kind"] in ("missed", "breach") else "open"}
    link = f"{settings.public_url.rstrip('/')}/processos/{quote(alert['case_number'], safe='')}"
    return Told(state, act, article, lines, link, event, acts or [act])


def _message(*, subject: str, to: str, settings: MailSettings, ident: str, at: datetime, heading: str,
             told_alerts: list[Told], calendar_name: str, filename: str) -> EmailMessage:
    """The message: the alerts as text and as HTML, and their deadlines as one .ics attachment."""
    _ = settings.gettext
    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = settings.sender
    message["To"] = to
    message["Message-ID"] = ident
    message["Date"] = format_datetime(at.astimezone(timezone.utc))
    message["Auto-Submitted"] = "auto-generated"
    intro = _("tramita records this alert for the body that must act, under LC 35/1991.")
    text, markup = [heading, ""], [f"<p><strong>{html.escape(heading)}</strong></p>"]
    titled = len(told_alerts) > 1  # a single alert's state is the heading already
    for one in told_alerts:
        text += [*([f"{one.state}."] if titled else []), *(f"{name}: {value}" for name, value in one.lines),
                 _("Case page: %(link)s") % {"link": one.link}, ""]
        rows = "".join(f"<tr><th align=\"left\">{html.escape(name)}</th><td>{html.escape(str(value))}</td></tr>"
                       for name, value in one.lines)
        markup.append((f"<h2>{html.escape(one.state)}</h2>" if titled else "") + f"<table>{rows}</table>"
                      f"<p><a href=\"{html.escape(one.link)}\">{html.escape(_('Open the case page'))}</a></p>")
    message.set_content("\n".join([*text, intro, ""]))
    message.add_alternative(f"<!doctype html><html lang=\"pt-BR\"><body>{''.join(markup)}"
                            f"<p><small>{html.escape(intro)}</small></p></body></html>", subtype="html")
    ics = calendar(calendar_name, [one.event for one in told_alerts],
                   expected={("", one.event["rule"]): one.acts for one in told_alerts}, stamp=at,
                   reminders=settings.reminders)
    message.add_attachment(ics, maintype="text", subtype="calendar", params={"method": "PUBLISH"}, filename=filename)
    message["Content-Language"] = "pt-BR"  # after the content: setting it clears the Content-* headers
    return message


def compose(alert: Mapping[str, Any], *, to: str, subscription_id: str, settings: MailSettings,
            acts: list[str], municipality_name: str | None = None) -> EmailMessage:
    """The message of one case alert to one subscription's address."""
    one = told(alert, settings, acts, municipality_name)
    message = _message(subject=f"{one.state}: {alert['case_number']} — {one.act} ({one.article})", to=to,
                       settings=settings, ident=message_id(alert["alert_id"], subscription_id),
                       at=datetime.fromisoformat(alert["raised_at"]), heading=f"{one.state}.", told_alerts=[one],
                       calendar_name=f"Prazo {alert['case_number']}", filename=f"prazo-{alert['case_number']}.ics")
    message["X-Tramita-Alert"] = alert["alert_id"]
    return message


def compose_digest(alerts: list[tuple[Mapping[str, Any], list[str], str | None]], *, to: str, subscription_id: str,
                   settings: MailSettings, on: date, at: datetime) -> EmailMessage:
    """A daily digest: every alert of `alerts` ((fields, acts, municipality name), oldest first) in one message,
    their deadlines in one .ics; its id is the subscription's and the day's, the same on every try."""
    _ = settings.gettext
    said = [told(alert, settings, acts, name) for alert, acts, name in alerts]
    heading = _("Daily digest of %(day)s: %(count)s alert(s) of your body") % {"day": day(on), "count": len(said)}
    return _message(subject=heading, to=to, settings=settings, ident=message_id(f"digest:{on.isoformat()}",
                                                                                subscription_id),
                    at=at, heading=heading, told_alerts=said, calendar_name=f"Prazos {day(on)}",
                    filename=f"prazos-{on.isoformat()}.ics")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def send_smtp(message: EmailMessage, settings: MailSettings) -> None:
    """Hand the message to the SMTP server; DeliveryError unless it accepted it for every recipient."""
    parts = urlsplit(settings.smtp_url or "")
    host = parts.hostname or ""
    password = (settings.password_file.read_text(encoding="utf-8").strip()
                if settings.password_file is not None else None)
    context = ssl.create_default_context(cafile=str(settings.ca_file) if settings.ca_file else None)
    try:
        if parts.scheme == "smtps":
            client: smtplib.SMTP = smtplib.SMTP_SSL(host, parts.port or 465, timeout=settings.timeout,
                                                    context=context)
        else:
            client = smtplib.SMTP(host, parts.port or 587, timeout=settings.timeout)
        with client:
            client.ehlo()
            if parts.scheme == "smtp":
                if client.has_extn("starttls"):
                    client.starttls(context=context)
                    client.ehlo()
                elif settings.user or not _loopback(host):
                    raise DeliveryError(f"{host} does not offer STARTTLS: nothing sent in clear")
            if settings.user:
                client.login(settings.user, password or "")
            refused = client.send_message(message)
    except smtplib.SMTPException as error:
        raise DeliveryError(f"SMTP {type(error).__name__}: {error}") from None
    except OSError as error:
        raise DeliveryError(f"SMTP {host}: {type(error).__name__}: {error}") from None
    if refused:
        raise DeliveryError(f"SMTP refused {', '.join(refused)}")


def write_maildir(message: EmailMessage, directory: Path) -> None:
    """Add the message to the maildir (created if missing), unless one with its Message-ID is there already."""
    box = mailbox.Maildir(directory, create=True)
    wanted = message["Message-ID"]
    if any(kept["Message-ID"] == wanted for kept in box):
        return
    box.add(message)


@dataclass
class MailSender:
    """The transport of one e-mail subscription's worker (infrastructure/webhook.py's `post`): the alert's JSON in,
    the message composed and sent to `to`."""

    settings: MailSettings
    to: str
    subscription_id: str
    acts_for: Callable[[Mapping[str, Any]], list[str]] = lambda alert: []
    municipality_name: Callable[[str], str | None] = lambda code: None

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> None:
        sent = json.loads(body)
        if "digest" in sent:  # {"digest": day, "at": moment, "alerts": [fields, ...]}
            message = compose_digest([(alert, self.acts_for(alert), self._named(alert)) for alert in sent["alerts"]],
                                     to=self.to, subscription_id=self.subscription_id, settings=self.settings,
                                     on=date.fromisoformat(sent["digest"]), at=datetime.fromisoformat(sent["at"]))
        else:
            message = compose(sent, to=self.to, subscription_id=self.subscription_id, settings=self.settings,
                              acts=self.acts_for(sent), municipality_name=self._named(sent))
        if self.settings.smtp_url:
            send_smtp(message, self.settings)
        else:
            write_maildir(message, self.settings.maildir)

    def _named(self, alert: Mapping[str, Any]) -> str | None:
        return self.municipality_name(alert["municipality"]) if alert.get("municipality") else None


def mail_url(address: str) -> str:
    """What an e-mail worker names as its address (its log lines, never sent anywhere)."""
    return f"mailto:{address}"


__all__ = ["MailSender", "MailSettings", "check_smtp_url", "compose", "compose_digest", "mail_url", "message_id",
           "send_smtp", "write_maildir"]
