"""Judgements of LC 35/1991, as pure functions of the figures and the statute data in force on a date.

Each returns what it decided together with the figures compared and the rule versions used, so that the
event recording the act can store the decision; a refusal raises `LegalRuleError` naming the article.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import Any

from domain.acts import refuse
from domain.errors import InvalidActError
from domain.names import ToponymList, date_in_name
from domain.parameters import Parameter, Statute, share
from domain.voter_title import check_voter_title


@dataclass
class Judgement:
    """What a rule decided, the figures it compared and the rule versions it used."""

    holds: bool
    figures: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)

    def use(self, parameter: Parameter) -> Parameter:
        self.versions[parameter.id] = parameter.version
        return parameter


def percent(value: Fraction, against: Fraction | None = None) -> str:
    """A share as a percentage with two decimals, or more when needed to tell it apart from `against`.

    A refusal compares a found share with a required one: the two never print alike when they differ.
    """
    value = Fraction(value)
    for places in range(2, 9):
        text = f"{float(value * 100):.{places}f}%"
        if against is None or value == against or text != f"{float(Fraction(against) * 100):.{places}f}%":
            return text
    return text


def whole(value: Any, field_name: str) -> int:
    """A whole, non-negative count (votes, voters, seats) or a clear error naming the field."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(str(value))
        except ValueError:
            raise InvalidActError(field_name, f"{value!r} is not a whole number") from None
    if value < 0:
        raise InvalidActError(field_name, f"{value} is negative")
    return value


def amount(value: Any, field_name: str) -> Decimal:
    try:
        result = Decimal(str(value))
    except ArithmeticError:
        raise InvalidActError(field_name, f"{value!r} is not a number") from None
    if not result.is_finite() or result < 0:
        raise InvalidActError(field_name, f"{value!r} is not a non-negative number")
    return result


# ---------------------------------------------------------------------------------------- Art. 8


def check_signatures(statute: Statute, on: date, signatures: list[dict[str, Any]], areas: list[str]) -> Judgement:
    """Art. 8: at least the statutory number of voters' signatures per area, valid Acre titles, no duplicates."""
    judgement = Judgement(holds=True)
    minimum = judgement.use(statute.in_force("art-8.signatures-per-area", on))
    state_code = judgement.use(statute.in_force("art-8.voter-title-state-code", on)).value
    seen: dict[str, int] = {}
    per_area = {area: 0 for area in areas}
    for index, signature in enumerate(signatures):
        if not isinstance(signature, dict):
            raise InvalidActError(f"signatures[{index}]", "a signature gives title, zone, section and area")
        for key in ("title", "zone", "section", "area"):
            if not str(signature.get(key, "")).strip():
                raise InvalidActError(f"signatures[{index}].{key}", "is required (Art. 8: zone, section and title)")
        check = check_voter_title(str(signature["title"]))
        if not check.valid:
            raise refuse("art-8", f"signature {index + 1}: voter title {signature['title']} is invalid: {check.reason}",
                         signature=index + 1)
        if check.state_code != state_code:
            raise refuse("art-8", f"signature {index + 1}: voter title {check.number} was not issued in Acre "
                         f"(state code {check.state_code}, {state_code} required)", signature=index + 1)
        if check.number in seen:
            raise refuse("art-8", f"signature {index + 1}: voter title {check.number} already signed "
                         f"as signature {seen[check.number] + 1}", signature=index + 1)
        seen[check.number] = index
        if signature["area"] not in per_area:
            raise InvalidActError(f"signatures[{index}].area", f"{signature['area']!r} is not one of the petition's "
                                  f"areas ({', '.join(areas)})")
        per_area[signature["area"]] += 1
    # Art. 8 par. ún. counts the caput's number in each district or area when the petition spans several.
    article = "art-8-par-unico" if len(per_area) > 1 else minimum.article
    for area, count in per_area.items():
        if not minimum.holds(count):
            raise refuse(article, f"area {area} has {count} valid signatures; {minimum.comparison_words} "
                         f"{minimum.value} are required per district or area (Art. 8 par. ún.)",
                         area=area, required=minimum.value, found=count)
    judgement.figures = {"signatures_per_area": per_area}
    return judgement


# ---------------------------------------------------------------------------------------- Art. 13


def judge_plebiscite(statute: Statute, on: date, result: dict[str, Any], label: str = "") -> Judgement:
    """Art. 13: favourable only with turnout above half the registered and YES above half the turnout."""
    if not isinstance(result, dict):
        raise InvalidActError(f"populations.{label or 'area'}", "a result gives registered, turnout, yes, no, "
                              "blank and void")
    registered = whole(result.get("registered"), "registered")
    turnout = whole(result.get("turnout"), "turnout")
    yes, no = whole(result.get("yes"), "yes"), whole(result.get("no"), "no")
    blank, void = whole(result.get("blank", 0), "blank"), whole(result.get("void", 0), "void")
    where = f"{label}: " if label else ""
    if registered == 0:
        raise InvalidActError("registered", "no registered voters")
    if turnout > registered:
        raise refuse("art-13", f"{where}turnout {turnout:,} exceeds the {registered:,} registered voters")
    if yes + no + blank + void != turnout:
        raise refuse("art-13", f"{where}YES {yes:,} + NO {no:,} + blank {blank:,} + void {void:,} = "
                     f"{yes + no + blank + void:,} ballots, but the turnout is {turnout:,}")
    judgement = Judgement(holds=True)
    turnout_rule = judgement.use(statute.in_force("art-13.turnout-share-of-registered", on))
    yes_rule = judgement.use(statute.in_force("art-13.yes-share-of-turnout", on))
    turnout_share = Fraction(turnout, registered)
    yes_share = Fraction(yes, turnout) if turnout else Fraction(0)
    judgement.figures = {"registered": registered, "turnout": turnout, "yes": yes, "no": no, "blank": blank,
                         "void": void, "turnout_share": percent(turnout_share), "yes_share": percent(yes_share)}
    if not turnout_rule.holds(turnout_share, share(turnout_rule.value)):
        judgement.holds = False
        judgement.reasons.append(f"{where}turnout {percent(turnout_share, share(turnout_rule.value))} is not an absolute majority of the "
                                 f"{registered:,} registered voters")
    if not yes_rule.holds(yes_share, share(yes_rule.value)):
        judgement.holds = False
        judgement.reasons.append(f"{where}YES {percent(yes_share, share(yes_rule.value))} of the {turnout:,} who voted is not a majority "
                                 f"(blank and void ballots count in the turnout)")
    return judgement


# ---------------------------------------------------------------------------------------- Art. 28-30, 37


def judge_council(statute: Statute, on: date, article: str, seats: Any, yes: Any) -> Judgement:
    """Art. 28, 29, 30: a council approves by absolute majority of its members (YES above half the seats)."""
    seats, yes = whole(seats, "seats"), whole(yes, "yes_votes")
    if seats == 0:
        raise InvalidActError("seats", "a council has at least one seat")
    if yes > seats:
        raise InvalidActError("yes_votes", f"{yes} YES votes exceed the council's {seats} seats")
    judgement = Judgement(holds=True)
    rule = judgement.use(statute.in_force(f"{article}.council-majority-of-seats", on))
    judgement.holds = rule.holds(Fraction(yes, seats), share(rule.value))
    judgement.figures = {"seats": seats, "yes_votes": yes}
    if not judgement.holds:
        judgement.reasons.append(f"{yes} YES of {seats} seats is not an absolute majority of the council's members")
    return judgement


def judge_extinction_request(statute: Statute, on: date, valid_signatures: Any, registered: Any) -> Judgement:
    """Art. 37-II: the request of two thirds of the voters resident in the municipality."""
    valid, registered = whole(valid_signatures, "valid_signatures"), whole(registered, "registered_voters")
    if registered == 0:
        raise InvalidActError("registered_voters", "no registered voters")
    if valid > registered:
        raise InvalidActError("valid_signatures", f"{valid:,} valid signatures exceed the {registered:,} "
                              f"registered voters")
    judgement = Judgement(holds=True)
    rule = judgement.use(statute.in_force("art-37-II.request-share-of-voters", on))
    judgement.holds = rule.holds(Fraction(valid, registered), share(rule.value))
    judgement.figures = {"valid_signatures": valid, "registered_voters": registered,
                         "share": percent(Fraction(valid, registered)), "required_share": rule.value}
    if not judgement.holds:
        judgement.reasons.append(f"{valid:,} valid signatures are "
                                 f"{percent(Fraction(valid, registered), share(rule.value))} of the "
                                 f"{registered:,} registered voters; {rule.comparison_words} {rule.value} are required")
    return judgement


# ---------------------------------------------------------------------------------------- Art. 4 and 5

ART_4_ITEMS = ("art-4-I", "art-4-II", "art-4-III", "art-4-IV", "art-4-V", "art-4-VI")
ART_4_FIGURES = {"art-4-I": "population", "art-4-II": "voters", "art-4-III": "revenue", "art-4-IV": "buildings"}


def judge_figures(statute: Statute, on: date, figures: dict[str, Any], state_tax_revenue: Decimal | None,
                  judgement: Judgement, label: str) -> dict[str, bool]:
    """Art. 4 I-IV on one set of figures (population, voters, revenue, buildings); None = unknown."""
    verdicts: dict[str, bool] = {}
    population, voters = figures.get("population"), figures.get("voters")
    revenue, buildings = figures.get("revenue"), figures.get("buildings")
    rule = judgement.use(statute.in_force("art-4-I.population", on))
    verdicts["art-4-I"] = population is not None and rule.holds(population)
    if population is not None and not verdicts["art-4-I"]:
        judgement.reasons.append(f"art-4-I: {label} population {population:,} is not {rule.comparison_words} {rule.value:,}")
    rule = judgement.use(statute.in_force("art-4-II.voters-share-of-population", on))
    verdicts["art-4-II"] = (voters is not None and population not in (None, 0)
                            and rule.holds(Fraction(voters, population), share(rule.value)))
    if voters is not None and population and not verdicts["art-4-II"]:
        judgement.reasons.append(f"art-4-II: {label} voters {voters:,} are "
                                 f"{percent(Fraction(voters, population), share(rule.value))} "
                                 f"of the population {population:,}; {rule.comparison_words} {percent(share(rule.value))} required")
    rule = judgement.use(statute.in_force("art-4-III.revenue-share-of-state-tax-revenue", on))
    verdicts["art-4-III"] = (revenue is not None and state_tax_revenue is not None
                             and rule.holds(Fraction(revenue), share(rule.value) * Fraction(state_tax_revenue)))
    if revenue is not None and state_tax_revenue is not None and not verdicts["art-4-III"]:
        judgement.reasons.append(f"art-4-III: {label} revenue {revenue} is below {rule.value} of the State's tax "
                                 f"revenue {state_tax_revenue}")
    rule = judgement.use(statute.in_force("art-4-IV.buildings", on))
    verdicts["art-4-IV"] = buildings is not None and rule.holds(buildings)
    if buildings is not None and not verdicts["art-4-IV"]:
        judgement.reasons.append(f"art-4-IV: {label} urban centre has {buildings} buildings; "
                                 f"{rule.comparison_words} {rule.value} required")
    return verdicts


# ---------------------------------------------------------------------------------------- Art. 1-I


def judge_dispensation(statute: Statute, on: date, kind: str, net_areas: dict[str, Decimal],
                       total_areas: dict[str, Decimal | None], names: dict[str, str]) -> Judgement:
    """Art. 1-I and 1-III: no plebiscite when each municipality's net area ceded is within its bracket."""
    judgement = Judgement(holds=True)
    kinds = judgement.use(statute.in_force("art-1-I.dispensable-kinds", on))
    if kind not in kinds.value:
        raise refuse("art-1-I", f"a {kind} case always holds a plebiscite; the dispensation applies only to "
                     f"{', '.join(kinds.value)} (product reading, CF art. 18 §4)")
    brackets = judgement.use(statute.in_force("art-1-I.dispensation-brackets", on))
    for code, net in net_areas.items():
        if net <= 0:  # Art. 1-III: a municipality that receives at least what it cedes cedes nothing net
            judgement.figures[code] = {"net_ceded_km2": str(net), "net_share": "0%"}
            continue
        total = total_areas.get(code)
        if total is None or total == 0:
            raise refuse("art-1-I", f"the area of {names.get(code, code)} is not known in the registry on "
                         f"{on.isoformat()}; record it (IBGE) before judging the dispensation", municipality=code)
        bracket = next(b for b in brackets.value if "up_to_km2" not in b or total <= Decimal(b["up_to_km2"]))
        limit = share(bracket["max_net_share"])
        net_share = Fraction(net) / Fraction(total)
        judgement.figures[code] = {"area_km2": str(total), "net_ceded_km2": str(net),
                                   "net_share": percent(net_share, limit), "max_share": percent(limit)}
        if not brackets.holds(net_share, limit):
            judgement.holds = False
            judgement.reasons.append(
                f"{names.get(code, code)} cedes a net {net} km² of {total} km² ({percent(net_share, limit)}), more than "
                f"the {percent(limit)} allowed for its size")
    return judgement


# ---------------------------------------------------------------------------------------- Art. 17, 31-IV, 32


def check_name(toponyms: ToponymList, name: str, article: str, living_person_declaration: bool) -> dict[str, str]:
    """Art. 17 par. ún. / Art. 32 par. ún.: not repeating an existing name, not a date, not a living person."""
    if not name or not name.strip():
        raise InvalidActError("name", "is required")
    repeated = toponyms.same_name(name)
    if repeated:
        first = repeated[0]
        raise refuse(article, f"the name {name!r} repeats the existing municipality {first.name} ({first.uf})",
                     existing=f"{first.name} ({first.uf})")
    date_part = date_in_name(name)
    if date_part:
        raise refuse(article, f"the name {name!r} designates a date ({date_part!r})")
    if not living_person_declaration:
        raise refuse(article, "the signed declaration that the name is not that of a living person is missing")
    return {"toponym-list": toponyms.version}


def check_district_law_date(statute: Statute, on: date) -> Judgement:
    """Art. 31-IV: a district is created only by a law dated no later than 31 Dec before an election year."""
    judgement = Judgement(holds=True)
    elections = judgement.use(statute.in_force("art-31-IV.municipal-election-dates", on))
    known_through = elections.extra["known_through"]
    if on > known_through:
        raise refuse("art-31-IV", f"the municipal-election calendar in the statute data ends on "
                     f"{known_through.isoformat()}; {on.year} cannot be judged until it is extended")
    election_years = {day.year: day for day in elections.value}
    if on.year in election_years:
        raise refuse("art-31-IV", f"a district cannot be created in {on.year}: municipal elections are held on "
                     f"{election_years[on.year].isoformat()}; the law had to be dated no later than "
                     f"{on.year - 1}-12-31", election=election_years[on.year].isoformat())
    return judgement
