"""Judgements of LC 35/1991, as pure functions of the figures and the statute data in force on a date.

Each returns what it decided together with the figures compared and the rule versions used, so that the
event recording the act can store the decision; a refusal raises `LegalRuleError` naming the article. Each that
judges an article is its one judge, registered under the article's id (`domain.judges`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import Any

from domain.acts import refuse, require_date
from domain.errors import InvalidActError, Listing, Sentence, Term
from domain.judges import judges
from domain.names import ToponymList, date_in_name, name_fault
from domain.parameters import Parameter, Statute, share
from domain.voter_title import check_voter_title


@dataclass
class Judgement:
    """What a rule decided, the figures it compared and the rule versions it used."""

    holds: bool
    figures: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    #: Why the rule does not hold, as sentences of the refusals.
    said: list[Sentence] = field(default_factory=list)

    @property
    def reasons(self) -> list[str]:
        """Why the rule does not hold, in English."""
        return [str(reason) for reason in self.said]

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


def _where(label: str, said: Sentence) -> Sentence:
    """`area: ...`: a plebiscite's sentence about one of its populations (the label is a code or "area")."""
    return Sentence("%(label)s: %(said)s", label=label, said=said) if label else said


def whole(value: Any, field_name: str) -> int:
    """A whole, non-negative count (votes, voters, seats) or a clear error naming the field."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(str(value))
        except ValueError:
            raise InvalidActError(field_name, Sentence("%(value)r is not a whole number", value=value)) from None
    if value < 0:
        raise InvalidActError(field_name, Sentence("%(value)s is negative", value=value))
    return value


def amount(value: Any, field_name: str) -> Decimal:
    try:
        result = Decimal(str(value))
    except ArithmeticError:
        raise InvalidActError(field_name, Sentence("%(value)r is not a number", value=value)) from None
    if not result.is_finite() or result < 0:
        raise InvalidActError(field_name, Sentence("%(value)r is not a non-negative number", value=value))
    return result


# ---------------------------------------------------------------------------------------- Art. 8


@judges("art-8", "art-8-par-unico")
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
        for key in ("title", "zone", "section"):
            if not str(signature.get(key, "")).strip():
                raise InvalidActError(f"signatures[{index}].{key}", "is required (Art. 8: zone, section and title)",
                                      article="art-8")
        if signature.get("area") is None or not str(signature["area"]).strip():
            raise InvalidActError(f"signatures[{index}].area", Sentence(
                "is required when the petition's area has two or more parts: Art. 8 par. ún. counts the signatures "
                "of each (%(areas)s)", areas=Listing(areas)), article="art-8-par-unico")
        check = check_voter_title(str(signature["title"]))
        if not check.valid:
            raise refuse("art-8", Sentence("signature %(signature)s: voter title %(title)s is invalid: %(reason)s",
                                          signature=index + 1, title=signature["title"], reason=check.said),
                         signature=index + 1)
        if check.state_code != state_code:
            raise refuse("art-8", Sentence("signature %(signature)s: voter title %(number)s was not issued in Acre "
                                          "(state code %(found)s, %(required)s required)", signature=index + 1,
                                          number=check.number, found=check.state_code, required=state_code),
                         signature=index + 1)
        if check.number in seen:
            raise refuse("art-8", Sentence("signature %(signature)s: voter title %(number)s already signed as "
                                          "signature %(first)s", signature=index + 1, number=check.number,
                                          first=seen[check.number] + 1),
                         signature=index + 1)
        seen[check.number] = index
        if signature["area"] not in per_area:
            raise InvalidActError(f"signatures[{index}].area", Sentence(
                "%(area)r is not one of the petition's areas (%(areas)s)", area=signature["area"],
                areas=Listing(areas)))
        per_area[signature["area"]] += 1
    # Art. 8 par. ún. counts the caput's number in each district or area when the petition spans several.
    article = "art-8-par-unico" if len(per_area) > 1 else minimum.article
    for area, count in per_area.items():
        if not minimum.holds(count):
            raise refuse(article, Sentence("area %(area)s has %(count)s valid signatures; %(comparison)s %(required)s "
                                          "are required per district or area (Art. 8 par. ún.)", area=area,
                                          count=count, comparison=minimum.comparison_words, required=minimum.value),
                         area=area, required=minimum.value, found=count)
    judgement.figures = {"signatures_per_area": per_area}
    return judgement


# ---------------------------------------------------------------------------------------- Art. 13


@judges("art-13")
def judge_plebiscite_result(statute: Statute, on: date, populations: dict[str, Any], *, kind: str | None = None,
                            municipalities: Collection[str] = (), scheduled_for: date | None = None,
                            voted_on: Any = None) -> dict[str, Judgement]:
    """Art. 13: favourable only with turnout above half the registered and YES above half the turnout.

    For the TRE's homologation (`kind` given), the vote falls between the date its resolution fixed and the
    homologation (`on`), and a result is given for each population that votes: the area's, or each merging
    municipality's (Art. 30). Each result gives registered, turnout, yes, no, blank and void; a turnout above the
    registered, or ballots that do not add up to it, are refused. Returns each population's judgement, keyed by
    its label (an empty label says nothing of where), in the order they are judged; `holds` is favourable.
    """
    expected = list(populations)
    if kind is not None:
        if not (scheduled_for <= require_date("voted_on", voted_on) <= on):
            raise InvalidActError("voted_on", Sentence("the vote falls between the scheduled date %(scheduled)s and "
                                                       "the homologation", scheduled=scheduled_for.isoformat()),
                                  article="art-13")
        expected = list(municipalities) if kind == "fusion" else ["area"]
        if sorted(populations) != sorted(expected):
            raise InvalidActError("populations", Sentence(
                "results are given for %(expected)s",
                expected=Listing(expected)), article="art-30" if kind == "fusion" else "art-13")
    judged: dict[str, Judgement] = {}
    for label in expected:
        result = populations[label]
        if not isinstance(result, dict):
            raise InvalidActError(f"populations.{label or 'area'}", "a result gives registered, turnout, yes, no, "
                                  "blank and void")
        registered = whole(result.get("registered"), "registered")
        turnout = whole(result.get("turnout"), "turnout")
        yes, no = whole(result.get("yes"), "yes"), whole(result.get("no"), "no")
        blank, void = whole(result.get("blank", 0), "blank"), whole(result.get("void", 0), "void")
        if registered == 0:
            raise InvalidActError("registered", "no registered voters")
        if turnout > registered:
            raise refuse("art-13", _where(label, Sentence("turnout %(turnout)s exceeds the %(registered)s registered "
                                                          "voters", turnout=turnout, registered=registered)))
        if yes + no + blank + void != turnout:
            raise refuse("art-13", _where(label, Sentence(
                "YES %(yes)s + NO %(no)s + blank %(blank)s + void %(void)s = %(ballots)s ballots, but the turnout is "
                "%(turnout)s", yes=yes, no=no, blank=blank, void=void, ballots=yes + no + blank + void,
                turnout=turnout)))
        judgement = judged[label] = Judgement(holds=True)
        turnout_rule = judgement.use(statute.in_force("art-13.turnout-share-of-registered", on))
        yes_rule = judgement.use(statute.in_force("art-13.yes-share-of-turnout", on))
        turnout_share = Fraction(turnout, registered)
        yes_share = Fraction(yes, turnout) if turnout else Fraction(0)
        judgement.figures = {"registered": registered, "turnout": turnout, "yes": yes, "no": no, "blank": blank,
                             "void": void, "turnout_share": percent(turnout_share), "yes_share": percent(yes_share)}
        if not turnout_rule.holds(turnout_share, share(turnout_rule.value)):
            judgement.holds = False
            judgement.said.append(_where(label, Sentence(
                "turnout %(share)s is not an absolute majority of the %(registered)s registered voters",
                share=percent(turnout_share, share(turnout_rule.value)), registered=registered)))
        if not yes_rule.holds(yes_share, share(yes_rule.value)):
            judgement.holds = False
            judgement.said.append(_where(label, Sentence(
                "YES %(share)s of the %(turnout)s who voted is not a majority (blank and void ballots count in the "
                "turnout)", share=percent(yes_share, share(yes_rule.value)), turnout=turnout)))
    return judged


def judge_plebiscite(statute: Statute, on: date, result: dict[str, Any], label: str = "") -> Judgement:
    """Art. 13 on one population's result: `judge_plebiscite_result`'s judgement of it alone."""
    return judge_plebiscite_result(statute, on, {label: result})[label]


# ---------------------------------------------------------------------------------------- Art. 28-30, 37


@judges("art-28", "art-29", "art-30")
def judge_council(statute: Statute, on: date, article: str, seats: Any, yes: Any) -> Judgement:
    """Art. 28, 29, 30: a council approves by absolute majority of its members (YES above half the seats)."""
    seats, yes = whole(seats, "seats"), whole(yes, "yes_votes")
    if seats == 0:
        raise InvalidActError("seats", "a council has at least one seat")
    if yes > seats:
        raise InvalidActError("yes_votes", Sentence("%(yes)s YES votes exceed the council's %(seats)s seats", yes=yes,
                                                        seats=seats))
    judgement = Judgement(holds=True)
    rule = judgement.use(statute.in_force(f"{article}.council-majority-of-seats", on))
    judgement.holds = rule.holds(Fraction(yes, seats), share(rule.value))
    judgement.figures = {"seats": seats, "yes_votes": yes}
    if not judgement.holds:
        judgement.said.append(Sentence("%(yes)s YES of %(seats)s seats is not an absolute majority of the council's "
                                          "members", yes=yes, seats=seats))
    return judgement


@judges("art-37-II")
def judge_extinction_request(statute: Statute, on: date, valid_signatures: Any, registered: Any) -> Judgement:
    """Art. 37-II: the request of two thirds of the voters resident in the municipality."""
    valid, registered = whole(valid_signatures, "valid_signatures"), whole(registered, "registered_voters")
    if registered == 0:
        raise InvalidActError("registered_voters", "no registered voters")
    if valid > registered:
        raise InvalidActError("valid_signatures", Sentence("%(valid)s valid signatures exceed the %(registered)s "
                                                               "registered voters", valid=valid, registered=registered))
    judgement = Judgement(holds=True)
    rule = judgement.use(statute.in_force("art-37-II.request-share-of-voters", on))
    judgement.holds = rule.holds(Fraction(valid, registered), share(rule.value))
    judgement.figures = {"valid_signatures": valid, "registered_voters": registered,
                         "share": percent(Fraction(valid, registered)), "required_share": rule.value}
    if not judgement.holds:
        judgement.said.append(Sentence(
            "%(valid)s valid signatures are %(share)s of the %(registered)s registered voters; %(comparison)s "
            "%(required)s are required", valid=valid, share=percent(Fraction(valid, registered), share(rule.value)),
            registered=registered, comparison=rule.comparison_words, required=rule.value))
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
        judgement.said.append(Sentence(
            "art-4-I (%(label)s): population %(population)s is not %(comparison)s %(required)s", label=label,
            population=population, comparison=rule.comparison_words, required=rule.value))
    rule = judgement.use(statute.in_force("art-4-II.voters-share-of-population", on))
    verdicts["art-4-II"] = (voters is not None and population not in (None, 0)
                            and rule.holds(Fraction(voters, population), share(rule.value)))
    if voters is not None and population and not verdicts["art-4-II"]:
        judgement.said.append(Sentence(
            "art-4-II (%(label)s): voters %(voters)s are %(share)s of the population %(population)s; %(comparison)s "
            "%(required)s required", label=label, voters=voters,
            share=percent(Fraction(voters, population), share(rule.value)), population=population,
            comparison=rule.comparison_words, required=percent(share(rule.value))))
    rule = judgement.use(statute.in_force("art-4-III.revenue-share-of-state-tax-revenue", on))
    verdicts["art-4-III"] = (revenue is not None and state_tax_revenue is not None
                             and rule.holds(Fraction(revenue), share(rule.value) * Fraction(state_tax_revenue)))
    if revenue is not None and state_tax_revenue is not None and not verdicts["art-4-III"]:
        judgement.said.append(Sentence(
            "art-4-III (%(label)s): revenue %(revenue)s is below %(required)s of the State's tax revenue %(tax)s",
            label=label, revenue=str(revenue), required=rule.value, tax=str(state_tax_revenue)))
    rule = judgement.use(statute.in_force("art-4-IV.buildings", on))
    verdicts["art-4-IV"] = buildings is not None and rule.holds(buildings)
    if buildings is not None and not verdicts["art-4-IV"]:
        judgement.said.append(Sentence(
            "art-4-IV (%(label)s): the urban centre has %(buildings)s buildings; %(comparison)s %(required)s required",
            label=label, buildings=buildings, comparison=rule.comparison_words, required=rule.value))
    return verdicts


# ---------------------------------------------------------------------------------------- Art. 1-I


@judges("art-1-I")
def judge_dispensation(statute: Statute, on: date, kind: str, net_areas: dict[str, Decimal],
                       total_areas: dict[str, Decimal | None], names: dict[str, str]) -> Judgement:
    """Art. 1-I and 1-III: no plebiscite when each municipality's net area ceded is within its bracket.

    Refused, saying each municipality's share and its limit, when one cedes more; the judgement returned holds."""
    judgement = Judgement(holds=True)
    kinds = judgement.use(statute.in_force("art-1-I.dispensable-kinds", on))
    if kind not in kinds.value:
        raise refuse("art-1-I", Sentence("a %(kind)s case always holds a plebiscite; the dispensation applies only to "
                                        "%(kinds)s (product reading, CF art. 18 §4)", kind=Term(kind),
                                        kinds=Listing(Term(k) for k in kinds.value)))
    brackets = judgement.use(statute.in_force("art-1-I.dispensation-brackets", on))
    for code, net in net_areas.items():
        if net <= 0:  # Art. 1-III: a municipality that receives at least what it cedes cedes nothing net
            judgement.figures[code] = {"net_ceded_km2": str(net), "net_share": "0%"}
            continue
        total = total_areas.get(code)
        if total is None or total == 0:
            raise refuse("art-1-I", Sentence("the area of %(name)s is not known in the registry on %(on)s; record it "
                                                "(IBGE) before judging the dispensation", name=names.get(code, code),
                                                on=on.isoformat()), municipality=code)
        bracket = next(b for b in brackets.value if "up_to_km2" not in b or total <= Decimal(b["up_to_km2"]))
        limit = share(bracket["max_net_share"])
        net_share = Fraction(net) / Fraction(total)
        judgement.figures[code] = {"area_km2": str(total), "net_ceded_km2": str(net),
                                   "net_share": percent(net_share, limit), "max_share": percent(limit)}
        if not brackets.holds(net_share, limit):
            judgement.holds = False
            judgement.said.append(
                Sentence("%(name)s cedes a net %(net)s km² of %(total)s km² (%(share)s), more than the %(limit)s "
                         "allowed for its size", name=names.get(code, code), net=str(net), total=str(total),
                         share=percent(net_share, limit), limit=percent(limit)))
    if not judgement.holds:
        raise refuse("art-1-I", Listing(judgement.said, "; "), figures=judgement.figures)
    return judgement


# ---------------------------------------------------------------------------------------- Art. 17, 31-IV, 32


@judges("art-17-par-unico", "art-32-par-unico")
def check_name(toponyms: ToponymList, name: str, article: str, living_person_declaration: bool,
               not_existing: Collection[str] = ()) -> dict[str, str]:
    """Art. 17 par. ún. / Art. 32 par. ún.: not repeating another existing name, not a date, not a living person.

    `not_existing`: the IBGE codes of listed municipalities that are not "outro já existente" on the law's day: those
    that ceased before it, and a fusion's own origins, which cease by the law that names their successor."""
    if not name or not name.strip():
        raise InvalidActError("name", "is required")
    fault = name_fault(name)
    if fault is not None:
        raise InvalidActError("name", fault, article=article)
    repeated = [toponym for toponym in toponyms.same_name(name) if toponym.ibge_code not in not_existing]
    if repeated:
        first = repeated[0]
        raise refuse(article, Sentence("the name %(name)r repeats the existing municipality %(existing)s (%(uf)s)",
                                      name=name, existing=first.name, uf=first.uf),
                     existing=f"{first.name} ({first.uf})")
    date_part = date_in_name(name)
    if date_part:
        raise refuse(article, Sentence("the name %(name)r designates a date (%(date)r)", name=name, date=date_part))
    if not living_person_declaration:
        raise refuse(article, "the signed declaration that the name is not that of a living person is missing")
    return {"toponym-list": toponyms.version}


@judges("art-31-IV")
def check_district_law_date(statute: Statute, on: date) -> Judgement:
    """Art. 31-IV: a district law is dated no later than 31 Dec of the year before the next municipal election."""
    judgement = Judgement(holds=True)
    elections = judgement.use(statute.in_force("art-31-IV.municipal-election-dates", on))
    known_through = elections.extra["known_through"]
    if date(on.year, 12, 31) > known_through:  # an election later in the law's year would decide it
        raise refuse("art-31-IV", Sentence("the municipal-election calendar in the statute data ends on %(through)s; "
                                          "%(year)s cannot be judged until it is extended",
                                          through=known_through.isoformat(), year=str(on.year)))
    # Refused when an election is held on or after the law's day in the law's own year. A law dated after that
    # year's election day looks to the next election, held in a later year, and passes.
    coming = [day for day in elections.value if day.year == on.year and day >= on]
    if coming:
        election = min(coming)
        raise refuse("art-31-IV", Sentence("a district law dated %(day)s comes after the year before the municipal "
                                          "elections of %(election)s; it had to be dated no later than "
                                          "%(last_day)s, or after that election day",
                                          day=on.isoformat(), election=election.isoformat(),
                                          last_day=date(on.year - 1, 12, 31).isoformat()),
                     election=election.isoformat())
    return judgement
