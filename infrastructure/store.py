"""Where the read models live: in the same database as the events, reached through one small SQL dialect.

SQL is written once with `?` placeholders; on PostgreSQL they become `%s`. Every write goes through
`transaction()`, which on SQLite takes the write lock at its start (BEGIN IMMEDIATE) and on PostgreSQL opens an
explicit transaction, so that a projection's rows and its tracking position commit together or not at all.
"""

from __future__ import annotations

import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any
from uuid import UUID

#: How long a projection write waits for SQLite's write lock held by an act being recorded (seconds).
SQLITE_BUSY_TIMEOUT = 30

if TYPE_CHECKING:
    from domain.application import Tramita


class NotMigratedError(Exception):
    """The projections' tables were never created: `tramita migrate` creates them, once."""


class Store(ABC):
    """A connection to the projections' database and the differences between SQLite and PostgreSQL."""

    dialect: str
    #: Errors of the database that pass (a lock held too long, a deadlock, a lost connection): retry later.
    transient_errors: tuple[type[BaseException], ...] = ()
    #: A key or constraint refused a row (the row is at fault, not the database).
    integrity_errors: tuple[type[BaseException], ...] = ()
    #: Every error the database driver raises ...
    database_errors: tuple[type[BaseException], ...] = ()
    #: ... and those of them that refuse a row's values (a value out of range, a duplicate key): that row's fault,
    #: not the database's. Any other database error is the database's, and no row is blamed for it.
    row_errors: tuple[type[BaseException], ...] = ()

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Cursor]:
        """A write transaction: committed when the block ends, rolled back if it raises."""

    @abstractmethod
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of a read."""

    @abstractmethod
    def query_dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of a read, as column -> value."""

    @abstractmethod
    def explain(self, sql: str, params: Sequence[Any] = ()) -> str:
        """The database's query plan for `sql`, as text."""

    @abstractmethod
    def table_exists(self, name: str) -> bool:
        """Is there a table of that name (in the current schema)?"""

    @abstractmethod
    def close(self) -> None:
        """Close the connection."""

    def lenient_reader(self) -> Store:
        """A store reading the same database that reads any text a column holds (the caller closes it when it is
        not this one). PostgreSQL refuses text that is not UTF-8 when it is written: this one."""
        return self


class SQLiteStore(Store):
    dialect = "sqlite"
    transient_errors = (sqlite3.OperationalError,)
    integrity_errors = (sqlite3.IntegrityError,)
    database_errors = (sqlite3.Error,)
    row_errors = (sqlite3.DataError, sqlite3.IntegrityError)

    def __init__(self, path: str) -> None:
        self.path = path
        self.connection = sqlite3.connect(path, isolation_level=None, timeout=SQLITE_BUSY_TIMEOUT,
                                          check_same_thread=False)
        if path != ":memory:":
            # WAL with synchronous=NORMAL: a commit is atomic and survives a crash of the process; only a power
            # loss may drop the last commits, rows and tracking position together (never one without the other).
            self.connection.execute("PRAGMA journal_mode=WAL")
            self.connection.execute("PRAGMA synchronous=NORMAL")

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        cursor = self.connection.cursor()
        cursor.execute("BEGIN IMMEDIATE")
        try:
            yield Cursor(cursor, "?")
        except BaseException:
            cursor.execute("ROLLBACK")
            raise
        cursor.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.connection.execute(sql, tuple(params)).fetchall()

    def query_dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cursor = self.connection.execute(sql, tuple(params))
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]

    def explain(self, sql: str, params: Sequence[Any] = ()) -> str:
        return "\n".join(str(row[-1]) for row in self.query(f"EXPLAIN QUERY PLAN {sql}", params))

    def table_exists(self, name: str) -> bool:
        return bool(self.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))

    def close(self) -> None:
        self.connection.close()

    def lenient_reader(self) -> Store:
        """Another connection to the file whose text reads never fail: SQLite keeps whatever bytes an administrator
        writes into a text column, and the driver raises on any that are not UTF-8; these read as U+FFFD. (An
        in-memory database is only this connection's: this one.)"""
        if self.path == ":memory:":
            return self
        reader = SQLiteStore(self.path)
        reader.connection.text_factory = _lenient_text
        return reader


def _lenient_text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


class PostgresStore(Store):
    dialect = "postgresql"

    def __init__(self, conninfo: dict[str, Any]) -> None:
        import psycopg

        self.conninfo = conninfo
        # deadlocks, serialization failures, lock timeouts and lost connections are all OperationalError
        self.transient_errors = (psycopg.OperationalError,)
        self.integrity_errors = (psycopg.IntegrityError,)
        self.database_errors = (psycopg.Error,)
        # SQLSTATE class 22 (data exception: NUL in text, a number out of range) and 23 (a constraint)
        self.row_errors = (psycopg.DataError, psycopg.IntegrityError)
        self._connect = lambda: psycopg.connect(autocommit=True, application_name="tramita-projections", **conninfo)
        self.connection = self._connect()

    def _live(self) -> Any:
        """The connection, opened again if it was lost (a server restart: the failed batch rolled back with it)."""
        if self.connection.closed:
            self.connection = self._connect()
        return self.connection

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        connection = self._live()
        with connection.transaction(), connection.cursor() as cursor:
            yield Cursor(cursor, "%s")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._live().cursor() as cursor:
            cursor.execute(_pg(sql), tuple(params))
            return cursor.fetchall() if cursor.description else []

    def query_dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._live().cursor() as cursor:
            cursor.execute(_pg(sql), tuple(params))
            names = [c.name for c in cursor.description]
            return [dict(zip(names, row)) for row in cursor.fetchall()]

    def explain(self, sql: str, params: Sequence[Any] = ()) -> str:
        return "\n".join(row[0] for row in self.query(f"EXPLAIN {sql}", params))

    def table_exists(self, name: str) -> bool:
        return bool(self.query("SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() "
                               "AND table_name = ?", (name,)))

    def close(self) -> None:
        self.connection.close()


class Cursor:
    """A cursor in an open transaction, taking `?` placeholders on both databases."""

    def __init__(self, cursor: Any, placeholder: str) -> None:
        self.cursor, self.placeholder = cursor, placeholder

    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else _pg(sql)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        self.cursor.execute(self._sql(sql), tuple(params))
        return self

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self.cursor.executemany(self._sql(sql), rows)

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.cursor.fetchall()

    @property
    def rowcount(self) -> int:
        return self.cursor.rowcount


def _pg(sql: str) -> str:
    return sql.replace("%", "%%").replace("?", "%s")


def postgres_conninfo(database_url: str) -> dict[str, Any]:
    """psycopg's connection keywords for the URL, read through the event store's own mapping of it (one parse:
    the projections are always in the events' database and schema)."""
    from infrastructure.persistence import persistence_env

    env = persistence_env(database_url)
    info: dict[str, Any] = {"dbname": env["POSTGRES_DBNAME"], "host": env["POSTGRES_HOST"] or None,
                            "port": env["POSTGRES_PORT"], "user": env["POSTGRES_USER"],
                            "options": f"-c search_path={env.get('POSTGRES_SCHEMA') or 'public'}"}
    if env["POSTGRES_PASSWORD"]:
        info["password"] = env["POSTGRES_PASSWORD"]
    return info


def open_store(database_url: str) -> Store:
    """The projections' store for `TRAMITA_DATABASE_URL`: the events' own database.

    With the in-memory event store (memory://, tests and trials) the tables live in an in-memory SQLite database
    of this process.
    """
    if database_url in ("memory://", "memory:"):
        return SQLiteStore(":memory:")
    if database_url.startswith("sqlite:///"):
        return SQLiteStore(database_url[len("sqlite:///"):].split("?", 1)[0])
    if database_url.startswith(("postgresql://", "postgres://")):
        return PostgresStore(postgres_conninfo(database_url))
    raise ValueError(f"TRAMITA_DATABASE_URL: unknown scheme in {database_url!r} "
                     "(memory://, sqlite:///path, postgresql://user:pass@host:port/db)")


#: Aggregate ids asked about per query by `recorded_aggregates`.
RECORDED_CHUNK = 500


def recorded_aggregates(app: Tramita, store: Store, aggregate_ids: Sequence[UUID]) -> set[UUID]:
    """Which of these aggregates the event store holds (their first event is stored).

    On SQLite and PostgreSQL the events' table is in the store's own database: it is read a chunk of ids at a
    time, in the store's connection (the library's recorder reads one aggregate per query: on PostgreSQL a round
    trip each). Its SQLite recorder keeps an id as its 32 hex digits, its PostgreSQL one as a uuid. In memory the
    recorder is asked for each.
    """
    table = getattr(app.recorder, "events_table_name", None)
    if table is None:
        return {aggregate_id for aggregate_id in aggregate_ids if app.recorder.select_events(aggregate_id, limit=1)}
    found: set[UUID] = set()
    for i in range(0, len(aggregate_ids), RECORDED_CHUNK):
        chunk = aggregate_ids[i:i + RECORDED_CHUNK]
        params = list(chunk) if store.dialect == "postgresql" else [aggregate_id.hex for aggregate_id in chunk]
        found |= {UUID(str(row[0])) for row in store.query(
            f"SELECT originator_id FROM {table} WHERE originator_version = 1 "
            f"AND originator_id IN ({', '.join('?' * len(chunk))})", params)}
    return found


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
