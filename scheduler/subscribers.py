"""Delivery of each alert to every subscription it matches (domain/subscriptions.py), each on its own.

Every webhook or e-mail subscription in force has a `Webhook` of its own (infrastructure/webhook.py): its queue,
its worker thread, its tries, pauses and timeouts (an e-mail's sends through `infrastructure.mail.MailSender`:
SMTP, or the maildir with no SMTP server), its delivery record on the alert (`Alert.Delivered` / `DeliveryFailed`
naming the subscription, projected into the `alert_deliveries` table). So a receiver that is slow, answers 500,
redirects, sends a huge answer or never answers holds back only its own queue: the scan only queues, and the
other subscriptions' workers deliver meanwhile. At shutdown all queues are drained at once, within one bound.

The subscriptions are read again at each scan: one made through the API since is served from the next scan on,
one removed (or whose token was revoked) gets nothing more queued and its worker stops once its queue is empty.
A subscription receives the case alerts raised from its creation on that match its filters; at start-up, and
then on the redelivery schedule (scheduler/config.py), the leader queues again, per subscription, each such alert
no round has delivered to it yet and that is not queued already. Which those are is read from the alert events
(scheduler/pending.py: `Alert.Raised`, and the `Alert.Delivered` / `DeliveryFailed` naming the subscription), never
from the `alert_deliveries` or `alerts` tables, so a row edited or deleted there withholds nothing.

An e-mail subscription with a daily digest gets no message per alert: at the first redelivery at or after the
digest hour (TRAMITA_DIGEST_HOUR, Rio Branco time) the alerts raised before that hour and not yet delivered to it
go in one message, whose round is recorded on each of them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import partial
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from domain.alerts import Alert
from domain.application import LEGAL_TIMEZONE, Tramita
from domain.subscriptions import EMAIL, Subscription, closing_acts, internal_allowed
from infrastructure.mail import MailSender, MailSettings, mail_url
from infrastructure.store import Store
from scheduler.jsonlog import Log, Wording, alert_fields
from scheduler.pending import AlertEvents
from scheduler.scan import SCHEDULER, readable_alert
from infrastructure.webhook import Webhook, post_signed


@dataclass
class Subscribers:
    """The webhooks of the subscriptions in force, one worker each."""

    app: Tramita
    store: Store | None
    """The read models' store: no table of it decides a delivery (kept for the callers that pass it)."""
    log: Log
    tries: int
    backoff_cap: float
    options: dict[str, Any] = field(default_factory=dict)
    """More `Webhook` options (tests: the POST, the sleep, the jitter, the clock)."""
    private_urls: bool = False
    """TRAMITA_SUBSCRIPTION_PRIVATE_URLS: the bodies' subscriptions may reach the deployment's own network."""
    mail: MailSettings = field(default_factory=MailSettings)
    """How the e-mail subscriptions' alerts are sent (scheduler/config.py `load_mail`)."""
    wording: Wording = field(default_factory=Wording)
    """How the alerts' codes are said beside them in the bodies (the scanner's)."""
    workers: dict[str, tuple[Subscription, Webhook]] = field(default_factory=dict)
    retired: list[Webhook] = field(default_factory=list)
    digests: dict[UUID, list[UUID]] = field(default_factory=dict)
    """Each daily digest queued: the alerts it holds, each recorded delivered (or failed) with it."""

    def refresh(self) -> list[Subscription]:
        """Start a worker for each subscription in force not served yet; stop those no longer in force."""
        in_force = {str(s.id): s for s in self.app.delivered_subscriptions()}
        for subscription_id in [s for s in self.workers if s not in in_force]:
            _, webhook = self.workers.pop(subscription_id)
            webhook.finish()
            self.retired.append(webhook)
            self.log("subscription-ended", subscription_id=subscription_id)
        for subscription_id, subscription in in_force.items():
            if subscription_id not in self.workers:
                self.workers[subscription_id] = (subscription, self._webhook(subscription))
        return list(in_force.values())

    def _webhook(self, subscription: Subscription) -> Webhook:
        subscription_id = subscription.id

        def record(alert_id: UUID, tries: int, error: str | None) -> None:
            for held in self.digests.get(alert_id, [alert_id]):  # a digest's round is each of its alerts' round
                self.app.record_alert_delivery(held, SCHEDULER, tries=tries, error=error, subscription=subscription_id)

        options = dict(self.options)
        if subscription.channel == EMAIL:
            sender = MailSender(self.mail, subscription.email, str(subscription_id), acts_for=self._acts_for,
                                municipality_name=self._municipality_name)
            options["post"] = sender.post
            return Webhook(mail_url(subscription.email), record, tries=self.tries,
                           secret=self.app.webhook_secret(subscription), backoff_cap=self.backoff_cap, log=self.log,
                           subscription=str(subscription_id), **options)
        if "post" not in options:  # a body's subscription reaches only public addresses, however its name resolves
            options["post"] = partial(post_signed, public_only=not internal_allowed(
                subscription, private_urls=self.private_urls))
        return Webhook(subscription.url, record, tries=self.tries, secret=self.app.webhook_secret(subscription),
                       backoff_cap=self.backoff_cap, log=self.log, subscription=str(subscription_id), **options)

    def _acts_for(self, alert: dict[str, Any]) -> list[str]:
        """The acts that close the alert's deadline, by the statute's labels in force on the day it was raised."""
        expected = closing_acts(self.app.statute, date.fromisoformat(alert["raised_on"]))
        acts: list[str] = []
        for (_, rule), labels in expected.items():
            if rule == alert["rule"]:
                acts += [label for label in labels if label not in acts]
        return acts

    def _municipality_name(self, code: str) -> str | None:
        try:
            return self.app.municipality(code).name
        except Exception:  # noqa: BLE001 - a mail names the code when the registry cannot name it
            return None

    def submit(self, alert: Alert, fields: dict[str, Any]) -> int:
        """Queue the alert for every subscription it matches that was made before it was raised; how many."""
        queued = 0
        for subscription_id, (subscription, webhook) in self.workers.items():
            if subscription.matches(fields) and alert.raised_at >= subscription.created_at \
                    and not subscription.digest:  # a digest's alerts go together, once a day (`redeliver`)
                webhook.submit(alert.id, {**fields, "subscription_id": subscription_id})
                queued += 1
        return queued

    def redeliver(self, events: AlertEvents) -> int:
        """Queue again, per subscription, each matching alert raised since it was made that no round has delivered
        to it, as the alert `events` tell (the caller's to catch up first); how many."""
        queued = 0
        for subscription_id, (subscription, webhook) in self.workers.items():
            if subscription.digest:
                queued += self._digest(subscription, webhook, events)
                continue
            for alert_id in events.undelivered_to(subscription):
                alert = readable_alert(self.app, alert_id, self.log)
                if alert is not None:
                    fields = alert_fields(alert, self.wording)
                    queued += webhook.submit(alert.id, {**fields, "subscription_id": subscription_id})
        return queued

    def _digest(self, subscription: Subscription, webhook: Webhook, events: AlertEvents) -> int:
        """A digest subscription's alerts raised before the day's digest hour (Rio Branco time) that no round
        delivered to it, queued as one message (1), once the hour has come; a digest that failed is queued again at
        the next redelivery, with the same id (its Message-ID)."""
        now = self.app.clock().astimezone(LEGAL_TIMEZONE)
        cutoff = now.replace(hour=self.mail.digest_hour, minute=0, second=0, microsecond=0)
        if now < cutoff:
            cutoff -= timedelta(days=1)
        held = [alert for alert_id in events.undelivered_to(subscription)
                if (known := events.alerts.get(str(alert_id))) is not None and known.raised_at < cutoff
                and (alert := readable_alert(self.app, alert_id, self.log)) is not None]
        if not held:
            return 0
        digest_id = uuid5(NAMESPACE_URL, f"urn:tramita:digest:{subscription.id}:{cutoff.date().isoformat()}")
        self.digests[digest_id] = [alert.id for alert in held]
        return int(webhook.submit(digest_id, {"digest": cutoff.date().isoformat(), "at": now.isoformat(),
                                              "alerts": [alert_fields(alert, self.wording)
                                                                for alert in held]}))

    def close(self, timeout: float) -> list[str]:
        """Drain every queue at once within `timeout` seconds in all; the subscriptions still busy after it."""
        webhooks = [(sid, w) for sid, (_, w) in self.workers.items()] + [("", w) for w in self.retired]
        for _, webhook in webhooks:
            webhook.finish()
        deadline = time.monotonic() + timeout
        busy = [sid or "(ended)" for sid, webhook in webhooks
                if not webhook.join(max(0.0, deadline - time.monotonic()))]
        self.workers.clear()
        self.retired.clear()
        return busy
