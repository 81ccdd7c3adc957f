"""Aggregates kept between acts and lent to one act at a time, never copied.

The library's repository hands out a deep copy of every aggregate it caches, so that a command that fails half
way cannot corrupt the cache; for a long case that copy was most of an act's cost, and it grew with the case.
Here an act (or a read) borrows the cached aggregate itself, alone: while it is lent, the pool does not hold it,
so no other thread can see it, and a second borrower of the same aggregate builds its own from the store.

- After the act's save, its aggregates go back to the pool at their new version (unless a newer one is there).
- On any refusal, conflict or error, everything the act borrowed or created is dropped: a half-applied
  aggregate never returns to the pool, and the next act replays it from the store.
- A borrowed aggregate is first brought up to date from the store (the events another process recorded since).
- The pool is bounded in bytes: each aggregate counts the stored bytes of the events it was built from, and
  the least recently returned go first when the budget is exceeded (`AggregateCache`, which the projector's
  follower keeps its aggregates in too).

Code that reads an aggregate outside an act or a read borrowing it (`Borrowing`) gets a private copy, as from
the library's repository.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from copy import deepcopy
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import Mapper, Recorder

from domain.errors import StoredEventsUnreadableError

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




class Borrowing:
    """What one act (or read) holds: the aggregates it borrowed or saved, and their sizes in stored bytes."""

    def __init__(self) -> None:
        self.held: dict[UUID, tuple[Any, int]] = {}


_borrowing: ContextVar[Borrowing | None] = ContextVar("tramita_borrowing", default=None)


class AggregatePool:
    """Aggregates by id, each lent to one borrower at a time, the whole bounded in stored bytes."""

    def __init__(self, recorder: Recorder, mapper: Mapper, budget: int = DEFAULT_BUDGET) -> None:
        self.recorder, self.mapper = recorder, mapper
        self._lock = threading.Lock()
        #: The aggregates not lent, least recently returned first.
        self._idle = AggregateCache(budget)

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
        """The aggregate, up to date with the store (AggregateNotFoundError if it has no event).

        Inside a borrowing, the pool's own object, lent to it alone (the same object on every get of the act);
        outside one, a private copy.
        """
        borrowing = _borrowing.get()
        if borrowing is not None and aggregate_id in borrowing.held:
            return borrowing.held[aggregate_id][0]
        with self._lock:
            idle = self._idle.pop(aggregate_id)
        aggregate, size = idle if idle is not None else (None, 0)
        aggregate, size = self._catch_up(aggregate_id, aggregate, size)
        if borrowing is not None:
            borrowing.held[aggregate_id] = (aggregate, size)
            return aggregate
        copy = deepcopy(aggregate)
        self._give_back([(aggregate, size)])
        return copy

    def saved(self, aggregates: Iterable[Any], recordings: Iterable[Any]) -> None:
        """After a save: the saved aggregates are held at their new version, their new events' bytes counted."""
        borrowing = _borrowing.get()
        if borrowing is None:
            return
        added: dict[UUID, int] = {}
        for recording in recordings:
            originator = recording.domain_event.originator_id
            added[originator] = added.get(originator, 0) + len(recording.notification.state)
        for aggregate in aggregates:
            if aggregate is None or not hasattr(aggregate, "id"):
                continue
            _, size = borrowing.held.get(aggregate.id, (None, 0))
            borrowing.held[aggregate.id] = (aggregate, size + added.get(aggregate.id, 0))

    def _catch_up(self, aggregate_id: UUID, aggregate: Any, size: int) -> tuple[Any, int]:
        """Apply the events recorded after the aggregate's version (all of them when there is none yet)."""
        aggregate, size = replay(self.recorder, self.mapper, aggregate_id, aggregate, size,
                                 gt=aggregate.version if aggregate is not None else None)
        if aggregate is None:
            raise AggregateNotFoundError(f"Aggregate {aggregate_id!r} not found.")
        return aggregate, size

    def _give_back(self, entries: Iterable[tuple[Any, int]]) -> None:
        with self._lock:
            for aggregate, size in entries:
                if aggregate.pending_events:  # changed but not saved: never pooled
                    continue
                current = self._idle.get(aggregate.id)
                if current is not None and current[0].version >= aggregate.version:
                    continue
                if size > self._idle.budget:  # larger than the whole budget: not kept
                    self._idle.pop(aggregate.id)
                    continue
                self._idle.put(aggregate.id, aggregate, size)
