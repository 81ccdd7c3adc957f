"""Art. 4, 10, 13, 19, 23, 28-32, 40: the named conditions the lifecycles refer to, one small predicate each.

A lifecycle step (domain/statute/lifecycles.toml) is admissible `when` its conditions hold and no longer `unless`
they do; what cannot be said as "act X was recorded" is a named condition here, evaluated over the case's state
(what its events assigned) and the statute in force. Each returns whether it holds and what was found, in plain
words; the article and the wording of what it requires are the lifecycle's data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from domain.errors import Listing, Sentence, Term
from domain.case.kinds import FINDING_ITEMS, PREFECT_BILLS, findings_missing
from domain.parameters import Statute
from domain.rules import ART_4_ITEMS

if TYPE_CHECKING:
    from domain.case import Case


@dataclass(frozen=True)
class Verdict:
    """Whether a named condition holds, what was found (plain words) and the figures behind it."""

    holds: bool
    found: Sentence
    figures: dict[str, Any] = field(default_factory=dict)


Predicate = Callable[["Case", Statute, date], Verdict]
CONDITIONS: dict[str, Predicate] = {}


def condition(name: str) -> Callable[[Predicate], Predicate]:
    """Register the predicate of the named condition `name`."""

    def register(predicate: Predicate) -> Predicate:
        CONDITIONS[name] = predicate
        return predicate

    return register


@condition("voters-initiative")
def voters_initiative(case: Case, statute: Statute, on: date) -> Verdict:
    """Art. 10: requisitions are issued for a voters' representation (Art. 8), not a Governor's or Deputy's."""
    return Verdict(case.initiator == "voters", Sentence("this case was initiated by %(initiator)s",
                                                         initiator=Term(case.initiator)))


@condition("a-requisition-awaits-receipt")
def a_requisition_awaits_receipt(case: Case, statute: Statute, on: date) -> Verdict:
    """Art. 10: a requisition issued and not yet received (its receipt starts the 30 days)."""
    waiting = list(case.awaiting_receipt)  # in the order issued
    found = (Sentence("awaiting receipt: %(waiting)s", waiting=Listing(waiting)) if waiting else
             Term("every requisition issued was received"))
    return Verdict(bool(waiting), found, {"awaiting": waiting})


@condition("art-4-findings-complete")
def art_4_findings_complete(case: Case, statute: Statute, on: date) -> Verdict:
    """Art. 4 par. ún.: every Art. 4 finding is recorded, I-VI, VI by both the PGE and the SECTMA."""
    missing = findings_missing(case.findings, ART_4_ITEMS, "art-4-VI")
    return Verdict(not missing, _findings_missing(missing), {"missing": missing})


@condition("art-31-findings-complete")
def art_31_findings_complete(case: Case, statute: Statute, on: date) -> Verdict:
    """Art. 31 par. ún., 32: every finding of a district's creation, III by both the PGE and the SECTMA."""
    missing = findings_missing(case.findings, FINDING_ITEMS["district_creation"], "art-31-III")
    return Verdict(not missing, _findings_missing(missing), {"missing": missing})


def _findings_missing(missing: list[str]) -> Sentence:
    return (Sentence("findings missing: %(missing)s", missing=Listing(missing)) if missing else
            Term("every finding is recorded"))


@condition("art-4-requirements-met")
def art_4_requirements_met(case: Case, statute: Statute, on: date) -> Verdict:
    """Art. 4, 5, 11: the requirements are recorded as met (and have not lapsed since)."""
    if case.requirements is None:
        return Verdict(False, Term("the requirements are not recorded as met"))
    return Verdict(True, Sentence("the requirements were recorded as met on %(on)s",
                                 on=case.requirements["on"].isoformat()))


@condition("councils-approved")
def councils_approved(case: Case, statute: Statute, on: date) -> Verdict:
    """Art. 28, 29, 30: every interested council approved by absolute majority of its members."""
    pending = [code for code in case._territories() if code not in case.councils]
    rejected = [code for code, c in case.councils.items() if not c["approved"]]
    return Verdict(not pending and not rejected,
                   Sentence("pending: %(pending)s; rejected: %(rejected)s", pending=Listing(pending) or Term("none"),
                            rejected=Listing(rejected) or Term("none")),
                   {"pending": pending, "rejected": rejected})


@condition("result-favourable")
def result_favourable(case: Case, statute: Statute, on: date) -> Verdict:
    """Art. 13, 16 (Art. 1-I): the plebiscite's recorded verdict was favourable, or the plebiscite was dispensed."""
    if case.dispensation is not None:
        return Verdict(True, Sentence("the plebiscite was dispensed on %(on)s (Art. 1-I)",
                                         on=case.dispensation["on"].isoformat()))
    if case.result is None:
        return Verdict(False, Term("no result was homologated"))
    if case.result["favourable"]:
        return Verdict(True, Term("the plebiscite was favourable"))
    reasons = case.result["reasons"]
    return Verdict(False, Sentence("the plebiscite was unfavourable (%(reasons)s): no bill is drafted and the case "
                                  "is to be archived (Art. 16 par. ún.)", reasons=Listing(reasons, "; ")),
                   {"reasons": reasons})


@condition("art-23-bills-sent")
def art_23_bills_sent(case: Case, statute: Statute, on: date) -> Verdict:
    """Art. 23 I-IV: the Mayor sent each of the four bills."""
    unsent = [item for item in PREFECT_BILLS if item not in case.bills]
    return Verdict(not unsent, Sentence("not yet sent: %(unsent)s", unsent=Listing(unsent)) if unsent else
                   Term("every Art. 23 bill was sent"),
                   {"unsent": unsent})


@condition("art-40-communication-due")
def art_40_communication_due(case: Case, statute: Statute, on: date) -> Verdict:
    """Art. 40: a communication of the creation or installation is due and not yet sent."""
    due = [c for c in case._communications_due(statute) if c not in case.communications]
    return Verdict(bool(due), Sentence("due: %(due)s", due=Listing(due)) if due else
                   Term("no Art. 40 communication is due at this point"),
                   {"due": due})


@condition("case-concluded")
def case_concluded(case: Case, statute: Statute, on: date) -> Verdict:
    """Art. 19-26, 40: the case was concluded, every obligation after the installation closed."""
    if case.concluded_on is None:
        return Verdict(False, Term("the case is not concluded"))
    return Verdict(True, Sentence("case %(number)s was concluded on %(on)s", number=case.number,
                                 on=case.concluded_on.isoformat()))
