"""The follower's aggregates kept between batches, bounded in bytes, the least recently used evicted first.

An aggregate's size is estimated from the byte lengths of the stored events it was built from (their `state`),
which the projector has at hand as it applies them: nothing is measured or serialised for it. On tramita's cases
and municipalities that sum is within a factor of about two of the memory the Python objects take (a case of
requisitions that repeat holds less than its events); the budget is a bound on that estimate, not on the
process's resident memory, which also holds the interpreter, the batch being written and the connections.
"""

from __future__ import annotations

from collections.abc import Mapping

from domain.application.pool import DEFAULT_BUDGET, AggregateCache, byte_budget

__all__ = ["CACHE_BYTES", "CACHE_BYTES_SETTING", "AggregateCache", "cache_bytes"]

#: The default budget: 64 MiB of stored events' bytes (the application's pool has the same).
CACHE_BYTES = DEFAULT_BUDGET
#: The setting that changes it (bytes, 0 or more; 0 keeps only the aggregate last used).
CACHE_BYTES_SETTING = "TRAMITA_PROJECTOR_CACHE_BYTES"


def cache_bytes(environ: Mapping[str, str]) -> int:
    """The follower's cache budget from `TRAMITA_PROJECTOR_CACHE_BYTES` (a whole number of bytes), else the
    default, 64 MiB. Its cache is the pool's `AggregateCache` (domain/application/pool.py)."""
    return byte_budget(CACHE_BYTES_SETTING, environ.get(CACHE_BYTES_SETTING))
