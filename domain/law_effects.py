"""Art. 17, 28, 29, 30, 31, 37: what an enacted law changes in the registry of municipalities.

The case decides (domain/case); this module turns its law into the registry's acts, recorded in the law's own
save: a new municipality with its figures (creation, fusion), figures moved between municipalities
(dismemberment, creation), cessation (incorporation, fusion, extinction) and districts (Art. 31, whose law
`judge_district_law` judged before it is recorded here).
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from typing import Any

from domain.acts import ActContext, ChainedAggregate, refuse
from domain.case import DISTRICT_KINDS, Case
from domain.errors import Sentence
from domain.names import normalise_name
from domain.registry import FIGURES, Figure, Municipality


def law_effects(ctx: ActContext, case: Case, registry: dict[str, Municipality],
                district_origins: dict[str, str] | None = None) -> list[ChainedAggregate]:
    """What the enacted law changes in the registry (new municipality, figures, districts, cessation).

    `district_origins`: for an extinction into several origins, each district the extinct municipality's creation
    took from an origin, and that origin (Art. 37 par. ún.: the territory returns whence it came); the others are
    not carried over (the law's contents do not say where)."""
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
        """`code`'s figures after the move: a known figure moved by an unknown part becomes unknown from the law's
        day (None), never left at its value before the law; an unknown one stays unknown."""
        now = figures_of(code)
        return {name: None if delta.get(name) is None else now[name] + sign * delta[name] for name in FIGURES
                if now.get(name) is not None}

    def districts_leaving(code: str) -> tuple[list[str], list[str]]:
        """`code`'s registry districts that stay and those that leave with the area: each the petition names as a
        part taken from it (`areas[].district`), matched as names are (accents, case and hyphens aside)."""
        names = {normalise_name(a["district"]) for a in case.areas if a["municipality"] == code and a.get("district")}
        current = registry[code].districts
        return ([d for d in current if normalise_name(d) not in names],
                [d for d in current if normalise_name(d) in names])

    def joined(into: str, held: list[str], arriving: list[str]) -> list[str]:
        """`held` with the districts `arriving`, which are no longer a seat where they arrive (a seat's mark,
        "Vila Extrema (sede)", is dropped); a name `into` already has is refused (Art. 32 par. ún.: one
        municipality's districts are named apart), so that no district is duplicated or dropped unseen."""
        arriving = [_without_seat_mark(d) for d in arriving]
        have = {normalise_name(_without_seat_mark(d)) for d in held}
        clash = [d for d in arriving if normalise_name(d) in have]
        if clash:
            name = registry[into].name if into in registry else case.law["name"]  # a fusion's, not registered yet
            raise refuse("art-32-par-unico", Sentence(
                "the district %(district)s would join %(municipality)s, which has a district of that name already; the "
                "law must rename one of them", district=clash[0], municipality=name), district=clash[0])
        return [*held, *arriving]

    def absorb(into: str, whole: str, article: str) -> None:
        """`into` takes the whole of `whole`: its figures added, its districts joined (Art. 29, Art. 37 par. ún.)."""
        registry[into].change_territory(ctx, article=article, case_id=str(case.id), law=law,
                                        figures=shifted(into, figures_of(whole), +1),
                                        districts=joined(into, registry[into].districts, registry[whole].districts))

    if kind in DISTRICT_KINDS:
        registry[case.municipalities[0]].change_district(
            ctx, create=kind == "district_creation", district=case.district, case_id=str(case.id), law=law)
    elif kind == "creation":
        totals: dict[str, Any] = {}
        taken: list[str] = []
        for code in case.municipalities:
            part = moved(code)
            for name, value in part.items():
                totals[name] = None if value is None or totals.get(name, 0) is None else totals.get(name, 0) + value
            staying, leaving = districts_leaving(code)
            taken += leaving
            registry[code].change_territory(ctx, article="art-17", case_id=str(case.id), law=law,
                                            figures=shifted(code, part, -1), districts=staying)
        listed = case.law["contents"]["districts"]  # Art. 17: the law names the new municipality's districts
        named = {normalise_name(_without_seat_mark(d)) for d in listed}
        new = Municipality.register(
            ctx, key=case.new_municipality, name=case.law["name"], article="art-17", created_by_case=case.number,
            figures={n: Figure(v, day, law) for n, v in totals.items() if v is not None},
            districts=[*listed, *(_without_seat_mark(d) for d in taken
                                  if normalise_name(_without_seat_mark(d)) not in named)])
        changed.append(new)
    elif kind == "fusion":
        sums: dict[str, Any] = {}
        for name in FIGURES:
            values = [figures_of(code)[name] for code in case.municipalities]
            if all(v is not None for v in values):
                sums[name] = sum(values)
        # Art. 17 (Art. 39): the law names the new municipality's districts; the origins' districts it does not
        # name come with their territory, one municipality's districts named apart (Art. 32 par. ún.).
        listed = case.law["contents"]["districts"]
        named = {normalise_name(_without_seat_mark(d)) for d in listed}
        arriving = [d for code in case.municipalities for d in registry[code].districts
                    if normalise_name(_without_seat_mark(d)) not in named]
        districts = listed
        for district in arriving:
            districts = joined(case.new_municipality, districts, [district])
        new = Municipality.register(
            ctx, key=case.new_municipality, name=case.law["name"], article="art-17", created_by_case=case.number,
            figures={n: Figure(v, day, law) for n, v in sums.items()}, districts=districts)
        changed.append(new)
        for code in case.municipalities:
            registry[code].cease(ctx, article="art-30", case_id=str(case.id), law=law, into=[case.new_municipality])
    elif kind == "dismemberment":
        ceding, receiving = case.municipalities[0], case.receiving
        part = moved(ceding)
        part["area_km2"] = case._net_areas()[ceding]  # Art. 1-III: ceded less any parcel received in exchange
        staying, leaving = districts_leaving(ceding)  # Art. 28: an area, a territory or a district
        arrived = joined(receiving, registry[receiving].districts, leaving)
        registry[ceding].change_territory(ctx, article="art-28", case_id=str(case.id), law=law,
                                          figures=shifted(ceding, part, -1), districts=staying)
        registry[receiving].change_territory(ctx, article="art-28", case_id=str(case.id), law=law,
                                             figures=shifted(receiving, part, +1), districts=arrived)
    elif kind == "incorporation":
        incorporated, receiving = case.municipalities[0], case.receiving
        absorb(receiving, incorporated, "art-29")
        registry[incorporated].cease(ctx, article="art-29", case_id=str(case.id), law=law, into=[receiving])
    elif kind == "extinction":
        extinct = case.municipalities[0]
        shares = case.law["contents"]["reintegration"]
        if len(shares) == 1:  # the whole municipality returns to its one origin: its figures and districts too
            absorb(next(iter(shares)), extinct, "art-37-par-unico")
        else:  # the area by the law's shares; how the rest divides the law does not say (unknown, not invented)
            area = figures_of(extinct).get("area_km2")
            returning = {normalise_name(d): origin for d, origin in (district_origins or {}).items()}
            for code, share_text in shares.items():
                share = Fraction(share_text)
                gained = {"area_km2": None if area is None else
                          (Decimal(share.numerator) * area / Decimal(share.denominator)).quantize(Decimal("0.001"))}
                back = [d for d in registry[extinct].districts if returning.get(normalise_name(d)) == code]
                registry[code].change_territory(ctx, article="art-37-par-unico", case_id=str(case.id), law=law,
                                                figures=shifted(code, gained, +1),
                                                districts=joined(code, registry[code].districts, back))
        registry[extinct].cease(ctx, article="art-37", case_id=str(case.id), law=law, into=list(shares))
    return changed


def _without_seat_mark(district: str) -> str:
    """A district's name without the mark a law may add to the seat's ("Vila Extrema (sede)"), for comparing."""
    return re.sub(r"\s*\((?i:sede)\)\s*$", "", district)
