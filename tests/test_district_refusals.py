"""Every refusal a district case can meet (LC 35/1991 arts. 16 par. ún., 31, 32, 38 and 40), walked through the HTTP
API, and the article each one cites checked against our reading of the law (docs/law/).

What is walked is derived from the data wherever the data says it:
- the order of acts, from `lifecycle.district_creation` and `lifecycle.district_suppression`
  (domain/statute/lifecycles.toml): for every step, each act it follows, each act that closes it, each condition
  it needs (for the findings, each finding of the competence table left out), its `once`, the archive that ends
  the case, and every act of the API that is no step of the kind (excluded or not an act of it);
- who records each act, from the competence tables (`competence.act`, `competence.finding`): every body they do
  not name for it, and for an act of the municipality, the same body of another municipality;
- the legal date of every step (before the case's previous act, after today) and of the opening (before LC 35/1991).
What each act judges itself (Art. 31 par. ún. I-IV, Art. 32 par. ún., Art. 38, the registry's districts, Art. 40's
checklist) is listed here, with the thresholds and dates read from the statute data.

The expected article of each refusal comes from READINGS, whose every entry cites the section of docs/law/ that
states the reading; a test checks that each section exists, and another that every entry is walked. A refusal the
data gives that READINGS does not read fails, so a new step is walked, and read, before it passes.

Dates are pinned: the harness's clock is 2026-11-30 unless a test gives it another moment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from api.acts import ACTS
from domain.access import MUNICIPAL_ROLES, READ_ONLY_ROLES, bodies_competent_for, competent_roles
from domain.acts import Actor
from domain.case import BOOLEAN_ITEMS, DISTRICT_KINDS, FINDING_ITEMS, PREFECT_BILLS
from domain.demo import FEIJO, TARAUACA
from domain.errors import IncompetentBodyError
from domain.lifecycle import Lifecycle, act_catalogue, lifecycle_of
from domain.parameters import shipped_statute
from domain.rules import ART_4_ITEMS
from tests.api_client import ApiHarness, Clock
from tests.stores import NOW
from tests.test_docs import anchors

REPO = Path(__file__).resolve().parent.parent
STATUTE = shipped_statute()
JORDAO = "1200328"
OPENED = date(2026, 3, 2)
DISTRICT = "Vila Jurupari"
DAY = timedelta(days=1)
#: The statute parameter each numeric finding of a district's creation is judged against (Art. 31 par. ún. I, II).
FIGURES = {"art-31-I": "art-31-I.buildings", "art-31-II": "art-31-II.population"}
LAW = {"law": "Lei Municipal 101/2026", "living_person_declaration": True}


# ============================================================================== our reading of the law


@dataclass(frozen=True)
class Reading:
    """The article a refusal cites under our reading (None: the act is malformed, and the refusal names `field`),
    and the section of docs/law/ that states it."""

    article: str | None
    source: str
    field: str | None = None


ADMITTED = "docs/law/lifecycles.md#how-an-act-is-admitted"
DECIDED = "docs/law/lifecycles.md#readings-decided-here"
THE_ACTS = "docs/law/lifecycles.md#the-acts"
DISTRICT_LIFECYCLES = "docs/law/lifecycles.md#district-creation-and-suppression"
ART_31 = "docs/law/districts-and-extinction.md#art-31-districts"
ART_31_IV = "docs/law/districts-and-extinction.md#art-31-iv-election-years"
WHO = "docs/law/README.md#who-records-each-act"
NAME = "docs/law/law-and-installation.md#art-17-par-ún-the-name"
ART_38 = "docs/law/opening.md#art-38-the-freeze"
ART_40 = "docs/law/law-and-installation.md#art-40-communications"
ARCHIVE = "docs/law/lifecycles.md#creation"
LEGAL_DATE = "docs/law/deadlines.md#the-legal-date-not-the-typing-date"

READINGS: dict[str, Reading] = {
    # ---- the order of acts (lifecycles.toml), refused with ActOutOfOrderError
    "finding-recorded after district-law-enacted": Reading("art-31", DECIDED),
    "district-case-archived after district-law-enacted": Reading("art-31", DECIDED),
    "district-law-enacted a second time": Reading("art-31", ADMITTED),
    "district-communication-sent before district-law-enacted": Reading("art-40", ART_40),
    "district-law-enacted without the art-31-I finding of the ibge": Reading("art-32", ART_31),
    "district-law-enacted without the art-31-II finding of the ibge": Reading("art-32", ART_31),
    "district-law-enacted without the art-31-III finding of the pge": Reading("art-32", ART_31),
    "district-law-enacted without the art-31-III finding of the sectma": Reading("art-32", ART_31),
    "district-communication-sent once every Art. 40 communication was sent": Reading("art-40", ART_40),
    "finding-recorded after district-case-archived ended the case": Reading("art-32", ADMITTED),
    "district-case-archived after district-case-archived ended the case": Reading("art-16-par-unico", ADMITTED),
    "district-law-enacted after district-case-archived ended the case": Reading("art-31", ADMITTED),
    "district-communication-sent after district-case-archived ended the case": Reading("art-40", ADMITTED),
    "finding-recorded, which the kind excludes": Reading("art-32", DISTRICT_LIFECYCLES),
    # an act of the API that no district lifecycle orders cites its own article (the catalogue's)
    "requisition-issued is not an act of the kind": Reading("art-10", THE_ACTS),
    "requisition-received is not an act of the kind": Reading("art-10", THE_ACTS),
    "requisition-refused is not an act of the kind": Reading("art-10", THE_ACTS),
    "requirements-verified is not an act of the kind": Reading("art-4", THE_ACTS),
    "council-decree-recorded is not an act of the kind": Reading("art-28", THE_ACTS),
    "plebiscite-dispensed is not an act of the kind": Reading("art-1-I", THE_ACTS),
    "plebiscite-decreed is not an act of the kind": Reading("art-11", THE_ACTS),
    "plebiscite-scheduled is not an act of the kind": Reading("art-12", THE_ACTS),
    "plebiscite-result-homologated is not an act of the kind": Reading("art-13", THE_ACTS),
    "result-communicated is not an act of the kind": Reading("art-14", THE_ACTS),
    "result-registered-in-plenary is not an act of the kind": Reading("art-15", THE_ACTS),
    "creation-bill-drafted is not an act of the kind": Reading("art-16", THE_ACTS),
    "request-signatures-certified is not an act of the kind": Reading("art-37-II", THE_ACTS),
    "administrator-list-sent is not an act of the kind": Reading("art-20", THE_ACTS),
    "administrator-appointed is not an act of the kind": Reading("art-20", THE_ACTS),
    "municipality-installed is not an act of the kind": Reading("art-19", THE_ACTS),
    "ledger-transferred is not an act of the kind": Reading("art-22-par-unico", THE_ACTS),
    "personnel-documents-sent is not an act of the kind": Reading("art-26-par-unico", THE_ACTS),
    "prefect-bill-submitted is not an act of the kind": Reading("art-23", THE_ACTS),
    "organic-law-promulgated is not an act of the kind": Reading("art-24", THE_ACTS),
    "remuneration-fixed is not an act of the kind": Reading("art-25", THE_ACTS),
    "district-communication-sent is not an act of the kind": Reading("art-40", DISTRICT_LIFECYCLES),
    # ---- who records each act, refused with IncompetentBodyError
    "district-petition-filed recorded by a body the law does not name": Reading("art-31", ART_31),
    "district-petition-filed recorded by a municipal body of another municipality": Reading("art-31", ART_31),
    "district-law-enacted recorded by a body the law does not name": Reading("art-31", ART_31),
    "district-law-enacted recorded by a municipal body of another municipality": Reading("art-31", ART_31),
    "district-case-archived recorded by a body the law does not name": Reading("art-16-par-unico", ARCHIVE),
    "district-case-archived recorded by a municipal body of another municipality":
        Reading("art-16-par-unico", ARCHIVE),
    "district-communication-sent recorded by a body the law does not name": Reading("art-40", ART_40),
    "district-communication-sent recorded by a municipal body of another municipality": Reading("art-40", ART_40),
    "the art-31-I finding recorded by a body Art. 32 does not name": Reading("art-32", WHO),
    "the art-31-II finding recorded by a body Art. 32 does not name": Reading("art-32", WHO),
    "the art-31-III finding recorded by a body Art. 32 does not name": Reading("art-32", WHO),
    # ---- what the district law judges (Art. 31 par. ún., 32 par. ún., 38) and the registry's districts
    "a district with fewer buildings than Art. 31-I requires": Reading("art-31-I", ART_31),
    "a district with no more inhabitants than Art. 31-II requires": Reading("art-31-II", ART_31),
    "a boundary description found inadequate": Reading("art-31-III", ART_31),
    "a district law dated in a municipal-election year": Reading("art-31-IV", ART_31_IV),
    "a district law dated beyond the known election calendar": Reading("art-31-IV", ART_31_IV),
    "a district named as a municipality of Brazil": Reading("art-32-par-unico", NAME),
    "a district named after a date": Reading("art-32-par-unico", NAME),
    "a district law without the declaration that the name is not a living person's":
        Reading("art-32-par-unico", NAME),
    "a district named as another district of the municipality": Reading("art-32-par-unico", ART_31),
    "a district law while a case freezes the municipality": Reading("art-38", ART_38),
    "the suppression of a district the municipality no longer has": Reading("art-31", ART_31),
    "a district law of a municipality that ceased to exist": Reading("art-31", ART_31),
    "a district case opened for a municipality that ceased to exist": Reading("art-31", ART_31),
    "the same Art. 40 communication sent twice": Reading("art-40", ART_40),
    "a district case opened before LC 35/1991 was in force": Reading("art-31", DISTRICT_LIFECYCLES),
    # ---- malformed acts: no article, the field at fault
    "an act dated before the case's previous act": Reading(None, LEGAL_DATE, "occurred_on"),
    "an act dated after today": Reading(None, LEGAL_DATE, "occurred_on"),
    "a district case naming two municipalities": Reading(None, ART_31, "district"),
    "a district case naming no district": Reading(None, ART_31, "district"),
    "the suppression of a district the registry does not have": Reading(None, ART_31, "district"),
    "a finding of an item that is not a district's": Reading(None, ART_31, "item"),
    "an art-31-III finding that is neither yes nor no": Reading(None, ART_31, "value"),
    "a communication to a recipient Art. 40 does not name": Reading("art-40", ART_40, "recipient"),
}

#: Every reading a walk of this module asked for (checked to cover READINGS once the module has run).
WALKED: set[str] = set()


def reading(key: str) -> Reading:
    WALKED.add(key)
    assert key in READINGS, f"no reading for the refusal {key!r}: add it to READINGS, citing docs/law/"
    return READINGS[key]


@pytest.mark.parametrize("key", sorted(READINGS))
def test_each_reading_cites_a_section_of_docs_law_that_exists(key):
    path, _, anchor = READINGS[key].source.partition("#")
    assert path.startswith("docs/law/") and (REPO / path).is_file(), READINGS[key].source
    assert anchor in anchors(REPO / path), f"no heading #{anchor} in {path}"


# ============================================================================== the data the walks are derived from


def lifecycle(kind: str) -> Lifecycle:
    return lifecycle_of(STATUTE, kind, OPENED)


def competence(table: str) -> dict[str, list[str]]:
    return STATUTE.value(table, OPENED)


def required_findings(kind: str) -> list[tuple[str, str]]:
    """(item, body) for every finding a district's creation needs: each item by each body the table names."""
    table = competence("competence.finding")
    return [(item, body) for item in FINDING_ITEMS.get(kind, ()) for body in table[item]]


def threshold(item: str) -> tuple[int, int]:
    """The largest figure refused and the smallest admitted by the item's statute parameter."""
    rule = STATUTE.in_force(FIGURES[item], OPENED)
    refused = rule.value if not rule.holds(rule.value) else rule.value - 1
    return refused, refused + 1


def http_name(act: str) -> str:
    """The API's name of a catalogue act (`district-law-enacted` is recorded as `law-enacted`)."""
    return act.removeprefix("district-")


def method_of(name: str) -> str:
    return next(a.method for a in ACTS if a.name == name)


def api_acts_on_a_district_case() -> dict[str, str]:
    """The catalogue act each act of the API records on a district case -> its API name."""
    catalogue = act_catalogue(STATUTE, OPENED)
    return {(f"district-{a.name}" if f"district-{a.name}" in catalogue else a.name): a.name for a in ACTS}


#: The acts of the lifecycle each named condition needs recorded for it to hold (a new condition needs its entry).
CONDITION_MET: dict[str, tuple[str, ...]] = {"art-31-findings-complete": ("finding-recorded",),
                                             "art-40-communication-due": ()}


def prerequisites(kind: str, act: str) -> list[str]:
    """The acts recorded, in order, before `act` may be: those it follows, and those its conditions need."""
    lc, found = lifecycle(kind), []
    step = lc.step(act)
    needed = [a for name in step.when for a in CONDITION_MET[name]]
    for before in (*step.after, *step.after_any[:1], *needed):
        if before == lc.opening.act:
            continue
        for each in (*prerequisites(kind, before), before):
            if each not in found:
                found.append(each)
    return found


# ============================================================================== a district case over HTTP


@pytest.fixture
def harness(tmp_path) -> Iterator[Callable[..., ApiHarness]]:
    """`harness(now=NOW)`: a fresh API on its own SQLite file, its clock pinned at `now`."""
    made: list[ApiHarness] = []

    def make(now: datetime = NOW) -> ApiHarness:
        made.append(ApiHarness(f"sqlite:///{tmp_path / f'api-{len(made)}.sqlite'}", clock=Clock(now)))
        return made[-1]

    yield make
    for api in made:
        api.close()


@pytest.fixture
def api(harness) -> ApiHarness:
    return harness()


def whose(role: str, code: str) -> str | None:
    return code if role in MUNICIPAL_ROLES else None


def post(api: ApiHarness, case: str, name: str, role: str, on: date, municipality: str | None = None, /,
         **body: Any):  # noqa: ANN201
    return api.client.post(f"/cases/{case}/acts/{name}", json={"occurred_on": on.isoformat(), **body},
                           headers=api.headers(role, municipality, **{"If-Match": api.etag(case)}))


def petition(api: ApiHarness, role: str, on: date, code: str = FEIJO, **body: Any):  # noqa: ANN201
    payload = {"occurred_on": on.isoformat(), "kind": "district_creation", "municipalities": [code],
               "district": DISTRICT, **body}
    return api.client.post("/cases", json=payload, headers=api.headers(role, whose(role, code)))


def problem_of(api: ApiHarness, send: Callable[[], Any], role: str, municipality: str | None = None) -> dict:
    """Send a request that must be refused: its problem document, with nothing recorded."""
    api.token(role, municipality)  # issuing a token is itself an event: the actor's, and the auditor's that reads
    api.token("auditor")            # the case's ETag, are issued before counting
    before = api.notifications()
    response = send()
    assert response.status_code >= 400 and response.mimetype == "application/problem+json", response.get_json()
    assert api.notifications() == before, "a refused act recorded something"
    return response.get_json()


def assert_reads(problem: dict, key: str) -> None:
    expected = reading(key)
    assert problem.get("article") == expected.article, problem
    if expected.field is not None:
        assert problem.get("field") == expected.field, problem


class District:
    """A district case recorded through the HTTP API, each act one day after the one before."""

    def __init__(self, api: ApiHarness, kind: str, *, code: str = FEIJO, name: str = DISTRICT,
                 opened: date = OPENED, create_first: bool = True) -> None:
        self.api, self.kind, self.code, self.name = api, kind, code, name
        if kind == "district_suppression" and create_first:  # the district to suppress is created by its own case
            created = District(api, "district_creation", code=code, name=name, opened=opened - 30 * DAY)
            created.reach("district-law-enacted")
        role = competence("competence.act")[lifecycle(kind).opening.act][0]
        response = api.client.post("/cases", headers=api.headers(role, code), json={
            "occurred_on": opened.isoformat(), "kind": kind, "municipalities": [code], "district": name})
        assert response.status_code == 201, response.get_json()
        self.case, self.on = response.get_json()["case_id"], opened

    def next_day(self) -> date:
        self.on += DAY
        return self.on

    def attempt(self, act: str, *, item: tuple[str, str] | None = None,
                value: Any = None) -> tuple[str, str, str | None, dict[str, Any]]:
        """An act of the case as the API takes it: (API name, competent role, its municipality, body)."""
        if act in ABSENT_ATTEMPTS:
            role, body = ABSENT_ATTEMPTS[act]
            return act, role, whose(role, self.code), dict(body)
        if act == "finding-recorded":
            item_id, finder = item or required_findings("district_creation")[0]
            if value is None:
                value = True if item_id in BOOLEAN_ITEMS else threshold(item_id)[1]
            return "finding-recorded", finder, None, {"item": item_id, "value": value,
                                                      "document": f"Laudo {item_id} ({finder})"}
        role = competence("competence.act")[act][0]
        body = {"district-law-enacted": LAW,
                "district-case-archived": {"reason": "desistência do Município"},
                "district-communication-sent": self.communication(0)}[act]
        return http_name(act), role, whose(role, self.code), dict(body)

    def communication(self, n: int) -> dict[str, str]:
        """The n-th communication of Art. 40's checklist for a district (its creation, to each recipient)."""
        recipients = STATUTE.value("art-40.recipients", OPENED)
        subject = STATUTE.value("art-40.communicated-acts", OPENED)[0]
        recipient = recipients[n].replace("origin-municipality", f"origin-municipality:{self.code}")
        return {"subject": subject, "recipient": recipient, "document": f"Ofício {n + 1}/2026"}

    def record(self, act: str, *, omit: tuple[str, str] | None = None, on: date | None = None) -> None:
        """Record `act` as its competent body would (a finding: every finding the creation needs, but `omit`)."""
        if act == "finding-recorded":
            on = on or self.next_day()
            for item in required_findings(self.kind):
                if item != omit:
                    name, role, _, body = self.attempt(act, item=item)
                    self.api.act(self.case, name, role, on, **body)
            return
        name, role, municipality, body = self.attempt(act)
        self.api.act(self.case, name, role, on or self.next_day(), municipality, **body)

    def reach(self, act: str, *, omit: tuple[str, str] | None = None) -> None:
        """Record every act `act` needs first, then `act`."""
        for before in prerequisites(self.kind, act):
            self.record(before, omit=omit)
        self.record(act, omit=omit)

    def send_every_communication(self) -> None:
        name, role, municipality, _ = self.attempt("district-communication-sent")
        for n in range(len(STATUTE.value("art-40.recipients", OPENED))):
            self.api.act(self.case, name, role, self.next_day(), municipality, **self.communication(n))

    def refused(self, act: str, on: date | None = None, **options: Any) -> dict:
        name, role, municipality, body = self.attempt(act, **options)
        return self.refused_as(name, role, municipality, on or self.next_day(), **body)

    def refused_as(self, name: str, role: str, municipality: str | None, on: date, /, **body: Any) -> dict:
        return problem_of(self.api, lambda: post(self.api, self.case, name, role, on, municipality, **body),
                          role, municipality)


#: How each act of the API that is no district act is attempted on a district case (the walks' cases are Feijó's):
#: a body the competence tables name for it, and the request's fields. A new act of the API needs its entry.
ABSENT_ATTEMPTS: dict[str, tuple[str, dict[str, Any]]] = {
    "requisition-issued": ("assembly-mesa", {"body": "ibge", "items": ["art-31-I"]}),
    "requisition-received": ("assembly-mesa", {"requisition": "R1"}),
    "requisition-refused": ("assembly-mesa", {"requisition": "R1", "reason": "recusa do órgão"}),
    "requirements-verified": ("assembly-mesa", {}),
    "council-decree-recorded": ("council", {"municipality": FEIJO, "decree": "Decreto Legislativo 1/2026",
                                            "seats": 9, "yes_votes": 5}),
    "plebiscite-dispensed": ("assembly-mesa", {"justification": "limites naturais"}),
    "plebiscite-decreed": ("assembly-president", {"decree": "Decreto Legislativo 2/2026"}),
    "plebiscite-scheduled": ("tre", {"resolution": "Resolução TRE-AC 1/2026", "plebiscite_date": "2026-05-03"}),
    "plebiscite-result-homologated": ("tre", {"voted_on": "2026-05-03", "populations": {"area": {
        "registered": 1000, "turnout": 800, "yes": 600, "no": 150, "blank": 30, "void": 20}}}),
    "result-communicated": ("tre", {}),
    "result-registered-in-plenary": ("assembly-president", {}),
    "creation-bill-drafted": ("ccj", {"bill": "Projeto de Lei 1/2026"}),
    "request-signatures-certified": ("tre", {"valid_signatures": 10, "registered_voters": 15}),
    "administrator-list-sent": ("governor", {"names": ["Ana Souza", "Bruno Lima", "Carla Dias"]}),
    "administrator-appointed": ("assembly-president", {"administrator": "Ana Souza"}),
    "municipality-installed": ("assembly-president", {"mayor": "Ana Souza", "vice_mayor": "Bruno Lima",
                                                      "councillors": ["Carla Dias"]}),
    "ledger-transferred": ("mayor", {"origin": FEIJO, "document": "Ofício 1/2026"}),
    "personnel-documents-sent": ("mayor", {"origin": FEIJO, "document": "Ofício 2/2026"}),
    "prefect-bill-submitted": ("mayor", {"item": next(iter(PREFECT_BILLS)), "bill": "Projeto de Lei 2/2026"}),
    "organic-law-promulgated": ("council", {"organic_law": "Lei Orgânica"}),
    "remuneration-fixed": ("council", {"act": "Resolução 1/2026"}),
}


# ============================================================================== the order of acts (lifecycles.toml)


@dataclass(frozen=True)
class OrderWalk:
    """One refusal of the order of acts: the acts `before` recorded (the findings but `omit`), every Art. 40
    communication sent when `communications`, then `act` attempted; `key` names its reading."""

    kind: str
    act: str
    key: str
    before: tuple[str, ...] = ()
    omit: tuple[str, str] | None = None
    communications: bool = False

    @property
    def id(self) -> str:
        return f"{self.kind}: {self.key}"


def condition_failures(kind: str, act: str, name: str) -> list[OrderWalk]:
    """The ways the named condition fails when everything else `act` needs is recorded."""
    before = tuple(prerequisites(kind, act))
    if name == "art-31-findings-complete":
        return [OrderWalk(kind, act, f"{act} without the {item} finding of the {body}", before, omit=(item, body))
                for item, body in required_findings(kind)]
    if name == "art-40-communication-due":
        return [OrderWalk(kind, act, f"{act} once every Art. 40 communication was sent", before,
                          communications=True)]
    raise AssertionError(f"no walk makes the condition {name!r} fail: add it here")


def order_walks() -> list[OrderWalk]:
    walks = []
    for kind in DISTRICT_KINDS:
        lc = lifecycle(kind)
        for step in lc.steps[1:]:
            for missing in step.after:
                if missing != lc.opening.act:  # the opening is the case itself: it is always recorded
                    walks.append(OrderWalk(kind, step.act, f"{step.act} before {missing}"))
            for closing in step.until:
                walks.append(OrderWalk(kind, step.act, f"{step.act} after {closing}",
                                       (*prerequisites(kind, closing), closing)))
            if step.once and step.act not in lc.ends:  # a second archive meets the archive that ended the case
                walks.append(OrderWalk(kind, step.act, f"{step.act} a second time",
                                       (*prerequisites(kind, step.act), step.act)))
            for name in step.when:
                walks += condition_failures(kind, step.act, name)
            for final in lc.ends:
                walks.append(OrderWalk(kind, step.act, f"{step.act} after {final} ended the case",
                                       (*prerequisites(kind, final), final)))
        steps = set(lc.acts)
        for act in api_acts_on_a_district_case():
            if act in lc.excluded:
                walks.append(OrderWalk(kind, act, f"{act}, which the kind excludes"))
            elif act not in steps:
                walks.append(OrderWalk(kind, act, f"{act} is not an act of the kind"))
    return walks


ORDER_WALKS = order_walks()


def test_the_order_walks_cover_every_step_of_both_district_lifecycles_and_every_act_of_the_api():
    for kind in DISTRICT_KINDS:
        walked = {walk.act for walk in ORDER_WALKS if walk.kind == kind}
        assert set(lifecycle(kind).acts[1:]) <= walked
        assert set(api_acts_on_a_district_case()) <= walked | set(lifecycle(kind).acts)


@pytest.mark.parametrize("walk", ORDER_WALKS, ids=lambda walk: walk.id)
def test_an_act_out_of_the_order_of_a_district_lifecycle_is_refused_citing_the_article_that_orders_it(api, walk):
    case = District(api, walk.kind)
    for act in walk.before:
        case.record(act, omit=walk.omit)
    if walk.communications:
        case.send_every_communication()
    problem = case.refused(walk.act)
    assert problem["status"] == 409, problem
    assert_reads(problem, walk.key)


# ============================================================================== who records each act


@dataclass(frozen=True)
class CompetenceWalk:
    """An act (a finding: of `item`) attempted by `role`, acting for `municipality` when the role is municipal."""

    kind: str
    act: str
    role: str
    key: str
    municipality: str | None = None
    item: str | None = None

    @property
    def id(self) -> str:
        return f"{self.kind}: {self.act}{f' {self.item}' if self.item else ''} by {self.role}" + (
            f" of {self.municipality}" if self.municipality else "")

    @property
    def name(self) -> str:
        return "petition-filed" if self.act == lifecycle(self.kind).opening.act else http_name(self.act)

    @property
    def passes_the_api_s_check(self) -> bool:
        """The API refuses first, before reading the case, a role the statute names for this act in no kind."""
        return self.role in bodies_competent_for(STATUTE, NOW.date(), self.name)[1]


ROLES = [role for role in competent_roles(STATUTE, OPENED) if role not in READ_ONLY_ROLES]


def competence_walks() -> list[CompetenceWalk]:
    walks = []
    catalogue = act_catalogue(STATUTE, OPENED)
    for kind in DISTRICT_KINDS:
        for step in lifecycle(kind).steps:
            if catalogue[step.act].competence == "competence.finding":
                table = competence("competence.finding")
                walks += [CompetenceWalk(kind, step.act, role, f"the {item} finding recorded by a body Art. 32 "
                                         f"does not name", item=item)
                          for item in FINDING_ITEMS[kind] for role in ROLES if role not in table[item]]
                continue
            named = competence("competence.act")[step.act]
            walks += [CompetenceWalk(kind, step.act, role, f"{step.act} recorded by a body the law does not name")
                      for role in ROLES if role not in named]
            if step.by == "municipality":
                walks += [CompetenceWalk(kind, step.act, role, f"{step.act} recorded by a municipal body of "
                                         f"another municipality", municipality=TARAUACA)
                          for role in named if role in MUNICIPAL_ROLES]
    return walks


COMPETENCE_WALKS = competence_walks()


@pytest.fixture(scope="module")
def opened_cases(tmp_path_factory) -> Iterator[tuple[ApiHarness, dict[str, District]]]:
    """One opened case of each district kind on one API: a refusal of competence records nothing, and is judged
    before the order of acts, so the same cases serve every walk."""
    api = ApiHarness(f"sqlite:///{tmp_path_factory.mktemp('competence') / 'api.sqlite'}")
    try:
        yield api, {kind: District(api, kind) for kind in DISTRICT_KINDS}
    finally:
        api.close()


def attempted_by(walk: CompetenceWalk, case: District) -> tuple[str | None, dict[str, Any]]:
    municipality = walk.municipality or whose(walk.role, case.code)
    if walk.name == "petition-filed":
        return municipality, {"kind": walk.kind, "municipalities": [case.code], "district": case.name}
    item = (walk.item, competence("competence.finding")[walk.item][0]) if walk.item else None
    return municipality, case.attempt(walk.act, item=item)[3]


def send_as(api: ApiHarness, walk: CompetenceWalk, case: District) -> dict:
    municipality, body = attempted_by(walk, case)
    on = OPENED + DAY
    if walk.name == "petition-filed":
        send = lambda: api.client.post("/cases", json={"occurred_on": on.isoformat(), **body},  # noqa: E731
                                       headers=api.headers(walk.role, municipality))
    else:
        send = lambda: post(api, case.case, walk.name, walk.role, on, municipality, **body)  # noqa: E731
    problem = problem_of(api, send, walk.role, municipality)
    assert problem["status"] == 403, problem
    return problem


@pytest.mark.parametrize("walk", [w for w in COMPETENCE_WALKS if w.passes_the_api_s_check], ids=lambda w: w.id)
def test_a_district_act_recorded_by_a_body_the_law_does_not_name_is_refused_over_http_citing_its_article(
        opened_cases, walk):
    api, cases = opened_cases
    assert_reads(send_as(api, walk, cases[walk.kind]), walk.key)


def one_walk_the_api_refuses_first_per_act() -> list[Any]:
    walks = {}
    for walk in COMPETENCE_WALKS:
        if not walk.passes_the_api_s_check:
            walks.setdefault((walk.kind, walk.act, walk.item), walk)
    return [pytest.param(walk, id=walk.id) for walk in walks.values()]


@pytest.mark.parametrize("walk", one_walk_the_api_refuses_first_per_act())
def test_a_district_act_recorded_by_a_body_no_case_kind_names_for_it_is_refused_over_http_citing_its_article(
        opened_cases, walk):
    api, cases = opened_cases
    assert_reads(send_as(api, walk, cases[walk.kind]), walk.key)


@pytest.mark.parametrize("walk", [w for w in COMPETENCE_WALKS if not w.passes_the_api_s_check], ids=lambda w: w.id)
def test_a_district_act_recorded_by_a_body_no_case_kind_names_for_it_is_refused_by_the_case_citing_its_article(
        opened_cases, walk):
    """The same refusals judged by the case itself, through the application."""
    api, cases = opened_cases
    case = cases[walk.kind]
    municipality, body = attempted_by(walk, case)
    actor, on = Actor(f"{walk.role}-t", walk.role, municipality), OPENED + DAY
    before = api.notifications()
    with pytest.raises(IncompetentBodyError) as caught:
        if walk.name == "petition-filed":
            api.app.open_case(actor, on, **body)
        else:
            getattr(api.app, method_of(walk.name))(case.case, actor, on, **body)
    assert api.notifications() == before
    assert caught.value.article == reading(walk.key).article, caught.value


# ============================================================================== the legal date


def step_acts() -> list[tuple[str, str]]:
    return [(kind, step.act) for kind in DISTRICT_KINDS for step in lifecycle(kind).steps[1:]]


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["the-day-before", "the-day-of", "the-day-after"])
@pytest.mark.parametrize("kind, act", step_acts(), ids=[f"{k}: {a}" for k, a in step_acts()])
def test_a_district_act_dated_before_the_case_s_previous_act_is_refused_and_from_that_day_on_is_recorded(
        api, kind, act, offset):
    case = District(api, kind)
    for before in prerequisites(kind, act):
        case.record(before)
    last = case.on
    name, role, municipality, body = case.attempt(act)
    if offset < 0:
        assert_reads(case.refused_as(name, role, municipality, last + offset * DAY, **body),
                     "an act dated before the case's previous act")
    else:
        api.act(case.case, name, role, last + offset * DAY, municipality, **body)


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["yesterday", "today", "tomorrow"])
@pytest.mark.parametrize("kind, act", step_acts(), ids=[f"{k}: {a}" for k, a in step_acts()])
def test_a_district_act_dated_after_today_is_refused_and_one_dated_today_is_recorded(api, kind, act, offset):
    case = District(api, kind)
    for before in prerequisites(kind, act):
        case.record(before)
    name, role, municipality, body = case.attempt(act)
    on = api.app.today() + offset * DAY
    if offset > 0:
        assert_reads(case.refused_as(name, role, municipality, on, **body), "an act dated after today")
    else:
        api.act(case.case, name, role, on, municipality, **body)


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["yesterday", "today", "tomorrow"])
def test_a_district_petition_dated_after_today_is_refused_and_one_dated_today_opens_the_case(api, offset):
    on = api.app.today() + offset * DAY
    if offset > 0:
        assert_reads(problem_of(api, lambda: petition(api, "mayor", on), "mayor", FEIJO), "an act dated after today")
    else:
        assert petition(api, "mayor", on).status_code == 201


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["the-day-before", "the-day-of", "the-day-after"])
def test_a_district_petition_dated_before_lc_35_1991_is_refused_and_from_its_first_day_opens_the_case(api, offset):
    on = lifecycle("district_creation").effective_from + offset * DAY
    if offset < 0:
        problem = problem_of(api, lambda: petition(api, "mayor", on), "mayor", FEIJO)
        assert problem["status"] == 422 and "lifecycle.district_creation" in problem["detail"], problem
        assert_reads(problem, "a district case opened before LC 35/1991 was in force")
    else:
        assert petition(api, "mayor", on).status_code == 201


def test_a_district_suppression_dated_before_lc_35_1991_is_refused_citing_art_31(api):
    on = lifecycle("district_suppression").effective_from - DAY
    problem = problem_of(api, lambda: petition(api, "council", on, kind="district_suppression"), "council", FEIJO)
    assert_reads(problem, "a district case opened before LC 35/1991 was in force")


# ============================================================================== the petition (Art. 31)


@pytest.mark.parametrize("kind", DISTRICT_KINDS)
@pytest.mark.parametrize("key, body", [
    ("a district case naming two municipalities", {"municipalities": [FEIJO, TARAUACA]}),
    ("a district case naming no district", {"district": " "}),
], ids=["two municipalities", "no district"])
def test_a_district_petition_that_does_not_name_one_municipality_and_its_district_is_refused(api, kind, key, body):
    problem = problem_of(api, lambda: petition(api, "mayor", OPENED, kind=kind, **body), "mayor", FEIJO)
    assert_reads(problem, key)


def test_the_suppression_of_a_district_the_registry_does_not_have_is_refused_naming_the_district(api):
    problem = problem_of(api, lambda: petition(api, "mayor", OPENED, kind="district_suppression"), "mayor", FEIJO)
    assert DISTRICT in problem["detail"]
    assert_reads(problem, "the suppression of a district the registry does not have")


# ============================================================================== the findings (Art. 31 par. ún., 32)


def test_a_finding_of_an_art_4_item_in_a_district_creation_is_refused_naming_the_item(api):
    case = District(api, "district_creation")
    item = ART_4_ITEMS[0]
    body = competence("competence.finding")[item][0]
    problem = case.refused_as("finding-recorded", body, None, case.next_day(), item=item, value=1,
                              document="Laudo")
    assert_reads(problem, "a finding of an item that is not a district's")


@pytest.mark.parametrize("body", competence("competence.finding")["art-31-III"])
def test_a_boundary_description_finding_that_is_neither_yes_nor_no_is_refused(api, body):
    case = District(api, "district_creation")
    problem = case.refused_as("finding-recorded", body, None, case.next_day(), item="art-31-III", value=1,
                              document="Laudo")
    assert_reads(problem, "an art-31-III finding that is neither yes nor no")


# ============================================================================== the district law (Art. 31, 32, 38)


def ready_for_law(api: ApiHarness, kind: str, *, opened: date = OPENED, name: str = DISTRICT,
                  code: str = FEIJO, findings: dict[tuple[str, str], Any] | None = None) -> District:
    """A district case whose next act is its law (a creation's findings adequate, unless `findings` says)."""
    case = District(api, kind, code=code, name=name, opened=opened)
    if kind == "district_creation":
        on = case.next_day()
        for item in required_findings(kind):
            finding_name, role, _, body = case.attempt("finding-recorded", item=item,
                                                       value=(findings or {}).get(item))
            api.act(case.case, finding_name, role, on, **body)
    return case


def law_refusal(case: District, on: date | None = None, **law: Any) -> dict:
    name, role, municipality, _ = case.attempt("district-law-enacted")
    return case.refused_as(name, role, municipality, on or case.next_day(), **{**LAW, **law})


def enact(case: District, on: date | None = None) -> None:
    name, role, municipality, body = case.attempt("district-law-enacted")
    case.api.act(case.case, name, role, on or case.next_day(), municipality, **body)


@pytest.mark.parametrize("item, key", [("art-31-I", "a district with fewer buildings than Art. 31-I requires"),
                                       ("art-31-II", "a district with no more inhabitants than Art. 31-II requires")])
def test_a_district_law_on_a_figure_the_statute_does_not_admit_is_refused_citing_its_item(api, item, key):
    refused = threshold(item)[0]
    body = competence("competence.finding")[item][0]
    case = ready_for_law(api, "district_creation", findings={(item, body): refused})
    problem = law_refusal(case)
    assert problem["figures"] == {"required": STATUTE.value(FIGURES[item], OPENED), "found": refused}
    assert_reads(problem, key)


@pytest.mark.parametrize("body", competence("competence.finding")["art-31-III"])
def test_a_district_law_on_a_boundary_description_found_inadequate_is_refused_citing_art_31_III(api, body):
    case = ready_for_law(api, "district_creation", findings={("art-31-III", body): False})
    assert_reads(law_refusal(case), "a boundary description found inadequate")


def election_year_boundaries() -> list[Any]:
    """The first day of the last municipal-election year before today and the day after its election, each with
    the day before and after (the law is refused from 1 January of an election year to its election day)."""
    elections = STATUTE.value("art-31-IV.municipal-election-dates", OPENED)
    election = max(day for day in elections if date(day.year, 12, 31) < NOW.date())
    params = []
    for boundary, refused_from in ((date(election.year, 1, 1), True), (election + DAY, False)):
        for offset in (-1, 0, 1):
            on = boundary + offset * DAY
            refused = (offset >= 0) == refused_from
            params.append(pytest.param(on, refused, id=f"{on.isoformat()}-{'refused' if refused else 'enacted'}"))
    return params


@pytest.mark.parametrize("on, refused", election_year_boundaries())
def test_a_district_law_dated_in_a_municipal_election_year_up_to_its_election_is_refused_citing_art_31_IV(
        api, on, refused):
    case = ready_for_law(api, "district_creation", opened=on - 30 * DAY)
    if refused:
        problem = law_refusal(case, on)
        assert problem["figures"]["election"].startswith(str(on.year)), problem
        assert_reads(problem, "a district law dated in a municipal-election year")
    else:
        enact(case, on)


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["the-day-before", "the-day-of", "the-day-after"])
def test_a_district_law_dated_beyond_the_known_election_calendar_is_refused_citing_art_31_IV(harness, offset):
    known_through = STATUTE.in_force("art-31-IV.municipal-election-dates", OPENED).extra["known_through"]
    on = known_through + offset * DAY
    api = harness(datetime.combine(known_through + 2 * DAY, NOW.timetz()))
    case = ready_for_law(api, "district_creation", opened=known_through - 30 * DAY)
    if offset > 0:
        assert_reads(law_refusal(case, on), "a district law dated beyond the known election calendar")
    else:
        enact(case, on)


@pytest.mark.parametrize("key, name, law", [
    ("a district named as a municipality of Brazil", "Xapuri", {}),
    ("a district named after a date", "Vinte e Dois de Agosto", {}),
    ("a district law without the declaration that the name is not a living person's", DISTRICT,
     {"living_person_declaration": False}),
], ids=["a municipality's name", "a date", "no declaration"])
def test_a_district_law_naming_the_district_against_art_32_par_unico_is_refused(api, key, name, law):
    case = ready_for_law(api, "district_creation", name=name)
    assert_reads(law_refusal(case, **law), key)


def test_a_district_named_as_another_district_of_the_municipality_is_refused_citing_art_32_par_unico(api):
    enact(ready_for_law(api, "district_creation"))
    second = ready_for_law(api, "district_creation", opened=OPENED + 10 * DAY, name=DISTRICT.upper())
    assert_reads(law_refusal(second), "a district named as another district of the municipality")


def test_the_suppression_of_a_district_another_case_already_suppressed_is_refused_citing_art_31(api):
    first = ready_for_law(api, "district_suppression")
    second = District(api, "district_suppression", opened=first.on, create_first=False)  # still in the registry
    enact(first, second.on + DAY)
    assert_reads(law_refusal(second, second.on + 2 * DAY), "the suppression of a district the municipality no "
                 "longer has")


def freezing_creation(api: ApiHarness, on: date, code: str = FEIJO) -> str:
    """Art. 38: a Governor's creation petition over `code`, which freezes it from `on`."""
    return api.open_case("governor", on, kind="creation", municipalities=[code], proposed_name="Vila Nova do Envira",
                         areas=[{"municipality": code, "area_km2": "300", "description": "margem do Envira"}],
                         documents={item: f"Ofício {item}" for item in ART_4_ITEMS})["case_id"]


FREEZE_STARTS = date(2026, 6, 1)


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["the-day-before", "the-day-of", "the-day-after"])
@pytest.mark.parametrize("kind", DISTRICT_KINDS)
def test_a_district_law_dated_from_the_day_a_case_freezes_the_municipality_is_refused_citing_art_38(
        api, kind, offset):
    case = ready_for_law(api, kind)
    blocking = freezing_creation(api, FREEZE_STARTS)
    on = FREEZE_STARTS + offset * DAY
    if offset < 0:
        enact(case, on)
        return
    problem = law_refusal(case, on)
    assert problem["figures"]["blocking_case"] == api.get(f"/cases/{blocking}").get_json()["number"]
    assert_reads(problem, "a district law while a case freezes the municipality")


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["the-day-before", "the-day-of", "the-day-after"])
@pytest.mark.parametrize("kind", DISTRICT_KINDS)
def test_a_district_law_dated_from_the_day_the_freezing_case_is_archived_is_enacted(api, kind, offset):
    case = ready_for_law(api, kind)
    blocking, lifted = freezing_creation(api, FREEZE_STARTS), FREEZE_STARTS + 10 * DAY
    api.act(blocking, "case-archived", "assembly-mesa", lifted, reason="desistência")
    on = lifted + offset * DAY
    if offset < 0:
        assert_reads(law_refusal(case, on), "a district law while a case freezes the municipality")
    else:
        enact(case, on)


def extinguished(api: ApiHarness, code: str, on: date) -> None:
    """Art. 37: `code` is extinguished by a law dated `on` (two thirds of its voters ask, it lost Art. 4-I)."""
    case = api.open_case("assembly-mesa", on - 10 * DAY, kind="extinction", municipalities=[code])["case_id"]
    registered = 3000
    share = Fraction(STATUTE.value("art-37-II.request-share-of-voters", OPENED))
    api.act(case, "request-signatures-certified", "tre", on - 9 * DAY, registered_voters=registered,
            valid_signatures=int(share * registered) + 1)
    population = STATUTE.in_force("art-4-I.population", OPENED)
    api.act(case, "finding-recorded", "ibge", on - 8 * DAY, item="art-4-I", document="Laudo art-4-I",
            value=population.value if not population.holds(population.value) else population.value - 1)
    api.act(case, "law-enacted", "governor", on, law="Lei Complementar 1/2026", reintegration={TARAUACA: "1"})


CEASES = date(2026, 6, 1)


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["the-day-before", "the-day-of", "the-day-after"])
def test_a_district_law_of_a_municipality_dated_from_the_day_it_ceased_to_exist_is_refused_citing_art_31(
        api, offset):
    case = ready_for_law(api, "district_creation", code=JORDAO)
    extinguished(api, JORDAO, CEASES)
    if offset < 0:
        enact(case, CEASES + offset * DAY)
    else:
        assert_reads(law_refusal(case, CEASES + offset * DAY), "a district law of a municipality that ceased to exist")


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["the-day-before", "the-day-of", "the-day-after"])
def test_a_district_case_opened_for_a_municipality_from_the_day_it_ceased_to_exist_is_refused_citing_art_31(
        api, offset):
    extinguished(api, JORDAO, CEASES)
    on = CEASES + offset * DAY
    if offset < 0:
        assert petition(api, "mayor", on, code=JORDAO).status_code == 201
    else:
        problem = problem_of(api, lambda: petition(api, "mayor", on, code=JORDAO), "mayor", JORDAO)
        assert_reads(problem, "a district case opened for a municipality that ceased to exist")


# ============================================================================== the communications (Art. 40)


def test_the_same_art_40_communication_sent_twice_is_refused_citing_art_40(api):
    case = ready_for_law(api, "district_creation")
    enact(case)
    name, role, municipality, body = case.attempt("district-communication-sent")
    api.act(case.case, name, role, case.next_day(), municipality, **body)
    assert_reads(case.refused("district-communication-sent"), "the same Art. 40 communication sent twice")


def test_a_district_communication_to_a_recipient_art_40_does_not_name_is_refused_naming_the_recipient(api):
    case = ready_for_law(api, "district_creation")
    enact(case)
    name, role, municipality, body = case.attempt("district-communication-sent")
    problem = case.refused_as(name, role, municipality, case.next_day(), **{**body, "recipient": "tre"})
    assert_reads(problem, "a communication to a recipient Art. 40 does not name")


# ============================================================================== every reading is walked


def test_every_reading_is_walked_by_this_module():
    """Run last (pytest keeps a module's order): a reading no walk asks for is stale. Skipped when only part of the
    module ran."""
    expected = {walk.key for walk in ORDER_WALKS} | {walk.key for walk in COMPETENCE_WALKS}
    if not expected <= WALKED:
        pytest.skip("only part of the module ran")
    assert set(READINGS) == WALKED
