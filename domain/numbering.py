"""The case numbers of each year (Art. 8: the petition opens a case): LC35-YYYY-NNNN, in order, never twice.

`CaseNumbering` was defined in `domain/application.py` until the application became a package; the events it
stored then name that module in their topics, so those topics are registered here and keep loading.
"""

from __future__ import annotations

from uuid import UUID, uuid5

from eventsourcing.utils import register_topic

from domain.acts import ActContext, ChainedAggregate
from domain.registry import REGISTRY_NAMESPACE


class CaseNumbering(ChainedAggregate):
    """The system's case numbers for one year: LC35-YYYY-NNNN, assigned in order, never twice."""

    @staticmethod
    def id_for(year: int) -> UUID:
        return uuid5(REGISTRY_NAMESPACE, f"case-numbering:{year}")

    class Started(ChainedAggregate.Created):
        year: int

        def assign(self, numbering: CaseNumbering) -> None:
            numbering.year, numbering.assigned = self.year, 0

    class NumberAssigned(ChainedAggregate.Event):
        number: str

        def assign(self, numbering: CaseNumbering) -> None:
            numbering.assigned += 1

    @classmethod
    def start(cls, ctx: ActContext, year: int) -> CaseNumbering:
        return cls._start(cls.Started, ctx, id=cls.id_for(year), article="art-8", year=year)

    def assign_next(self, ctx: ActContext) -> str:
        number = f"LC35-{self.year}-{self.assigned + 1:04d}"
        self._record(self.NumberAssigned, ctx, article="art-8", number=number)
        return number


#: Topics stored before the class moved here (tramita 2026.1: `domain/application.py`).
MOVED_FROM = "domain.application"
register_topic(f"{MOVED_FROM}:CaseNumbering", CaseNumbering)
register_topic(f"{MOVED_FROM}:CaseNumbering.Started", CaseNumbering.Started)
register_topic(f"{MOVED_FROM}:CaseNumbering.NumberAssigned", CaseNumbering.NumberAssigned)
