"""Art. 17, 21, 31, 32, 37 and CF art. 18 §4: the case's law, and the extinction request it needs.

Art. 17: the creation law names the municipality after its seat, gives its limits, comarca and districts; its name
is new in Brazil and no date (par. ún.). Art. 21: whose legislation applies. CF art. 18 §4: since its amendment of
1996 no creation, incorporation, fusion or dismemberment law while no federal period is open. Art. 31, 32: a district's
municipal law. Art. 37: an extinction needs the loss of Art. 4 (I) and two thirds of the voters (II, certified by
the TRE). When the law is admissible is the kind's lifecycle (domain.case.admission); its contents are judged here,
each article by its registered judge (domain.judges): `judge_law_contents`, `judge_legislation`,
`judge_district_law`, `judge_extinction`, `judge_reintegration`; the law calls them in the order it always did.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import date
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from domain.acts import ActContext, refuse
from domain.calendar import Calendar
from domain.case.instruction import judge_origins_keep_requirements, latest_finding
from domain.case.kinds import (
    ART_5_LAW_KINDS, BOOLEAN_ITEMS, DISTRICT_KINDS, FINDING_ITEMS, MUNICIPAL_KINDS, NEW_MUNICIPALITY_KINDS,
    findings_missing,
)
from domain.case.opening import judge_federal_gate
from domain.errors import InvalidActError, Listing, Sentence, Term
from domain.judges import judges
from domain.names import ToponymList, normalise_name
from domain.parameters import Statute
from domain.registry import judge_freeze
from domain.rules import (
    ART_4_FIGURES, Judgement, check_district_law_date, check_name, judge_extinction_request, judge_figures,
)

if TYPE_CHECKING:
    from domain.registry import Municipality


class Law:
    """The case's law (Art. 17, 31, 37), its contents and gates, and the Art. 37-II request's certificate."""

    def enact_law(self, ctx: ActContext, calendar: Calendar, *, law: str, toponyms: ToponymList | None = None,
                  origin_figures: dict[str, dict[str, Any]] | None = None, name: str | None = None,
                  seat_origin: str | None = None, limits: str = "", comarca: str = "",
                  districts: list[str] | None = None, living_person_declaration: bool = False,
                  ibge_code: str | None = None, reintegration: dict[str, Any] | None = None,
                  district_municipality: Municipality | None = None,
                  ceased: Collection[str] = (), original_shares: dict[str, Fraction] | None = None) -> None:
        """Art. 17 (state law), Art. 31 (municipal law), Art. 37 (extinction law): the case's law.

        Judged here (the order of acts is the lifecycle's): the federal gate (CF art. 18 §4) on the law's date,
        Art. 17's contents and name, Art. 21's legislation, Art. 5 for a creation and a dismemberment (again, on
        the registry's figures on the law's day: another creation's law, or a later figure, may have moved an
        origin's since its requirements were met), Art. 37 for an extinction; for a district, Art. 31
        (`judge_district_law`, on its municipality's registry entry, `district_municipality`). The application
        passes the registry's figures and entries, the toponym list and the listed
        municipalities that had ceased by the law's day (`ceased`: a name may be that of a municipality that no
        longer exists, and a fusion's successor that of one of its origins) and, for an extinction, the original
        proportion of the municipality's origins when the registry knows it (`original_shares`) in.
        """
        article = self._admit(ctx, "district-law-enacted" if self.kind in DISTRICT_KINDS else "law-enacted").article
        origin_figures = origin_figures or {}
        versions: dict[str, str] = {}
        contents: dict[str, Any] = {"limits": limits, "comarca": comarca, "districts": list(districts or [])}
        legislation_of: dict[str, Any] = {}
        new_municipality = None
        seat = None
        if self.kind in MUNICIPAL_KINDS:
            versions.update(judge_federal_gate(ctx.statute, self.kind, ctx.occurred_on))
        if self.kind in NEW_MUNICIPALITY_KINDS:
            seat = self.result["seat"] if self.kind == "fusion" else name
            judge_law_contents(name, seat, limits, comarca, districts)
            gone = {*ceased, *(self.municipalities if self.kind == "fusion" else ())}
            versions.update(check_name(toponyms or ToponymList.shipped(), name or "", "art-17-par-unico",
                                       living_person_declaration, not_existing=gone))
            new_municipality = ibge_code or f"new:{self.number}"
            legislation_of = judge_legislation(self.kind, self.municipalities, seat_origin, origin_figures)
        elif self.kind in DISTRICT_KINDS:
            versions.update(judge_district_law(
                ctx.statute, ctx.occurred_on, creation=self.kind == "district_creation",
                municipality=district_municipality, district=self.district or "", findings=self.findings,
                toponyms=toponyms or ToponymList.shipped(), living_person_declaration=living_person_declaration,
                ceased=ceased, law=law))
        elif self.kind == "extinction":
            extinct = self.municipalities[0]
            contents["lost"], extinction_versions, population = judge_extinction(
                ctx.statute, ctx.occurred_on, self.extinction_request, self.findings, origin_figures.get(extinct) or {})
            if population is not None:
                contents["registry_population"] = population
            versions.update(extinction_versions)
            contents["reintegration"] = judge_reintegration(reintegration or {}, original_shares, extinct)
        if self.kind in ART_5_LAW_KINDS:
            judgement = Judgement(holds=True)
            contents["art-5"] = judge_origins_keep_requirements(ctx.statute, ctx.occurred_on, self.municipalities,
                                                                origin_figures, self.findings, judgement)
            versions.update(judgement.versions)
        self._record(self.LawEnacted, ctx, article=article, rule_versions=versions, law=law, name=name, seat=seat,
                     contents=contents, new_municipality=new_municipality, legislation_of=legislation_of)
        if self.kind in NEW_MUNICIPALITY_KINDS:
            for origin in self.municipalities:
                self._open_deadline(ctx, calendar, "personnel-documents", key=f"personnel-documents:{origin}",
                                    who="origin-municipality", municipality=origin)

    def certify_extinction_request(self, ctx: ActContext, *, valid_signatures: Any, registered_voters: Any) -> None:
        """Art. 37-II: the TRE certifies the request's valid signatures against the registered voters."""
        step = self._admit(ctx, "request-signatures-certified")
        judgement = judge_extinction_request(ctx.statute, ctx.occurred_on, valid_signatures, registered_voters)
        self._record(self.ExtinctionRequestCertified, ctx, article=step.article, rule_versions=judgement.versions,
                     valid_signatures=judgement.figures["valid_signatures"],
                     registered_voters=judgement.figures["registered_voters"], holds=judgement.holds,
                     figures=judgement.figures)


@judges("art-17", "art-17-I", "art-17-II", "art-17-III", "art-17-IV")
def judge_law_contents(name: str | None, seat: str | None, limits: str, comarca: str,
                       districts: list[str] | None) -> None:
    """Art. 17 I-IV: the law names the municipality after its seat, gives limits, comarca and districts."""
    if not (name or "").strip():
        raise refuse("art-17-I", "the law names the new municipality")
    if seat and normalise_name(seat) != normalise_name(name or ""):
        raise refuse("art-17-I", Sentence("the name must be that of the seat (%(seat)s), not %(name)s", seat=seat,
                                          name=name))
    if not limits.strip():
        raise refuse("art-17-II", "the law states the municipality's limits")
    if not comarca.strip():
        raise refuse("art-17-III", "the law states the comarca it belongs to")
    if not districts:
        raise refuse("art-17-IV", "the law lists the districts with their boundaries")


@judges("art-21", "art-21-I", "art-21-II")
def judge_legislation(kind: str, origins: list[str], seat_origin: str | None,
                      origin_figures: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Art. 21: the seat's origin's legislation (creation, I), or the largest-revenue origin's (fusion, II).

    A fusion whose origins' revenue the registry does not know names none, saying why."""
    if kind == "creation":
        origin = seat_origin or (origins[0] if len(origins) == 1 else None)
        if origin not in origins:
            raise InvalidActError("seat_origin", Sentence("name the origin municipality of the seat (%(origins)s)",
                                                          origins=Listing(origins)))
        return {"municipality": origin, "article": "art-21-I"}
    revenues = {code: origin_figures.get(code, {}).get("revenue") for code in origins}
    unknown = [code for code, value in revenues.items() if value is None]
    if unknown:
        return {"municipality": None, "article": "art-21-II",
                "note": f"revenue unknown in the registry for {', '.join(unknown)}"}
    return {"municipality": max(revenues, key=lambda code: revenues[code]), "article": "art-21-II",
            "revenues": {code: str(value) for code, value in revenues.items()}}


@judges("art-37", "art-37-I")
def judge_extinction(statute: Statute, on: date, request: dict[str, Any] | None, findings: dict[str, dict[str, Any]],
                     registry: dict[str, Any]) -> tuple[list[str], dict[str, str], Any]:
    """Art. 37: extinction needs both the loss of an Art. 4 requirement (I) and two thirds of the voters (II).

    The request of II is as the TRE certified it (`request`, Art. 37-II's judgement, recorded). A requirement is
    lost when the finding of its competent body shows it (Art. 37-I: "findings showing the loss"). Art. 4-II
    compares the TRE's voters with the population: the IBGE's finding in the case, or else the registry's
    population in force on the law's day (`registry`, the municipality's figures then), which is returned so that
    the law records what it was judged on (None when the finding gave it). Returns the items lost, the rule
    versions used and that population."""
    if request is None or not request["holds"]:
        if request is None:
            raise refuse("art-37-II", "the request of two thirds of the registered voters is not certified by the TRE")
        raise refuse("art-37-II", Sentence("the request of two thirds of the registered voters is not certified by "
                                           "the TRE (%(figures)s)", figures=str(request["figures"])))
    judgement = Judgement(holds=True)
    figures = {figure: latest_finding(findings, item)["value"] if item in findings else None
               for item, figure in ART_4_FIGURES.items()}
    registry_population = None
    if figures["population"] is None and "art-4-II" in findings:
        figures["population"] = registry_population = registry.get("population")
    tax = latest_finding(findings, "art-4-III")["state_tax_revenue"] if "art-4-III" in findings else None
    verdicts = judge_figures(statute, on, figures, tax, judgement, "the municipality")
    found = set(findings) - ({"art-4-II"} if figures["population"] is None else set())
    lost = [item for item, ok in verdicts.items() if item in found and not ok]
    lost += [item for item in BOOLEAN_ITEMS[:2] if item in findings
             and any(f["holds"] is False for f in findings[item].values())]
    if not lost:
        raise refuse("art-37-I", "no finding shows the loss of an Art. 4 requirement")
    return lost, judgement.versions, registry_population if "art-4-II" in lost else None


@judges("art-31", "art-31-I", "art-31-II", "art-31-III")
def judge_district_law(statute: Statute, on: date, *, creation: bool, municipality: Municipality, district: str,
                       findings: dict[str, dict[str, Any]], toponyms: ToponymList, living_person_declaration: bool,
                       ceased: Collection[str], law: str) -> dict[str, str]:
    """Art. 31: a municipal law creates a district of its municipality (par. ún. I-IV, Art. 32) or suppresses one.

    In this order: for a creation, every finding of Art. 31 par. ún. I-III by the bodies Art. 32 names, each
    holding (I: buildings, II: inhabitants, III: the boundary description), the law's date (Art. 31-IV), no
    Art. 38 freeze on that day and the district's name (Art. 32 par. ún.); then, as the registry records the law
    (which names itself), for either: the municipality still exists, no freeze covers it (Art. 38), and it has
    no district of that name yet (a creation) or has it (a suppression). Returns the rule versions used.
    """
    judgement = Judgement(holds=True)
    versions: dict[str, str] = {}
    if creation:
        missing = findings_missing(findings, FINDING_ITEMS["district_creation"], "art-31-III")
        if missing:
            raise refuse("art-32", Sentence("findings missing: %(missing)s", missing=Listing(missing)), missing=missing)
        for item, parameter_id, what in (("art-31-I", "art-31-I.buildings", Term("buildings")),
                                         ("art-31-II", "art-31-II.population", Term("inhabitants"))):
            rule = judgement.use(statute.in_force(parameter_id, on))
            found = latest_finding(findings, item)["value"]
            if not rule.holds(found):
                raise refuse(item, Sentence("the district has %(found)s %(what)s; %(comparison)s %(required)s "
                                            "are required", found=found, what=what,
                                            comparison=rule.comparison_words, required=rule.value),
                             required=rule.value, found=found)
        if not all(f["holds"] for f in findings["art-31-III"].values()):
            raise refuse("art-31-III", "the boundary description (art. 18 par. ún. II) was not found adequate")
        versions.update(judgement.versions)
        versions.update(check_district_law_date(statute, on).versions)
        judge_freeze(municipality, on)
        versions.update(check_name(toponyms, district, "art-32-par-unico", living_person_declaration,
                                   not_existing=ceased))
    if not (isinstance(law, str) and law.strip()):  # the law is recorded before the registry looks at it
        raise InvalidActError("law", "is required: the act cites it")
    municipality.require_existing(on, "art-31")
    judge_freeze(municipality, on)
    existing = {normalise_name(d): d for d in municipality.districts}
    if creation and normalise_name(district) in existing:
        raise refuse("art-32-par-unico", Sentence(
            "%(name)s already has a district named %(existing)s",
            name=municipality.name, existing=existing[normalise_name(district)]))
    if not creation and normalise_name(district) not in existing:
        raise refuse("art-31", Sentence(
            "%(name)s has no district named %(district)s",
            name=municipality.name, district=district))
    return versions


@judges("art-37-par-unico")
def judge_reintegration(shares: dict[str, Any], original: dict[str, Fraction] | None = None,
                        extinct: str | None = None) -> dict[str, str]:
    """Art. 37 par. ún.: the territory returns to its origin(s) in the original proportion (shares add to 1).

    When the registry knows the municipality's origins and their proportion (`original`: it was created by a case
    recorded here), the law's shares must be exactly those, and a law that states none is given them; otherwise
    the law's shares are recorded as it states them. The territory never returns to the extinct municipality."""
    if not shares and original:
        shares = dict(original)
    if not shares:
        raise refuse("art-37-par-unico", "the law states the origin(s) the territory returns to, with shares")
    if extinct is not None and extinct in shares:
        raise refuse("art-37-par-unico", Sentence(
            "the territory of %(extinct)s returns to the municipality or municipalities it came from, not to itself",
            extinct=extinct), municipality=extinct)
    parsed = {code: Fraction(str(value)) for code, value in shares.items()}
    if sum(parsed.values()) != 1 or any(v <= 0 for v in parsed.values()):
        raise refuse("art-37-par-unico", Sentence("the reintegration shares must be positive and add up to 1, "
                                                  "not %(sum)s", sum=str(sum(parsed.values()))))
    if original is not None and parsed != original:
        raise refuse("art-37-par-unico", Sentence(
            "the territory returns to the municipality's origins in their original proportion, %(original)s, not "
            "%(given)s", original=Listing(f"{code}: {share}" for code, share in sorted(original.items())),
            given=Listing(f"{code}: {share}" for code, share in sorted(parsed.items()))),
            original={code: str(share) for code, share in original.items()})
    return {code: str(value) for code, value in parsed.items()}
