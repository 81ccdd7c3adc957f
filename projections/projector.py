"""The projector: follows the notification log and keeps the read models current, exactly once.

Each batch reads notifications after the lowest tracked position, brings the aggregates they belong to up to
date (kept in a cache bounded in bytes, projections/cache.py; a miss replays the aggregate from the store), and
then, in one transaction,
replaces the rows of every aggregate touched and moves each projection's tracking position. The position only
moves if it is still the one the batch started from (and the table generation is the same), so a crash, a second
projector or a rebuild swapped in meanwhile can neither lose a batch nor apply it twice: the batch rolls back
and is read again. Notification ids may have gaps (PostgreSQL): positions are the last id seen, never a count.

No event stops it. Row values are written through `rows.storable` (NUL and lone surrogates shown as U+FFFD), so
whatever text an event holds, both stores take it. An aggregate that still cannot be projected (an event that no
longer decodes or applies, a row the database refuses) is skipped alone: an event that fails to apply leaves the
aggregate's rows as of the event before it; a batch whose write fails is written again in the same transaction
aggregate by aggregate, each in a savepoint, and only the failing ones are left as they were. Each such
aggregate is recorded in `projection_failures` (projection, aggregate, first and last notification, event type,
error) until a later batch writes its rows, and raises one system alert (`projection-failure`, once per projection
and aggregate); every other row, and the positions, move on. A database error that is not about a row's values
(a lost connection, a missing table) blames no aggregate: the batch rolls back as before.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from eventsourcing.persistence import PersistenceError
from eventsourcing.utils import get_topic, resolve_topic

from audit.log import AuditLog, LogConflict, TreeDamaged
from domain import domain_topic
from domain.application import Tramita
from domain.application.pool import replay
from projections.batch import Batch, Target, Touched, TrackingConflict
from projections.cache import CACHE_BYTES, AggregateCache
from projections.failures import PROJECTOR, Failure, FailureAlerts, describe, failures, settle
from projections.rows import KINDS
from projections.schema import FAILURES, PROJECTIONS, TRACKING
from infrastructure.store import Cursor, NotMigratedError, Store, recorded_aggregates
from projections.writing import write

#: Notifications read per batch (one transaction each) when following the log.
BATCH_SIZE = 500
#: ... and when rebuilding beside the live tables, where nobody reads the new rows before the swap.
REBUILD_BATCH_SIZE = 5000

#: Batches failed in a row for a passing reason of the database before the projector gives up.
TRANSIENT_FAILURES = 6
#: Batches read again in a row when the positions moved under them, before giving up.
CONFLICT_RETRIES = 5

class Projector:
    """Keeps some projections (default: all) current from the application's notification log."""

    def __init__(self, app: Tramita, store: Store, *, names: Iterable[str] | None = None,
                 batch_size: int = BATCH_SIZE, cache_bytes: int = CACHE_BYTES, audit: bool | None = None) -> None:
        self.app, self.store = app, store
        #: The Merkle log over every event (audit/log.py), kept by the projector that follows the whole log
        #: (by default the one over every projection), one batch before the projections' batch.
        self.audit_log = AuditLog(app, store) if (names is None if audit is None else audit) else None
        self._tree_alerted = False
        self.names = list(names) if names is not None else list(PROJECTIONS)
        unknown = [n for n in self.names if n not in PROJECTIONS]
        if unknown:
            raise ValueError(f"unknown projection {', '.join(unknown)} (known: {', '.join(PROJECTIONS)})")
        self.batch_size = batch_size
        #: The aggregates kept between batches, within `cache_bytes` of their stored events; a miss replays one.
        self._cache = AggregateCache(cache_bytes)
        self._kinds = {get_topic(cls): kind for cls, kind in KINDS.items()}
        self._kind_of_topic: dict[str, str | None] = {}
        self._alerts = FailureAlerts(app, lambda: failures(store, self.names))
        self.log: Callable[[str], None] = lambda line: None

    # ------------------------------------------------------------------ tables

    def migrate(self, progress: Callable[[int, int], None] | None = None) -> dict[str, list[str]]:
        """Create the tracking table and any projection's missing tables, and rebuild those whose tables were
        built from another definition; return the projections created and rebuilt."""
        created, stale = [], []
        if self.audit_log is not None:
            self.audit_log.migrate()
        with self.store.transaction() as tx:
            tx.execute(TRACKING)
            tx.execute(FAILURES)
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
                tx.execute("DELETE FROM projection_failures WHERE projection = ?", (name,))
                created.append(name)
        if stale:
            Projector(self.app, self.store, names=stale, batch_size=self.batch_size, audit=False).rebuild(progress)
        return {"created": created, "rebuilt": stale}

    def positions(self) -> dict[str, int]:
        rows = self.store.query("SELECT projection, position FROM projection_tracking")
        return {name: int(position) for name, position in rows if name in self.names}

    def failures(self) -> list[dict[str, Any]]:
        """The aggregates these projections could not write (`projection_failures`), in the order they failed."""
        return failures(self.store, self.names)

    def _targets(self, suffix: str = "") -> list[Target]:
        if not self.store.table_exists("projection_tracking"):
            raise NotMigratedError("the projections' tables do not exist: run `tramita migrate` first")
        tracked = {name: (int(position), token, fingerprint) for name, position, token, fingerprint in
                   self.store.query("SELECT projection, position, token, fingerprint FROM projection_tracking")}
        if not self._alerts.read and not self.store.table_exists("projection_failures"):
            raise NotMigratedError("the projections' failures table does not exist: run `tramita migrate`")
        failing: dict[str, set[str]] = {}
        for name, aggregate_id in self.store.query("SELECT projection, aggregate_id FROM projection_failures"):
            failing.setdefault(name, set()).add(aggregate_id)
        targets = []
        for name in self.names:
            tracking_name = name + suffix
            if tracking_name not in tracked:
                raise NotMigratedError(f"projection {tracking_name} has no tables: run `tramita migrate` first")
            position, token, fingerprint = tracked[tracking_name]
            if fingerprint != PROJECTIONS[name].fingerprint:
                raise NotMigratedError(f"projection {name}'s tables were built by another version of tramita: "
                                       "run `tramita migrate` (it rebuilds them)")
            targets.append(Target(PROJECTIONS[name], tracking_name, suffix, position, token,
                                  failing.get(tracking_name, set())))
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
            # a failure recorded by an earlier process whose alert it did not get to raise
            self._alerts.raise_for([], self.log)
            try:
                batch = self._collect(targets)
                if batch.count:
                    with self.store.transaction() as tx:
                        recorded = self._commit_safely(tx, targets, batch)
                    self._alerts.raise_for(recorded, self.log)
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
        self.log = log
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
        except TreeDamaged as damaged:  # an altered cache stops neither the read models nor their projector
            if not self._tree_alerted:
                self.log(f"projector: the audit log's stored tree was altered; it is no longer appended: {damaged}")
                self.app.raise_system_alert(PROJECTOR, kind="tamper-alarm", subject="audit-log:stored-tree",
                                            message=f"the audit log's stored tree was altered: {damaged}")
                self._tree_alerted = True
            return 0

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
        failed: dict[int, Failure] = {}
        for notification in notifications:
            topic = notification.topic
            kind = self.kind_of(topic)
            if kind is None:
                continue
            key = notification.originator_id.int
            if key in failed:  # its later events replay the one that failed
                failed[key].last_notification_id = notification.id
                continue
            try:
                aggregate = self._advance(notification)
            except PersistenceError:  # the event store's own trouble, not this event's
                raise
            except Exception as error:
                failed[key] = Failure(str(notification.originator_id), kind, notification.id, topic, describe(error))
                self._back_out(notification, touched)
                continue
            seen = touched.get(key)
            if seen is None:
                touched[key] = Touched(kind, aggregate, notification.id,
                                       notification.id if notification.originator_version == 1 else None, topic)
            else:
                seen.aggregate, seen.last_id, seen.topic = aggregate, notification.id, topic
        return Batch(len(notifications), notifications[-1].id if notifications else start, touched, failed)

    def _back_out(self, notification: Any, touched: dict[int, Touched]) -> None:
        """After an event of the notification's aggregate failed to apply: forget its cached state (the failure
        may have left it half applied) and, if the batch touched it before, take its state at the event before."""
        key = notification.originator_id.int
        self._cache.pop(key)
        if key in touched:
            try:
                touched[key].aggregate = self.app.repository.get(notification.originator_id,
                                                                 version=notification.originator_version - 1)
            except PersistenceError:
                raise
            except Exception:
                del touched[key]

    def _commit_safely(self, tx: Cursor, targets: Sequence[Target], batch: Batch) -> list[tuple[str, Failure]]:
        """`_commit` the batch in `tx`; if a row cannot be written, again aggregate by aggregate, leaving out those
        whose rows fail. Returns the failures recorded (projection, failure)."""
        positions = [target.position for target in targets]
        tx.execute("SAVEPOINT tramita_batch")
        try:
            recorded = self._commit(tx, targets, batch)
        except TrackingConflict:
            raise
        except Exception as error:
            if self._systemic(error):
                raise
            tx.execute("ROLLBACK TO SAVEPOINT tramita_batch")
            for target, position in zip(targets, positions):
                target.position = position
            recorded = self._commit(tx, targets, batch, careful=True)
        tx.execute("RELEASE SAVEPOINT tramita_batch")
        return recorded

    def _systemic(self, error: BaseException) -> bool:
        """Is this the database's (or the process's) trouble rather than one row's?"""
        return isinstance(error, MemoryError) or (isinstance(error, self.store.database_errors)
                                                  and not isinstance(error, self.store.row_errors))

    def _commit(self, tx: Cursor, targets: Sequence[Target], batch: Batch, *,
                careful: bool = False) -> list[tuple[str, Failure]]:
        """Move each position from where the batch started to its end, write its rows and its failures, in `tx`;
        `careful`: each aggregate's rows in a savepoint of their own, a failing one recorded and left as it was."""
        recorded = []
        for target in targets:
            end = max(batch.end, target.position)
            moved = tx.execute("UPDATE projection_tracking SET position = ? "
                               "WHERE projection = ? AND position = ? AND token = ?",
                               (end, target.tracking_name, target.position, target.token))
            if moved.rowcount != 1:
                raise TrackingConflict(target.tracking_name)
            kinds = target.projection.aggregates
            written = (*kinds, *target.projection.amended_by)
            wanted = [t for t in batch.touched.values() if t.last_id > target.position and t.kind in written]
            fresh = [t.first_id is not None and t.first_id > target.position for t in wanted]
            failed = [f for f in batch.failures.values()
                      if f.aggregate_kind in kinds and f.last_notification_id > target.position]
            if careful:
                failed += self._write_each(tx, target, wanted, fresh)
            else:
                self._write(tx, target, [t.aggregate for t in wanted], fresh)
            settle(tx, target, wanted, failed)
            recorded += [(target.projection.name, failure) for failure in failed]
            target.position = end
        return recorded

    def _write_each(self, tx: Cursor, target: Target, wanted: list[Touched], fresh: list[bool]) -> list[Failure]:
        """Write each aggregate's rows in a savepoint of its own; those that fail are rolled back and returned."""
        failed = []
        for touched, new in zip(wanted, fresh):
            tx.execute("SAVEPOINT tramita_aggregate")
            try:
                self._write(tx, target, [touched.aggregate], [new])
            except Exception as error:
                if self._systemic(error):
                    raise
                tx.execute("ROLLBACK TO SAVEPOINT tramita_aggregate")
                failed.append(Failure(str(touched.aggregate.id), touched.kind, touched.last_id, touched.topic,
                                      describe(error)))
            tx.execute("RELEASE SAVEPOINT tramita_aggregate")
        return failed

    def _batch(self, tx: Cursor, targets: Sequence[Target]) -> tuple[int, list[tuple[str, Failure]]]:
        batch = self._collect(targets)
        recorded = self._commit_safely(tx, targets, batch) if batch.count else []
        return batch.count, recorded

    def kind_of(self, topic: str) -> str | None:
        """The projected kind of an event's aggregate ("case", ...) from the event's topic; None: no projection's,
        as is a topic naming no class of the domain (a database administrator can write any, NULL and bytes too:
        `domain.domain_topic`), whose module is then never imported."""
        kind = self._kind_of_topic.get(topic, "")
        if kind == "":
            kind = self._kind_of_topic[topic] = (self._kinds.get(topic.rsplit(".", 1)[0]) or _moved_kind(topic)
                                                 if domain_topic(topic) else None)
        return kind

    def _advance(self, notification: Any) -> Any:
        """The notification's aggregate, brought up to (at least) the notification's version."""
        aggregate_id, version = notification.originator_id, notification.originator_version
        key = aggregate_id.int
        entry = self._cache.get(key)
        aggregate, size = entry if entry is not None else (None, 0)
        if aggregate is None or aggregate.version < version:
            if aggregate is not None and aggregate.version == version - 1 or aggregate is None and version == 1:
                aggregate = self.app.mapper.to_domain_event(notification).mutate(aggregate)
                size += len(notification.state)
            else:
                aggregate, size = self._replay(aggregate_id, version)
        self._cache.put(key, aggregate, size)
        return aggregate

    def _replay(self, aggregate_id: Any, version: int) -> tuple[Any, int]:
        """The aggregate as of `version`, replayed from its stored events, and the bytes of those events."""
        aggregate, size = replay(self.app.recorder, self.app.mapper, aggregate_id, lte=version)
        if aggregate is None:
            raise LookupError(f"aggregate {aggregate_id} has no stored event up to version {version}")
        return aggregate, size

    def _forget(self) -> None:
        """Drop the cached aggregates (after a rolled-back batch they may be ahead of the committed rows)."""
        self._cache.clear()

    def _write(self, tx: Cursor, target: Target, aggregates: list[Any], fresh: list[bool]) -> None:
        """Replace every table row of the given aggregates with the rows of their current state, and set the
        columns other kinds amend (projections/writing.py)."""
        if aggregates:
            write(tx, target, aggregates, fresh, self._recorded)

    def _recorded(self, aggregate_ids: list[Any]) -> set[Any]:
        """Which of these aggregates the event store holds (a row may depend on another aggregate being recorded:
        a deadline's on its `missed` alert)."""
        return recorded_aggregates(self.app, self.store, aggregate_ids)

    # ------------------------------------------------------------------ rebuild

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Rebuild the projections from the first event beside the live tables, then swap them in
        (projections/rebuild.py); the notifications read."""
        from projections.rebuild import rebuild

        return rebuild(self, progress)


def _moved_kind(topic: str) -> str | None:
    """The projected kind of an event whose stored topic names where its aggregate class was before it moved
    (a topic registered with the library's `register_topic`); None for an aggregate no projection shows."""
    try:
        return KINDS.get(resolve_topic(topic.rsplit(".", 1)[0]))
    except Exception:  # a topic of no class of this application: the event is no projection's
        return None
