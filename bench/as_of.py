"""Benchmark: reading a case as of a legal date (what `GET /cases/{id}?as_of=D` reads), compared with the raw
replay of the whole case by the library's repository, on SQLite.

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

2. The raw replay (the baseline). `app.repository.get(case_id)` of the whole case, on a second application on
   the same file with the aggregate cache disabled (`AGGREGATE_CACHE_MAXSIZE` empty), so that every call reads
   and replays all E events from SQLite, and with the library's own JSON transcoder (`LIBRARY_DECODING`;
   tramita's decodes faster).

Each is timed R times (default 200, `time.perf_counter`), alternating the two; the medians are printed, and the
last line is `ratio: <as-of median ÷ raw get median>` (goal <= 1.0: an as-of read of half the case should cost
no more than replaying all of it).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import date, datetime, timezone

from record_acts import LIBRARY_DECODING, GrowingCase

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


def median_seconds(reads: dict[str, object], repeat: int) -> dict[str, float]:
    """Each read's median over `repeat` rounds, the reads alternating within each round."""
    times: dict[str, list[float]] = {name: [] for name in reads}
    for _ in range(repeat):
        for name, read in reads.items():
            start = time.perf_counter()
            read()  # type: ignore[operator]
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


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
        raw = Tramita({**persistence_env(url), "AGGREGATE_CACHE_MAXSIZE": "", **LIBRARY_DECODING}, clock=lambda: NOW)
        try:
            case = grow(app, args.events, args.others)
            case_id = app.resolve_case(case.number)
            rows = app.timeline(case.number)
            middle = date.fromisoformat(rows[len(rows) // 2 - 1]["occurred_on"])
            answered = app.case_at(case.number, as_of=middle)
            replayed = raw.repository.get(case_id)
            logged = app.recorder.max_notification_id() or 0
            medians = median_seconds({"as-of": lambda: app.case_at(case.number, as_of=middle),
                                      "raw": lambda: raw.repository.get(case_id)}, args.repeat)
        finally:
            raw.close()
            app.close()
    print(f"store: sqlite (temporary file), log: {logged} events, {args.others + 1} cases interleaved")
    print(f"case {case.number}: {replayed.version} events, {rows[0]['occurred_on']} to {rows[-1]['occurred_on']}")
    print(f"as of {middle.isoformat()}: version {answered.version} (Tramita.case_at), "
          f"median {medians['as-of'] * 1000:.2f} ms over {args.repeat}")
    print(f"raw get (no cache): version {replayed.version}, median {medians['raw'] * 1000:.2f} ms over {args.repeat}")
    print("ratio goal: <= 1.0")
    print(f"ratio: {medians['as-of'] / medians['raw']:.4f}")


if __name__ == "__main__":
    main()
