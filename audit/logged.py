"""What the audit log holds of one aggregate, for the check every act makes of what it reads (domain/application/
pool.py): the chain hash logged for each of its events from a version on, in one indexed query of `audit_leaves`.

The pool reads this before the store, so a leaf found here names an event committed before the store's read: one
the store then lacks was deleted. A leaf record that is not what the writer stores (an edited row of the tree) is
left out here: it says nothing of the events, and the verdicts (`GET /verify`, `tramita verify`) name it.
"""

from __future__ import annotations

from uuid import UUID

from audit.tables import count_of, read_text, text_of
from infrastructure.store import Store


class LoggedHashes:
    """The audit log's leaves of one aggregate, read from the store's `audit_leaves` (the pool's `EventLog`)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._exists = False
        dialect = store.dialect
        self._sql = (f"SELECT {count_of(dialect, 'originator_version')}, {text_of(dialect, 'event_hash')} "
                     "FROM audit_leaves WHERE originator_id = ? AND originator_version >= ?")

    def logged(self, aggregate_id: UUID, from_version: int) -> dict[int, str] | None:
        """The chain hash logged for each event of the aggregate from `from_version` on, by version; None while
        the store has no log (`tramita migrate` makes it)."""
        if not self._exists:
            if not self.store.table_exists("audit_leaves"):
                return None
            self._exists = True
        rows = self.store.query(self._sql, (str(aggregate_id), from_version))
        return {version: text for version, value in rows
                if type(version) is int and (text := read_text(value)) is not None}
