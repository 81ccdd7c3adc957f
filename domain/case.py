"""One case of LC 35/1991 (creation, incorporation, fusion, dismemberment, districts, extinction) as an aggregate.

Every act is an explicit event class named after the legal act. Commands judge (rules.py, statute data,
calendar) and record the decision; the events' `assign` only assigns. The registry side of an act (the
Art. 38 freeze, figures, districts) is recorded on the `Municipality` aggregates by the application, in
the same save.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import Any
from uuid import UUID, uuid5

from domain.acts import ActContext, ChainedAggregate, refuse, require_date, require_legal_date
from domain.calendar import Calendar
from domain.errors import ActOutOfOrderError, InvalidActError, LegalRuleError
from domain.registry import REGISTRY_NAMESPACE
from domain.names import ToponymList, normalise_name
from domain.rules import (
    ART_4_FIGURES, ART_4_ITEMS, Judgement, amount, check_district_law_date, check_name, check_signatures,
    judge_council, judge_dispensation, judge_extinction_request, judge_figures, judge_plebiscite, whole,
)

KINDS = ("creation", "incorporation", "fusion", "dismemberment", "district_creation", "district_suppression",
         "extinction")
MUNICIPAL_KINDS = ("creation", "incorporation", "fusion", "dismemberment")
DISTRICT_KINDS = ("district_creation", "district_suppression")
NEW_MUNICIPALITY_KINDS = ("creation", "fusion")
COUNCIL_ARTICLE = {"dismemberment": "art-28", "incorporation": "art-29", "fusion": "art-30"}
FINDING_ITEMS = {
    "creation": ART_4_ITEMS,
    "dismemberment": ("art-4-I", "art-4-II", "art-4-III", "art-4-IV"),
    "extinction": ART_4_ITEMS,
    "district_creation": ("art-31-I", "art-31-II", "art-31-III"),
}
BOOLEAN_ITEMS = ("art-4-V", "art-4-VI", "art-31-III")
PREFECT_BILLS = {"art-23-I": "budget-proposal", "art-23-II": "administrative-organization-bill",
                 "art-23-III": "civil-service-regime-bill", "art-23-IV": "staff-framework-bill"}
INSTALLATION_DEADLINES = ("budget-proposal", "administrative-organization-bill", "civil-service-regime-bill",
                          "staff-framework-bill", "organic-law")


def case_id_for(number: str) -> UUID:
    """Deterministic id of the case numbered `number` (e.g. LC35-2026-0001)."""
    return uuid5(REGISTRY_NAMESPACE, f"case:{number}")


class Case(ChainedAggregate):
    """A case under LC 35/1991, from petition to its final act."""

    # ================================================================== events

    class PetitionFiled(ChainedAggregate.Created):
        """Art. 8, 9 (and 31, 37): the case opens (petição / representação / requerimento)."""

        number: str
        kind: str
        initiator: str
        municipalities: list[str]
        receiving: str | None
        areas: list[dict[str, Any]]
        proposed_name: str | None
        district: str | None
        signatures: list[dict[str, Any]]
        documents: dict[str, str]
        impediments: list[dict[str, str]]
        freezes: list[str]

        def assign(self, case: Case) -> None:
            case.number, case.kind, case.initiator = self.number, self.kind, self.initiator
            case.municipalities, case.receiving = list(self.municipalities), self.receiving
            case.areas, case.proposed_name, case.district = list(self.areas), self.proposed_name, self.district
            case.signature_count = len(self.signatures)
            case.documents = dict(self.documents)
            case.impediments = list(self.impediments)
            case.frozen = list(self.freezes)
            case.opened_on = self.occurred_on
            case.stage = "petition-filed"
            case.requisitions, case.findings, case.councils = {}, {}, {}
            case.requirements, case.dispensation, case.plebiscite = None, None, None
            case.result, case.communicated_on, case.registered_on, case.bill = None, None, None, None
            case.law, case.administrator_list, case.administrator = None, None, None
            case.installation, case.remuneration, case.organic_law = None, None, None
            case.extinction_request = None
            case.deadlines, case.communications, case.breaches, case.bills = {}, {}, [], {}
            case.archived, case.concluded_on = None, None

    class RequisitionIssued(ChainedAggregate.Event):
        """Art. 10: the Mesa requisitions information from a competent body (requisição)."""

        requisition: str
        body: str
        items: list[str]

        def assign(self, case: Case) -> None:
            case.requisitions[self.requisition] = {"body": self.body, "items": list(self.items),
                                                   "issued_on": self.occurred_on, "received_on": None}
            case.stage = "instruction"

    class RequisitionReceived(ChainedAggregate.Event):
        """Art. 10: the requisitioned body received the requisition (the 30 days run from here)."""

        requisition: str

        def assign(self, case: Case) -> None:
            case.requisitions[self.requisition]["received_on"] = self.occurred_on

    class RequisitionRefused(ChainedAggregate.Event):
        """Art. 10 §1: a body refused a requisition: recorded as a breach; the case goes on."""

        requisition: str
        body: str
        reason: str

        def assign(self, case: Case) -> None:
            case.breaches.append({"requisition": self.requisition, "body": self.body, "on": self.occurred_on,
                                  "reason": self.reason})

    class FindingRecorded(ChainedAggregate.Event):
        """Art. 4 par. ún., Art. 32: a competent body's finding (apuração) with its value and document."""

        item: str
        body: str
        value: Any
        by_origin: dict[str, Any]
        state_tax_revenue: Any
        document: str
        holds: bool | None

        def assign(self, case: Case) -> None:
            case.findings.setdefault(self.item, {})[self.body] = {
                "value": self.value, "by_origin": dict(self.by_origin), "state_tax_revenue": self.state_tax_revenue,
                "document": self.document, "on": self.occurred_on, "holds": self.holds}

    class RequirementsVerified(ChainedAggregate.Event):
        """Art. 4, 5 (Art. 11's condition): every requirement holds, for the new and every origin municipality."""

        verdicts: dict[str, Any]
        remainders: dict[str, Any]

        def assign(self, case: Case) -> None:
            case.requirements = {"on": self.occurred_on, "verdicts": self.verdicts, "remainders": self.remainders}
            case.stage = "requirements-met"

    class RequirementsLapsed(ChainedAggregate.Event):
        """Art. 4, 5: a later finding breaks requirements recorded as met; the plebiscite waits again."""

        reason: str

        def assign(self, case: Case) -> None:
            case.requirements = None
            case.stage = "instruction"

    class CouncilDecreeRecorded(ChainedAggregate.Event):
        """Art. 28, 29, 30: a council's legislative decree (decreto legislativo) and its verdict."""

        municipality: str
        decree: str
        seats: int
        yes_votes: int
        approved: bool

        def assign(self, case: Case) -> None:
            case.councils[self.municipality] = {"decree": self.decree, "seats": self.seats,
                                                "yes_votes": self.yes_votes, "approved": self.approved,
                                                "on": self.occurred_on}

    class PlebisciteDispensed(ChainedAggregate.Event):
        """Art. 1-I, 1-III: no plebiscite for an area change within the net-area brackets."""

        justification: str
        figures: dict[str, Any]

        def assign(self, case: Case) -> None:
            case.dispensation = {"on": self.occurred_on, "figures": self.figures,
                                 "justification": self.justification}
            case.stage = "plebiscite-dispensed"

    class PlebisciteDecreed(ChainedAggregate.Event):
        """Art. 11: the Assembly's legislative decree calling the plebiscite, sent to the TRE."""

        decree: str

        def assign(self, case: Case) -> None:
            case.plebiscite = {"decree": self.decree, "decreed_on": self.occurred_on, "resolution": None,
                               "scheduled_for": None}
            case.stage = "plebiscite-decreed"

    class PlebisciteScheduled(ChainedAggregate.Event):
        """Art. 12: the TRE's resolution regulating the plebiscite and fixing its date."""

        resolution: str
        plebiscite_date: date

        def assign(self, case: Case) -> None:
            case.plebiscite.update(resolution=self.resolution, scheduled_for=self.plebiscite_date)
            case.stage = "plebiscite-scheduled"

    class PlebisciteResultHomologated(ChainedAggregate.Event):
        """Art. 13 (and Art. 30 par. ún.): the TRE homologates the result; the verdict is recorded."""

        voted_on: date
        populations: dict[str, Any]
        favourable: bool
        reasons: list[str]
        seat: str | None

        def assign(self, case: Case) -> None:
            case.result = {"voted_on": self.voted_on, "homologated_on": self.occurred_on,
                           "populations": self.populations, "favourable": self.favourable,
                           "reasons": list(self.reasons), "seat": self.seat}
            case.stage = "result-homologated"

    class ResultCommunicated(ChainedAggregate.Event):
        """Art. 14: the TRE communicates the homologated result to the Assembly president."""

        def assign(self, case: Case) -> None:
            case.communicated_on = self.occurred_on
            case.stage = "result-communicated"

    class ResultRegisteredInPlenary(ChainedAggregate.Event):
        """Art. 15: the Assembly president registers the result in plenary and informs the Governor."""

        governor_informed: bool

        def assign(self, case: Case) -> None:
            case.registered_on = self.occurred_on
            case.stage = "result-registered"

    class CreationBillDrafted(ChainedAggregate.Event):
        """Art. 16: the CCJ drafts the bill (projeto de lei) creating, incorporating, merging or moving territory."""

        bill: str

        def assign(self, case: Case) -> None:
            case.bill = {"bill": self.bill, "on": self.occurred_on}
            case.stage = "bill-drafted"

    class LawEnacted(ChainedAggregate.Event):
        """Art. 17 (state law) or Art. 31 (municipal law) or Art. 37 (extinction law): the case's law."""

        law: str
        name: str | None
        seat: str | None
        contents: dict[str, Any]
        new_municipality: str | None
        legislation_of: dict[str, Any]

        def assign(self, case: Case) -> None:
            case.law = {"law": self.law, "on": self.occurred_on, "name": self.name, "seat": self.seat,
                        "contents": self.contents, "new_municipality": self.new_municipality,
                        "legislation_of": self.legislation_of}
            case.frozen = []
            case.stage = "law-enacted"

    class AdministratorListSent(ChainedAggregate.Event):
        """Art. 20: the Governor's list of three names (lista tríplice) for Administrator."""

        names: list[str]

        def assign(self, case: Case) -> None:
            case.administrator_list = list(self.names)

    class AdministratorAppointed(ChainedAggregate.Event):
        """Art. 20: the Assembly's choice of Administrator from the list."""

        administrator: str

        def assign(self, case: Case) -> None:
            case.administrator = {"name": self.administrator, "on": self.occurred_on}
            case.stage = "administrator-appointed"

    class MunicipalityInstalled(ChainedAggregate.Event):
        """Art. 19: installation, when the Mayor, Vice-Mayor and councillors take office (posse)."""

        mayor: str
        vice_mayor: str
        councillors: list[str]

        def assign(self, case: Case) -> None:
            case.installation = {"on": self.occurred_on, "mayor": self.mayor, "vice_mayor": self.vice_mayor,
                                 "councillors": list(self.councillors)}
            case.stage = "installed"

    class LedgerTransferred(ChainedAggregate.Event):
        """Art. 22 par. ún.: an origin municipality delivers the books and accounts."""

        origin: str
        document: str

    class PrefectBillSubmitted(ChainedAggregate.Event):
        """Art. 23 I-IV: the Mayor sends a bill to the Câmara."""

        item: str
        bill: str

        def assign(self, case: Case) -> None:
            case.bills[self.item] = {"bill": self.bill, "on": self.occurred_on}

    class OrganicLawPromulgated(ChainedAggregate.Event):
        """Art. 24: the Câmara promulgates the organic law (Lei Orgânica)."""

        organic_law: str

        def assign(self, case: Case) -> None:
            case.organic_law = {"law": self.organic_law, "on": self.occurred_on}

    class RemunerationFixed(ChainedAggregate.Event):
        """Art. 25: the Câmara fixes the remuneration of Mayor, Vice-Mayor and councillors."""

        act: str

        def assign(self, case: Case) -> None:
            case.remuneration = {"act": self.act, "on": self.occurred_on}

    class PersonnelDocumentsSent(ChainedAggregate.Event):
        """Art. 26 par. ún.: an origin municipality sends the documents of the staff serving in the territory."""

        origin: str
        document: str

    class CommunicationSent(ChainedAggregate.Event):
        """Art. 40: the creation or installation communicated (remessa da lei) to one recipient."""

        subject: str
        recipient: str
        document: str

        def assign(self, case: Case) -> None:
            case.communications[f"{self.subject}:{self.recipient}"] = {"on": self.occurred_on,
                                                                      "document": self.document}

    class ExtinctionRequestCertified(ChainedAggregate.Event):
        """Art. 37-II: the TRE certifies the valid signatures of the request against the registered voters."""

        valid_signatures: int
        registered_voters: int
        holds: bool
        figures: dict[str, Any]

        def assign(self, case: Case) -> None:
            case.extinction_request = {"on": self.occurred_on, "holds": self.holds, "figures": self.figures}

    class CaseArchived(ChainedAggregate.Event):
        """Art. 16 par. ún. (or withdrawal, rejection): the case is archived; its freeze is lifted."""

        reason: str

        def assign(self, case: Case) -> None:
            case.archived = {"on": self.occurred_on, "reason": self.reason}
            case.frozen = []
            case.stage = "archived"

    class CaseConcluded(ChainedAggregate.Event):
        """Every obligation of the case is closed (RULES: case lifecycles, step 7)."""

        def assign(self, case: Case) -> None:
            case.concluded_on = self.occurred_on
            case.stage = "concluded"

    class DeadlineOpened(ChainedAggregate.Event):
        """A statutory deadline starts: its rule, due date (as computed then), convention and who must act."""

        deadline: str
        rule: str
        who: str
        municipality: str | None
        starts_on: date
        due_on: date | None
        raw_due_on: date | None
        convention: str | None
        calendar_version: str | None
        moved_over: list[str]

        def assign(self, case: Case) -> None:
            case.deadlines[self.deadline] = {
                "rule": self.rule, "article": self.article, "who": self.who, "municipality": self.municipality,
                "starts_on": self.starts_on, "due_on": self.due_on, "status": "open", "closed_by": None,
                "closed_on": None, "days_late": None}

    class DeadlineDueDateSet(ChainedAggregate.Event):
        """A deadline due on a later event's date (Art. 26 par. ún.: on the installation date) gets that date."""

        deadline: str
        due_on: date

        def assign(self, case: Case) -> None:
            case.deadlines[self.deadline]["due_on"] = self.due_on

    class DeadlineMet(ChainedAggregate.Event):
        """A statutory deadline is closed by its act, on time or late (the record of lateness stays)."""

        deadline: str
        closing_act: str
        on_time: bool
        days_late: int

        def assign(self, case: Case) -> None:
            case.deadlines[self.deadline].update(
                status="met-on-time" if self.on_time else "met-late", closed_by=self.closing_act,
                closed_on=self.occurred_on, days_late=self.days_late)

    class DeadlineMissed(ChainedAggregate.Event):
        """A deadline found missed by an act (Art. 26 par. ún.: documents not sent by the installation)."""

        deadline: str

        def assign(self, case: Case) -> None:
            case.deadlines[self.deadline]["status"] = "missed"

    # ================================================================== opening

    @classmethod
    def open(cls, ctx: ActContext, *, number: str, kind: str, municipalities: list[str],
             receiving: str | None = None, areas: list[dict[str, Any]] | None = None,
             proposed_name: str | None = None, district: str | None = None,
             signatures: list[dict[str, Any]] | None = None, documents: dict[str, str] | None = None,
             existing: set[str] = frozenset()) -> Case:
        """Art. 8, 9 (Art. 31 for districts, Art. 37 for extinction): open a case and decide what it freezes.

        `existing` is the set of registered IBGE codes (the application reads the registry).
        """
        require_legal_date(ctx, None)
        statute, day = ctx.statute, ctx.occurred_on
        if kind not in KINDS:
            raise InvalidActError("kind", f"{kind!r} is not one of {', '.join(KINDS)}")
        areas, signatures, documents = list(areas or []), list(signatures or []), dict(documents or {})
        municipalities = list(dict.fromkeys(municipalities))
        for code in municipalities + ([receiving] if receiving else []):
            if code not in existing:
                raise InvalidActError("municipalities", f"{code} is not a municipality of the registry")
        versions: dict[str, str] = {}
        article = "art-8"
        if kind in DISTRICT_KINDS:
            article = "art-31"
            ctx.require_competent("district-petition-filed", article, municipality=municipalities[0] if municipalities else None)
            if len(municipalities) != 1 or not (district or "").strip():
                raise InvalidActError("district", "a district case names one municipality and the district")
            initiator = ctx.actor.role
        elif kind == "extinction":
            article = "art-37"
            ctx.require_competent("extinction-requested", article)
            if len(municipalities) != 1:
                raise InvalidActError("municipalities", "an extinction case names the one municipality to extinguish")
            initiator = "voters"
        else:
            ctx.require_competent("petition-filed", article)
            initiator = {"governor": "governor", "deputy": "deputy"}.get(ctx.actor.role, "voters")
            _check_territories(kind, municipalities, receiving, areas)
            if initiator == "voters":
                area_keys = [_area_key(a) for a in areas] or municipalities
                versions.update(check_signatures(statute, day, signatures, area_keys).versions)
            elif signatures:
                raise InvalidActError("signatures", "signatures accompany a voters' representation only (Art. 8)")
            if initiator != "voters" and kind == "creation":
                missing = [item for item in ART_4_ITEMS if not str(documents.get(item, "")).strip()]
                if missing:
                    raise refuse("art-9", f"a {initiator}'s initiative must come with the Art. 4 documents; "
                                 f"missing: {', '.join(missing)}", missing=missing)
        closed_since, gate_versions = _federal_gate(ctx, kind)
        versions.update(gate_versions)
        impediments = [] if closed_since is None else [{
            "article": "cf-art-18-par-4",
            "message": "no federal complementary law sets the period for this act (EC 15/1996); the law "
                       "enacting it will be refused while the gate is closed"}]
        freezing = kind in MUNICIPAL_KINDS
        freezes = municipalities + ([receiving] if receiving else []) if freezing else []
        return cls._start(
            cls.PetitionFiled, ctx, id=case_id_for(number), article=article, rule_versions=versions,
            number=number, kind=kind, initiator=initiator, municipalities=municipalities, receiving=receiving,
            areas=[_clean_area(a) for a in areas], proposed_name=proposed_name, district=district,
            signatures=signatures, documents=documents, impediments=impediments, freezes=freezes,
        )

    # ================================================================== instruction (Art. 4, 5, 10)

    def issue_requisition(self, ctx: ActContext, *, body: str, items: list[str]) -> str:
        """Art. 10: for a voters' initiative, the Mesa requisitions information from a competent body."""
        self._admit(ctx, "requisition-issued", "art-10")
        if self.initiator != "voters" or self.kind not in MUNICIPAL_KINDS:
            raise ActOutOfOrderError("art-10", "requisitions are issued for a voters' initiative (Art. 10); "
                                     f"this case was initiated by {self.initiator}")
        self._require_not(self.requirements, "art-10", "the requirements were already verified")
        competence = ctx.statute.in_force("competence.finding", ctx.occurred_on).value
        bodies = {b for roles in competence.values() for b in roles}
        if body not in bodies:
            raise InvalidActError("body", f"{body!r} is not a competent body ({', '.join(sorted(bodies))})")
        requisition = f"R{len(self.requisitions) + 1}"
        self._record(self.RequisitionIssued, ctx, article="art-10", requisition=requisition, body=body,
                     items=list(items))
        return requisition

    def receive_requisition(self, ctx: ActContext, calendar: Calendar, *, requisition: str) -> None:
        """Art. 10: the body's receipt of the requisition opens the 30-day answer deadline."""
        self._admit(ctx, "requisition-received", "art-10")
        entry = self._requisition(requisition)
        if entry["received_on"] is not None:
            raise ActOutOfOrderError("art-10", f"requisition {requisition} was received on {entry['received_on']}")
        if ctx.actor.role not in ("assembly-mesa", entry["body"]):
            raise refuse("art-10", f"the receipt of {requisition} is recorded by the Mesa or by {entry['body']}")
        self._record(self.RequisitionReceived, ctx, article="art-10", requisition=requisition)
        self._open_deadline(ctx, calendar, "requisition-answer", key=f"requisition-answer:{requisition}",
                            who=entry["body"])

    def refuse_requisition(self, ctx: ActContext, *, requisition: str, reason: str) -> None:
        """Art. 10 §1: no authority may refuse; a refusal is recorded as a breach and the deadline stays open."""
        self._admit(ctx, "requisition-refused", "art-10")
        entry = self._requisition(requisition)
        if not reason.strip():
            raise InvalidActError("reason", "the refusal's terms are required")
        self._record(self.RequisitionRefused, ctx, article="art-10", requisition=requisition,
                     body=entry["body"], reason=reason)

    def record_finding(self, ctx: ActContext, *, item: str, value: Any, document: str,
                       by_origin: dict[str, Any] | None = None, state_tax_revenue: Any = None,
                       origin_figures: dict[str, dict[str, Any]] | None = None) -> None:
        """Art. 4 par. ún. / Art. 32: a competent body records its finding; it answers its open requisitions.

        In a creation case, the finding that completes Art. 4 records, in the same save, that the requirements
        are met when Art. 5 also holds on the registry figures in force (`origin_figures`); otherwise the Mesa's
        verification or the plebiscite decree judges them later and says what fails.
        """
        article = "art-32" if item.startswith("art-31") else "art-4-par-unico"
        self._admit(ctx, None, article)
        if self.kind == "fusion":
            raise refuse("art-6", "a fusion case is dispensed from the Art. 4 verification")
        allowed = FINDING_ITEMS.get(self.kind, ())
        if item not in allowed:
            raise InvalidActError("item", f"{item!r} is not a finding of a {self.kind} case ({', '.join(allowed)})")
        if self.kind != "extinction":
            self._require_not(self.law, article, "the law was already enacted")
        if self.kind == "creation" and self.plebiscite is not None:
            raise ActOutOfOrderError("art-11", f"the plebiscite was decreed on {self.plebiscite['decreed_on']} on the "
                                     f"requirements then met; findings are no longer recorded")
        competence = ctx.statute.in_force("competence.finding", ctx.occurred_on)
        ctx.require_role(competence.value[item], competence.article, f"the {item} finding")
        if not document.strip():
            raise InvalidActError("document", "a finding cites its document")
        versions = {competence.id: competence.version}
        value, by_origin, tax = self._finding_value(item, value, by_origin or {}, state_tax_revenue)
        holds = bool(value) if item in BOOLEAN_ITEMS else None
        self._record(self.FindingRecorded, ctx, article=item, rule_versions=versions, item=item,
                     body=ctx.actor.role, value=value, by_origin=by_origin, state_tax_revenue=tax,
                     document=document, holds=holds)
        for requisition, entry in self.requisitions.items():
            key = f"requisition-answer:{requisition}"
            if entry["body"] == ctx.actor.role and self._deadline_open(key):
                self._close_deadline(ctx, key, "finding-recorded")
        if self.kind == "creation" and origin_figures is not None:
            self._rejudge_requirements(ctx, origin_figures)

    def _rejudge_requirements(self, ctx: ActContext, origin_figures: dict[str, dict[str, Any]]) -> None:
        """After a creation's finding: record the requirements met, or lapsed if a new finding breaks them."""
        try:
            self._record_requirements_met(ctx, origin_figures)
        except LegalRuleError as refusal:
            if self.requirements is not None:
                self._record(self.RequirementsLapsed, ctx, article=refusal.article, reason=refusal.message)

    def verify_requirements(self, ctx: ActContext, origin_figures: dict[str, dict[str, Any]]) -> None:
        """Art. 4 and 5: every item holds for the new municipality, and every origin keeps them after the split.

        `origin_figures` holds each origin's registry figures in force on the act's date (None = unknown).
        """
        self._admit(ctx, "requirements-verified", "art-11")
        if self.kind != "creation":
            raise ActOutOfOrderError("art-4", f"requirements are verified in a creation case, not {self.kind}")
        self._require_not(self.requirements, "art-11", "the requirements were already verified")
        self._record_requirements_met(ctx, origin_figures)

    def _record_requirements_met(self, ctx: ActContext, origin_figures: dict[str, dict[str, Any]]) -> None:
        """Judge Art. 4 I-VI and Art. 5; record that they are met, or refuse naming the first that fails."""
        judgement = Judgement(holds=True)
        missing = [item for item in ART_4_ITEMS if item not in self.findings]
        missing += [f"art-4-VI ({body})" for body in ("pge", "sectma")
                    if "art-4-VI" in self.findings and body not in self.findings["art-4-VI"]]
        if missing:
            raise refuse("art-4-par-unico", f"findings missing: {', '.join(missing)}", missing=missing)
        figures = {figure: self._finding(item)["value"] for item, figure in ART_4_FIGURES.items()}
        tax = self._finding("art-4-III")["state_tax_revenue"]
        verdicts = judge_figures(ctx.statute, ctx.occurred_on, figures, tax, judgement, "the new municipality")
        for item in BOOLEAN_ITEMS[:2]:
            verdicts[item] = all(f["holds"] for f in self.findings[item].values())
            if not verdicts[item]:
                judgement.reasons.append(f"{item}: the finding does not hold")
        failed = [item for item, ok in verdicts.items() if not ok]
        if failed:
            raise refuse(failed[0], "; ".join(judgement.reasons), verdicts=verdicts)
        remainders = self._art_5_remainders(ctx, origin_figures, judgement)
        self._record(self.RequirementsVerified, ctx, article="art-5", rule_versions=judgement.versions,
                     verdicts=verdicts, remainders=remainders)

    def _art_5_remainders(self, ctx: ActContext, origin_figures: dict[str, dict[str, Any]],
                          judgement: Judgement, origins: list[str] | None = None) -> dict[str, Any]:
        """Art. 5: each origin's figures minus the area leaving it must still meet Art. 4 I-IV."""
        tax = self._finding("art-4-III")["state_tax_revenue"] if "art-4-III" in self.findings else None
        remainders: dict[str, Any] = {}
        for origin in origins or self.municipalities:
            known = origin_figures.get(origin, {})
            portions = {figure: self._portion(item, origin) for item, figure in ART_4_FIGURES.items()}
            left = {figure: _remainder(known.get(figure), portions[figure]) for figure in portions}
            unknown = [figure for figure, value in left.items() if value is None]
            if unknown:
                raise refuse("art-5", f"the {', '.join(unknown)} of origin {origin} on {ctx.occurred_on.isoformat()} "
                             f"is not known in the registry (or the area's share has no finding); record it "
                             f"before judging Art. 5", origin=origin, unknown=unknown)
            verdicts = judge_figures(ctx.statute, ctx.occurred_on, left, tax, judgement, f"origin {origin} would keep")
            remainders[origin] = {"figures": {k: str(v) for k, v in left.items()}, "verdicts": verdicts}
            if not all(verdicts.values()):
                raise refuse("art-5", f"creating this municipality would make origin {origin} lose the Art. 4 "
                             f"requirements: {'; '.join(judgement.reasons)}", origin=origin, remainder=remainders[origin])
        return remainders

    # ================================================================== councils, dispensation, plebiscite

    def record_council_decree(self, ctx: ActContext, *, municipality: str, decree: str, seats: Any,
                              yes_votes: Any) -> None:
        """Art. 28, 29, 30: each interested council's legislative decree, approved by absolute majority."""
        article = COUNCIL_ARTICLE.get(self.kind)
        if article is None:
            raise ActOutOfOrderError("art-28", f"a {self.kind} case has no council approval (Art. 28-30)")
        self._admit(ctx, "council-decree-recorded", article, municipality=municipality)
        if municipality not in self._territories():
            raise InvalidActError("municipality", f"{municipality} is not a municipality of this case")
        if municipality in self.councils:
            raise ActOutOfOrderError(article, f"the council of {municipality} already decided "
                                     f"({self.councils[municipality]['decree']})")
        self._require_not(self.plebiscite or self.dispensation, article, "the plebiscite stage was reached")
        judgement = judge_council(ctx.statute, ctx.occurred_on, article, seats, yes_votes)
        self._record(self.CouncilDecreeRecorded, ctx, article=article, rule_versions=judgement.versions,
                     municipality=municipality, decree=decree, seats=judgement.figures["seats"],
                     yes_votes=judgement.figures["yes_votes"], approved=judgement.holds)

    def dispense_plebiscite(self, ctx: ActContext, *, justification: str, areas_km2: dict[str, Decimal | None],
                            names: dict[str, str]) -> None:
        """Art. 1-I, 1-II, 1-III: dispense the plebiscite when every net area ceded is within its bracket."""
        self._admit(ctx, "plebiscite-dispensed", "art-1-I")
        self._require_councils(ctx)
        self._require_not(self.plebiscite or self.dispensation, "art-1-I", "the plebiscite was already decided")
        if not justification.strip():
            raise InvalidActError("justification", "Art. 1-II's criteria are stated as a justification")
        net = self._net_areas()
        judgement = judge_dispensation(ctx.statute, ctx.occurred_on, self.kind, net, areas_km2, names)
        if not judgement.holds:
            raise refuse("art-1-I", "; ".join(judgement.reasons), figures=judgement.figures)
        self._record(self.PlebisciteDispensed, ctx, article="art-1-I", rule_versions=judgement.versions,
                     justification=justification, figures=judgement.figures)

    def decree_plebiscite(self, ctx: ActContext, *, decree: str,
                          origin_figures: dict[str, dict[str, Any]] | None = None) -> None:
        """Art. 11: once the requirements hold (or the councils approved), the Assembly decrees the plebiscite.

        A creation whose requirements were not yet recorded as met is judged now (Art. 4, 5), in the same save.
        """
        self._admit(ctx, "plebiscite-decreed", "art-11")
        if self.kind not in MUNICIPAL_KINDS:
            raise ActOutOfOrderError("art-11", f"a {self.kind} case holds no plebiscite")
        self._require_not(self.plebiscite or self.dispensation, "art-11", "the plebiscite was already decided")
        if self.kind == "creation" and self.requirements is None:
            if origin_figures is None:
                raise ActOutOfOrderError("art-11", "the plebiscite is decreed once the Art. 4 requirements are "
                                         "verified; they are not yet")
            self._record_requirements_met(ctx, origin_figures)
        self._require_councils(ctx)
        self._record(self.PlebisciteDecreed, ctx, article="art-11", decree=decree)

    def schedule_plebiscite(self, ctx: ActContext, *, resolution: str, plebiscite_date: date) -> None:
        """Art. 12: the TRE regulates the plebiscite by resolution and fixes its date."""
        self._admit(ctx, "plebiscite-scheduled", "art-12")
        if self.plebiscite is None:
            raise ActOutOfOrderError("art-12", "the TRE schedules a plebiscite the Assembly decreed (Art. 11)")
        self._require_not(self.result, "art-12", "the result was already homologated")
        if require_date("plebiscite_date", plebiscite_date) < ctx.occurred_on:
            raise InvalidActError("plebiscite_date", "the plebiscite cannot be fixed before its resolution")
        self._record(self.PlebisciteScheduled, ctx, article="art-12", resolution=resolution,
                     plebiscite_date=plebiscite_date)

    def homologate_result(self, ctx: ActContext, calendar: Calendar, *, voted_on: date,
                          populations: dict[str, dict[str, Any]], seat_votes: dict[str, Any] | None = None) -> None:
        """Art. 13, 30 par. ún.: the TRE homologates; favourable only if every population's vote is."""
        self._admit(ctx, "plebiscite-result-homologated", "art-13")
        if self.plebiscite is None or self.plebiscite["scheduled_for"] is None:
            raise ActOutOfOrderError("art-13", "a result is homologated after the TRE scheduled the plebiscite")
        self._require_not(self.result, "art-13", "the result was already homologated")
        if not (self.plebiscite["scheduled_for"] <= require_date("voted_on", voted_on) <= ctx.occurred_on):
            raise InvalidActError("voted_on", f"the vote falls between the scheduled date "
                                  f"{self.plebiscite['scheduled_for'].isoformat()} and the homologation")
        expected = self.municipalities if self.kind == "fusion" else ["area"]
        if sorted(populations) != sorted(expected):
            raise InvalidActError("populations", f"results are given for {', '.join(expected)}")
        judgements = {label: judge_plebiscite(ctx.statute, ctx.occurred_on, populations[label], label)
                      for label in expected}
        versions = {k: v for j in judgements.values() for k, v in j.versions.items()}
        favourable = all(j.holds for j in judgements.values())
        reasons = [r for j in judgements.values() for r in j.reasons]
        seat = None
        if self.kind == "fusion":
            seat = _chosen_seat(seat_votes or {})
        self._record(self.PlebisciteResultHomologated, ctx, article="art-13", rule_versions=versions,
                     voted_on=voted_on, populations={k: j.figures for k, j in judgements.items()},
                     favourable=favourable, reasons=reasons, seat=seat)
        self._open_deadline(ctx, calendar, "result-communication")

    def communicate_result(self, ctx: ActContext, calendar: Calendar) -> None:
        """Art. 14: the TRE communicates the result; Art. 15's and (if favourable) Art. 16's deadlines start."""
        self._admit(ctx, "result-communicated", "art-14")
        if self.result is None:
            raise ActOutOfOrderError("art-14", "the TRE communicates a homologated result")
        self._require_not(self.communicated_on, "art-14", "the result was already communicated")
        self._record(self.ResultCommunicated, ctx, article="art-14")
        self._close_deadline(ctx, "result-communication", "result-communicated")
        self._open_deadline(ctx, calendar, "plenary-registration")
        if self.result["favourable"]:
            self._open_deadline(ctx, calendar, "creation-bill")

    def register_in_plenary(self, ctx: ActContext) -> None:
        """Art. 15: the Assembly president registers the result in plenary and informs the Governor."""
        self._admit(ctx, "result-registered-in-plenary", "art-15")
        if self.communicated_on is None:
            raise ActOutOfOrderError("art-15", "the president registers a result the TRE communicated (Art. 14)")
        self._require_not(self.registered_on, "art-15", "the result was already registered")
        self._record(self.ResultRegisteredInPlenary, ctx, article="art-15", governor_informed=True)
        self._close_deadline(ctx, "plenary-registration", "result-registered-in-plenary")

    def draft_bill(self, ctx: ActContext, *, bill: str) -> None:
        """Art. 16: with a favourable result (or a dispensation, Art. 1-I), the CCJ drafts the bill."""
        self._admit(ctx, "creation-bill-drafted", "art-16")
        if self.kind not in MUNICIPAL_KINDS:
            raise ActOutOfOrderError("art-16", f"a {self.kind} case has no state bill from the CCJ")
        self._require_not(self.bill, "art-16", "the bill was already drafted")
        if self.dispensation is None:
            if self.communicated_on is None:
                raise ActOutOfOrderError("art-16", "the CCJ drafts the bill once the result is communicated (Art. 14)")
            if not self.result["favourable"]:
                raise refuse("art-13", f"the plebiscite was unfavourable ({'; '.join(self.result['reasons'])}): "
                             f"no bill is drafted and the case is to be archived (Art. 16 par. ún.)",
                             reasons=self.result["reasons"])
        self._record(self.CreationBillDrafted, ctx, article="art-16", bill=bill)
        self._close_deadline(ctx, "creation-bill", "creation-bill-drafted")

    # ================================================================== the law

    def enact_law(self, ctx: ActContext, calendar: Calendar, *, law: str, toponyms: ToponymList | None = None,
                  origin_figures: dict[str, dict[str, Any]] | None = None, name: str | None = None,
                  seat_origin: str | None = None, limits: str = "", comarca: str = "",
                  districts: list[str] | None = None, living_person_declaration: bool = False,
                  ibge_code: str | None = None, reintegration: dict[str, Any] | None = None) -> None:
        """Art. 17 (state law), Art. 31 (municipal law), Art. 37 (extinction law): the case's law.

        Judged here: the order of acts, the federal gate (CF art. 18 §4) on the law's date, Art. 17's
        contents and name, Art. 5 for a dismemberment, Art. 21's legislation, Art. 31 and 32 for a district,
        Art. 37 for an extinction. The application passes the registry's figures and the toponym list in.
        """
        act = "district-law-enacted" if self.kind in DISTRICT_KINDS else "law-enacted"
        article = {"district_creation": "art-31", "district_suppression": "art-31", "extinction": "art-37"}.get(
            self.kind, "art-17")
        self._admit(ctx, act, article, municipality=self.municipalities[0] if self.kind in DISTRICT_KINDS else None)
        self._require_not(self.law, article, "the law was already enacted")
        origin_figures = origin_figures or {}
        versions: dict[str, str] = {}
        contents: dict[str, Any] = {"limits": limits, "comarca": comarca, "districts": list(districts or [])}
        legislation_of: dict[str, Any] = {}
        new_municipality = None
        seat = None
        if self.kind in MUNICIPAL_KINDS:
            if self.bill is None:
                raise ActOutOfOrderError("art-16", "the law follows the CCJ's bill (Art. 16); none was drafted")
            versions.update(self._judge_federal_gate(ctx))
        if self.kind in NEW_MUNICIPALITY_KINDS:
            seat = self.result["seat"] if self.kind == "fusion" else name
            self._judge_law_contents(name, seat, limits, comarca, districts)
            versions.update(check_name(toponyms or ToponymList.shipped(), name or "", "art-17-par-unico",
                                       living_person_declaration))
            new_municipality = ibge_code or f"new:{self.number}"
            legislation_of = self._legislation_of(seat_origin, origin_figures)
        elif self.kind == "dismemberment":
            judgement = Judgement(holds=True)
            contents["art-5"] = self._art_5_remainders(ctx, origin_figures, judgement, origins=self.municipalities)
            versions.update(judgement.versions)
        elif self.kind == "district_creation":
            versions.update(self._judge_district_findings(ctx))
            versions.update(check_district_law_date(ctx.statute, ctx.occurred_on).versions)
            versions.update(check_name(toponyms or ToponymList.shipped(), self.district or "", "art-32-par-unico",
                                       living_person_declaration))
        elif self.kind == "extinction":
            contents["lost"], extinction_versions = self._judge_extinction(ctx)
            versions.update(extinction_versions)
            contents["reintegration"] = _reintegration(reintegration or {})
        self._record(self.LawEnacted, ctx, article=article, rule_versions=versions, law=law, name=name, seat=seat,
                     contents=contents, new_municipality=new_municipality, legislation_of=legislation_of)
        if self.kind in NEW_MUNICIPALITY_KINDS:
            for origin in self.municipalities:
                self._open_deadline(ctx, calendar, "personnel-documents", key=f"personnel-documents:{origin}",
                                    who="origin-municipality", municipality=origin)

    def _judge_law_contents(self, name: str | None, seat: str | None, limits: str, comarca: str,
                            districts: list[str] | None) -> None:
        """Art. 17 I-IV: the law names the municipality after its seat, gives limits, comarca and districts."""
        if not (name or "").strip():
            raise refuse("art-17-I", "the law names the new municipality")
        if seat and normalise_name(seat) != normalise_name(name or ""):
            raise refuse("art-17-I", f"the name must be that of the seat ({seat}), not {name}")
        if not limits.strip():
            raise refuse("art-17-II", "the law states the municipality's limits")
        if not comarca.strip():
            raise refuse("art-17-III", "the law states the comarca it belongs to")
        if not districts:
            raise refuse("art-17-IV", "the law lists the districts with their boundaries")

    def _legislation_of(self, seat_origin: str | None, origin_figures: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """Art. 21: the seat's origin's legislation (creation), or the largest-revenue origin's (fusion)."""
        if self.kind == "creation":
            origin = seat_origin or (self.municipalities[0] if len(self.municipalities) == 1 else None)
            if origin not in self.municipalities:
                raise InvalidActError("seat_origin", f"name the origin municipality of the seat "
                                      f"({', '.join(self.municipalities)})")
            return {"municipality": origin, "article": "art-21-I"}
        revenues = {code: origin_figures.get(code, {}).get("revenue") for code in self.municipalities}
        unknown = [code for code, value in revenues.items() if value is None]
        if unknown:
            return {"municipality": None, "article": "art-21-II",
                    "note": f"revenue unknown in the registry for {', '.join(unknown)}"}
        return {"municipality": max(revenues, key=lambda code: revenues[code]), "article": "art-21-II",
                "revenues": {code: str(value) for code, value in revenues.items()}}

    def _judge_federal_gate(self, ctx: ActContext) -> dict[str, str]:
        """CF art. 18 §4: while no federal period is open, no creation/incorporation/fusion/dismemberment law."""
        closed_since, versions = _federal_gate(ctx, self.kind)
        if closed_since is not None:
            raise refuse("cf-art-18-par-4", f"since {closed_since.isoformat()} a {self.kind} law needs "
                         f"the period of a federal complementary law, and none is open on "
                         f"{ctx.occurred_on.isoformat()} (EC 15/1996; STF ADPF 819)",
                         gate_since=closed_since.isoformat())
        return versions

    def _judge_district_findings(self, ctx: ActContext) -> dict[str, str]:
        """Art. 31 par. ún. I-III: buildings, population and the boundary description all hold."""
        judgement = Judgement(holds=True)
        missing = [item for item in FINDING_ITEMS["district_creation"] if item not in self.findings]
        missing += [f"art-31-III ({body})" for body in ("pge", "sectma")
                    if "art-31-III" in self.findings and body not in self.findings["art-31-III"]]
        if missing:
            raise refuse("art-32", f"findings missing: {', '.join(missing)}", missing=missing)
        for item, parameter_id, what in (("art-31-I", "art-31-I.buildings", "buildings"),
                                         ("art-31-II", "art-31-II.population", "inhabitants")):
            rule = judgement.use(ctx.statute.in_force(parameter_id, ctx.occurred_on))
            found = self._finding(item)["value"]
            if not rule.holds(found):
                raise refuse(item, f"the district has {found} {what}; {rule.comparison_words} {rule.value} are required",
                             required=rule.value, found=found)
        if not all(f["holds"] for f in self.findings["art-31-III"].values()):
            raise refuse("art-31-III", "the boundary description (art. 18 par. ún. II) was not found adequate")
        return judgement.versions

    def _judge_extinction(self, ctx: ActContext) -> tuple[list[str], dict[str, str]]:
        """Art. 37: both the loss of the Art. 4 requirements (I) and the two-thirds request (II)."""
        if self.extinction_request is None or not self.extinction_request["holds"]:
            raise refuse("art-37-II", "the request of two thirds of the registered voters is not certified "
                         "by the TRE" + ("" if self.extinction_request is None else
                                         f" ({self.extinction_request['figures']})"))
        judgement = Judgement(holds=True)
        figures = {figure: self._finding(item)["value"] if item in self.findings else None
                   for item, figure in ART_4_FIGURES.items()}
        tax = self._finding("art-4-III")["state_tax_revenue"] if "art-4-III" in self.findings else None
        verdicts = judge_figures(ctx.statute, ctx.occurred_on, figures, tax, judgement, "the municipality")
        found = {item for item in self.findings} - ({"art-4-II"} if "art-4-I" not in self.findings else set())
        lost = [item for item, ok in verdicts.items() if item in found and not ok]
        lost += [item for item in BOOLEAN_ITEMS[:2] if item in self.findings
                 and any(f["holds"] is False for f in self.findings[item].values())]
        if not lost:
            raise refuse("art-37-I", "no finding shows the loss of an Art. 4 requirement")
        return lost, judgement.versions

    def certify_extinction_request(self, ctx: ActContext, *, valid_signatures: Any, registered_voters: Any) -> None:
        """Art. 37-II: the TRE certifies the request's valid signatures against the registered voters."""
        self._admit(ctx, "request-signatures-certified", "art-37-II")
        if self.kind != "extinction":
            raise ActOutOfOrderError("art-37-II", "only an extinction case has a voters' request to certify")
        judgement = judge_extinction_request(ctx.statute, ctx.occurred_on, valid_signatures, registered_voters)
        self._record(self.ExtinctionRequestCertified, ctx, article="art-37-II", rule_versions=judgement.versions,
                     valid_signatures=judgement.figures["valid_signatures"],
                     registered_voters=judgement.figures["registered_voters"], holds=judgement.holds,
                     figures=judgement.figures)

    # ================================================================== after the law (Art. 19-26, 40)

    def send_administrator_list(self, ctx: ActContext, *, names: list[str]) -> None:
        """Art. 20: between creation and installation the Governor sends a list of three names."""
        self._admit(ctx, "administrator-list-sent", "art-20")
        self._require_between_law_and_installation("art-20")
        size = ctx.statute.in_force("art-20.administrator-list-size", ctx.occurred_on)
        distinct = list({normalise_name(n): n.strip() for n in reversed(names) if n.strip()}.values())[::-1]
        if not size.holds(len(distinct)) or len(distinct) != len(names):
            raise refuse("art-20", f"the list must hold {size.comparison_words} {size.value} distinct names; "
                         f"{len(distinct)} distinct of {len(names)} were sent", required=size.value, found=len(distinct))
        self._record(self.AdministratorListSent, ctx, article="art-20", rule_versions={size.id: size.version},
                     names=distinct)

    def appoint_administrator(self, ctx: ActContext, *, administrator: str) -> None:
        """Art. 20: the Assembly chooses the Administrator from the Governor's list."""
        self._admit(ctx, "administrator-appointed", "art-20")
        self._require_between_law_and_installation("art-20")
        if self.administrator_list is None:
            raise ActOutOfOrderError("art-20", "the Assembly chooses from the Governor's list; none was sent")
        chosen = {normalise_name(n): n for n in self.administrator_list}.get(normalise_name(administrator))
        if chosen is None:
            raise refuse("art-20", f"{administrator!r} is not on the Governor's list "
                         f"({', '.join(self.administrator_list)})")
        self._require_not(self.administrator, "art-20", "the Administrator was already appointed")
        self._record(self.AdministratorAppointed, ctx, article="art-20", administrator=chosen)

    def install(self, ctx: ActContext, calendar: Calendar, *, mayor: str, vice_mayor: str,
                councillors: list[str]) -> None:
        """Art. 19: installation; Art. 22, 23 and 24 deadlines start; Art. 26's documents are due today."""
        self._admit(ctx, "municipality-installed", "art-19")
        self._require_between_law_and_installation("art-19")
        if not mayor.strip() or not vice_mayor.strip() or not councillors:
            raise InvalidActError("mayor", "installation names the Mayor, the Vice-Mayor and the councillors")
        self._record(self.MunicipalityInstalled, ctx, article="art-19", mayor=mayor, vice_mayor=vice_mayor,
                     councillors=list(councillors))
        for origin in self.municipalities:
            key = f"personnel-documents:{origin}"
            self._record(self.DeadlineDueDateSet, ctx, article="art-26", deadline=key, due_on=ctx.occurred_on)
            if self._deadline_open(key):
                self._record(self.DeadlineMissed, ctx, article="art-26", deadline=key)
            self._open_deadline(ctx, calendar, "ledger-transfer", key=f"ledger-transfer:{origin}",
                                who="origin-municipality", municipality=origin)
        for rule in INSTALLATION_DEADLINES:
            self._open_deadline(ctx, calendar, rule, municipality=self.law["new_municipality"])

    def transfer_ledger(self, ctx: ActContext, *, origin: str, document: str) -> None:
        """Art. 22 par. ún.: an origin municipality delivers the books and accounts to the new one."""
        self._origin_obligation(ctx, "ledger-transferred", "art-22", origin)
        if self.installation is None:
            raise ActOutOfOrderError("art-22", "the books are delivered after the installation")
        key = f"ledger-transfer:{origin}"
        if not self._deadline_open(key):
            raise ActOutOfOrderError("art-22", f"{origin}'s books were already delivered")
        self._record(self.LedgerTransferred, ctx, article="art-22", origin=origin, document=document)
        self._close_deadline(ctx, key, "ledger-transferred")
        self._conclude_if_done(ctx)

    def send_personnel_documents(self, ctx: ActContext, *, origin: str, document: str) -> None:
        """Art. 26 par. ún.: an origin municipality sends its staff documents (due by the installation)."""
        self._origin_obligation(ctx, "personnel-documents-sent", "art-26", origin)
        key = f"personnel-documents:{origin}"
        if self.deadlines.get(key, {}).get("closed_by"):
            raise ActOutOfOrderError("art-26", f"{origin}'s personnel documents were already sent")
        self._record(self.PersonnelDocumentsSent, ctx, article="art-26", origin=origin, document=document)
        self._close_deadline(ctx, key, "personnel-documents-sent")
        self._conclude_if_done(ctx)

    def submit_prefect_bill(self, ctx: ActContext, *, item: str, bill: str) -> None:
        """Art. 23 I-IV: the Mayor sends the budget, organisation, civil-service and staff bills."""
        if item not in PREFECT_BILLS:
            raise InvalidActError("item", f"{item!r} is not one of {', '.join(PREFECT_BILLS)}")
        self._new_municipality_obligation(ctx, "prefect-bill-submitted", item)
        self._require_not(self.bills.get(item), item, f"the {item} bill was already sent")
        self._record(self.PrefectBillSubmitted, ctx, article=item, item=item, bill=bill)
        self._close_deadline(ctx, PREFECT_BILLS[item], "prefect-bill-submitted")
        self._conclude_if_done(ctx)

    def promulgate_organic_law(self, ctx: ActContext, *, organic_law: str) -> None:
        """Art. 24: the Câmara promulgates the organic law within six months of the installation."""
        self._new_municipality_obligation(ctx, "organic-law-promulgated", "art-24")
        self._require_not(self.organic_law, "art-24", "the organic law was already promulgated")
        self._record(self.OrganicLawPromulgated, ctx, article="art-24", organic_law=organic_law)
        self._close_deadline(ctx, "organic-law", "organic-law-promulgated")
        self._conclude_if_done(ctx)

    def fix_remuneration(self, ctx: ActContext, *, act: str) -> None:
        """Art. 25: once in office, the Câmara fixes the remuneration for the legislature."""
        self._new_municipality_obligation(ctx, "remuneration-fixed", "art-25")
        self._require_not(self.remuneration, "art-25", "the remuneration was already fixed")
        self._record(self.RemunerationFixed, ctx, article="art-25", act=act)
        self._conclude_if_done(ctx)

    def send_communication(self, ctx: ActContext, *, subject: str, recipient: str, document: str) -> None:
        """Art. 40: the creation and the installation are communicated to the Union, State, origin, IBGE, EBCT."""
        act = "district-communication-sent" if self.kind in DISTRICT_KINDS else "communication-sent"
        self._admit(ctx, act, "art-40", municipality=self.municipalities[0] if self.kind in DISTRICT_KINDS else None)
        expected = self.communications_due(ctx)
        if f"{subject}:{recipient}" not in expected:
            raise InvalidActError("recipient", f"{subject}:{recipient} is not an Art. 40 communication of this "
                                  f"case at this point ({', '.join(expected) or 'none due'})")
        if f"{subject}:{recipient}" in self.communications:
            raise ActOutOfOrderError("art-40", f"the {subject} was already communicated to {recipient}")
        self._record(self.CommunicationSent, ctx, article="art-40", subject=subject, recipient=recipient,
                     document=document)
        self._conclude_if_done(ctx)

    def communications_due(self, ctx: ActContext) -> list[str]:
        """Art. 40's checklist as it stands: `subject:recipient` for each act already done."""
        if self.kind not in NEW_MUNICIPALITY_KINDS + ("district_creation",) or self.law is None:
            return []
        recipients = ctx.statute.in_force("art-40.recipients", self.law["on"]).value
        subjects = ctx.statute.in_force("art-40.communicated-acts", self.law["on"]).value
        done = {"creation": self.law is not None, "installation": self.installation is not None}
        if self.kind == "district_creation":
            done = {"creation": True}
        expanded = []
        for recipient in recipients:
            if recipient == "origin-municipality":
                expanded += [f"origin-municipality:{code}" for code in self.municipalities]
            else:
                expanded.append(recipient)
        return [f"{s}:{r}" for s in subjects if done.get(s) for r in expanded]

    def archive(self, ctx: ActContext, *, reason: str) -> None:
        """Art. 16 par. ún. (or withdrawal/rejection): the body holding the case archives it; the freeze lifts."""
        act = "district-case-archived" if self.kind in DISTRICT_KINDS else "case-archived"
        self._admit(ctx, act, "art-16-par-unico",
                    municipality=self.municipalities[0] if self.kind in DISTRICT_KINDS else None)
        self._require_not(self.law, "art-16-par-unico", "the case's law was enacted; it can no longer be archived")
        if not reason.strip():
            raise InvalidActError("reason", "an archive states its reason")
        self._record(self.CaseArchived, ctx, article="art-16-par-unico", reason=reason)

    # ================================================================== deadlines

    def _open_deadline(self, ctx: ActContext, calendar: Calendar, rule: str, *, key: str | None = None,
                       who: str | None = None, municipality: str | None = None) -> None:
        """Record a deadline's opening with the due date computed now, and how it was computed."""
        parameter = ctx.statute.in_force(f"deadline.{rule}", ctx.occurred_on)
        spec = parameter.value
        versions = {parameter.id: parameter.version}
        due = raw = convention = calendar_version = None
        moved: list[str] = []
        if spec["unit"] != "on-installation":
            counting = ctx.statute.in_force("deadline.counting-convention", ctx.occurred_on)
            versions[counting.id] = counting.version
            computed = calendar.due_date(ctx.occurred_on, spec["length"], spec["unit"], counting.value)
            due, raw, convention = computed.due, computed.raw, computed.convention
            calendar_version, moved = computed.calendar_version, list(computed.moved_over)
        self._record(self.DeadlineOpened, ctx, article=parameter.article, rule_versions=versions,
                     deadline=key or rule, rule=rule, who=who or spec["who"], municipality=municipality,
                     starts_on=ctx.occurred_on, due_on=due, raw_due_on=raw, convention=convention,
                     calendar_version=calendar_version, moved_over=moved)

    def _deadline_open(self, key: str) -> bool:
        return key in self.deadlines and self.deadlines[key]["closed_by"] is None

    def _close_deadline(self, ctx: ActContext, key: str, closing_act: str) -> None:
        """The closing act meets a deadline: on time when dated on or before the due day (late ones stay late)."""
        if not self._deadline_open(key):
            return
        deadline = self.deadlines[key]
        due = deadline["due_on"]
        days_late = max(0, (ctx.occurred_on - due).days) if due is not None else 0
        self._record(self.DeadlineMet, ctx, article=deadline["article"], deadline=key, closing_act=closing_act,
                     on_time=days_late == 0 and deadline["status"] != "missed", days_late=days_late)

    def _conclude_if_done(self, ctx: ActContext) -> None:
        """RULES step 7: the case is concluded when every obligation after installation is closed."""
        if self.installation is None or self.concluded_on is not None:
            return
        if not any(self.obligations(ctx).values()):
            self._record(self.CaseConcluded, ctx, article="art-19")

    # ================================================================== state questions

    def obligations(self, ctx: ActContext) -> dict[str, list[str]]:
        """What is still open: deadlines, Art. 40 communications, Art. 25, and Art. 16 par. ún.'s archive."""
        return {
            "deadlines": [k for k in self.deadlines if self._deadline_open(k)],
            "communications": [c for c in self.communications_due(ctx) if c not in self.communications],
            "remuneration": [] if self.remuneration or self.installation is None else ["art-25"],
            "archive": ["art-16-par-unico"] if self.result and not self.result["favourable"] else [],
        }

    @property
    def article_of_opening(self) -> str:
        return {"extinction": "art-37"}.get(self.kind, "art-31" if self.kind in DISTRICT_KINDS else "art-8")

    @property
    def new_municipality(self) -> str | None:
        return self.law["new_municipality"] if self.law else None

    def _territories(self) -> list[str]:
        return self.municipalities + ([self.receiving] if self.receiving else [])

    # ================================================================== guards

    #: Free-text references an act must name (its decree, resolution, bill, law, document, reason, ...).
    REFERENCE_FIELDS = ("decree", "resolution", "bill", "law", "document", "organic_law", "act", "reason",
                        "justification", "mayor", "vice_mayor", "administrator")

    def _record(self, event_class: type[Any], ctx: ActContext, **fields: Any) -> None:
        """Every act names its references: an empty decree, law or document is refused naming the field."""
        for name in self.REFERENCE_FIELDS:
            if name in fields and not (isinstance(fields[name], str) and fields[name].strip()):
                raise InvalidActError(name, "is required: the act cites it")
        super()._record(event_class, ctx, **fields)


    def _admit(self, ctx: ActContext, act: str | None, article: str, municipality: str | None = None) -> None:
        """Every act: the case is live, the legal date is sound, the actor is the competent body.

        `act` None: the act judges its own competence (findings, by item: Art. 4 par. ún.).
        """
        if self.archived is not None:
            raise ActOutOfOrderError(article, f"case {self.number} was archived on "
                                     f"{self.archived['on'].isoformat()}; no act may be recorded")
        if self.concluded_on is not None:
            raise ActOutOfOrderError(article, f"case {self.number} was concluded on {self.concluded_on.isoformat()}")
        require_legal_date(ctx, self.last_occurred_on)
        if act is not None:
            ctx.require_competent(act, article, municipality=municipality)

    def _require_not(self, done: Any, article: str, message: str) -> None:
        if done:
            raise ActOutOfOrderError(article, message)

    def _require_councils(self, ctx: ActContext) -> None:
        """Art. 28, 29, 30: every interested council approved by absolute majority before the plebiscite."""
        article = COUNCIL_ARTICLE.get(self.kind)
        if article is None:
            return
        pending = [code for code in self._territories() if code not in self.councils]
        rejected = [code for code, c in self.councils.items() if not c["approved"]]
        if pending or rejected:
            raise ActOutOfOrderError(article, "every interested council must approve by absolute majority first; "
                                     f"pending: {', '.join(pending) or 'none'}; rejected: {', '.join(rejected) or 'none'}",
                                     pending=pending, rejected=rejected)

    def _require_between_law_and_installation(self, article: str) -> None:
        if self.kind not in NEW_MUNICIPALITY_KINDS or self.law is None:
            raise ActOutOfOrderError(article, "this act follows the law creating a municipality (Art. 17)")
        self._require_not(self.installation, article, "the municipality was already installed")

    def _origin_obligation(self, ctx: ActContext, act: str, article: str, origin: str) -> None:
        self._admit(ctx, act, article, municipality=origin)
        if self.kind not in NEW_MUNICIPALITY_KINDS or self.law is None:
            raise ActOutOfOrderError(article, "this obligation follows the law creating a municipality")
        if origin not in self.municipalities:
            raise InvalidActError("origin", f"{origin} is not an origin municipality of this case")

    def _new_municipality_obligation(self, ctx: ActContext, act: str, article: str) -> None:
        self._admit(ctx, act, article, municipality=self.new_municipality)
        if self.installation is None:
            raise ActOutOfOrderError(article, "this obligation runs from the installation (Art. 19); "
                                     "the municipality is not installed")

    def _requisition(self, requisition: str) -> dict[str, Any]:
        if requisition not in self.requisitions:
            raise InvalidActError("requisition", f"no requisition {requisition!r} in case {self.number}")
        return self.requisitions[requisition]

    def _finding(self, item: str) -> dict[str, Any]:
        """The latest finding of an item (by any of its bodies)."""
        return max(self.findings[item].values(), key=lambda f: f["on"])

    def _portion(self, item: str, origin: str) -> Any:
        """Art. 5: the share of an Art. 4 figure that leaves `origin` (from the finding's breakdown)."""
        if item not in self.findings:
            return None
        finding = self._finding(item)
        value = finding["by_origin"].get(origin)
        return None if value is None else (Decimal(str(value)) if item == "art-4-III" else int(value))

    def _finding_value(self, item: str, value: Any, by_origin: dict[str, Any],
                       tax: Any) -> tuple[Any, dict[str, Any], Any]:
        """Validate a finding's figures: whole counts, decimal revenue, a per-origin breakdown that adds up."""
        if item in BOOLEAN_ITEMS:
            if not isinstance(value, bool):
                raise InvalidActError("value", f"the {item} finding is yes (true) or no (false)")
            return value, {}, None
        parse = (lambda v, f: amount(v, f)) if item == "art-4-III" else whole
        value = parse(value, "value")
        if item == "art-4-III":
            if tax is None:
                raise InvalidActError("state_tax_revenue", "the art-4-III finding states the State's tax revenue")
            tax = amount(tax, "state_tax_revenue")
        if self.kind in ("creation", "dismemberment"):
            origins = self.municipalities
            if not by_origin and len(origins) == 1:
                by_origin = {origins[0]: value}
            if sorted(by_origin) != sorted(origins):
                raise InvalidActError("by_origin", f"give the share of each origin ({', '.join(origins)})")
            by_origin = {code: parse(v, f"by_origin.{code}") for code, v in by_origin.items()}
            if sum(by_origin.values()) != value:
                raise InvalidActError("by_origin", f"the origins' shares add up to {sum(by_origin.values())}, "
                                      f"not {value}")
        else:
            by_origin = {}
        return value, by_origin, tax

    def _net_areas(self) -> dict[str, Decimal]:
        """Art. 1-III: each municipality's area ceded minus area received."""
        net: dict[str, Decimal] = {code: Decimal(0) for code in self._territories()}
        for area in self.areas:
            km2 = Decimal(str(area["area_km2"]))
            net[area["municipality"]] += km2
            if self.receiving:
                net[self.receiving] -= km2
        return net


# ====================================================================== helpers


def _area_key(area: dict[str, Any]) -> str:
    return f"{area['municipality']}/{area['district']}" if area.get("district") else str(area["municipality"])


def _clean_area(area: dict[str, Any]) -> dict[str, Any]:
    if "municipality" not in area:
        raise InvalidActError("areas[].municipality", "each area names the municipality it is taken from")
    cleaned = {"municipality": str(area["municipality"]), "district": area.get("district"),
               "area_km2": amount(area.get("area_km2", 0), "areas[].area_km2"),
               "description": str(area.get("description", ""))}
    return cleaned


def _check_territories(kind: str, municipalities: list[str], receiving: str | None,
                       areas: list[dict[str, Any]]) -> None:
    """Art. 1 §1-4: which municipalities each kind of case concerns."""
    if not municipalities:
        raise InvalidActError("municipalities", "name the origin municipality or municipalities")
    if kind == "fusion" and len(municipalities) < 2:
        raise InvalidActError("municipalities", "a fusion joins two or more municipalities (Art. 1 §3)")
    if kind in ("incorporation", "dismemberment"):
        if len(municipalities) != 1 or not receiving or receiving in municipalities:
            raise InvalidActError("receiving", f"a {kind} names one origin and a different receiving municipality")
    elif receiving:
        raise InvalidActError("receiving", f"a {kind} case has no receiving municipality")
    if kind in ("creation", "dismemberment"):
        if not areas:
            raise InvalidActError("areas", f"a {kind} petition describes the area taken from each origin")
        for area in areas:
            if str(area.get("municipality")) not in municipalities:
                raise InvalidActError("areas[].municipality", f"{area.get('municipality')} is not an origin")


def _federal_gate(ctx: ActContext, kind: str) -> tuple[date | None, dict[str, str]]:
    """CF art. 18 §4 on the act's date: since when the gate is closed for this kind (None: open), and versions."""
    gated = ctx.statute.in_force("cf-art-18-par-4.gated-kinds", ctx.occurred_on)
    period = ctx.statute.in_force("cf-art-18-par-4.federal-period", ctx.occurred_on)
    closed = kind in gated.value and period.value == "closed"
    return (period.effective_from if closed else None), {gated.id: gated.version, period.id: period.version}


def _remainder(known: Any, portion: Any) -> Any:
    if known is None or portion is None:
        return None
    return known - portion


def _chosen_seat(seat_votes: dict[str, Any]) -> str:
    """Art. 30 par. ún.: the plebiscite also chooses the seat: the most voted place, without a tie."""
    if not seat_votes:
        raise InvalidActError("seat_votes", "a fusion plebiscite also chooses the seat (Art. 30 par. ún.)")
    votes = {seat: whole(v, f"seat_votes.{seat}") for seat, v in seat_votes.items()}
    best = max(votes.values())
    winners = [seat for seat, v in votes.items() if v == best]
    if len(winners) > 1:
        raise refuse("art-30", f"the seat vote is tied between {', '.join(winners)}")
    return winners[0]


def _reintegration(shares: dict[str, Any]) -> dict[str, str]:
    """Art. 37 par. ún.: the territory returns to its origin(s) in the original proportion (shares add to 1)."""
    if not shares:
        raise refuse("art-37-par-unico", "the law states the origin(s) the territory returns to, with shares")
    parsed = {code: Fraction(str(value)) for code, value in shares.items()}
    if sum(parsed.values()) != 1 or any(v <= 0 for v in parsed.values()):
        raise refuse("art-37-par-unico", f"the reintegration shares must be positive and add up to 1, "
                     f"not {sum(parsed.values())}")
    return {code: str(value) for code, value in parsed.items()}
