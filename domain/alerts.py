"""docs/law/deadlines.md, "When a deadline is missed": an alert that a statutory deadline is about to be, or has
been, missed; and system alerts.

An alert is its own aggregate, one per (case, deadline, kind), with an id derived from those three: recording
it twice, by a repeated scan, a restarted scheduler or a second one, meets the existing id and records nothing.
The judgement of which alert is due on a day is made here, from the case's deadline as recorded and the legal
date of the scan (the alert clock's day in Rio Branco); applying the event only assigns.

A *system alert* (`Alert.raise_system`) tells the operators about the system itself rather than a case deadline
(a projection that cannot write an aggregate's rows, a tampered log): a `kind` (a slug the raising component owns,
e.g. `projection-failure`), a `subject` (what it is about) and a `message`; its id derives from (kind, subject), so
it is recorded once however often it is raised. Its case fields (case, deadline, rule, who, due date) are None, and
it names no article. It goes through the same alerts table, `/alerts`, scheduler log and webhook as any alert.
"""

from __future__ import annotations

import re
import types
from datetime import date, datetime
from hashlib import sha1
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from domain.acts import ActContext, ChainedAggregate
from domain.chain import added_by_upcast
from domain.errors import InvalidActError, Sentence

ALERTS_NAMESPACE = uuid5(NAMESPACE_URL, "urn:tramita:alerts")
#: System alerts have ids of their own, derived from (kind, subject): never one of a case's alerts.
SYSTEM_ALERTS_NAMESPACE = uuid5(NAMESPACE_URL, "urn:tramita:system-alerts")
#: A system alert's kind: a lowercase slug (its id joins kind and subject with a colon).
SYSTEM_KIND = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_ALERTS_NAMESPACE, _SYSTEM_ALERTS_NAMESPACE = ALERTS_NAMESPACE.bytes, SYSTEM_ALERTS_NAMESPACE.bytes
#: A name-based UUID's version (5) and variant bits (RFC 9562, section 5.5), set on a SHA-1's first 16 bytes.
_UUID5_CLEARED, _UUID5_SET = ~((0xF000 << 64) | (0xC000 << 48)), (5 << 76) | (0x8000 << 48)


def _uuid5(namespace: bytes, name: str) -> UUID:
    """`uuid.uuid5(namespace, name)`, the same UUID in half the time: without the import, the namespace's bytes
    and the checks that `uuid5` goes through on every call. A projector's batch works out the `missed` alert id of
    every open deadline of every case it writes (projections/rows.py)."""
    digest = sha1(namespace + name.encode("utf-8")).digest()
    return UUID(int=int.from_bytes(digest[:16], "big") & _UUID5_CLEARED | _UUID5_SET)

MISSED = "missed"
#: Art. 10 §1 (docs/law/opening.md): a requisition refused is recorded as a breach and raises an alert (once per
#: requisition).
BREACH = "breach"
BREACH_ARTICLE = "art-10-par-1"
#: The delivery record of an alert sent to the webhook (None: no delivery recorded yet).
DELIVERED, FAILED = "delivered", "failed"


def _delivered_to(alert: Alert, subscription: str | None, outcome: str, tries: int, error: str | None) -> None:
    """A round's outcome: on the alert itself for the operators' webhook, in `deliveries` for a subscription's."""
    if subscription is None:
        alert.delivery, alert.delivery_tries = outcome, alert.delivery_tries + tries
        if error is not None:
            alert.delivery_error = error
        return
    before = alert.deliveries.get(subscription, {"tries": 0, "error": None})
    alert.deliveries = {**alert.deliveries, subscription: {
        "delivery": outcome, "tries": before["tries"] + tries,
        "error": error if error is not None else before["error"]}}


def due_soon(days: int) -> str:
    """The kind of an alert raised `days` or fewer days before the due day."""
    return f"due-in-{days}-day{'' if days == 1 else 's'}"


def alert_due(deadline: dict[str, Any], today: date, thresholds: tuple[int, ...]) -> str | None:
    """docs/law/deadlines.md, "When a deadline is missed": which alert, if any, a deadline calls for on the legal
    day `today`.

    A deadline is missed once its last day has ended (the day after it, in Rio Branco) while no closing act is
    recorded, or as soon as an act has recorded it missed (Art. 26 par. ún.: the personnel documents not sent by
    the installation, which is their due day); before that it is due soon when at most a threshold's days remain
    (the smallest such threshold). A closed deadline, on time or late, calls for none; nor does one whose due date
    is not yet known.
    """
    if deadline["closed_by"] is not None or deadline["due_on"] is None:
        return None
    left = (deadline["due_on"] - today).days
    if left < 0 or deadline.get("status") == MISSED:
        return MISSED
    near = [t for t in thresholds if left <= t]
    return due_soon(min(near)) if near else None


class Alert(ChainedAggregate):
    """A compliance alert on one statutory deadline of one case, or a system alert (no case)."""

    #: What a system alert is about and what it says (None on a case's alert).
    subject: str | None = None
    message: str | None = None
    #: Each subscription's delivery record: {subscription id: {delivery, tries, error}} (never changed in place).
    deliveries = types.MappingProxyType({})

    @staticmethod
    def id_for(case_id: UUID | str, deadline: str, kind: str) -> UUID:
        return _uuid5(_ALERTS_NAMESPACE, f"{case_id}:{deadline}:{kind}")

    @staticmethod
    def system_id_for(kind: str, subject: str) -> UUID:
        return _uuid5(_SYSTEM_ALERTS_NAMESPACE, f"{kind}:{subject}")

    class Raised(ChainedAggregate.Created):
        """The deadline named is due soon or missed: who must act, under which article, by which day."""

        case_id: str
        case_number: str
        deadline: str
        kind: str
        rule: str
        who: str
        municipality: str | None
        due_on: date
        days_overdue: int
        raised_at: datetime

        def assign(self, alert: Alert) -> None:
            alert.case_id, alert.case_number, alert.deadline = self.case_id, self.case_number, self.deadline
            alert.kind, alert.rule, alert.article, alert.who = self.kind, self.rule, self.article, self.who
            alert.municipality, alert.due_on, alert.days_overdue = self.municipality, self.due_on, self.days_overdue
            alert.raised_at, alert.raised_on = self.raised_at, self.occurred_on
            alert.delivery, alert.delivery_tries, alert.delivery_error = None, 0, None
            alert.deliveries = {}

    class SystemRaised(ChainedAggregate.Created):
        """The system tells its operators something not tied to a case: a kind, its subject, and what happened."""

        kind: str
        subject: str
        message: str
        raised_at: datetime

        def assign(self, alert: Alert) -> None:
            alert.case_id = alert.case_number = alert.deadline = alert.rule = alert.who = None
            alert.municipality = alert.due_on = alert.days_overdue = None
            alert.kind, alert.subject = self.kind, self.subject
            alert.message, alert.article = self.message, self.article
            alert.raised_at, alert.raised_on = self.raised_at, self.occurred_on
            alert.delivery, alert.delivery_tries, alert.delivery_error = None, 0, None
            alert.deliveries = {}

    class Delivered(ChainedAggregate.Event):
        """The alert reached the operators' webhook (`subscription` None) or a subscription's, after `tries`
        attempts of this round of delivery.

        Version 2 added `subscription`; a delivery recorded before (version 1) was to the operators' webhook."""

        class_version = 2

        tries: int
        subscription: str | None

        def assign(self, alert: Alert) -> None:
            _delivered_to(alert, self.subscription, DELIVERED, self.tries, None)

        @staticmethod
        def upcast_v1_v2(state: dict) -> None:
            added_by_upcast(state, subscription=None)

    class DeliveryFailed(ChainedAggregate.Event):
        """Every one of `tries` attempts to reach the webhook (the operators', or a subscription's) failed; the
        alert itself stands, undelivered. Version 2 added `subscription`, as on `Delivered`."""

        class_version = 2

        tries: int
        last_error: str
        subscription: str | None

        def assign(self, alert: Alert) -> None:
            _delivered_to(alert, self.subscription, FAILED, self.tries, self.last_error)

        @staticmethod
        def upcast_v1_v2(state: dict) -> None:
            added_by_upcast(state, subscription=None)

    @classmethod
    def raise_for(cls, ctx: ActContext, *, case_id: UUID, case_number: str, key: str, deadline: dict[str, Any],
                  kind: str) -> Alert:
        """Record the alert `kind` on the deadline `key` (already judged due by `alert_due`)."""
        return cls._start(
            cls.Raised, ctx, id=cls.id_for(case_id, key, kind), article=deadline["article"],
            case_id=str(case_id), case_number=case_number, deadline=key, kind=kind, rule=deadline["rule"],
            who=deadline["who"], municipality=deadline["municipality"], due_on=deadline["due_on"],
            days_overdue=max(0, (ctx.today - deadline["due_on"]).days), raised_at=ctx.recorded_at,
        )

    @classmethod
    def raise_breach(cls, ctx: ActContext, *, case_id: UUID, case_number: str, breach: dict[str, Any],
                     answer: dict[str, Any] | None) -> Alert:
        """Art. 10 §1: the body that refused a requisition breached it; the alert names it and the answer's due day.

        The alert is keyed on the requisition's answer deadline (`requisition-answer:<id>`), which the refusal
        leaves open; when the requisition was refused before its receipt opened that deadline, the due day shown
        is the refusal's date.
        """
        key = f"requisition-answer:{breach['requisition']}"
        due_on = (answer or {}).get("due_on") or breach["on"]
        return cls._start(
            cls.Raised, ctx, id=cls.id_for(case_id, key, BREACH), article=BREACH_ARTICLE, case_id=str(case_id),
            case_number=case_number, deadline=key, kind=BREACH, rule="requisition-answer", who=breach["body"],
            municipality=None, due_on=due_on, days_overdue=max(0, (ctx.today - due_on).days),
            raised_at=ctx.recorded_at,
        )

    @classmethod
    def raise_system(cls, ctx: ActContext, *, kind: str, subject: str, message: str) -> Alert:
        """Record the system alert `kind` about `subject` (its id derives from both: raised again, it is the same
        alert); `message` says what happened, for the operators."""
        if not SYSTEM_KIND.fullmatch(kind):
            raise InvalidActError("kind", Sentence(
                "%(kind)r is not a system alert kind (a lowercase slug, e.g. projection-failure)",
                kind=kind))
        if not subject:
            raise InvalidActError("subject", "a system alert names what it is about")
        return cls._start(cls.SystemRaised, ctx, id=cls.system_id_for(kind, subject), article=None, kind=kind,
                          subject=subject, message=message, raised_at=ctx.recorded_at)

    def record_delivery(self, ctx: ActContext, *, tries: int, error: str | None = None,
                        subscription: str | None = None) -> None:
        """Record how a round of delivery to the operators' webhook (or to the subscription `subscription`'s)
        ended: delivered, or failed with the last error."""
        if error is None:
            self._record(self.Delivered, ctx, article=self.article, tries=tries, subscription=subscription)
        else:
            self._record(self.DeliveryFailed, ctx, article=self.article, tries=tries, last_error=error,
                         subscription=subscription)
