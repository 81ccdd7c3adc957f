"""The read models checked against the events: a database administrator edits a read-model table (a column of a
row, a row deleted, a false row added) or pushes a projection's tracking position forward; `tramita verify` exits
1 naming the table and the row's key, a served app's `/health` names the table, the scheduler's check raises a
`read-model-differs` system alert, and `tramita rebuild` repairs it (`verify` exits 0 again).

One served app over one SQLite file for the module: each test attacks, checks and rebuilds, so each leaves the
read models as the events give them (and says so first). PostgreSQL, whose snapshot and values are read
differently, has its own test below.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import date, datetime, timezone
from uuid import UUID, uuid4

import pytest

from domain.acts import Actor
from domain.demo import municipal
from projections.check import READ_MODEL_DIFFERS, check_read_models
from projections.projector import Projector
from projections.schema import PROJECTIONS
from infrastructure.store import open_store
from tests.servers import request, serving
from tests.stores import make_app
from tramita.bootstrap import build_application
from tramita.cli import main

CHECKED_AT = datetime(2026, 12, 1, 15, tzinfo=timezone.utc)
#: The column each table's UPDATE changes, and the false value (the key columns of case_municipalities are all it
#: has: its UPDATE moves the row to another key, a row missing and a row extra).
EDITS = {"cases": ("stage", "archived"), "case_municipalities": ("role", "receiving"),
         "deadlines": ("status", "met-on-time"), "freezes": ("active", 0), "alerts": ("delivery", "delivered"),
         "alert_deliveries": ("delivery", "failed"), "case_attachments": ("name", "falso.pdf"),
         "municipalities": ("name", "Falsópolis")}
TABLES = {table.name: table for projection in PROJECTIONS.values() for table in projection.tables}


def test_every_read_model_table_is_attacked_here():
    assert set(EDITS) == set(TABLES)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):  # noqa: ANN201
    """The demo (with the scheduler's alerts and one alert delivery) on a SQLite file, projected, and served."""
    folder = tmp_path_factory.mktemp("read-models")
    path = folder / "tramita.sqlite"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{path}")
        assert main(["migrate"]) == 0 and main(["seed-demo"]) == 0 and main(["scheduler", "--once"]) == 0
        app = build_application()
        [alert, *_] = [row[0] for row in sqlite3.connect(path).execute("SELECT originator_id FROM stored_events "
                                                                       "WHERE topic LIKE '%Alert.Raised'")]
        app.record_alert_delivery(alert_id_of(alert), Actor("tramita-scheduler", "scheduler"), tries=1,
                                  subscription=uuid4())
        app.close()
        assert main(["project", "--once"]) == 0
        with serving(folder) as served:
            yield path, served


def alert_id_of(stored: str) -> UUID:
    return UUID(stored)


def execute(path, sql: str, params: tuple = ()) -> list[tuple]:  # noqa: ANN001
    """What a database administrator does: a statement in a connection of their own, committed."""
    with sqlite3.connect(path) as connection:
        rows = connection.execute(sql, params).fetchall()
    connection.close()
    return rows


def verify(capsys) -> tuple[int, str]:  # noqa: ANN001
    capsys.readouterr()
    code = main(["verify"])
    return code, capsys.readouterr().out


def health(served) -> dict:  # noqa: ANN001
    status, _, body = request(f"{served.url}/health")
    assert status == 200
    return json.loads(body)["read_models"]


def first_row(path, table: str, unlike: tuple[str, object] | None = None) -> dict:  # noqa: ANN001
    """The table's first row by its key (whose column `unlike[0]` is not `unlike[1]`)."""
    columns = TABLES[table].column_names
    where, params = (f"WHERE {unlike[0]} IS NOT ? ", (unlike[1],)) if unlike else ("", ())
    [row] = execute(path, f"SELECT {', '.join(columns)} FROM {table} {where}ORDER BY {', '.join(TABLES[table].key)} "
                          "LIMIT 1", params)
    return dict(zip(columns, row))


def named(row: dict, table: str) -> str:
    """How verify names a row: `table (key=value, ...)`."""
    return f"{table} (" + ", ".join(f"{column}={row[column]}" for column in TABLES[table].key) + ")"


def attack(path, table: str, how: str) -> tuple[dict, str]:  # noqa: ANN001
    """Edit the table as `how` says; the row attacked and what verify says of it (Portuguese)."""
    row = first_row(path, table, EDITS[table] if how == "update" else None)
    where = " AND ".join(f"{column} = ?" for column in TABLES[table].key)
    key = tuple(row[column] for column in TABLES[table].key)
    if how == "update":
        column, value = EDITS[table]
        execute(path, f"UPDATE {table} SET {column} = ? WHERE {where}", (value, *key))
        if column in TABLES[table].key:
            return row, "linha ausente"
        return row, f"as colunas {column} diferem"
    if how == "delete":
        execute(path, f"DELETE FROM {table} WHERE {where}", key)
        return row, "linha ausente (os eventos a dão)"
    false = {**row, **{column: (999 if isinstance(row[column], int) else f"falso-{column}")
                       for column in TABLES[table].key}}
    execute(path, f"INSERT INTO {table} ({', '.join(false)}) VALUES ({', '.join('?' * len(false))})",
            tuple(false.values()))
    return false, "linha a mais (nenhum evento a dá)"


@pytest.mark.parametrize("how", ["update", "delete", "insert"])
@pytest.mark.parametrize("table", sorted(EDITS))
def test_a_read_model_row_edited_in_the_database_is_named_by_verify_and_health_until_rebuild_repairs_it(
        deployment, capsys, monkeypatch, table, how):
    path, served = deployment
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{path}")
    assert verify(capsys)[0] == 0
    row, said = attack(path, table, how)
    code, out = verify(capsys)
    assert code == 1
    assert f"{named(row, table)}: {said}" in out and "DIFEREM DOS EVENTOS" in out
    assert "Execute `tramita rebuild`" in out
    found = health(served)
    assert table in found["differing"] and any(
        s["table"] == table and s["key"] == {k: row[k] for k in TABLES[table].key} for s in found["sample"])
    assert main(["rebuild"]) == 0
    assert health(served)["differing"] == {}
    code, out = verify(capsys)
    assert code == 0 and "nenhuma diferença" in out


def test_a_tracking_position_pushed_forward_hides_a_new_case_until_verify_names_it_and_rebuild_repairs_it(
        deployment, capsys, monkeypatch):
    path, served = deployment
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{path}")
    assert verify(capsys)[0] == 0
    execute(path, "UPDATE projection_tracking SET position = position + 100 WHERE projection = 'cases'")
    app = build_application()
    opened = app.open_case(municipal("mayor", "1200401"), date(2026, 11, 20), kind="district_creation",
                           municipalities=["1200401"], district="Vila Nova")
    app.close()
    assert main(["project", "--once"]) == 0  # the projector believes the cases were projected: none is written
    assert not execute(path, "SELECT 1 FROM cases WHERE number = ?", (opened.number,))
    code, out = verify(capsys)
    case_id = opened.case_id
    assert code == 1
    assert "projection_tracking (projection=cases): posição além do último evento" in out
    assert f"cases (case_id={case_id}): linha ausente (os eventos a dão)" in out
    assert {"projection_tracking", "cases", "case_municipalities"} <= set(health(served)["differing"])
    assert "cases" in health(served)["ahead"]
    assert main(["rebuild"]) == 0
    assert execute(path, "SELECT number FROM cases WHERE number = ?", (opened.number,)) == [(opened.number,)]
    assert health(served)["differing"] == {} and health(served)["ahead"] == []
    assert verify(capsys)[0] == 0


def test_the_json_verdict_names_the_table_the_key_and_the_columns(deployment, capsys, monkeypatch):
    path, _ = deployment
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{path}")
    row = first_row(path, "municipalities")
    execute(path, "UPDATE municipalities SET name = 'Falsópolis', frozen = 1 - frozen WHERE code = ?", (row["code"],))
    capsys.readouterr()
    assert main(["verify", "--json"]) == 1
    checked = json.loads(capsys.readouterr().out)["read_models"]
    assert checked["ok"] is False and checked["differing"]["municipalities"] == {"rows": 1, "sample": [{
        "table": "municipalities", "key": {"code": row["code"]}, "kind": "changed", "columns": ["name", "frozen"]}]}
    assert main(["rebuild", "--projection", "municipalities"]) == 0
    assert main(["verify", "--json"]) == 0


def test_the_scheduler_s_check_raises_a_read_model_differs_alert_naming_the_table_and_the_pages_say_so(
        deployment, capsys, monkeypatch):
    from scheduler.read_models import check_read_models as scheduled_check

    path, served = deployment
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{path}")
    row = first_row(path, "freezes")
    execute(path, "UPDATE freezes SET active = 0, lifted_on = '2026-01-01' WHERE municipality = ? AND case_id = ?",
            (row["municipality"], row["case_id"]))
    lines = []
    app = build_application()
    scheduled_check(app, f"sqlite:///{path}", lambda event, **fields: lines.append((event, fields)))
    scheduled_check(app, f"sqlite:///{path}", lambda event, **fields: lines.append((event, fields)))  # once
    app.close()
    assert [fields["table"] for event, fields in lines if event == "read-model-differs"] == ["freezes", "freezes"]
    assert main(["project", "--once"]) == 0
    alerts = execute(path, "SELECT subject, message FROM alerts WHERE kind = ?", (READ_MODEL_DIFFERS,))
    assert len(alerts) == 1 and alerts[0][0].startswith("freezes:") and "freezes" in alerts[0][1]
    assert ("Os dados exibidos diferem do registro de eventos em: Congelamentos do Art. 38. Execute "
            "`tramita rebuild`.") in health_page_banner(served)
    assert main(["rebuild"]) == 0
    assert "diferem do registro de eventos" not in health_page_banner(served)
    assert verify(capsys)[0] == 0


def health_page_banner(served) -> str:  # noqa: ANN001
    """The cases page an auditor signed in on the served app reads, in Portuguese (the pages' default)."""
    import http.cookiejar
    import re
    import urllib.parse
    import urllib.request

    from tramita.cli.access import cli_actor

    app = build_application()
    try:
        token = app.issue_token(cli_actor(), name=f"auditor-{uuid4().hex[:6]}", role="auditor").token
    finally:
        app.close()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    home = opener.open(f"{served.url}/", timeout=30).read().decode()
    csrf = re.search(r'name="csrf" value="([^"]+)"', home).group(1)
    form = urllib.parse.urlencode({"csrf": csrf, "token": token, "proximo": "/processos"}).encode()
    return opener.open(f"{served.url}/sessao", data=form, timeout=30).read().decode()


@pytest.mark.postgres
def test_on_postgresql_an_edited_deleted_and_added_row_are_named_and_a_rebuild_repairs_them(new_database_url):
    url = new_database_url("postgres")
    app = make_app(url)
    app.open_case(municipal("mayor", "1200401"), date(2026, 11, 20), kind="district_creation",
                  municipalities=["1200401"], district="Vila Nova")
    store = open_store(url)
    projector = Projector(app, store)
    projector.migrate()
    projector.catch_up()
    assert check_read_models(app, store, CHECKED_AT).ok
    store.query("UPDATE municipalities SET name = 'Falsópolis' WHERE code = '1200401'")
    store.query("DELETE FROM case_municipalities WHERE municipality = '1200401'")
    store.query("INSERT INTO deadlines (case_id, deadline, status) VALUES ('falso', 'falso', 'open')")
    found = check_read_models(app, store, CHECKED_AT)
    assert {(d.table, d.kind) for d in found.differences} == {
        ("municipalities", "changed"), ("case_municipalities", "missing"), ("deadlines", "extra")}
    assert [d.columns for d in found.differences if d.table == "municipalities"] == [("name",)]
    projector.rebuild()
    assert check_read_models(app, store, CHECKED_AT).ok


def test_alerts_the_scheduler_records_before_the_projector_reads_them_are_no_difference(new_database_url):
    """A deadline's `alerts_due_on` is null once its `missed` alert is recorded; an alert recorded but not yet
    projected, with the deadline's rows written before it or after it, is the projector being behind, not an
    edit."""
    from scheduler.scan import scan
    from tests.test_scheduler_processes import FEIJO, unanswered_requisitions

    url = new_database_url("sqlite")
    app = make_app(url)
    unanswered_requisitions(app, FEIJO, ("ibge", "tre"))
    store = open_store(url)
    projector = Projector(app, store)
    projector.migrate()
    projector.catch_up()
    before = projector.positions()["deadlines"]
    assert scan(app, store, thresholds=(5, 1), projector=projector).raised  # missed alerts, not yet projected
    assert check_read_models(app, store, CHECKED_AT).ok
    projector.catch_up()  # the deadlines' rows as a batch writes them once the alerts are recorded ...
    store.query("UPDATE projection_tracking SET position = ? WHERE projection = 'deadlines'", (before,))
    assert execute_on(store, "SELECT count(*) FROM deadlines WHERE status = 'open' AND alerts_due_on IS NULL") > 0
    assert check_read_models(app, store, CHECKED_AT).ok  # ... before that batch's position reached the alerts


def execute_on(store, sql: str) -> int:  # noqa: ANN001
    [(count,)] = store.query(sql)
    return count


def test_a_projection_failure_deleted_from_its_table_is_named_and_the_failing_rows_are_not_called_different(
        database_url, monkeypatch):
    """An event edited to hold an object where a row has text: the projector records that aggregate's failure and
    leaves its rows as they were; the check expects the failure listed, compares the rest, and names the failure's
    row once an administrator deletes it (the failure no longer shown by `/health`)."""
    from tests.test_projector_poison import XAPURI, edit_last_stored_event, open_district

    monkeypatch.setenv("TRAMITA_DATABASE_URL", database_url)
    assert main(["migrate"]) == 0 and main(["seed-demo"]) == 0
    app = make_app(database_url, seed=False)
    store = open_store(database_url)
    frozen, _ = edit_last_stored_event(app, store, "domain.registry:Municipality.Frozen", case_number={"x": 1})
    open_district(app, XAPURI, "Vila Jurupari")
    assert main(["project", "--once"]) == 0
    assert [(f["projection"], f["aggregate_id"]) for f in Projector(app, store).failures()] == [("freezes", frozen)]
    assert check_read_models(app, store, CHECKED_AT).ok
    store.query("DELETE FROM projection_failures")
    found = check_read_models(app, store, CHECKED_AT)
    assert [d.as_dict() for d in found.differences] == [{
        "table": "projection_failures", "key": {"projection": "freezes", "aggregate_id": frozen}, "kind": "missing",
        "columns": []}]
    assert main(["rebuild"]) == 0
    assert check_read_models(app, store, CHECKED_AT).ok
    store.close()


def test_a_check_while_the_projector_follows_new_acts_finds_no_difference(new_database_url):
    """The positions and the live rows are read in one snapshot: a projector writing batches meanwhile (three
    notifications each) makes no row look different, whichever batch the check falls between."""
    import threading

    from tests.test_projector_poison import open_district

    url = new_database_url("sqlite")
    app = make_app(url)
    store = open_store(url)
    Projector(app, store).migrate()
    follower = Projector(make_app(url, seed=False), open_store(url), batch_size=3)
    stop = threading.Event()
    thread = threading.Thread(target=follower.run, args=(stop,), kwargs={"poll_seconds": 0.01, "log": lambda _: None})
    thread.start()
    try:
        results = []
        for n, code in enumerate(("1200013", "1200054", "1200104", "1200138", "1200179", "1200203")):
            open_district(app, code, f"Vila Nova {n}")
            results += [check_read_models(app, store, CHECKED_AT) for _ in range(3)]
    finally:
        stop.set()
        thread.join(timeout=60)
    assert [r.as_dict()["differing"] for r in results if not r.ok] == []
    assert len({tuple(sorted(r.positions.values())) for r in results}) > 1  # the check fell between batches


def test_a_read_model_value_made_a_blob_or_text_that_is_not_utf8_is_named_as_a_difference_not_a_crash(
        tmp_path, monkeypatch):
    import sqlite3

    from infrastructure.store import open_store
    from projections.check import check_read_models
    from tramita.bootstrap import build_application, system_clock
    from tramita.cli import main as cli

    url = f"sqlite:///{tmp_path / 'tramita.sqlite'}"
    monkeypatch.setenv("TRAMITA_DATABASE_URL", url)
    assert cli(["migrate"]) == 0 and cli(["seed-demo"]) == 0 and cli(["project", "--once"]) == 0
    with sqlite3.connect(tmp_path / "tramita.sqlite") as database:
        database.execute("UPDATE municipalities SET name = CAST(name AS BLOB) WHERE code = '1200302'")
        database.execute("UPDATE cases SET stage = CAST(X'FF' AS TEXT) WHERE number = 'LC35-1991-0001'")
    app, store = build_application(url), open_store(url)
    try:
        found = check_read_models(app, store, system_clock()).as_dict()
    finally:
        store.close()
        app.close()
    assert not found["ok"]
    rows = {table: [row["columns"] for row in entry["sample"]] for table, entry in found["differing"].items()}
    assert rows["municipalities"] == [["name"]] and rows["cases"] == [["stage"]]
