"""Benchmark: how the scheduler's scan grows with the number of open deadlines, the number due growing with it:
1,000 and 100,000 open, 1% of them due inside the warning window, 10% overdue and already alerted.

Usage: python bench/alert_scan.py [--repeat R] [--sizes SMALL,LARGE]

What is measured
----------------
0. Two databases (untimed), SQLite files in a temporary folder deleted at the end, one per size N (default 1,000
   and 100,000 open deadlines). In each, a `Tramita` application records through the domain Acre's registry and
   N/100 voters' creation cases (10 and 1,000; their municipalities taken in turn from the registry's), each with
   one Art. 10 requisition received on Fri 2025-10-17 and never answered: N/100 real deadlines due on Tue
   2025-11-18, 1% of the open ones. The projector brings the projections up to date. Then the rest of the open
   deadlines are written straight into the projections' tables in bulk, as rows of cases that do not exist, each
   given by the projection's own row functions (`projections.rows`), so that they are what the projector would
   write:
   - 10% of all the open deadlines (100 and 10,000) are overdue and never closed: due between 2024-11-01 and
     2025-09-30 (30 a day; 300 a day at 100,000), still open, and already alerted `missed` (as earlier scans
     would have left them): each has its `missed` alert's row in the `alerts` table (raised the day after its
     due day, delivered), and its own row is written knowing that alert recorded;
   - the others (89% of them) are due between 2026-01-01 and 2026-03-31 (evenly): none is due at the scan.
   Recording 100,000 deadlines act by act would take hours; none of these rows' cases is ever judged (none of
   their alerts is due): the scan must pass over them while it finds and judges the ones due.

1. The scan. The clock reads Sat 2025-11-15 09:00 in Rio Branco: each of the N/100 requisitions is due in 3 days
   and calls for its "due in 5 days" alert. Each repetition copies the database (SQLite's backup API, untimed),
   opens the application and the projections' store on the copy (untimed) and times one
   `scheduler.scan.scan(app, store, thresholds=(5, 1), projector=projector)`: the projector's catch-up (nothing
   new), the due-by query, the judgement of the cases it returns, the look-up of their alerts, and one
   `raise_alerts` per case, which records its alert event. It must raise exactly N/100 alerts from N/100 cases,
   or the benchmark fails; the deadlines the scan read are shown. A second scan on the same copy (nothing left
   to raise) is timed too and shown as the steady state.

The two sizes are measured in turn, R times each (default 5), the first of each round taking turns, so that a
passing load on the machine weighs on both alike. Each scan's CPU time (`time.process_time`, which the machine's
other work moves less than the wall clock) and wall time (`time.perf_counter`) are kept; printed as min-median-max,
with the median CPU per due deadline. The last line printed is `ratio: <median CPU per due deadline at 100,000
open ÷ at 1,000 open>` (goal: <= 1.5: the scan's work grows with what is due, not with what is open). At 1,000
open the scan's fixed part (the catch-up, the query) is spread over 10 due deadlines only, which weighs on that
side: the steady scans (nothing due) are printed beside it.
"""

from __future__ import annotations

import argparse
import math
import sqlite3
import statistics
import tempfile
import time
import uuid
from datetime import date, datetime, timedelta, timezone
from dataclasses import dataclass
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
from record_acts import spread
from infrastructure.persistence import persistence_env

SIZES = (1_000, 100_000)
#: The share of the open deadlines due inside the warning window (per cent): one case each, recorded through the
#: domain.
DUE_SHARE = 1
RECORDED_AT = datetime(2025, 10, 20, 15, tzinfo=timezone.utc)
SCAN_AT = datetime(2025, 11, 15, 14, tzinfo=timezone.utc)  # 09:00 in Rio Branco
THRESHOLDS = (5, 1)
#: The share of the open deadlines that are overdue, never closed and already alerted `missed`.
OVERDUE_SHARE = 10
OVERDUE_FROM = date(2024, 11, 1)
FILLER_FROM = date(2026, 1, 1)
INSERT_CHUNK = 10_000


def open_app(path: Path, now: datetime) -> Tramita:
    return Tramita(persistence_env(f"sqlite:///{path}"), clock=lambda: now)


def due(size: int) -> int:
    return size * DUE_SHARE // 100


def overdue(size: int) -> int:
    return size * OVERDUE_SHARE // 100


def due_cases(app: Tramita, count: int) -> None:
    """`count` voters' cases, each with one requisition received on 2025-10-17 and not answered; their
    municipalities the registry's in turn."""
    codes = app.seed_registry(Actor("ibge-seed", "ibge"), date(1991, 12, 18))
    for n in range(count):
        code = codes[n % len(codes)]
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
    first `overdue` of them (their `alerts` rows): those are due from 2024-11-01 over 334 days and were alerted
    the day after their due day; the rest are due from 2026-01-01 over 90 days."""
    deadlines, alerts = [], []
    overdue_a_day, later_a_day = max(1, math.ceil(overdue / 334)), max(1, math.ceil((count - overdue) / 90))
    for i in range(count):
        due_on = OVERDUE_FROM + timedelta(days=i // overdue_a_day) if i < overdue else \
            FILLER_FROM + timedelta(days=(i - overdue) // later_a_day)
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
    due_cases(app, due(size))
    store = open_store(f"sqlite:///{path}")
    projector = Projector(app, store)
    projector.migrate()
    projector.catch_up()
    deadlines, alerts = filler_rows(size - due(size), overdue(size))
    insert(store, "deadlines", deadlines)
    insert(store, "alerts", alerts)
    (count,) = store.query("SELECT count(*) FROM deadlines WHERE status = 'open'")[0]
    (late,) = store.query("SELECT count(*) FROM deadlines WHERE status = 'open' AND due_on < ?",
                             (SCAN_AT.date().isoformat(),))[0]
    (soon,) = store.query("SELECT count(*) FROM deadlines WHERE status = 'open' AND due_on >= ? AND due_on <= ?",
                          (SCAN_AT.date().isoformat(), (SCAN_AT.date() + timedelta(days=THRESHOLDS[0])).isoformat()))[0]
    if (count, late, soon) != (size, overdue(size), due(size)):
        raise SystemExit(f"expected {size} open deadlines, {overdue(size)} overdue, {due(size)} due within "
                         f"{THRESHOLDS[0]} days; found {count}, {late}, {soon}")
    store.close()
    app.close()


def copy(source: Path, target: Path) -> None:
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


@dataclass
class Scan:
    """One repetition: the scan raising the alerts due (CPU and wall seconds), then the steady scan's, and the
    deadlines the first read."""

    cpu: float
    wall: float
    steady_cpu: float
    steady_wall: float
    deadlines: int


def timed_scan(app: Tramita, store, projector: Projector):  # noqa: ANN001, ANN201 - the store and the scan's result
    start, cpu = time.perf_counter(), time.process_time()
    result = scan(app, store, thresholds=THRESHOLDS, projector=projector)
    return result, time.process_time() - cpu, time.perf_counter() - start


def measure(source: Path, work: Path, size: int) -> Scan:
    """One repetition on a fresh copy: the scan that raises the alerts due, then a scan with nothing to raise."""
    copy(source, work)
    app = open_app(work, SCAN_AT)
    store = open_store(f"sqlite:///{work}")
    projector = Projector(app, store)
    try:
        first, cpu, wall = timed_scan(app, store, projector)
        second, steady_cpu, steady_wall = timed_scan(app, store, projector)
    finally:
        store.close()
        app.close()
    if len(first.raised) != due(size) or first.cases != due(size) or second.raised:
        raise SystemExit(f"the scan raised {len(first.raised)} alerts from {first.cases} cases, then "
                         f"{len(second.raised)}; expected {due(size)} from {due(size)}, then 0")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    return Scan(cpu, wall, steady_cpu, steady_wall, first.deadlines)


def sizes(text: str) -> tuple[int, int]:
    small, large = (int(n) for n in text.split(","))
    if not 100 <= small < large:
        raise argparse.ArgumentTypeError("two sizes, the first at least 100 and smaller than the second")
    return small, large


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="repetitions at each size (default 5)")
    parser.add_argument("--sizes", type=sizes, default=SIZES, metavar="SMALL,LARGE",
                        help="the open deadlines of the two databases (default 1000,100000)")
    args = parser.parse_args(argv)
    per_due = {}
    with tempfile.TemporaryDirectory(prefix="tramita-alert-scan-") as folder:
        sources, built, runs = {}, {}, {size: [] for size in args.sizes}
        for size in args.sizes:
            sources[size] = Path(folder) / f"deadlines-{size}.sqlite"
            started = time.perf_counter()
            build(sources[size], size)
            built[size] = time.perf_counter() - started
        for n in range(args.repeat):  # the sizes in turn, the first taking turns: a passing load weighs on both
            for size in args.sizes if n % 2 == 0 else args.sizes[::-1]:
                runs[size].append(measure(sources[size], Path(folder) / "scan.sqlite", size))
    for size in args.sizes:
        kept = runs[size]
        per_due[size] = statistics.median(run.cpu for run in kept) / due(size)
        print(f"{size:,} open deadlines, {due(size):,} due, {overdue(size):,} overdue and alerted (built in "
              f"{built[size]:.1f} s; {kept[0].deadlines:,} deadlines read): scan raising {due(size):,} alerts CPU "
              f"{spread([run.cpu for run in kept], 1000, 1)} ms, wall {spread([run.wall for run in kept], 1000, 1)} ms"
              f" (min-median-max of {args.repeat}); scan with nothing to raise CPU "
              f"{spread([run.steady_cpu for run in kept], 1000, 1)} ms")
        print(f"{size:,} open: per due deadline CPU {per_due[size] * 1000:.3f} ms, wall "
              f"{statistics.median(run.wall for run in kept) / due(size) * 1000:.3f} ms (medians)")
    small, large = args.sizes
    steady = [statistics.median(run.steady_cpu for run in runs[size]) for size in args.sizes]
    walls = [statistics.median(run.wall for run in runs[size]) / due(size) for size in args.sizes]
    print(f"steady scan (nothing due), {large:,} open ÷ {small:,} open: {steady[1] / steady[0]:.4f}")
    print(f"ratio of the wall times per due deadline: {walls[1] / walls[0]:.4f}")
    print("ratio goal: <= 1.5")
    print(f"ratio: {per_due[large] / per_due[small]:.4f}")


if __name__ == "__main__":
    main()
