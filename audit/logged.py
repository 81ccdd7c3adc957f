"""What the audit log holds of one aggregate, for the check every act makes of what it reads (domain/application/
pool.py): the chain hash logged for each of its events from a version on, in one indexed query of `audit_leaves`.

The pool reads this before the store, so a leaf found here names an event committed before the store's read: one
the store then lacks was deleted. A leaf record that is not what the writer stores (an edited row of the tree) is
left out here: it says nothing of the events, and the verdicts (`GET /verify`, `tramita verify`) name it.

On PostgreSQL, given the application's recorder, the leaves and the aggregate's stored events are read in one
statement (`logged_and_stored`): one snapshot, so a leaf read names an event the same read returns unless it was
deleted, as reading the log first guarantees, in one round trip to the server instead of two; an act's first read
also takes the statute's new amendments (`alongside`), which every act asks for. On SQLite the reads stay in the
process, and the pool and the statute make them apart.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent

from audit.tables import count_of, read_text, text_of
from infrastructure.store import Store


class LoggedHashes:
    """The audit log's leaves of one aggregate, read from the store's `audit_leaves` (the pool's `EventLog`)."""

    def __init__(self, store: Store, recorder: Any = None) -> None:
        self.store = store
        self._exists = False
        dialect = store.dialect
        self._sql = (f"SELECT {count_of(dialect, 'originator_version')}, {text_of(dialect, 'event_hash')} "
                     "FROM audit_leaves WHERE originator_id = ? AND originator_version >= ?")
        #: On PostgreSQL, given the recorder: its events table, and whether its ids are text (None: SQLite).
        self._events: tuple[str, bool] | None = None
        datastore = getattr(recorder, "datastore", None)
        if dialect == "postgresql" and datastore is not None and getattr(recorder, "events_table_name", None):
            self._events = (f"{quoted(datastore.schema)}.{quoted(recorder.events_table_name)}",
                            datastore.originator_id_type == "text")

    def logged(self, aggregate_id: UUID, from_version: int) -> dict[int, str] | None:
        """The chain hash logged for each event of the aggregate from `from_version` on, by version; None while
        the store has no log (`tramita migrate` makes it)."""
        if not self._present():
            return None
        rows = self.store.query(self._sql, (str(aggregate_id), from_version))
        return {version: text for version, value in rows
                if type(version) is int and (text := read_text(value)) is not None}

    def logged_and_stored(self, aggregate_id: UUID, from_version: int, after: int | None,
                          alongside: tuple[UUID, int | None] | None = None) -> tuple[dict[int, str], list[StoredEvent],
                                                                                     list[StoredEvent]] | None:
        """`logged(aggregate_id, from_version)` and the aggregate's stored events after version `after` (all of them
        when None), in version order, read in one statement; with `alongside` (another aggregate's id and a
        version, or None), that aggregate's stored events after it too. None when this store reads them apart
        (SQLite) or has no log yet."""
        if self._events is None or not self._present():
            return None
        events, text_ids = self._events

        def stored(kind: int, originator: UUID, version: int | None) -> tuple[str, list[Any]]:
            sql = f"SELECT {kind}, originator_version, topic, state, NULL FROM {events} WHERE originator_id = ?"
            params: list[Any] = [str(originator) if text_ids else originator]
            if version is not None:
                sql, params = f"{sql} AND originator_version > ?", [*params, version]
            return sql, params

        parts = [stored(0, aggregate_id, after), (
            "SELECT 1, originator_version, NULL, NULL, event_hash FROM audit_leaves WHERE originator_id = ? "
            "AND originator_version >= ?", [str(aggregate_id), from_version])]
        if alongside is not None:
            parts.append(stored(2, *alongside))
        rows = self.store.query(" UNION ALL ".join(sql for sql, _ in parts) + " ORDER BY 1, 2",
                                [param for _, params in parts for param in params])
        logged: dict[int, str] = {}
        read: tuple[list[StoredEvent], list[StoredEvent]] = ([], [])
        for kind, version, topic, state, value in rows:
            if kind == 1:
                if type(version) is int and (text := read_text(value)) is not None:
                    logged[version] = text
                continue
            originator = aggregate_id if kind == 0 else alongside[0]
            read[kind // 2].append(StoredEvent(originator_id=originator, originator_version=version, topic=topic,
                                               state=bytes(state) if state is not None else b""))
        return logged, read[0], read[1]

    def _present(self) -> bool:
        if not self._exists:
            if not self.store.table_exists("audit_leaves"):
                return False
            self._exists = True
        return True


def quoted(name: str) -> str:
    """A PostgreSQL identifier quoted (a double quote in it doubled)."""
    return '"' + name.replace('"', '""') + '"'
