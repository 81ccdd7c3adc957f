"""The stored events read by aggregate, for the rebuild: each aggregate's events together, in version order.

On SQLite and PostgreSQL the library's events table (the recorder's `events_table_name`: `stored_events` on
SQLite, `<application>_events` in the URL's schema on PostgreSQL) is in the projections' database; it is read
ordered by its primary key (originator id, originator version), one page at a time, each page starting after the
last key of the one before, so no read holds a transaction open and the index serves every page. The notification
id is SQLite's rowid, PostgreSQL's `notification_id` column. Other recorders (the in-memory one) are read through
the notification log and grouped in memory: they hold only what fits in the process anyway.

Only the events up to a given notification id are given: those recorded later are the follower's to catch up.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any
from uuid import UUID

from infrastructure.store import Store
from infrastructure.sqlite import lenient_text, readable_id, unreadable_text


#: One stored event: (notification id, originator id as stored, originator version, topic, state).
StoredRow = tuple[int, Any, int, str, bytes]


def by_aggregate(app: Any, store: Store, upto: int, page: int) -> Iterator[tuple[UUID, list[StoredRow]]]:
    """Each aggregate's id with its stored events of notification id <= `upto`, in version order, as the rows of
    the query (tuples, not objects: a million of them are made); `page` events are read per query."""
    table = getattr(app.recorder, "events_table_name", None)
    if table is None or not _same_database(app, store) or not store.table_exists(table):
        yield from _grouped_from_log(app, upto)
        return
    rowid = "rowid" if store.dialect == "sqlite" else "notification_id"
    columns = f"{rowid}, originator_id, originator_version, topic, state FROM {table}"
    order = f"ORDER BY originator_id, originator_version LIMIT {int(page)}"
    current: Any = None
    events: list[StoredRow] = []
    after: tuple[Any, int] | None = None
    after_row: int | None = None
    lenient = False
    while True:
        if not lenient:
            try:
                rows = store.query(f"SELECT {columns} {order}") if after is None else store.query(
                    f"SELECT {columns} WHERE (originator_id, originator_version) > (?, ?) {order}", after)
            except Exception as error:
                if not unreadable_text(error):
                    raise
                # from this page on (SQLite only: infrastructure/sqlite.py), ids as bytes, as CAST gives them
                lenient = True
                current = current.encode() if isinstance(current, str) else current
        if lenient:
            rows = _leniently(store, table, order, after_row)
        for row in rows:
            if row[1] != current:
                if events:
                    yield _uuid(current), events
                current, events = row[1], []
            if row[0] <= upto:  # later ones are caught up by the follower's path
                events.append(row)
        if len(rows) < page:
            break
        after, after_row = (rows[-1][1], rows[-1][2]), rows[-1][0]
    if events:
        yield _uuid(current), events


def _leniently(store: Store, table: str, order: str, after_row: int | None) -> list[StoredRow]:
    """A page of SQLite's events table holding text that is not UTF-8: its text columns read as bytes and decoded
    with U+FFFD (the originator id kept as stored, for the order), the page after the row `after_row`."""
    columns = "rowid, CAST(originator_id AS BLOB), originator_version, CAST(topic AS BLOB), CAST(state AS BLOB)"
    after = "" if after_row is None else (
        f"WHERE (originator_id, originator_version) > (SELECT originator_id, originator_version FROM {table} "
        f"WHERE rowid = {int(after_row)}) ")
    return [(n, stored_id, version, lenient_text(topic), state)
            for n, stored_id, version, topic, state in store.query(f"SELECT {columns} FROM {table} {after}{order}")]


def _same_database(app: Any, store: Store) -> bool:
    """Is the recorder's table in the store's database (a SQLite recorder with a SQLite store, or both on
    PostgreSQL)?

    Each recorder class is looked up among the modules already imported: a recorder of a class whose module was
    never imported cannot exist, and importing the library's PostgreSQL module (and psycopg with it) only to
    find a SQLite recorder is not one cost a rebuild on SQLite should pay (a few hundred milliseconds)."""
    sqlite, postgres = sys.modules.get("eventsourcing.sqlite"), sys.modules.get("eventsourcing.postgres")
    on_sqlite = sqlite is not None and isinstance(app.recorder, sqlite.SQLiteApplicationRecorder)
    # The library's PostgreSQL recorder is subclassed by tramita's (tramita/postgres.py).
    on_postgres = postgres is not None and isinstance(app.recorder, postgres.PostgresApplicationRecorder)
    return on_sqlite and store.dialect == "sqlite" or on_postgres and store.dialect == "postgresql"


def _uuid(value: Any) -> UUID:
    """An originator id as read: PostgreSQL's a UUID, SQLite's its text (or bytes, read leniently), an id that is
    not a UUID as the recorder's stand-in for it (infrastructure/sqlite.py)."""
    return value if isinstance(value, UUID) else readable_id(lenient_text(value))


def _grouped_from_log(app: Any, upto: int) -> Iterator[tuple[UUID, list[StoredRow]]]:
    grouped: dict[UUID, list[StoredRow]] = {}
    for n in app.recorder.select_notifications(0, max(upto, 1), stop=upto, inclusive_of_start=False):
        grouped.setdefault(n.originator_id, []).append((n.id, n.originator_id, n.originator_version, n.topic, n.state))
    for originator_id, events in grouped.items():
        yield originator_id, sorted(events, key=lambda row: row[2])
