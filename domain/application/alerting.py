"""Compliance alerts: each deadline's and breach's alerts recorded at most once, and their deliveries."""

from __future__ import annotations

from contextvars import ContextVar
from uuid import UUID

from eventsourcing.persistence import IntegrityError

from domain.acts import Actor
from domain.alerts import Alert, alert_due
from domain.application.base import ApplicationBase
from domain.errors import AlertNotFoundError, StoredEventsAlteredError

#: Who records the alarm of an altered store (the audit's system role, as the audit log's own alarms).
STORE_ALARM_ACTOR = Actor("tramita-audit", "scheduler")
#: Set while the alarm is being recorded: an alteration met on the way is not alarmed again from inside.
_alarming: ContextVar[bool] = ContextVar("tramita_alarming", default=False)


class Alerting(ApplicationBase):
    """Compliance alerts: each deadline's and breach's alerts recorded at most once, and their deliveries."""

    # ------------------------------------------------------------------ alerts (docs/law/deadlines.md)

    def raise_alerts(self, case_ref: str | UUID, actor: Actor, *, thresholds: tuple[int, ...]) -> list[UUID]:
        """docs/law/deadlines.md and Art. 10 §1: record the alerts the case's open deadlines and its breaches call
        for today; each at most once.

        `today` is the alert clock's day in Rio Branco. An alert already recorded (by an earlier scan, a
        restarted or a second scheduler) meets its deterministic id and is not recorded again.
        """
        with self.pool.borrowing():  # the case is read, not changed: borrowed rather than copied
            case = self.get_case(case_ref)
            ctx = self.system_context(actor)
            due = [Alert.raise_for(ctx, case_id=case.id, case_number=case.number, key=key, deadline=deadline,
                                   kind=kind)
                   for key, deadline in case.standing_deadlines().items()
                   if (kind := alert_due(deadline, ctx.today, thresholds)) is not None]
            due += [Alert.raise_breach(ctx, case_id=case.id, case_number=case.number, breach=breach,  # Art. 10 §1
                                       answer=case.deadlines.get(f"requisition-answer:{breach['requisition']}"))
                    for breach in case.breaches]
            return [alert.id for alert in due if self._saved_once(alert)]

    def _saved_once(self, alert: Alert) -> bool:
        """Save the alert unless its id is already recorded (by an earlier scan, or another scheduler meanwhile)."""
        if self._get_or_none(alert.id) is not None:
            return False
        try:
            self.save(alert)
        except IntegrityError:  # another scheduler recorded it between the look and the save
            return False
        return True

    def raise_system_alert(self, actor: Actor, *, kind: str, subject: str, message: str) -> UUID | None:
        """Record a system alert (not tied to a case, domain/alerts.py) once per (kind, subject); its id, or None
        when it was already recorded."""
        alert = Alert.raise_system(self.system_context(actor), kind=kind, subject=subject, message=message)
        return alert.id if self._saved_once(alert) else None

    def store_altered(self, error: StoredEventsAlteredError) -> None:
        """The tamper alarm for an aggregate the store contradicts (an act or a read refused on it): a system alert
        of kind `tamper-alarm`, recorded once per aggregate and event, which the scheduler logs and sends on. An
        alert that cannot be recorded (the store refusing it too) leaves the refusal to say what was found."""
        if _alarming.get():
            return
        token = _alarming.set(True)
        try:
            # the statute as last read: the altered aggregate may be its amendments, which every new read checks
            ctx = self._context_at(STORE_ALARM_ACTOR, self.clock(), None, statute=self.last_read_statute())
            self._saved_once(Alert.raise_system(ctx, kind="tamper-alarm",
                                                subject=f"stored-events:{error.aggregate_id}:{error.version}",
                                                message=str(error)[:4000]))
        except Exception:  # noqa: BLE001, S110 - the refusal raised next (logged by its caller) names the damage
            pass
        finally:
            _alarming.reset(token)

    def get_alert(self, alert_id: UUID) -> Alert:
        alert = self._get_or_none(alert_id)
        if not isinstance(alert, Alert):
            raise AlertNotFoundError(f"no alert {alert_id}")
        return alert

    def record_alert_delivery(self, alert_id: UUID, actor: Actor, *, tries: int, error: str | None = None,
                              subscription: UUID | str | None = None) -> None:
        """Record how a round of webhook delivery of the alert ended (error None: delivered after `tries`): to the
        operators' webhook, or to the subscription `subscription`'s (domain/subscriptions.py)."""

        def attempt() -> None:
            alert = self.get_alert(alert_id)
            alert.record_delivery(self.system_context(actor), tries=tries, error=error,
                                  subscription=None if subscription is None else str(subscription))
            self.save(alert)

        self._retrying(attempt)
