"""Aggregates kept between acts and lent to one act at a time, never copied.

The library's repository hands out a deep copy of every aggregate it caches, so that a command that fails half
way cannot corrupt the cache; for a long case that copy was most of an act's cost, and it grew with the case.
Here an act (or a read) borrows the cached aggregate itself, alone: while it is lent, the pool does not hold it,
so no other thread can see it, and a second borrower of the same aggregate builds its own from the store.

- After the act's save, its aggregates go back to the pool at their new version (unless a newer one is there).
- On any refusal, conflict or error, everything the act borrowed or created is dropped: a half-applied
  aggregate never returns to the pool, and the next act replays it from the store.
- A borrowed aggregate is first brought up to date from the store (the events another process recorded since),
  and checked: no act is judged on a store that the hash chain or the audit log contradicts (`StoreCheck`).
- The pool is bounded in bytes: each aggregate counts the stored bytes of the events it was built from, and
  the least recently returned go first when the budget is exceeded (`AggregateCache`, which the projector's
  follower keeps its aggregates in too).

Code that reads an aggregate outside an act or a read borrowing it (`Borrowing`) gets a private copy, as from
the library's repository.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from copy import deepcopy
from typing import Any, Protocol
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import Mapper, Recorder

from domain import chain
from domain.errors import Sentence, StoredEventsAlteredError, StoredEventsUnreadableError

#: The default budget: 64 MiB of stored event bytes.
DEFAULT_BUDGET = 64 * 1024 * 1024


def byte_budget(setting: str, text: str | None) -> int:
    """A budget in bytes from its setting's text: a whole number, 0 or more (`_` may group digits); unset or
    blank: the default."""
    text = (text or "").strip().replace("_", "")
    if not text:
        return DEFAULT_BUDGET
    if not text.isascii() or not text.isdigit():
        raise ValueError(f"{setting}: a whole number of bytes, 0 or more, not {setting}={text!r}; the default is "
                         f"{DEFAULT_BUDGET} (64 MiB)")
    return int(text)


def replay(recorder: Recorder, mapper: Mapper, aggregate_id: UUID, aggregate: Any = None, size: int = 0,
           **select: Any) -> tuple[Any, int]:
    """Apply an aggregate's stored events (`select`: the recorder's `gt`, `lte`) to `aggregate` (None: from its
    first), and add their stored bytes to `size`: the aggregate (None when there was no event) and its size."""
    for record in recorder.select_events(aggregate_id, **select):
        try:
            aggregate = mapper.to_domain_event(record).mutate(aggregate)
        except Exception as error:  # the stored row was edited: named, not an unexplained failure
            raise StoredEventsUnreadableError(aggregate_id, record.originator_version,
                                              f"{type(error).__name__}: {error}") from error
        size += len(record.state)
    return aggregate, size


class AggregateCache:
    """Aggregates by key (an aggregate id) with the estimated size of each; putting one makes it the
    most recently used, and while the sizes sum to more than the budget the least recently used are evicted
    (never the one just put, so consecutive events of an aggregate larger than the budget still meet it)."""

    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        if budget < 0:
            raise ValueError(f"the cache's budget must be at least 0 bytes, not {budget}")
        self.budget = budget
        self.bytes = 0
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._last: Hashable | None = None

    def get(self, key: Hashable) -> tuple[Any, int] | None:
        """The aggregate and its estimated size, or None (the order of use changes only on `put`)."""
        return self._entries.get(key)

    def put(self, key: Hashable, aggregate: Any, size: int) -> None:
        entries = self._entries
        previous = entries.get(key)
        if previous is not None:
            self.bytes -= previous[1]
        entries[key] = (aggregate, size)
        self.bytes += size
        if key != self._last:  # consecutive events of one aggregate: already the most recent entry
            entries.move_to_end(key)
            self._last = key
        while self.bytes > self.budget and len(entries) > 1:
            _, (_, evicted) = entries.popitem(last=False)
            self.bytes -= evicted

    def pop(self, key: Hashable) -> tuple[Any, int] | None:
        """Take the aggregate and its size out (None when it is not kept)."""
        entry = self._entries.pop(key, None)
        if entry is not None:
            self.bytes -= entry[1]
        if key == self._last:
            self._last = None
        return entry

    def clear(self) -> None:
        self._entries.clear()
        self.bytes, self._last = 0, None

    def keys(self) -> list[Hashable]:
        """The keys from the least to the most recently used."""
        return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries




class EventLog(Protocol):
    """What the pool needs of the audit log (audit/logged.py `LoggedHashes`), which the wiring passes in: the log is
    the audit package's, which the domain does not import."""

    def logged(self, aggregate_id: UUID, from_version: int) -> dict[int, str] | None:
        """The chain hash the log holds for each of the aggregate's events from `from_version` on, by version
        (None: this store keeps no log)."""

    def logged_and_stored(self, aggregate_id: UUID, from_version: int, after: int | None,
                          alongside: tuple[UUID, int | None] | None = None,
                          ) -> tuple[dict[int, str], list[Any], list[Any]] | None:
        """`logged` and the aggregate's stored events after version `after` (all when None), and those of the
        `alongside` aggregate after its version, read together in one snapshot where the store allows it (None:
        the pool reads the log, then the store)."""


#: Why a stored event is refused (`StoredEventsAlteredError.reason`).
GAP = "the events before it are not stored: they were deleted"
LINK = "its prev_hash is not the hash of the event stored before it: an event was deleted or replaced"
CONTENT = "its stored content no longer gives its hash: its stored bytes were altered"
DELETED = "the audit log holds it but the store no longer does: it was deleted"
REWRITTEN = "its hash is not the one the audit log holds for it: it was rewritten after it was logged"
CHANGED = "the stored event this process last read is gone or its bytes changed: it was deleted or altered"


def label_of(aggregate: Any) -> Any:
    """How a refusal names an aggregate: a case by its number, a municipality by its name, a year's numbering by
    its year, the statute's amendments as such (None: by its id)."""
    if aggregate is None:
        return None
    number = getattr(aggregate, "number", None)
    if isinstance(number, str):
        return number
    name, key = getattr(aggregate, "name", None), getattr(aggregate, "key", None)
    if isinstance(name, str):
        return f"{name} ({key})" if isinstance(key, str) else name
    year = getattr(aggregate, "year", None)
    if isinstance(year, int):
        return Sentence("the case numbering of %(year)s", year=str(year))
    return Sentence("the statute's amendments") if isinstance(getattr(aggregate, "amendments", None), list) else None


class Borrowing:
    """What one act (or read) holds: the aggregates it borrowed or saved, with their sizes in stored bytes and the
    stored bytes of their last event (None: not known)."""

    def __init__(self) -> None:
        self.held: dict[UUID, tuple[Any, int, bytes | None]] = {}
        #: The stored events the pool's `alongside` aggregate had after the version it named, read with the first
        #: aggregate borrowed (None: not read so), until `read_alongside` takes them.
        self.alongside: dict[UUID, list[Any]] | None = None


_borrowing: ContextVar[Borrowing | None] = ContextVar("tramita_borrowing", default=None)


class AggregatePool:
    """Aggregates by id, each lent to one borrower at a time, the whole bounded in stored bytes."""

    def __init__(self, recorder: Recorder, mapper: Mapper, budget: int = DEFAULT_BUDGET) -> None:
        self.recorder, self.mapper = recorder, mapper
        self._lock = threading.Lock()
        #: The aggregates not lent, least recently returned first (each with its last event's stored bytes).
        self._idle = AggregateCache(budget)
        #: The audit log the aggregates are checked against (None: the hash chain only).
        self.log: EventLog | None = None
        #: Told of every aggregate found altered, before the refusal is raised (the application's tamper alarm).
        self.on_altered: Any = None
        #: Another aggregate every act reads after its first (the statute's amendments): its id and the version
        #: held of it, whose newer events are read with an act's first aggregate where the log reads in one
        #: statement, and taken by `read_alongside` (None: none).
        self.alongside: Callable[[], tuple[UUID, int | None]] | None = None

    @property
    def budget(self) -> int:
        return self._idle.budget

    @budget.setter
    def budget(self, budget: int) -> None:
        self._idle.budget = budget

    @property
    def size(self) -> int:
        """The stored bytes of the aggregates kept (not lent)."""
        return self._idle.bytes

    @contextmanager
    def borrowing(self) -> Iterator[Borrowing]:
        """Borrow for one act or read: on success, what was held returns; on any exception, it is dropped."""
        outer = _borrowing.get()
        if outer is not None:  # a borrowing inside another shares it; a failure inside drops all it holds
            try:
                yield outer
            except BaseException:
                outer.held.clear()
                raise
            return
        borrowing = Borrowing()
        token = _borrowing.set(borrowing)
        try:
            yield borrowing
        except BaseException:
            borrowing.held.clear()
            raise
        else:
            self._give_back(borrowing.held.values())
        finally:
            _borrowing.reset(token)

    def get(self, aggregate_id: UUID) -> Any:
        """The aggregate, up to date with the store and checked against it (AggregateNotFoundError if it has no
        event; StoredEventsAlteredError if the store contradicts its chain or the audit log).

        Inside a borrowing, the pool's own object, lent to it alone (the same object on every get of the act);
        outside one, a private copy.
        """
        borrowing = _borrowing.get()
        if borrowing is not None and aggregate_id in borrowing.held:
            return borrowing.held[aggregate_id][0]
        with self._lock:
            idle = self._idle.pop(aggregate_id)
        (aggregate, head), size = idle if idle is not None else ((None, None), 0)
        riding = borrowing if borrowing is not None and borrowing.alongside is None and self.alongside else None
        try:
            aggregate, size, head = self._catch_up(aggregate_id, aggregate, size, head, riding)
        except StoredEventsAlteredError as altered:
            if self.on_altered is not None:
                self.on_altered(altered)
            raise
        if borrowing is not None:
            borrowing.held[aggregate_id] = (aggregate, size, head)
            return aggregate
        copy = deepcopy(aggregate)
        self._give_back([(aggregate, size, head)])
        return copy

    def read_alongside(self, aggregate_id: UUID) -> list[Any] | None:
        """The stored events of the `alongside` aggregate read with this borrowing's first aggregate, once (None:
        not read so; the caller reads the store)."""
        borrowing = _borrowing.get()
        if borrowing is None or not borrowing.alongside:
            return None
        return borrowing.alongside.pop(aggregate_id, None)

    def built(self, aggregate_id: UUID) -> Any:
        """The aggregate built afresh from the store and checked as `get` checks it, neither pooled nor lent: the
        caller's own (AggregateNotFoundError, StoredEventsAlteredError as `get`)."""
        try:
            return self._catch_up(aggregate_id, None, 0, None)[0]
        except StoredEventsAlteredError as altered:
            if self.on_altered is not None:
                self.on_altered(altered)
            raise

    def saved(self, aggregates: Iterable[Any], recordings: Iterable[Any]) -> None:
        """After a save: the saved aggregates are held at their new version, their new events' bytes counted."""
        borrowing = _borrowing.get()
        if borrowing is None:
            return
        added: dict[UUID, int] = {}
        heads: dict[UUID, bytes] = {}
        for recording in recordings:
            originator = recording.domain_event.originator_id
            added[originator] = added.get(originator, 0) + len(recording.notification.state)
            heads[originator] = recording.notification.state
        for aggregate in aggregates:
            if aggregate is None or not hasattr(aggregate, "id"):
                continue
            _, size, _ = borrowing.held.get(aggregate.id, (None, 0, None))
            borrowing.held[aggregate.id] = (aggregate, size + added.get(aggregate.id, 0), heads.get(aggregate.id))

    def _catch_up(self, aggregate_id: UUID, aggregate: Any, size: int, head: bytes | None,
                  riding: Borrowing | None = None) -> tuple[Any, int, bytes | None]:
        """Apply the events recorded after the aggregate's version (all of them when there is none yet), each
        checked against the chain, then the whole against the audit log.

        The log is read first, or with the store in one snapshot: a leaf it holds names an event committed before,
        which the store's read must then return, so a leaf the store lacks is a deletion, never an event committed
        meanwhile. A pooled aggregate's last event is read again with the new ones: gone or changed, the aggregate
        is built afresh from the store, checked whole, and refused. `riding`: the borrowing whose first read this
        is, which takes the `alongside` aggregate's new events in the same statement."""
        version = aggregate.version if aggregate is not None else 0
        after = version - 1 if version else None
        alongside = self.alongside() if riding is not None and self.alongside is not None else None
        together = (self.log.logged_and_stored(aggregate_id, max(version, 1), after, alongside)
                    if self.log is not None else None)
        if together is not None:
            logged, records, ridden = together
            if riding is not None and alongside is not None:
                riding.alongside = {alongside[0]: ridden}
        else:
            logged = self.log.logged(aggregate_id, max(version, 1)) if self.log is not None else None
            records = self.recorder.select_events(aggregate_id, gt=after)
        known: dict[int, str] = {}
        if aggregate is not None:
            if not records or records[0].originator_version != version or (head is not None
                                                                            and records[0].state != head):
                try:
                    self._catch_up(aggregate_id, None, 0, None)  # names a deletion or an edit the store shows
                except AggregateNotFoundError:
                    pass
                raise StoredEventsAlteredError(aggregate_id, version, Sentence(CHANGED), label_of(aggregate))
            records = records[1:]
            if getattr(aggregate, "last_hash", None) is not None:
                known[version] = aggregate.last_hash
        aggregate, size, head = self._apply(aggregate_id, aggregate, size, head, records, known)
        if logged:
            self._against_log(aggregate_id, aggregate, logged, known)
        if aggregate is None:
            raise AggregateNotFoundError(f"Aggregate {aggregate_id!r} not found.")
        return aggregate, size, head

    def _apply(self, aggregate_id: UUID, aggregate: Any, size: int, head: bytes | None, records: list[Any],
               known: dict[int, str]) -> tuple[Any, int, bytes | None]:
        """Apply `records` in order, each the next version, linked to the one before and hashing to its stored
        hash; `known` gets each applied event's hash by version."""
        expected = aggregate.version + 1 if aggregate is not None else 1
        previous = getattr(aggregate, "last_hash", chain.GENESIS) if aggregate is not None else chain.GENESIS
        for record in records:
            if record.originator_version != expected:
                raise StoredEventsAlteredError(aggregate_id, expected, Sentence(GAP), label_of(aggregate))
            try:
                event = self.mapper.to_domain_event(record)
            except Exception as error:  # the stored row was edited: named, not an unexplained failure
                raise StoredEventsUnreadableError(aggregate_id, record.originator_version,
                                                  f"{type(error).__name__}: {error}") from error
            stored_hash = getattr(event, "hash", None)
            if stored_hash is not None:
                if event.prev_hash != previous:
                    raise StoredEventsAlteredError(aggregate_id, expected, Sentence(LINK), label_of(aggregate))
                if chain.recomputed_hash(event) != stored_hash:
                    raise StoredEventsAlteredError(aggregate_id, expected, Sentence(CONTENT), label_of(aggregate))
                previous = known[expected] = stored_hash
            try:
                aggregate = event.mutate(aggregate)
            except Exception as error:
                raise StoredEventsUnreadableError(aggregate_id, record.originator_version,
                                                  f"{type(error).__name__}: {error}") from error
            size += len(record.state)
            head = record.state
            expected += 1
        return aggregate, size, head

    @staticmethod
    def _against_log(aggregate_id: UUID, aggregate: Any, logged: dict[int, str], known: dict[int, str]) -> None:
        """Every event the log holds from the version read on is stored (none beyond the aggregate's version),
        with the hash the log holds."""
        version = aggregate.version if aggregate is not None else 0
        beyond = [v for v in logged if v > version]
        if beyond:
            raise StoredEventsAlteredError(aggregate_id, min(beyond), Sentence(DELETED), label_of(aggregate))
        for logged_version, logged_hash in sorted(logged.items()):
            if logged_version in known and known[logged_version] != logged_hash:
                raise StoredEventsAlteredError(aggregate_id, logged_version, Sentence(REWRITTEN),
                                               label_of(aggregate))

    def _give_back(self, entries: Iterable[tuple[Any, int, bytes | None]]) -> None:
        with self._lock:
            for aggregate, size, head in entries:
                if aggregate.pending_events:  # changed but not saved: never pooled
                    continue
                current = self._idle.get(aggregate.id)
                if current is not None and current[0][0].version >= aggregate.version:
                    continue
                if size > self._idle.budget:  # larger than the whole budget: not kept
                    self._idle.pop(aggregate.id)
                    continue
                self._idle.put(aggregate.id, (aggregate, head), size)
