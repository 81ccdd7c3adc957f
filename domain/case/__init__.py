"""One case of LC 35/1991 (creation, incorporation, fusion, dismemberment, districts, extinction) as an aggregate.

Art. 1 names the kinds; Art. 8-40 order their acts. Every act is an explicit event class named after the legal act
(`events.py`); commands, grouped by purpose in mixins, judge (rules.py, statute data, calendar) and record the
decision, and the events' `assign` only assigns. The order of acts is each kind's lifecycle, dated statute data
that one admission enforces (`admission.py`, with the named conditions of `conditions.py`). The registry side of
an act (the Art. 38 freeze, figures, districts) is recorded on the `Municipality` aggregates by the application,
in the same save.

Modules: `kinds` (the kinds and item vocabularies), `events`, `opening` (Art. 8, 9, 31, 37; the archive),
`instruction` (Art. 4, 5, 10), `plebiscite` (Art. 1-I, 11-16, 28-30), `law` (Art. 17, 21, 31, 32, 37;
CF art. 18 §4), `installation` (Art. 19-26, 40), `deadlines`, `attachments` (the documents an act cites),
`conditions` and `admission` (the lifecycle).

`Case` lives in this module and its events are nested in it, as they always were: stored topics stay
`domain.case:Case` and `domain.case:Case.<Event>`, and the hash chain's `type` stays `Case.<Event>`.
"""

from __future__ import annotations

from domain.acts import ChainedAggregate
from domain.case import attachments, deadlines, events
from domain.case.admission import Admission, NextAct
from domain.case.attachments import Attachments
from domain.case.conditions import CONDITIONS, Verdict
from domain.case.deadlines import Deadlines
from domain.case.installation import Installation
from domain.case.instruction import Instruction
from domain.case.kinds import (
    BOOLEAN_ITEMS, DISTRICT_KINDS, FINDING_ITEMS, INSTALLATION_DEADLINES, KINDS, MUNICIPAL_KINDS,
    NEW_MUNICIPALITY_KINDS, PREFECT_BILLS, case_id_for,
)
from domain.case.law import Law
from domain.case.opening import Opening
from domain.case.plebiscite import Plebiscite

__all__ = ["BOOLEAN_ITEMS", "CONDITIONS", "DISTRICT_KINDS", "FINDING_ITEMS", "INSTALLATION_DEADLINES", "KINDS",
           "MUNICIPAL_KINDS", "NEW_MUNICIPALITY_KINDS", "PREFECT_BILLS", "Case", "NextAct", "Verdict",
           "case_id_for"]


class Case(Opening, Instruction, Plebiscite, Law, Installation, Deadlines, Attachments, Admission,
           ChainedAggregate):
    """A case under LC 35/1991, from petition to its final act (Art. 1, 8-40).

    Its events are assigned here so that the aggregate's metaclass redefines each as `Case.<Name>` in this module
    (the stored topic and the hashed type never change when the classes' source moves).
    """

    PetitionFiled = events.PetitionFiled
    RequisitionIssued = events.RequisitionIssued
    RequisitionReceived = events.RequisitionReceived
    RequisitionRefused = events.RequisitionRefused
    FindingRecorded = events.FindingRecorded
    RequirementsVerified = events.RequirementsVerified
    RequirementsLapsed = events.RequirementsLapsed
    CouncilDecreeRecorded = events.CouncilDecreeRecorded
    PlebisciteDispensed = events.PlebisciteDispensed
    PlebisciteDecreed = events.PlebisciteDecreed
    PlebisciteScheduled = events.PlebisciteScheduled
    PlebisciteResultHomologated = events.PlebisciteResultHomologated
    ResultCommunicated = events.ResultCommunicated
    ResultRegisteredInPlenary = events.ResultRegisteredInPlenary
    CreationBillDrafted = events.CreationBillDrafted
    LawEnacted = events.LawEnacted
    AdministratorListSent = events.AdministratorListSent
    AdministratorAppointed = events.AdministratorAppointed
    MunicipalityInstalled = events.MunicipalityInstalled
    LedgerTransferred = events.LedgerTransferred
    PrefectBillSubmitted = events.PrefectBillSubmitted
    OrganicLawPromulgated = events.OrganicLawPromulgated
    RemunerationFixed = events.RemunerationFixed
    PersonnelDocumentsSent = events.PersonnelDocumentsSent
    CommunicationSent = events.CommunicationSent
    ExtinctionRequestCertified = events.ExtinctionRequestCertified
    CaseArchived = events.CaseArchived
    CaseConcluded = deadlines.CaseConcluded
    DeadlineOpened = deadlines.DeadlineOpened
    DeadlineDueDateSet = deadlines.DeadlineDueDateSet
    DeadlineMet = deadlines.DeadlineMet
    DeadlineMissed = deadlines.DeadlineMissed
    DocumentsAttached = attachments.DocumentsAttached
