"""What the projector could not write: each aggregate whose rows a projection could not write is recorded in
`projection_failures` (projection, aggregate, first and last notification, event type, error) until a later batch
writes its rows, and raises one system alert (`projection-failure`, once per projection and aggregate).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from domain.acts import Actor
from projections.rows import storable, storable_row
from projections.schema import PROJECTIONS
from infrastructure.store import Cursor, Store

if TYPE_CHECKING:
    from domain.application import Tramita

#: Rows deleted per statement when failures are forgotten.
DELETE_CHUNK = 500
#: Who records the projector's own alerts (system alerts, domain/alerts.py).
PROJECTOR = Actor("tramita-projector", "projector")
#: The system alert a projection raises for an aggregate whose rows it cannot write.
PROJECTION_FAILURE = "projection-failure"
#: Characters of an error's text kept in a failure record and its alert.
ERROR_TEXT = 1000


@dataclass
class Failure:
    """An aggregate whose rows could not be written: from which notification on (and up to which), the type of
    that event, and why."""

    aggregate_id: str
    aggregate_kind: str
    notification_id: int
    topic: str
    error: str
    last_notification_id: int = 0

    def __post_init__(self) -> None:
        self.last_notification_id = max(self.last_notification_id, self.notification_id)

    def message(self, projection: str) -> str:
        return storable(f"the {projection} projection cannot write the rows of {self.aggregate_kind} "
                        f"{self.aggregate_id} from notification {self.notification_id} ({self.topic}): {self.error}; "
                        "they stay as of its last event before it, and every other row stays current")


def describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:ERROR_TEXT]


def failures(store: Store, names: Iterable[str] = PROJECTIONS) -> list[dict[str, Any]]:
    """The aggregates the named (live) projections could not write, in the order they failed: projection,
    aggregate_id, aggregate_kind, notification_id (the first event that failed), last_notification_id, topic (that
    event's type) and error. Empty before `tramita migrate` has created the table."""
    names = list(names)
    if not names or not store.table_exists("projection_failures"):
        return []
    return store.query_dicts(f"SELECT * FROM projection_failures WHERE projection IN ({', '.join('?' * len(names))}) "
                             "ORDER BY notification_id, projection", names)


def settle(tx: Cursor, target: Any, wanted: list[Any], failed: list[Failure]) -> None:
    """Record the aggregates that failed; forget those of earlier failures whose rows are now written."""
    failing = {failure.aggregate_id for failure in failed}
    resolved = [aggregate_id for aggregate_id in (str(t.aggregate.id) for t in wanted)
                if aggregate_id in target.failing and aggregate_id not in failing]
    for i in range(0, len(resolved), DELETE_CHUNK):
        chunk = resolved[i:i + DELETE_CHUNK]
        tx.execute(f"DELETE FROM projection_failures WHERE projection = ? "
                   f"AND aggregate_id IN ({', '.join('?' * len(chunk))})", (target.tracking_name, *chunk))
    tx.executemany(
        "INSERT INTO projection_failures (projection, aggregate_id, aggregate_kind, notification_id, "
        "last_notification_id, topic, error) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (projection, aggregate_id) "
        "DO UPDATE SET last_notification_id = excluded.last_notification_id, topic = excluded.topic, "
        "error = excluded.error",
        [storable_row((target.tracking_name, f.aggregate_id, f.aggregate_kind, f.notification_id,
                       f.last_notification_id, f.topic, f.error)) for f in failed])
    target.failing = (target.failing - set(resolved)) | failing


class FailureAlerts:
    """Raises the system alert of each failure recorded, once; those a stopped process did not get to raise are
    read back from the failures table by the next projector."""

    def __init__(self, app: Tramita, read_failures: Callable[[], list[dict[str, Any]]]) -> None:
        self.app, self.read_failures = app, read_failures
        self.read = False
        self._unalerted: dict[tuple[str, str], Failure] | None = None  # None: not yet read from the table

    def raise_for(self, recorded: list[tuple[str, Failure]], log: Callable[[str], None]) -> None:
        """Raise the system alert of each failure recorded (once per projection and aggregate: an alert already
        recorded is not recorded again). Those not raised yet, the process having stopped first, are found in the
        failures table by the next projector."""
        if self._unalerted is None:
            self.read = True
            self._unalerted = {(row["projection"], row["aggregate_id"]): Failure(
                row["aggregate_id"], row["aggregate_kind"], int(row["notification_id"]), row["topic"], row["error"],
                int(row["last_notification_id"])) for row in self.read_failures()}
        for projection, failure in recorded:
            log(f"projector: {failure.message(projection)}")
            self._unalerted[(projection, failure.aggregate_id)] = failure
        while self._unalerted:
            (projection, aggregate_id), failure = next(iter(self._unalerted.items()))
            self.app.raise_system_alert(PROJECTOR, kind=PROJECTION_FAILURE, subject=f"{projection}:{aggregate_id}",
                                        message=failure.message(projection))
            del self._unalerted[(projection, aggregate_id)]
