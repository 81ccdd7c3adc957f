"""The SQLite events recorder: the library's, reading an aggregate's events with one statement.

Every act reads the events of its case recorded after the version it holds (none, mostly: the pool's catch-up), and
every API request those of its token. The library reads them inside a transaction of its own, `BEGIN`, the
`SELECT` and a `ROLLBACK`, each statement through its layers of context managers: two thirds of the read. One
`SELECT` in SQLite's autocommit mode is already read in one transaction of its own, on one snapshot of the file, so
here it runs alone, on a connection from the library's pool, with the library's statement, rows and errors.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from eventsourcing import persistence
from eventsourcing.persistence import StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder

#: The library's translation of sqlite3's errors (its `SQLiteTransaction`), most specific first.
_ERRORS: tuple[tuple[type[sqlite3.Error], type[Exception]], ...] = (
    (sqlite3.InterfaceError, persistence.InterfaceError), (sqlite3.DataError, persistence.DataError),
    (sqlite3.OperationalError, persistence.OperationalError), (sqlite3.IntegrityError, persistence.IntegrityError),
    (sqlite3.InternalError, persistence.InternalError), (sqlite3.ProgrammingError, persistence.ProgrammingError),
    (sqlite3.NotSupportedError, persistence.NotSupportedError), (sqlite3.DatabaseError, persistence.DatabaseError),
    (sqlite3.Error, persistence.PersistenceError),
)


class OneStatementReadsRecorder(SQLiteApplicationRecorder):
    """The library's SQLite application recorder, whose reads of an aggregate's events are one statement."""

    def select_events(self, originator_id: UUID | str, *, gt: int | None = None, lte: int | None = None,
                      desc: bool = False, limit: int | None = None) -> Sequence[StoredEvent]:
        statement = self.select_events_statement  # the library's statement, built as the library builds it
        params: list[Any] = [originator_id.hex if isinstance(originator_id, UUID) else originator_id]
        if gt is not None:
            statement += "AND originator_version>? "
            params.append(gt)
        if lte is not None:
            statement += "AND originator_version<=? "
            params.append(lte)
        statement += "ORDER BY originator_version " + ("ASC " if desc is False else "DESC ")
        if limit is not None:
            statement += "LIMIT ? "
            params.append(limit)
        with self.datastore.get_connection(commit=False) as connection, _translated(), connection.cursor() as c:
            c.execute(statement, params)
            rows = c.fetchall()
        return [StoredEvent(originator_id=self.convert_originator_id(row["originator_id"]),
                            originator_version=row["originator_version"], topic=row["topic"], state=row["state"])
                for row in rows]


@contextmanager
def _translated() -> Iterator[None]:
    """sqlite3's errors raised as the library's (what its transactions raise)."""
    try:
        yield
    except sqlite3.Error as error:
        for raised, translated in _ERRORS:
            if isinstance(error, raised):
                raise translated(error) from error
        raise
