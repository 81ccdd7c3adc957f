"""No event stops the projector: what the store already holds is projected or, if it cannot be, recorded, alerted
and skipped alone, on SQLite and PostgreSQL; `tramita project`, `rebuild` and `scheduler --once` all complete."""

from __future__ import annotations

import json
import sqlite3
from datetime import date

import pytest
from eventsourcing.persistence import StoredEvent

from tramita.web import create_app
from tramita.cli import main
from domain.acts import Actor
from domain.demo import IBGE, municipal
from projections import queries
from projections.failures import PROJECTION_FAILURE
from projections.projector import Projector
from projections.rows import ROWS
from infrastructure.store import open_store
from tests.stores import make_app
from tests.test_projections import snapshot

XAPURI, ACRELANDIA = "1200708", "1200013"
POISONED_DISTRICT = "Vila\x00Jurupari"
TOPIC_OF_A_LATER_VERSION = "domain.case:Case.ActOfALaterVersion"


@pytest.fixture
def demo(database_url, monkeypatch, capsys):
    """The demo seeded and projected through the CLI on a fresh store; the application, the projector."""
    monkeypatch.setenv("TRAMITA_DATABASE_URL", database_url)
    assert main(["migrate"]) == 0
    assert main(["seed-demo"]) == 0
    capsys.readouterr()
    app = make_app(database_url, seed=False)
    store = open_store(database_url)
    yield app, Projector(app, store), database_url
    store.close()


def open_district(app, code: str, district: str) -> str:
    """A mayor files a district creation, as the application records it today (the API bypassed)."""
    return app.open_case(municipal("mayor", code), date(2026, 3, 2), kind="district_creation",
                         municipalities=[code], district=district).number


def scheduler_lines(capsys) -> list[dict]:
    capsys.readouterr()
    assert main(["scheduler", "--once"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def system_alerts(store) -> list[dict]:
    return [row for row in queries.alerts(store) if row["case_id"] is None]


def test_a_nul_stored_in_a_district_name_is_projected_as_u_fffd_and_stops_no_command(demo, capsys):
    app, projector, _ = demo
    poisoned = open_district(app, XAPURI, POISONED_DISTRICT)
    after = open_district(app, ACRELANDIA, "Vila Nova")  # an act recorded after the poison

    assert main(["project", "--once"]) == 0
    assert "não puderam ser projetados" not in capsys.readouterr().err
    rows = {row["number"]: row for row in queries.cases(projector.store)}
    assert rows[poisoned]["district"] == "Vila\ufffdJurupari"
    assert app.get_case(poisoned).district == POISONED_DISTRICT  # the event keeps what was filed
    assert rows[after]["district"] == "Vila Nova"
    assert set(projector.positions().values()) == {app.recorder.max_notification_id()}
    followed = snapshot(projector.store)

    assert main(["rebuild"]) == 0
    assert snapshot(projector.store) == followed
    lines = scheduler_lines(capsys)
    assert [line["event"] for line in lines if line["event"] == "scan"] == ["scan"]
    assert projector.failures() == [] and system_alerts(projector.store) == []


def test_an_event_no_projection_can_apply_is_recorded_alerted_once_and_skipped_alone(demo, capsys):
    app, projector, url = demo
    poisoned = app.get_case("LC35-2026-0003")  # its missed deadlines are due an alert at every scan
    [stored] = app.recorder.select_events(poisoned.id, desc=True, limit=1)
    app.recorder.insert_events([StoredEvent(poisoned.id, stored.originator_version + 1, TOPIC_OF_A_LATER_VERSION,
                                            b"{}")])
    poison_at = app.recorder.max_notification_id()
    after = open_district(app, XAPURI, "Vila Jurupari")

    assert main(["project", "--once"]) == 0
    report = capsys.readouterr().err
    assert "3 agregado(s) não puderam ser projetados" in report and str(poisoned.id) in report
    failures = {f["projection"]: f for f in projector.failures()}
    assert set(failures) == {"cases", "deadlines", "attachments"}  # the three projections that read cases
    for failure in failures.values():
        assert (failure["aggregate_id"], failure["aggregate_kind"], failure["notification_id"], failure["topic"]) \
            == (str(poisoned.id), "case", poison_at, TOPIC_OF_A_LATER_VERSION)
        assert "TopicError" in failure["error"]
    rows = {row["number"]: row for row in queries.cases(projector.store)}
    assert rows["LC35-2026-0003"]["version"] == poisoned.version  # as of its last event before the poison
    assert rows[after]["district"] == "Vila Jurupari"  # every other row is current
    assert set(projector.positions().values()) == {app.recorder.max_notification_id()}

    alerts = system_alerts(projector.store)
    assert sorted(a["subject"] for a in alerts) == [f"attachments:{poisoned.id}", f"cases:{poisoned.id}",
                                                    f"deadlines:{poisoned.id}"]
    assert {a["kind"] for a in alerts} == {PROJECTION_FAILURE}
    assert all(a["case_number"] is None and a["due_on"] is None and a["article"] is None for a in alerts)
    assert f"notification {poison_at}" in alerts[0]["message"]

    app.recorder.insert_events([StoredEvent(poisoned.id, stored.originator_version + 2, TOPIC_OF_A_LATER_VERSION,
                                            b"{}")])
    recorded = {(poison_at, app.recorder.max_notification_id())}  # the first event that failed, and the latest
    assert main(["project", "--once"]) == 0
    assert {(f["notification_id"], f["last_notification_id"]) for f in projector.failures()} == recorded
    assert main(["rebuild"]) == 0
    assert "3 agregado(s) não puderam ser projetados" in capsys.readouterr().err
    assert {(f["projection"], f["notification_id"], f["last_notification_id"]) for f in projector.failures()} == {
        (projection, *ids) for projection in ("cases", "deadlines", "attachments") for ids in recorded}
    assert len(system_alerts(projector.store)) == 3  # raised again, recorded once

    lines = scheduler_lines(capsys)
    logged = [line for line in lines if line["event"] == "alert" and line["kind"] == PROJECTION_FAILURE]
    assert sorted(line["subject"] for line in logged) == sorted(a["subject"] for a in alerts)
    assert all(line["case_id"] is None and line["due_on"] is None for line in logged)
    assert [line["case_id"] for line in lines if line["event"] == "case-unreadable"] == [str(poisoned.id)]
    [scan] = [line for line in lines if line["event"] == "scan"]
    assert (scan["system_alerts"], scan["unreadable"]) == (3, 1)

    client = create_app({"TRAMITA_DATABASE_URL": url}, application=app).test_client()
    health = client.get("/health").get_json()
    assert {f["projection"] for f in health["failures"]} == {"cases", "deadlines", "attachments"}
    token = app.issue_token(Actor("test", "token-administrator"), name="Tribunal de Contas", role="auditor").token
    listed = client.get("/alerts", headers={"Authorization": f"Bearer {token}"}).get_json()["items"]
    assert sorted(a["subject"] for a in listed if a["case_id"] is None) == sorted(a["subject"] for a in alerts)


def test_a_row_the_database_refuses_leaves_that_aggregate_alone_and_is_cleared_once_written(demo, monkeypatch,
                                                                                           capsys):
    app, projector, _ = demo
    refused = open_district(app, XAPURI, "Vila Jurupari")
    other = open_district(app, ACRELANDIA, "Vila Nova")
    refused_id = str(app.get_case(refused).id)
    case_rows = ROWS["cases"]

    def out_of_range(case):  # no INTEGER column takes 2**70, on either store
        return [row[:-3] + (2 ** 70,) + row[-2:] if str(case.id) == refused_id else row for row in case_rows(case)]

    monkeypatch.setitem(ROWS, "cases", out_of_range)
    assert main(["project", "--once"]) == 0
    [failure] = projector.failures()
    assert (failure["projection"], failure["aggregate_id"]) == ("cases", refused_id)
    numbers = {row["number"] for row in queries.cases(projector.store)}
    assert other in numbers and refused not in numbers
    assert set(projector.positions().values()) == {app.recorder.max_notification_id()}
    assert [a["subject"] for a in system_alerts(projector.store)] == [f"cases:{refused_id}"]

    monkeypatch.setitem(ROWS, "cases", case_rows)
    app.record_finding(refused, IBGE, date(2026, 3, 6), item="art-31-I", value=45, document="Laudo art-31-I")
    assert main(["project", "--once"]) == 0
    capsys.readouterr()
    assert projector.failures() == []
    assert refused in {row["number"] for row in queries.cases(projector.store)}
    assert len(system_alerts(projector.store)) == 1  # the alert stays: it happened


def edit_last_stored_event(app, store, topic: str, **changed) -> tuple[str, dict]:
    """What a database administrator can do: change fields of the state of the last stored event of `topic` in
    place (valid JSON still, so the event decodes and applies); the id of its aggregate and the state before."""
    table, column = app.recorder.events_table_name, "rowid" if store.dialect == "sqlite" else "notification_id"
    [(number, state)] = store.query(f"SELECT {column}, state FROM {table} WHERE topic = ? "
                                    f"ORDER BY {column} DESC LIMIT 1", (topic,))
    with store.transaction() as tx:
        tx.execute(f"UPDATE {table} SET state = ? WHERE {column} = ?",
                   (json.dumps({**json.loads(bytes(state)), **changed}).encode(), number))
    return str(app.recorder.select_notifications(number, 1)[0].originator_id), json.loads(bytes(state))


def test_an_event_edited_to_hold_an_object_where_a_row_has_text_is_recorded_and_skipped_alone(demo, capsys):
    """The database driver refuses such a value as the statement's fault, not a row's: it stopped every
    projection, batch after batch, and the rebuild."""
    app, projector, _ = demo
    frozen, before = edit_last_stored_event(app, projector.store, "domain.registry:Municipality.Frozen",
                                            case_number={"edited": True})
    after = open_district(app, XAPURI, "Vila Jurupari")

    assert main(["project", "--once"]) == 0
    assert "1 agregado(s) não puderam ser projetados" in capsys.readouterr().err
    [failure] = projector.failures()
    assert (failure["projection"], failure["aggregate_id"], failure["aggregate_kind"]) == (
        "freezes", frozen, "municipality")
    assert failure["error"].startswith("UnstorableValue: a row cannot hold a value of type dict")
    assert after in {row["number"] for row in queries.cases(projector.store)}
    frozen_by = {row[0] for row in projector.store.query("SELECT case_number FROM freezes")}
    assert before["case_number"] not in frozen_by and {"LC35-1991-0001", "LC35-2026-0001"} <= frozen_by
    assert set(projector.positions().values()) == {app.recorder.max_notification_id()}
    followed = snapshot(projector.store)

    assert main(["rebuild"]) == 0
    assert [(f["projection"], f["aggregate_id"]) for f in projector.failures()] == [("freezes", frozen)]
    assert snapshot(projector.store) == followed


def demo_with_an_edited_row(tmp_path, monkeypatch, edit: str, version: int):  # noqa: ANN001, ANN201
    """The demo on a SQLite file, unsigned, with the 1991 creation's event `version` edited by `SET {edit}`:
    the url, the application and the damaged case's id."""
    url = f"sqlite:///{tmp_path / 'tramita.sqlite'}"
    monkeypatch.setenv("TRAMITA_DATABASE_URL", url)
    for variable in ("TRAMITA_SIGNING_KEY", "TRAMITA_VERIFIER_KEY", "TRAMITA_WITNESS_DIR"):
        monkeypatch.delenv(variable, raising=False)
    assert main(["migrate"]) == 0 and main(["seed-demo"]) == 0
    app = make_app(url, seed=False)
    damaged = app.resolve_case("LC35-1991-0001")
    with sqlite3.connect(tmp_path / "tramita.sqlite") as database:
        database.execute(f"UPDATE stored_events SET {edit} WHERE originator_id = ? AND originator_version = ?",
                         (damaged.hex, version))
        assert database.total_changes == 1
    return url, app, damaged


def test_a_stored_state_edited_to_hold_a_lone_surrogate_is_named_altered_and_stops_nothing(tmp_path, monkeypatch,
                                                                                        capsys):
    """Valid JSON and valid UTF-8 (`"\\ud800"` escaped), but no text a hash can encode: `verify` crashed on it."""
    demo_with_an_edited_row(tmp_path, monkeypatch, "state = CAST(replace(CAST(state AS TEXT), '\"Extrema', "
                            "'\"\\ud800') AS BLOB)", 1)
    capsys.readouterr()
    assert main(["project", "--once"]) == 0
    assert main(["rebuild"]) == 0
    capsys.readouterr()
    assert main(["verify"]) == 1
    out = capsys.readouterr().out
    assert "ALTERED: LC35-1991-0001, event 1" in out and "Traceback" not in out


@pytest.mark.parametrize("edit", [
    "topic = CAST(X'ff' AS TEXT)",  # a topic that is not UTF-8
    "originator_id = 'x' || originator_id",  # an originator id that is not a UUID
    "originator_id = CAST(X'ff' AS TEXT)",  # an originator id that is not UTF-8
    "state = CAST(X'ff' AS BLOB) || state",  # `||` makes the state text, and text that is not UTF-8
], ids=["topic not UTF-8", "originator id not a UUID", "originator id not UTF-8", "state text not UTF-8"])
def test_a_row_the_library_cannot_read_stops_neither_the_projector_nor_the_rebuild_nor_verify(tmp_path, monkeypatch,
                                                                                             capsys, edit):
    """SQLite's columns take any value, and the library raised on the whole page of the log holding such a row:
    the projector and the rebuild stopped there for good, and `verify` could not read the store. PostgreSQL's
    typed columns hold no such row."""
    url, app, damaged = demo_with_an_edited_row(tmp_path, monkeypatch, edit, 10)
    capsys.readouterr()

    assert main(["project", "--once"]) == 0
    assert str(damaged) in capsys.readouterr().err  # its events after the gap cannot be applied: named
    store = open_store(url)
    projector = Projector(app, store)
    assert set(projector.positions().values()) == {app.recorder.max_notification_id()}
    assert {"LC35-2026-0001", "LC35-2026-0003"} <= {row["number"] for row in queries.cases(store)}
    followed = snapshot(store)
    for batch in ([], ["--batch-size", "7"]):  # read by aggregate 7 rows a page: the damaged row inside a page
        assert main(["rebuild", *batch]) == 0
        assert str(damaged) in capsys.readouterr().err
        assert snapshot(store) == followed
    store.close()

    assert main(["verify"]) == 1
    assert "ALTERED: LC35-1991-0001, event 1" in capsys.readouterr().out.split("VERDICT")[1]  # event 10 or 11


#: The demo's alerts at the first scan: the TRE's and the IBGE's missed answers, and the IBGE's refusal (Art. 10).
DEMO_ALERTS = [("LC35-2026-0003", "ibge", "breach"), ("LC35-2026-0003", "ibge", "missed"),
               ("LC35-2026-0003", "tre", "missed")]


@pytest.mark.parametrize("edit", [
    "UPDATE deadlines SET due_on = 'soon' WHERE deadline = 'requisition-answer:R1'",
    "UPDATE deadlines SET due_on = NULL WHERE deadline = 'requisition-answer:R1'",
    "UPDATE cases SET breaches = 'oops' WHERE breaches IS NOT NULL",
    "UPDATE cases SET breaches = '5' WHERE breaches IS NOT NULL",
    "INSERT INTO alerts (alert_id, raised_at) VALUES ('11111111-1111-1111-1111-111111111111', '2026-01-01')",
    "INSERT INTO alerts (alert_id, raised_at) VALUES ('not-an-id', '2026-01-01')",
], ids=["due day not a date", "due day null", "breaches not JSON", "breaches not a list", "alert row of no alert",
        "alert row not an id"])
def test_a_read_model_row_edited_wrong_stops_no_scan_and_its_case_is_judged_whole(demo, capsys, edit):
    """The scan read such a row and raised: every scan failed, and the resident scheduler exited at start-up."""
    _, projector, _ = demo
    assert main(["project", "--once"]) == 0
    with projector.store.transaction() as tx:
        tx.execute(edit)
    lines = scheduler_lines(capsys)
    assert [line["event"] for line in lines if line["event"] == "scan"] == ["scan"]
    assert sorted((a["case_number"], a["who"], a["kind"]) for a in lines if a["event"] == "alert") == DEMO_ALERTS
    # What is left to deliver is read from the alert events, not from the alerts table: a row there that names no
    # alert is no alert to deliver, so none is unreadable.
    assert [line for line in lines if line["event"] == "alert-unreadable"] == []
