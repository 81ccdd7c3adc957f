"""`tramita rebuild`: the projections rebuilt from the first event beside the live tables, then swapped in.

The rebuild reads the last notification id first, then the stored events up to it **by aggregate**
(projections/events.py: ordered by originator id and version), builds each aggregate once and writes its rows
once, into `<table>__rebuild` tables, a few thousand events' aggregates per transaction. However the log
interleaves its aggregates, no aggregate is replayed twice and no row is written twice. Those tables are created
with their primary keys only; their other indexes are created once they are filled, in the transaction that
moves their positions to that notification id (each index is then one sort rather than an insert per row, and a
rebuild that another took over creates none on the other's tables). Then it catches up from
that notification id as the follower does (the events recorded while it ran), and, in one transaction, catches
up the last events, checks that the side tables are still its own (a rebuild started since replaces them, and
then this one stops with `TrackingConflict`, swapping nothing), drops the live tables and renames the new ones.
The live tables stay readable, and the live projector keeps writing them, until that swap; a crash before it
leaves them untouched.

An aggregate that cannot be built (an event that no longer decodes or applies) or whose rows the database refuses
is recorded in `projection_failures` as the follower records it (the first notification that failed, the last
one of the aggregate), its rows left as of its last event before the failure, and every other aggregate is built.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from eventsourcing.persistence import PersistenceError, StoredEvent

from projections.batch import Batch, Target, Touched, TrackingConflict
from projections.checked import forget
from projections.events import StoredRow, by_aggregate
from projections.failures import Failure, describe
from projections.schema import FAILURES, PROJECTIONS, TRACKING

REBUILD_SUFFIX = "__rebuild"


def rebuild(projector: Any, progress: Callable[[int, int], None] | None = None) -> int:
    """Rebuild `projector`'s projections (a projections.projector.Projector) from the first event beside the
    live tables, then swap them in; return the notifications read."""
    token = secrets.token_hex(4)
    with projector.store.transaction() as tx:
        tx.execute(TRACKING)
        tx.execute(FAILURES)
        for name in projector.names:
            for table in PROJECTIONS[name].tables:
                tx.execute(f"DROP TABLE IF EXISTS {table.name}{REBUILD_SUFFIX}")
                tx.execute(table.table_ddl(f"{table.name}{REBUILD_SUFFIX}", token))
            tx.execute("DELETE FROM projection_tracking WHERE projection = ?", (name + REBUILD_SUFFIX,))
            tx.execute("DELETE FROM projection_failures WHERE projection = ?", (name + REBUILD_SUFFIX,))
            tx.execute("INSERT INTO projection_tracking (projection, position, token, fingerprint) "
                       "VALUES (?, 0, ?, ?)", (name + REBUILD_SUFFIX, token, PROJECTIONS[name].fingerprint))
    builder = type(projector)(projector.app, projector.store, names=projector.names, batch_size=projector.batch_size,
                              cache_bytes=projector._cache.budget, audit=False)
    upto = projector.app.recorder.max_notification_id() or 0
    targets = builder._targets(REBUILD_SUFFIX)
    done, recorded = build_by_aggregate(builder, targets, upto, progress)
    while True:  # what was recorded during the pass, as the follower reads it
        with projector.store.transaction() as tx:
            covered, failed = builder._batch(tx, targets)
        recorded += failed
        if covered == 0:
            break
        done += covered
        if progress:
            progress(targets[0].position, max(upto, targets[0].position))
    with projector.store.transaction() as tx:
        while (last := builder._batch(tx, targets))[0] > 0:
            done += last[0]
            recorded += last[1]
        for target in targets:  # a batch checks its targets only when the log has something new for it
            _move(tx, target, target.position)  # still this rebuild's, or another took the side tables over
        for target in targets:
            for table in target.projection.tables:
                tx.execute(f"DROP TABLE IF EXISTS {table.name}")
                tx.execute(f"ALTER TABLE {table.name}{REBUILD_SUFFIX} RENAME TO {table.name}")
            name = target.projection.name
            tx.execute("DELETE FROM projection_tracking WHERE projection IN (?, ?)", (name, target.tracking_name))
            tx.execute("INSERT INTO projection_tracking (projection, position, token, fingerprint) "
                       "VALUES (?, ?, ?, ?)", (name, target.position, token, target.projection.fingerprint))
            tx.execute("DELETE FROM projection_failures WHERE projection = ?", (name,))
            tx.execute("UPDATE projection_failures SET projection = ? WHERE projection = ?",
                       (name, target.tracking_name))
        # the latest read-model check no longer speaks of these tables: their rows now come from the events
        forget(tx, [t.projection.name for t in targets], [t.name for p in targets for t in p.projection.tables])
    projector._alerts.raise_for(recorded, projector.log)
    if progress:
        progress(targets[0].position if targets else 0, max(upto, targets[0].position if targets else 0))
    projector._forget()
    return done


def build_by_aggregate(builder: Any, targets: list[Target], upto: int,
                       progress: Callable[[int, int], None] | None) -> tuple[int, list[tuple[str, Failure]]]:
    """Build every aggregate of the events up to notification `upto` once and write its rows once, about
    `builder.batch_size` events' aggregates per transaction, into tables without their secondary indexes; then
    move the targets' positions to `upto` and create those indexes. Returns the events read and the failures
    recorded."""
    kinds = {kind for target in targets for kind in target.projection.aggregates}
    read, pending, recorded = 0, 0, []
    touched: dict[int, Touched] = {}
    failures: dict[int, Failure] = {}

    def write() -> None:
        nonlocal touched, failures, pending
        with builder.store.transaction() as tx:  # positions stay at 0 (end=0): nothing is caught up yet
            recorded.extend(builder._commit_safely(tx, targets, Batch(pending, 0, touched, failures)))
        touched, failures, pending = {}, {}, 0
        if progress:
            progress(read, upto)

    for aggregate_id, events in by_aggregate(builder.app, builder.store, upto, builder.batch_size):
        read += len(events)
        pending += len(events)
        built, failure = build(builder, aggregate_id, events, kinds)
        if built is not None:
            touched[aggregate_id.int] = built
        if failure is not None:
            failures[aggregate_id.int] = failure
        if pending >= builder.batch_size:
            write()
    if pending or touched or failures or read == 0:
        write()
    with builder.store.transaction() as tx:
        for target in targets:
            _move(tx, target, upto)
            for table in target.projection.tables:  # once filled, each index is one sort, not a row's insert each
                for statement in table.index_ddl(target.physical(table.name), target.token):
                    tx.execute(statement)
    return read, recorded


def build(builder: Any, aggregate_id: Any, events: list[StoredRow],
          kinds: set[str]) -> tuple[Touched | None, Failure | None]:
    """The aggregate built from its events (None when it has no projected event that applies) and its failure, if
    one of its events could not be decoded or applied: the aggregate is then as of the event before that one."""
    mapper = builder.app.mapper
    aggregate, touched, failure = None, None, None
    for notification_id, _, version, topic, state in events:
        kind = builder.kind_of(topic)
        if kind is None or kind not in kinds:
            continue
        if failure is not None:  # the later events of an aggregate that failed replay the one that failed
            failure.last_notification_id = notification_id
            continue
        try:
            aggregate = mapper.to_domain_event(StoredEvent(aggregate_id, version, topic, state)).mutate(aggregate)
        except PersistenceError:  # the event store's own trouble, not this event's
            raise
        except Exception as error:
            failure = Failure(str(aggregate_id), kind, notification_id, topic, describe(error))
            touched = _before(builder, aggregate_id, version, touched)
            continue
        if touched is None:
            touched = Touched(kind, aggregate, notification_id, notification_id, topic)
        else:
            touched.aggregate, touched.last_id, touched.topic = aggregate, notification_id, topic
    return touched, failure


def _before(builder: Any, aggregate_id: Any, version: int, touched: Touched | None) -> Touched | None:
    """After an event failed to apply (the aggregate may be half changed): the aggregate as of the version
    before, read again from the store, or None when it has none."""
    if touched is None:
        return None
    try:
        touched.aggregate = builder.app.repository.get(aggregate_id, version=version - 1)
    except PersistenceError:
        raise
    except Exception:
        return None
    return touched


def _move(tx: Any, target: Target, position: int) -> None:
    """Move the target's position to `position`, if it is still the one it had (else another rebuild took over)."""
    moved = tx.execute("UPDATE projection_tracking SET position = ? "
                       "WHERE projection = ? AND position = ? AND token = ?",
                       (position, target.tracking_name, target.position, target.token))
    if moved.rowcount != 1:
        raise TrackingConflict(f"{target.tracking_name}: another rebuild started since and took these side tables "
                               "over; this one swapped nothing in (the live tables are as they were)")
    target.position = position
