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
  the least recently returned go first when the budget is exceeded.

Code that reads an aggregate outside an act or a read borrowing it (`Borrowing`) gets a private copy, as from
the library's repository.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from copy import deepcopy
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import Mapper, Recorder

#: The default budget: 64 MiB of stored event bytes.
DEFAULT_BUDGET = 64 * 1024 * 1024


class Borrowing:
    """What one act (or read) holds: the aggregates it borrowed or saved, and their sizes in stored bytes."""

    def __init__(self) -> None:
        self.held: dict[UUID, tuple[Any, int]] = {}


_borrowing: ContextVar[Borrowing | None] = ContextVar("tramita_borrowing", default=None)


class AggregatePool:
    """Aggregates by id, each lent to one borrower at a time, the whole bounded in stored bytes."""

    def __init__(self, recorder: Recorder, mapper: Mapper, budget: int = DEFAULT_BUDGET) -> None:
        self.recorder, self.mapper, self.budget = recorder, mapper, budget
        self._lock = threading.Lock()
        self._idle: OrderedDict[UUID, tuple[Any, int]] = OrderedDict()
        self.size = 0

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
            idle = self._idle.pop(aggregate_id, None)
            if idle is not None:
                self.size -= idle[1]
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
        stored = self.recorder.select_events(aggregate_id, gt=aggregate.version if aggregate is not None else None)
        for record in stored:
            aggregate = self.mapper.to_domain_event(record).mutate(aggregate)
            size += len(record.state)
        if aggregate is None:
            raise AggregateNotFoundError(f"Aggregate {aggregate_id!r} not found.")
        return aggregate, size

    def _give_back(self, entries: Iterable[tuple[Any, int]]) -> None:
        with self._lock:
            for aggregate, size in entries:
                if aggregate.pending_events:  # changed but not saved: never pooled
                    continue
                current = self._idle.get(aggregate.id)
                if current is not None:
                    if current[0].version >= aggregate.version:
                        continue
                    self.size -= current[1]
                    del self._idle[aggregate.id]
                if size > self.budget:
                    continue
                self._idle[aggregate.id] = (aggregate, size)
                self.size += size
            while self.size > self.budget and self._idle:
                _, (_, evicted) = self._idle.popitem(last=False)
                self.size -= evicted
