"""The read models checked against the events: every row of every projection's tables recomputed from the events
up to the position its tracking claims, and compared with the live row.

A database administrator can edit the read models without touching an event: a false name, a lifted freeze, a
missed deadline shown as met, a tracking position pushed forward so that the next events are never projected.
The audit log's verification does not see it (no event changed). This check does, with the rebuild's own
machinery (projections/rebuild.py: the events read by aggregate, each aggregate built once, its rows given by
projections/rows.py through `writing.table_rows` and written values through `rows.storable`), kept in memory
instead of side tables, so that `tramita verify` writes nothing to check:

1. In one read transaction (a snapshot: on PostgreSQL repeatable read, on SQLite WAL's; no writer waits), each
   projection's tracking position and its live rows are read.
2. The events up to that position are read by aggregate and each table's rows recomputed (a projector behind the
   log is no difference: it is compared where it claims to be).
3. Row by row, by the table's key: a row whose columns differ, a row missing, a row no event gives (extra); a
   tracking position beyond the last event; an aggregate the events cannot project that `projection_failures`
   does not list.

A deadline's `alerts_due_on` depends on whether its `missed` alert is recorded (projections/writing.py): it is
computed knowing the alerts recorded up to the position, and a live row written once a later alert was recorded,
but before the projector read that alert, is accepted too (the scheduler raises alerts and then checks).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.persistence import PersistenceError

from domain.acts import Actor
from projections import checked
from projections.events import by_aggregate
from projections.projector import Projector
from projections.rebuild import build
from projections.rows import KINDS, OWNERS, RECORDED, storable_row
from projections.schema import PROJECTIONS, INT, Projection, Table
from projections.writing import table_rows
from infrastructure.sqlite import readable_id
from infrastructure.store import Cursor, SQLiteStore, Store, recorded_aggregates

#: Differing rows kept per table in a result (all are counted).
SAMPLE = 20
#: Events read per query, and aggregates' rows computed together.
PAGE = 5000
TRACKING, FAILURES = "projection_tracking", "projection_failures"
_INTEGER = re.compile(r"\s*[+-]?\d+\s*")
#: The system alert a table whose rows differ from the events raises (domain/alerts.py).
READ_MODEL_DIFFERS = "read-model-differs"


@dataclass(frozen=True)
class Difference:
    """One row of a read model that the events do not give: `kind` is `changed` (the `columns` differ), `missing`
    (the events give it, the table lacks it), `extra` (the table holds it, no event gives it) or `ahead` (a
    tracking position beyond the last event)."""

    table: str
    key: dict[str, Any]
    kind: str
    columns: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"table": self.table, "key": self.key, "kind": self.kind, "columns": list(self.columns)}


@dataclass
class ReadModelCheck:
    """What the check found: when, up to which positions, how many rows of each table differ and a sample."""

    checked_at: str
    positions: dict[str, int]
    notifications: int
    counts: dict[str, int] = field(default_factory=dict)
    differences: list[Difference] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Projections not checked: not created (no tracking row: the projector refuses to run until `tramita migrate`
    creates them), or built by another version (`tramita migrate` rebuilds them)."""

    @property
    def ok(self) -> bool:
        return not self.counts

    def add(self, difference: Difference) -> None:
        count = self.counts.get(difference.table, 0)
        self.counts[difference.table] = count + 1
        if count < SAMPLE:
            self.differences.append(difference)

    def as_dict(self) -> dict[str, Any]:
        differing = {table: {"rows": count, "sample": [d.as_dict() for d in self.differences if d.table == table]}
                     for table, count in sorted(self.counts.items())}
        return {"checked_at": self.checked_at, "ok": self.ok, "positions": self.positions,
                "notifications": self.notifications, "differing": differing, "skipped": self.skipped}


def check_read_models(app: Any, store: Store, now: datetime, names: Iterable[str] | None = None,
                      page: int = PAGE) -> ReadModelCheck:
    """Check the named projections' tables (default: all) against the events (the module's docstring).
    `app` is the application whose event store the events are read from, `now` when the check runs."""
    names = list(names) if names is not None else list(PROJECTIONS)
    with _snapshot(store) as tx:
        tracked = _tracked(store, tx)
        projections = [PROJECTIONS[n] for n in names
                       if n in tracked and tracked[n][1] == PROJECTIONS[n].fingerprint]
        live = {table.name: _live_rows(store, tx, table) for p in projections for table in p.tables}
        failing = _failing(store, tx)
    last = app.recorder.max_notification_id() or 0
    result = ReadModelCheck(now.isoformat(), {n: tracked[n][0] for n in names if n in tracked}, last,
                            skipped=[n for n in names if PROJECTIONS[n] not in projections])
    for name in names:  # a projection without tracking is not created yet: the projector refuses to run, and
        if name in tracked and tracked[name][0] > last:  # `tramita migrate` creates it from the events (skipped)
            result.add(Difference(TRACKING, {"projection": name}, "ahead", ("position",)))
    builder = Projector(app, store, names=[p.name for p in projections], audit=False)
    for upto in sorted({min(tracked[p.name][0], last) for p in projections}):
        group = [p for p in projections if min(tracked[p.name][0], last) == upto]
        expected, alternates, unwritable, failed = _expected(builder, group, upto, page)
        for projection in group:
            for table in projection.tables:
                _compare(result, table, expected[table.name], alternates[table.name], live[table.name], unwritable)
            for aggregate_id in sorted(failed.get(projection.name, set()) - failing.get(projection.name, set())):
                result.add(Difference(FAILURES, {"projection": projection.name, "aggregate_id": aggregate_id},
                                      "missing"))
    return result


def check_keep_and_alert(app: Any, store: Store, now: datetime, actor: Actor | None,
                         log: Callable[..., None] = lambda event, **fields: None) -> ReadModelCheck:
    """Check every read model, keep the result for `/health` and the pages (projections/checked.py), and, given
    an `actor`, raise a `read-model-differs` system alert per table that differs: the kept result is a row an
    administrator can edit, the alert an event in the hash chain. The alert's subject is the table and a digest of
    what differs, so the same differences found again raise nothing new and new ones raise another."""
    result = check_read_models(app, store, now)
    if result.positions:
        checked.save(store, result.as_dict())
    for table, count in sorted(result.counts.items()):
        sample = [d.as_dict() for d in result.differences if d.table == table]
        log("read-model-differs", table=table, rows=count, sample=sample[:3])
        if actor is None:
            continue
        digest = hashlib.sha256(json.dumps([count, sample], sort_keys=True, default=str).encode()).hexdigest()[:16]
        first = sample[0] if sample else {}
        app.raise_system_alert(actor, kind=READ_MODEL_DIFFERS, subject=f"{table}:{digest}", message=(
            f"{count} row(s) of the read model {table} differ from what the events give (first: {first.get('kind')} "
            f"{first.get('key')} {', '.join(first.get('columns', []))}); `tramita rebuild` rebuilds it from the "
            "events")[:1000])
    return result


@contextmanager
def _snapshot(store: Store) -> Iterator[Cursor]:
    """One read of the database as of one moment, blocking no writer and writing nothing (a database `tramita
    verify` may only read is checked too): on SQLite a deferred transaction (in WAL mode its first read fixes the
    snapshot), on PostgreSQL a repeatable-read one."""
    if isinstance(store, SQLiteStore):
        cursor = store.connection.cursor()
        cursor.execute("BEGIN")
        try:
            yield Cursor(cursor, "?")
        finally:
            cursor.execute("ROLLBACK")
        return
    with store.transaction() as tx:
        tx.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield tx


def _recorded_after(app: Any, store: Store, upto: int) -> set[Any]:
    """The aggregates whose first event was recorded after notification `upto` (none known for a recorder whose
    table is not in the store's database)."""
    table = getattr(app.recorder, "events_table_name", None)
    if table is None or not store.table_exists(table):
        return set()
    rowid = "rowid" if store.dialect == "sqlite" else "notification_id"
    return {value if isinstance(value, UUID) else readable_id(str(value)) for (value,) in store.query(
        f"SELECT originator_id FROM {table} WHERE originator_version = 1 AND {rowid} > ?", (upto,))}


def _tracked(store: Store, tx: Cursor) -> dict[str, tuple[int, str]]:
    if not store.table_exists(TRACKING):
        return {}
    return {name: (int(position), fingerprint) for name, position, fingerprint in
            tx.execute(f"SELECT projection, position, fingerprint FROM {TRACKING}").fetchall()}


def _failing(store: Store, tx: Cursor) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    if store.table_exists(FAILURES):
        for name, aggregate_id in tx.execute(f"SELECT projection, aggregate_id FROM {FAILURES}").fetchall():
            found.setdefault(name, set()).add(str(aggregate_id))
    return found


def _live_rows(store: Store, tx: Cursor, table: Table) -> dict[tuple, tuple] | None:
    """The live table's rows by key, as compared (`_as_compared`); None when the table is gone."""
    if not store.table_exists(table.name):
        return None
    if store.dialect != "sqlite":
        rows = tx.execute(f"SELECT {', '.join(table.column_names)} FROM {table.name}").fetchall()
        return _by_key(table, rows)
    # SQLite's columns take any value, and its driver raises on text that is not UTF-8: each value is read as its
    # type and its bytes, and made again as the driver would give it (text that is not UTF-8 with U+FFFD, a blob
    # as SQLite writes a blob, which no text the events give equals).
    typed = ", ".join(f"typeof({column}), CAST({column} AS BLOB)" for column in table.column_names)
    return _by_key(table, (tuple(_sqlite_value(kind, raw) for kind, raw in zip(row[::2], row[1::2]))
                           for row in tx.execute(f"SELECT {typed} FROM {table.name}").fetchall()))


def _sqlite_value(kind: str, raw: bytes | None) -> Any:
    """A SQLite value read as (its type, its bytes): back to what the driver gives for valid values."""
    if kind == "null" or raw is None:
        return None
    if kind == "integer":
        return int(raw)
    if kind == "real":
        return float(raw)
    if kind == "text":
        return bytes(raw).decode("utf-8", "replace")
    return f"x'{bytes(raw).hex()}' (blob)"  # shown as SQLite writes a blob; no text an event gives ends so


def _by_key(table: Table, rows: Iterable[tuple]) -> dict[tuple, tuple]:
    kinds = [kind for _, kind in table.columns]
    at = [table.column_names.index(column) for column in table.key]
    found = {}
    for row in rows:
        compared = tuple(_as_compared(kind, value) for kind, value in zip(kinds, row))
        found[tuple(compared[i] for i in at)] = compared
    return found


def _as_compared(kind: str, value: Any) -> Any:
    """A value as the column holds it whichever store wrote it: SQLite keeps a number written to a TEXT column as
    text and integer text written to an INTEGER column as a number."""
    if value is None:
        return None
    if kind == INT:
        if isinstance(value, str) and _INTEGER.fullmatch(value):
            return int(value)
        return int(value) if isinstance(value, bool) else value
    return value if isinstance(value, str) else str(value)


def _owner(aggregate: Any) -> str:
    """The key the aggregate's rows are owned by (a case's id, a municipality's code); its id when an edited event
    made it an aggregate that cannot say (a case's first event naming another class: `tramita verify` names it)."""
    try:
        return OWNERS[KINDS[type(aggregate)]](aggregate)
    except Exception:  # noqa: BLE001 - see the docstring
        return str(aggregate.id)


def _expected(builder: Any, projections: list[Projection], upto: int,
              page: int) -> tuple[dict[str, dict[tuple, tuple]], dict[str, dict[tuple, tuple]], dict[str, set[str]],
                                  dict[str, set[str]]]:
    """Each table's rows as the events up to `upto` give them; the other row a table of `rows.RECORDED` may
    rightly hold (a deadline's row written by the projector after its `missed` alert was recorded, before that
    alert's notification was projected); for each table, the owners whose rows cannot be written (their live rows
    are as of an earlier write: not compared); for each projection, the aggregates the events cannot project
    (that `projection_failures` must list)."""
    kinds = {kind for p in projections for kind in p.aggregates}
    expected: dict[str, dict[tuple, tuple]] = {t.name: {} for p in projections for t in p.tables}
    unwritable: dict[str, set[str]] = {t.name: set() for p in projections for t in p.tables}
    alternates: dict[str, dict[tuple, tuple]] = {t.name: {} for p in projections for t in p.tables}
    failed: dict[str, set[str]] = {}
    pending: list[Any] = []

    late = _recorded_after(builder.app, builder.store, upto)

    def recorded(ids: list[Any]) -> set[Any]:  # as the rebuild asks: what the event store holds now
        return recorded_aggregates(builder.app, builder.store, ids)

    def recorded_by_then(ids: list[Any]) -> set[Any]:  # what it held at `upto`
        return recorded(ids) - late

    def rows_of(projection: Projection, table: Table, owned: list[Any], held: Any) -> dict[tuple, tuple]:
        try:
            rows = [storable_row(row) for row in table_rows(table.name, owned, held)]
        except PersistenceError:
            raise
        except Exception:  # noqa: BLE001 - a value no column holds, or an aggregate whose rows cannot be made
            rows = []
            for aggregate in owned:  # the one that fails, fails alone, as when the projector writes them
                try:
                    rows += [storable_row(row) for row in table_rows(table.name, [aggregate], held)]
                except PersistenceError:
                    raise
                except Exception:  # noqa: BLE001 - as above
                    unwritable[table.name].add(_owner(aggregate))
                    failed.setdefault(projection.name, set()).add(str(aggregate.id))
        return _by_key(table, rows)

    def flush() -> None:
        for projection in projections:
            owned = [a for a in pending if KINDS[type(a)] in projection.aggregates]
            for table in projection.tables:
                found = rows_of(projection, table, owned, recorded_by_then)
                expected[table.name].update(found)
                if late and table.name in RECORDED:  # rows written while a later alert was already recorded
                    alternates[table.name].update((key, row) for key, row in rows_of(
                        projection, table, owned, recorded).items() if found.get(key) != row)
        pending.clear()

    counted = 0
    for aggregate_id, events in by_aggregate(builder.app, builder.store, upto, page):
        touched, failure = build(builder, aggregate_id, events, kinds)
        if touched is not None:
            pending.append(touched.aggregate)
        if failure is not None:
            for projection in projections:
                if failure.aggregate_kind in projection.aggregates:
                    failed.setdefault(projection.name, set()).add(failure.aggregate_id)
        counted += len(events)
        if counted >= page:
            flush()
            counted = 0
    flush()
    return expected, alternates, unwritable, failed


def _compare(result: ReadModelCheck, table: Table, expected: dict[tuple, tuple], alternates: dict[tuple, tuple],
             live: dict[tuple, tuple] | None, unwritable: dict[str, set[str]]) -> None:
    """Add to `result` each row of the live table that differs from the expected one, is missing or is extra."""
    if live is None:
        result.add(Difference(table.name, {}, "missing"))
        return
    owner = table.key.index(table.owner)
    skipped = unwritable[table.name]
    columns = table.column_names
    for key, row in expected.items():
        found = live.get(key)
        if found is None:
            result.add(Difference(table.name, dict(zip(table.key, key)), "missing"))
        elif found != row and found != alternates.get(key):
            result.add(Difference(table.name, dict(zip(table.key, key)), "changed",
                                  tuple(c for c, a, b in zip(columns, found, row) if a != b)))
    for key in live.keys() - expected.keys():
        if str(key[owner]) not in skipped:
            result.add(Difference(table.name, dict(zip(table.key, key)), "extra"))
