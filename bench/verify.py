"""Benchmark: full verification of a store (every chain, the Merkle tree rebuilt against every checkpoint, the
checkpoints' and the uncovered events' signatures, the comparison with the stored tree) against the bare
eventsourcing library reading and decoding the same log; and the CPU an act costs with signing and the tree's
append against without.

Usage: python bench/verify.py [--events N] [--acts A] [--repeat R] [--database-url URL]

What is measured
----------------
0. The log (untimed). A `Tramita` application with a signing key and a fixed clock records the demo
   (`domain.demo.seed_demo`: Acre's registry, four cases, ~180 events) through the domain. The rest of the N
   events are copies of the demo's four cases under fresh ids, each a valid case for `tramita verify`: every
   copied event is re-chained (its `originator_id` and `prev_hash` set, its hash recomputed by the published
   recipe) and signed by the application's mapper, as a real act is. Copies are written **interleaved** as a
   real log is: 2,000 copies are open at a time and each next event belongs to one of them drawn at random,
   so a case's events are spread over ~50,000 others. Every 100,000 events the tree is brought up to date and a
   checkpoint signed, as the hourly scheduler does (each signing checks the events appended since), and the last
   1% of the log is left after the last checkpoint, "not yet covered", so its signatures are checked one by one.
1. The raw library: the whole notification log read with `recorder.select_notifications` in batches of 2,000
   and every notification decoded with `app.mapper.to_domain_event`, the application's mapper decoding with the
   same transcoder as the verification (tramita's: orjson where it reads alike); nothing else.
2. tramita: `Audit.verify()` (what `tramita verify --no-read-models` runs): it must find the store intact, with
   every event counted, or the benchmark fails.
2b. tramita with the read models: `Audit.verify()` and then `check_read_models` (projections/check.py: every row
   of every read model recomputed from the events and compared; what `tramita verify` runs), which must find no
   difference. The read models are built once, untimed, by `tramita rebuild`'s code after the log is written.
Each runs in a fresh child process on the same SQLite file, one after the other, in R rounds (`--repeat R`,
default 2, at least 2), 1 and 2 alternating which goes first, 2b after them; their wall and CPU seconds are printed
min-median-max. The ratio is that of the CPU medians (`time.process_time` of each child: the other work of a
shared machine moves wall times by several times), (events/s of 2) ÷ (events/s of 1); goal >= 0.7; the ratio of
the wall medians is printed before it.

3. An act's cost. On two fresh SQLite files, the same acts are recorded in-process: K voters' creation cases
   (one per municipality, as the API bench does), each receiving `requisition-issued` then
   `requisition-received` in turn until A acts are recorded. Without a key; then with the key (every event
   signed) and the tree appended after every 50 acts (the projector's batches). Each is run three times in turn
   and the least CPU time (`time.process_time`) of each kept; the CPU per act of each is printed with the
   difference (goal: at most 10% more). Beside it, per act: the signed receipt the API makes for every act's
   answer (timed apart, since an act recorded in-process has none), and the checkpoint signed afterwards, which
   checks every event appended since the last one (its chain, its signature: the scheduler's hourly work).

The last line printed is `ratio: <verification events/s ÷ raw library events/s>`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import replace
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tramita.bootstrap import build_audit  # noqa: E402
from audit.log import AuditLog  # noqa: E402
from audit.notes import Signer  # noqa: E402
from domain import chain  # noqa: E402
from domain.acts import Actor  # noqa: E402
from domain.application import Tramita  # noqa: E402
from infrastructure.persistence import persistence_env  # noqa: E402
from domain.case import Case  # noqa: E402
from domain.demo import MESA, seed_demo  # noqa: E402
from projections.projector import Projector  # noqa: E402
from infrastructure.store import open_store  # noqa: E402
from record_acts import spread  # noqa: E402

NOW = datetime(2026, 11, 30, 12, tzinfo=timezone.utc)
INSERT_CHUNK = 5000
OPEN_COPIES = 2000
CHECKPOINT_EVERY = 100_000
UNCOVERED_SHARE = 0.01
READ_BATCH = 2000
#: Times each act run (unsigned, signed) is repeated, in turn.
ACT_RUNS = 3


def make_signer(folder: Path) -> Path:
    path = folder / "signing.key"
    path.write_text(f"{Signer.generate('bench.tramita/log')}\n", encoding="ascii")
    path.chmod(0o600)
    return path


def open_app(url: str, key: Path | None, settings: dict[str, str] | None = None) -> Tramita:
    from audit.keys import load_signing_key

    return Tramita({**persistence_env(url), **(settings or {})}, clock=lambda: NOW,
                   signer=load_signing_key(key) if key else None)


# ---------------------------------------------------------------------------------------------- the log


def generate(url: str, key: Path, events: int) -> dict[str, Any]:
    started = time.perf_counter()
    app = open_app(url, key)
    seed_demo(app, lambda line: None)
    store = open_store(url)
    Projector(app, store).migrate()
    log = AuditLog(app, store)
    audit = build_audit(app, store)
    templates = []
    for notification in app.recorder.select_notifications(1, 10_000):
        if notification.topic.startswith(f"{Case.__module__}:Case.") and notification.originator_version == 1:
            templates.append(list(app.events.get(notification.originator_id)))
    real = app.recorder.max_notification_id() or 0
    rng = random.Random(1991)
    open_copies: list[dict[str, Any]] = []
    pending, written, copies, next_checkpoint = [], real, 0, CHECKPOINT_EVERY
    last_checkpoint_at = int(events * (1 - UNCOVERED_SHARE))

    def flush() -> None:
        nonlocal pending
        if pending:
            app.recorder.insert_events([app.mapper.to_stored_event(e) for e in pending])
            pending = []

    while written < events:
        while len(open_copies) < OPEN_COPIES:
            open_copies.append({"id": uuid.uuid4(), "events": rng.choice(templates), "next": 0, "prev": chain.GENESIS})
            copies += 1
        copy = open_copies[rng.randrange(len(open_copies))]
        template = copy["events"][copy["next"]]
        event = replace(template, originator_id=copy["id"], prev_hash=copy["prev"], hash="")
        event = replace(event, hash=chain.hash_of(event))
        pending.append(event)
        copy["prev"], copy["next"] = event.hash, copy["next"] + 1
        if copy["next"] == len(copy["events"]):
            open_copies.remove(copy)
        written += 1
        if len(pending) >= INSERT_CHUNK:
            flush()
        if written in (next_checkpoint, last_checkpoint_at) and written <= last_checkpoint_at:
            flush()
            audit.sign_checkpoint()
            next_checkpoint += CHECKPOINT_EVERY
    flush()
    log.catch_up()
    Projector(app, store).rebuild()  # the read models, for the verification that checks them too
    checkpoints = len(log.checkpoints())
    app.close()
    store.close()
    return {"events": written, "real": real, "copies": copies, "checkpoints": checkpoints,
            "seconds": time.perf_counter() - started}


# ---------------------------------------------------------------------------------------------- measures


def measure(what: str, url: str, key: Path) -> dict[str, Any]:
    app = open_app(url, None, None)
    wall, cpu = time.perf_counter(), time.process_time()
    if what == "raw":
        count, start = 0, 0
        while batch := app.recorder.select_notifications(start, READ_BATCH, inclusive_of_start=False):
            for notification in batch:
                app.mapper.to_domain_event(notification)
            count += len(batch)
            start = batch[-1].id
        result: dict[str, Any] = {"events": count}
    else:
        from audit.keys import load_signing_key

        os.environ["TRAMITA_VERIFIER_KEY"] = str(load_signing_key(key).verifier)
        store = open_store(url)
        verdict = build_audit(app, store).verify()
        if not verdict.ok:
            raise SystemExit(f"verification found tampering in a clean log: {verdict.findings[:3]}")
        result = {"events": verdict.events, "covered": verdict.covered, "signatures": verdict.signatures_checked,
                  "checkpoints": len(verdict.checkpoints)}
        if what == "verify+read-models":
            from projections.check import check_read_models

            checked = check_read_models(app, store, datetime.now(timezone.utc))
            if not checked.ok:
                raise SystemExit(f"the read-model check found differences in clean tables: {checked.as_dict()}")
    result.update(seconds=time.perf_counter() - wall, cpu=time.process_time() - cpu)
    return result


def child(what: str, url: str, key: Path) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--measure", what, "--database-url", url, "--key", str(key)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------- an act's cost


def record_acts(url: str, key: Path | None, acts: int) -> tuple[float, float, float]:
    """CPU seconds to record `acts` acts (with a key: every event signed, the tree appended every 50 acts); with a
    key, also the CPU seconds of the receipts the API signs for those acts, and of the checkpoint signed
    afterwards (which checks every event appended since the last one: the scheduler's hourly work)."""
    from domain.demo import voters_creation
    from domain.registry import Municipality

    app = open_app(url, key)
    app.seed_registry(Actor("ibge-seed", "ibge"), date(1991, 12, 18))
    store = open_store(url)
    Projector(app, store).migrate()
    audit = build_audit(app, store) if key else None
    codes = [m.key for m in (app.repository.get(n.originator_id) for n in app.recorder.select_notifications(1, 100))
             if isinstance(m, Municipality)][:8]
    cases = [voters_creation(app, date(2026, 3, 2), code, f"Vila Bench {i}", area_km2="10", voters=30,
                             first_title=30000000 + i * 100, zone="5") for i, code in enumerate(codes)]
    issued: dict[str, str] = {}
    receipts = 0.0
    cpu = time.process_time()
    for n in range(acts):
        case = cases[n % len(cases)]
        if (n // len(cases)) % 2 == 0:
            acted = app.issue_requisition(case, MESA, date(2026, 3, 4), body="ibge", items=["art-4-I"])
            issued[case] = acted.result
        else:
            acted = app.receive_requisition(case, MESA, date(2026, 3, 4), requisition=issued[case])
        if audit is not None:
            before = time.process_time()
            audit.receipt(acted)
            receipts += time.process_time() - before
            if n % 50 == 49:
                audit.log.run_once()
    if audit is not None:
        audit.log.catch_up()
    spent = time.process_time() - cpu - receipts
    checkpoint = time.process_time()
    if audit is not None:
        audit.sign_checkpoint()
    checkpoint = time.process_time() - checkpoint
    app.close()
    store.close()
    return spent, receipts, checkpoint


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The first run with the median wall and CPU seconds of all."""
    return {**runs[0], "seconds": statistics.median(r["seconds"] for r in runs),
            "cpu": statistics.median(r["cpu"] for r in runs)}


def times(runs: list[dict[str, Any]]) -> str:
    return (f"{spread([r['seconds'] for r in runs], digits=1)} s, CPU {spread([r['cpu'] for r in runs], digits=1)} s "
            "min-median-max")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--acts", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=2, help="rounds, at least 2 (default 2)")
    parser.add_argument("--database-url")
    parser.add_argument("--measure", choices=("raw", "verify", "verify+read-models"), help=argparse.SUPPRESS)
    parser.add_argument("--key", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeat < 2:
        parser.error("--repeat must be at least 2 (each side is timed at least twice)")
    if args.measure:
        print(json.dumps(measure(args.measure, args.database_url, Path(args.key))))
        return
    with tempfile.TemporaryDirectory(prefix="tramita-bench-verify-") as folder:
        folder_path = Path(folder)
        key = make_signer(folder_path)
        url = args.database_url or f"sqlite:///{folder_path / 'log.sqlite'}"
        made = generate(url, key, args.events)
        print(f"log: {made['events']:,} events ({made['real']} recorded through the domain, {made['copies']:,} "
              f"interleaved copies of the demo's cases), {made['checkpoints']} checkpoints, the last "
              f"{UNCOVERED_SHARE:.0%} not yet covered; generated in {made['seconds']:.0f} s")
        raws, verifies, checks = [], [], []
        for n in range(args.repeat):  # the raw read and the verification alternate which goes first
            for kind in ("raw", "verify") if n % 2 == 0 else ("verify", "raw"):
                (raws if kind == "raw" else verifies).append(child(kind, url, key))
            checks.append(child("verify+read-models", url, key))
        raw, verify = median_run(raws), median_run(verifies)
        check = min(checks, key=lambda r: r["seconds"])
        raw_rate, verify_rate = raw["events"] / raw["seconds"], verify["events"] / verify["seconds"]
        print(f"raw library read + decode (same transcoder): {raw_rate:,.0f} events/s (medians; {times(raws)})")
        print(f"tramita verify (chains, tree vs {verify['checkpoints']} checkpoints, {verify['signatures']:,} "
              f"signatures): {verify_rate:,.0f} events/s (medians; {times(verifies)})")
        print("tramita verify with the read models checked against the events: "
              f"{check['events'] / check['seconds']:,.0f} events/s ({check['seconds']:.1f} s, "
              f"CPU {check['cpu']:.1f} s): "
              "the check adds "
              f"{check['seconds'] - verify['seconds']:.1f} s ({check['seconds'] / verify['seconds'] - 1:+.0%})")
        runs = [(record_acts(f"sqlite:///{folder_path / f'plain-{n}.sqlite'}", None, args.acts),
                 record_acts(f"sqlite:///{folder_path / f'signed-{n}.sqlite'}", key, args.acts))
                for n in range(ACT_RUNS)]  # in turn, the least of each kept: the machine's noise is one-sided
        plain = min(unsigned[0] for unsigned, _ in runs)
        signed, receipt, checkpoint = min(signed_run for _, signed_run in runs)
        per_act = 1000 / args.acts
        print(f"act CPU: {plain * per_act:.2f} ms unsigned, {signed * per_act:.2f} ms with its events signed and "
              f"the tree's append ({(signed / plain - 1):+.1%}; goal <= +10%); the API's signed receipt adds "
              f"{receipt * per_act:.2f} ms ({receipt / plain:+.1%}); the hourly checkpoint, which checks each "
              f"appended event, {checkpoint * per_act:.2f} ms per act")
        print(f"ratio of the wall medians: {verify_rate / raw_rate:.2f}")
        print("ratio goal: >= 0.7")
        print(f"ratio: {raw['cpu'] / verify['cpu']:.2f}")


if __name__ == "__main__":
    main()
