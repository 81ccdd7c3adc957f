"""The application service: one method per act, get -> act -> save, all aggregates of an act in one save.

A concurrent save of the same case or municipality raises the library's IntegrityError; the act is then
judged again on fresh state, a bounded number of times, and never overwrites what the other save wrote.
"""

from __future__ import annotations

import csv
from contextvars import ContextVar
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from fractions import Fraction
from importlib import resources
from typing import Any, TypeVar
from uuid import UUID, uuid5
from zoneinfo import ZoneInfo

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError, JSONTranscoder, Mapper, Transcoding
from eventsourcing.utils import get_topic

from audit.notes import Signer, entry_of
from domain import chain
from domain.acts import ActContext, Actor, ChainedAggregate, require_date
from domain.alerts import Alert, alert_due
from domain.calendar import Calendar
from domain.case import DISTRICT_KINDS, NEW_MUNICIPALITY_KINDS, Case, case_id_for
from domain.access import (
    AccessToken, IdempotentRequest, IssuedToken, Receipt, bodies_competent_for, competent_roles,
)
from domain.errors import (
    AlertNotFoundError, AuthenticationError, CaseNotFoundError, IdempotencyKeyReusedError, IncompetentBodyError,
    InvalidActError, LegalRuleError, MunicipalityNotFoundError, StaleVersionError,
)
from domain.names import ToponymList
from domain.parameters import Statute, shipped_statute
from domain.registry import FIGURES, REGISTRY_NAMESPACE, Figure, Municipality, ToponymRegister, figure_value

LEGAL_TIMEZONE = ZoneInfo("America/Rio_Branco")
MAX_ATTEMPTS = 5
T = TypeVar("T")


class DateAsISO(Transcoding):
    """Stores a `datetime.date` (legal dates) as ISO text."""

    type = date
    name = "date_iso"

    def encode(self, obj: date) -> str:
        return obj.isoformat()

    def decode(self, data: str) -> date:
        return date.fromisoformat(data)


class SigningMapper(Mapper):
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
            entry = entry_of(domain_event.originator_id, domain_event.originator_version, chain_hash)
            object.__setattr__(domain_event, "signature", self.signer.sign_event(entry))
        return super().to_stored_event(domain_event)


class ConcurrentActError(Exception):
    """The act kept meeting concurrent saves of the same aggregates; nothing was recorded."""


class CaseNumbering(ChainedAggregate):
    """The system's case numbers for one year: LC35-YYYY-NNNN, assigned in order, never twice."""

    @staticmethod
    def id_for(year: int) -> UUID:
        return uuid5(REGISTRY_NAMESPACE, f"case-numbering:{year}")

    class Started(ChainedAggregate.Created):
        year: int

        def assign(self, numbering: CaseNumbering) -> None:
            numbering.year, numbering.numbers = self.year, []

    class NumberAssigned(ChainedAggregate.Event):
        number: str

        def assign(self, numbering: CaseNumbering) -> None:
            numbering.numbers.append(self.number)

    @classmethod
    def start(cls, ctx: ActContext, year: int) -> CaseNumbering:
        return cls._start(cls.Started, ctx, id=cls.id_for(year), article="art-8", year=year)

    def assign_next(self, ctx: ActContext) -> str:
        number = f"LC35-{self.year}-{len(self.numbers) + 1:04d}"
        self._record(self.NumberAssigned, ctx, article="art-8", number=number)
        return number


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

    def stored(self, recordings: list[Any]) -> Acted:
        """Fill in how the aggregate's last event was stored, from the save's recordings."""
        for recording in recordings:
            event = recording.domain_event
            if event.originator_id == self.case_id and event.originator_version == self.version:
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


class Tramita(Application):
    """The act-recording service of tramita (one instance per process)."""

    name = "tramita"
    env = {"AGGREGATE_CACHE_MAXSIZE": "5000", "COMPRESSOR_TOPIC": "", "CIPHER_TOPIC": ""}

    def __init__(self, env: dict[str, str] | None = None, *, clock: Callable[[], datetime],
                 statute: Statute | None = None, calendar: Calendar | None = None,
                 signer: Signer | None = None) -> None:
        #: The deployment's signing key: every event is stored with its signature (None: events unsigned).
        self.signer = signer
        super().__init__(env)
        self.clock = clock
        self.statute = statute or shipped_statute()
        self.calendar = calendar or Calendar()

    def construct_mapper(self) -> Mapper:
        mapper = super().construct_mapper()
        return SigningMapper(mapper, self.signer) if self.signer is not None else mapper

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

    def _context_at(self, actor: Actor, recorded_at: datetime, occurred_on: date | None) -> ActContext:
        if recorded_at.tzinfo is None:
            raise ValueError("the clock must give timezone-aware datetimes")
        today = recorded_at.astimezone(LEGAL_TIMEZONE).date()
        return ActContext(actor=actor, occurred_on=occurred_on or today, recorded_at=recorded_at, today=today,
                          statute=self.statute)

    def _retrying(self, attempt: Callable[[], T]) -> T:
        for _ in range(MAX_ATTEMPTS):
            try:
                return attempt()
            except IntegrityError:
                continue
        raise ConcurrentActError(f"the act met {MAX_ATTEMPTS} concurrent saves in a row; nothing was recorded")

    def _act(self, case_ref: str | UUID, actor: Actor, occurred_on: date, expected_version: int | None,
             command: Callable[[Case, ActContext], Any], result: Callable[[], Any] = lambda: None) -> Acted:
        """get -> act -> save, retried on a concurrent save; `command` returns extra aggregates to save.

        The act's receipt, when the request carries an idempotency key, is saved in the same transaction.
        """
        case_id = self.resolve_case(case_ref)

        def attempt() -> Acted:
            case = self._get_case(case_id)
            if expected_version is not None and case.version != expected_version:
                raise StaleVersionError(expected_version, case.version)
            ctx = self.context(actor, occurred_on)
            others = command(case, ctx) or []
            acted = Acted(case.id, case.number, case.version, result())
            return acted.stored(self.save(case, *others, *self._receipts(ctx, acted)))

        return self._retrying(attempt)

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
                              case_version=acted.version, result=acted.result)]

    def idempotently(self, request: IdempotentRequest | None, record: Callable[[], Acted]) -> Acted:
        """`Idempotency-Key`: record the act once; a retry of the same request gets the original act back.

        The receipt (key, request fingerprint, resulting case version) is saved in the act's own transaction, so
        two racing copies of a request record one act: the second meets the receipt and is answered from it.
        The same key with another request is refused (IdempotencyKeyReusedError) and records nothing.

        The receipt wins over every check of the act: a copy that lost the race finds the case moved on by the
        copy that won (its expected version stale, the act already done, the territory frozen by it) and is
        refused; the receipt, read again after the refusal, is then in the log (saved with the winner's act), so
        the copy is answered from it like any later retry, not with the refusal.
        """
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
                     replayed=True)

    # ------------------------------------------------------------------ opening (Art. 8, 9, 31, 37, 38)

    def open_case(self, actor: Actor, occurred_on: date, *, kind: str, municipalities: list[str],
                  receiving: str | None = None, areas: list[dict[str, Any]] | None = None,
                  proposed_name: str | None = None, district: str | None = None,
                  signatures: list[dict[str, Any]] | None = None,
                  documents: dict[str, str] | None = None) -> Acted:
        """Art. 8, 9, 38: open a case with the next number; freeze its territories in the same save."""

        def attempt() -> Acted:
            ctx = self.context(actor, occurred_on)
            codes = list(municipalities) + ([receiving] if receiving else [])
            registry = {code: m for code in codes if (m := self._find_municipality(code)) is not None}
            numbering = self._get_or_none(CaseNumbering.id_for(occurred_on.year)) or CaseNumbering.start(
                ctx, occurred_on.year)
            number = numbering.assign_next(ctx)
            case = Case.open(ctx, number=number, kind=kind, municipalities=list(municipalities), receiving=receiving,
                             areas=areas, proposed_name=proposed_name, district=district, signatures=signatures,
                             documents=documents, existing=set(registry))
            if kind == "district_suppression":
                self._require_district(registry[case.municipalities[0]], district or "")
            for code in case.frozen:
                registry[code].freeze(ctx, str(case.id), number)
            for m in registry.values():
                m.require_existing(ctx, case.article_of_opening)
            acted = Acted(case.id, number, case.version)
            return acted.stored(self.save(numbering, case, *(registry[code] for code in case.frozen),
                                                *self._receipts(ctx, acted)))

        return self._retrying(attempt)

    # ------------------------------------------------------------------ instruction

    def issue_requisition(self, case: str, actor: Actor, occurred_on: date, *, body: str, items: list[str],
                          expected_version: int | None = None) -> Acted:
        """Art. 10: the Mesa requisitions information from a competent body."""
        holder: dict[str, str] = {}

        def command(c: Case, ctx: ActContext) -> None:
            holder["requisition"] = c.issue_requisition(ctx, body=body, items=items)

        return self._act(case, actor, occurred_on, expected_version, command, result=lambda: holder["requisition"])

    def receive_requisition(self, case: str, actor: Actor, occurred_on: date, *, requisition: str,
                            expected_version: int | None = None) -> Acted:
        """Art. 10: the requisition's receipt opens its 30-day deadline."""
        return self._act(case, actor, occurred_on, expected_version,
                         lambda c, ctx: c.receive_requisition(ctx, self.calendar, requisition=requisition))

    def refuse_requisition(self, case: str, actor: Actor, occurred_on: date, *, requisition: str, reason: str,
                           expected_version: int | None = None) -> Acted:
        """Art. 10 §1: a refusal is recorded as a breach."""
        return self._act(case, actor, occurred_on, expected_version,
                         lambda c, ctx: c.refuse_requisition(ctx, requisition=requisition, reason=reason))

    def record_finding(self, case: str, actor: Actor, occurred_on: date, *, item: str, value: Any, document: str,
                       by_origin: dict[str, Any] | None = None, state_tax_revenue: Any = None,
                       expected_version: int | None = None) -> Acted:
        """Art. 4 par. ún., Art. 32: a competent body's finding."""
        return self._act(case, actor, occurred_on, expected_version, lambda c, ctx: c.record_finding(
            ctx, item=item, value=value, document=document, by_origin=by_origin, state_tax_revenue=state_tax_revenue,
            origin_figures=self._figures_on(c.municipalities, occurred_on) if c.kind == "creation" else None))

    def verify_requirements(self, case: str, actor: Actor, occurred_on: date,
                            expected_version: int | None = None) -> Acted:
        """Art. 4, 5: the requirements hold for the new and for every origin municipality."""
        return self._act(case, actor, occurred_on, expected_version, lambda c, ctx: c.verify_requirements(
            ctx, self._figures_on(c.municipalities, occurred_on)))

    def record_council_decree(self, case: str, actor: Actor, occurred_on: date, *, municipality: str, decree: str,
                              seats: Any, yes_votes: Any, expected_version: int | None = None) -> Acted:
        """Art. 28, 29, 30: a council's legislative decree."""
        return self._act(case, actor, occurred_on, expected_version, lambda c, ctx: c.record_council_decree(
            ctx, municipality=municipality, decree=decree, seats=seats, yes_votes=yes_votes))

    def dispense_plebiscite(self, case: str, actor: Actor, occurred_on: date, *, justification: str,
                            expected_version: int | None = None) -> Acted:
        """Art. 1-I: dispense the plebiscite of an area change within the brackets."""

        def command(c: Case, ctx: ActContext) -> None:
            territories = c._territories()
            figures = self._figures_on(territories, occurred_on)
            names = {code: self._get_municipality(code).name for code in territories}
            c.dispense_plebiscite(ctx, justification=justification, names=names,
                                  areas_km2={code: figures[code].get("area_km2") for code in territories})

        return self._act(case, actor, occurred_on, expected_version, command)

    # ------------------------------------------------------------------ plebiscite (Art. 11-16)

    def decree_plebiscite(self, case: str, actor: Actor, occurred_on: date, *, decree: str,
                          expected_version: int | None = None) -> Acted:
        """Art. 11: the Assembly decrees the plebiscite (a creation's requirements judged first if not yet met)."""
        return self._act(case, actor, occurred_on, expected_version, lambda c, ctx: c.decree_plebiscite(
            ctx, decree=decree, origin_figures=self._figures_on(c.municipalities, occurred_on)
            if c.kind == "creation" else None))

    def schedule_plebiscite(self, case: str, actor: Actor, occurred_on: date, *, resolution: str,
                            plebiscite_date: date, expected_version: int | None = None) -> Acted:
        """Art. 12: the TRE fixes the plebiscite's date."""
        return self._act(case, actor, occurred_on, expected_version, lambda c, ctx: c.schedule_plebiscite(
            ctx, resolution=resolution, plebiscite_date=plebiscite_date))

    def homologate_result(self, case: str, actor: Actor, occurred_on: date, *, voted_on: date,
                          populations: dict[str, dict[str, Any]], seat_votes: dict[str, Any] | None = None,
                          expected_version: int | None = None) -> Acted:
        """Art. 13: the TRE homologates the result; Art. 14's deadline starts."""
        return self._act(case, actor, occurred_on, expected_version, lambda c, ctx: c.homologate_result(
            ctx, self.calendar, voted_on=voted_on, populations=populations, seat_votes=seat_votes))

    def communicate_result(self, case: str, actor: Actor, occurred_on: date,
                           expected_version: int | None = None) -> Acted:
        """Art. 14: the TRE communicates the result to the Assembly president."""
        return self._act(case, actor, occurred_on, expected_version,
                         lambda c, ctx: c.communicate_result(ctx, self.calendar))

    def register_in_plenary(self, case: str, actor: Actor, occurred_on: date,
                            expected_version: int | None = None) -> Acted:
        """Art. 15: the president registers the result in plenary."""
        return self._act(case, actor, occurred_on, expected_version, lambda c, ctx: c.register_in_plenary(ctx))

    def draft_bill(self, case: str, actor: Actor, occurred_on: date, *, bill: str,
                   expected_version: int | None = None) -> Acted:
        """Art. 16: the CCJ drafts the bill."""
        return self._act(case, actor, occurred_on, expected_version, lambda c, ctx: c.draft_bill(ctx, bill=bill))

    def archive_case(self, case: str, actor: Actor, occurred_on: date, *, reason: str,
                     expected_version: int | None = None) -> Acted:
        """Art. 16 par. ún.: archive the case and lift its Art. 38 freeze in the same save."""

        def command(c: Case, ctx: ActContext) -> list[Municipality]:
            frozen = [self._get_municipality(code) for code in c.frozen]
            c.archive(ctx, reason=reason)
            for m in frozen:
                m.unfreeze(ctx, str(c.id), c.number)
            return frozen

        return self._act(case, actor, occurred_on, expected_version, command)

    # ------------------------------------------------------------------ the law (Art. 17, 31, 37)

    def enact_law(self, case: str, actor: Actor, occurred_on: date, *, law: str, name: str | None = None,
                  seat_origin: str | None = None, limits: str = "", comarca: str = "",
                  districts: list[str] | None = None, living_person_declaration: bool = False,
                  ibge_code: str | None = None, reintegration: dict[str, Any] | None = None,
                  expected_version: int | None = None) -> Acted:
        """Art. 17, 31, 37: the law; the registry changes and the freeze lifts in the same save."""

        def command(c: Case, ctx: ActContext) -> list[ChainedAggregate]:
            territories = c._territories()
            frozen = list(c.frozen)
            extra_codes = list((reintegration or {}).keys())
            registry = {code: self._get_municipality(code) for code in territories + extra_codes}
            toponyms_register = self._get_or_none(ToponymRegister.ID)
            toponyms = self.toponyms(toponyms_register)
            c.enact_law(ctx, self.calendar, law=law, toponyms=toponyms,
                        origin_figures=self._figures_on(territories, occurred_on, registry), name=name,
                        seat_origin=seat_origin, limits=limits, comarca=comarca, districts=districts,
                        living_person_declaration=living_person_declaration, ibge_code=ibge_code,
                        reintegration=reintegration)
            changed = _law_effects(ctx, c, registry)
            if c.kind in NEW_MUNICIPALITY_KINDS:
                if self._find_municipality(c.new_municipality) is not None:
                    raise InvalidActError("ibge_code", f"{c.new_municipality} is already in the registry")
                toponyms_register = toponyms_register or ToponymRegister.open(ctx)
                toponyms_register.add(ctx, name=c.law["name"], uf="AC", ibge_code=ibge_code,
                                      source=f"{law} ({c.number})")
                changed.append(toponyms_register)
            for code in frozen:
                registry[code].unfreeze(ctx, str(c.id), c.number)
            return changed + [m for m in registry.values() if all(m is not c for c in changed)]

        return self._act(case, actor, occurred_on, expected_version, command)

    def certify_extinction_request(self, case: str, actor: Actor, occurred_on: date, *, valid_signatures: Any,
                                   registered_voters: Any, expected_version: int | None = None) -> Acted:
        """Art. 37-II: the TRE certifies the request's signatures."""
        return self._act(case, actor, occurred_on, expected_version, lambda c, ctx: c.certify_extinction_request(
            ctx, valid_signatures=valid_signatures, registered_voters=registered_voters))

    # ------------------------------------------------------------------ after the law (Art. 19-26, 40)

    def send_administrator_list(self, case: str, actor: Actor, occurred_on: date, *, names: list[str],
                                expected_version: int | None = None) -> Acted:
        """Art. 20: the Governor's list of three."""
        return self._act(case, actor, occurred_on, expected_version,
                         lambda c, ctx: c.send_administrator_list(ctx, names=names))

    def appoint_administrator(self, case: str, actor: Actor, occurred_on: date, *, administrator: str,
                              expected_version: int | None = None) -> Acted:
        """Art. 20: the Assembly's choice."""
        return self._act(case, actor, occurred_on, expected_version,
                         lambda c, ctx: c.appoint_administrator(ctx, administrator=administrator))

    def install_municipality(self, case: str, actor: Actor, occurred_on: date, *, mayor: str, vice_mayor: str,
                             councillors: list[str], expected_version: int | None = None) -> Acted:
        """Art. 19: installation; Art. 22-24 deadlines start."""
        return self._act(case, actor, occurred_on, expected_version, lambda c, ctx: c.install(
            ctx, self.calendar, mayor=mayor, vice_mayor=vice_mayor, councillors=councillors))

    def transfer_ledger(self, case: str, actor: Actor, occurred_on: date, *, origin: str, document: str,
                        expected_version: int | None = None) -> Acted:
        """Art. 22 par. ún.: an origin's books and accounts."""
        return self._act(case, actor, occurred_on, expected_version,
                         lambda c, ctx: c.transfer_ledger(ctx, origin=origin, document=document))

    def send_personnel_documents(self, case: str, actor: Actor, occurred_on: date, *, origin: str, document: str,
                                 expected_version: int | None = None) -> Acted:
        """Art. 26 par. ún.: an origin's staff documents."""
        return self._act(case, actor, occurred_on, expected_version,
                         lambda c, ctx: c.send_personnel_documents(ctx, origin=origin, document=document))

    def submit_prefect_bill(self, case: str, actor: Actor, occurred_on: date, *, item: str, bill: str,
                            expected_version: int | None = None) -> Acted:
        """Art. 23 I-IV: the Mayor's bills."""
        return self._act(case, actor, occurred_on, expected_version,
                         lambda c, ctx: c.submit_prefect_bill(ctx, item=item, bill=bill))

    def promulgate_organic_law(self, case: str, actor: Actor, occurred_on: date, *, organic_law: str,
                               expected_version: int | None = None) -> Acted:
        """Art. 24: the organic law."""
        return self._act(case, actor, occurred_on, expected_version,
                         lambda c, ctx: c.promulgate_organic_law(ctx, organic_law=organic_law))

    def fix_remuneration(self, case: str, actor: Actor, occurred_on: date, *, act: str,
                         expected_version: int | None = None) -> Acted:
        """Art. 25: the Câmara fixes the remuneration."""
        return self._act(case, actor, occurred_on, expected_version, lambda c, ctx: c.fix_remuneration(ctx, act=act))

    def send_communication(self, case: str, actor: Actor, occurred_on: date, *, subject: str, recipient: str,
                           document: str, expected_version: int | None = None) -> Acted:
        """Art. 40: one communication of the creation or installation."""
        return self._act(case, actor, occurred_on, expected_version, lambda c, ctx: c.send_communication(
            ctx, subject=subject, recipient=recipient, document=document))

    # ------------------------------------------------------------------ registry

    def seed_registry(self, actor: Actor, occurred_on: date) -> list[str]:
        """Register Acre's municipalities from the shipped seed (figures with their dates and sources)."""
        seeded = []
        for row in _seed_rows():
            if self._find_municipality(row["key"]) is not None:
                continue
            ctx = self.context(actor, occurred_on)
            municipality = Municipality.register(ctx, key=row["key"], name=row["name"], figures=row["figures"])
            self.save(municipality)
            seeded.append(row["key"])
        return seeded

    def record_figure(self, code: str, actor: Actor, occurred_on: date, *, figure: str, value: Any, as_of: date,
                      source: str) -> Acted:
        """Art. 4 par. ún.: a competent body records a registry figure with its date and source."""

        def attempt() -> Acted:
            municipality = self._get_municipality(code)
            ctx = self.context(actor, occurred_on)
            municipality.record_figure(ctx, figure, value, as_of, source)
            acted = Acted(municipality.id, code, municipality.version)
            return acted.stored(self.save(municipality, *self._receipts(ctx, acted)))

        return self._retrying(attempt)

    def add_toponym(self, actor: Actor, occurred_on: date, *, name: str, uf: str, ibge_code: str | None,
                    source: str) -> None:
        """Art. 17 par. ún.: a municipality created elsewhere in Brazil joins the list of existing names."""

        def attempt() -> None:
            ctx = self.context(actor, occurred_on)
            ctx.require_competent("toponym-added", "art-17-par-unico")
            register = self._get_or_none(ToponymRegister.ID) or ToponymRegister.open(ctx)
            register.add(ctx, name=name, uf=uf, ibge_code=ibge_code, source=source)
            self.save(register)

        self._retrying(attempt)

    def toponyms(self, register: ToponymRegister | None = None) -> ToponymList:
        """Art. 17 par. ún.: the shipped IBGE list (Acre's municipalities included) plus the names recorded since
        (by IBGE, and by every creation or fusion law, which adds its new name in the same save)."""
        register = register or self._get_or_none(ToponymRegister.ID)
        return ToponymList.shipped().with_names(register.toponyms() if register else [])

    def municipality(self, code: str) -> Municipality:
        return self._get_municipality(code)

    def _figures_on(self, codes: list[str], day: date,
                    registry: dict[str, Municipality] | None = None) -> dict[str, dict[str, Any]]:
        """Each municipality's registry figures in force on `day` (None: unknown)."""
        registry = registry or {}
        return {code: (registry.get(code) or self._get_municipality(code)).figures_on(day) for code in codes}

    def _require_district(self, municipality: Municipality, district: str) -> None:
        from domain.names import normalise_name

        if normalise_name(district) not in {normalise_name(d) for d in municipality.districts}:
            raise InvalidActError("district", f"{municipality.name} has no district named {district!r} in the "
                                  f"registry")

    # ------------------------------------------------------------------ alerts (RULES.md, Deadlines)

    def raise_alerts(self, case_ref: str | UUID, actor: Actor, *, thresholds: tuple[int, ...]) -> list[UUID]:
        """RULES.md, Deadlines and Art. 10 §1: record the alerts the case's open deadlines and its breaches call
        for today; each at most once.

        `today` is the alert clock's day in Rio Branco. An alert already recorded (by an earlier scan, a
        restarted or a second scheduler) meets its deterministic id and is not recorded again.
        """
        case = self.get_case(case_ref)
        ctx = self.system_context(actor)
        due = [Alert.raise_for(ctx, case_id=case.id, case_number=case.number, key=key, deadline=deadline, kind=kind)
               for key, deadline in case.deadlines.items()
               if (kind := alert_due(deadline, ctx.today, thresholds)) is not None]
        due += [Alert.raise_breach(ctx, case_id=case.id, case_number=case.number, breach=breach,  # Art. 10 §1
                                   answer=case.deadlines.get(f"requisition-answer:{breach['requisition']}"))
                for breach in case.breaches]
        return [alert.id for alert in due if self._saved_once(alert)]

    def _saved_once(self, alert: Alert) -> bool:
        """Save the alert unless its id is already recorded (by an earlier scan, or another scheduler meanwhile)."""
        if self._get_or_none(alert.id) is not None:
            return False
        try:
            self.save(alert)
        except IntegrityError:  # another scheduler recorded it between the look and the save
            return False
        return True

    def raise_system_alert(self, actor: Actor, *, kind: str, subject: str, message: str) -> UUID | None:
        """Record a system alert (not tied to a case, domain/alerts.py) once per (kind, subject); its id, or None
        when it was already recorded."""
        alert = Alert.raise_system(self.system_context(actor), kind=kind, subject=subject, message=message)
        return alert.id if self._saved_once(alert) else None

    def get_alert(self, alert_id: UUID) -> Alert:
        alert = self._get_or_none(alert_id)
        if not isinstance(alert, Alert):
            raise AlertNotFoundError(f"no alert {alert_id}")
        return alert

    def record_alert_delivery(self, alert_id: UUID, actor: Actor, *, tries: int, error: str | None = None) -> None:
        """Record how a round of webhook delivery of the alert ended (error None: delivered after `tries`)."""

        def attempt() -> None:
            alert = self.get_alert(alert_id)
            alert.record_delivery(self.system_context(actor), tries=tries, error=error)
            self.save(alert)

        self._retrying(attempt)

    # ------------------------------------------------------------------ access (the API's bearer tokens)

    def token_roles(self) -> list[str]:
        """The roles a token may have: the bodies the competence tables name today, and the auditors."""
        return competent_roles(self.statute, self.today())

    def issue_token(self, issuer: Actor, *, name: str, role: str, municipality: str | None = None) -> IssuedToken:
        """Issue a bearer token for a competent body; the token is returned once, only its hash is stored."""
        ctx = self.system_context(issuer)
        if municipality is not None:
            self._get_municipality(municipality)
        token, secret = AccessToken.issue(ctx, name=name, role=role, municipality=municipality,
                                          roles=self.token_roles())
        self.save(token)
        return IssuedToken(token.id, secret, token.actor)

    def revoke_token(self, issuer: Actor, token_id: str, *, reason: str) -> AccessToken:
        token = self._get_token(token_id)
        token.revoke(self.system_context(issuer), reason=reason)
        self.save(token)
        return token

    def authenticate(self, bearer: str | None) -> AccessToken:
        """The token a bearer presents (its `actor` records the acts); AuthenticationError when unknown or revoked."""
        parsed = AccessToken.parse(bearer or "")
        if parsed is None:
            raise AuthenticationError("a bearer token is required (Authorization: Bearer trm_…)")
        token = self._get_or_none(parsed[0])
        if not isinstance(token, AccessToken) or not token.admits(parsed[1]):
            raise AuthenticationError("the bearer token is unknown or revoked")
        return token

    def require_may_record(self, actor: Actor, act: str) -> None:
        """Before reading a request: the actor's role is a body competent for `act` today (for some case kind).

        The act itself checks again, on its legal date and for the case's kind and municipality.
        """
        article, bodies = bodies_competent_for(self.statute, self.today(), act)
        if actor.role not in bodies:
            raise IncompetentBodyError(article, f"{act} is recorded by {' or '.join(bodies)}; "
                                       f"{actor.role} is not the competent body", competent=bodies, role=actor.role)

    def tokens(self) -> list[AccessToken]:
        """Every token ever issued (revoked ones included), oldest first: read from the log by the issue's topic."""
        topic = get_topic(AccessToken.Issued)
        ids, start = [], 1
        while notifications := self.recorder.select_notifications(start=start, limit=500, topics=[topic]):
            ids += [n.originator_id for n in notifications]
            start = notifications[-1].id + 1
        return [self.repository.get(token_id) for token_id in ids]

    def _get_token(self, token_id: str) -> AccessToken:
        try:
            token = self._get_or_none(UUID(token_id))
        except ValueError:
            raise InvalidActError("token", f"{token_id!r} is not a token id") from None
        if not isinstance(token, AccessToken):
            raise InvalidActError("token", f"no token {token_id}")
        return token
    # ------------------------------------------------------------------ reading and auditing

    def resolve_case(self, case_ref: str | UUID) -> UUID:
        """A case number (LC35-2026-0001) or its UUID -> the case id; unknown -> CaseNotFoundError."""
        if isinstance(case_ref, UUID):
            return case_ref
        try:
            return UUID(case_ref)
        except ValueError:
            return case_id_for(case_ref)

    def case_exists(self, case_ref: str | UUID) -> bool:
        return isinstance(self._get_or_none(self.resolve_case(case_ref)), Case)

    def get_case(self, case_ref: str | UUID, *, version: int | None = None) -> Case:
        return self._get_case(self.resolve_case(case_ref), version=version)

    def case_as_of(self, case_ref: str | UUID, as_of: date) -> Case | None:
        """The case as of a legal date: every act dated on or before it (acts are in legal-date order)."""
        events = self.events_of(case_ref)
        version = sum(1 for e in events if e.occurred_on <= as_of)
        return self.get_case(case_ref, version=version) if version else None

    def case_at(self, case_ref: str | UUID, *, as_of: date | None = None, version: int | None = None,
                recorded_before: datetime | None = None) -> Case | None:
        """The case as of a legal date, at a version, or as the system knew it before a moment (at most one).

        None when the case did not exist then (no act dated by `as_of`, none recorded before `recorded_before`).
        """
        if sum(x is not None for x in (as_of, version, recorded_before)) > 1:
            raise InvalidActError("as_of", "give at most one of as_of, version and recorded_before")
        if as_of is not None:
            return self.case_as_of(case_ref, as_of)
        if recorded_before is not None:
            if recorded_before.tzinfo is None:
                raise InvalidActError("recorded_before", "give a time zone (e.g. 2026-11-30T12:00:00Z)")
            known = sum(1 for e in self.events_of(case_ref) if e.timestamp < recorded_before)
            return self.get_case(case_ref, version=known) if known else None
        if version is not None:
            latest = self.get_case(case_ref)
            if not 1 <= version <= latest.version:
                raise InvalidActError("version", f"the case has versions 1 to {latest.version}; {version} is none")
            return self.get_case(case_ref, version=version)
        return self.get_case(case_ref)

    def case_document(self, case: Case) -> dict[str, Any]:
        """The case's state as plain data: what its acts assigned, and its open obligations at that version."""
        document = {name: getattr(case, name) for name in CASE_DOCUMENT_FIELDS}
        document.update(id=str(case.id), version=case.version, last_act=case.last_act, last_act_on=case.last_act_on,
                        new_municipality=case.new_municipality,
                        obligations=case.obligations(self._context_at(SYSTEM_ACTOR, self.clock(),
                                                                      case.last_occurred_on)))
        return document

    def export_lines(self, case_ref: str | UUID) -> Iterator[dict[str, Any]]:
        """The case file for offline checking: each event as its canonical hashed document plus its `hash`."""
        for event in self.events_of(case_ref):
            yield chain.export_document(event)

    def events_of(self, case_ref: str | UUID) -> list[Any]:
        """A case's events in order (another aggregate's id, a token's say, is no case)."""
        case_id = self.resolve_case(case_ref)
        events = list(self.events.get(case_id))
        if not events or not isinstance(events[0], Case.PetitionFiled):
            raise CaseNotFoundError(f"no case {case_ref}")
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
        aggregate_id = self.resolve_case(aggregate_ref)
        stored = list(self.recorder.select_events(aggregate_id))
        if not stored:
            raise CaseNotFoundError(f"nothing stored for {aggregate_ref}")
        label = str(aggregate_id)
        previous = chain.GENESIS
        for index, record in enumerate(stored):
            try:
                event = self.mapper.to_domain_event(record)
                if index == 0:
                    label = getattr(event, "number", None) or getattr(event, "key", None) or label
            except Exception as error:  # the stored bytes no longer decode: that is the finding
                topic = record.topic if isinstance(record.topic, str) else repr(record.topic)
                return ChainReport(str(aggregate_id), label, index + 1, False, record.originator_version,
                                   topic.rsplit(":", 1)[-1], f"the stored event does not decode: {error}")
            if event.prev_hash != previous:
                return ChainReport(str(aggregate_id), label, index + 1, False, event.originator_version,
                                   type(event).__qualname__, "prev_hash does not match the previous event's hash")
            recomputed = chain.hash_of(event)
            if recomputed != event.hash:
                return ChainReport(str(aggregate_id), label, index + 1, False, event.originator_version,
                                   type(event).__qualname__, f"content altered: stored hash {event.hash[:12]}…, "
                                   f"recomputed {recomputed[:12]}…")
            previous = event.hash
        return ChainReport(str(aggregate_id), label, len(stored), True)

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

    # ------------------------------------------------------------------ repository helpers

    def _get_case(self, case_id: UUID, version: int | None = None) -> Case:
        try:
            case = self.repository.get(case_id, version=version)
        except AggregateNotFoundError:
            raise CaseNotFoundError(f"no case {case_id}") from None
        if not isinstance(case, Case):
            raise CaseNotFoundError(f"{case_id} is not a case")
        return case

    def _get_or_none(self, aggregate_id: UUID) -> Any:
        try:
            return self.repository.get(aggregate_id)
        except AggregateNotFoundError:
            return None

    def _find_municipality(self, code: str | None) -> Municipality | None:
        return self._get_or_none(Municipality.id_for(code)) if code else None

    def _get_municipality(self, code: str) -> Municipality:
        municipality = self._find_municipality(code)
        if municipality is None:
            raise MunicipalityNotFoundError(f"no municipality {code} in the registry")
        return municipality


SYSTEM_ACTOR = Actor("tramita", "scheduler")

#: The attributes of a case that its documents show (as its acts assigned them).
CASE_DOCUMENT_FIELDS = (
    "number", "kind", "stage", "initiator", "municipalities", "receiving", "areas", "proposed_name", "district",
    "signature_count", "documents", "impediments", "frozen", "opened_on", "requisitions", "findings", "councils",
    "requirements", "dispensation", "plebiscite", "result", "communicated_on", "registered_on", "bill", "law",
    "administrator_list", "administrator", "installation", "remuneration", "organic_law", "extinction_request",
    "deadlines", "communications", "breaches", "bills", "archived", "concluded_on",
)


def event_row(event: Any) -> dict[str, Any]:
    """One event as a timeline row (shared by the CLI, the API and exports)."""
    common = {"originator_id", "originator_version", "timestamp", "occurred_on", "actor", "article",
              "rule_versions", "prev_hash", "hash", "originator_topic", "signature"}
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


def _seed_rows() -> list[dict[str, Any]]:
    """The registry seed: each municipality's known figures with the date and source of their column."""
    package = resources.files("domain.statute")
    meta = tomllib.loads(package.joinpath("acre-municipalities.toml").read_text(encoding="utf-8"))
    rows = []
    with package.joinpath(meta["file"]).open(encoding="utf-8") as file:
        for row in csv.DictReader(file):
            figures = {}
            for column, spec in meta["columns"].items():
                if row.get(column, "").strip():
                    figures[spec["figure"]] = Figure(figure_value(spec["figure"], row[column]), spec["as_of"],
                                                     spec["source"])
            rows.append({"key": row["ibge_code"], "name": row["name"], "figures": figures})
    return rows


def _law_effects(ctx: ActContext, case: Case, registry: dict[str, Municipality]) -> list[ChainedAggregate]:
    """What the enacted law changes in the registry (new municipality, figures, districts, cessation)."""
    law, day = f"{case.law['law']} ({case.number})", ctx.occurred_on
    kind, changed = case.kind, []

    def figures_of(code: str) -> dict[str, Any]:
        return registry[code].figures_on(day)

    def moved(code: str) -> dict[str, Any]:
        """The figures of the area leaving `code` (areas from the petition, the rest from the findings)."""
        parts: dict[str, Any] = {"area_km2": sum((Decimal(str(a["area_km2"])) for a in case.areas
                                                  if a["municipality"] == code), Decimal(0))}
        for item, name in (("art-4-I", "population"), ("art-4-II", "voters"), ("art-4-III", "revenue"),
                           ("art-4-IV", "buildings")):
            parts[name] = case._portion(item, code)
        return parts

    def shifted(code: str, delta: dict[str, Any], sign: int) -> dict[str, Any]:
        now = figures_of(code)
        return {name: now[name] + sign * delta[name] for name in FIGURES
                if now.get(name) is not None and delta.get(name) is not None}

    if kind in DISTRICT_KINDS:
        registry[case.municipalities[0]].change_district(
            ctx, create=kind == "district_creation", district=case.district, case_id=str(case.id), law=law)
    elif kind == "creation":
        totals: dict[str, Any] = {}
        for code in case.municipalities:
            part = moved(code)
            for name, value in part.items():
                totals[name] = None if value is None or totals.get(name, 0) is None else totals.get(name, 0) + value
            registry[code].change_territory(ctx, article="art-17", case_id=str(case.id), law=law,
                                            figures=shifted(code, part, -1), districts=registry[code].districts)
        new = Municipality.register(
            ctx, key=case.new_municipality, name=case.law["name"], article="art-17", created_by_case=case.number,
            figures={n: Figure(v, day, law) for n, v in totals.items() if v is not None},
            districts=case.law["contents"]["districts"])
        changed.append(new)
    elif kind == "fusion":
        sums: dict[str, Any] = {}
        for name in FIGURES:
            values = [figures_of(code)[name] for code in case.municipalities]
            if all(v is not None for v in values):
                sums[name] = sum(values)
        districts = [d for code in case.municipalities for d in registry[code].districts]
        new = Municipality.register(
            ctx, key=case.new_municipality, name=case.law["name"], article="art-17", created_by_case=case.number,
            figures={n: Figure(v, day, law) for n, v in sums.items()},
            districts=districts or case.law["contents"]["districts"])
        changed.append(new)
        for code in case.municipalities:
            registry[code].cease(ctx, article="art-30", case_id=str(case.id), law=law, into=[case.new_municipality])
    elif kind == "dismemberment":
        ceding, receiving = case.municipalities[0], case.receiving
        part = moved(ceding)
        registry[ceding].change_territory(ctx, article="art-28", case_id=str(case.id), law=law,
                                          figures=shifted(ceding, part, -1), districts=registry[ceding].districts)
        registry[receiving].change_territory(ctx, article="art-28", case_id=str(case.id), law=law,
                                             figures=shifted(receiving, part, +1),
                                             districts=registry[receiving].districts)
    elif kind == "incorporation":
        incorporated, receiving = case.municipalities[0], case.receiving
        whole_figures = figures_of(incorporated)
        registry[receiving].change_territory(
            ctx, article="art-29", case_id=str(case.id), law=law, figures=shifted(receiving, whole_figures, +1),
            districts=registry[receiving].districts + registry[incorporated].districts)
        registry[incorporated].cease(ctx, article="art-29", case_id=str(case.id), law=law, into=[receiving])
    elif kind == "extinction":
        extinct = case.municipalities[0]
        shares = case.law["contents"]["reintegration"]
        area = figures_of(extinct).get("area_km2")
        for code, share_text in shares.items():
            share = Fraction(share_text)
            gained = {"area_km2": None if area is None else
                      (Decimal(share.numerator) * area / Decimal(share.denominator)).quantize(Decimal("0.001"))}
            registry[code].change_territory(ctx, article="art-37-par-unico", case_id=str(case.id), law=law,
                                            figures=shifted(code, gained, +1), districts=registry[code].districts)
        registry[extinct].cease(ctx, article="art-37", case_id=str(case.id), law=law, into=list(shares))
    return changed
