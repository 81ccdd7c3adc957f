"""How the projector writes a batch's aggregates into a projection's tables: each aggregate's rows replaced by those
of its current state, then the columns that aggregates of other kinds set in them (an alert `missed` ends its
deadline's alerts: `rows.AMENDS`).

A table whose rows depend on other aggregates being recorded (`rows.RECORDED`: a deadline's `missed` alert) is
written knowing which of them the event store holds, asked once for all the batch's aggregates. What it holds is
never undone, and an aggregate it does not show yet has its first event in this batch or a later one, whose
amendment sets the column then (amendments are written after the rows): the rows end as the aggregates' final
states give them, followed batch by batch or rebuilt, whichever batch each event falls in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from projections.rows import AMENDS, KINDS, OWNERS, RECORDED, ROWS, storable, storable_row
from infrastructure.store import Cursor

#: Rows deleted per statement when an aggregate's rows are replaced.
DELETE_CHUNK = 500


def write(tx: Cursor, target: Any, aggregates: list[Any], fresh: list[bool],
          recorded: Callable[[list[UUID]], set[UUID]]) -> None:
    """Replace every table row of the given aggregates (those of the kinds the target's projection holds) with
    the rows of their current state, and set the columns the others amend. `target` is the projector's Target;
    `fresh`: the aggregates whose first event is in this batch (no row yet: nothing to delete); `recorded`: which
    of these aggregate ids the event store holds."""
    projection = target.projection
    owned = [(a, new) for a, new in zip(aggregates, fresh) if KINDS[type(a)] in projection.aggregates]
    amending = [a for a in aggregates if KINDS[type(a)] in projection.amended_by]
    for table in projection.tables:
        physical = target.physical(table.name)
        if owned:
            owners = [OWNERS[KINDS[type(a)]](a) for a, new in owned if not new]
            for i in range(0, len(owners), DELETE_CHUNK):
                chunk = owners[i:i + DELETE_CHUNK]
                tx.execute(f"DELETE FROM {physical} WHERE {table.owner} IN ({', '.join('?' * len(chunk))})", chunk)
            rows = [storable_row(row) for row in table_rows(table.name, [a for a, _ in owned], recorded)]
            columns = table.column_names
            tx.executemany(f"INSERT INTO {physical} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                           rows)
        if amending and table.name in AMENDS:  # after the rows: an amendment of this batch holds over them
            for key, values in (change for a in amending for change in AMENDS[table.name](a)):
                tx.execute(f"UPDATE {physical} SET {', '.join(f'{column} = ?' for column in values)} "
                           f"WHERE {' AND '.join(f'{column} = ?' for column in table.key)}",
                           [*map(storable, values.values()), *map(storable, key)])


def table_rows(table: str, aggregates: list[Any], recorded: Callable[[list[UUID]], set[UUID]]) -> list[tuple]:
    """The table's rows of these aggregates; for a table of `rows.RECORDED`, knowing which of the other
    aggregates they depend on are recorded (one look-up for all of them), each aggregate's dependencies taken
    once and handed to its rows."""
    depends = RECORDED.get(table)
    if depends is None:
        return [row for a in aggregates for row in ROWS[table](a)]
    dependencies = [depends(a) for a in aggregates]
    held = recorded([other for ids in dependencies for other in ids])
    return [row for a, ids in zip(aggregates, dependencies) for row in ROWS[table](a, held, ids)]
