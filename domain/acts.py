"""What every recorded act carries: who, under which article, on which legal date, when recorded, chained by hash.

Bitemporal: `occurred_on` is the act's legal date; the library's `timestamp` is when it was recorded,
taken from the clock the application passes in (the domain never reads the clock).
"""

from __future__ import annotations

import dataclasses
from copy import deepcopy
from dataclasses import MISSING, dataclass
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.domain import Aggregate, DomainEvent
from eventsourcing.utils import get_topic

from domain import chain
from domain.errors import IncompetentBodyError, InvalidActError, LegalRuleError, Listing, OR, Sentence, Term
from domain.parameters import Statute

A = TypeVar("A", bound="ChainedAggregate")


@dataclass(frozen=True)
class Actor:
    """The principal recording an act: an id, the competent body's role and, for municipal bodies, the IBGE code."""

    principal: str
    role: str
    municipality: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"principal": self.principal, "role": self.role, "municipality": self.municipality}


@dataclass(frozen=True)
class ActContext:
    """One act's circumstances: who, the legal date, the recording time and today's date (all passed in)."""

    actor: Actor
    occurred_on: date
    recorded_at: datetime
    today: date
    statute: Statute

    def __post_init__(self) -> None:
        """No act has a legal date after today in Rio Branco: every act (a case's, the registry's, a token's) is
        refused here, in the one place each act's context is made, before anything is judged."""
        if self.occurred_on > self.today:
            raise InvalidActError(
                "occurred_on", Sentence(
                    "%(occurred_on)s is in the future (today is %(today)s)",
                    occurred_on=self.occurred_on.isoformat(), today=self.today.isoformat()))

    def require_competent(self, act: str, article: str, municipality: str | None = None) -> None:
        """Refuse unless the actor's role is a competent body for `act` (and acts for `municipality`)."""
        competent = self.statute.in_force("competence.act", self.occurred_on)
        roles = competent.value.get(act)
        if roles is None:
            raise KeyError(f"no competence entry for act {act!r}")
        self.require_role(roles, article, act)
        if municipality is not None and self.actor.municipality != municipality:
            raise IncompetentBodyError(
                article,
                Sentence("%(act)s is recorded by the %(roles)s of municipality %(municipality)s; the actor acts for "
                         "%(actor)s", act=act, roles=Listing(roles, "/"), municipality=municipality,
                         actor=self.actor.municipality or Term("no municipality")),
                competent=roles,
                municipality=municipality,
            )

    def require_role(self, roles: list[str], article: str, act: str) -> None:
        if self.actor.role not in roles:
            raise IncompetentBodyError(
                article,
                Sentence(
                    "%(act)s must be recorded by %(roles)s; %(role)s is not the competent body",
                    act=act, roles=Listing(roles, OR), role=self.actor.role),
                competent=roles,
                role=self.actor.role,
            )


@dataclass(frozen=True)
class Attributed:
    """The fields every act's event carries, and how applying one moves the chain's head."""

    occurred_on: date
    actor: dict[str, Any]
    article: str
    rule_versions: dict[str, str]
    prev_hash: str
    hash: str

    def apply(self, aggregate: Any) -> None:
        occurred_on = self.occurred_on
        aggregate.last_hash = self.hash
        aggregate.last_act, aggregate.last_act_on = type(self).__name__, occurred_on
        latest = aggregate.__dict__.get("last_occurred_on")
        if latest is None or occurred_on > latest:
            aggregate.last_occurred_on = occurred_on
        self.assign(aggregate)

    def assign(self, aggregate: Any) -> None:
        """Assign the event's decisions to the aggregate (never re-derive them)."""


class ChainedAggregate(Aggregate):
    """An aggregate whose events all carry the act's attribution and a per-aggregate hash chain.

    Its state holds `last_hash` (the chain's head), `last_occurred_on` (the latest legal date) and the last act
    applied with its legal date (`last_act`, `last_act_on`).
    """

    class Created(Attributed, Aggregate.Created):
        """The first event of a chained aggregate."""

    class Event(Attributed, Aggregate.Event):
        """Every later event of a chained aggregate."""

    def __deepcopy__(self, memo: dict[int, Any]) -> ChainedAggregate:
        """A private copy (the pool's read outside an act, the library's repository): `copied_state`."""
        copy = object.__new__(type(self))
        memo[id(self)] = copy
        object.__setattr__(copy, "__dict__", copied_state(self.__dict__, memo))
        return copy

    @classmethod
    def _start(
        cls: type[A], event_class: type[Any], ctx: ActContext, *, id: Any, article: str,
        rule_versions: dict[str, str] | None = None, **fields: Any,
    ) -> A:
        """Create the aggregate with its first, chained event."""
        event = _chained_event(event_class, ctx, article, rule_versions, chain.GENESIS, originator_topic=get_topic(cls),
                               originator_id=id, originator_version=cls.INITIAL_VERSION, **fields)
        aggregate = event.mutate(None)
        aggregate.pending_events.append(event)
        return aggregate

    def _record(
        self, event_class: type[Any], ctx: ActContext, *, article: str,
        rule_versions: dict[str, str] | None = None, **fields: Any,
    ) -> None:
        """Append one chained event: attribution, legal date, recording time, rule versions, hashes."""
        event = _chained_event(event_class, ctx, article, rule_versions, self.last_hash, originator_id=self.id,
                               originator_version=self.version + 1, **fields)
        event.mutate(self)
        self.pending_events.append(event)


#: The types of value that nothing changes in place: a copy of an aggregate's state shares them.
_IMMUTABLE = frozenset({str, int, bool, float, bytes, type(None), date, datetime, Decimal, UUID})


def copied_state(value: Any, memo: dict[int, Any]) -> Any:
    """A deep copy of an aggregate's state, as `copy.deepcopy` makes it (`memo` keeps shared parts shared), that
    walks only the containers: strings, numbers, dates, timestamps, decimals and UUIDs are never changed in place,
    so the copy shares them. An aggregate's state is plain dicts and lists of those; any other type is copied by
    `copy.deepcopy` with the same memo. Pickling the whole aggregate, which this replaces, rebuilt every date and
    string, at about twice the cost (docs/benchmarks.md)."""
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    copied = memo.get(id(value))
    if copied is not None:
        return copied
    if kind is dict:
        copied = memo[id(value)] = {}
        for key, item in value.items():
            copied[key] = item if type(item) in _IMMUTABLE else copied_state(item, memo)
        return copied
    if kind is list:
        copied = memo[id(value)] = []
        copied.extend(item if type(item) in _IMMUTABLE else copied_state(item, memo) for item in value)
        return copied
    return deepcopy(value, memo)


def _chained_event(event_class: type[Any], ctx: ActContext, article: str, rule_versions: dict[str, str] | None,
                   prev_hash: str, **fields: Any) -> Any:
    """The event with the act's attribution, its recording time, and its hash over all of that."""
    draft = _new_event(event_class, timestamp=ctx.recorded_at, occurred_on=ctx.occurred_on,
                       actor=ctx.actor.as_dict(), article=article, rule_versions=dict(rule_versions or {}),
                       prev_hash=prev_hash, hash="", **fields)
    # The hash is over the draft's own fields (its `hash` left out), so it is set on the draft itself rather than
    # by `dataclasses.replace`, which would build and validate the whole event a second time.
    object.__setattr__(draft, "hash", chain.hash_of(draft))
    return draft


def _new_event(event_class: type[Any], **fields: Any) -> Any:
    """`event_class(**fields)`, made as the library's mapper makes an event it reads: its fields set as its state,
    in the dataclass's order (so it is stored as the same bytes), without a frozen dataclass's `__setattr__` per
    field (a fifth less: docs/benchmarks.md). Only for a class whose `__init__` is the dataclass's own, with no default
    and no `__post_init__` but the library's check of the id (made here too), and given every field; anything else
    is built by `__init__`, which raises its own error."""
    names = _plain_fields(event_class)
    if names is not None and len(fields) == len(names) and type(fields.get("originator_id")) is UUID:
        try:
            state = {name: fields[name] for name in names}
        except KeyError:
            pass
        else:
            event = object.__new__(event_class)
            object.__setattr__(event, "__dict__", state)
            return event
    return event_class(**fields)


@cache
def _plain_fields(event_class: type[Any]) -> tuple[str, ...] | None:
    """The names of an event class's fields in order, when `_new_event` may set them itself (else None)."""
    init = getattr(event_class.__init__, "__code__", None)
    fields = dataclasses.fields(event_class)
    plain = (init is not None and init.co_filename == "<string>"  # made by `dataclass`, not written by hand
             and event_class.__post_init__ is DomainEvent.__post_init__
             and all(field.init and field.default is MISSING and field.default_factory is MISSING
                     for field in fields))
    return tuple(field.name for field in fields) if plain else None


def require_date(field: str, value: Any) -> date:
    """A legal date is a calendar day (not a timestamp, not text): anything else is refused naming the field."""
    if type(value) is not date:
        raise InvalidActError(field, Sentence("%(value)r is not a date (YYYY-MM-DD)", value=value))
    return value


def require_legal_date(ctx: ActContext, not_before: date | None,
                       what: Term = Term("the case's previous act")) -> None:
    """An act's legal date is not before the previous act it follows (never in the future: `ActContext`)."""
    if not_before is not None and ctx.occurred_on < not_before:
        raise InvalidActError(
            "occurred_on", Sentence(
                "%(occurred_on)s is before %(what)s (%(not_before)s)",
                occurred_on=ctx.occurred_on.isoformat(), what=what, not_before=not_before.isoformat())
        )


def refuse(article: str, message: str, **figures: Any) -> LegalRuleError:
    """Build the refusal to raise: `raise refuse(article, message)`, the article by its id (`art-13`)."""
    return LegalRuleError(article, message, **figures)
