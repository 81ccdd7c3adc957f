"""Amendments of the statute recorded as acts (docs/law/amendments.md): judged as the shipped data is, against the
acts already judged, taken up by every process without a restart, and shown by `GET /statute?on=`."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest

from domain.acts import Actor
from domain.application import Tramita
from domain.errors import IncompetentBodyError, LegalRuleError, StatuteAmendmentError
from tests.api_client import ApiHarness, Clock
from tests.conftest import BACKENDS
from tests.test_article_rules import GOVERNOR, LAW, open_creation, creation_ready_for_law, creation_verified
from tramita.cli import main
from infrastructure.persistence import persistence_env

#: The clock of these tests: every legal date below is before it.
LATER = datetime(2027, 10, 1, 15, 0, tzinfo=timezone.utc)
OPERATOR = Actor("os:operador", "operator")
MESA = Actor("mesa-t", "assembly-mesa")
GATE = "cf-art-18-par-4.federal-period"
FEDERAL_LAW = "Lei Complementar federal nº 200, de 1º de março de 2027"
#: A federal complementary law that opens a period from 2027-03-01 to 2027-08-31 (CF art. 18 §4).
PERIOD = [
    {"id": GATE, "article": "cf-art-18-par-4", "effective_from": date(2027, 3, 1), "value": "open",
     "source": "LC federal 200/2027, art. 1º (DOU de 2027-03-01)"},
    {"id": GATE, "article": "cf-art-18-par-4", "effective_from": date(2027, 9, 1), "value": "closed",
     "source": "LC federal 200/2027, art. 1º: o período termina em 2027-08-31"},
]


def new_app(url: str = "memory://", clock: Any = lambda: LATER) -> Tramita:
    app = Tramita(persistence_env(url), clock=clock)
    if app.recorder.max_notification_id() is None:
        app.seed_registry(Actor("ibge-t", "ibge"), date(1991, 12, 18))
    return app


def open_period(app: Tramita, actor: Actor = OPERATOR) -> Any:
    return app.amend_statute(actor, date(2027, 3, 1), law=FEDERAL_LAW, parameters=[dict(p) for p in PERIOD])


def recorded(app: Tramita) -> int:
    return app.recorder.max_notification_id() or 0


# ============================================================================== the federal period (CF art. 18 §4)


@pytest.mark.parametrize("law_on, passes", [
    (date(2027, 2, 28), False), (date(2027, 3, 1), True), (date(2027, 8, 31), True), (date(2027, 9, 1), False),
])
def test_an_amendment_opening_a_federal_period_lets_a_creation_law_dated_inside_it_pass_the_gate(law_on, passes):
    app = new_app()
    open_period(app)
    case = creation_ready_for_law(app, law_on - timedelta(days=40))
    if passes:
        app.enact_law(case, GOVERNOR, law_on, name="Vila Nova", **LAW)
        enacted = app.get_case(case)
        assert enacted.stage == "law-enacted" and enacted.impediments == []
        law_event = next(row for row in app.timeline(case) if row["type"].endswith("LawEnacted"))
        assert law_event["rule_versions"][GATE] == f"{GATE}@2027-03-01"
    else:
        with pytest.raises(LegalRuleError) as refusal:
            app.enact_law(case, GOVERNOR, law_on, name="Vila Nova", **LAW)
        assert refusal.value.article == "cf-art-18-par-4"
        assert app.get_case(case).stage != "law-enacted"


def test_without_the_amendment_the_same_creation_law_is_refused_by_the_gate():
    app = new_app()
    case = creation_ready_for_law(app, date(2027, 3, 1) - timedelta(days=40))
    with pytest.raises(LegalRuleError) as refusal:
        app.enact_law(case, GOVERNOR, date(2027, 3, 1), name="Vila Nova", **LAW)
    assert refusal.value.article == "cf-art-18-par-4"


def deployed(url: str) -> Tramita:
    """An application as a deployment's process runs it: the audit log's tables made, its acts checked against the
    log (on PostgreSQL an act's first read then takes the statute's new amendments in its statement)."""
    from audit.log import AuditLog
    from audit.logged import LoggedHashes
    from infrastructure.store import open_store

    app = new_app(url)
    store = open_store(url)
    AuditLog(app, store).migrate()
    app.check_against(LoggedHashes(store, app.recorder))
    return app


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_amendment_recorded_by_one_process_is_taken_up_by_another_at_its_next_act(backend, new_database_url):
    url = new_database_url(backend)
    api_worker, operator_shell = deployed(url), deployed(url)
    case = creation_ready_for_law(api_worker, date(2027, 4, 1) - timedelta(days=40))
    assert api_worker.statute.value(GATE, date(2027, 4, 1)) == "closed"
    open_period(operator_shell)
    assert api_worker.statute.value(GATE, date(2027, 4, 1)) == "open"
    api_worker.enact_law(case, GOVERNOR, date(2027, 4, 1), name="Vila Nova", **LAW)
    assert api_worker.get_case(case).stage == "law-enacted"


def amend_requisition_competence(app: Tramita, bodies: list[str]) -> None:
    """From 2027-09-01 the bodies that issue an Art. 10 requisition are `bodies`."""
    table = {**app.statute.value("competence.act", date(2027, 9, 1)), "requisition-issued": bodies}
    app.amend_statute(OPERATOR, date(2027, 9, 1), law="Lei Complementar estadual nº 401, de 1º de setembro de 2027",
                      parameters=[{"id": "competence.act", "article": "rules-lifecycle",
                                   "effective_from": date(2027, 9, 1), "value": table,
                                   "source": "LC 401/2027, art. 1º"}])


def test_a_body_made_competent_by_another_process_passes_the_requests_competence_check_at_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'shared.sqlite'}"
    api_worker, operator_shell = new_app(url), new_app(url)
    president = Actor("presidente", "assembly-president")
    with pytest.raises(IncompetentBodyError):
        api_worker.require_may_record(president, "requisition-issued")
    amend_requisition_competence(operator_shell, ["assembly-mesa", "assembly-president"])
    api_worker.require_may_record(president, "requisition-issued")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_body_no_longer_competent_is_refused_by_the_act_even_when_the_request_passed_its_check(
        backend, new_database_url):
    url = new_database_url(backend)
    api_worker, operator_shell = deployed(url), deployed(url)
    case = open_creation(api_worker, date(2027, 8, 31))
    api_worker.get_case(case)  # the case is in the pool: the act's first read is its catch-up
    amend_requisition_competence(operator_shell, ["assembly-president"])
    api_worker.require_may_record(MESA, "requisition-issued")  # the statute as this process last read it
    with pytest.raises(IncompetentBodyError) as refusal:
        api_worker.issue_requisition(case, MESA, date(2027, 9, 1), body="ibge", items=["art-4"])
    assert refusal.value.article == "art-10"
    assert api_worker.get_case(case).requisitions == {}


# ============================================================================== a decision keeps its version


def test_an_earlier_decision_keeps_its_recorded_version_after_an_amendment_of_its_rule():
    app = new_app()
    case = creation_verified(app, date(2026, 6, 1))
    before = app.timeline(case)
    verified = next(row for row in before if row["type"].endswith("RequirementsVerified"))
    assert verified["rule_versions"]["art-4-I.population"] == "art-4-I.population@1991-12-18"
    app.amend_statute(OPERATOR, date(2027, 1, 10), law="Lei Complementar estadual nº 400, de 10 de janeiro de 2027",
                      parameters=[{"id": "art-4-I.population", "article": "art-4-I", "effective_from": date(2027, 2, 1),
                                   "value": 999_999, "comparison": ">=", "source": "LC 400/2027, art. 1º"}])
    assert app.statute.value("art-4-I.population", date(2027, 2, 1)) == 999_999
    assert app.timeline(case) == before
    assert app.get_case(case).stage == "requirements-met"


@pytest.mark.parametrize("effective_from, accepted", [
    (date(2026, 6, 1), False), (date(2026, 6, 2), False), (date(2026, 6, 3), True),
])
def test_a_new_version_may_start_only_after_the_last_day_a_decision_applied_the_one_it_supersedes(
        effective_from, accepted):
    app = new_app()
    case = creation_verified(app, date(2026, 6, 1))  # Art. 4-I judged on 2026-06-02 (the findings' day)
    entry = {"id": "art-4-I.population", "article": "art-4-I", "effective_from": effective_from, "value": 2000,
             "comparison": ">=", "source": "LC 400/2027, art. 1º"}
    store_before = recorded(app)
    if accepted:
        app.amend_statute(OPERATOR, date(2027, 1, 10), law="LC 400/2027", parameters=[entry])
        assert app.statute.value("art-4-I.population", effective_from) == 2000
        return
    with pytest.raises(StatuteAmendmentError) as refusal:
        app.amend_statute(OPERATOR, date(2027, 1, 10), law="LC 400/2027", parameters=[entry])
    assert list(refusal.value.problems) == ["parameters[0]"]
    message = refusal.value.problems["parameters[0]"][0]
    assert "2026-06-02" in message and str(app.get_case(case).id) in message
    assert recorded(app) == store_before
    assert app.statute.value("art-4-I.population", effective_from) == 1500


@pytest.mark.parametrize("effective_from, accepted", [
    (date(2026, 6, 1), False), (date(2026, 6, 2), False), (date(2026, 6, 3), True),
])
def test_a_table_every_act_consults_changes_only_after_the_last_legal_date_of_any_act(effective_from, accepted):
    app = new_app()
    creation_verified(app, date(2026, 6, 1))  # its last act, the findings, is dated 2026-06-02
    competence = app.statute.in_force("competence.act", date(2026, 6, 2))
    entry = {"id": "competence.act", "article": competence.article, "effective_from": effective_from,
             "value": dict(competence.value), "source": "Resolução da Mesa nº 1/2027"}
    if accepted:
        app.amend_statute(MESA, date(2027, 1, 10), law="Resolução da Mesa nº 1/2027", parameters=[entry])
        assert app.statute.in_force("competence.act", effective_from).introduced_by["number"] == 1
        return
    with pytest.raises(StatuteAmendmentError) as refusal:
        app.amend_statute(MESA, date(2027, 1, 10), law="Resolução da Mesa nº 1/2027", parameters=[entry])
    assert "2026-06-02" in refusal.value.problems["parameters[0]"][0]


# ============================================================================== malformed amendments


def _applied_gate(app: Tramita) -> None:
    """A creation petition of 2026-06-01 applied the closed gate (it records the gate's version)."""
    creation_verified(app, date(2026, 6, 1))


MALFORMED = {
    "an overlap": ([{**PERIOD[0], "effective_until": date(2027, 9, 30)}, PERIOD[1]], "overlaps"),
    "a missing source": ([{k: v for k, v in PERIOD[0].items() if k != "source"}], "source is required"),
    "an empty source": ([{**PERIOD[0], "source": "  "}], "source must be text"),
    "a change to a version already applied": (
        [{"id": GATE, "article": "cf-art-18-par-4", "effective_from": date(1996, 9, 13), "value": "open",
          "source": "LC federal 200/2027"}], "is already applied"),
    "a parameter the statute does not have": ([{**PERIOD[0], "id": "art-99.anything"}], "has no parameter"),
    "a word outside the gate's vocabulary": ([{**PERIOD[0], "value": "clsoed"}], "is not one of"),
    "a float for a share": ([{"id": "art-4-II.voters-share-of-population", "article": "art-4-II",
                              "effective_from": date(2027, 3, 1), "value": 0.1, "comparison": ">=",
                              "source": "LC 400/2027"}], "is a float"),
    "a value of another shape": ([{**PERIOD[0], "value": ["open"]}], "is a list where the parameter holds text"),
    "an article that is not an article id": ([{**PERIOD[0], "article": "artigo 18"}], "is not an article id"),
    "a date written as text in a file": ([{**PERIOD[0], "effective_from": "2027-03-01"}], "is not a date"),
    "two versions of one day": ([PERIOD[0], {**PERIOD[0], "value": "closed"}], "a second version"),
    "a value with a control character": ([{**PERIOD[0], "value": "open\x00"}], "control character"),
}


@pytest.mark.parametrize("entries, problem", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_amendment_is_refused_naming_the_entry_and_changes_nothing(entries, problem):
    app = new_app()
    _applied_gate(app)
    store_before, statute_before = recorded(app), app.statute
    with pytest.raises(StatuteAmendmentError) as refusal:
        app.amend_statute(OPERATOR, date(2027, 3, 1), law=FEDERAL_LAW, parameters=entries)
    problems = refusal.value.problems
    assert any(key.startswith("parameters[") for key in problems), problems
    assert any(problem in message for messages in problems.values() for message in messages), problems
    assert recorded(app) == store_before
    assert [p.version for p in app.statute.versions(GATE)] == [p.version for p in statute_before.versions(GATE)]


def test_an_amendment_without_its_law_is_refused_naming_the_law():
    app = new_app()
    with pytest.raises(StatuteAmendmentError) as refusal:
        app.amend_statute(OPERATOR, date(2027, 3, 1), law=" ", parameters=[dict(PERIOD[0]), dict(PERIOD[1])])
    assert list(refusal.value.problems) == ["law"]
    assert app.amendments() == []


def test_an_amendment_published_tomorrow_is_refused():
    app = new_app()
    with pytest.raises(Exception) as refusal:
        app.amend_statute(OPERATOR, date(2027, 10, 2), law=FEDERAL_LAW, parameters=[dict(p) for p in PERIOD])
    assert "in the future" in str(refusal.value)
    assert app.amendments() == []


def test_a_governor_may_not_amend_the_statute():
    app = new_app()
    with pytest.raises(IncompetentBodyError):
        open_period(app, Actor("gov", "governor"))
    assert app.amendments() == []


def test_a_later_amendment_may_correct_a_version_no_decision_has_applied():
    app = new_app()
    open_period(app)
    app.amend_statute(OPERATOR, date(2027, 3, 2), law="Retificação da LC federal 200/2027",
                      parameters=[{**PERIOD[1], "effective_from": date(2027, 9, 1), "value": "closed",
                                   "source": "LC federal 200/2027, retificada no DOU de 2027-03-02"}])
    versions = app.statute.versions(GATE)
    assert [v.version for v in versions][-2:] == [f"{GATE}@2027-03-01", f"{GATE}@2027-09-01"]
    assert versions[-1].introduced_by["number"] == 2
    assert [a["number"] for a in app.amendments()] == [1, 2]


# ============================================================================== through HTTP


@pytest.fixture
def api(tmp_path):
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}", clock=Clock(LATER))
    yield harness
    harness.close()


def _body(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"published_on": "2027-03-01", "law": FEDERAL_LAW,
            "parameters": [{**e, "effective_from": e["effective_from"].isoformat()} for e in entries]}


def test_the_mesa_records_a_federal_period_through_the_api_and_get_statute_shows_it_by_day(api):
    response = api.client.post("/statute/amendments", json=_body(PERIOD), headers=api.headers("assembly-mesa"))
    assert response.status_code == 201, response.get_json()
    answer = response.get_json()
    assert answer["result"] == {"amendment": 1, "versions": [f"{GATE}@2027-03-01", f"{GATE}@2027-09-01"]}
    for on, version, value in (("2027-02-28", "1996-09-13", "closed"), ("2027-03-01", "2027-03-01", "open"),
                               ("2027-08-31", "2027-03-01", "open"), ("2027-09-01", "2027-09-01", "closed")):
        shown = api.get(f"/statute?on={on}&parameter={GATE}")
        assert shown.status_code == 200, shown.get_json()
        (parameter,) = shown.get_json()["parameters"]
        assert parameter["in_force"]["version"] == f"{GATE}@{version}" and parameter["in_force"]["value"] == value
    history = parameter["history"]
    assert [row["introduced_by"]["act"] for row in history] == ["statute-data", "statute-data", "statute-amended",
                                                                "statute-amended"]
    assert history[2]["introduced_by"]["law"] == FEDERAL_LAW and history[2]["effective_until"] == "2027-08-31"
    assert history[2]["introduced_by"]["hash"] == api.get("/statute/amendments").get_json()[0]["hash"]


def test_a_governor_token_may_not_post_an_amendment(api):
    headers = api.headers("governor")  # the token is issued first
    before = api.notifications()
    response = api.client.post("/statute/amendments", json=_body(PERIOD), headers=headers)
    assert response.status_code == 403
    assert api.notifications() == before


def test_a_malformed_amendment_through_the_api_is_refused_with_each_entry_named(api):
    headers = api.headers("assembly-mesa")
    before = api.notifications()
    body = _body([{**PERIOD[0], "effective_until": date(2027, 9, 30)}, PERIOD[1]])
    body["parameters"][0]["effective_until"] = "2027-09-30"
    body["parameters"].append({"id": "art-99.anything", "article": "art-99", "effective_from": "2027-03-01",
                               "value": 1, "source": "x"})
    response = api.client.post("/statute/amendments", json=body, headers=headers)
    assert response.status_code == 422
    problem = response.get_json()
    assert problem["type"].endswith("statute-amendment-refused")
    assert "parameters[2]" in problem["errors"] and "has no parameter" in problem["errors"]["parameters[2]"][0]
    assert api.notifications() == before


def test_a_value_holding_a_lone_surrogate_is_refused_naming_its_entry_and_records_nothing(api):
    headers = api.headers("assembly-mesa")
    before = api.notifications()
    body = '{"published_on": "2027-03-01", "law": "LC 200/2027", "parameters": [{"id": "%s", "article": ' \
           '"cf-art-18-par-4", "effective_from": "2027-03-01", "value": "open\\ud800", ' \
           '"source": "LC 200/2027"}]}' % GATE
    response = api.client.post("/statute/amendments", data=body, headers={**headers,
                                                                         "Content-Type": "application/json"})
    assert response.status_code == 422, response.get_json()
    assert any("lone surrogate" in message for message in response.get_json()["errors"]["parameters[0]"])
    assert api.notifications() == before


def test_an_amendment_body_missing_its_versions_is_refused_naming_the_field(api):
    response = api.client.post("/statute/amendments", json={"published_on": "2027-03-01", "law": FEDERAL_LAW},
                               headers=api.headers("assembly-mesa"))
    assert response.status_code == 422 and response.get_json()["field"] == "parameters"


def test_an_amendment_retried_with_its_idempotency_key_is_recorded_once(api):
    headers = api.headers("assembly-mesa", **{"Idempotency-Key": "lc-200-2027"})
    first = api.client.post("/statute/amendments", json=_body(PERIOD), headers=headers)
    again = api.client.post("/statute/amendments", json=_body(PERIOD), headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert len(api.get("/statute/amendments").get_json()) == 1


# ============================================================================== the command line


def test_tramita_statute_amend_records_the_file_and_statute_show_lists_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{tmp_path / 'var' / 'tramita.sqlite'}")
    assert main(["seed-registry"]) == 0
    amendment = tmp_path / "lc-200-2027.toml"
    amendment.write_text(f'''law = "{FEDERAL_LAW}"
published_on = 2026-03-02

[[parameter]]
id = "{GATE}"
article = "cf-art-18-par-4"
effective_from = 2026-03-02
value = "open"
source = "LC federal 200/2026, art. 1º"
''', encoding="utf-8")  # dated before any day these tests run on: the command line reads the system clock
    capsys.readouterr()
    assert main(["statute", "amend", str(amendment)]) == 0
    assert f"alteração 1 registrada: {GATE}@2026-03-02" in capsys.readouterr().out
    assert main(["statute", "show", "--on", "2026-04-01", "--parameter", GATE]) == 0
    assert "2026-03-02  (alteração 1)" in capsys.readouterr().out
    assert main(["statute", "amend", str(amendment)]) == 2
    assert "já está no estatuto tal como enviada" in capsys.readouterr().err
    assert main(["verify"]) == 0  # the amendment is in the hash-chained, verified log like every act


def test_an_amendment_on_a_log_with_an_unreadable_event_is_refused_naming_it_and_records_nothing(tmp_path):
    url = f"sqlite:///{tmp_path / 'altered.sqlite'}"
    app = new_app(url)
    creation_verified(app, date(2026, 6, 1))
    import sqlite3

    with sqlite3.connect(tmp_path / "altered.sqlite") as db:  # a database administrator's edit
        db.execute("UPDATE stored_events SET state = ? WHERE rowid = 3", (b"{not json",))
    before = recorded(app)
    with pytest.raises(StatuteAmendmentError) as refusal:
        open_period(app)
    assert "event 3 of the log cannot be read" in refusal.value.problems["parameters"][0]
    assert recorded(app) == before


def test_an_amendment_read_by_two_threads_at_once_is_applied_once():
    """The statute is read from the store without its lock: a thread whose read is overtaken by another's applies
    only what the other has not (here the other runs inside the first one's read, as another thread would)."""
    from domain.application.base import StatuteInForce
    from domain.parameters import shipped_statute

    app = new_app()
    open_period(app)
    overtaken: list[Any] = []
    reads: list[int] = []

    class Overtaking:
        def select_events(self, *args: Any, **kwargs: Any) -> Any:
            records = app.recorder.select_events(*args, **kwargs)
            reads.append(len(records))
            if len(reads) == 1:
                overtaken.append(statute.current())  # another thread reads and applies the same amendment
            return records

    statute = StatuteInForce(Overtaking(), app.mapper, shipped_statute())
    current = statute.current()
    assert len(reads) == 2 and reads[0] == reads[1] > 0  # both read the amendment
    assert current is overtaken[0]  # the other applied it; the overtaken read found nothing new to apply
    assert [a["law"] for a in current.amendments] == [FEDERAL_LAW] == [a["law"] for a in app.statute.amendments]
