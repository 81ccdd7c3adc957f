"""Reading and auditing: a case as of a legal date, a version or a moment; its timeline, export and chain."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, TypeVar
from uuid import UUID

from domain import chain
from domain.acts import Actor
from domain.application.base import Acted, ApplicationBase
from domain.case import Case
from domain.errors import CaseNotFoundError, InvalidActError, Sentence

SYSTEM_ACTOR = Actor("tramita", "scheduler")
T = TypeVar("T")

#: The attributes of a case that its documents show (as its acts assigned them).
CASE_DOCUMENT_FIELDS = (
    "number", "kind", "stage", "initiator", "municipalities", "receiving", "areas", "proposed_name", "district",
    "signature_count", "signatures_per_area", "documents", "impediments", "frozen", "opened_on", "requisitions",
    "findings", "councils",
    "requirements", "dispensation", "plebiscite", "result", "communicated_on", "registered_on", "bill", "law",
    "administrator_list", "administrator", "installation", "remuneration", "organic_law", "extinction_request",
    "deadlines", "communications", "breaches", "bills", "archived", "concluded_on", "attachments",
)


def event_row(event: Any) -> dict[str, Any]:
    """One event as a timeline row (shared by the CLI, the API and exports)."""
    common = {"originator_id", "originator_version", "timestamp", "occurred_on", "actor", "article",
              "rule_versions", "prev_hash", "hash", "originator_topic", "signature", chain.UPCAST_MARK}
    return {
        "sequence": event.originator_version,
        "type": type(event).__qualname__,
        "occurred_on": event.occurred_on.isoformat(),
        "recorded_at": event.timestamp.isoformat(),
        "actor": event.actor,
        "article": event.article,
        "rule_versions": event.rule_versions,
        "payload": {k: v for k, v in vars(event).items() if k not in common},
        "prev_hash": event.prev_hash,
        "hash": event.hash,
        "signature": getattr(event, "signature", None),
    }


@dataclass
class ChainReport:
    """`verify`'s verdict on one aggregate's chain: the first event that does not match, if any."""

    aggregate_id: str
    label: str
    events: int
    ok: bool
    first_bad_version: int | None = None
    first_bad_type: str | None = None
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))




class Reads(ApplicationBase):
    """Reading and auditing."""

    # ------------------------------------------------------------------ reading and auditing

    def case_exists(self, case_ref: str | UUID) -> bool:
        return isinstance(self._get_or_none(self.resolve_case(case_ref)), Case)

    def get_case(self, case_ref: str | UUID, *, version: int | None = None) -> Case:
        return self._get_case(self.resolve_case(case_ref), version=version, reference=case_ref)

    def case_as_of(self, case_ref: str | UUID, as_of: date) -> Case | None:
        """The case as of a legal date: every act dated on or before it (acts are in legal-date order, so they
        are the first events of the case), replayed in one pass that stops at the first later act."""
        return self._case_until(case_ref, lambda event: event.occurred_on > as_of)

    def ask_case(self, case_ref: str | UUID, question: Callable[[Case], T]) -> T:
        """`question`'s answer about the case as it stands, asked of the pool's own case, borrowed for the read
        (as `case_view` reads it) instead of the private copy `get_case` makes, which costs as much as an act.

        The question only reads the case, and answers with values of its own (text, numbers, new lists): nothing
        in the answer may be part of the case, since the next act changes the case's lists and dicts in place.
        """
        with self.pool.borrowing():
            return question(self.get_case(case_ref))

    def case_at(self, case_ref: str | UUID, *, as_of: date | None = None, version: int | None = None,
                recorded_before: datetime | None = None) -> Case | None:
        """The case as of a legal date, at a version, or as the system knew it before a moment (at most one).

        None when the case did not exist then (no act dated by `as_of`, none recorded before `recorded_before`).
        Outside a borrowing (`case_view`), the case returned is the caller's own copy.
        """
        if sum(x is not None for x in (as_of, version, recorded_before)) > 1:
            raise InvalidActError("as_of", "give at most one of as_of, version and recorded_before")
        if as_of is not None:
            return self.case_as_of(case_ref, as_of)
        if recorded_before is not None:
            if recorded_before.tzinfo is None:
                raise InvalidActError("recorded_before", "give a time zone (e.g. 2026-11-30T12:00:00Z)")
            # Each act is recorded after the case's previous one, so those recorded before a moment come first.
            return self._case_until(case_ref, lambda event: event.timestamp >= recorded_before)
        if version is not None:
            latest = self.get_case(case_ref)
            if not 1 <= version <= latest.version:
                raise InvalidActError("version", Sentence(
                    "the case has versions 1 to %(version)s; %(version2)s is none",
                    version=latest.version, version2=version))
            return latest if version == latest.version else self.get_case(case_ref, version=version)
        return self.get_case(case_ref)

    def case_view(self, case_ref: str | UUID, *, as_of: date | None = None, version: int | None = None,
                  recorded_before: datetime | None = None) -> tuple[dict[str, Any], int] | None:
        """`GET /cases/{id}`: the case's document (`case_document`, next acts on `as_of` or today) and version,
        read from the pool's own case, borrowed for the read; None when the case did not exist then.

        The document is copied before the case goes back (the next act changes the case's lists in place).
        """
        with self.pool.borrowing():
            case = self.case_at(case_ref, as_of=as_of, version=version, recorded_before=recorded_before)
            if case is None:
                return None
            document = self.case_document(case, on=as_of)
            return pickle.loads(pickle.dumps(document, protocol=pickle.HIGHEST_PROTOCOL)), case.version

    def act_events(self, acted: Acted) -> list[dict[str, Any]]:
        """What an act decided: its events on the case as timeline rows (read back for a replayed retry)."""
        events = acted.events or self.events.get(acted.case_id, gt=(acted.decided_from or acted.version) - 1,
                                                 lte=acted.version)
        return [event_row(event) for event in events]

    def _case_until(self, case_ref: str | UUID, after: Any) -> Case | None:
        """The case replayed from its first event up to (not including) the first event `after` holds for."""
        case_id = self.resolve_case(case_ref)
        case, first = None, True
        for event in self.events.get(case_id):
            if first and not isinstance(event, Case.PetitionFiled):
                break
            first = False
            if after(event):
                break
            case = event.mutate(case)
        if first:
            raise CaseNotFoundError(case_ref)
        return case

    def case_document(self, case: Case, *, on: date | None = None) -> dict[str, Any]:
        """The case's state as plain data: what its acts assigned, its open obligations at that version, and the
        acts its lifecycle admits next (`next_acts`, with their articles and competent bodies) on the legal day
        `on` (default: today in Rio Branco)."""
        document = {name: getattr(case, name) for name in CASE_DOCUMENT_FIELDS}
        document["impediments"] = case.impediments_on(self.statute, on or self.today())
        document["deadlines"] = case.standing_deadlines()
        document.update(id=str(case.id), version=case.version, last_act=case.last_act, last_act_on=case.last_act_on,
                        new_municipality=case.new_municipality,
                        obligations=case.obligations(self._context_at(SYSTEM_ACTOR, self.clock(),
                                                                      case.last_occurred_on)),
                        next_acts=self.next_acts(case, on))
        return document

    def next_acts(self, case: Case, on: date | None = None) -> list[dict[str, Any]]:
        """The acts the case's lifecycle admits next on the legal day `on` (default: today in Rio Branco)."""
        return case.next_acts_document(self.statute, on or self.today())

    def export_lines(self, case_ref: str | UUID) -> Iterator[dict[str, Any]]:
        """The case file for offline checking: each event as its canonical hashed document plus its `hash`."""
        for event in self.events_of(case_ref):
            yield chain.export_document(event)

    def events_of(self, case_ref: str | UUID) -> list[Any]:
        """A case's events in order (another aggregate's id, a token's say, is no case)."""
        case_id = self.resolve_case(case_ref)
        events = list(self.events.get(case_id))
        if not events or not isinstance(events[0], Case.PetitionFiled):
            raise CaseNotFoundError(case_ref)
        return events

    def verify_case(self, case_ref: str | UUID) -> ChainReport:
        """`verify` for a case only."""
        self.events_of(case_ref)
        return self.verify(case_ref)

    def timeline(self, case_ref: str | UUID, as_of: date | None = None) -> list[dict[str, Any]]:
        """The case's acts in order: legal date, recorded time, actor, article, rule versions, payload, hashes."""
        rows = []
        for event in self.events_of(case_ref):
            if as_of is not None and event.occurred_on > as_of:
                break
            rows.append(event_row(event))
        return rows

    def verify(self, aggregate_ref: str | UUID) -> ChainReport:
        """Recompute one aggregate's hash chain from the stored bytes; name the first event that does not match."""
        return self.verified_events(aggregate_ref)[0]

    def verified_events(self, aggregate_ref: str | UUID) -> tuple[ChainReport, list[Any]]:
        """`verify`, and the events it decoded from the stored bytes on the way (all of them when the chain holds;
        up to the first that does not, when it does not), so that a reader who needs both reads the case once."""
        aggregate_id = self.resolve_case(aggregate_ref)
        stored = list(self.recorder.select_events(aggregate_id))
        if not stored:
            raise CaseNotFoundError(aggregate_ref)
        label = str(aggregate_id)
        previous = chain.GENESIS
        events: list[Any] = []
        for index, record in enumerate(stored):
            try:
                event = self.mapper.to_domain_event(record)
                if index == 0:
                    label = getattr(event, "number", None) or getattr(event, "key", None) or label
            except Exception as error:  # the stored bytes no longer decode: that is the finding
                topic = record.topic if isinstance(record.topic, str) else repr(record.topic)
                return ChainReport(str(aggregate_id), label, index + 1, False, record.originator_version,
                                   topic.rsplit(":", 1)[-1], f"the stored event does not decode: {error}"), events
            if event.prev_hash != previous:
                return ChainReport(str(aggregate_id), label, index + 1, False, event.originator_version,
                                   type(event).__qualname__, "prev_hash does not match the previous event's hash"), \
                    events
            recomputed = chain.recomputed_hash(event)
            if recomputed != event.hash:
                again = f"{recomputed[:12]}…" if recomputed else "none (its text is no UTF-8)"
                return ChainReport(str(aggregate_id), label, index + 1, False, event.originator_version,
                                   type(event).__qualname__, f"content altered: stored hash {event.hash[:12]}…, "
                                   f"recomputed {again}"), events
            previous = event.hash
            events.append(event)
        return ChainReport(str(aggregate_id), label, len(stored), True), events

    def aggregate_ids(self) -> Iterator[UUID]:
        """Every aggregate in the store, in order of first appearance in the notification log."""
        seen: set[UUID] = set()
        start = 1
        while True:
            notifications = self.recorder.select_notifications(start=start, limit=500)
            if not notifications:
                return
            for notification in notifications:
                if notification.originator_id not in seen:
                    seen.add(notification.originator_id)
                    yield notification.originator_id
            start = notifications[-1].id + 1

    def verify_all(self) -> list[ChainReport]:
        return [self.verify(aggregate_id) for aggregate_id in self.aggregate_ids()]
