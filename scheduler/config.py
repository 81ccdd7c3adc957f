"""The scheduler's settings: from the environment, overridden by the command line, refused by name when bad.

Thresholds and the cron are product configuration (when to warn and how often to look), not legal numbers:
their defaults live here. The deadlines themselves come from the statute data.

The webhook's tries and backoff cap are bounded (MAX_WEBHOOK_TRIES, MAX_BACKOFF_CAP) so that one receiver that
is down cannot hold the delivery queue for longer than about tries x (timeout + cap) per alert. A webhook URL
needs a secret: every delivery is signed (Standard Webhooks), and the scheduler refuses to start with a URL and no
secret rather than send alerts that anyone able to reach the receiver could forge.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field

from pathlib import Path

from audit.document_limits import DEFAULT_EXPIRY_DAYS, expiry_days_from
from domain.errors import InvalidActError
from domain.subscriptions import check_email, check_url, parse_private_urls
from infrastructure.mail import TIMEOUT as MAIL_TIMEOUT, MailSettings, check_smtp_url

DEFAULT_CRON = "*/15 * * * *"
#: When the audit log signs a checkpoint (hourly, on the hour, Rio Branco time).
DEFAULT_CHECKPOINT_CRON = "0 * * * *"
#: When the alerts a delivery round did not deliver (a receiver down, a record lost) are queued again while the
#: scheduler runs (hourly, at half past), besides once at each start.
DEFAULT_REDELIVERY_CRON = "30 * * * *"
#: When the documents no act cited in time are removed (hourly, at twenty to), so that one is kept at most an hour
#: beyond TRAMITA_DOCUMENT_EXPIRY_DAYS.
DEFAULT_DOCUMENT_EXPIRY_CRON = "40 * * * *"
#: When the read models are checked against the events (daily at 03:15, Rio Branco time), besides once at each start.
DEFAULT_READ_MODEL_CHECK_CRON = "15 3 * * *"
DEFAULT_THRESHOLDS = (5, 1)
DEFAULT_WEBHOOK_TRIES = 5
#: The most POSTs one delivery round may make (TRAMITA_ALERT_WEBHOOK_TRIES above it is refused).
MAX_WEBHOOK_TRIES = 20
#: Seconds the pause between two tries grows to at most (TRAMITA_ALERT_WEBHOOK_BACKOFF_CAP) ...
DEFAULT_BACKOFF_CAP = 60.0
#: ... and the largest cap accepted.
MAX_BACKOFF_CAP = 3600.0
#: Standard Webhooks secrets are `whsec_` and the base64 of 24 to 64 random bytes.
SECRET_PREFIX = "whsec_"
SECRET_BYTES = (24, 64)
#: Seconds a waiting scheduler sleeps between two attempts to take the leadership.
DEFAULT_POLL_LEADERSHIP = 5.0


@dataclass(frozen=True)
class SchedulerConfig:
    database_url: str
    cron: str = DEFAULT_CRON
    thresholds: tuple[int, ...] = DEFAULT_THRESHOLDS
    webhook_url: str | None = None
    webhook_tries: int = DEFAULT_WEBHOOK_TRIES
    poll_leadership: float = DEFAULT_POLL_LEADERSHIP
    checkpoint_cron: str = DEFAULT_CHECKPOINT_CRON
    webhook_secret: str | None = field(default=None, repr=False)
    webhook_backoff_cap: float = DEFAULT_BACKOFF_CAP
    #: TRAMITA_SUBSCRIPTION_PRIVATE_URLS: the bodies' subscriptions may be delivered to the deployment's network.
    subscription_private_urls: bool = False
    redelivery_cron: str = DEFAULT_REDELIVERY_CRON
    read_model_check_cron: str = DEFAULT_READ_MODEL_CHECK_CRON
    document_expiry_cron: str = DEFAULT_DOCUMENT_EXPIRY_CRON
    document_expiry_days: int = DEFAULT_EXPIRY_DAYS
    #: How e-mail subscriptions are sent: TRAMITA_SMTP_URL, or the maildir TRAMITA_MAILDIR (default var/mail).
    mail: MailSettings = field(default_factory=MailSettings)


def parse_thresholds(text: str, source: str) -> tuple[int, ...]:
    """"5,1" -> (5, 1): distinct whole numbers of days, at least one, none negative; `source` names the setting."""
    try:
        days = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"{source}: {text!r} is not a comma-separated list of whole days (e.g. 5,1)") from None
    if any(d < 0 for d in days) or len(set(days)) != len(days):
        raise ValueError(f"{source}: {text!r} must list distinct, non-negative numbers of days (e.g. 5,1)")
    return tuple(sorted(days, reverse=True))


def parse_cron(text: str, source: str) -> str:
    """A five-field crontab line ("*/15 * * * *"), checked by the trigger that will read it."""
    from apscheduler.triggers.cron import CronTrigger

    try:
        CronTrigger.from_crontab(text)
    except ValueError as error:
        raise ValueError(f"{source}: {text!r} is not a crontab line "
                         f"(minute hour day month weekday, e.g. {DEFAULT_CRON!r}): {error}") from None
    return text


def parse_webhook_url(text: str, source: str) -> str | None:
    """An operator's webhook address: checked as a subscription's is (domain/subscriptions.py `check_url`: http(s),
    a host or an IP address, a port from 1 to 65535, no user, password or space), its own network allowed."""
    if not text.strip():
        return None
    try:
        return check_url(text.strip(), private=True)
    except InvalidActError as refused:
        raise ValueError(f"{source}: {text!r} is not an http:// or https:// URL: {refused.message}") from None


def parse_webhook_secret(text: str, source: str) -> str | None:
    """A Standard Webhooks secret: `whsec_` and the base64 of 24 to 64 bytes (None when unset)."""
    if not text.strip():
        return None
    try:
        key = base64.b64decode(text.removeprefix(SECRET_PREFIX), validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not text.startswith(SECRET_PREFIX) or not SECRET_BYTES[0] <= len(key) <= SECRET_BYTES[1]:
        raise ValueError(f"{source}: not a Standard Webhooks secret ({SECRET_PREFIX} and the base64 of "
                         f"{SECRET_BYTES[0]} to {SECRET_BYTES[1]} random bytes; the value is not shown)")
    return text


def parse_positive(text: str, source: str, kind: type = int, maximum: float | None = None) -> float | int:
    try:
        value = kind(text)
    except ValueError:
        value = 0
    if not value > 0:  # also refuses nan
        raise ValueError(f"{source}: {text!r} is not a positive {'whole number' if kind is int else 'number'}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{source}: {text!r} is more than the most accepted, {maximum:g}")
    return value


def load_mail(environ: Mapping[str, str], thresholds: tuple[int, ...] = DEFAULT_THRESHOLDS) -> MailSettings:
    """TRAMITA_SMTP_URL (`smtp://host:port`, STARTTLS, or `smtps://host:port`), TRAMITA_SMTP_USER,
    TRAMITA_SMTP_PASSWORD_FILE (the password, in a file), TRAMITA_SMTP_CA_FILE (certificates to trust for the
    server's, else the system's), TRAMITA_MAIL_FROM, TRAMITA_SMTP_TIMEOUT, TRAMITA_DIGEST_HOUR, TRAMITA_MAILDIR
    (where mail goes with no SMTP URL; default var/mail), TRAMITA_PUBLIC_URL (the case pages' links)."""
    url = (environ.get("TRAMITA_SMTP_URL") or "").strip() or None
    user = (environ.get("TRAMITA_SMTP_USER") or "").strip() or None
    password = (environ.get("TRAMITA_SMTP_PASSWORD_FILE") or "").strip() or None
    if url is not None:
        check_smtp_url(url)
    if user and not password:
        raise ValueError("TRAMITA_SMTP_PASSWORD_FILE: required with TRAMITA_SMTP_USER (a file holding the password)")
    if password and not Path(password).is_file():
        raise ValueError(f"TRAMITA_SMTP_PASSWORD_FILE: {password!r} is not a readable file")
    sender = (environ.get("TRAMITA_MAIL_FROM") or "").strip() or "tramita@localhost"
    try:
        check_email(sender)
    except InvalidActError:
        if sender != "tramita@localhost":
            raise ValueError(f"TRAMITA_MAIL_FROM: {sender[:80]!r} is not one e-mail address") from None
    timeout = environ.get("TRAMITA_SMTP_TIMEOUT")
    hour = (environ.get("TRAMITA_DIGEST_HOUR") or "").strip()
    if hour and not (hour.isdigit() and 0 <= int(hour) <= 23):
        raise ValueError(f"TRAMITA_DIGEST_HOUR: {hour[:20]!r} is not an hour of the day, 0 to 23")
    ca_file = (environ.get("TRAMITA_SMTP_CA_FILE") or "").strip() or None
    if ca_file and not Path(ca_file).is_file():
        raise ValueError(f"TRAMITA_SMTP_CA_FILE: {ca_file!r} is not a readable file")
    return MailSettings(
        smtp_url=url, user=user, password_file=Path(password) if password else None, sender=sender,
        maildir=Path((environ.get("TRAMITA_MAILDIR") or "").strip() or "var/mail"),
        timeout=float(parse_positive(timeout, "TRAMITA_SMTP_TIMEOUT", float, maximum=600)) if timeout else MAIL_TIMEOUT,
        ca_file=Path(ca_file) if ca_file else None,
        digest_hour=int(hour) if hour else 7,
        public_url=(environ.get("TRAMITA_PUBLIC_URL") or "").strip() or "http://127.0.0.1:8000",
        reminders=thresholds)


def load(environ: Mapping[str, str], database_url: str, *, cron: str | None = None,
         thresholds: str | None = None, poll_leadership: str | None = None) -> SchedulerConfig:
    """The settings from `environ` (TRAMITA_SCHEDULER_CRON, TRAMITA_ALERT_THRESHOLDS, TRAMITA_ALERT_WEBHOOK_URL,
    TRAMITA_ALERT_WEBHOOK_SECRET, TRAMITA_ALERT_WEBHOOK_TRIES, TRAMITA_ALERT_WEBHOOK_BACKOFF_CAP,
    TRAMITA_CHECKPOINT_CRON, TRAMITA_REDELIVERY_CRON, TRAMITA_SUBSCRIPTION_PRIVATE_URLS, TRAMITA_DOCUMENT_EXPIRY_CRON,
    TRAMITA_DOCUMENT_EXPIRY_DAYS, and the mail's: `load_mail`), each overridden by its
    command-line option when given."""

    def pick(option: str | None, flag: str, variable: str) -> tuple[str | None, str]:
        if option is not None:
            return option, flag
        return environ.get(variable), variable

    cron_text, cron_source = pick(cron, "--cron", "TRAMITA_SCHEDULER_CRON")
    thresholds_text, thresholds_source = pick(thresholds, "--thresholds", "TRAMITA_ALERT_THRESHOLDS")
    tries_text = environ.get("TRAMITA_ALERT_WEBHOOK_TRIES")
    checkpoint_text = environ.get("TRAMITA_CHECKPOINT_CRON")
    redelivery_text = environ.get("TRAMITA_REDELIVERY_CRON")
    cap_text = environ.get("TRAMITA_ALERT_WEBHOOK_BACKOFF_CAP")
    webhook_url = parse_webhook_url(environ.get("TRAMITA_ALERT_WEBHOOK_URL", ""), "TRAMITA_ALERT_WEBHOOK_URL")
    secret = parse_webhook_secret(environ.get("TRAMITA_ALERT_WEBHOOK_SECRET", ""), "TRAMITA_ALERT_WEBHOOK_SECRET")
    if webhook_url and secret is None:
        raise ValueError("TRAMITA_ALERT_WEBHOOK_SECRET: required with TRAMITA_ALERT_WEBHOOK_URL (every alert is "
                         f"signed; {SECRET_PREFIX} and the base64 of {SECRET_BYTES[1] // 2} random bytes, e.g. from "
                         "`python3 -c \"import base64, secrets; print('whsec_' + "
                         "base64.b64encode(secrets.token_bytes(32)).decode())\"`)")
    chosen = (parse_thresholds(thresholds_text, thresholds_source) if thresholds_text is not None
              else DEFAULT_THRESHOLDS)
    return SchedulerConfig(
        database_url=database_url,
        cron=parse_cron(cron_text, cron_source) if cron_text is not None else DEFAULT_CRON,
        thresholds=chosen,
        mail=load_mail(environ, chosen),
        webhook_url=webhook_url,
        webhook_secret=secret,
        webhook_tries=(int(parse_positive(tries_text, "TRAMITA_ALERT_WEBHOOK_TRIES", maximum=MAX_WEBHOOK_TRIES))
                       if tries_text is not None else DEFAULT_WEBHOOK_TRIES),
        webhook_backoff_cap=(float(parse_positive(cap_text, "TRAMITA_ALERT_WEBHOOK_BACKOFF_CAP", float,
                                                  maximum=MAX_BACKOFF_CAP))
                             if cap_text is not None else DEFAULT_BACKOFF_CAP),
        poll_leadership=(float(parse_positive(poll_leadership, "--poll-leadership", float))
                         if poll_leadership is not None else DEFAULT_POLL_LEADERSHIP),
        checkpoint_cron=(parse_cron(checkpoint_text, "TRAMITA_CHECKPOINT_CRON") if checkpoint_text is not None
                         else DEFAULT_CHECKPOINT_CRON),
        subscription_private_urls=parse_private_urls(environ.get("TRAMITA_SUBSCRIPTION_PRIVATE_URLS")),
        redelivery_cron=(parse_cron(redelivery_text, "TRAMITA_REDELIVERY_CRON") if redelivery_text is not None
                         else DEFAULT_REDELIVERY_CRON),
        read_model_check_cron=parse_cron(environ.get("TRAMITA_READ_MODEL_CHECK_CRON", DEFAULT_READ_MODEL_CHECK_CRON),
                                         "TRAMITA_READ_MODEL_CHECK_CRON"),
        document_expiry_cron=parse_cron(environ.get("TRAMITA_DOCUMENT_EXPIRY_CRON", DEFAULT_DOCUMENT_EXPIRY_CRON),
                                        "TRAMITA_DOCUMENT_EXPIRY_CRON"),
        document_expiry_days=expiry_days_from(environ),
    )
