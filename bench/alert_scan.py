"""Benchmark: how the scheduler's scan grows with the number of open deadlines: 1,000 and 100,000 open, 10 due, 10%
overdue and already alerted.

Usage: python bench/alert_scan.py [--repeat R]

What is measured
----------------
0. Two databases (untimed), SQLite files in a temporary folder deleted at the end. In each, a `Tramita` application
   records through the domain Acre's registry and ten voters' creation cases (one per municipality), each with
   one Art. 10 requisition received on Fri 2025-10-17 and never answered: ten real deadlines due on Tue
   2025-11-18. The projector brings the projections up to date. Then the rest of the open deadlines are written
   straight into the projections' tables in bulk, as rows of cases that do not exist, each given by the
   projection's own row functions (`projections.rows`), so that they are what the projector would write:
   - 10% of all the open deadlines (100 in the first database, 10,000 in the second) are overdue and never
     closed: due between 2024-11-01 and 2025-09-30 (30 a day), still open, and already alerted `missed` (as
     earlier scans would have left them): each has its `missed` alert's row in the `alerts` table (raised the
     day after its due day, delivered), and its own row is written knowing that alert recorded;
   - the others (890 and 89,990) are due between 2026-01-01 and 2026-03-31 (1,000 a day): none is due at the
     scan.
   Recording 100,000 deadlines act by act would take hours; none of these rows' cases is ever judged (none of
   their alerts is due), which is what is being measured: what the scan reads to find the ten that are due.

1. The scan. The clock reads Sat 2025-11-15 09:00 in Rio Branco: each of the ten requisitions is due in 3 days
   and calls for its "due in 5 days" alert. Each repetition copies the database (SQLite's backup API, untimed),
   opens the application and the projections' store on the copy (untimed) and times one
   `scheduler.scan.scan(app, store, thresholds=(5, 1), projector=projector)`: the projector's catch-up (nothing
   new), the due-by query, the judgement of the rows it returns, the look-up of their alerts, and ten
   `raise_alerts` that record ten alert events. It must raise exactly ten alerts, or the benchmark fails; the
   deadlines the scan read are shown. A second scan on the same copy (nothing left to raise) is timed too and
   shown as the steady state.

The two sizes are measured in turn, R times each (default 7), so that a passing load on the machine weighs on both
alike; the median at each size is kept. Times come from `time.perf_counter`. The last line printed is
`ratio: <scan time with 100,000 open deadlines ÷ scan time with 1,000>` (goal: <= 2).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
import uuid
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from types import SimpleNamespace

from domain.acts import Actor
from domain.alerts import MISSED, Alert
from domain.application import Tramita
from domain.case import Case
from domain.demo import MESA
from domain.voter_title import make_voter_title
from projections.projector import Projector
from projections.rows import alert_rows, deadline_rows
from projections.schema import PROJECTIONS
from infrastructure.store import open_store
from scheduler.scan import scan
from infrastructure.persistence import persistence_env

SIZES = (1_000, 100_000)
DUE = 10
RECORDED_AT = datetime(2025, 10, 20, 15, tzinfo=timezone.utc)
SCAN_AT = datetime(2025, 11, 15, 14, tzinfo=timezone.utc)  # 09:00 in Rio Branco
THRESHOLDS = (5, 1)
#: Ten of Acre's municipalities (IBGE codes), one case each.
MUNICIPALITIES = ("1200013", "1200054", "1200104", "1200138", "1200179", "1200252", "1200302", "1200328",
                  "1200336", "1200344")
#: The share of the open deadlines that are overdue, never closed and already alerted `missed`.
OVERDUE_SHARE = 10
OVERDUE_FROM = date(2024, 11, 1)
FILLER_FROM = date(2026, 1, 1)
INSERT_CHUNK = 10_000


def open_app(path: Path, now: datetime) -> Tramita:
    return Tramita(persistence_env(f"sqlite:///{path}"), clock=lambda: now)


def due_cases(app: Tramita) -> None:
    """Ten voters' cases, each with one requisition received on 2025-10-17 and not answered."""
    app.seed_registry(Actor("ibge-seed", "ibge"), date(1991, 12, 18))
    for n, code in enumerate(MUNICIPALITIES):
        signatures = [{"title": make_voter_title(f"{10000000 + 30 * n + i:08d}", "24"), "zone": "5",
                       "section": str(i % 7 + 1), "area": code} for i in range(30)]
        case = app.open_case(MESA, date(2025, 10, 14), kind="creation", municipalities=[code],
                             areas=[{"municipality": code, "area_km2": "500", "description": f"área {n}"}],
                             proposed_name=f"Vila Bench {n}", signatures=signatures).number
        requisition = app.issue_requisition(case, MESA, date(2025, 10, 15), body="ibge", items=["art-4"]).result
        app.receive_requisition(case, MESA, date(2025, 10, 17), requisition=requisition)


def deadline(due_on: date) -> dict:
    """An open Art. 10 requisition answer deadline, as a case's state holds it."""
    return {"rule": "requisition-answer", "article": "art-10", "who": "ibge", "municipality": None,
            "starts_on": due_on - timedelta(days=30), "due_on": due_on, "status": "open", "closed_by": None,
            "closed_on": None, "days_late": None}


class FillerCase(SimpleNamespace):
    """A case that does not exist, as the projection's row functions read a case: never archived, so its
    deadlines stand as recorded (the domain's own `standing_deadlines`)."""

    archived = None
    standing_deadlines = Case.standing_deadlines


def filler_rows(count: int, overdue: int) -> tuple[list[tuple], list[tuple]]:
    """`count` open deadlines of cases that do not exist (their `deadlines` rows) and the `missed` alerts of the
    first `overdue` of them (their `alerts` rows): those are due from 2024-11-01 on (30 a day) and were alerted
    the day after their due day; the rest are due from 2026-01-01 on (1,000 a day)."""
    deadlines, alerts = [], []
    for i in range(count):
        due_on = OVERDUE_FROM + timedelta(days=i // 30) if i < overdue else \
            FILLER_FROM + timedelta(days=(i - overdue) // 1000)
        key = f"requisition-answer:{i}"
        case = FillerCase(id=uuid.uuid4(), number=f"LC35-2027-{i:05d}", kind="creation",
                          deadlines={key: deadline(due_on)})
        missed = Alert.id_for(case.id, key, MISSED)
        deadlines += deadline_rows(case, {missed} if i < overdue else set())
        if i < overdue:
            raised_on = due_on + timedelta(days=1)
            alerts += alert_rows(SimpleNamespace(
                id=missed, case_id=str(case.id), case_number=case.number, deadline=key,
                kind=MISSED, rule="requisition-answer", article="art-10", who="ibge", municipality=None,
                due_on=due_on, days_overdue=1, raised_on=raised_on,
                raised_at=datetime.combine(raised_on, datetime.min.time(), timezone.utc) + timedelta(hours=14),
                delivery="delivered", delivery_tries=1, delivery_error=None, subject=None, message=None))
    return deadlines, alerts


def insert(store, table: str, rows: list[tuple]) -> None:
    columns = PROJECTIONS[table].tables[0].column_names
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    with store.transaction() as tx:
        for i in range(0, len(rows), INSERT_CHUNK):
            tx.executemany(sql, rows[i:i + INSERT_CHUNK])


def build(path: Path, size: int) -> None:
    app = open_app(path, RECORDED_AT)
    due_cases(app)
    store = open_store(f"sqlite:///{path}")
    projector = Projector(app, store)
    projector.migrate()
    projector.catch_up()
    deadlines, alerts = filler_rows(size - DUE, size * OVERDUE_SHARE // 100)
    insert(store, "deadlines", deadlines)
    insert(store, "alerts", alerts)
    (count,) = store.query("SELECT count(*) FROM deadlines WHERE status = 'open'")[0]
    (overdue,) = store.query("SELECT count(*) FROM deadlines WHERE status = 'open' AND due_on < ?",
                             (SCAN_AT.date().isoformat(),))[0]
    if (count, overdue) != (size, size * OVERDUE_SHARE // 100):
        raise SystemExit(f"expected {size} open deadlines, {size * OVERDUE_SHARE // 100} overdue; found {count}, "
                         f"{overdue}")
    store.close()
    app.close()


def copy(source: Path, target: Path) -> None:
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def measure(source: Path, work: Path) -> tuple[float, float, int]:
    """One repetition on a fresh copy: the scan that raises the ten alerts, then a scan with nothing to raise."""
    copy(source, work)
    app = open_app(work, SCAN_AT)
    store = open_store(f"sqlite:///{work}")
    projector = Projector(app, store)
    try:
        start = time.perf_counter()
        first = scan(app, store, thresholds=THRESHOLDS, projector=projector)
        raising = time.perf_counter() - start
        start = time.perf_counter()
        second = scan(app, store, thresholds=THRESHOLDS, projector=projector)
        steady = time.perf_counter() - start
    finally:
        store.close()
        app.close()
    if len(first.raised) != DUE or first.cases != DUE or second.raised:
        raise SystemExit(f"the scan raised {len(first.raised)} alerts from {first.cases} cases, then "
                         f"{len(second.raised)}; expected {DUE} from {DUE}, then 0")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    return raising, steady, first.deadlines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="repetitions at each size (the median is kept)")
    args = parser.parse_args(argv)
    medians = {}
    with tempfile.TemporaryDirectory(prefix="tramita-alert-scan-") as folder:
        sources, built, runs = {}, {}, {size: [] for size in SIZES}
        for size in SIZES:
            sources[size] = Path(folder) / f"deadlines-{size}.sqlite"
            started = time.perf_counter()
            build(sources[size], size)
            built[size] = time.perf_counter() - started
        for _ in range(args.repeat):  # the sizes in turn: a passing load on the machine weighs on both alike
            for size in SIZES:
                runs[size].append(measure(sources[size], Path(folder) / "scan.sqlite"))
        for size in SIZES:
            raising = statistics.median(r for r, _, _ in runs[size])
            steady = statistics.median(s for _, s, _ in runs[size])
            medians[size] = raising
            print(f"{size:,} open deadlines, {DUE} due, {size * OVERDUE_SHARE // 100:,} overdue and alerted (built "
                  f"in {built[size]:.1f} s): scan raising {DUE} alerts {raising * 1000:.1f} ms (median of "
                  f"{args.repeat}; fastest {min(r for r, _, _ in runs[size]) * 1000:.1f} ms, "
                  f"{runs[size][0][2]:,} deadlines read); scan with nothing to raise {steady * 1000:.1f} ms")
    print("ratio goal: <= 2")
    print(f"ratio: {medians[SIZES[1]] / medians[SIZES[0]]:.4f}")


if __name__ == "__main__":
    main()
