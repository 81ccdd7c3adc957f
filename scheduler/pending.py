"""What is left to deliver, decided from the alert events alone, never from the `alerts` or `alert_deliveries` tables.

Those tables are read models a database administrator can edit: a row marked `delivered`, or deleted, would
otherwise silence an alert for good. So the scheduler follows the event store's notification log, reading only
the alert events (`Alert.Raised`, `Alert.SystemRaised`, `Alert.Delivered`, `Alert.DeliveryFailed`, selected by
their topics), and keeps in memory, per alert: whether it is a case's or a system alert, when it was raised, the
fields a subscription matches on, and per target (None: the operators' webhook; else a subscription's id) how the
last round of delivery ended. An alert is still to deliver to a target while no round has delivered it there
(none yet, or the last one failed).

The log is followed from the last position read, up to the last notification at the time of reading (so the events
of other aggregates are passed over once, not at every read); a process reads every alert event once, when it
starts. An alert event whose stored state no longer decodes (an edited event, which `tramita verify` names) is
logged as `alert-unreadable` and changes nothing known: a delivery record that cannot be read counts as none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.persistence import PersistenceError
from eventsourcing.utils import get_topic

from domain.alerts import Alert
from domain.application import Tramita
from domain.subscriptions import Subscription
from projections.failures import describe

#: The topics of the alert events. Their classes have never moved (tests/fixtures/v1 holds `domain.alerts:Alert.*`),
#: so the topic each was stored under is its class's topic now.
RAISED, SYSTEM_RAISED = get_topic(Alert.Raised), get_topic(Alert.SystemRaised)
DELIVERED, FAILED = get_topic(Alert.Delivered), get_topic(Alert.DeliveryFailed)
TOPICS = (RAISED, SYSTEM_RAISED, DELIVERED, FAILED)
#: Notifications read at a time.
PAGE = 2000
#: The fields of a case's alert that a subscription's filters read (`Subscription.matches`).
MATCHED = ("case_id", "who", "municipality", "kind")


@dataclass(slots=True)
class Known:
    """One alert as its events tell it."""

    id: UUID
    raised_at: datetime
    fields: dict[str, Any] | None
    """A case's alert's fields that subscriptions match on; None for a system alert."""
    delivered: dict[str | None, bool] = field(default_factory=dict)
    """Per target (None: the operators' webhook; else a subscription's id): did its last round deliver?"""


@dataclass
class AlertEvents:
    """The alert events read so far from the notification log, and what they leave to deliver."""

    app: Tramita
    log: Callable[..., None] = lambda event, **fields: None
    page: int = PAGE
    position: int = 0
    """The last notification id read (every alert event up to it is known)."""
    alerts: dict[str, Known] = field(default_factory=dict)

    def catch_up(self) -> int:
        """Read the alert events recorded since the last read; how many."""
        top = self.app.recorder.max_notification_id() or 0
        read = 0
        while self.position < top:
            batch = self.app.recorder.select_notifications(self.position, self.page, stop=top, topics=TOPICS,
                                                           inclusive_of_start=False)
            for notification in batch:
                self._apply(notification)
            read += len(batch)
            self.position = batch[-1].id if len(batch) == self.page else top
        return read

    def _apply(self, notification: Any) -> None:
        try:
            event = self.app.mapper.to_domain_event(notification)
        except PersistenceError:  # the store's trouble: the caller's to see
            raise
        except Exception as error:  # noqa: BLE001 - an edited event: said, and the rest read (module docstring)
            self.log("alert-unreadable", alert_id=str(notification.originator_id), error=describe(error))
            return
        alert_id = str(event.originator_id)
        if isinstance(event, Alert.Raised):
            self.alerts[alert_id] = Known(event.originator_id, event.raised_at,
                                          {name: getattr(event, name) for name in MATCHED})
        elif isinstance(event, Alert.SystemRaised):
            self.alerts[alert_id] = Known(event.originator_id, event.raised_at, None)
        elif (known := self.alerts.get(alert_id)) is not None:
            known.delivered[event.subscription] = isinstance(event, Alert.Delivered)

    def __contains__(self, alert_id: object) -> bool:
        """Is this alert recorded (as of the last read)?"""
        return str(alert_id) in self.alerts

    def __len__(self) -> int:
        return len(self.alerts)

    def undelivered(self, *, system: bool = False) -> list[UUID]:
        """The alerts whose last round to the operators' webhook did not deliver them (none yet, or failed), oldest
        first; `system`: only system alerts."""
        return _oldest_first(known for known in self.alerts.values()
                             if not known.delivered.get(None) and (not system or known.fields is None))

    def undelivered_to(self, subscription: Subscription) -> list[UUID]:
        """The case alerts matching the subscription, raised at or after it was made, that no round has delivered
        to it yet (none, or the last one failed), oldest first."""
        target, since = str(subscription.id), subscription.created_at
        return _oldest_first(known for known in self.alerts.values()
                             if known.fields is not None and known.raised_at >= since
                             and not known.delivered.get(target) and subscription.matches(known.fields))


def _oldest_first(alerts: Iterable[Known]) -> list[UUID]:
    """Their ids by when they were raised (ties by id)."""
    return [known.id for known in sorted(alerts, key=lambda known: (known.raised_at, known.id))]
