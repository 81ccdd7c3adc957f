"""The PostgreSQL events recorder: one round trip per save, notifications still committed in order.

The library can insert a save's events by calling a database function (`POSTGRES_ENABLE_DB_FUNCTIONS`), one
statement instead of several round trips while the events table is locked, which halves how long each save holds
the lock (the ceiling of saves per second, whatever the number of writers). The library's function does not take
that lock, though: without it, a save numbered 10 may commit after one numbered 11, and a follower that has read
11 (the projector, the audit log) would never see 10. This recorder's function takes the lock first, as the
library's statement path does, inside the one call (docs/operations.md, "PostgreSQL").
"""

from __future__ import annotations

from typing import Any

from eventsourcing.postgres import PostgresApplicationRecorder
from psycopg.sql import SQL, Identifier

FUNCTION = "tramita_insert_events_{}"


class OrderedInsertRecorder(PostgresApplicationRecorder):
    """The library's application recorder, with an insert function that locks the events table first."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        schema = Identifier(self.datastore.schema)
        self.pg_function_name_insert_events = FUNCTION.format(self.datastore.originator_id_type)
        name = Identifier(self.pg_function_name_insert_events)
        self.sql_invoke_pg_function_insert_events = SQL("SELECT * FROM {schema}.{name}((%s))").format(
            schema=schema, name=name)
        self.sql_create_statements[self.create_insert_function_statement_index] = SQL(
            "CREATE OR REPLACE FUNCTION {schema}.{name}(events {schema}.{event}[]) "
            "RETURNS SETOF bigint LANGUAGE plpgsql AS $BODY$ BEGIN"
            "    SET LOCAL lock_timeout = '{lock_timeout}s';"
            "    LOCK TABLE {schema}.{table} IN EXCLUSIVE MODE;"
            "    NOTIFY {channel};"
            "    RETURN QUERY INSERT INTO {schema}.{table} AS t (originator_id, originator_version, topic, state)"
            "    SELECT originator_id, originator_version, topic, state FROM unnest(events)"
            "    RETURNING notification_id;"
            " END; $BODY$"
        ).format(schema=schema, name=name, event=Identifier(self.stored_event_type_name),
                 lock_timeout=self.datastore.lock_timeout, channel=Identifier(self.channel_name),
                 table=Identifier(self.events_table_name))
