"""The projector: follows the notification log and keeps the read models current, exactly once.

Each batch reads notifications after the lowest tracked position, brings the aggregates they belong to up to
date (kept in a bounded cache; a miss replays the aggregate from the store), and then, in one transaction,
replaces the rows of every aggregate touched and moves each projection's tracking position. The position only
moves if it is still the one the batch started from (and the table generation is the same), so a crash, a second
projector or a rebuild swapped in meanwhile can neither lose a batch nor apply it twice: the batch rolls back
and is read again. Notification ids may have gaps (PostgreSQL): positions are the last id seen, never a count.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.utils import get_topic

from domain.application import Tramita
from projections.rows import KINDS, OWNERS, ROWS
from projections.schema import PROJECTIONS, TRACKING, Projection
from projections.store import Cursor, NotMigratedError, Store

#: Notifications read per batch (one transaction each).
BATCH_SIZE = 500
#: Aggregates kept in memory between batches; a miss replays the aggregate from the store.
CACHE_SIZE = 2000
#: Rows deleted per statement when an aggregate's rows are replaced.
DELETE_CHUNK = 500

#: Batches read again in a row when the positions moved under them, before giving up.
CONFLICT_RETRIES = 5

REBUILD_SUFFIX = "__rebuild"


class TrackingConflict(Exception):
    """A projection's position or table generation changed under the batch; it was rolled back."""


@dataclass
class Target:
    """One projection being written: its live or side-by-side tables, and where it has got to."""

    projection: Projection
    tracking_name: str
    suffix: str
    position: int = 0
    token: str = ""

    def physical(self, table: str) -> str:
        return f"{table}{self.suffix}"


@dataclass
class Batch:
    count: int
    end: int
    dirty: dict[str, dict[UUID, Any]]


class Projector:
    """Keeps some projections (default: all) current from the application's notification log."""

    def __init__(self, app: Tramita, store: Store, *, names: Iterable[str] | None = None,
                 batch_size: int = BATCH_SIZE, cache_size: int = CACHE_SIZE) -> None:
        self.app, self.store = app, store
        self.names = list(names) if names is not None else list(PROJECTIONS)
        unknown = [n for n in self.names if n not in PROJECTIONS]
        if unknown:
            raise ValueError(f"unknown projection {', '.join(unknown)} (known: {', '.join(PROJECTIONS)})")
        self.batch_size, self.cache_size = batch_size, cache_size
        self._cache: OrderedDict[UUID, Any] = OrderedDict()
        self._kinds = {get_topic(cls): kind for cls, kind in KINDS.items()}

    # ------------------------------------------------------------------ tables

    def migrate(self) -> list[str]:
        """Create the tracking table and any projection's missing tables; return the projections created."""
        created = []
        with self.store.transaction() as tx:
            tx.execute(TRACKING)
            tracked = {name for name, in tx.execute("SELECT projection FROM projection_tracking").fetchall()}
            for name in self.names:
                if name in tracked:
                    continue
                token = secrets.token_hex(4)
                for table in PROJECTIONS[name].tables:
                    tx.execute(f"DROP TABLE IF EXISTS {table.name}")
                    for statement in table.ddl(table.name, token):
                        tx.execute(statement)
                tx.execute("INSERT INTO projection_tracking (projection, position, token) VALUES (?, 0, ?)",
                           (name, token))
                created.append(name)
        return created

    def positions(self) -> dict[str, int]:
        rows = self.store.query("SELECT projection, position FROM projection_tracking")
        return {name: int(position) for name, position in rows if name in self.names}

    def _targets(self, suffix: str = "") -> list[Target]:
        if not self.store.table_exists("projection_tracking"):
            raise NotMigratedError("the projections' tables do not exist: run `tramita migrate` first")
        tracked = {name: (int(position), token) for name, position, token in
                   self.store.query("SELECT projection, position, token FROM projection_tracking")}
        targets = []
        for name in self.names:
            tracking_name = name + suffix
            if tracking_name not in tracked:
                raise NotMigratedError(f"projection {tracking_name} has no tables: run `tramita migrate` first")
            position, token = tracked[tracking_name]
            targets.append(Target(PROJECTIONS[name], tracking_name, suffix, position, token))
        return targets

    # ------------------------------------------------------------------ following the log

    def run_once(self) -> int:
        """Process one batch; return the number of notifications it covered (0: caught up).

        A batch that meets a moved position (another projector, a rebuild swapped in) is rolled back and read
        again from the positions now recorded.
        """
        for _ in range(CONFLICT_RETRIES):
            targets = self._targets()
            try:
                batch = self._collect(targets)
                if batch.count:
                    with self.store.transaction() as tx:
                        self._commit(tx, targets, batch)
                return batch.count
            except TrackingConflict:
                self._cache.clear()
            except BaseException:
                self._cache.clear()
                raise
        raise TrackingConflict(f"the tracking positions moved under {CONFLICT_RETRIES} batches in a row")

    def run(self, stop: threading.Event, *, poll_seconds: float = 0.5,
            wait: Callable[[float], None] | None = None) -> None:
        """Follow the log until `stop` is set; a batch in progress finishes (or rolls back) first."""
        wait = wait or stop.wait
        while not stop.is_set():
            if self.run_once() == 0 and not stop.is_set():
                wait(poll_seconds)

    def catch_up(self) -> int:
        """Process batches until the log is exhausted; return the notifications covered."""
        total = 0
        while (done := self.run_once()) > 0:
            total += done
        return total

    def _collect(self, targets: Sequence[Target]) -> Batch:
        """Read the next notifications and bring their aggregates up to date (no write yet)."""
        start = min(t.position for t in targets)
        notifications = self.app.recorder.select_notifications(start, self.batch_size, inclusive_of_start=False)
        dirty: dict[str, dict[UUID, Any]] = {t.tracking_name: {} for t in targets}
        for notification in notifications:
            kind = self._kinds.get(notification.topic.rsplit(".", 1)[0])
            if kind is None:
                continue
            aggregate = self._advance(notification)
            for target in targets:
                if notification.id > target.position and kind in target.projection.aggregates:
                    dirty[target.tracking_name][aggregate.id] = aggregate
        return Batch(len(notifications), notifications[-1].id if notifications else start, dirty)

    def _commit(self, tx: Cursor, targets: Sequence[Target], batch: Batch) -> None:
        """Move each position from where the batch started to its end, and write its rows, in `tx`."""
        for target in targets:
            end = max(batch.end, target.position)
            moved = tx.execute("UPDATE projection_tracking SET position = ? "
                               "WHERE projection = ? AND position = ? AND token = ?",
                               (end, target.tracking_name, target.position, target.token))
            if moved.rowcount != 1:
                raise TrackingConflict(target.tracking_name)
            self._write(tx, target, list(batch.dirty[target.tracking_name].values()))
            target.position = end

    def _batch(self, tx: Cursor, targets: Sequence[Target]) -> int:
        batch = self._collect(targets)
        if batch.count:
            self._commit(tx, targets, batch)
        return batch.count

    def _advance(self, notification: Any) -> Any:
        """The notification's aggregate, brought up to (at least) the notification's version."""
        aggregate_id, version = notification.originator_id, notification.originator_version
        aggregate = self._cache.get(aggregate_id)
        if aggregate is None or aggregate.version < version:
            if aggregate is not None and aggregate.version == version - 1 or aggregate is None and version == 1:
                aggregate = self.app.mapper.to_domain_event(notification).mutate(aggregate)
            else:
                aggregate = self.app.repository.get(aggregate_id, version=version)
        self._cache[aggregate_id] = aggregate
        self._cache.move_to_end(aggregate_id)
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return aggregate

    def _write(self, tx: Cursor, target: Target, aggregates: list[Any]) -> None:
        """Replace every table row of the given aggregates with the rows of their current state."""
        if not aggregates:
            return
        for table in target.projection.tables:
            physical = target.physical(table.name)
            owners = [OWNERS[KINDS[type(a)]](a) for a in aggregates]
            for i in range(0, len(owners), DELETE_CHUNK):
                chunk = owners[i:i + DELETE_CHUNK]
                tx.execute(f"DELETE FROM {physical} WHERE {table.owner} IN ({', '.join('?' * len(chunk))})", chunk)
            rows = [row for a in aggregates for row in ROWS[table.name](a)]
            columns = table.column_names
            tx.executemany(f"INSERT INTO {physical} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                           rows)

    # ------------------------------------------------------------------ rebuild

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Rebuild the projections from the first event beside the live tables, then swap them in.

        The live tables stay readable (and the live projector keeps writing them) until the new ones are
        complete; the swap, with a last catch-up, is one transaction. Returns the notifications read.
        """
        token = secrets.token_hex(4)
        with self.store.transaction() as tx:
            tx.execute(TRACKING)
            for name in self.names:
                for table in PROJECTIONS[name].tables:
                    tx.execute(f"DROP TABLE IF EXISTS {table.name}{REBUILD_SUFFIX}")
                    for statement in table.ddl(f"{table.name}{REBUILD_SUFFIX}", token):
                        tx.execute(statement)
                tx.execute("DELETE FROM projection_tracking WHERE projection = ?", (name + REBUILD_SUFFIX,))
                tx.execute("INSERT INTO projection_tracking (projection, position, token) VALUES (?, 0, ?)",
                           (name + REBUILD_SUFFIX, token))
        builder = Projector(self.app, self.store, names=self.names, batch_size=self.batch_size,
                            cache_size=self.cache_size)
        total = self.app.recorder.max_notification_id() or 0
        targets = builder._targets(REBUILD_SUFFIX)
        done = 0
        while True:
            batch = builder._collect(targets)
            if batch.count == 0:
                break
            with self.store.transaction() as tx:
                builder._commit(tx, targets, batch)
            covered = batch.count
            done += covered
            if progress:
                progress(targets[0].position, max(total, targets[0].position))
        with self.store.transaction() as tx:
            while (covered := builder._batch(tx, targets)) > 0:
                done += covered
            for target in targets:
                for table in target.projection.tables:
                    tx.execute(f"DROP TABLE IF EXISTS {table.name}")
                    tx.execute(f"ALTER TABLE {table.name}{REBUILD_SUFFIX} RENAME TO {table.name}")
                name = target.projection.name
                tx.execute("DELETE FROM projection_tracking WHERE projection IN (?, ?)", (name, target.tracking_name))
                tx.execute("INSERT INTO projection_tracking (projection, position, token) VALUES (?, ?, ?)",
                           (name, target.position, token))
        if progress:
            progress(targets[0].position if targets else 0, max(total, targets[0].position if targets else 0))
        self._cache.clear()
        return done


def new_events_waiter(app: Tramita, store: Store, stop: threading.Event) -> Callable[[float], None]:
    """How the projector waits for new events: on PostgreSQL it listens to the channel the event store notifies
    on every insert (woken at once, polling as a fallback); elsewhere it sleeps for the poll interval."""
    channel = getattr(app.recorder, "channel_name", None)
    if store.dialect != "postgresql" or channel is None:
        return stop.wait
    import psycopg
    from psycopg import sql

    listener = psycopg.connect(autocommit=True, application_name="tramita-projector-listen",
                               **store.conninfo)  # type: ignore[attr-defined]
    listener.execute(sql.SQL("LISTEN {0}").format(sql.Identifier(channel)))

    def wait(seconds: float) -> None:
        for _ in listener.notifies(timeout=seconds, stop_after=1):
            pass

    return wait
