"""The SQLite store: the library's factory, datastore and recorder, reading an aggregate's events with one
statement on a connection of the reading thread's own, and writing one process at a time, in turn.

- Reads (`OneStatementReadsRecorder.select_events`): one `SELECT` in autocommit mode, itself one transaction on one
  snapshot of the file, on the thread's own connection (`ReadConnections`), which keeps its compiled statements;
  the library's read wraps it in `BEGIN`/`ROLLBACK` on a connection borrowed from its pool, most of a read's cost.
- Writes (`WriterTurns`): SQLite lets one writer in at a time and makes the others sleep and retry, so under load
  one process's writes starve and hold up its reads. Each save's transaction, the library's own, first takes its
  turn: a lock among the process's threads, then an exclusive `flock` on `<database>.writer` among processes.
- Rows the library cannot read (an originator id that is not a UUID, text that is not UTF-8: SQLite's columns take
  any value) are read as what they hold (`readable_id`, `lenient_text`), so that one edited row does not stop every
  reader of the log; the aggregate it belonged to then lacks it, a gap `tramita verify` names.

The library's pool opens its connections with `cached_statements=True`, a cache of one statement; it offers no
setting for more (docs/upstream.md). Measurements: docs/benchmarks.md.
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
from eventsourcing.persistence import Notification, StoredEvent
from eventsourcing.sqlite import SQLITE3_DEFAULT_LOCK_TIMEOUT, SQLiteApplicationRecorder, SQLiteDatastore, SQLiteFactory
from eventsourcing.utils import Environment

#: The compiled statements each read connection keeps: an act reads its case's events after a version, the
#: statute's, other aggregates' (all of them or after a version) in turn on the same connection.
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
    """One read connection per thread to a database file, in autocommit mode (each read its own transaction on the
    file's last committed state): taking a connection from the library's pool and giving it back cost as much as
    the read. A connection is closed when its thread ends or the store closes; a forked process opens its own and
    never touches its parent's."""

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


class ThreadReadsDatastore(SQLiteDatastore):
    """The library's SQLite datastore with, on a file, `ReadConnections` for the reads of an aggregate's events
    (`readers`; None in memory, where every connection is the library's)."""

    def __init__(self, db_name: str, **settings: Any) -> None:
        super().__init__(db_name, **settings)
        self.readers = None if self.pool.is_sqlite_memory_mode else ReadConnections(
            db_name, self.pool.lock_timeout or SQLITE3_DEFAULT_LOCK_TIMEOUT)

    def close(self) -> None:
        if getattr(self, "readers", None) is not None:
            self.readers.close()
        super().close()


class ThreadReadsFactory(SQLiteFactory):
    """The library's SQLite factory, whose datastore is `ThreadReadsDatastore` (with the library's settings)."""

    def __init__(self, env: Environment | dict[str, str] | None) -> None:
        super().__init__(env)
        library = self.datastore
        self.datastore = ThreadReadsDatastore(
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
