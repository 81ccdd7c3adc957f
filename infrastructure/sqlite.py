"""The SQLite events recorder: the library's, reading an aggregate's events with one statement, and writing them
one process at a time, in turn.

Every act reads the events of its case recorded after the version it holds (none, mostly: the pool's catch-up), and
every API request those of its token. The library reads them inside a transaction of its own, `BEGIN`, the
`SELECT` and a `ROLLBACK`, each statement through its layers of context managers: two thirds of the read. One
`SELECT` in SQLite's autocommit mode is already read in one transaction of its own, on one snapshot of the file, so
here it runs alone, with the library's statement, rows and errors (on the reading thread's own connection: below).

Writers take turns. SQLite lets one writer at a time into the file; a second one, in another process, is told the
file is busy and sleeps (1, 2, 5, 10 ... 100 ms, SQLite's own back-off) before it tries again, while the first
process's next writers go in at once. Under load one process's writes starve, and since the library's connection
pool hands out connections in turn, its waiting writer holds up every read of its process too (the API's token
checks, an act's catch-up). So each save's transaction is taken in turn first: within the process by a lock, and
across processes by an exclusive `flock` on a file beside the database (`<database>.writer`, created empty, holding
nothing): a writer waiting for it sleeps in the kernel and wakes as soon as the previous one commits. The kernel
lets the `flock` go when its process ends, however it ends. A process that does not take it (the `sqlite3` shell,
a process of another version) is still kept out by SQLite's own lock, as before. An in-memory SQLite database has
no file and is left to the library.

A save is the library's own transaction (`BEGIN`, one `INSERT` per event, `COMMIT`) inside its turn. A save
written as one `INSERT ... RETURNING` statement was tried and measured slower (docs/benchmarks.md).

Each connection keeps its compiled statements. The library opens its connections with `cached_statements=True`,
which `sqlite3` reads as a number: a cache of one statement. An act runs several in turn on the same connection
(its case's catch-up, the statute's, `BEGIN`, the `INSERT`), so each pushed the last out and every one was
compiled again, every time: an act's read cost about four times what the same read costs on a connection that
keeps it. `StatementCachingFactory` is the library's SQLite factory whose datastore's pool opens its connections
as the library does, but keeping `STATEMENT_CACHE` statements.

An aggregate's events are read on a connection of the reading thread's own (`ReadConnections`), not one borrowed
from the library's pool: taking a connection from the pool and giving it back cost as much as the read itself.
The connection is the thread's alone, in autocommit mode, so each read is its own transaction on the file's last
committed state, as before. It is closed when its thread ends or the store closes; a process forked with one
opens its own and never touches the parent's.

SQLite's columns take any value, so a database administrator can leave a row the library cannot read: an
originator id that is not a UUID, a topic or an id that is not UTF-8 text. The library then raises on the whole
page of the log, and every reader of the log (the projector, the rebuild, `tramita verify`) would stop at that row
for good. Such a row is read here as what it holds: its text decoded with U+FFFD for what is not UTF-8, and an
originator id that is not a UUID as a stand-in id (`readable_id`), the same every time, that names no aggregate.
The row is then an unreadable aggregate's event of its own, and its real aggregate lacks it: a gap that the
projector records as that aggregate's failure and `verify` names. PostgreSQL's typed columns hold no such row.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing import persistence
from eventsourcing.persistence import InterfaceError, Notification, StoredEvent
from eventsourcing.sqlite import (
    SQLITE3_DEFAULT_LOCK_TIMEOUT, SQLiteApplicationRecorder, SQLiteConnection, SQLiteConnectionPool, SQLiteDatastore,
    SQLiteFactory,
)
from eventsourcing.utils import Environment

#: The compiled statements each connection keeps (the module's docstring). tramita's own statements are a handful
#: (an aggregate's events after a version, all of them, the notifications, `BEGIN`, the `INSERT`, the tracking
#: table's); the rest of the room is for the commands' rarer reads.
STATEMENT_CACHE = 32

#: The library's translation of sqlite3's errors (its `SQLiteTransaction`), most specific first.
_ERRORS: tuple[tuple[type[sqlite3.Error], type[Exception]], ...] = (
    (sqlite3.InterfaceError, persistence.InterfaceError), (sqlite3.DataError, persistence.DataError),
    (sqlite3.OperationalError, persistence.OperationalError), (sqlite3.IntegrityError, persistence.IntegrityError),
    (sqlite3.InternalError, persistence.InternalError), (sqlite3.ProgrammingError, persistence.ProgrammingError),
    (sqlite3.NotSupportedError, persistence.NotSupportedError), (sqlite3.DatabaseError, persistence.DatabaseError),
    (sqlite3.Error, persistence.PersistenceError),
)


class WriterTurns:
    """One writer at a time on one database file: a lock among this process's threads, then an exclusive `flock`
    on `<file>.writer` among processes. The file is readable by its owner only (no other user can hold the turn);
    a process that cannot open it (another user, a read-only folder) writes without taking turns, kept out by
    SQLite's own lock."""

    def __init__(self, database: str) -> None:
        self.path = f"{database}.writer"
        self._threads = threading.Lock()
        self._fd: int | None = None
        self._pid = -1

    @contextmanager
    def turn(self) -> Iterator[None]:
        with self._threads:
            fd = self._file()
            if fd is None:
                yield
                return
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def _file(self) -> int | None:
        """The lock file, opened on the first write of each process: a descriptor inherited across a fork would
        share its lock with the parent, so a child opens its own."""
        if self._pid != os.getpid():
            self._pid = os.getpid()
            try:
                self._fd = os.open(self.path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError:
                self._fd = None
        return self._fd

    def __del__(self) -> None:
        if self._fd is not None and self._pid == os.getpid():
            os.close(self._fd)


class StatementCachingPool(SQLiteConnectionPool):
    """The library's pool of SQLite connections, each opened as the library opens it (autocommit, shared across
    threads, the lock timeout, WAL mode on a file, rows as `sqlite3.Row`) but keeping `STATEMENT_CACHE` compiled
    statements instead of one."""

    def _create_connection(self) -> SQLiteConnection:
        try:
            connection = sqlite3.connect(database=self.db_name, uri=True, check_same_thread=False,
                                         isolation_level=None, cached_statements=STATEMENT_CACHE,
                                         timeout=self.lock_timeout or SQLITE3_DEFAULT_LOCK_TIMEOUT)
        except (sqlite3.Error, TypeError) as error:
            raise InterfaceError(error) from error
        if not self.is_sqlite_memory_mode and not self.is_journal_mode_wal:
            if connection.execute("PRAGMA journal_mode;").fetchone()[0].lower() != "wal":
                connection.execute("PRAGMA journal_mode=WAL;")
                self.journal_mode_was_changed_to_wal = True
            self.is_journal_mode_wal = True
        connection.row_factory = sqlite3.Row
        return SQLiteConnection(sqlite_conn=connection, max_age=self.max_age)


class ReadConnection(sqlite3.Connection):
    """A thread's read connection (a class of its own so that `ReadConnections` can hold it weakly)."""


#: Read connections a forked process inherited: never used nor closed there (SQLite forbids using a connection
#: across a fork), only kept from the garbage collector, which would close them.
_INHERITED: list[ReadConnection] = []
#: How many forks led to this process: a connection opened under another count was opened by an ancestor (counted
#: at the fork, so that a read does not ask the kernel for its process id).
_forks = 0


def _forked() -> None:
    global _forks
    _forks += 1


os.register_at_fork(after_in_child=_forked)


class ReadConnections:
    """One read connection per thread to a database file (the module's docstring)."""

    def __init__(self, db_name: str, timeout: float) -> None:
        self.db_name, self.timeout = db_name, timeout
        self._local = threading.local()
        self._lock = threading.Lock()
        #: Every thread's connection, to close them with the store; a thread's goes when the thread ends.
        self._open: weakref.WeakSet[ReadConnection] = weakref.WeakSet()
        self._closed = False

    def connection(self) -> sqlite3.Connection:
        """The calling thread's connection, opened on its first read (persistence.InterfaceError if the store is
        closed or the file cannot be opened)."""
        held = getattr(self._local, "held", None)
        if self._closed:
            raise persistence.InterfaceError("the store is closed")
        if held is not None:
            if held[0] == _forks:
                return held[1]
            _INHERITED.append(held[1])
        try:
            connection = sqlite3.connect(self.db_name, uri=True, isolation_level=None, timeout=self.timeout,
                                         cached_statements=STATEMENT_CACHE, check_same_thread=False,
                                         factory=ReadConnection)
        except sqlite3.Error as error:
            raise persistence.InterfaceError(error) from error
        with self._lock:
            if self._closed:  # closed while this one was being opened
                connection.close()
                raise persistence.InterfaceError("the store is closed")
            self._open.add(connection)
        self._local.held = (_forks, connection)
        return connection

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for connection in list(self._open):
                if connection not in _INHERITED:
                    connection.close()
            self._open.clear()


class StatementCachingDatastore(SQLiteDatastore):
    """The library's SQLite datastore, with `StatementCachingPool` for its pool and, on a file, `ReadConnections`
    for the reads of an aggregate's events (`readers`, None in memory)."""

    def __init__(self, db_name: str, **settings: Any) -> None:
        super().__init__(db_name, **settings)
        library = self.pool
        self.pool = StatementCachingPool(
            db_name=library.db_name, lock_timeout=library.lock_timeout, pool_size=library.pool_size,
            max_overflow=library.max_overflow, pool_timeout=library.pool_timeout, max_age=library.max_age,
            pre_ping=library.pre_ping)
        library.close()
        self.readers = None if self.pool.is_sqlite_memory_mode else ReadConnections(
            db_name, self.pool.lock_timeout or SQLITE3_DEFAULT_LOCK_TIMEOUT)

    def close(self) -> None:
        if self.readers is not None:
            self.readers.close()
        super().close()


class StatementCachingFactory(SQLiteFactory):
    """The library's SQLite factory, whose datastore is `StatementCachingDatastore` (with the library's
    settings)."""

    def __init__(self, env: Environment | dict[str, str] | None) -> None:
        super().__init__(env)
        library = self.datastore
        self.datastore = StatementCachingDatastore(
            library.pool.db_name, lock_timeout=library.pool.lock_timeout,
            single_row_tracking=library.single_row_tracking, originator_id_type=library.originator_id_type)
        library.close()


#: The namespace of the stand-in ids of originator ids that are not UUIDs (`readable_id`).
UNREADABLE_IDS = uuid5(NAMESPACE_URL, "https://tramita.example/unreadable-originator-id")


def readable_id(stored: Any) -> UUID:
    """An originator id as SQLite stores it (text of 32 hex digits), as a UUID; anything else (the module's
    docstring) as a stand-in id made from what is stored, the same every time, which names no aggregate."""
    try:
        return UUID(stored)
    except (ValueError, TypeError, AttributeError):
        return uuid5(UNREADABLE_IDS, repr(stored))


def lenient_text(stored: Any) -> Any:
    """A text column read as bytes (`CAST(... AS BLOB)`), decoded with U+FFFD where it is not UTF-8; NULL as None."""
    return stored.decode("utf-8", "replace") if isinstance(stored, bytes) else stored


def unreadable_text(error: BaseException) -> bool:
    """Is this sqlite3's (or the library's translation of its) refusal to read a text value that is not UTF-8?"""
    return isinstance(error, (sqlite3.OperationalError, persistence.OperationalError)) \
        and "Could not decode to UTF-8" in str(error)


class OneStatementReadsRecorder(SQLiteApplicationRecorder):
    """The library's SQLite application recorder, whose reads of an aggregate's events are one statement and whose
    saves take turns (the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        pool = self.datastore.pool
        self._turns = None if pool.is_sqlite_memory_mode else WriterTurns(pool.db_name)

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        if self._turns is None:
            return super().insert_events(stored_events, **kwargs)
        with self._turns.turn():
            return super().insert_events(stored_events, **kwargs)

    def select_events(self, originator_id: UUID | str, *, gt: int | None = None, lte: int | None = None,
                      desc: bool = False, limit: int | None = None) -> Sequence[StoredEvent]:
        conditions = ""  # the library's statement, built as the library builds it
        params: list[Any] = [originator_id.hex if isinstance(originator_id, UUID) else originator_id]
        if gt is not None:
            conditions += "AND originator_version>? "
            params.append(gt)
        if lte is not None:
            conditions += "AND originator_version<=? "
            params.append(lte)
        conditions += "ORDER BY originator_version " + ("ASC " if desc is False else "DESC ")
        if limit is not None:
            conditions += "LIMIT ? "
            params.append(limit)
        try:
            rows = self._rows(self.select_events_statement + conditions, params)
        except persistence.OperationalError as error:  # a topic that is not UTF-8: read again (module's docstring)
            if not unreadable_text(error):
                raise
            rows = [(*row[:2], lenient_text(row[2]), row[3]) for row in self._rows(
                f"SELECT originator_id, originator_version, CAST(topic AS BLOB), CAST(state AS BLOB) "
                f"FROM {self.events_table_name} "
                f"WHERE originator_id=? {conditions}", params)]
        convert = self.convert_originator_id
        return [StoredEvent(originator_id=convert(row[0]), originator_version=row[1], topic=row[2], state=row[3])
                for row in rows]

    def _rows(self, statement: str, params: list[Any]) -> list[Any]:
        """The statement's rows, read on the thread's own connection (or, in memory, one from the pool)."""
        readers = getattr(self.datastore, "readers", None)
        if readers is None:  # in memory, or on a datastore of the library's: a connection from its pool
            with self.datastore.get_connection(commit=False) as connection, _translated(), connection.cursor() as c:
                c.execute(statement, params)
                return [tuple(row) for row in c.fetchall()]
        with _translated():
            return readers.connection().execute(statement, params).fetchall()

    def convert_originator_id(self, originator_id: str) -> UUID | str:
        """The library's conversion; an id that is not a UUID as its stand-in (`readable_id`)."""
        return readable_id(originator_id) if self.datastore.originator_id_type == "uuid" else originator_id

    def select_notifications(self, start: int | None, limit: int, stop: int | None = None,
                             topics: Sequence[str] = (), *, inclusive_of_start: bool = True) -> Sequence[Notification]:
        """The library's read of the log; a page holding text that is not UTF-8 read again with its text columns
        decoded leniently (the module's docstring)."""
        try:
            return super().select_notifications(start, limit, stop, topics, inclusive_of_start=inclusive_of_start)
        except persistence.OperationalError as error:
            if not unreadable_text(error):
                raise
        clauses, params = [], []
        if start is not None:
            clauses.append("rowid>=?" if inclusive_of_start else "rowid>?")
            params.append(start)
        if stop is not None:
            clauses.append("rowid<=?")
            params.append(stop)
        if topics:
            clauses.append(f"topic IN ({','.join('?' * len(topics))})")
            params.extend(topics)
        statement = (f"SELECT rowid, CAST(originator_id AS BLOB), originator_version, CAST(topic AS BLOB), "
                     "CAST(state AS BLOB) "
                     f"FROM {self.events_table_name} {'WHERE ' + ' AND '.join(clauses) if clauses else ''} "
                     "ORDER BY rowid LIMIT ?")
        rows = self._rows(statement, [*params, limit])
        return [Notification(id=row[0], originator_id=self.convert_originator_id(lenient_text(row[1])),
                             originator_version=row[2], topic=lenient_text(row[3]), state=row[4]) for row in rows]


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
