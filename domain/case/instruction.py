"""Art. 4, 5, 10 (and Art. 32): the instruction of a case: requisitions, findings and the requirements met.

Art. 10: for a voters' initiative the Mesa requisitions information; each receipt opens the answer deadline
(its length is statute data) and a refusal is a breach (Art. 10 §1). Art. 4 par. ún., 32: each finding by its
competent body.
Art. 4, 5: the requirements met for the new municipality and for every origin after the split. When each act is
admissible is the kind's lifecycle (domain.case.admission); what the figures show is judged here, by one
registered judge per article (`judge_requirements`, `judge_origins_keep_requirements`, `judge_finding`,
`judge_receipt`; domain.judges), functions of the case's findings that the acts, and the law, call.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from typing import Any

from domain.acts import ActContext, refuse
from domain.calendar import Calendar
from domain.case.kinds import BOOLEAN_ITEMS, FINDING_ITEMS, findings_missing
from domain.errors import ActOutOfOrderError, InvalidActError, LegalRuleError, Listing, Sentence, Term
from domain.judges import judges
from domain.parameters import Statute
from domain.rules import ART_4_FIGURES, ART_4_ITEMS, Judgement, amount, judge_figures, whole

Findings = dict[str, dict[str, dict[str, Any]]]


@judges("art-4", "art-4-I", "art-4-II", "art-4-III", "art-4-IV", "art-4-V", "art-4-VI")
def judge_requirements(statute: Statute, on: date, findings: Findings, judgement: Judgement) -> dict[str, bool]:
    """Art. 4 I-VI: the new municipality meets every requirement, on the findings of the competent bodies.

    Refused citing Art. 4 par. ún. while a finding is missing (VI needs both the PGE's and the SECTMA's), else
    citing the first item that fails, saying why for each that does. Returns each item's verdict; `judgement`
    gathers the rule versions used (and Art. 5's, judged next on the same judgement).
    """
    missing = findings_missing(findings, ART_4_ITEMS, "art-4-VI")
    if missing:
        raise refuse("art-4-par-unico", Sentence("findings missing: %(missing)s", missing=Listing(missing)),
                     missing=missing)
    figures = {figure: latest_finding(findings, item)["value"] for item, figure in ART_4_FIGURES.items()}
    tax = latest_finding(findings, "art-4-III")["state_tax_revenue"]
    verdicts = judge_figures(statute, on, figures, tax, judgement, Term("the new municipality"))
    for item in BOOLEAN_ITEMS[:2]:
        verdicts[item] = all(f["holds"] for f in findings[item].values())
        if not verdicts[item]:
            judgement.said.append(Sentence("%(item)s: the finding does not hold", item=item))
    failed = [item for item, ok in verdicts.items() if not ok]
    if failed:
        raise refuse(failed[0], Listing(judgement.said, "; "), verdicts=verdicts)
    return verdicts


@judges("art-5")
def judge_origins_keep_requirements(statute: Statute, on: date, origins: list[str],
                                    origin_figures: Mapping[str, dict[str, Any]], findings: Findings,
                                    judgement: Judgement) -> dict[str, Any]:
    """Art. 5: each origin's figures minus the area leaving it must still meet Art. 4 I-IV.

    `origin_figures` are each origin's registry figures in force on `on` (None: unknown); the findings say how much
    of each figure the area takes from each origin (`by_origin`). An unknown figure, or a share no finding gives,
    is refused rather than guessed; an origin that would lose a requirement is refused saying which. Returns each
    origin's remainder and verdicts, as the act records them.
    """
    tax = latest_finding(findings, "art-4-III")["state_tax_revenue"] if "art-4-III" in findings else None
    remainders: dict[str, Any] = {}
    for origin in origins:
        known = origin_figures.get(origin, {})
        portions = {figure: portion_of(findings, item, origin) for item, figure in ART_4_FIGURES.items()}
        left = {figure: _remainder(known.get(figure), portions[figure]) for figure in portions}
        unknown = [figure for figure, value in left.items() if value is None]
        unrecorded = [figure for figure in unknown if known.get(figure) is None]
        if unrecorded:
            raise refuse("art-5", Sentence("the %(unknown)s of origin %(origin)s on %(on)s is not known in the "
                                           "registry; record it before judging Art. 5",
                                         unknown=Listing(unrecorded), origin=origin, on=on.isoformat()),
                         origin=origin, unknown=unrecorded)
        if unknown:  # the registry knows the origin's figure; no finding says how much of it the area takes
            items = [item for item, figure in ART_4_FIGURES.items() if figure in unknown]
            raise refuse("art-5", Sentence("the share of the %(unknown)s of origin %(origin)s that the area takes has "
                                         "no finding (%(items)s, by origin); record the competent body's finding "
                                         "before judging Art. 5", unknown=Listing(unknown), origin=origin,
                                         items=Listing(items)),
                         origin=origin, unshared=unknown, findings=items)
        verdicts = judge_figures(statute, on, left, tax, judgement,
                                 Sentence("origin %(origin)s would keep", origin=origin))
        remainders[origin] = {"figures": {k: str(v) for k, v in left.items()}, "verdicts": verdicts}
        if not all(verdicts.values()):
            raise refuse("art-5", Sentence("creating this municipality would make origin %(origin)s lose the Art. 4 "
                                           "requirements: %(reasons)s", origin=origin,
                                           reasons=Listing(judgement.said, "; ")),
                         origin=origin, remainder=remainders[origin])
    return remainders


@judges("art-4-par-unico", "art-32")
def judge_finding(ctx: ActContext, kind: str, item: str, article: str, document: str) -> dict[str, str]:
    """Art. 4 par. ún., Art. 32: a finding is of an item of the case's kind, recorded by the body named for it.

    The bodies are statute data (`competence.finding`; Art. 4-VI and 31-III by both the PGE and the SECTMA); an
    incompetent body is refused citing `article`, the lifecycle step's (Art. 4 par. ún. for a municipality,
    Art. 32 for a district), not the competence table's own. A finding cites its document. Returns the rule
    version used. (That every finding is in before a judgement is each judgement's: Art. 4's, Art. 31's.)"""
    allowed = FINDING_ITEMS.get(kind, ())
    if item not in allowed:
        raise InvalidActError("item", Sentence("%(item)r is not a finding of a %(kind)s case (%(allowed)s)", item=item,
                                                kind=Term(kind), allowed=Listing(allowed)))
    competence = ctx.statute.in_force("competence.finding", ctx.occurred_on)
    ctx.require_role(competence.value[item], article, f"the {item} finding")
    if not document.strip():
        raise InvalidActError("document", "a finding cites its document")
    return {competence.id: competence.version}


@judges("art-10")
def judge_receipt(requisition: dict[str, Any], name: str, role: str) -> None:
    """Art. 10: a requisition's receipt is recorded once, by the Mesa that issued it or by the body it went to.

    The receipt starts the body's days to answer (`deadline.requisition-answer`), so it is never recorded twice."""
    if requisition["received_on"] is not None:
        raise ActOutOfOrderError("art-10", Sentence("requisition %(requisition)s was received on %(on)s",
                                                    requisition=name, on=str(requisition["received_on"])))
    if role not in ("assembly-mesa", requisition["body"]):
        raise refuse("art-10", Sentence("the receipt of %(requisition)s is recorded by the Mesa or by %(body)s",
                                        requisition=name, body=requisition["body"]))


def latest_finding(findings: Findings, item: str) -> dict[str, Any]:
    """The latest finding of an item (by any of its bodies)."""
    return max(findings[item].values(), key=lambda f: f["on"])


def portion_of(findings: Findings, item: str, origin: str) -> Any:
    """Art. 5: the share of an Art. 4 figure that leaves `origin` (from the finding's breakdown; None: none)."""
    if item not in findings:
        return None
    value = latest_finding(findings, item)["by_origin"].get(origin)
    return None if value is None else (Decimal(str(value)) if item == "art-4-III" else int(value))


class Instruction:
    """Requisitions (Art. 10), findings (Art. 4 par. ún., 32) and the requirements (Art. 4, 5)."""

    def issue_requisition(self, ctx: ActContext, *, body: str, items: list[str]) -> str:
        """Art. 10: for a voters' initiative, the Mesa requisitions information from a competent body."""
        step = self._admit(ctx, "requisition-issued")
        competence = ctx.statute.in_force("competence.finding", ctx.occurred_on).value
        bodies = {b for roles in competence.values() for b in roles}
        if body not in bodies:
            raise InvalidActError("body", Sentence("%(body)r is not a competent body (%(bodies)s)", body=body,
                                                    bodies=Listing(sorted(bodies))))
        requisition = f"R{len(self.requisitions) + 1}"
        self._record(self.RequisitionIssued, ctx, article=step.article, requisition=requisition, body=body,
                     items=list(items))
        return requisition

    def receive_requisition(self, ctx: ActContext, calendar: Calendar, *, requisition: str) -> None:
        """Art. 10: the body's receipt of the requisition opens the 30-day answer deadline."""
        step = self._admit(ctx, "requisition-received")
        entry = self._requisition(requisition)
        judge_receipt(entry, requisition, ctx.actor.role)
        self._record(self.RequisitionReceived, ctx, article=step.article, requisition=requisition)
        key = f"requisition-answer:{requisition}"
        self._open_deadline(ctx, calendar, "requisition-answer", key=key, who=entry["body"])
        # The body's findings answer its requisitions: one it recorded since the requisition was issued (before this
        # receipt was recorded) has answered it already, on time.
        if any(body == entry["body"] and finding["on"] >= entry["issued_on"]
               for by_body in self.findings.values() for body, finding in by_body.items()):
            self._close_deadline(ctx, key, "finding-recorded")

    def refuse_requisition(self, ctx: ActContext, *, requisition: str, reason: str) -> None:
        """Art. 10 §1: no authority may refuse; a refusal is recorded as a breach and the deadline stays open."""
        step = self._admit(ctx, "requisition-refused")
        entry = self._requisition(requisition)
        if not reason.strip():
            raise InvalidActError("reason", "the refusal's terms are required")
        self._record(self.RequisitionRefused, ctx, article=step.article, requisition=requisition,
                     body=entry["body"], reason=reason)

    def record_finding(self, ctx: ActContext, *, item: str, value: Any, document: str,
                       by_origin: dict[str, Any] | None = None, state_tax_revenue: Any = None,
                       origin_figures: dict[str, dict[str, Any]] | None = None) -> None:
        """Art. 4 par. ún. / Art. 32: a competent body records its finding; it answers its open requisitions.

        In a creation case, the finding that completes Art. 4 records, in the same save, that the requirements
        are met when Art. 5 also holds on the registry figures in force (`origin_figures`); otherwise the Mesa's
        verification or the plebiscite decree judges them later and says what fails.
        """
        step = self._admit(ctx, "finding-recorded")  # its competence is judged by item, below
        versions = judge_finding(ctx, self.kind, item, step.article, document)
        value, by_origin, tax = self._finding_value(item, value, by_origin or {}, state_tax_revenue)
        holds = bool(value) if item in BOOLEAN_ITEMS else None
        self._record(self.FindingRecorded, ctx, article=item, rule_versions=versions, item=item,
                     body=ctx.actor.role, value=value, by_origin=by_origin, state_tax_revenue=tax,
                     document=document, holds=holds)
        for requisition in list(self.unanswered.get(ctx.actor.role, ())):  # the body's, in the order issued
            key = f"requisition-answer:{requisition}"
            if self._deadline_open(key):
                self._close_deadline(ctx, key, "finding-recorded")
        if self.kind == "creation" and origin_figures is not None:
            self._rejudge_requirements(ctx, origin_figures)

    def _rejudge_requirements(self, ctx: ActContext, origin_figures: dict[str, dict[str, Any]]) -> None:
        """After a creation's finding: record the requirements met, or lapsed if a new finding breaks them.

        While findings are still missing and nothing was verified, nothing is judged (the refusal that would say
        so is not built only to be dropped: it was a fortieth of an act's cost)."""
        if self.requirements is None and self._findings_missing():
            return
        try:
            self._record_requirements_met(ctx, origin_figures)
        except LegalRuleError as refusal:
            if self.requirements is not None:
                self._record(self.RequirementsLapsed, ctx, article=refusal.article, reason=refusal.message)

    def verify_requirements(self, ctx: ActContext, origin_figures: dict[str, dict[str, Any]]) -> None:
        """Art. 4 and 5: every item holds for the new municipality, and every origin keeps them after the split.

        `origin_figures` holds each origin's registry figures in force on the act's date (None = unknown).
        """
        self._admit(ctx, "requirements-verified")
        self._record_requirements_met(ctx, origin_figures)

    def _record_requirements_met(self, ctx: ActContext, origin_figures: Mapping[str, dict[str, Any]]) -> None:
        """Art. 4 I-VI, then Art. 5: record that they are met, or refuse naming the first that fails."""
        judgement = Judgement(holds=True)
        verdicts = judge_requirements(ctx.statute, ctx.occurred_on, self.findings, judgement)
        remainders = judge_origins_keep_requirements(ctx.statute, ctx.occurred_on, self.municipalities, origin_figures,
                                                     self.findings, judgement)
        self._record(self.RequirementsVerified, ctx, article="art-5", rule_versions=judgement.versions,
                     verdicts=verdicts, remainders=remainders)

    def _findings_missing(self) -> list[str]:
        """Art. 4 par. ún.: the items no finding was recorded for yet (Art. 4-VI needs both PGE's and SECTMA's)."""
        return findings_missing(self.findings, ART_4_ITEMS, "art-4-VI")

    def _requisition(self, requisition: str) -> dict[str, Any]:
        if requisition not in self.requisitions:
            raise InvalidActError("requisition", Sentence("no requisition %(requisition)r in case %(number)s",
                                                           requisition=requisition, number=self.number))
        return self.requisitions[requisition]

    def _finding(self, item: str) -> dict[str, Any]:
        """The latest finding of an item (by any of its bodies)."""
        return latest_finding(self.findings, item)

    def _portion(self, item: str, origin: str) -> Any:
        """Art. 5: the share of an Art. 4 figure that leaves `origin` (from the finding's breakdown)."""
        return portion_of(self.findings, item, origin)

    def _finding_value(self, item: str, value: Any, by_origin: dict[str, Any],
                       tax: Any) -> tuple[Any, dict[str, Any], Any]:
        """Validate a finding's figures: whole counts, decimal revenue, a per-origin breakdown that adds up."""
        if item in BOOLEAN_ITEMS:
            if not isinstance(value, bool):
                raise InvalidActError("value", Sentence("the %(item)s finding is yes (true) or no (false)", item=item))
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
                raise InvalidActError("by_origin", Sentence("give the share of each origin (%(origins)s)",
                                                             origins=Listing(origins)))
            by_origin = {code: parse(v, f"by_origin.{code}") for code, v in by_origin.items()}
            if sum(by_origin.values()) != value:
                raise InvalidActError("by_origin", Sentence("the origins' shares add up to %(sum)s, not %(value)s",
                                                             sum=str(sum(by_origin.values())), value=str(value)))
        else:
            by_origin = {}
        return value, by_origin, tax


def _remainder(known: Any, portion: Any) -> Any:
    if known is None or portion is None:
        return None
    return known - portion
