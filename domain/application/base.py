"""The service's shared ground: one act is get -> act -> save, every aggregate of the act in one save.

A concurrent save of the same case or municipality raises the library's IntegrityError; the act is then
judged again on fresh state, a bounded number of times, and never overwrites what the other save wrote.
Legal dates are stored as ISO text; with a signing key, every event is stored with its signature.
"""

from __future__ import annotations

import copy
import random
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Protocol, TypeVar
from uuid import UUID
from zoneinfo import ZoneInfo

from eventsourcing.application import AggregateNotFoundError, Application, ProcessingEvent
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError, JSONTranscoder, Mapper, Transcoder

from domain.access import IdempotentRequest, Receipt
from domain.application.pool import AggregatePool, EventLog, byte_budget
from domain.application.transcoder import DateAsISO, DomainMapper, StoredJSONTranscoder
from domain.acts import ActContext, Actor, require_date
from domain.amendments import StatuteAmendments
from domain.calendar import Calendar
from domain.case import Case, case_id_for
from domain.errors import (
    CaseNotFoundError, IdempotencyKeyReusedError, InvalidActError, LegalRuleError, MunicipalityNotFoundError, SaidError,
    Sentence, StaleVersionError, StoredEventsAlteredError,
)
from domain.parameters import Statute, shipped_statute
from domain.registry import Municipality


class Signer(Protocol):
    """What the application needs of the audit log's key (audit/notes.py `Signer`), which the wiring passes in."""

    def sign_recorded(self, originator_id: UUID, version: int, chain_hash: str) -> str:
        """The signature of the event at (originator_id, version) whose chain hash is `chain_hash`."""


class SigningMapper(DomainMapper):
    """Stores every event with the application's signature over its leaf entry, made when it is recorded.

    The signature is a stored member of the event (`signature`) that the chain hash leaves out (domain/chain.py),
    so events recorded before a key existed keep their hashes, and the log commits to the same entries with or
    without it. See docs/audit.md, "Event signatures".
    """

    def __init__(self, mapper: Mapper, signer: Signer) -> None:
        super().__init__(mapper.transcoder, mapper.compressor, mapper.cipher)
        self.signer = signer

    def to_stored_event(self, domain_event: Any) -> Any:
        chain_hash = getattr(domain_event, "hash", None)
        if chain_hash:
            signature = self.signer.sign_recorded(domain_event.originator_id, domain_event.originator_version,
                                                  chain_hash)
            object.__setattr__(domain_event, "signature", signature)
        return super().to_stored_event(domain_event)


class StatuteInForce:
    """The shipped statute with the amendments recorded in the store, rebuilt when a new one is recorded.

    Every act reads the statute through `current`, which asks the store for amendments after the last one seen
    (an indexed read of one small aggregate; on PostgreSQL made with the act's first read, in its statement), so an
    amendment recorded by any process is taken up by the next act of every process (API workers, scheduler)
    without a restart.
    """

    def __init__(self, recorder: Any, mapper: Mapper, shipped: Statute,
                 checked: Callable[[UUID], Any] | None = None,
                 read_alongside: Callable[[UUID], list[Any] | None] | None = None) -> None:
        self.recorder, self.mapper, self.shipped = recorder, mapper, shipped
        #: The amendments built afresh from the store and checked as an act's aggregates are (the pool's), when a
        #: new one is seen: an amendment deleted or altered refuses the act rather than change the law it reads.
        self.checked = checked
        #: The amendments' new events as the act's first read took them with its aggregate (the pool's
        #: `read_alongside`, one statement on PostgreSQL; None: the store is asked here).
        self.read_alongside = read_alongside
        self._lock = threading.Lock()
        self._book: StatuteAmendments | None = None
        self._statute = shipped

    def current(self) -> Statute:
        # The store is read without the lock (a read waits on the database behind writers, and every act of the
        # process would wait behind it); the lock only orders applying what was read.
        book = self._book
        records = self.read_alongside(StatuteAmendments.ID) if self.read_alongside is not None else None
        if records is None:
            records = self.recorder.select_events(StatuteAmendments.ID, gt=book.version if book is not None else None)
        if not records:
            return self._statute  # what was in force when the read began, or newer (another thread's read)
        if self.checked is not None:  # built and checked outside the lock (the tamper alarm reads the statute)
            fresh = self.checked(StatuteAmendments.ID)
            with self._lock:
                if self._book is None or fresh.version > self._book.version:
                    self._statute, self._book = self.shipped.amended(fresh.amendments), fresh
                return self._statute
        with self._lock:
            book = self._book
            fresh = [record for record in records if book is None or record.originator_version > book.version]
            if fresh:  # applied to a copy, so that an event that fails to apply leaves the statute as it was
                book = copy.deepcopy(book)
                for record in fresh:
                    book = self.mapper.to_domain_event(record).mutate(book)
                self._statute, self._book = self.shipped.amended(book.amendments), book
            return self._statute

    def held(self) -> tuple[UUID, int | None]:
        """The amendments' id and the version this process holds of them (None: none read yet), for a read of
        the newer ones alongside an act's first aggregate (the pool's `alongside`)."""
        book = self._book
        return StatuteAmendments.ID, book.version if book is not None else None

    def last_read(self) -> Statute:
        """The statute as this process last read it, without asking the store (an amendment recorded since by
        another process is not in it): for a check that is made again on the statute `current` gives."""
        return self._statute


class ConcurrentActError(SaidError):
    """The act kept meeting concurrent saves of the same aggregates; nothing was recorded."""


@dataclass
class Acted:
    """What an act returns: the case, its new version, and what the act decided (e.g. the case number)."""

    case_id: UUID
    number: str
    version: int
    result: Any = None
    #: True when an `Idempotency-Key` retry was answered from the receipt of the original act.
    replayed: bool = False
    #: The aggregate's last event as stored: its chain hash, its notification id and when it was recorded (None
    #: for a replayed retry until read back), for the signed receipt of the act.
    hash: str | None = None
    notification_id: int | None = None
    recorded_at: datetime | None = None
    #: The first of the case's versions the act recorded (None: only the last is known, from an old receipt).
    decided_from: int | None = None
    #: The case's events the act recorded (empty for a replayed retry until read back): what the act decided.
    events: list[Any] = field(default_factory=list)

    def stored(self, recordings: list[Any]) -> Acted:
        """Fill in how the aggregate's last event was stored, from the save's recordings."""
        first = self.decided_from or self.version
        for recording in recordings:
            event = recording.domain_event
            if event.originator_id != self.case_id or not first <= event.originator_version <= self.version:
                continue
            self.events.append(event)
            if event.originator_version == self.version:
                self.hash, self.recorded_at = event.hash, event.timestamp
                self.notification_id = recording.notification.id
        return self


class _ReceiptFound(Exception):
    """Inside a save: the request's receipt exists (a concurrent duplicate got there first)."""

    def __init__(self, receipt: Receipt) -> None:
        super().__init__(receipt.key)
        self.receipt = receipt


#: The idempotent request being served, if any: `_act` and `open_case` save its receipt with the act.
_pending_receipt: ContextVar[IdempotentRequest | None] = ContextVar("tramita_pending_receipt", default=None)


@dataclass(frozen=True)
class Attaching:
    """The documents the act being served cites (each `{"sha256", "name", "type", "size"}`), under its name in
    the catalogue of acts: `_act` and `open_case` record them after the act's events (domain/case/attachments.py)."""

    act: str
    documents: list[dict[str, Any]]


_pending_attachments: ContextVar[Attaching | None] = ContextVar("tramita_pending_attachments", default=None)


LEGAL_TIMEZONE = ZoneInfo("America/Rio_Branco")
MAX_ATTEMPTS = 8
#: The n-th retry of a conflicting act waits a random time up to RETRY_BASE * 2**n seconds, at most RETRY_CAP, so
#: writers that met on one aggregate (the year's case numbering above all) do not meet again in lockstep.
RETRY_BASE, RETRY_CAP = 2 / 1000, 100 / 1000
T = TypeVar("T")


class ApplicationBase(Application):
    """What every part of the service shares: the store, the clock, the statute, the calendar, the signing key,
    the act's context, the retry of a concurrent save, idempotency, and the repository's reads."""

    #: The library's aggregate cache is off: `pool` keeps aggregates between acts without copying them.
    env = {"COMPRESSOR_TOPIC": "", "CIPHER_TOPIC": ""}
    #: The setting bounding the pool, in stored bytes of the events its aggregates were built from (read as
    #: `TRAMITA_AGGREGATE_POOL_BYTES` from the environment, the library's prefix for this application).
    AGGREGATE_POOL_BYTES = "AGGREGATE_POOL_BYTES"

    def __init__(self, env: dict[str, str] | None = None, *, clock: Callable[[], datetime],
                 statute: Statute | None = None, calendar: Calendar | None = None,
                 signer: Signer | None = None) -> None:
        #: The deployment's signing key: every event is stored with its signature (None: events unsigned).
        self.signer = signer
        super().__init__(env)
        self.pool = AggregatePool(self.recorder, self.mapper, byte_budget(
            f"TRAMITA_{self.AGGREGATE_POOL_BYTES}", self.env.get(self.AGGREGATE_POOL_BYTES)))
        self.pool.on_altered = self.store_altered
        self.clock = clock
        #: The statute as shipped (or given); `statute` adds the amendments recorded in the store.
        self.shipped_statute = statute or shipped_statute()
        self._amendments = StatuteInForce(self.recorder, self.mapper, self.shipped_statute, self.pool.built,
                                          self.pool.read_alongside)
        self.pool.alongside = self._amendments.held
        self.calendar = calendar or Calendar()

    def check_against(self, log: EventLog) -> None:
        """From now on every aggregate an act reads is also checked against `log`, the audit log the wiring
        passes in (tramita/bootstrap.py): an event it holds that the store lacks or holds otherwise refuses the act
        (StoredEventsAlteredError). Without it, the hash chain alone is checked."""
        self.pool.log = log

    def store_altered(self, error: StoredEventsAlteredError) -> None:
        """Told by the pool of an aggregate whose stored events contradict the chain or the log, before the act
        is refused: nothing here (the application's `Alerting` raises the tamper alarm)."""

    @property
    def statute(self) -> Statute:
        """The statute in force now: the shipped data plus every amendment recorded, by this process or another
        (read again from the store when one has been recorded since: one indexed query)."""
        return self._amendments.current()

    def construct_mapper(self) -> Mapper:
        """The mapper that reads only the domain's event classes (`DomainMapper`), or the one the settings name
        (`MAPPER_TOPIC`); signing what it stores when the application has a key."""
        mapper_class = None if self.factory.env.get(self.factory.MAPPER_TOPIC) else DomainMapper
        mapper = self.factory.mapper(transcoder=self.construct_transcoder(), mapper_class=mapper_class)
        return SigningMapper(mapper, self.signer) if self.signer is not None else mapper

    def construct_transcoder(self) -> Transcoder:
        """The library's JSON transcoder, its bytes written and read by orjson where that is the same
        (domain/application/transcoder.py); another one when the settings name it (`TRANSCODER_TOPIC`)."""
        if self.factory.env.get(self.factory.TRANSCODER_TOPIC):
            return super().construct_transcoder()
        transcoder = StoredJSONTranscoder()
        self.register_transcodings(transcoder)
        return transcoder

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        super().register_transcodings(transcoder)
        transcoder.register(DateAsISO())

    # ------------------------------------------------------------------ context and retries

    def context(self, actor: Actor, occurred_on: date) -> ActContext:
        """The act's circumstances; `today` is the recording day in Rio Branco (the legal time zone)."""
        require_date("occurred_on", occurred_on)
        return self._context_at(actor, self.clock(), occurred_on)

    def today(self) -> date:
        """The legal day now: the clock's day in Rio Branco."""
        return self.clock().astimezone(LEGAL_TIMEZONE).date()

    def system_context(self, actor: Actor) -> ActContext:
        """The circumstances of the system's own acts (alerts): their legal date is the recording day."""
        return self._context_at(actor, self.clock(), None)

    def _context_at(self, actor: Actor, recorded_at: datetime, occurred_on: date | None, *,
                    statute: Statute | None = None) -> ActContext:
        if recorded_at.tzinfo is None:
            raise ValueError("the clock must give timezone-aware datetimes")
        today = recorded_at.astimezone(LEGAL_TIMEZONE).date()
        return ActContext(actor=actor, occurred_on=occurred_on or today, recorded_at=recorded_at, today=today,
                          statute=statute or self.statute)

    def last_read_statute(self) -> Statute:
        """The statute as this process last read it, without asking the store (`StatuteInForce.last_read`)."""
        return self._amendments.last_read()

    def save(self, *objs: Any, **kwargs: Any) -> list[Any]:
        """One transaction for every aggregate given, as the library's documentation describes its save: their
        pending events collected and put in the application's event store (`events.put`); the saved aggregates then
        go back to the pool at their new version.

        Our aggregates are collected by their class, the library's `Aggregate`, not through the runtime-checkable
        protocols the library's save asks of every object (each check walks the protocol's members); anything else
        goes through `ProcessingEvent`. With snapshots or the library's aggregate cache on (both off here), it is
        the library's own save. (That save also prompts a system's followers; tramita's applications lead none.)"""
        if self.snapshots is not None or self.repository.cache is not None:
            recordings = super().save(*objs, **kwargs)
            self.pool.saved(objs, recordings)
            return recordings
        processing: ProcessingEvent[Any] = ProcessingEvent()
        for obj in objs:
            if isinstance(obj, Aggregate):
                processing.events.extend(obj.collect_events())
            elif obj is not None:
                processing.collect_events(obj)
        recordings = self.events.put(processing.events, tracking=processing.tracking, **kwargs)
        self.notify(processing.events)  # the library's deprecated hook, which its save still calls
        self.pool.saved(objs, recordings)
        return recordings

    #: How a retry waits (tests replace it to watch the waits).
    retry_pause: Callable[[float], None] = staticmethod(time.sleep)

    def _retrying(self, attempt: Callable[[], T]) -> T:
        """Each attempt borrows its aggregates from the pool; a failed attempt drops them (pool.py). After a
        conflict the next attempt waits a random, growing time (exponential backoff with full jitter)."""
        for n in range(MAX_ATTEMPTS):
            if n:
                self.retry_pause(random.uniform(0, min(RETRY_CAP, RETRY_BASE * 2 ** n)))
            try:
                with self.pool.borrowing():
                    return attempt()
            except IntegrityError:
                continue
        raise ConcurrentActError(Sentence("the act met %(attempts)s concurrent saves in a row; nothing was recorded",
                                          attempts=MAX_ATTEMPTS))

    def _act(self, case_ref: str | UUID, actor: Actor, occurred_on: date, expected_version: int | None,
             command: Callable[[Case, ActContext], Any], result: Callable[[], Any] = lambda: None) -> Acted:
        """get -> act -> save, retried on a concurrent save; `command` returns extra aggregates to save.

        The act's receipt, when the request carries an idempotency key, is saved in the same transaction.
        """
        case_id = self.resolve_case(case_ref)

        def attempt() -> Acted:
            case = self._get_case(case_id, reference=case_ref)
            if expected_version is not None and case.version != expected_version:
                raise StaleVersionError(expected_version, case.version)
            ctx = self.context(actor, occurred_on)
            before = case.version
            others = command(case, ctx) or []
            self._attach(case, ctx)
            acted = Acted(case.id, case.number, case.version, result(), decided_from=before + 1)
            return acted.stored(self.save(case, *others, *self._receipts(ctx, acted)))

        return self._retrying(attempt)

    def _attach(self, case: Case, ctx: ActContext) -> None:
        """The documents the act being served cites, recorded on the case after the act's own events."""
        attaching = _pending_attachments.get()
        if attaching is not None:
            case.attach_documents(ctx, attaching.act, attaching.documents)

    def _receipts(self, ctx: ActContext, acted: Acted) -> list[Receipt]:
        """The receipt to save with the act, when the request being served carries an idempotency key."""
        request = _pending_receipt.get()
        if request is None:
            return []
        existing = self._get_or_none(request.receipt_id)
        if existing is not None:
            raise _ReceiptFound(existing)
        return [Receipt.issue(ctx, scope=request.scope, key=request.key, fingerprint=request.fingerprint,
                              act=request.act, case_id=acted.case_id, case_number=acted.number,
                              case_version=acted.version, result=acted.result, decided_from=acted.decided_from)]

    def idempotently(self, request: IdempotentRequest | None, record: Callable[[], Acted],
                     attachments: Attaching | None = None) -> Acted:
        """`Idempotency-Key`: record the act once; a retry of the same request gets the original act back.
        `attachments`: the documents the act cites, recorded in the act's own save (`_attach`).

        The receipt (key, request fingerprint, resulting case version) is saved in the act's own transaction, so
        two racing copies of a request record one act: the second meets the receipt and is answered from it.
        The same key with another request is refused (IdempotencyKeyReusedError) and records nothing.

        The receipt wins over every check of the act: a copy that lost the race finds the case moved on by the
        copy that won (its expected version stale, the act already done, the territory frozen by it) and is
        refused; the receipt, read again after the refusal, is then in the log (saved with the winner's act), so
        the copy is answered from it like any later retry, not with the refusal.
        """
        if attachments is not None and attachments.documents:
            attaching = _pending_attachments.set(attachments)
            try:
                return self.idempotently(request, record)
            finally:
                _pending_attachments.reset(attaching)
        if request is None:
            return record()
        existing = self._get_or_none(request.receipt_id)
        if existing is None:
            pending = _pending_receipt.set(request)
            try:
                return record()
            except _ReceiptFound as found:
                existing = found.receipt
            except (StaleVersionError, LegalRuleError, InvalidActError, ConcurrentActError):
                existing = self._get_or_none(request.receipt_id)
                if existing is None:
                    raise
            finally:
                _pending_receipt.reset(pending)
        if existing.fingerprint != request.fingerprint:
            raise IdempotencyKeyReusedError(request.key, existing.act, existing.case_number)
        return Acted(UUID(existing.case_id), existing.case_number, existing.case_version, existing.result,
                     decided_from=existing.decided_from, replayed=True)

    # ------------------------------------------------------------------ repository helpers

    def _get_case(self, case_id: UUID, version: int | None = None, *, reference: str | UUID | None = None) -> Case:
        """The case `case_id`; unknown (or another aggregate) -> CaseNotFoundError naming `reference`, the number
        or id the caller was asked for (by default the id)."""
        try:
            case = self.pool.get(case_id) if version is None else self.repository.get(case_id, version=version)
        except AggregateNotFoundError:
            case = None
        if not isinstance(case, Case):
            raise CaseNotFoundError(case_id if reference is None else reference)
        return case

    def _get_or_none(self, aggregate_id: UUID) -> Any:
        try:
            return self.pool.get(aggregate_id)
        except AggregateNotFoundError:
            return None

    def _find_municipality(self, code: str | None) -> Municipality | None:
        return self._get_or_none(Municipality.id_for(code)) if code else None

    def _get_municipality(self, code: str) -> Municipality:
        municipality = self._find_municipality(code)
        if municipality is None:
            raise MunicipalityNotFoundError(Sentence("no municipality %(code)s in the registry", code=code))
        return municipality



    def resolve_case(self, case_ref: str | UUID) -> UUID:
        """A case number (LC35-2026-0001) or its UUID -> the case id; unknown -> CaseNotFoundError."""
        if isinstance(case_ref, UUID):
            return case_ref
        if len(case_ref) < 32:  # a UUID's text has its 32 hex digits at least: a number, not tried as one
            return case_id_for(case_ref)
        try:
            return UUID(case_ref)
        except ValueError:
            return case_id_for(case_ref)
