"""The rebuild by aggregate and the follower's cache, on SQLite and PostgreSQL: whatever the log's interleaving,
a rebuild gives the rows the follower gives; what is recorded during a rebuild is in the tables it swaps in; a
rebuild that dies, or whose side tables a later rebuild took over, leaves the live tables as they were; the
follower's cache keeps within its budget in bytes."""

from __future__ import annotations

import subprocess
import sys
import uuid
from datetime import date
from pathlib import Path

import pytest
from eventsourcing.persistence import StoredEvent
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.demo import MESA, municipal, seed_demo
import projections.rebuild as rebuild_module
from projections.batch import TrackingConflict
from projections.cache import CACHE_BYTES, AggregateCache, cache_bytes
from projections.projector import Projector
from projections.schema import PROJECTIONS
from infrastructure.store import open_store
from tests.stores import make_app
from tests.test_projections import silent, snapshot

XAPURI, ACRELANDIA = "1200708", "1200013"
TOPIC_OF_A_LATER_VERSION = "domain.case:Case.ActOfALaterVersion"


def open_district(app, code: str, district: str) -> str:
    """A mayor files a district creation; its case number."""
    return app.open_case(municipal("mayor", code), date(2026, 3, 2), kind="district_creation",
                         municipalities=[code], district=district).number


def record(app, events: list[StoredEvent]) -> None:
    """Insert the events in the order given, a few hundred per transaction (a single insert of thousands stalls
    the PostgreSQL recorder's pipeline)."""
    for i in range(0, len(events), 200):
        app.recorder.insert_events(events[i:i + 200])


def stored_event_count(app) -> int:
    return len(app.recorder.select_notifications(0, 1_000_000, inclusive_of_start=False))


def demo_cases(app) -> list[list[StoredEvent]]:
    """The stored events of each demo case, in version order."""
    ids = {n.originator_id for n in app.recorder.select_notifications(0, 10_000, inclusive_of_start=False)
           if n.topic.startswith("domain.case:Case.")}
    return [list(app.recorder.select_events(case_id)) for case_id in sorted(ids)]


def interleave(templates: list[list[StoredEvent]], copies: int, order: list[int],
               poisoned: int | None = None) -> list[StoredEvent]:
    """`copies` copies of the templates under new ids (copy i of template i % len), their events in the log in
    the order drawn: each entry of `order` picks, among the copies with events left, the one whose next event comes;
    then what is left, copy by copy. Copy `poisoned`, if any, ends with an event no projection can apply."""
    copies = [[StoredEvent(new_id, e.originator_version, e.topic, e.state) for e in template]
              for template, new_id in ((templates[i % len(templates)], uuid.uuid4()) for i in range(copies))]
    if poisoned is not None:
        last = copies[poisoned % len(copies)][-1]
        copies[poisoned % len(copies)].append(
            StoredEvent(last.originator_id, last.originator_version + 1, TOPIC_OF_A_LATER_VERSION, b"{}"))
    log: list[StoredEvent] = []
    for pick in order:
        open_copies = [copy for copy in copies if copy]
        if open_copies:
            log.append(open_copies[pick % len(open_copies)].pop(0))
    for copy in copies:
        log += copy
    return log


def failures_of(projector: Projector) -> set[tuple]:
    return {(f["projection"], f["aggregate_id"], f["notification_id"], f["last_notification_id"], f["topic"])
            for f in projector.failures()}


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(order=st.lists(st.integers(0, 50), max_size=300), copies=st.integers(1, 12),
       batch=st.integers(1, 80), budget=st.integers(0, 60_000), poisoned=st.none() | st.integers(0, 11))
def test_a_rebuild_of_an_interleaved_log_gives_exactly_the_rows_and_failures_the_follower_gives(
        backend, order, copies, batch, budget, poisoned, new_database_url):
    url = new_database_url(backend)
    app = make_app(url)
    store = open_store(url)
    try:
        seed_demo(app, silent)
        templates = demo_cases(app)
        record(app, interleave(templates, copies, order, poisoned))
        follower = Projector(app, store, batch_size=batch, cache_bytes=budget)
        follower.migrate()
        follower.catch_up()
        followed, failed = snapshot(store), failures_of(follower)
        assert (poisoned is None) == (failed == set())
        follower.rebuild()
        assert snapshot(store) == followed
        assert failures_of(follower) == failed
        assert set(follower.positions().values()) == {app.recorder.max_notification_id()}
    finally:
        store.close()


def test_a_rebuild_builds_each_aggregate_once_from_its_events_read_by_aggregate(database_url, monkeypatch):
    app = make_app(database_url)
    seed_demo(app, silent)
    record(app, interleave(demo_cases(app), 400, list(range(400)) * 20))
    store = open_store(database_url)
    projector = Projector(app, store, batch_size=25)
    projector.migrate()
    replayed = []
    monkeypatch.setattr(Projector, "_replay", lambda self, *args: replayed.append(args))
    from projections import events

    read_from_log = []
    grouped = events._grouped_from_log
    monkeypatch.setattr(events, "_grouped_from_log", lambda *args: read_from_log.append(args) or grouped(*args))
    assert projector.rebuild() == stored_event_count(app)
    assert replayed == []  # no aggregate replayed: each built once, its rows written once
    assert read_from_log == []  # read from the events table by aggregate, not from the log grouped in memory
    cases = {case_id for (case_id,) in store.query("SELECT case_id FROM cases")}
    assert len(cases) == 4 + 400
    store.close()


def secondary_indexes(store, table: str) -> set[str]:
    """The names of a table's secondary indexes, without their build token."""
    if store.dialect == "sqlite":
        rows = store.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", (table,))
    else:
        rows = store.query("SELECT indexname FROM pg_indexes WHERE tablename = ? AND schemaname = current_schema()",
                           (table,))
    return {name.rsplit("_", 1)[0] for (name,) in rows if name.startswith("ix_")}


def test_the_tables_a_rebuild_swaps_in_have_every_index_of_their_definition(database_url):
    """A rebuild fills its tables first and indexes them once filled, before it catches up and swaps them in."""
    app = make_app(database_url)
    seed_demo(app, silent)
    store = open_store(database_url)
    projector = Projector(app, store, batch_size=40)
    projector.migrate()
    defined = {table.name: {f"ix_{table.name}_{'_'.join(index)}" for index in table.indexes}
               for projection in PROJECTIONS.values() for table in projection.tables}
    assert {name: secondary_indexes(store, name) for name in defined} == defined
    during_the_pass: list[dict[str, set[str]]] = []

    def look_at_the_side_tables(position: int, total: int) -> None:
        if not during_the_pass:  # after the pass's first transaction
            during_the_pass.append({name: secondary_indexes(store, name + "__rebuild") for name in defined})

    projector.rebuild(look_at_the_side_tables)
    assert during_the_pass == [{name: set() for name in defined}]
    assert {name: secondary_indexes(store, name) for name in defined} == defined
    assert sum(map(len, defined.values())) >= 10
    store.close()


REBUILD_ON_SQLITE = """
import sys
from domain.demo import seed_demo
from projections.projector import Projector
from infrastructure.store import open_store
from tests.stores import make_app

url = sys.argv[1]
app = make_app(url)
seed_demo(app, lambda _: None)
store = open_store(url)
projector = Projector(app, store)
projector.migrate()
assert projector.rebuild() > 100
loaded = [name for name in sys.modules if name.startswith(("psycopg", "eventsourcing.postgres"))]
print(loaded)
"""


def test_a_rebuild_on_sqlite_reads_by_aggregate_without_loading_the_postgresql_driver(tmp_path):
    """Telling the SQLite recorder from the PostgreSQL one imported the library's PostgreSQL module, and psycopg
    with it, within the rebuild's time (a few hundred milliseconds of a rebuild on SQLite)."""
    ran = subprocess.run([sys.executable, "-c", REBUILD_ON_SQLITE, f"sqlite:///{tmp_path}/rebuild.sqlite"],
                         cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "[]"


def test_acts_recorded_while_a_rebuild_runs_are_in_the_tables_it_swaps_in(database_url):
    app = make_app(database_url)
    seed_demo(app, silent)
    record(app, interleave(demo_cases(app), 200, list(range(200)) * 20))
    store = open_store(database_url)
    projector = Projector(app, store, batch_size=40)
    projector.migrate()
    projector.catch_up()
    during: list[str] = []

    def act_during_the_pass(position: int, total: int) -> None:
        if not during:  # after the first aggregates are written, before the pass ends
            assert store.table_exists("cases__rebuild")
            app.archive_case("LC35-2026-0001", MESA, date(2026, 11, 20), reason="withdrawn by the petitioners")
            during.append(open_district(app, XAPURI, "Vila Jurupari"))
            during.append(open_district(app, ACRELANDIA, "Vila Nova"))

    projector.rebuild(act_during_the_pass)
    assert len(during) == 2
    archived = str(app.resolve_case("LC35-2026-0001"))  # the original: its copies keep its number
    assert store.query("SELECT stage FROM cases WHERE case_id = ?", (archived,)) == [("archived",)]
    assert sorted(store.query("SELECT district FROM cases WHERE number IN (?, ?)", during)) == [
        ("Vila Jurupari",), ("Vila Nova",)]
    assert set(projector.positions().values()) == {app.recorder.max_notification_id()}
    swapped = snapshot(store)
    projector.rebuild()  # nothing recorded meanwhile
    assert snapshot(store) == swapped
    projector.catch_up()  # the follower finds nothing of the read models left to do
    assert snapshot(store) == swapped


class Killed(BaseException):
    """What a process killed mid-rebuild would leave: nothing after the point it died."""


def test_a_rebuild_that_dies_in_its_pass_leaves_the_live_tables_and_positions_as_they_were(database_url):
    app = make_app(database_url)
    seed_demo(app, silent)
    record(app, interleave(demo_cases(app), 100, list(range(100)) * 20))
    store = open_store(database_url)
    projector = Projector(app, store, batch_size=30)
    projector.migrate()
    projector.catch_up()
    live, positions = snapshot(store), projector.positions()

    def die(position: int, total: int) -> None:
        raise Killed

    with pytest.raises(Killed):
        projector.rebuild(die)
    assert snapshot(store) == live and projector.positions() == positions
    open_district(app, XAPURI, "Vila Jurupari")
    assert projector.catch_up() > 0  # the live projector carries on beside the abandoned side tables
    followed = snapshot(store)
    projector.rebuild()
    assert snapshot(store) == followed


def test_a_rebuild_whose_side_tables_a_later_rebuild_took_over_swaps_nothing_in(database_url, monkeypatch):
    """Rebuild A ends its pass; rebuild B starts (its set-up replaces the side tables with empty ones) and is still
    filling them; A, with nothing new in the log to catch up, must not swap B's tables in as its own."""
    app = make_app(database_url)
    seed_demo(app, silent)
    store = open_store(database_url)
    projector = Projector(app, store, batch_size=40)
    projector.migrate()
    projector.catch_up()
    live, positions = snapshot(store), projector.positions()
    assert store.query("SELECT COUNT(*) FROM cases")[0][0] > 0
    pass_of_a = rebuild_module.build_by_aggregate

    class StillFilling(Exception):
        """Rebuild B, stopped after its set-up, in its pass."""

    def b_still_filling(*args, **kwargs):
        raise StillFilling

    def a_then_b_starts(*args, **kwargs):
        built = pass_of_a(*args, **kwargs)
        monkeypatch.setattr(rebuild_module, "build_by_aggregate", b_still_filling)
        with pytest.raises(StillFilling):
            Projector(app, store, batch_size=40).rebuild()
        return built

    monkeypatch.setattr(rebuild_module, "build_by_aggregate", a_then_b_starts)
    with pytest.raises(TrackingConflict):
        projector.rebuild()
    assert snapshot(store) == live and projector.positions() == positions
    monkeypatch.setattr(rebuild_module, "build_by_aggregate", pass_of_a)
    projector.rebuild()  # a rebuild run alone afterwards swaps in what the follower had
    assert snapshot(store) == live
    store.close()


def test_the_follower_keeps_its_cache_within_its_budget_in_bytes_of_the_stored_events(database_url):
    app = make_app(database_url)
    seed_demo(app, silent)
    record(app, interleave(demo_cases(app), 300, list(range(300)) * 20))
    store = open_store(database_url)
    budget = 120_000
    follower = Projector(app, store, batch_size=50, cache_bytes=budget)
    follower.migrate()
    held = []
    while follower.run_once():
        cache = follower._cache
        assert cache.bytes <= budget or len(cache) == 1
        held.append(len(cache))
        for key in cache.keys():
            aggregate, size = cache.get(key)
            stored = app.recorder.select_events(aggregate.id, lte=aggregate.version)
            assert size == sum(len(event.state) for event in stored)  # the estimate: its events' bytes
    assert 1 < max(held) < 300  # several aggregates kept, the least recently used evicted
    followed = snapshot(store)
    follower.rebuild()
    assert snapshot(store) == followed


def test_the_cache_evicts_the_least_recently_used_aggregates_first():
    cache = AggregateCache(budget=100)
    for key in (1, 2, 3):
        cache.put(key, f"aggregate {key}", 30)
    cache.put(1, "aggregate 1, one event on", 35)  # used again: now the most recent
    assert (cache.keys(), cache.bytes) == ([2, 3, 1], 95)
    cache.put(4, "aggregate 4", 30)
    assert (cache.keys(), cache.bytes) == ([3, 1, 4], 95)  # 2, the least recently used, made room
    cache.put(5, "a case larger than the budget", 150)
    assert (cache.keys(), cache.bytes) == ([5], 150)  # kept alone: its next event finds it
    cache.put(6, "aggregate 6", 10)
    assert (cache.keys(), cache.bytes) == ([6], 10)
    cache.pop(6)
    assert (len(cache), cache.bytes) == (0, 0)


def test_the_cache_budget_is_read_from_its_setting_with_64_mib_by_default():
    assert cache_bytes({}) == CACHE_BYTES == 64 * 1024 * 1024
    assert cache_bytes({"TRAMITA_PROJECTOR_CACHE_BYTES": "16_000_000"}) == 16_000_000
    assert cache_bytes({"TRAMITA_PROJECTOR_CACHE_BYTES": " 0 "}) == 0
    for wrong in ("-1", "64MiB", "1e6"):
        with pytest.raises(ValueError, match="TRAMITA_PROJECTOR_CACHE_BYTES: a whole number of bytes"):
            cache_bytes({"TRAMITA_PROJECTOR_CACHE_BYTES": wrong})
