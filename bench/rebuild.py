"""Benchmark: how fast tramita rebuilds every projection from the notification log, compared with the bare
eventsourcing library reading and decoding the same log, and how much memory the rebuild holds.

Usage: python bench/rebuild.py [--events N] [--database-url URL] [--batch-size B] [--repeat R]

What is measured
----------------
0. The log (untimed). A `Tramita` application with a fixed clock (2026-11-30 12:00 UTC) records the demo
   (`domain.demo.seed_demo`) through the domain: Acre's registry and four cases (the 1991-1993 creation that
   concludes, 68 events; the 2026 creation stopped at its law, 45; the district refused by Art. 38, 8; the 2026
   creation whose requisitions wait, overdue, 5), then one long case: a voters' creation from Xapuri through
   which the Mesa issues and receives 60 requisitions over 2025-2026, each receipt opening its 30-day deadline
   and none answered (overdue deadlines), 181 events. Those five cases are the templates. Recording a million
   events act by act would take hours, so the rest of the N events are copies of the templates' stored events
   under fresh ids (uuid4), written **interleaved** as a real log is: 4,000 copies are open at a time, each drawn
   from the five templates at random (seeded), and each next event belongs to one of the open copies drawn at
   random, so the acts of thousands of cases alternate in recording order and a case's events are spread over
   some 4,000 times as many others (tens of thousands for the short cases, hundreds of thousands for the long
   one). They are inserted through the application's recorder in chunks of a few hundred; the copies still open
   when the log holds N events stop part-way through their case. The stored state of an event does not hold its
   originator's id (the library's mapper keeps the id beside the state, in its own column), so a copy decodes as
   a case of its own. Copies keep the original's case number, names and hash chain inside their payload: the rows
   they project are those of the original, which is what the benchmark needs, but they are not valid cases for
   `tramita verify` (their hashes do not cover their new ids). The registry's events (Municipality,
   ToponymRegister) and the case numbering are recorded once, not copied.

   The database is a SQLite file in a temporary folder, deleted at the end, unless `--database-url` names
   another one: a sqlite:/// file or a postgresql:// database, which must be empty (no events) and is left
   with the generated events and the rebuilt tables afterwards.

1. The raw library. The whole notification log is read with `recorder.select_notifications(start, B,
   inclusive_of_start=False)`, B being the projector's batch size, and every notification is decoded into
   its domain event with `app.mapper.to_domain_event`, the application's mapper decoding with the same
   transcoder as the rebuild (tramita's: orjson where it reads alike, domain/application/transcoder.py), so
   that both sides decode alike and the ratio says what the rebuild adds. Nothing else is done with it.

2. tramita. `Projector(app, open_store(url), batch_size=B).migrate()` (untimed), then `.rebuild(progress)`:
   every projection built beside the live tables from the stored events read by aggregate (each aggregate
   built once, its rows written once, B events' aggregates per transaction), then caught up and swapped in,
   whatever the rebuild does to get there. Its rate is the notifications it read over its time. Afterwards the
   `cases` table must hold one row per Case aggregate in the log (copies included), or the benchmark fails.

3. The amendment scan (shown, not part of the ratio). What an amendment of the statute reads before it is
   recorded (`Tramita.applied`): every event's legal date and the rule versions it recorded, over the whole log;
   its rate beside the raw library's says what an amendment costs on a log of this size.

Each of 1, 2 and 3 runs in a fresh child process (this script with a hidden `--measure` option), on the same
database, one after the other, so that neither the generation nor the other measurement counts in its memory. They
run R rounds (`--repeat`, default 3, at least 2), the first of the two compared sides taking turns (raw then
rebuild, then rebuild then raw, ...; the scan after them), since on a shared machine a single run can be off by a
factor of two. Each side's wall and CPU seconds are printed as min-median-max over the rounds, and the ratios are
those of the medians: the `ratio:` line of the CPU times (`time.process_time`, each child's own; the other work of
a shared machine moves the wall clock by several times), the ratio of the wall times printed before it. The
rebuild's peak RSS is the child's high-water mark, reset just before the rebuild so that the child's start-up
(imports, the statute, the connection pool) does not count; the start-up's own peak is shown beside it. On Linux
the mark is reset through /proc/self/clear_refs and read as VmHWM from /proc/self/status, which is
`getrusage(RUSAGE_SELF).ru_maxrss` without what the kernel carries over from the parent at exec (the parent's own
peak, the generation's, which ru_maxrss would report whenever it is the larger); elsewhere it is ru_maxrss,
start-up and parent included. The RSS (from /proc/self/statm, on Linux) is also sampled before the rebuild, when it
has covered 10%, 50%, 90% and 100% of the log (as its progress reports: the events read), and after every
transaction (the highest is shown), to show whether it stays flat.

The goals: ratio >= 0.5, peak RSS (the highest of the rounds) flat and < 200 MB. With a smaller N (a small
machine) the times should scale linearly with N.

Times come from `time.perf_counter` (CPU times from `time.process_time`). The last line printed is
`ratio: <raw library's median CPU seconds ÷ the rebuild's>` (the rebuild's rate over the raw read's, in CPU).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import random
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any

from eventsourcing.persistence import StoredEvent

from record_acts import spread

from domain.application import Tramita
from infrastructure.persistence import persistence_env
from domain.case import Case
from domain.demo import MESA, seed_demo, voters_creation
from projections.projector import REBUILD_BATCH_SIZE, Projector
from projections.schema import PROJECTIONS
from infrastructure.store import open_store

NOW = datetime(2026, 11, 30, 12, tzinfo=timezone.utc)
#: Copied events inserted per call to the recorder (one transaction each; thousands at once stall the PostgreSQL
#: recorder's pipeline).
INSERT_CHUNK = 500
#: Copies of cases open at a time in the log, their events interleaved.
OPEN_COPIES = 4000
#: The seed of the draws that pick each copy's template and interleave the copies.
SEED = 1991
#: The long case: Xapuri (free of the demo's Art. 38 freezes), its requisitions, one every so many days.
XAPURI = "1200708"
REQUISITIONS = 60
REQUISITION_EVERY_DAYS = 9
REQUISITION_BODIES = ("ibge", "tre", "sefaz", "setop", "pge", "sectma")
#: Fractions of the log at which the rebuild's RSS is sampled (and at its end).
SAMPLE_AT = (0.1, 0.5, 0.9)
CASE_TOPIC = f"{Case.__module__}:{Case.__qualname__}."
MB = 1_000_000


def open_app(database_url: str, settings: dict[str, str] | None = None) -> Tramita:
    return Tramita({**persistence_env(database_url), **(settings or {})}, clock=lambda: NOW)


def notifications(app: Tramita) -> int:
    return app.recorder.max_notification_id() or 0


# ---------------------------------------------------------------------------------------------- the log


@dataclass
class Generated:
    """What the log holds: events recorded through the domain, events copied, and the cases of each."""

    real_events: int
    real_case_events: int
    real_cases: int
    copied_events: int
    copies: int
    seconds: float

    @property
    def events(self) -> int:
        return self.real_events + self.copied_events

    @property
    def cases(self) -> int:
        return self.real_cases + self.copies


def long_case(app: Tramita) -> str:
    """A voters' creation from Xapuri through which the Mesa issues and receives REQUISITIONS requisitions, one
    every few days over 2025-2026, none answered: a long case whose deadlines are overdue."""
    case = voters_creation(app, date(2025, 2, 3), XAPURI, "Vila Seringal", area_km2="1500", voters=31,
                           first_title=50000000, zone="3")
    day = date(2025, 2, 10)
    for n in range(REQUISITIONS):
        body = REQUISITION_BODIES[n % len(REQUISITION_BODIES)]
        requisition = app.issue_requisition(case, MESA, day, body=body, items=["art-4"]).result
        app.receive_requisition(case, MESA, day + timedelta(days=3), requisition=requisition)
        day += timedelta(days=REQUISITION_EVERY_DAYS)
    return case


def case_templates(app: Tramita) -> list[list[tuple[int, str, bytes]]]:
    """The stored events (version, topic, state) of each Case aggregate in the log, in log order."""
    cases: dict[Any, list[tuple[int, str, bytes]]] = {}
    start = 0
    while batch := app.recorder.select_notifications(start, 1000, inclusive_of_start=False):
        for n in batch:
            if n.topic.startswith(CASE_TOPIC):
                cases.setdefault(n.originator_id, []).append((n.originator_version, n.topic, n.state))
        start = batch[-1].id
    return [sorted(events) for events in cases.values()]


def interleaved(templates: list[list[tuple[int, str, bytes]]], count: int,
                rng: random.Random) -> Iterator[tuple[StoredEvent, bool]]:
    """`count` events of copies of the templates under new ids, OPEN_COPIES copies open at a time and each next
    event drawn from one of them at random; with each event, whether it opens its copy."""
    open_copies: list[list[Any]] = []  # [new id, template, index of its next event]
    for _ in range(count):
        while len(open_copies) < OPEN_COPIES:
            open_copies.append([uuid.uuid4(), rng.choice(templates), 0])
        i = rng.randrange(len(open_copies))
        copy = open_copies[i]
        new_id, template, at = copy
        version, topic, state = template[at]
        yield StoredEvent(originator_id=new_id, originator_version=version, topic=topic, state=state), at == 0
        copy[2] = at + 1
        if copy[2] == len(template):  # the case is complete: another opens in its place
            open_copies[i] = open_copies[-1]
            open_copies.pop()


def generate(database_url: str, events: int) -> Generated:
    """Record the demo and the long case through the domain, then write interleaved copies of their cases until
    the log holds `events` events."""
    start = time.perf_counter()
    app = open_app(database_url)
    try:
        if notifications(app):
            raise SystemExit(f"the database already holds {notifications(app)} events; give an empty one")
        seed_demo(app, say=lambda _line: None)
        long_case(app)
        real = notifications(app)
        if events < real:
            raise SystemExit(f"--events must be at least {real} (the events the demo and the long case record)")
        templates = case_templates(app)
        real_case_events = sum(len(t) for t in templates)
        copied, made, chunk = 0, 0, []
        for event, opens in interleaved(templates, events - real, random.Random(SEED)):
            chunk.append(event)
            made += opens
            if len(chunk) >= INSERT_CHUNK:
                app.recorder.insert_events(chunk)
                copied, chunk = copied + len(chunk), []
        if chunk:
            app.recorder.insert_events(chunk)
            copied += len(chunk)
    finally:
        app.close()
    return Generated(real, real_case_events, len(templates), copied, made, time.perf_counter() - start)


# ---------------------------------------------------------------------------------------------- measurements


def rss_kib() -> int | None:
    """The process's resident set size now (Linux), in KiB."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError):
        return None


def reset_peak_rss() -> bool:
    """Start the process's peak RSS afresh from its RSS now (Linux), so that the start-up is not counted."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
        return True
    except OSError:
        return False


def peak_rss_kib() -> int:
    """The process's peak RSS in KiB: VmHWM (Linux), else ru_maxrss (which also counts the parent's peak)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak  # bytes on macOS, KiB elsewhere


def measure_raw(database_url: str, batch_size: int) -> dict[str, Any]:
    """Read the whole log in batches and decode every notification as the bare library does; nothing else."""
    app = open_app(database_url)
    try:
        recorder, mapper = app.recorder, app.mapper
        count, position = 0, 0
        start_peak, reset = peak_rss_kib(), reset_peak_rss()
        start, cpu = time.perf_counter(), time.process_time()
        while batch := recorder.select_notifications(position, batch_size, inclusive_of_start=False):
            for notification in batch:
                mapper.to_domain_event(notification)
            count += len(batch)
            position = batch[-1].id
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        app.close()
    return {"events": count, "seconds": seconds, "cpu_seconds": cpu, "peak_rss_kib": peak_rss_kib(),
            "start_peak_rss_kib": start_peak, "peak_reset": reset}


def measure_rebuild(database_url: str, batch_size: int) -> dict[str, Any]:
    """Rebuild every projection from the first notification, sampling the RSS on the way."""
    app, store = open_app(database_url), open_store(database_url)
    try:
        projector = Projector(app, store, batch_size=batch_size)
        projector.migrate()
        samples: list[tuple[str, int | None]] = [("before", rss_kib())]
        pending, highest = list(SAMPLE_AT), [0]

        def progress(position: int, total: int) -> None:
            now = rss_kib()
            highest[0] = max(highest[0], now or 0)
            while pending and total and position >= pending[0] * total:
                samples.append((f"{pending.pop(0):.0%}", now))

        start_peak, reset = peak_rss_kib(), reset_peak_rss()
        start, cpu = time.perf_counter(), time.process_time()
        count = projector.rebuild(progress)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        samples += [(f"{fraction:.0%}", None) for fraction in pending]  # a log too short to reach them
        samples.append(("100%", rss_kib()))
        case_rows = store.query("SELECT COUNT(*) FROM cases")[0][0]
    finally:
        store.close()
        app.close()
    return {"events": count, "seconds": seconds, "cpu_seconds": cpu, "peak_rss_kib": max(peak_rss_kib(), highest[0]),
            "start_peak_rss_kib": start_peak, "peak_reset": reset, "samples": samples,
            "highest_sampled_kib": highest[0] or None, "case_rows": case_rows}


def measure_amendment_scan(database_url: str, batch_size: int) -> dict[str, Any]:
    """What an amendment of the statute reads before it is recorded: every event's legal date and rule versions
    (`Tramita.applied`, over the whole log)."""
    app = open_app(database_url)
    try:
        start, cpu = time.perf_counter(), time.process_time()
        applied = app.applied()
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        count = notifications(app)
    finally:
        app.close()
    return {"events": count, "seconds": seconds, "cpu_seconds": cpu, "versions": len(applied.versions)}


MEASUREMENTS = {"raw": measure_raw, "rebuild": measure_rebuild, "amendment": measure_amendment_scan}


def in_child(kind: str, database_url: str, batch_size: int) -> dict[str, Any]:
    """Run one measurement in a fresh process (this script with --measure) and return what it found."""
    result = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--measure", kind, "--database-url", database_url,
         "--batch-size", str(batch_size)],
        stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000,
                        help="events in the log (default 1000000; a smaller N on a small machine)")
    parser.add_argument("--database-url", default=None,
                        help="sqlite:///path or postgresql://... of an empty database "
                             "(default: a SQLite file in a temporary folder, deleted at the end)")
    parser.add_argument("--batch-size", type=int, default=REBUILD_BATCH_SIZE,
                        help="notifications per batch, for the rebuild and the raw read "
                             f"(default {REBUILD_BATCH_SIZE}, the CLI's rebuild batch)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="rounds of the measurements, the two sides alternating first (default 3, at least 2)")
    parser.add_argument("--measure", choices=tuple(MEASUREMENTS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.events < 1:
        parser.error("--events must be at least 1")
    if args.repeat < 2:
        parser.error("--repeat must be at least 2 (each side is timed at least twice)")
    if args.batch_size < 1:
        parser.error("--batch-size must be at least 1")
    if args.database_url is not None and not args.database_url.startswith(
            ("sqlite:///", "postgresql://", "postgres://")):
        parser.error("--database-url must be sqlite:///path or postgresql://... (both processes must reach it)")
    if args.measure and args.database_url is None:
        parser.error("--measure needs --database-url")
    return args


def mb(kib: int | None) -> str:
    return "n/a" if kib is None else f"{kib * 1024 / MB:.1f} MB"


def peak(run: dict[str, Any]) -> str:
    if not run["peak_reset"]:
        return f"{mb(run['peak_rss_kib'])} (the process's, start-up and parent included)"
    return f"{mb(run['peak_rss_kib'])} (start-up before it: {mb(run['start_peak_rss_kib'])})"


def median_of(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def spreads(runs: list[dict[str, Any]]) -> str:
    """The runs' wall and CPU seconds, each as min-median-max."""
    return (f"{spread([run['seconds'] for run in runs], digits=3)} s, CPU "
            f"{spread([run['cpu_seconds'] for run in runs], digits=3)} s")


def rate(events: int, seconds: float) -> float:
    return events / seconds if seconds else math.inf


def report(store: str, batch_size: int, rounds: int, log: Generated, raws: list[dict[str, Any]],
           rebuilds: list[dict[str, Any]], scans: list[dict[str, Any]]) -> None:
    """The table: each side's times over the rounds, the memory of the rebuild run with the highest peak RSS."""
    events = log.events
    raw_rate, rebuild_rate = rate(events, median_of(raws, "seconds")), rate(events, median_of(rebuilds, "seconds"))
    cpu_ratio = median_of(raws, "cpu_seconds") / median_of(rebuilds, "cpu_seconds")
    memory = max(rebuilds, key=lambda run: run["peak_rss_kib"])
    print(f"store: {store}, batch size: {batch_size}, projections: {', '.join(PROJECTIONS)}, {rounds} rounds, "
          "the two sides alternating first, each run in a fresh process; times min-median-max")
    print(f"events: {events} ({log.real_events} recorded through the domain by the demo seed "
          f"and the long case, {log.real_case_events} of them in {log.real_cases} cases; {log.copied_events} copied "
          f"from those cases' stored events as {log.copies} cases with new ids, {OPEN_COPIES} open at a time, "
          f"interleaved); generated in {log.seconds:.1f} s")
    print(f"raw library (same decoder as the rebuild): {events} notifications read and decoded in {spreads(raws)}; "
          f"peak RSS {peak(max(raws, key=lambda run: run['peak_rss_kib']))}")
    print(f"raw library events/s: {raw_rate:.1f}")
    print(f"rebuild: {events} notifications in {spreads(rebuilds)}, {rebuilds[0]['case_rows']} case rows (one per "
          "case in the log)")
    print(f"rebuild events/s: {rebuild_rate:.1f}")
    print(f"rebuild peak RSS: {peak(memory)} (goal: flat, < 200 MB)")
    print("rebuild RSS: " + ", ".join(f"{label} {mb(kib)}" for label, kib in memory["samples"])
          + f"; highest after any batch {mb(memory['highest_sampled_kib'])}")
    scan_rate = rate(events, median_of(scans, "seconds"))
    print(f"amendment scan (what an amendment of the statute reads first): {events} events in {spreads(scans)}, "
          f"{scans[0]['versions']} rule versions found; {scan_rate:.1f} events/s, "
          f"{1_000_000 / scan_rate:.1f} s per million events; {scan_rate / raw_rate:.2f} of the raw library's rate")
    print(f"ratio of the wall medians: {rebuild_rate / raw_rate:.4f}")
    print("ratio goal: >= 0.5")
    print(f"ratio: {cpu_ratio:.4f}")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.measure:
        print(json.dumps(MEASUREMENTS[args.measure](args.database_url, args.batch_size)))
        return
    with tempfile.TemporaryDirectory(prefix="tramita-bench-rebuild-") as folder:
        url = args.database_url or f"sqlite:///{folder}/rebuild.sqlite"
        store = url.split(":", 1)[0] + ("" if args.database_url else " (temporary file)")
        log = generate(url, args.events)
        raws, rebuilds, scans = [], [], []
        for n in range(args.repeat):  # the first of the two compared sides takes turns
            for kind in ("raw", "rebuild") if n % 2 == 0 else ("rebuild", "raw"):
                (raws if kind == "raw" else rebuilds).append(in_child(kind, url, args.batch_size))
            scans.append(in_child("amendment", url, args.batch_size))
    for run in raws + rebuilds + scans:
        if run["events"] != log.events:
            raise SystemExit(f"the log holds {log.events} events but a measurement read {run['events']}")
        if run.get("case_rows", log.cases) != log.cases:
            raise SystemExit(f"the rebuild projected {run['case_rows']} cases, the log holds {log.cases}")
    report(store, args.batch_size, args.repeat, log, raws, rebuilds, scans)


if __name__ == "__main__":
    main()
