"""Leadership: exactly one scheduler acts at a time, and another takes over when it dies.

- PostgreSQL: a session-level advisory lock (`pg_try_advisory_lock`) on a connection of its own, held for the
  process's life; the server releases it when the session ends, so also when the process is killed.
- SQLite: an exclusive `flock` on `<database file>.scheduler.lock`; the kernel releases it when the process's
  file descriptor closes, so also when it is killed. The holder writes its pid into the file, for the waiter's log.
- memory://: the store lives inside one process; there is nobody to exclude.

A scheduler that does not get the lock logs once that it waits, and for what, and tries again every `poll`
seconds until it gets it or is told to stop.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

#: The fixed name the PostgreSQL lock key is derived from (the same in every tramita scheduler).
LOCK_NAME = "tramita-scheduler"


class LeadershipLostError(Exception):
    """The lock this scheduler held is gone (its database session ended): it must stop acting."""


class Leadership(ABC):
    description: str

    @abstractmethod
    def try_acquire(self) -> bool:
        """Take the lock if it is free; True once held."""

    def holder(self) -> int | None:
        """The pid of the process holding the lock, when it can be told."""
        return None

    def check(self) -> None:
        """Raise LeadershipLostError when the lock held is no longer held."""

    @abstractmethod
    def release(self) -> None:
        """Give the lock up (the process's end gives it up as well)."""


class NoLeadership(Leadership):
    description = "nothing (an in-memory store has one process)"

    def try_acquire(self) -> bool:
        return True

    def release(self) -> None:
        pass


class FileLeadership(Leadership):
    def __init__(self, path: str) -> None:
        self.path = path
        self.description = f"the lock file {path}"
        self._file: Any = None

    def try_acquire(self) -> bool:
        file = open(self.path, "a+")  # noqa: SIM115 - held open for the process's life
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            file.close()
            return False
        file.truncate(0)
        file.write(f"{os.getpid()}\n")
        file.flush()
        self._file = file
        return True

    def holder(self) -> int | None:
        try:
            with open(self.path) as file:
                return int(file.read().strip() or 0) or None
        except (OSError, ValueError):
            return None

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing the descriptor drops the flock
            self._file = None


def lock_key(name: str = LOCK_NAME) -> int:
    """A signed 64-bit advisory lock key derived from `name`."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


class PostgresLeadership(Leadership):
    def __init__(self, conninfo: dict[str, Any], key: int | None = None) -> None:
        self.conninfo, self.key = conninfo, lock_key() if key is None else key
        self.description = f"the PostgreSQL advisory lock {self.key} ({LOCK_NAME})"
        self._connection: Any = None

    def _connect(self) -> Any:
        import psycopg

        # the session names the process, so that a waiting scheduler can say which process leads
        return psycopg.connect(autocommit=True, application_name=f"tramita-scheduler-leader:{os.getpid()}",
                               **self.conninfo)

    def try_acquire(self) -> bool:
        connection = self._connection or self._connect()
        if connection.execute("SELECT pg_try_advisory_lock(%s)", (self.key,)).fetchone()[0]:
            self._connection = connection
            return True
        self._connection = connection  # kept for the next try and for holder()
        return False

    def holder(self) -> int | None:
        if self._connection is None:
            return None
        # a bigint key shows in pg_locks as its high 32 bits (classid) and low 32 bits (objid), objsubid 1
        row = self._connection.execute(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.classid::bigint = %s "
            "AND l.objid::bigint = %s AND l.pid <> pg_backend_pid()",
            ((self.key >> 32) & 0xFFFFFFFF, self.key & 0xFFFFFFFF)).fetchone()
        _, _, pid = (row[0] if row else "").rpartition(":")
        return int(pid) if pid.isdigit() else None

    def check(self) -> None:
        import psycopg

        try:
            held = self._connection.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid()"
            ).fetchone()[0]
        except psycopg.Error as error:
            raise LeadershipLostError(f"{self.description}: the session holding it ended ({error})") from None
        if not held:
            raise LeadershipLostError(f"{self.description} is no longer held")

    def release(self) -> None:
        if self._connection is not None:
            self._connection.close()  # ending the session releases the lock
            self._connection = None


def for_database(database_url: str) -> Leadership:
    """The leadership that fits `TRAMITA_DATABASE_URL`."""
    if database_url.startswith("sqlite:///"):
        return FileLeadership(database_url[len("sqlite:///"):].split("?", 1)[0] + ".scheduler.lock")
    if database_url.startswith(("postgresql://", "postgres://")):
        from infrastructure.store import postgres_conninfo

        return PostgresLeadership(postgres_conninfo(database_url))
    return NoLeadership()


def acquire(leadership: Leadership, stop: threading.Event, *, poll: float,
            log: Callable[..., None]) -> bool:
    """Wait until this scheduler holds the lock (True) or `stop` is set (False); say once that it waits, naming the
    holder: a holder that has just taken the lock may not have written its pid yet, so the line waits for it for
    up to HOLDER_POLLS polls (then says the holder is unknown)."""
    waiting, polls = False, 0
    while not stop.is_set():
        if leadership.try_acquire():
            log("leader", pid=os.getpid(), lock=leadership.description)
            return True
        holder = None if waiting else leadership.holder()
        polls += 1
        if not waiting and (holder is not None or polls > HOLDER_POLLS):
            log("waiting", pid=os.getpid(), lock=leadership.description, holder=holder, poll_seconds=poll)
            waiting = True
        stop.wait(poll)
    return False


#: Polls a waiting scheduler gives a new holder to write its pid before it says the holder is unknown.
HOLDER_POLLS = 50
