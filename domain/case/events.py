"""The case's events (Art. 1, 8-40): one explicit class per legal act, each with its typed, stored fields.

These classes are assigned into `Case` (domain/case/__init__.py), whose metaclass redefines each one as
`Case.<Name>` in the module `domain.case`: the topics stored events carry (`domain.case:Case.PetitionFiled`) and
the type the hash chain covers (`Case.PetitionFiled`) stay what they always were. Applying an event only assigns
(the command judged); every event also joins the case's log of recorded acts, which the lifecycle reads.
The deadlines' events and the conclusion are in `deadlines.py`, beside the code that records them.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

from domain.acts import ChainedAggregate

if TYPE_CHECKING:
    from domain.case import Case


class Logged:
    """Applying any event of a case also notes it for the order of acts: event name -> {the municipality it is
    for (None: the case's own): the legal date it was last recorded on}. Bounded by the kinds of act and the
    case's municipalities, so the case's state does not grow with the number of times an act repeats."""

    def apply(self, case: Any) -> None:
        super().apply(case)  # type: ignore[misc]
        target = getattr(self, "municipality", None) or getattr(self, "origin", None)
        case.acts_log.setdefault(type(self).__name__, {})[target] = self.occurred_on  # type: ignore[attr-defined]


class PetitionFiled(Logged, ChainedAggregate.Created):
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
        #: Art. 8 par. ún.: the signatures of each part of the area, as the petition recorded them.
        case.signatures_per_area = {}
        for signature in self.signatures:
            area = str(signature.get("area"))
            case.signatures_per_area[area] = case.signatures_per_area.get(area, 0) + 1
        case.documents = dict(self.documents)
        case.impediments = list(self.impediments)
        case.frozen = list(self.freezes)
        case.opened_on = self.occurred_on
        case.stage = "petition-filed"
        case.requisitions, case.findings, case.councils = {}, {}, {}
        #: Indexes of `requisitions`, so that an act never walks them all: those not yet received, and by body
        #: those whose answer deadline is not yet met (their order is the order of issue).
        case.awaiting_receipt, case.unanswered = {}, {}
        case.requirements, case.dispensation, case.plebiscite = None, None, None
        case.result, case.communicated_on, case.registered_on, case.bill = None, None, None, None
        case.law, case.administrator_list, case.administrator = None, None, None
        case.installation, case.remuneration, case.organic_law = None, None, None
        case.extinction_request = None
        case.deadlines, case.communications, case.breaches, case.bills = {}, {}, [], {}
        case.archived, case.concluded_on = None, None
        case.opening_article, case.acts_log = self.article, {}
        case.attachments = []


class RequisitionIssued(Logged, ChainedAggregate.Event):
    """Art. 10: the Mesa requisitions information from a competent body (requisição)."""

    requisition: str
    body: str
    items: list[str]

    def assign(self, case: Case) -> None:
        case.requisitions[self.requisition] = {"body": self.body, "items": list(self.items),
                                               "issued_on": self.occurred_on, "received_on": None}
        case.awaiting_receipt[self.requisition] = None
        case.unanswered.setdefault(self.body, {})[self.requisition] = None
        case.stage = "instruction"


class RequisitionReceived(Logged, ChainedAggregate.Event):
    """Art. 10: the requisitioned body received the requisition (the 30 days run from here)."""

    requisition: str

    def assign(self, case: Case) -> None:
        case.requisitions[self.requisition]["received_on"] = self.occurred_on
        case.awaiting_receipt.pop(self.requisition, None)


class RequisitionRefused(Logged, ChainedAggregate.Event):
    """Art. 10 §1: a body refused a requisition: recorded as a breach; the case goes on."""

    requisition: str
    body: str
    reason: str

    def assign(self, case: Case) -> None:
        case.breaches.append({"requisition": self.requisition, "body": self.body, "on": self.occurred_on,
                              "reason": self.reason})


class FindingRecorded(Logged, ChainedAggregate.Event):
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


class RequirementsVerified(Logged, ChainedAggregate.Event):
    """Art. 4, 5 (Art. 11's condition): every requirement holds, for the new and every origin municipality."""

    verdicts: dict[str, Any]
    remainders: dict[str, Any]

    def assign(self, case: Case) -> None:
        case.requirements = {"on": self.occurred_on, "verdicts": self.verdicts, "remainders": self.remainders}
        case.stage = "requirements-met"


class RequirementsLapsed(Logged, ChainedAggregate.Event):
    """Art. 4, 5: a later finding breaks requirements recorded as met; the plebiscite waits again."""

    reason: str

    def assign(self, case: Case) -> None:
        case.requirements = None
        case.stage = "instruction"


class CouncilDecreeRecorded(Logged, ChainedAggregate.Event):
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


class PlebisciteDispensed(Logged, ChainedAggregate.Event):
    """Art. 1-I, 1-III: no plebiscite for an area change within the net-area brackets."""

    justification: str
    figures: dict[str, Any]

    def assign(self, case: Case) -> None:
        case.dispensation = {"on": self.occurred_on, "figures": self.figures,
                             "justification": self.justification}
        case.stage = "plebiscite-dispensed"


class PlebisciteDecreed(Logged, ChainedAggregate.Event):
    """Art. 11: the Assembly's legislative decree calling the plebiscite, sent to the TRE."""

    decree: str

    def assign(self, case: Case) -> None:
        case.plebiscite = {"decree": self.decree, "decreed_on": self.occurred_on, "resolution": None,
                           "scheduled_for": None}
        case.stage = "plebiscite-decreed"


class PlebisciteScheduled(Logged, ChainedAggregate.Event):
    """Art. 12: the TRE's resolution regulating the plebiscite and fixing its date."""

    resolution: str
    plebiscite_date: date

    def assign(self, case: Case) -> None:
        case.plebiscite.update(resolution=self.resolution, scheduled_for=self.plebiscite_date)
        case.stage = "plebiscite-scheduled"


class PlebisciteResultHomologated(Logged, ChainedAggregate.Event):
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


class ResultCommunicated(Logged, ChainedAggregate.Event):
    """Art. 14: the TRE communicates the homologated result to the Assembly president."""

    def assign(self, case: Case) -> None:
        case.communicated_on = self.occurred_on
        case.stage = "result-communicated"


class ResultRegisteredInPlenary(Logged, ChainedAggregate.Event):
    """Art. 15: the Assembly president registers the result in plenary and informs the Governor."""

    governor_informed: bool

    def assign(self, case: Case) -> None:
        case.registered_on = self.occurred_on
        case.stage = "result-registered"


class CreationBillDrafted(Logged, ChainedAggregate.Event):
    """Art. 16: the CCJ drafts the bill (projeto de lei) creating, incorporating, merging or moving territory."""

    bill: str

    def assign(self, case: Case) -> None:
        case.bill = {"bill": self.bill, "on": self.occurred_on}
        case.stage = "bill-drafted"


class LawEnacted(Logged, ChainedAggregate.Event):
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
        case.impediments = []  # each is an impediment to the law (the federal gate), which the law has passed
        case.stage = "law-enacted"


class AdministratorListSent(Logged, ChainedAggregate.Event):
    """Art. 20: the Governor's list of three names (lista tríplice) for Administrator."""

    names: list[str]

    def assign(self, case: Case) -> None:
        case.administrator_list = list(self.names)


class AdministratorAppointed(Logged, ChainedAggregate.Event):
    """Art. 20: the Assembly's choice of Administrator from the list."""

    administrator: str

    def assign(self, case: Case) -> None:
        case.administrator = {"name": self.administrator, "on": self.occurred_on}
        case.stage = "administrator-appointed"


class MunicipalityInstalled(Logged, ChainedAggregate.Event):
    """Art. 19: installation, when the Mayor, Vice-Mayor and councillors take office (posse)."""

    mayor: str
    vice_mayor: str
    councillors: list[str]

    def assign(self, case: Case) -> None:
        case.installation = {"on": self.occurred_on, "mayor": self.mayor, "vice_mayor": self.vice_mayor,
                             "councillors": list(self.councillors)}
        case.stage = "installed"


class LedgerTransferred(Logged, ChainedAggregate.Event):
    """Art. 22 par. ún.: an origin municipality delivers the books and accounts."""

    origin: str
    document: str


class PrefectBillSubmitted(Logged, ChainedAggregate.Event):
    """Art. 23 I-IV: the Mayor sends a bill to the Câmara."""

    item: str
    bill: str

    def assign(self, case: Case) -> None:
        case.bills[self.item] = {"bill": self.bill, "on": self.occurred_on}


class OrganicLawPromulgated(Logged, ChainedAggregate.Event):
    """Art. 24: the Câmara promulgates the organic law (Lei Orgânica)."""

    organic_law: str

    def assign(self, case: Case) -> None:
        case.organic_law = {"law": self.organic_law, "on": self.occurred_on}


class RemunerationFixed(Logged, ChainedAggregate.Event):
    """Art. 25: the Câmara fixes the remuneration of Mayor, Vice-Mayor and councillors."""

    act: str

    def assign(self, case: Case) -> None:
        case.remuneration = {"act": self.act, "on": self.occurred_on}


class PersonnelDocumentsSent(Logged, ChainedAggregate.Event):
    """Art. 26 par. ún.: an origin municipality sends the documents of the staff serving in the territory."""

    origin: str
    document: str


class CommunicationSent(Logged, ChainedAggregate.Event):
    """Art. 40: the creation or installation communicated (remessa da lei) to one recipient."""

    subject: str
    recipient: str
    document: str

    def assign(self, case: Case) -> None:
        case.communications[f"{self.subject}:{self.recipient}"] = {"on": self.occurred_on,
                                                                  "document": self.document}


class ExtinctionRequestCertified(Logged, ChainedAggregate.Event):
    """Art. 37-II: the TRE certifies the valid signatures of the request against the registered voters."""

    valid_signatures: int
    registered_voters: int
    holds: bool
    figures: dict[str, Any]

    def assign(self, case: Case) -> None:
        case.extinction_request = {"on": self.occurred_on, "holds": self.holds, "figures": self.figures}


class CaseArchived(Logged, ChainedAggregate.Event):
    """Art. 16 par. ún. (or withdrawal, rejection): the case is archived; its freeze is lifted."""

    reason: str

    def assign(self, case: Case) -> None:
        case.archived = {"on": self.occurred_on, "reason": self.reason}
        case.frozen = []
        case.stage = "archived"
