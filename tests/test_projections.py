"""The read models on SQLite and PostgreSQL: what they show, that following the log equals a rebuild, and the
deadline statuses on the day before, of and after a due date."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import date

import pytest

from domain.acts import Actor
from domain.demo import MESA, seed_demo
from projections import queries
from projections.projector import Projector
from projections.schema import PROJECTIONS
from infrastructure.store import NotMigratedError, Store, open_store
from tests.stores import make_app
from tests.test_article_rules import requisition_received

SCHEDULER = Actor("tramita-scheduler", "scheduler")
FEIJO, PLACIDO, GUIOMARD = "1200302", "1200385", "1200450"


def silent(_: str) -> None:
    pass


@pytest.fixture
def stores() -> Iterator[Callable[[str], Store]]:
    opened: list[Store] = []

    def open_(url: str) -> Store:
        opened.append(open_store(url))
        return opened[-1]

    yield open_
    for store in opened:
        store.close()


@pytest.fixture
def demo(database_url: str, stores: Callable[[str], Store]):
    """The demo cases on a fresh store, with the projections migrated and caught up."""
    app = make_app(database_url)
    seed_demo(app, silent)
    projector = Projector(app, stores(database_url))
    projector.migrate()
    projector.catch_up()
    return app, projector


def snapshot(store: Store) -> dict[str, list[tuple]]:
    """Every projection table's rows, in key order."""
    return {table.name: [tuple(row) for row in store.query(
        f"SELECT {', '.join(table.column_names)} FROM {table.name} ORDER BY {', '.join(table.key)}")]
        for projection in PROJECTIONS.values() for table in projection.tables}


def test_the_cases_table_shows_each_demo_case_with_its_stage_impediment_and_last_act(demo):
    app, projector = demo
    rows = {row["number"]: row for row in queries.cases(projector.store)}
    assert set(rows) == {"LC35-1991-0001", "LC35-2026-0001", "LC35-2026-0002", "LC35-2026-0003"}
    assert rows["LC35-1991-0001"]["stage"] == "concluded"
    assert rows["LC35-1991-0001"]["name"] == "Vila Extrema"
    assert rows["LC35-1991-0001"]["last_act"] == "CaseConcluded"
    feijo_case = rows["LC35-2026-0001"]
    assert feijo_case["open_impediments"] == 1
    assert feijo_case["impediments"][0]["article"] == "cf-art-18-par-4"
    assert feijo_case["frozen_municipalities"] == [FEIJO]
    case = app.get_case("LC35-2026-0001")
    assert feijo_case["version"] == case.version and feijo_case["last_act_on"] == case.last_act_on.isoformat()


def test_cases_are_found_by_kind_stage_municipality_and_a_word_of_their_names(demo):
    _, projector = demo
    numbers = lambda **f: [r["number"] for r in queries.cases(projector.store, **f)]  # noqa: E731
    assert numbers(stage="concluded") == ["LC35-1991-0001"]
    assert numbers(municipality=PLACIDO) == ["LC35-1991-0001"]
    assert numbers(text="extrema") == ["LC35-1991-0001"]
    assert numbers(text="FEIJO") == numbers(municipality=FEIJO)
    assert "LC35-2026-0001" in numbers(text="feijó")
    assert numbers(kind="no-such-kind") == []
    assert numbers(limit=1, offset=1) == ["LC35-2026-0001"]


def test_art_38_freezes_show_the_active_lock_on_feijo_and_the_lifted_ones_of_1992(demo):
    _, projector = demo
    active = queries.freezes(projector.store, active=True)
    assert [(f["municipality_name"], f["case_number"], f["since"]) for f in active] == \
        [("Feijó", "LC35-2026-0001", "2026-03-02"), ("Tarauacá", "LC35-2026-0003", "2026-10-01")]
    lifted = queries.freezes(projector.store, active=False)
    assert {f["municipality"] for f in lifted} == {PLACIDO, GUIOMARD}
    assert all(f["lifted_on"] == "1992-01-21" for f in lifted)


def test_the_municipalities_table_has_the_registry_the_new_municipality_and_freeze_state(demo):
    app, projector = demo
    rows = {m["code"]: m for m in queries.municipalities(projector.store)}
    new = app.get_case("LC35-1991-0001").new_municipality
    assert rows[new]["name"] == "Vila Extrema" and rows[new]["created_by_case"] is not None
    assert rows[new]["districts"] == ["Vila Extrema (sede)", "Nova Califórnia"]
    assert rows[FEIJO]["frozen"] is True and rows[FEIJO]["frozen_by"] == ["LC35-2026-0001"]
    assert rows[PLACIDO]["frozen"] is False
    assert rows[PLACIDO]["figures"]["population"]["value"] == \
        app.municipality(PLACIDO).figure_on("population", date(2026, 1, 1)).value
    assert [m["code"] for m in queries.municipalities(projector.store, text="placido")] == [PLACIDO]


def test_the_ledger_delivered_late_is_met_late_with_its_days_and_closing_act(demo):
    _, projector = demo
    rows = {r["deadline"]: r for r in queries.deadlines(projector.store, today=date(2026, 11, 30), due_soon_days=5,
                                                         case_id=str(demo[0].resolve_case("LC35-1991-0001")))}
    assert rows[f"ledger-transfer:{GUIOMARD}"]["status"] == "met-late"
    assert rows[f"ledger-transfer:{GUIOMARD}"]["days_late"] == 18
    assert rows[f"ledger-transfer:{PLACIDO}"]["status"] == "met-on-time"
    assert rows["organic-law"]["closed_by"] is not None


@pytest.fixture
def requisition(database_url: str, stores: Callable[[str], Store]):
    """The worked example of docs/law/deadlines.md: an Art. 10 requisition received Fri 2025-10-17, due Tue
    2025-11-18, unanswered."""
    app = make_app(database_url)
    projector = Projector(app, stores(database_url))
    projector.migrate()
    number, _ = requisition_received(app)
    projector.catch_up()
    rows = [r for r in queries.deadlines(projector.store, today=date(2025, 10, 17), due_soon_days=5)
            if r["case_number"] == number]
    assert len(rows) == 1 and rows[0]["article"] == "art-10" and rows[0]["due_on"] == "2025-11-18"
    return app, projector, rows[0]


def test_an_open_deadline_is_due_soon_on_its_last_day_and_missed_the_day_after(requisition):
    app, projector, deadline = requisition
    due = date.fromisoformat(deadline["due_on"])
    status_on = lambda day, soon=5: {  # noqa: E731
        r["deadline"]: r["status"] for r in queries.deadlines(projector.store, today=day, due_soon_days=soon,
                                                              case_id=deadline["case_id"])}[deadline["deadline"]]
    assert status_on(date.fromordinal(due.toordinal() - 6)) == "open"
    assert status_on(date.fromordinal(due.toordinal() - 5)) == "due-soon"
    assert status_on(date.fromordinal(due.toordinal() - 1)) == "due-soon"
    assert status_on(due) == "due-soon"
    assert status_on(date.fromordinal(due.toordinal() + 1)) == "missed"
    by_status = lambda status, day: [  # noqa: E731
        r["deadline"] for r in queries.deadlines(projector.store, today=day, due_soon_days=5, status=status,
                                                 case_id=deadline["case_id"])]
    assert by_status("missed", due) == [] and by_status("due-soon", due) == [deadline["deadline"]]
    assert by_status("missed", date.fromordinal(due.toordinal() + 1)) == [deadline["deadline"]]
    assert by_status("open", date.fromordinal(due.toordinal() - 6)) == [deadline["deadline"]]
    due_by = lambda day: [r["deadline"] for r in queries.deadlines(  # noqa: E731
        projector.store, today=date(2025, 10, 20), due_soon_days=5, due_before=day, case_id=deadline["case_id"])]
    assert due_by(date.fromordinal(due.toordinal() - 1)) == []
    assert due_by(due) == due_by(date.fromordinal(due.toordinal() + 1)) == [deadline["deadline"]]
    assert [r["deadline"] for r in queries.open_deadlines_due_by(projector.store, due)] == [deadline["deadline"]]
    assert queries.open_deadlines_due_by(projector.store, date.fromordinal(due.toordinal() - 1)) == []


def test_due_on_or_before_a_day_reads_the_status_and_due_date_index(demo):
    _, projector = demo
    plan = projector.store.explain(queries.OPEN_DUE_BY, ("2026-12-01", 10)).lower()
    assert "ix_deadlines_status_due_on" in plan, plan
    assert "scan deadlines" not in plan.replace("index", "") or "using index" in plan


def test_an_alert_is_recorded_once_per_deadline_and_kind_and_shown_in_the_alerts_table(requisition):
    app, projector, deadline = requisition
    first = app.raise_alerts(deadline["case_number"], SCHEDULER, thresholds=(5, 1))
    again = app.raise_alerts(deadline["case_number"], SCHEDULER, thresholds=(5, 1))
    assert len(first) == 1 and again == []
    projector.catch_up()
    alerts = queries.alerts(projector.store, case_id=deadline["case_id"])
    assert [(a["deadline"], a["kind"], a["article"], a["who"]) for a in alerts] == \
        [(deadline["deadline"], "missed", "art-10", deadline["who"])]
    assert alerts[0]["days_overdue"] == (date(2026, 11, 30) - date.fromisoformat(deadline["due_on"])).days


def test_following_the_log_batch_by_batch_gives_the_same_tables_as_a_rebuild(database_url, stores):
    app = make_app(database_url)
    projector = Projector(app, stores(database_url), batch_size=7)
    projector.migrate()
    seed_demo(app, silent)
    projector.catch_up()
    followed = snapshot(projector.store)
    projector.rebuild()
    assert snapshot(projector.store) == followed
    assert set(projector.positions().values()) == {app.recorder.max_notification_id()}


def test_rebuilding_one_projection_keeps_the_live_tables_readable_until_the_swap(demo):
    app, projector = demo
    before = snapshot(projector.store)
    seen_during: list[int] = []

    def progress(position: int, total: int) -> None:
        seen_during.append(len(queries.cases(projector.store)))

    only_cases = Projector(app, projector.store, names=["cases"], batch_size=10)
    only_cases.rebuild(progress)
    assert seen_during and set(seen_during) == {4}  # the four demo cases, all the while
    assert snapshot(projector.store) == before
    assert not projector.store.table_exists("cases__rebuild")
    app.archive_case("LC35-2026-0001", MESA, date(2026, 11, 20), reason="withdrawn by the petitioners")
    assert projector.catch_up() > 0  # the live projector meets the swapped generation, rereads, carries on
    assert queries.case(projector.store, str(app.resolve_case("LC35-2026-0001")))["stage"] == "archived"
    assert [f["case_number"] for f in queries.freezes(projector.store, active=True)] == ["LC35-2026-0003"]


def test_a_batch_whose_position_moved_meanwhile_is_rolled_back_and_nothing_is_written_twice(database_url, stores):
    app = make_app(database_url)
    first = Projector(app, stores(database_url), batch_size=50)
    second = Projector(app, stores(database_url), batch_size=50)
    first.migrate()
    seed_demo(app, silent)
    stale = second._targets()
    first.catch_up()
    batch = second._collect(stale)
    with pytest.raises(Exception, match="cases|deadlines|freezes|alerts|municipalities"):
        with second.store.transaction() as tx:
            second._commit(tx, stale, batch)
    assert second.catch_up() == 0
    followed = snapshot(first.store)
    first.rebuild()
    assert snapshot(first.store) == followed


def test_an_unknown_projection_is_refused_naming_the_known_ones(demo):
    app, projector = demo
    with pytest.raises(ValueError, match="unknown projection nope .*cases"):
        Projector(app, projector.store, names=["nope"])


def test_the_projections_connect_to_the_events_database_and_schema_read_from_the_same_url():
    from infrastructure.store import postgres_conninfo

    info = postgres_conninfo("postgresql://clerk:s%40cret@db.example:6543/tramita?schema=acre")
    assert (info["dbname"], info["host"], info["port"], info["user"], info["password"]) == \
        ("tramita", "db.example", "6543", "clerk", "s@cret")
    assert info["options"] == "-c search_path=acre"


def test_tables_built_by_another_definition_are_refused_until_migrate_rebuilds_them(demo):
    _, projector = demo
    with projector.store.transaction() as tx:
        tx.execute("UPDATE projection_tracking SET fingerprint = 'older' WHERE projection = 'deadlines'")
    with pytest.raises(NotMigratedError, match="deadlines.*run `tramita migrate`"):
        projector.run_once()
    before = snapshot(projector.store)
    assert projector.migrate() == {"created": [], "rebuilt": ["deadlines"]}
    assert snapshot(projector.store) == before
    assert projector.catch_up() == 0


def flaky(store: Store, failures: int) -> list[int]:
    """Make the store's next `failures` transactions fail as the database does when it passes (locked, lost)."""
    calls = [0]
    real = store.transaction

    def transaction():
        calls[0] += 1
        if calls[0] <= failures:
            raise store.transient_errors[0]("database is locked (simulated)")
        return real()

    store.transaction = transaction  # type: ignore[method-assign]
    return calls


def test_a_projector_retries_a_batch_the_database_refused_for_a_passing_reason_and_loses_nothing(
        database_url, stores):
    app = make_app(database_url)
    projector = Projector(app, stores(database_url), batch_size=40)
    projector.migrate()
    seed_demo(app, silent)
    flaky(projector.store, 2)
    stop, logged, pauses = threading.Event(), [], []

    def wait(seconds: float) -> None:
        pauses.append(seconds)
        if min(projector.positions().values()) == app.recorder.max_notification_id():
            stop.set()

    projector.run(stop, poll_seconds=0.01, wait=wait, log=logged.append)
    assert len(logged) == 2 and all("batch rolled back" in line and "retry" in line for line in logged)
    assert pauses[:2] == [0.02, 0.04]
    followed = snapshot(projector.store)
    projector.rebuild()
    assert snapshot(projector.store) == followed


def test_a_projector_that_keeps_failing_stops_with_the_error_for_its_supervisor(database_url, stores):
    app = make_app(database_url)
    projector = Projector(app, stores(database_url))
    projector.migrate()
    flaky(projector.store, 1000)
    with pytest.raises(projector.store.transient_errors):
        projector.run(threading.Event(), poll_seconds=0, wait=lambda _: None, log=lambda _: None)
    assert projector.positions() == dict.fromkeys(PROJECTIONS, 0)


@pytest.mark.postgres
def test_a_projector_whose_postgresql_connection_was_cut_reconnects(new_database_url, stores):
    url = new_database_url("postgres")
    app = make_app(url)
    projector = Projector(app, stores(url))
    projector.migrate()
    seed_demo(app, silent)
    killer = stores(url)
    killer.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                 "WHERE application_name = 'tramita-projections' AND pid <> pg_backend_pid()")
    stop = threading.Event()
    projector.run(stop, poll_seconds=0, log=lambda _: None,
                  wait=lambda _: stop.set() if min(projector.positions().values()) > 0 else None)
    assert min(projector.positions().values()) == app.recorder.max_notification_id()
