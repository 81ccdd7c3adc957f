"""The acts of a case, one method each (Art. 8-40): get the case, let it judge, save it and what it changes."""

from __future__ import annotations

from datetime import date, timedelta
from fractions import Fraction
from typing import Any

from domain.acts import ActContext, Actor, ChainedAggregate
from domain.application.base import Acted, ApplicationBase
from domain.case import NEW_MUNICIPALITY_KINDS, Case
from domain.case.kinds import DISTRICT_KINDS
from domain.errors import InvalidActError, Sentence
from domain.law_effects import law_effects
from domain.names import ToponymList
from domain.numbering import CaseNumbering
from domain.registry import Municipality, ToponymRegister


class CaseActs(ApplicationBase):
    """The acts of a case, one method each (Art. 8-40): get the case, let it judge, save it and what it changes."""

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
            self._attach(case, ctx)
            if kind == "district_suppression":
                self._require_district(registry[case.municipalities[0]], district or "")
            for code in case.frozen:
                registry[code].freeze(ctx, str(case.id), number)
            for m in registry.values():
                m.require_existing(occurred_on, case.article_of_opening)
            acted = Acted(case.id, number, case.version, decided_from=1)
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
            origin_figures=self._figures_when_needed(c.municipalities, occurred_on) if c.kind == "creation" else None))

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
            ctx, decree=decree, origin_figures=self._figures_when_needed(c.municipalities, occurred_on)
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
            original = self._original_shares(self._get_municipality(territories[0])) \
                if c.kind == "extinction" else None
            extra_codes = [*(reintegration or {}), *(original or {})]
            registry = {code: self._get_municipality(code) for code in territories + extra_codes}
            toponyms_register = self._get_or_none(ToponymRegister.ID)
            toponyms = self.toponyms(toponyms_register)
            c.enact_law(ctx, self.calendar, law=law, toponyms=toponyms,
                        origin_figures=self._figures_on(territories, occurred_on, registry), name=name,
                        seat_origin=seat_origin, limits=limits, comarca=comarca, districts=districts,
                        living_person_declaration=living_person_declaration, ibge_code=ibge_code,
                        reintegration=reintegration,
                        district_municipality=registry[territories[0]] if c.kind in DISTRICT_KINDS else None,
                        ceased=self._ceased_by(toponyms, name if c.kind not in DISTRICT_KINDS
                                                          else c.district, occurred_on, registry),
                        original_shares=original)
            changed = law_effects(ctx, c, registry, self._district_origins(registry[territories[0]])
                                  if c.kind == "extinction" else None)
            if c.kind in NEW_MUNICIPALITY_KINDS:
                if self._find_municipality(c.new_municipality) is not None:
                    raise InvalidActError("ibge_code", Sentence(
                        "%(new_municipality)s is already in the registry",
                        new_municipality=c.new_municipality))
                toponyms_register = toponyms_register or ToponymRegister.open(ctx)
                toponyms_register.add(ctx, name=c.law["name"], uf="AC", ibge_code=ibge_code,
                                      source=f"{law} ({c.number})")
                changed.append(toponyms_register)
            for code in frozen:
                registry[code].unfreeze(ctx, str(c.id), c.number)
            return changed + [m for m in registry.values() if all(m is not c for c in changed)]

        return self._act(case, actor, occurred_on, expected_version, command)

    def _ceased_by(self, toponyms: ToponymList, name: str | None, day: date,
                   registry: dict[str, Municipality]) -> set[str]:
        """Art. 17 par. ún.: the registry's municipalities listed under `name` that had ceased by `day` (by an
        incorporation, a fusion or an extinction): their name is no longer that of an existing municipality."""
        ceased = set()
        for toponym in toponyms.same_name(name or ""):
            if toponym.ibge_code is None:
                continue
            municipality = registry.get(toponym.ibge_code) or self._find_municipality(toponym.ibge_code)
            if municipality is not None and municipality.ceased_by(day):
                ceased.add(toponym.ibge_code)
        return ceased

    def _original_shares(self, municipality: Municipality) -> dict[str, Fraction] | None:
        """Art. 37 par. ún.: the proportion in which a municipality's origins gave its territory, when a creation
        or fusion case recorded here made it (by the areas the creation took from each origin, by the origins'
        areas the day before the fusion law); None when the registry does not know it (a seeded municipality, an
        area unknown)."""
        number = municipality.created_by_case
        maker = self._get_or_none(self.resolve_case(number)) if number else None
        if not isinstance(maker, Case) or maker.law is None:
            return None
        if maker.kind == "creation":
            areas: dict[str, Any] = {}
            for area in maker.areas:
                areas[area["municipality"]] = areas.get(area["municipality"], 0) + area["area_km2"]
        elif maker.kind == "fusion":
            before = maker.law["on"] - timedelta(days=1)
            areas = {code: self._get_municipality(code).figures_on(before)["area_km2"] for code in maker.municipalities}
        else:
            return None
        if not areas or any(not value for value in areas.values()):
            return None
        total = sum(Fraction(str(value)) for value in areas.values())
        return {code: Fraction(str(value)) / total for code, value in areas.items()}

    def _district_origins(self, municipality: Municipality) -> dict[str, str]:
        """Art. 37 par. ún.: the districts a creation recorded here took from its origins (its petition's
        `areas[].district`), each with the origin it came from; none for a municipality made otherwise."""
        number = municipality.created_by_case
        maker = self._get_or_none(self.resolve_case(number)) if number else None
        if not isinstance(maker, Case) or maker.kind != "creation":
            return {}
        return {area["district"]: area["municipality"] for area in maker.areas if area.get("district")}

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
