"""What a projector's batch is made of: the projections it writes (their live or side-by-side tables and
positions), the aggregates it touched, and the conflict that rolls it back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from projections.failures import Failure
from projections.schema import Projection


class TrackingConflict(Exception):
    """A projection's position or table generation changed under the batch; it was rolled back."""


@dataclass
class Target:
    """One projection being written: its live or side-by-side tables, where it has got to, and the aggregates it
    could not write (ids, from `projection_failures`)."""

    projection: Projection
    tracking_name: str
    suffix: str
    position: int = 0
    token: str = ""
    failing: set[str] = field(default_factory=set)

    def physical(self, table: str) -> str:
        return f"{table}{self.suffix}"


@dataclass
class Touched:
    """An aggregate a batch touched: its state at the batch's end, the last notification id that touched it, and
    the id of its first event when that is in the batch."""

    kind: str
    aggregate: Any
    last_id: int
    first_id: int | None
    topic: str = ""


@dataclass
class Batch:
    count: int
    end: int
    touched: dict[int, Touched]
    failures: dict[int, Failure] = field(default_factory=dict)
    """Aggregates of the batch whose events could not be applied (by aggregate id), left out of `touched`'s
    later events."""
