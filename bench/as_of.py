"""Benchmark: reading a case as of a legal date (what `GET /cases/{id}?as_of=D` reads), compared with the raw
replay of the same events (the case up to that date) by the library's repository, on SQLite.

Usage: python bench/as_of.py [--events E] [--others K] [--repeat R]

What is measured
----------------
0. Set-up (untimed). A fresh SQLite file in a temporary folder; a `Tramita` application built as every process
   builds it (`tramita.bootstrap.build_application`, events unsigned) with a fixed clock (2026-11-30 12:00 UTC),
   the registry seeded. 1 + K voters' creation cases (default K = 12; the Mesa's petition with 32 voter titles,
   one registry municipality each, opened on 2014-01-02) are grown together, round-robin, by the Art. 10 cycle
   of `bench/record_acts.py`'s growth lines: the Mesa requisitions a body, the body records the receipt the
   next day (its 30-day answer deadline opens) and its Art. 4 finding 5 days later (every sixth one 40 days
   later, past the deadline); five events a cycle. So the log interleaves the cases' events, and the first case
   reaches E events (default 200) over about 13 months of legal dates. The middle legal date D is that of its
   event number E/2 (from `Tramita.timeline`).

1. As of D. `Tramita.case_at(case, as_of=D)`, the read the API's `GET /cases/{id}?as_of=D` makes (before it
   renders the document), on that application (aggregate cache as configured, as in the API); the case it
   answers holds the acts dated on or before D, about half of the case.

2. The raw replay of the same prefix (the baseline). `app.repository.get(case_id, version=V)`, V being the version
   the as-of read answers (the case's acts up to D), on a second application on the same file with the aggregate
   cache disabled (`AGGREGATE_CACHE_MAXSIZE` empty), so that every call reads and replays those V events from
   SQLite, decoded by the same transcoder as tramita's (orjson where it reads alike,
   domain/application/transcoder.py): both sides replay the same events with the same decoder.

Each is timed R times (default 200), the two alternating and the first of each round taking turns; each read's
CPU time (`time.process_time`, which the machine's other work moves less than the wall clock) and wall time
(`time.perf_counter`) are kept. Printed: min-median-max of each, and last `ratio: <as-of median CPU ÷ raw
replay median CPU>` (goal <= 1.0: reading a case as of a date should cost no more than the library's replay of
the events it answers with; what the read adds is finding the version of the date).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import date, datetime, timezone

from record_acts import GrowingCase, spread

from domain.acts import Actor
from domain.application import Tramita
from tramita.bootstrap import build_application
from infrastructure.persistence import persistence_env

NOW = datetime(2026, 11, 30, 12, tzinfo=timezone.utc)
SEED_ACTOR = Actor("ibge-bench", "ibge")
SEED_DAY = date(1991, 12, 18)
OPENED_ON = date(2014, 1, 2)


def grow(app: Tramita, events: int, others: int) -> GrowingCase:
    """The case of `events` events, grown round-robin with `others` cases (untimed)."""
    codes = app.seed_registry(SEED_ACTOR, SEED_DAY)
    cases = [GrowingCase(app, codes[n % len(codes)], n, OPENED_ON) for n in range(others + 1)]
    while cases[0].length() < events:
        for case in cases:
            case.cycle()
    return cases[0]


def timed_reads(reads: dict[str, object], repeat: int) -> dict[str, tuple[list[float], list[float]]]:
    """Each read's CPU and wall seconds over `repeat` rounds, the reads alternating within each round and the
    first of a round taking turns (so a slower spell of the machine falls on both alike)."""
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in reads}
    names = list(reads)
    for n in range(repeat):
        for name in names if n % 2 == 0 else names[::-1]:
            start, cpu = time.perf_counter(), time.process_time()
            reads[name]()  # type: ignore[operator]
            cpu, wall = time.process_time() - cpu, time.perf_counter() - start
            times[name][0].append(cpu)
            times[name][1].append(wall)
    return times


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200, help="events of the case read (default 200)")
    parser.add_argument("--others", type=int, default=12, help="other cases interleaved with it (default 12)")
    parser.add_argument("--repeat", type=int, default=200, help="timed reads of each kind (default 200)")
    args = parser.parse_args(argv)
    if args.events < 10 or args.others < 0 or args.repeat < 1:
        parser.error("--events must be at least 10, --others at least 0, --repeat at least 1")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tramita-bench-as-of-") as folder:
        url = f"sqlite:///{folder}/as-of.sqlite"
        app = build_application(url, clock=lambda: NOW, signing=False)
        raw = Tramita({**persistence_env(url), "AGGREGATE_CACHE_MAXSIZE": ""}, clock=lambda: NOW)
        try:
            case = grow(app, args.events, args.others)
            case_id = app.resolve_case(case.number)
            rows = app.timeline(case.number)
            middle = date.fromisoformat(rows[len(rows) // 2 - 1]["occurred_on"])
            answered = app.case_at(case.number, as_of=middle)
            whole = raw.repository.get(case_id).version
            replayed = raw.repository.get(case_id, version=answered.version)
            if replayed.version != answered.version:
                raise SystemExit(f"the raw replay reached version {replayed.version}, the as-of read "
                                 f"{answered.version}")
            logged = app.recorder.max_notification_id() or 0
            times = timed_reads({"as-of": lambda: app.case_at(case.number, as_of=middle),
                                 "raw": lambda: raw.repository.get(case_id, version=answered.version)}, args.repeat)
        finally:
            raw.close()
            app.close()
    print(f"store: sqlite (temporary file), log: {logged} events, {args.others + 1} cases interleaved")
    print(f"case {case.number}: {whole} events, {rows[0]['occurred_on']} to {rows[-1]['occurred_on']}")
    cpu, wall = ({name: statistics.median(kept[k]) for name, kept in times.items()} for k in (0, 1))
    print(f"as of {middle.isoformat()}: version {answered.version} (Tramita.case_at), CPU ms "
          f"{spread(times['as-of'][0], 1000)}, wall ms {spread(times['as-of'][1], 1000)} (min-median-max of "
          f"{args.repeat})")
    print(f"raw replay of the same {replayed.version} events (no cache, same decoder): CPU ms "
          f"{spread(times['raw'][0], 1000)}, wall ms {spread(times['raw'][1], 1000)}")
    print(f"ratio of the wall medians: {wall['as-of'] / wall['raw']:.4f}")
    print("ratio goal: <= 1.0")
    print(f"ratio: {cpu['as-of'] / cpu['raw']:.4f}")

if __name__ == "__main__":
    main()
