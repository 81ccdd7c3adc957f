"""The follower's aggregates kept between batches, bounded in bytes, the least recently used evicted first.

An aggregate's size is estimated from the byte lengths of the stored events it was built from (their `state`),
which the projector has at hand as it applies them: nothing is measured or serialised for it. On tramita's cases
and municipalities that sum is within a factor of about two of the memory the Python objects take (a case of
requisitions that repeat holds less than its events); the budget is a bound on that estimate, not on the
process's resident memory, which also holds the interpreter, the batch being written and the connections.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

#: The default budget: 64 MiB of stored events' bytes.
CACHE_BYTES = 64 * 1024 * 1024
#: The setting that changes it (bytes, 0 or more; 0 keeps only the aggregate last used).
CACHE_BYTES_SETTING = "TRAMITA_PROJECTOR_CACHE_BYTES"


def cache_bytes(environ: Mapping[str, str]) -> int:
    """The follower's cache budget from `TRAMITA_PROJECTOR_CACHE_BYTES` (a whole number of bytes), else the
    default, 64 MiB."""
    text = environ.get(CACHE_BYTES_SETTING, "").strip().replace("_", "")
    if not text:
        return CACHE_BYTES
    if not text.isdigit():
        raise ValueError(f"{CACHE_BYTES_SETTING}: a whole number of bytes, 0 or more (not {text!r}); "
                         f"the default is {CACHE_BYTES} (64 MiB)")
    return int(text)


class AggregateCache:
    """Aggregates by key (the aggregate id as an int) with the estimated size of each; putting one makes it the
    most recently used, and while the sizes sum to more than the budget the least recently used are evicted
    (never the one just put, so consecutive events of an aggregate larger than the budget still meet it)."""

    def __init__(self, budget: int = CACHE_BYTES) -> None:
        if budget < 0:
            raise ValueError(f"the cache's budget must be at least 0 bytes, not {budget}")
        self.budget = budget
        self.bytes = 0
        self._entries: OrderedDict[int, tuple[Any, int]] = OrderedDict()
        self._last: int | None = None

    def get(self, key: int) -> tuple[Any, int] | None:
        """The aggregate and its estimated size, or None (the order of use changes only on `put`)."""
        return self._entries.get(key)

    def put(self, key: int, aggregate: Any, size: int) -> None:
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

    def pop(self, key: int) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self.bytes -= entry[1]
        if key == self._last:
            self._last = None

    def clear(self) -> None:
        self._entries.clear()
        self.bytes, self._last = 0, None

    def keys(self) -> list[int]:
        """The keys from the least to the most recently used."""
        return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries
