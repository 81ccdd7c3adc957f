"""Benchmark: what the scheduler pays to know what is left to deliver from the alert events (scheduler/pending.py).

Usage: python bench/alert_events.py [--alerts N] [--others M] [--repeat R] [--database-url URL]

What is measured
----------------
0. One SQLite file in a temporary folder, deleted at the end, or the empty database at `--database-url`
   (untimed). A `Tramita` application records through the domain N case alerts (`Alert.Raised`, default 10,000),
   in saves of 500 alerts, and a delivery record for each (`Alert.Delivered` to the operators' webhook for nine in
   ten, `Alert.DeliveryFailed` for the tenth), then one delivery to a subscription for every other alert: 2.5 N
   alert events. M other events (default 100,000) are
   written straight into the events table under a case event's topic, standing for the acts of the cases that a
   real log holds far more of than alerts (their state is never decoded, only passed over).
1. A restart: a new application on the database (untimed), then `AlertEvents(app).catch_up()` (timed): every alert
   event read through the notification log, selected by topic, decoded by the application's mapper and kept.
   Then, on that reader, `undelivered()` (the operators' webhook's redelivery: the N / 10 failed ones) and
   `undelivered_to(subscription)` for a subscription matching every alert (timed), and a `catch_up()` with
   nothing new (timed: what each scan and redelivery pays when no alert event was recorded since).
The restart is repeated R times (default 5) and the medians printed, with the memory the reader's state holds
(`tracemalloc`, in a pass of its own: the bytes allocated while reading and still held). Times come from
`time.perf_counter`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import tracemalloc
import uuid
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

from eventsourcing.persistence import StoredEvent

from domain.acts import Actor
from domain.alerts import MISSED, Alert
from domain.application import Tramita
from infrastructure.persistence import persistence_env
from scheduler.pending import AlertEvents

NOW = datetime(2026, 11, 30, 15, tzinfo=timezone.utc)
SCHEDULER = Actor("tramita-scheduler", "scheduler")
BATCH = 500
OTHER_TOPIC = "domain.case:Case.FindingRecorded"
OTHER_STATE = b'{"occurred_on":"2025-10-14","article":"art-4","note":"' + b"x" * 200 + b'"}'


def open_app(url: str) -> Tramita:
    return Tramita(persistence_env(url), clock=lambda: NOW)


def record(url: str, alerts: int, others: int) -> None:
    app = open_app(url)
    ctx = app.system_context(SCHEDULER)
    subscription = str(uuid.uuid4())
    for start in range(0, alerts, BATCH):
        batch = []
        for n in range(start, min(start + BATCH, alerts)):
            alert = Alert.raise_for(ctx, case_id=uuid.uuid4(), case_number=f"LC35-2026-{n:05d}",
                                    key=f"requisition-answer:{n}", kind=MISSED, deadline={
                                        "article": "art-10", "rule": "requisition-answer", "who": "ibge",
                                        "municipality": None, "due_on": date(2026, 11, 1) + timedelta(days=n % 20)})
            alert.record_delivery(ctx, tries=1, error="HTTP 503" if n % 10 == 9 else None)
            if n % 2 == 0:
                alert.record_delivery(ctx, tries=1, subscription=subscription)
            batch.append(alert)
        app.save(*batch)
    for start in range(0, others, 10_000):
        app.recorder.insert_events([StoredEvent(originator_id=uuid.uuid4(), originator_version=1, topic=OTHER_TOPIC,
                                                state=OTHER_STATE) for _ in range(start, min(start + 10_000, others))])
    app.close()


def restart(url: str, alerts: int) -> dict[str, float]:
    app = open_app(url)
    try:
        started = time.perf_counter()
        events = AlertEvents(app)
        read = events.catch_up()
        cold = time.perf_counter() - started
        assert read == alerts * 5 // 2 and len(events) == alerts, (read, len(events))
        started = time.perf_counter()
        failed = events.undelivered()
        operators = time.perf_counter() - started
        everything = SimpleNamespace(id="everything", created_at=NOW - timedelta(days=1),
                                     matches=lambda fields: True)
        started = time.perf_counter()
        pending = events.undelivered_to(everything)  # type: ignore[arg-type] # what the reader reads of one
        subscribed = time.perf_counter() - started
        assert len(failed) == alerts // 10 and len(pending) == alerts, (len(failed), len(pending))
        started = time.perf_counter()
        assert events.catch_up() == 0
        idle = time.perf_counter() - started
    finally:
        app.close()
    return {"restart": cold, "undelivered": operators, "undelivered_to": subscribed, "idle": idle}


def held_bytes(url: str) -> int:
    """The bytes a reader's state holds once it has read every alert event (a pass of its own: tracing slows it)."""
    app = open_app(url)
    try:
        tracemalloc.start()
        events = AlertEvents(app)
        events.catch_up()
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        return held
    finally:
        app.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--alerts", type=int, default=10_000, help="case alerts recorded (default 10,000)")
    parser.add_argument("--others", type=int, default=100_000, help="other events in the log (default 100,000)")
    parser.add_argument("--repeat", type=int, default=5, help="restarts timed (default 5)")
    parser.add_argument("--database-url", help="an empty database to fill (default: a SQLite file, deleted after)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = options.database_url or f"sqlite:///{Path(folder) / 'alerts.sqlite'}"
        started = time.perf_counter()
        record(url, options.alerts, options.others)
        print(f"recorded {options.alerts:,} alerts ({options.alerts * 5 // 2:,} alert events) and "
              f"{options.others:,} other events in {time.perf_counter() - started:.1f} s")
        runs = [restart(url, options.alerts) for _ in range(options.repeat)]
        held = held_bytes(url)
    median = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    print(f"restart, every alert event read and decoded: {median['restart'] * 1000:.0f} ms "
          f"(reader's state {held / 2**20:.1f} MiB)")
    print(f"undelivered to the operators' webhook: {median['undelivered'] * 1000:.1f} ms")
    print(f"undelivered to a subscription matching all: {median['undelivered_to'] * 1000:.1f} ms")
    print(f"catch-up with nothing new: {median['idle'] * 1000:.2f} ms")


if __name__ == "__main__":
    main()
