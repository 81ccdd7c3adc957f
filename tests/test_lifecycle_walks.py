"""`next_acts` along the six walks of test_case_walks: after every act (and every refusal) of each walk, what the case
says may come next is exactly what the lifecycle data says, computed here from the data file, the case's timeline
and the named conditions; and it is exactly what the order check admits, act by act and municipality by
municipality."""

from __future__ import annotations

import tomllib
from datetime import date
from pathlib import Path
from typing import Any

import pytest

import tests.test_case_walks as walks
from domain.case import CONDITIONS, FINDING_ITEMS, Case
from domain.errors import ActOutOfOrderError, LegalRuleError, RuleNotInForceError
from domain.parameters import ARTICLE_ID, shipped_statute
from tests.stores import make_app

STATUTE = shipped_statute()
STATUTE_DIR = Path(__file__).resolve().parents[1] / "domain" / "statute"
LIFECYCLES = tomllib.loads((STATUTE_DIR / "lifecycles.toml").read_text(encoding="utf-8"))["parameter"]
LC35 = tomllib.loads((STATUTE_DIR / "lc35.toml").read_text(encoding="utf-8"))["parameter"]
CASE_ACTS = ("open_case", "issue_requisition", "receive_requisition", "refuse_requisition", "record_finding",
             "verify_requirements", "record_council_decree", "dispense_plebiscite", "decree_plebiscite",
             "schedule_plebiscite", "homologate_result", "communicate_result", "register_in_plenary", "draft_bill",
             "archive_case", "enact_law", "certify_extinction_request", "send_administrator_list",
             "appoint_administrator", "install_municipality", "transfer_ledger", "send_personnel_documents",
             "submit_prefect_bill", "promulgate_organic_law", "fix_remuneration", "send_communication")


def value_in_force(parameters: list[dict], parameter_id: str, on: date) -> Any:
    return [p for p in parameters if p["id"] == parameter_id and p["effective_from"] <= on][-1]["value"]


def steps_in_force(kind: str, on: date) -> list[dict]:
    """The kind's steps in force on `on`, as the file writes them, a step that `uses` a shared step read as the
    shared step in force that day."""
    shared = {s["name"]: s for s in value_in_force(LIFECYCLES, "lifecycle.steps", on)["step"]}
    steps = value_in_force(LIFECYCLES, f"lifecycle.{kind}", on)["step"]
    return [shared[s["uses"]] if "uses" in s else s for s in steps]


def expected_next_acts(case: Case, timeline: list[dict], on: date) -> list[dict]:
    """What the data says may come next, read from the files and the case's timeline, not from the domain's
    lifecycle code (the named conditions are the domain's predicates: they are what the data names)."""
    catalogue = value_in_force(LIFECYCLES, "lifecycle.acts", on)
    lifecycle = value_in_force(LIFECYCLES, f"lifecycle.{case.kind}", on)
    competence = value_in_force(LC35, "competence.act", on)
    findings = value_in_force(LC35, "competence.finding", on)
    log: dict[str, list[str | None]] = {}
    for row in timeline:
        payload = row["payload"]
        log.setdefault(row["type"].removeprefix("Case."), []).append(payload.get("municipality")
                                                                      or payload.get("origin"))

    def recorded(act: str, municipality: str | None = None) -> bool:
        return any(municipality is None or m == municipality for m in log.get(catalogue[act]["event"], []))

    def holds(name: str) -> bool:
        return CONDITIONS[name](case, STATUTE, on).holds

    if any(recorded(act) for act in lifecycle["ends"]) or any(holds(n) for n in lifecycle.get("ends_when", [])):
        return []
    territories = case.municipalities + ([case.receiving] if case.receiving else [])
    new = [case.law["new_municipality"]] if case.law else []
    whose = {"territory": territories, "origin": case.municipalities, "municipality": case.municipalities[:1],
             "new-municipality": new}
    expected = []
    for step in steps_in_force(case.kind, on)[1:]:
        act, by = step["act"], step.get("by")
        per = by in ("territory", "origin")

        def admissible(municipality: str | None) -> bool:
            return (not (step.get("once") and recorded(act, municipality if per else None))
                    and not any(recorded(a) for a in step.get("until", []))
                    and not any(holds(n) for n in step.get("unless", []))
                    and all(recorded(a) for a in step.get("after", []))
                    and (not step.get("after_any") or any(recorded(a) for a in step["after_any"]))
                    and all(holds(n) for n in step.get("when", [])))

        municipalities = [m for m in whose[by] if admissible(m)] if per else (whose[by] if by else [])
        if (per and not municipalities) or (not per and not admissible(None)):
            continue
        roles = (competence[act] if catalogue[act].get("competence", "competence.act") == "competence.act" else
                 sorted({r for item in FINDING_ITEMS.get(case.kind, ()) for r in findings[item]}))
        expected.append({"act": act, "article": step["article"], "roles": roles, "municipalities": municipalities})
    return expected


class Watching:
    """The application, checking each case after each of its acts (recorded or refused)."""

    def __init__(self, app: Any) -> None:
        self._app = app
        self.states: list[tuple[str, int, list[str]]] = []
        self.versions: dict[str, int] = {}
        self.deadlines: set[tuple[str, str, str, str]] = set()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._app, name)
        if name not in CASE_ACTS:
            return attribute

        def act(*args: Any, **kwargs: Any) -> Any:
            try:
                acted = attribute(*args, **kwargs)
            except LegalRuleError:
                if name != "open_case":
                    self.check(args[0])
                raise
            self.check(acted.number)
            return acted

        return act

    def check(self, number: str) -> None:
        case = self._app.get_case(number)
        on = case.last_occurred_on
        self.check_deadlines(case, self._app.timeline(number)[self.versions.get(number, 0):])
        self.versions[number] = case.version
        offered = case.next_acts_document(STATUTE, on)
        assert offered == expected_next_acts(case, self._app.timeline(number), on), (number, case.last_act)
        by_act = {entry["act"]: entry for entry in offered}
        for act in value_in_force(LIFECYCLES, "lifecycle.acts", on):
            refusal = case.order_refusal(STATUTE, act, on)
            assert (refusal is None) == (act in by_act), (number, case.last_act, act, refusal)
            if refusal is not None:
                assert isinstance(refusal, (ActOutOfOrderError, RuleNotInForceError))
                assert ARTICLE_ID.match(refusal.article), refusal
            step = case.lifecycle(STATUTE, on).step(act)
            if step is not None and step.per_municipality:
                for code in case._territories():
                    admitted = case.order_refusal(STATUTE, act, on, code) is None
                    assert admitted == (code in by_act.get(act, {}).get("municipalities", [])), (act, code)
        self.states.append((number, case.version, [entry["act"] for entry in offered]))


    def check_deadlines(self, case: Case, saved: list[dict]) -> None:
        """The deadlines an act's save opened and met are among those its lifecycle step says it opens and closes."""
        if not saved:
            return
        act_row = saved[0]
        on = date.fromisoformat(act_row["occurred_on"])
        catalogue = value_in_force(LIFECYCLES, "lifecycle.acts", on)
        steps = steps_in_force(case.kind, on)
        step = next(s for s in steps if catalogue[s["act"]]["event"] == act_row["type"].removeprefix("Case."))
        for row in saved[1:]:
            if row["type"] == "Case.DeadlineOpened":
                assert row["payload"]["rule"] in step.get("opens", []), (step["act"], row["payload"]["rule"])
                self.deadlines.add((case.kind, step["act"], "opens", row["payload"]["rule"]))
            elif row["type"] == "Case.DeadlineMet":
                rule = row["payload"]["deadline"].split(":")[0]
                assert rule in step.get("closes", []), (step["act"], rule)
                self.deadlines.add((case.kind, step["act"], "closes", rule))


WALKS = [name for name in dir(walks) if name.startswith("test_")]


@pytest.mark.parametrize("walk", WALKS)
def test_after_each_act_of_a_walk_the_case_offers_exactly_the_acts_its_lifecycle_admits(walk):
    watching = Watching(make_app("memory://"))
    getattr(walks, walk)(watching)
    assert len(watching.states) >= 3
    assert any(acts for _, _, acts in watching.states)
    if "1992_creation" in walk:  # the walk that opens and closes every deadline but the requisitions'
        assert {rule for *_, rule in watching.deadlines} == {
            "result-communication", "plenary-registration", "creation-bill", "personnel-documents",
            "ledger-transfer", "budget-proposal", "administrative-organization-bill", "civil-service-regime-bill",
            "staff-framework-bill", "organic-law"}


def test_a_requisition_s_receipt_opens_and_its_body_s_finding_closes_the_deadlines_its_lifecycle_says():
    from domain.demo import creation_2026

    watching = Watching(make_app("memory://"))
    creation_2026(watching, lambda line: None)
    assert {("creation", "requisition-received", "opens", "requisition-answer"),
            ("creation", "finding-recorded", "closes", "requisition-answer")} <= watching.deadlines


def test_the_walks_cover_every_case_kind():
    kinds = set()
    for walk in WALKS:
        app = make_app("memory://")
        getattr(walks, walk)(app)
        kinds |= {app.get_case(f"LC35-{year}-{n:04d}").kind for year in (1991, 1993, 2026) for n in range(1, 4)
                  if app.case_exists(f"LC35-{year}-{n:04d}")}
    assert kinds == {"creation", "incorporation", "fusion", "dismemberment", "district_creation",
                     "district_suppression", "extinction"}


def test_a_concluded_creation_offers_no_further_act_and_an_installed_one_offers_its_obligations(memory_app):
    from domain.demo import creation_1992

    case = memory_app.get_case(creation_1992(memory_app, lambda line: None))
    assert case.next_acts(STATUTE, case.last_occurred_on) == []
    installed = memory_app.case_as_of(case.number, date(1993, 1, 1))  # installed that day, nothing done since
    assert installed.installation["on"] == date(1993, 1, 1)
    offered = {entry["act"]: entry for entry in installed.next_acts_document(STATUTE, date(1993, 1, 1))}
    assert set(offered) == {"ledger-transferred", "prefect-bill-submitted", "organic-law-promulgated",
                            "remuneration-fixed", "communication-sent"}
    assert offered["ledger-transferred"] == {"act": "ledger-transferred", "article": "art-22-par-unico",
                                             "roles": ["mayor", "municipality"],
                                             "municipalities": ["1200385", "1200450"]}
    assert offered["organic-law-promulgated"]["municipalities"] == [case.new_municipality]
