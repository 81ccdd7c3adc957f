"""Art. 1, 8-40 (the order of acts): admitting an act by the kind's lifecycle in force, and what may come next.

One admission for every act (`_admit`): the case is live, the legal date is sound, the actor is the competent body
(`competence.act` in force), and the lifecycle in force on the act's legal date (domain/statute/lifecycles.toml)
orders it now. An act out of order is refused with `ActOutOfOrderError`, saying what is required and what was
found, and citing: the step's `ordered_by` article when an act it follows is missing; the article of the act
that closed its stage (`until`; the step's `closed_citing` when its own article states the stage, as Art. 20's
"between the creation and the installation" does), or the act itself when done once; the named condition's
article (`when`; the step's `unmet_citing` when its own article states the condition, as Art. 11's "atendidos os
requisitos" does); the step's article when a condition ends it (`unless`). `next_acts` answers, from the same data
and the same check, what may be recorded now. The substantive judgements (figures, votes, names, dates, gates) stay
with each act.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from domain.acts import ActContext, require_legal_date
from domain.case.conditions import CONDITIONS, Verdict
from domain.case.kinds import FINDING_ITEMS, KINDS
from domain.errors import (
    ActOutOfOrderError, InvalidActError, LegalRuleError, Listing, RuleNotInForceError, Sentence, Term,
)
from domain.lifecycle import (
    ActEntry, Lifecycle, Step, act_catalogue, lifecycle_of, lifecycle_versions,
)
from domain.parameters import Statute

if TYPE_CHECKING:
    from domain.case import Case


@dataclass(frozen=True)
class NextAct:
    """An act the case may record now: its article, the competent roles and, for a municipal body, for whom."""

    act: str
    article: str
    roles: list[str]
    municipalities: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {"act": self.act, "article": self.article, "roles": list(self.roles),
                "municipalities": list(self.municipalities)}


class Admission:
    """The order of acts, from the lifecycle data: admitting an act, refusing it, and the acts that may follow."""

    #: Free-text references an act must name (its decree, resolution, bill, law, document, reason, ...).
    REFERENCE_FIELDS = ("decree", "resolution", "bill", "law", "document", "organic_law", "act", "reason",
                        "justification", "mayor", "vice_mayor", "administrator")

    def _record(self, event_class: type[Any], ctx: ActContext, **fields: Any) -> None:
        """Every act names its references: an empty decree, law or document is refused naming the field."""
        for name in self.REFERENCE_FIELDS:
            if name in fields and not (isinstance(fields[name], str) and fields[name].strip()):
                raise InvalidActError(name, "is required: the act cites it")
        super()._record(event_class, ctx, **fields)  # type: ignore[misc]

    def lifecycle(self: Case, statute: Statute, on: date) -> Lifecycle:
        """This case's kind's lifecycle in force on `on`."""
        return lifecycle_of(statute, self.kind, on)

    def _admit(self: Case, ctx: ActContext, act: str, municipality: str | None = None) -> Step:
        """Every act: live case, sound legal date, competent body, and the order of the lifecycle in force.

        `municipality` names, for an act done by each of several municipalities (a council, an origin), the one
        this act is for; an act of a district's or a new municipality's body is that municipality's (the step's
        `by`). Returns the lifecycle's step for the act (its article is the one the act records).
        """
        statute, day = ctx.statute, ctx.occurred_on
        lifecycle, catalogue, step, refusal = self._order_start(statute, act, day)
        if refusal is not None:
            raise refusal
        require_legal_date(ctx, self.last_occurred_on)
        if step is None:
            raise self._absent(statute, lifecycle, catalogue, act, day)
        if catalogue[act].competence == "competence.act":
            ctx.require_competent(act, step.article, municipality=municipality if step.per_municipality
                                  else self._municipality_of(step))
        refusal = self._step_refusal(statute, lifecycle, catalogue, step, day, municipality)
        if refusal is not None:
            raise refusal
        return step

    def order_refusal(self: Case, statute: Statute, act: str, on: date,
                      municipality: str | None = None) -> LegalRuleError | None:
        """The ORDER check alone (no legal date, no competence): the refusal an act would meet on `on`, or None.

        For an act done by each of several municipalities, without `municipality`: None when it is admissible for
        at least one of them.
        """
        lifecycle, catalogue, step, refusal = self._order_start(statute, act, on)
        if refusal is not None:
            return refusal
        if step is None:
            return self._absent(statute, lifecycle, catalogue, act, on)
        if step.per_municipality and municipality is None:
            refusals = [self._step_refusal(statute, lifecycle, catalogue, step, on, code)
                        for code in self._targets(step)]
            return None if any(r is None for r in refusals) else refusals[0]
        return self._step_refusal(statute, lifecycle, catalogue, step, on, municipality)

    def _order_start(self: Case, statute: Statute, act: str, on: date) -> tuple[
            Lifecycle, dict[str, ActEntry], Step | None, LegalRuleError | None]:
        """What every order check starts from: the lifecycle and the act catalogue in force on `on`, the act's
        step (None: not an act of this kind), and the refusal of a case already ended, if any."""
        lifecycle, catalogue = self.lifecycle(statute, on), act_catalogue(statute, on)
        step = lifecycle.step(act)
        article = step.article if step else catalogue[act].article
        return lifecycle, catalogue, step, self._final_refusal(statute, lifecycle, catalogue, article, on)

    def next_acts(self: Case, statute: Statute, on: date) -> list[NextAct]:
        """What may be recorded now in this case, by the lifecycle in force on `on`: exactly the acts whose order
        check passes (the legal date and the actor are each act's own), with the competent roles on `on` and, for
        an act by a municipality's body, the municipalities it is still due from. `on` is passed in (the domain
        never reads the clock): today for "what may be recorded now", or the date a replay stops at."""
        lifecycle, catalogue = self.lifecycle(statute, on), act_catalogue(statute, on)
        if self._final_refusal(statute, lifecycle, catalogue, lifecycle.article, on) is not None:
            return []
        entries = []
        for step in lifecycle.steps[1:]:
            if step.per_municipality:
                municipalities = [code for code in self._targets(step)
                                  if self._step_refusal(statute, lifecycle, catalogue, step, on, code) is None]
                if not municipalities:
                    continue
            elif self._step_refusal(statute, lifecycle, catalogue, step, on, None) is not None:
                continue
            else:
                municipalities = self._targets(step) if step.by else []
            entries.append(NextAct(step.act, step.article, self._roles(statute, on, catalogue[step.act]),
                                   municipalities))
        return entries

    def next_acts_document(self: Case, statute: Statute, on: date) -> list[dict[str, Any]]:
        """`next_acts` as plain data: [{"act", "article", "roles", "municipalities"}, ...]."""
        return [entry.as_dict() for entry in self.next_acts(statute, on)]

    # ------------------------------------------------------------------ the checks

    def _recorded(self: Case, catalogue: dict[str, ActEntry], act: str,
                  municipality: str | None = None) -> date | None:
        """The last legal date on which `act` was recorded in this case (for `municipality`, when given); None
        when it never was."""
        last = self.acts_log.get(catalogue[act].event, {})
        if municipality is not None:
            return last.get(municipality)
        return max(last.values(), default=None)

    def _verdict(self: Case, name: str, statute: Statute, on: date) -> Verdict:
        return CONDITIONS[name](self, statute, on)

    def _final_refusal(self: Case, statute: Statute, lifecycle: Lifecycle, catalogue: dict[str, ActEntry],
                       article: str, on: date) -> ActOutOfOrderError | None:
        """The case took its final act (the archive) or met a final condition (concluded): no act may follow."""
        for act in lifecycle.ends:
            if last := self._recorded(catalogue, act):
                return ActOutOfOrderError(article, Sentence("case %(number)s took its final act, %(act)s (%(label)s), "
                                                           "on %(on)s; no act may be recorded", number=self.number,
                                                           act=act, label=catalogue[act].label, on=last.isoformat()),
                                          final=act)
        for name in lifecycle.ends_when:
            verdict = self._verdict(name, statute, on)
            if verdict.holds:
                return ActOutOfOrderError(article, Sentence("%(found)s; no act may be recorded", found=verdict.found),
                                          final=name)
        return None

    def _absent(self: Case, statute: Statute, lifecycle: Lifecycle, catalogue: dict[str, ActEntry], act: str,
                on: date) -> LegalRuleError:
        """An act that is no step of this kind's lifecycle in force: excluded, not yet or no longer in force, or
        simply not an act of this kind."""
        if act in lifecycle.excluded:
            exclusion = lifecycle.excluded[act]
            return ActOutOfOrderError(exclusion.article, Sentence(
                "%(act)s: %(reason)s",
                act=act, reason=Term(exclusion.reason)),
                                      kind=self.kind)
        article = catalogue[act].article
        for version in lifecycle_versions(statute, self.kind):
            step = version.step(act)
            if step is not None:
                return RuleNotInForceError(step.article, Sentence(
                    "no version of the %(kind)s lifecycle in force on %(on)s orders %(act)s; the version in force from "
                    "%(since)s does", kind=Term(self.kind), on=on.isoformat(), act=act,
                    since=version.effective_from.isoformat()),
                    act=act, on=on.isoformat())
        kinds = [kind for kind in KINDS if _orders(statute, kind, on, act)]
        where = (Sentence("it is an act of: %(kinds)s", kinds=Listing(Term(kind) for kind in kinds)) if kinds else
                 Term("no case kind records it on that date"))
        said = (Sentence("%(act)s is not an act of an %(kind)s case; %(where)s", act=act, kind=Term(self.kind),
                         where=where) if self.kind[0] in "aeiou" else
                Sentence("%(act)s is not an act of a %(kind)s case; %(where)s", act=act, kind=Term(self.kind),
                         where=where))
        return ActOutOfOrderError(article, said, kinds=kinds)

    def _step_refusal(self: Case, statute: Statute, lifecycle: Lifecycle, catalogue: dict[str, ActEntry],
                      step: Step, on: date, municipality: str | None) -> ActOutOfOrderError | None:
        """Why the step is not admissible now (None: it is), in the lifecycle's order of checks."""
        act = step.act
        if step.once:
            per = municipality if step.per_municipality else None
            if last := self._recorded(catalogue, act, per):
                said = (Sentence("%(act)s was already recorded for %(municipality)s on %(on)s", act=act,
                                 municipality=per, on=last.isoformat()) if per else
                        Sentence("%(act)s was already recorded on %(on)s", act=act, on=last.isoformat()))
                return ActOutOfOrderError(step.article, said,
                                          recorded_on=last.isoformat())
        for closing in step.until:
            if last := self._recorded(catalogue, closing):
                closer = lifecycle.step(closing)
                return ActOutOfOrderError(step.closed_citing or (closer.article if closer else step.article),
                                          Sentence("%(act)s is no longer admissible: %(closing)s was recorded on "
                                                   "%(on)s", act=act, closing=closing, on=last.isoformat()),
                                          closed_by=closing)
        for name in step.unless:
            verdict = self._verdict(name, statute, on)
            if verdict.holds:
                return ActOutOfOrderError(step.article, Sentence("%(act)s is no longer admissible: %(found)s", act=act,
                                                                 found=verdict.found),
                                          **verdict.figures)
        missing = [a for a in step.after if not self._recorded(catalogue, a)]
        if missing:
            return ActOutOfOrderError(step.ordered_by, Sentence(
                "%(act)s follows %(missing)s (%(labels)s); none was recorded in case %(number)s", act=act,
                missing=Listing(missing), labels=Listing((catalogue[a].label for a in missing), "; "),
                number=self.number),
                missing=missing)
        if step.after_any and not any(self._recorded(catalogue, a) for a in step.after_any):
            return ActOutOfOrderError(step.ordered_by, Sentence(
                "%(act)s follows one of %(missing)s; none was recorded in case %(number)s", act=act,
                missing=Listing(step.after_any), number=self.number), missing=list(step.after_any))
        for name in step.when:
            verdict = self._verdict(name, statute, on)
            if not verdict.holds:
                condition = lifecycle.conditions[name]
                return ActOutOfOrderError(step.unmet_citing or condition.article, Sentence(
                    "%(act)s requires that %(requires)s; %(found)s", act=act, requires=Term(condition.requires),
                    found=verdict.found), **verdict.figures)
        return None

    # ------------------------------------------------------------------ whose act

    def _targets(self: Case, step: Step) -> list[str]:
        """The municipalities whose body records the step (`by`), in the case's order."""
        if step.by == "territory":
            return self._territories()
        if step.by == "origin":
            return list(self.municipalities)
        if step.by == "municipality":
            return self.municipalities[:1]
        if step.by == "new-municipality":
            return [self.new_municipality] if self.new_municipality else []
        return []

    def _municipality_of(self: Case, step: Step) -> str | None:
        targets = self._targets(step)
        return targets[0] if targets and not step.per_municipality else None

    def _roles(self: Case, statute: Statute, on: date, entry: ActEntry) -> list[str]:
        """The competent roles for the act on `on` (a finding: the bodies of this kind's items)."""
        table = statute.in_force(entry.competence, on).value
        if entry.competence == "competence.act":
            return list(table[entry.act])
        return sorted({role for item in FINDING_ITEMS.get(self.kind, ()) for role in table.get(item, [])})

    # ------------------------------------------------------------------ state questions

    @property
    def new_municipality(self: Case) -> str | None:
        return self.law["new_municipality"] if self.law else None

    def _territories(self: Case) -> list[str]:
        return self.municipalities + ([self.receiving] if self.receiving else [])


def _orders(statute: Statute, kind: str, on: date, act: str) -> bool:
    """Whether `kind`'s lifecycle in force on `on` has `act` as a step."""
    try:
        return lifecycle_of(statute, kind, on).step(act) is not None
    except LegalRuleError:
        return False
