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

from eventsourcing.utils import get_topic

from audit.log import AuditLog, LogConflict
from domain.application import Tramita
from projections.rows import KINDS, OWNERS, ROWS
from projections.schema import PROJECTIONS, TRACKING, Projection
from projections.store import Cursor, NotMigratedError, Store

#: Notifications read per batch (one transaction each) when following the log.
BATCH_SIZE = 500
#: ... and when rebuilding beside the live tables, where nobody reads the new rows before the swap.
REBUILD_BATCH_SIZE = 5000
#: Aggregates kept in memory between batches; a miss replays the aggregate from the store.
CACHE_SIZE = 2000
#: Rows deleted per statement when an aggregate's rows are replaced.
DELETE_CHUNK = 500

#: Batches failed in a row for a passing reason of the database before the projector gives up.
TRANSIENT_FAILURES = 6
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
class Touched:
    """An aggregate a batch touched: its state at the batch's end, the last notification id that touched it, and
    the id of its first event when that is in the batch."""

    kind: str
    aggregate: Any
    last_id: int
    first_id: int | None


@dataclass
class Batch:
    count: int
    end: int
    touched: dict[int, Touched]


class Projector:
    """Keeps some projections (default: all) current from the application's notification log."""

    def __init__(self, app: Tramita, store: Store, *, names: Iterable[str] | None = None,
                 batch_size: int = BATCH_SIZE, cache_size: int = CACHE_SIZE, audit: bool | None = None) -> None:
        self.app, self.store = app, store
        #: The Merkle log over every event (audit/log.py), kept by the projector that follows the whole log
        #: (by default the one over every projection), one batch before the projections' batch.
        self.audit_log = AuditLog(app, store) if (names is None if audit is None else audit) else None
        self.names = list(names) if names is not None else list(PROJECTIONS)
        unknown = [n for n in self.names if n not in PROJECTIONS]
        if unknown:
            raise ValueError(f"unknown projection {', '.join(unknown)} (known: {', '.join(PROJECTIONS)})")
        self.batch_size, self.cache_size = batch_size, cache_size
        self._cache: OrderedDict[int, Any] = OrderedDict()
        self._last_key: int | None = None
        self._kinds = {get_topic(cls): kind for cls, kind in KINDS.items()}
        self._kind_of_topic: dict[str, str | None] = {}

    # ------------------------------------------------------------------ tables

    def migrate(self, progress: Callable[[int, int], None] | None = None) -> dict[str, list[str]]:
        """Create the tracking table and any projection's missing tables, and rebuild those whose tables were
        built from another definition; return the projections created and rebuilt."""
        created, stale = [], []
        if self.audit_log is not None:
            self.audit_log.migrate()
        with self.store.transaction() as tx:
            tx.execute(TRACKING)
            tracked = dict(tx.execute("SELECT projection, fingerprint FROM projection_tracking").fetchall())
            for name in self.names:
                if name in tracked:
                    if tracked[name] != PROJECTIONS[name].fingerprint:
                        stale.append(name)
                    continue
                token = secrets.token_hex(4)
                for table in PROJECTIONS[name].tables:
                    tx.execute(f"DROP TABLE IF EXISTS {table.name}")
                    for statement in table.ddl(table.name, token):
                        tx.execute(statement)
                tx.execute("INSERT INTO projection_tracking (projection, position, token, fingerprint) "
                           "VALUES (?, 0, ?, ?)", (name, token, PROJECTIONS[name].fingerprint))
                created.append(name)
        if stale:
            Projector(self.app, self.store, names=stale, batch_size=self.batch_size, audit=False).rebuild(progress)
        return {"created": created, "rebuilt": stale}

    def positions(self) -> dict[str, int]:
        rows = self.store.query("SELECT projection, position FROM projection_tracking")
        return {name: int(position) for name, position in rows if name in self.names}

    def _targets(self, suffix: str = "") -> list[Target]:
        if not self.store.table_exists("projection_tracking"):
            raise NotMigratedError("the projections' tables do not exist: run `tramita migrate` first")
        tracked = {name: (int(position), token, fingerprint) for name, position, token, fingerprint in
                   self.store.query("SELECT projection, position, token, fingerprint FROM projection_tracking")}
        targets = []
        for name in self.names:
            tracking_name = name + suffix
            if tracking_name not in tracked:
                raise NotMigratedError(f"projection {tracking_name} has no tables: run `tramita migrate` first")
            position, token, fingerprint = tracked[tracking_name]
            if fingerprint != PROJECTIONS[name].fingerprint:
                raise NotMigratedError(f"projection {name}'s tables were built by another version of tramita: "
                                       "run `tramita migrate` (it rebuilds them)")
            targets.append(Target(PROJECTIONS[name], tracking_name, suffix, position, token))
        return targets

    # ------------------------------------------------------------------ following the log

    def run_once(self) -> int:
        """Process one batch; return the number of notifications it covered (0: caught up).

        A batch that meets a moved position (another projector, a rebuild swapped in) is rolled back and read
        again from the positions now recorded.
        """
        logged = self._append_to_log()
        for _ in range(CONFLICT_RETRIES):
            targets = self._targets()
            try:
                batch = self._collect(targets)
                if batch.count:
                    with self.store.transaction() as tx:
                        self._commit(tx, targets, batch)
                return max(batch.count, logged)
            except TrackingConflict:
                self._forget()
            except BaseException:
                self._forget()
                raise
        raise TrackingConflict(f"the tracking positions moved under {CONFLICT_RETRIES} batches in a row")

    def run(self, stop: threading.Event, *, poll_seconds: float = 0.5,
            wait: Callable[[float], None] | None = None, log: Callable[[str], None] = print) -> None:
        """Follow the log until `stop` is set; a batch in progress finishes (or rolls back) first.

        A batch that fails for a passing reason of the database (locked, deadlock, connection lost) is rolled
        back and tried again after a growing pause, each failure logged; after TRANSIENT_FAILURES in a row the
        error is raised, so that the process exits non-zero and its supervisor sees it.
        """
        wait = wait or stop.wait
        failures = 0
        while not stop.is_set():
            try:
                covered = self.run_once()
            except self.store.transient_errors as error:
                failures += 1
                if failures >= TRANSIENT_FAILURES:
                    raise
                pause = poll_seconds * 2 ** failures
                log(f"projector: batch rolled back ({type(error).__name__}: {error}); retry {failures} in {pause:.1f}s")
                wait(pause)
                continue
            failures = 0
            if covered == 0 and not stop.is_set():
                wait(poll_seconds)

    def _append_to_log(self) -> int:
        """One batch of the Merkle log (none when this projector does not keep it, or its tables are not made)."""
        if self.audit_log is None or not self.audit_log.exists():
            return 0
        try:
            return self.audit_log.run_once()
        except LogConflict:  # another writer appended first: the next call reads from where it got to
            return 1

    def catch_up(self) -> int:
        """Process batches until the log is exhausted; return the notifications covered."""
        total = 0
        while (done := self.run_once()) > 0:
            total += done
        return total

    def _collect(self, targets: Sequence[Target]) -> Batch:
        """Read the next notifications and bring their aggregates up to date (no write yet).

        For each aggregate touched it keeps the last notification id that touched it and the id of its first
        event if that is in the batch: a target wants the aggregate when the last id is past its position, and
        has no row of it yet when the first event is past its position (so nothing needs deleting).
        """
        start = min(t.position for t in targets)
        notifications = self.app.recorder.select_notifications(start, self.batch_size, inclusive_of_start=False)
        touched: dict[int, Touched] = {}
        kinds, kind_of_topic = self._kinds, self._kind_of_topic
        for notification in notifications:
            topic = notification.topic
            kind = kind_of_topic.get(topic, "")
            if kind == "":
                kind = kind_of_topic[topic] = kinds.get(topic.rsplit(".", 1)[0])
            if kind is None:
                continue
            aggregate = self._advance(notification)
            key = aggregate.id.int
            seen = touched.get(key)
            if seen is None:
                touched[key] = Touched(kind, aggregate, notification.id,
                                       notification.id if notification.originator_version == 1 else None)
            else:
                seen.aggregate, seen.last_id = aggregate, notification.id
        return Batch(len(notifications), notifications[-1].id if notifications else start, touched)

    def _commit(self, tx: Cursor, targets: Sequence[Target], batch: Batch) -> None:
        """Move each position from where the batch started to its end, and write its rows, in `tx`."""
        for target in targets:
            end = max(batch.end, target.position)
            moved = tx.execute("UPDATE projection_tracking SET position = ? "
                               "WHERE projection = ? AND position = ? AND token = ?",
                               (end, target.tracking_name, target.position, target.token))
            if moved.rowcount != 1:
                raise TrackingConflict(target.tracking_name)
            wanted = [t for t in batch.touched.values()
                      if t.last_id > target.position and t.kind in target.projection.aggregates]
            fresh = [t.first_id is not None and t.first_id > target.position for t in wanted]
            self._write(tx, target, [t.aggregate for t in wanted], fresh)
            target.position = end

    def _batch(self, tx: Cursor, targets: Sequence[Target]) -> int:
        batch = self._collect(targets)
        if batch.count:
            self._commit(tx, targets, batch)
        return batch.count

    def _advance(self, notification: Any) -> Any:
        """The notification's aggregate, brought up to (at least) the notification's version."""
        aggregate_id, version = notification.originator_id, notification.originator_version
        key = aggregate_id.int
        cache = self._cache
        aggregate = cache.get(key)
        if aggregate is None or aggregate.version < version:
            if aggregate is not None and aggregate.version == version - 1 or aggregate is None and version == 1:
                aggregate = self.app.mapper.to_domain_event(notification).mutate(aggregate)
            else:
                aggregate = self.app.repository.get(aggregate_id, version=version)
        cache[key] = aggregate
        if key != self._last_key:  # consecutive events of one aggregate: already the most recent entry
            cache.move_to_end(key)
            if len(cache) > self.cache_size:
                cache.popitem(last=False)
            self._last_key = key
        return aggregate

    def _forget(self) -> None:
        """Drop the cached aggregates (after a rolled-back batch they may be ahead of the committed rows)."""
        self._cache.clear()
        self._last_key = None

    def _write(self, tx: Cursor, target: Target, aggregates: list[Any], fresh: list[bool]) -> None:
        """Replace every table row of the given aggregates with the rows of their current state (aggregates
        whose first event is in this batch have no row yet: nothing to delete)."""
        if not aggregates:
            return
        for table in target.projection.tables:
            physical = target.physical(table.name)
            owners = [OWNERS[KINDS[type(a)]](a) for a, new in zip(aggregates, fresh) if not new]
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
                tx.execute("INSERT INTO projection_tracking (projection, position, token, fingerprint) "
                           "VALUES (?, 0, ?, ?)", (name + REBUILD_SUFFIX, token, PROJECTIONS[name].fingerprint))
        builder = Projector(self.app, self.store, names=self.names, batch_size=self.batch_size,
                            cache_size=self.cache_size, audit=False)
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
                tx.execute("INSERT INTO projection_tracking (projection, position, token, fingerprint) "
                           "VALUES (?, ?, ?, ?)", (name, target.position, token, target.projection.fingerprint))
        if progress:
            progress(targets[0].position if targets else 0, max(total, targets[0].position if targets else 0))
        self._forget()
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
        list(listener.notifies(timeout=seconds, stop_after=1))  # returns on the first notification or the timeout

    return wait
