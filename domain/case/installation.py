"""Art. 19-26 and 40: after the law, from the Administrator to the installation and the obligations it opens.

Art. 20: the Governor's list of three, the Assembly's choice. Art. 19: installation, which opens the deadlines of
Art. 22 (each origin's books), 23 I-IV (the Mayor's bills) and 24 (the organic law); Art. 26's documents fall due
that day. Art. 25: the remuneration. Art. 40: the creation and the installation communicated to each recipient.
When each act is admissible is the kind's lifecycle (domain.case.admission); what it names is judged here, by
the registered judges of Art. 20, 23 and 40 (domain.judges); the other articles order acts and deadlines only.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import date
from typing import Any

from domain.acts import ActContext, refuse
from domain.calendar import Calendar
from domain.case.kinds import DISTRICT_KINDS, INSTALLATION_DEADLINES, NEW_MUNICIPALITY_KINDS, PREFECT_BILLS
from domain.errors import ActOutOfOrderError, InvalidActError, Listing, Sentence, Term
from domain.judges import judges
from domain.names import normalise_name
from domain.parameters import Statute


class Installation:
    """The Administrator (Art. 20), the installation (Art. 19) and its obligations (Art. 22-26, 40)."""

    def send_administrator_list(self, ctx: ActContext, *, names: list[str]) -> None:
        """Art. 20: between creation and installation the Governor sends a list of three names."""
        step = self._admit(ctx, "administrator-list-sent")
        distinct, versions = judge_administrator(ctx.statute, ctx.occurred_on, names)
        self._record(self.AdministratorListSent, ctx, article=step.article, rule_versions=versions, names=distinct)

    def appoint_administrator(self, ctx: ActContext, *, administrator: str) -> None:
        """Art. 20: the Assembly chooses the Administrator from the Governor's list."""
        step = self._admit(ctx, "administrator-appointed")
        (chosen,), _ = judge_administrator(ctx.statute, ctx.occurred_on, self.administrator_list, chosen=administrator)
        self._record(self.AdministratorAppointed, ctx, article=step.article, administrator=chosen)

    def install(self, ctx: ActContext, calendar: Calendar, *, mayor: str, vice_mayor: str,
                councillors: list[str]) -> None:
        """Art. 19: installation; Art. 22, 23 and 24 deadlines start; Art. 26's documents are due today."""
        self._admit(ctx, "municipality-installed")
        if not mayor.strip() or not vice_mayor.strip() or not councillors:
            raise InvalidActError("mayor", "installation names the Mayor, the Vice-Mayor and the councillors")
        self._record(self.MunicipalityInstalled, ctx, article="art-19", mayor=mayor, vice_mayor=vice_mayor,
                     councillors=list(councillors))
        documents_due = ctx.statute.in_force("deadline.personnel-documents", ctx.occurred_on).article
        for origin in self.municipalities:
            key = f"personnel-documents:{origin}"
            self._record(self.DeadlineDueDateSet, ctx, article=documents_due, deadline=key, due_on=ctx.occurred_on)
            if self._deadline_open(key):
                self._record(self.DeadlineMissed, ctx, article=documents_due, deadline=key)
            self._open_deadline(ctx, calendar, "ledger-transfer", key=f"ledger-transfer:{origin}",
                                who="origin-municipality", municipality=origin)
        for rule in INSTALLATION_DEADLINES:
            self._open_deadline(ctx, calendar, rule, municipality=self.law["new_municipality"])

    def transfer_ledger(self, ctx: ActContext, *, origin: str, document: str) -> None:
        """Art. 22 par. ún.: an origin municipality delivers the books and accounts to the new one."""
        self._origin(origin)
        step = self._admit(ctx, "ledger-transferred", municipality=origin)
        key = f"ledger-transfer:{origin}"
        self._record(self.LedgerTransferred, ctx, article=step.article, origin=origin, document=document)
        self._close_deadline(ctx, key, "ledger-transferred")
        self._conclude_if_done(ctx)

    def send_personnel_documents(self, ctx: ActContext, *, origin: str, document: str) -> None:
        """Art. 26 par. ún.: an origin municipality sends its staff documents (due by the installation)."""
        self._origin(origin)
        step = self._admit(ctx, "personnel-documents-sent", municipality=origin)
        key = f"personnel-documents:{origin}"
        self._record(self.PersonnelDocumentsSent, ctx, article=step.article, origin=origin, document=document)
        self._close_deadline(ctx, key, "personnel-documents-sent")
        self._conclude_if_done(ctx)

    def submit_prefect_bill(self, ctx: ActContext, *, item: str, bill: str) -> None:
        """Art. 23 I-IV: the Mayor sends the budget, organisation, civil-service and staff bills."""
        if item not in PREFECT_BILLS:
            raise InvalidActError("item", Sentence(
                "%(item)r is not one of %(items)s",
                item=item, items=Listing(PREFECT_BILLS)))
        self._admit(ctx, "prefect-bill-submitted")
        deadline = judge_prefect_bill(self.bills, item)
        self._record(self.PrefectBillSubmitted, ctx, article=item, item=item, bill=bill)
        self._close_deadline(ctx, deadline, "prefect-bill-submitted")
        self._conclude_if_done(ctx)

    def promulgate_organic_law(self, ctx: ActContext, *, organic_law: str) -> None:
        """Art. 24: the Câmara promulgates the organic law within six months of the installation."""
        self._admit(ctx, "organic-law-promulgated")
        self._record(self.OrganicLawPromulgated, ctx, article="art-24", organic_law=organic_law)
        self._close_deadline(ctx, "organic-law", "organic-law-promulgated")
        self._conclude_if_done(ctx)

    def fix_remuneration(self, ctx: ActContext, *, act: str) -> None:
        """Art. 25: once in office, the Câmara fixes the remuneration for the legislature."""
        self._admit(ctx, "remuneration-fixed")
        self._record(self.RemunerationFixed, ctx, article="art-25", act=act)
        self._conclude_if_done(ctx)

    def send_communication(self, ctx: ActContext, *, subject: str, recipient: str, document: str) -> None:
        """Art. 40: the creation and the installation are communicated to the Union, State, origin, IBGE, EBCT."""
        step = self._admit(ctx, "district-communication-sent" if self.kind in DISTRICT_KINDS else "communication-sent")
        judge_communication(self.communications_due(ctx), self.communications, subject, recipient)
        self._record(self.CommunicationSent, ctx, article=step.article, subject=subject, recipient=recipient,
                     document=document)
        self._conclude_if_done(ctx)

    def communications_due(self, ctx: ActContext) -> list[str]:
        """Art. 40's checklist as it stands: `subject:recipient` for each act already done."""
        return self._communications_due(ctx.statute)

    def _communications_due(self, statute: Statute) -> list[str]:
        if self.kind not in NEW_MUNICIPALITY_KINDS + ("district_creation",) or self.law is None:
            return []
        recipients = statute.in_force("art-40.recipients", self.law["on"]).value
        subjects = statute.in_force("art-40.communicated-acts", self.law["on"]).value
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

    def _origin(self, origin: str) -> None:
        if origin not in self.municipalities:
            raise InvalidActError("origin", Sentence(
                "%(origin)s is not an origin municipality of this case",
                origin=origin))


@judges("art-20")
def judge_administrator(statute: Statute, on: date, names: list[str],
                        chosen: str | None = None) -> tuple[list[str], dict[str, str]]:
    """Art. 20: between the law and the installation the Governor lists three names and the Assembly chooses one.

    Without `chosen`, the Governor's list `names`: refused unless it holds the statute's number of distinct names
    (accents and case aside); returns them, each as first written, with the rule version. With `chosen`, the
    Assembly's choice among `names` (the list sent): refused when it is not on it; returns it as the list spells it.
    """
    if chosen is not None:
        found = {normalise_name(n): n for n in names}.get(normalise_name(chosen))
        if found is None:
            raise refuse("art-20", Sentence("%(administrator)r is not on the Governor's list (%(names)s)",
                                            administrator=chosen, names=Listing(names)))
        return [found], {}
    size = statute.in_force("art-20.administrator-list-size", on)
    distinct = list({normalise_name(n): n.strip() for n in reversed(names) if n.strip()}.values())[::-1]
    if not size.holds(len(distinct)) or len(distinct) != len(names):
        raise refuse("art-20", Sentence("the list must hold %(comparison)s %(required)s distinct names; %(distinct)s "
                                        "distinct of %(sent)s were sent", comparison=size.comparison_words,
                                        required=size.value, distinct=len(distinct), sent=len(names)),
                     required=size.value, found=len(distinct))
    return distinct, {size.id: size.version}


@judges("art-23", "art-23-I", "art-23-II", "art-23-III", "art-23-IV")
def judge_prefect_bill(bills: dict[str, dict[str, Any]], item: str) -> str:
    """Art. 23 I-IV: once installed, the Mayor sends the Câmara each of four bills, each once.

    `item` is one of the four, as the act's field was checked (the budget proposal, the administrative
    organisation, the civil-service regime, the staff framework); a bill already sent is refused citing its item.
    The lifecycle admits the act after the installation and no longer once every bill was sent (its condition
    `art-23-bills-sent`). Returns the deadline the bill closes.
    """
    if item in bills:
        raise ActOutOfOrderError(item, Sentence("the %(item)s bill was already sent on %(on)s", item=item,
                                                on=bills[item]["on"].isoformat()))
    return PREFECT_BILLS[item]


@judges("art-40")
def judge_communication(due: list[str], sent: Collection[str], subject: str, recipient: str) -> None:
    """Art. 40: the creation, then the installation, are communicated to each recipient the statute names, once.

    `due` is the checklist as it stands (`subject:recipient` for each act already done, `communications_due`),
    `sent` what was communicated; anything else is refused.
    """
    if f"{subject}:{recipient}" not in due:
        raise InvalidActError("recipient", Sentence(
            "%(subject)s:%(recipient)s is not an Art. 40 communication of this case at this point (%(due)s)",
            subject=subject, recipient=recipient, due=Listing(due) or Term("none due")), article="art-40")
    if f"{subject}:{recipient}" in sent:
        raise ActOutOfOrderError("art-40", Sentence("the %(subject)s was already communicated to %(recipient)s",
                                                    subject=subject, recipient=recipient))
